/*
 * pg_listen: the private PMI_PORT unix socket.  See pg_listen.h.
 *
 * When accept() fails for want of descriptors or memory, the pending peer
 * stays queued and the socket stays readable: accepting pauses for
 * PG_LISTEN_RETRY_MS instead of spinning on it, and the peers wait in the
 * backlog until descriptors are free again.
 *
 * A unix socket's path is at most 107 bytes, and $TMPDIR may be longer
 * than that.  The socket then still lives in the job's directory, but is
 * bound and reached through a short alias of the directory, a descriptor of
 * it that pmigate holds: /proc/self/fd/N when binding, /proc/<pid>/fd/N in
 * PMIGATE_PMI_PORT (a rank of the same user may follow pmigate's /proc
 * links; no one else may, as no one else may enter the 0700 directory).
 */
#include "gateway/io/pg_listen.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gateway/util/pg_tmpdir.h"

enum { PG_LISTEN_RETRY_MS = 100 };

struct pg_listen {
    int fd;
    struct event *ev;
    struct event *retry;   /* resumes accepting after a shortage */
    int stopped;
    int short_reported;    /* the shortage was told once */
    char dir[PATH_MAX];
    int dir_lock;          /* the directory's owner lock (pg_tmpdir.h) */
    int dir_fd;            /* the directory's alias when its path is too long; -1 */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* what clients connect to */
    pg_listen_accept_fn on_accept;
    pg_listen_refuse_fn on_refuse;
    void *arg;
};

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    pg_listen_t *l = arg;

    (void)fd;
    (void)what;
    if (!l->stopped)
        (void)event_add(l->ev, NULL);
}

/* Out of descriptors or memory: stop accepting for a while (the peer stays
 * in the backlog) rather than being woken for it again at once. */
static void listen_pause(pg_listen_t *l, int err)
{
    struct timeval wait = { 0, PG_LISTEN_RETRY_MS * 1000 };

    event_del(l->ev);
    if (evtimer_add(l->retry, &wait) != 0)
        (void)event_add(l->ev, NULL); /* cannot wait: better busy than deaf */
    if (!l->short_reported && l->on_refuse != NULL) {
        l->short_reported = 1;
        l->on_refuse(l->arg, err == EMFILE || err == ENFILE
                                 ? "out of file descriptors: PMI_PORT connections wait"
                                 : "out of memory: PMI_PORT connections wait");
    }
}

/* Accepts one pending peer if its uid matches ours. */
static void on_acceptable(evutil_socket_t lfd, short what, void *arg)
{
    pg_listen_t *l = arg;
    struct ucred cred;
    socklen_t len = sizeof(cred);
    int fd;

    (void)what;
    fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM))
        listen_pause(l, errno);
    if (fd < 0)
        return; /* EAGAIN, or the peer gave up: nothing to do */
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != geteuid()) {
        close(fd);
        if (l->on_refuse != NULL)
            l->on_refuse(l->arg, "refused a PMI_PORT connection from another user");
        return;
    }
    l->on_accept(l->arg, fd, cred.pid);
}

int pg_listen_address(const char *dir, const char *name, struct sockaddr_un *sa, int *dir_fd)
{
    size_t max = sizeof(sa->sun_path);

    *sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
    *dir_fd = -1;
    if ((size_t)snprintf(sa->sun_path, max, "%s/%s", dir, name) < max)
        return 0;
    *dir_fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*dir_fd < 0)
        return errno;
    if ((size_t)snprintf(sa->sun_path, max, "/proc/self/fd/%d/%s", *dir_fd, name) >= max)
        return ENAMETOOLONG;
    return 0;
}

int pg_listen_unix(const struct sockaddr_un *sa, int backlog, int *fd)
{
    mode_t old_mask;
    int rc, err;

    *fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return errno;
    old_mask = umask(0177);
    rc = bind(*fd, (const struct sockaddr *)sa, sizeof(*sa));
    umask(old_mask);
    if (rc != 0 || chmod(sa->sun_path, 0600) != 0 || listen(*fd, backlog) != 0) {
        err = errno;
        if (rc == 0)
            (void)unlink(sa->sun_path); /* bound here: ours to take back */
        close(*fd);
        *fd = -1;
        return err;
    }
    return 0;
}

/* Makes the 0700 directory and the 0600 socket "pmi" in it; l->path
 * becomes what clients use (through /proc/<pmigate's pid>/fd/N when the
 * directory's path is too long). */
static int bind_private(pg_listen_t *l)
{
    struct sockaddr_un sa;
    int rc = pg_tmpdir_new(PG_TMPDIR_PREFIX, l->dir, sizeof(l->dir), &l->dir_lock);

    if (rc != 0 || (rc = pg_listen_address(l->dir, "pmi", &sa, &l->dir_fd)) != 0)
        return rc;
    if (l->dir_fd < 0)
        memcpy(l->path, sa.sun_path, sizeof(l->path));
    else
        snprintf(l->path, sizeof(l->path), "/proc/%ld/fd/%d/pmi", (long)getpid(), l->dir_fd);
    return pg_listen_unix(&sa, 1024, &l->fd);
}

pg_listen_t *pg_listen_new(struct event_base *base, pg_listen_accept_fn on_accept,
                           pg_listen_refuse_fn on_refuse, void *arg, int *err)
{
    pg_listen_t *l = calloc(1, sizeof(*l));

    if (l == NULL) {
        *err = ENOMEM;
        return NULL;
    }
    l->dir_lock = l->dir_fd = -1;
    l->on_accept = on_accept;
    l->on_refuse = on_refuse;
    l->arg = arg;
    l->fd = -1;
    if ((*err = bind_private(l)) != 0)
        goto fail;
    l->ev = event_new(base, l->fd, EV_READ | EV_PERSIST, on_acceptable, l);
    l->retry = evtimer_new(base, on_retry, l);
    if (l->ev == NULL || l->retry == NULL || event_add(l->ev, NULL) != 0) {
        *err = ENOMEM;
        goto fail;
    }
    return l;
fail:
    pg_listen_free(l);
    return NULL;
}

void pg_listen_stop(pg_listen_t *l)
{
    if (l == NULL)
        return;
    l->stopped = 1;
    if (l->ev != NULL)
        event_del(l->ev);
    if (l->retry != NULL)
        event_del(l->retry);
}

void pg_listen_free(pg_listen_t *l)
{
    if (l == NULL)
        return;
    if (l->ev != NULL)
        event_free(l->ev);
    if (l->retry != NULL)
        event_free(l->retry);
    if (l->fd >= 0)
        close(l->fd);
    if (l->dir_fd >= 0)
        close(l->dir_fd);
    pg_tmpdir_remove(l->dir, l->dir_lock); /* the socket with it */
    free(l);
}

const char *pg_listen_path(const pg_listen_t *l)
{
    return l->path;
}

const char *pg_listen_dir(const pg_listen_t *l)
{
    return l->dir;
}
