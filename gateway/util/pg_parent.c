/*
 * pg_parent: the parent's death, seen from the event loop.  See
 * pg_parent.h.
 */
#include "gateway/util/pg_parent.h"

#include <event2/event.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pg_parent {
    pid_t pid;          /* the parent watched */
    int pidfd;          /* -1: polling getppid() instead */
    struct event *ev;
    void (*gone)(void *arg, pid_t pid);
    void *arg;
    int told;
};

static void tell(pg_parent_t *w)
{
    if (w->told)
        return;
    w->told = 1;
    event_del(w->ev);
    w->gone(w->arg, w->pid);
}

static void on_event(evutil_socket_t fd, short what, void *arg)
{
    pg_parent_t *w = arg;

    (void)fd;
    (void)what;
    /* the pidfd is readable once the parent exited; a poll looks itself */
    if (w->pidfd >= 0 || getppid() != w->pid)
        tell(w);
}

pg_parent_t *pg_parent_watch(struct event_base *base, pid_t parent,
                             void (*gone)(void *arg, pid_t pid), void *arg)
{
    pg_parent_t *w = calloc(1, sizeof(*w));
    struct timeval poll = { 0, PG_PARENT_POLL_MS * 1000 }, now = { 0, 0 };

    if (w == NULL)
        return NULL;
    w->pid = parent;
    w->gone = gone;
    w->arg = arg;
#ifdef SYS_pidfd_open
    w->pidfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
#else
    w->pidfd = -1;
#endif
    /* the parent may have died before the pidfd was opened (or the pid was
     * reused since): then we were re-parented already */
    if (w->pidfd >= 0 && getppid() != w->pid) {
        close(w->pidfd);
        w->pidfd = -1;
    }
    w->ev = w->pidfd >= 0 ? event_new(base, w->pidfd, EV_READ, on_event, w)
                          : event_new(base, -1, EV_PERSIST, on_event, w);
    if (w->ev == NULL ||
        event_add(w->ev, w->pidfd >= 0 ? NULL : getppid() != w->pid ? &now : &poll) != 0) {
        pg_parent_free(w);
        return NULL;
    }
    return w;
}

void pg_parent_free(pg_parent_t *w)
{
    if (w == NULL)
        return;
    if (w->ev != NULL)
        event_free(w->ev);
    if (w->pidfd >= 0)
        close(w->pidfd);
    free(w);
}
