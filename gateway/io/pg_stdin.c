/*
 * pg_stdin: stdin of pmigate -> rank 0.  See pg_stdin.h.
 */
#include "gateway/io/pg_stdin.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Queued bytes above which reading pauses until rank 0 catches up. */
enum { PG_STDIN_QUEUE_MAX = 256 * 1024, PG_STDIN_CHUNK = 64 * 1024 };

struct pg_stdin {
    int child_fd;    /* what rank 0 gets: 0 (inherited), a pipe end, or -1 */
    int pipe_w;      /* our end of the pipe, -1 when not forwarding */
    int eof;         /* fd 0 reached EOF */
    struct event *rev; /* fd 0 readable */
    struct event *wev; /* pipe_w writable */
    struct evbuffer *queue;
};

/* Forward only what could block or stop the ranks; inherit the rest. */
static int needs_forwarding(void)
{
    struct stat st;

    if (fstat(0, &st) != 0)
        return -1; /* closed: /dev/null */
    return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || isatty(0);
}

static void stdin_close_pipe(pg_stdin_t *in)
{
    if (in->wev != NULL)
        event_del(in->wev);
    if (in->pipe_w >= 0)
        close(in->pipe_w);
    in->pipe_w = -1;
}

static void stdin_write(pg_stdin_t *in)
{
    if (in->pipe_w < 0)
        return;
    if (evbuffer_get_length(in->queue) > 0 && evbuffer_write(in->queue, in->pipe_w) < 0 &&
        errno != EAGAIN && errno != EINTR) {
        pg_stdin_stop(in); /* rank 0 closed its stdin or exited */
        return;
    }
    if (evbuffer_get_length(in->queue) > 0) {
        event_add(in->wev, NULL);
        return;
    }
    event_del(in->wev);
    if (in->eof)
        stdin_close_pipe(in); /* rank 0 sees EOF */
    else if (in->rev != NULL)
        event_add(in->rev, NULL);
}

static void on_stdin_readable(evutil_socket_t fd, short what, void *arg)
{
    pg_stdin_t *in = arg;
    char chunk[PG_STDIN_CHUNK];
    ssize_t n = read(fd, chunk, sizeof(chunk));

    (void)what;
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        in->eof = 1;
        event_del(in->rev);
    } else {
        evbuffer_add(in->queue, chunk, (size_t)n);
        if (evbuffer_get_length(in->queue) > PG_STDIN_QUEUE_MAX)
            event_del(in->rev);
    }
    stdin_write(in);
}

static void on_pipe_writable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    stdin_write(arg);
}

pg_stdin_t *pg_stdin_new(struct event_base *base)
{
    pg_stdin_t *in = calloc(1, sizeof(*in));
    int mode = needs_forwarding();
    int p[2];

    if (in == NULL)
        return NULL;
    in->pipe_w = -1;
    in->child_fd = mode < 0 ? -1 : 0;
    if (mode <= 0)
        return in;
    if (pipe2(p, O_CLOEXEC) != 0)
        goto fail;
    in->child_fd = p[0];
    in->pipe_w = p[1];
    (void)fcntl(in->pipe_w, F_SETFL, O_NONBLOCK);
    in->queue = evbuffer_new();
    in->rev = event_new(base, 0, EV_READ | EV_PERSIST, on_stdin_readable, in);
    in->wev = event_new(base, in->pipe_w, EV_WRITE, on_pipe_writable, in);
    if (in->queue == NULL || in->rev == NULL || in->wev == NULL)
        goto fail;
    return in;
fail:
    pg_stdin_free(in);
    return NULL;
}

int pg_stdin_child_fd(const pg_stdin_t *in)
{
    return in->child_fd;
}

int pg_stdin_start(pg_stdin_t *in)
{
    if (in->pipe_w < 0)
        return 0;
    close(in->child_fd);
    in->child_fd = -1;
    return event_add(in->rev, NULL);
}

void pg_stdin_stop(pg_stdin_t *in)
{
    if (in == NULL)
        return;
    if (in->rev != NULL)
        event_del(in->rev);
    stdin_close_pipe(in);
}

void pg_stdin_free(pg_stdin_t *in)
{
    if (in == NULL)
        return;
    pg_stdin_stop(in);
    if (in->child_fd > 0)
        close(in->child_fd);
    if (in->rev != NULL)
        event_free(in->rev);
    if (in->wev != NULL)
        event_free(in->wev);
    if (in->queue != NULL)
        evbuffer_free(in->queue);
    free(in);
}
