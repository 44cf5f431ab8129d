/*
 * pg_keeper: the process that cleans up after a SIGKILLed pmigate.  See
 * pg_keeper.h.
 *
 * The protocol on the pipe is two one-line messages: "G <pgid>\n" (watch
 * this group) and "D\n" (done: exit quietly).  End of file without "D"
 * means pmigate died.
 */
#include "gateway/util/pg_keeper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gateway/util/pg_tmpdir.h"

struct pg_keeper {
    pid_t pid;
    int fd; /* the pipe's write end */
};

/* Every descriptor but keep (read from /proc/self/fd: pmigate may have
 * lifted its descriptor limit very high), with 0-2 on /dev/null so the
 * keeper holds none of the caller's pipes open. */
static void keeper_close_fds(int keep)
{
    int null = open("/dev/null", O_RDWR);
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    for (int fd = 0; fd <= 2 && null >= 0; fd++)
        if (fd != keep)
            (void)dup2(null, fd);
    if (null > 2 && null != keep)
        close(null);
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);

        if (fd > 2 && fd != keep && fd != dirfd(d))
            close(fd);
    }
    closedir(d);
}

/* SIGKILLs the group a few times over 100 ms: a member forking while the
 * first signal lands is caught by the next. */
static void keeper_kill_group(pid_t pgid)
{
    struct timespec pause = { 0, 20 * 1000 * 1000 };

    for (int i = 0; i < 5 && pgid > 1; i++) {
        if (kill(-pgid, SIGKILL) != 0 && errno == ESRCH)
            break;
        (void)nanosleep(&pause, NULL);
    }
}

/* The keeper's life: read messages until "D" (exit) or end of file
 * (pmigate died: clean up, then exit).  Never returns. */
static void keeper_main(int fd)
{
    char buf[256];
    size_t len = 0;
    pid_t pgid = 0;
    ssize_t n;

    (void)setsid(); /* out of pmigate's group: its terminal's signals are not for us */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    keeper_close_fds(fd);
    for (;;) {
        char *nl;

        n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        while ((nl = strchr(buf, '\n')) != NULL) {
            long v;

            *nl = '\0';
            if (strcmp(buf, "D") == 0)
                _exit(0);
            if (sscanf(buf, "G %ld", &v) == 1 && v > 1)
                pgid = (pid_t)v;
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len + 1);
        }
        if (len == sizeof(buf) - 1)
            len = 0; /* not from pmigate: drop it */
    }
    keeper_kill_group(pgid);
    (void)pg_tmpdir_sweep();
    _exit(0);
}

pg_keeper_t *pg_keeper_start(void)
{
    pg_keeper_t *k = calloc(1, sizeof(*k));
    int p[2];

    if (k == NULL)
        return NULL;
    if (pipe2(p, O_CLOEXEC) != 0) {
        free(k);
        return NULL;
    }
    k->pid = fork();
    if (k->pid == 0) {
        close(p[1]);
        keeper_main(p[0]);
    }
    close(p[0]);
    if (k->pid < 0) {
        close(p[1]);
        free(k);
        return NULL;
    }
    k->fd = p[1];
    return k;
}

static void keeper_say(pg_keeper_t *k, const char *line)
{
    size_t len = strlen(line);

    /* a few bytes into an empty pipe: one write, never blocks for long */
    while (write(k->fd, line, len) < 0 && errno == EINTR)
        ;
}

void pg_keeper_watch_group(pg_keeper_t *k, pid_t pgid)
{
    char line[32];

    if (k == NULL)
        return;
    snprintf(line, sizeof(line), "G %ld\n", (long)pgid);
    keeper_say(k, line);
}

pid_t pg_keeper_pid(const pg_keeper_t *k)
{
    return k != NULL ? k->pid : 0;
}

void pg_keeper_stop(pg_keeper_t *k)
{
    if (k == NULL)
        return;
    keeper_say(k, "D\n");
    close(k->fd);
    while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    free(k);
}
