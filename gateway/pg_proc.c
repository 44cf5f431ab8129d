/*
 * pg_proc: parent chains from /proc/PID/stat.  See pg_proc.h.
 *
 * A parent chain is walked at most PG_PROC_DEPTH_MAX steps: deeper trees
 * than that are not a job's, and a bound keeps a racing tree (a process
 * exiting and its pid reused mid-walk) from looping.
 */
#include "gateway/pg_proc.h"

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

pid_t pg_proc_parent(pid_t pid)
{
    char path[64], buf[512];
    const char *close_paren;
    long ppid;
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
    if (close_paren == NULL || sscanf(close_paren + 1, " %*c %ld", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
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
        int at = index_of(pid, ancestors, n);

        if (at >= 0)
            return at;
        pid = pg_proc_parent(pid);
    }
    return -1;
}

int pg_proc_become_subreaper(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -1;
}

static int descends_from(pid_t pid, pid_t ancestor)
{
    for (int depth = 0; pid > 1 && depth < PG_PROC_DEPTH_MAX; depth++) {
        pid = pg_proc_parent(pid);
        if (pid == ancestor)
            return 1;
    }
    return 0;
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

int pg_proc_signal_descendants(int signo)
{
    pid_t self = getpid();
    DIR *proc = opendir("/proc");
    struct dirent *e;
    int count = 0;

    if (proc == NULL)
        return 0;
    while ((e = readdir(proc)) != NULL) {
        pid_t pid = pid_of_name(e->d_name);

        if (pid > 0 && pid != self && descends_from(pid, self) && kill(pid, signo) == 0)
            count++;
    }
    closedir(proc);
    return count;
}
