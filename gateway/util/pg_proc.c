/*
 * pg_proc: parent chains from /proc/PID/stat.  See pg_proc.h.
 *
 * A parent chain is walked at most PG_PROC_DEPTH_MAX steps: deeper trees
 * than that are not a job's, and a bound keeps a racing tree (a process
 * exiting and its pid reused mid-walk) from looping.
 */
#include "gateway/util/pg_proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

enum { PG_PROC_DEPTH_MAX = 256 };

/* Reads pid's parent and state letter ('Z' for a zombie).  0 or -1. */
static int read_stat(pid_t pid, pid_t *ppid, char *state)
{
    char path[64], buf[512];
    const char *close_paren;
    long parent;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses,
     * so the fields start after the last ')' */
    close_paren = strrchr(buf, ')');
    if (close_paren == NULL || sscanf(close_paren + 1, " %c %ld", state, &parent) != 2)
        return -1;
    *ppid = (pid_t)parent;
    return 0;
}

pid_t pg_proc_parent(pid_t pid)
{
    pid_t ppid;
    char state;

    return read_stat(pid, &ppid, &state) == 0 ? ppid : -1;
}

static int index_of(pid_t pid, const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0 && pids[i] == pid)
            return i;
    return -1;
}

int pg_proc_ancestor_among(pid_t pid, const pid_t *ancestors, int n, pid_t stop)
{
    for (int depth = 0; pid > 1 && pid != stop && depth < PG_PROC_DEPTH_MAX; depth++) {
        pid_t parent = pg_proc_parent(pid); /* also: is pid still there? */
        int at = parent < 0 ? -1 : index_of(pid, ancestors, n);

        if (parent < 0 || at >= 0)
            return at;
        pid = parent;
    }
    return -1;
}

int pg_proc_become_subreaper(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -1;
}

static pid_t pid_of_name(const char *name)
{
    long v = 0;

    for (const char *p = name; *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p) || v > 1 << 30)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v > 0 ? (pid_t)v : -1;
}

/* One process of the snapshot below. */
typedef struct proc_node {
    pid_t pid, ppid;
    char state;
    int mine; /* descends from the caller */
} proc_node_t;

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const proc_node_t *)a)->pid, y = ((const proc_node_t *)b)->pid;

    return (x > y) - (x < y);
}

/* Every process on the machine with its parent, sorted by pid: one read of
 * /proc/PID/stat each, however deep the trees.  NULL when out of memory. */
static proc_node_t *snapshot(size_t *count)
{
    DIR *proc = opendir("/proc");
    proc_node_t *nodes = NULL, *grown;
    size_t n = 0, cap = 0;
    struct dirent *e;

    if (proc == NULL)
        return NULL;
    while ((e = readdir(proc)) != NULL) {
        proc_node_t node = { .pid = pid_of_name(e->d_name) };

        if (node.pid <= 0 || read_stat(node.pid, &node.ppid, &node.state) != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            grown = realloc(nodes, cap * sizeof(*nodes));
            if (grown == NULL) {
                free(nodes);
                closedir(proc);
                return NULL;
            }
            nodes = grown;
        }
        nodes[n++] = node;
    }
    closedir(proc);
    if (n > 0)
        qsort(nodes, n, sizeof(*nodes), by_pid);
    *count = n;
    return nodes;
}

/* Marks the descendants of `root`: a process is one if its parent is root
 * or a marked process; passes repeat until nothing changes (one pass per
 * generation at most). */
static void mark_descendants(proc_node_t *nodes, size_t n, pid_t root)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            proc_node_t key = { .pid = nodes[i].ppid }, *parent;

            if (nodes[i].mine)
                continue;
            parent = nodes[i].ppid == root ? NULL : bsearch(&key, nodes, n, sizeof(*nodes), by_pid);
            if (nodes[i].ppid == root || (parent != NULL && parent->mine))
                nodes[i].mine = changed = 1;
        }
    }
}

int pg_proc_signal_descendants(int signo, pid_t spare)
{
    size_t n = 0;
    proc_node_t *nodes = snapshot(&n);
    int count = 0;

    if (nodes == NULL)
        return 0;
    mark_descendants(nodes, n, getpid());
    for (size_t i = 0; i < n; i++)
        /* a zombie is dead already: reaping it is the caller's business */
        if (nodes[i].mine && nodes[i].state != 'Z' &&
            nodes[i].pid != spare &&
            kill(nodes[i].pid, signo) == 0)
            count++;
    free(nodes);
    return count;
}
