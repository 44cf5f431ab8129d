/*
 * pg_output: line-buffered forwarding of a rank's output.  See pg_output.h.
 */
#include "gateway/pg_output.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Longest line kept whole; longer lines go out in pieces of this size. */
enum { PG_OUTPUT_BUF = 64 * 1024 };

struct pg_output {
    int src_fd;
    int dst_fd;
    struct event *ev;
    char *tag;          /* owned, or NULL */
    size_t taglen;
    int at_line_start;  /* the next byte written starts a line (tag it) */
    int eof;
    /* The unfinished last line, between reads; owned, NULL when none.
     * Reads go to a stack chunk, so an idle rank costs no buffer: at
     * N = 1024 two 64 KB buffers per rank were most of pmigate's RSS. */
    char *partial;
    size_t len;         /* bytes in partial */
};

/* Writes iov fully to fd, waiting if fd is non-blocking and full.  Errors
 * (a closed terminal, EPIPE) drop the output: ranks must not die because
 * nobody reads pmigate's stdout. */
static void write_fully(int fd, struct iovec *iov, int iovcnt)
{
    while (iovcnt > 0) {
        ssize_t n = writev(fd, iov, iovcnt);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                (void)poll(&p, 1, 1000);
                continue;
            }
            return;
        }
        while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
}

/* Writes bytes [0, n) of buf, tagged if they start a line. */
static void emit(pg_output_t *out, const char *bytes, size_t n, int add_newline)
{
    struct iovec iov[3];
    int cnt = 0;

    if (n == 0)
        return;
    if (out->tag != NULL && out->at_line_start) {
        iov[cnt].iov_base = out->tag;
        iov[cnt++].iov_len = out->taglen;
    }
    iov[cnt].iov_base = (void *)bytes;
    iov[cnt++].iov_len = n;
    if (add_newline) {
        iov[cnt].iov_base = (void *)"\n";
        iov[cnt++].iov_len = 1;
    }
    write_fully(out->dst_fd, iov, cnt);
    out->at_line_start = add_newline || bytes[n - 1] == '\n';
}

/* Keeps bytes [0, n) of chunk as the unfinished line.  On ENOMEM they are
 * written now instead: a line split in two beats lost output. */
static void keep_partial(pg_output_t *out, const char *chunk, size_t n)
{
    char *kept = n > 0 ? realloc(out->partial, n) : NULL;

    if (n > 0 && kept == NULL) {
        emit(out, chunk, n, 0);
        n = 0;
    }
    if (kept == NULL) {
        free(out->partial);
        out->partial = NULL;
    } else {
        memcpy(kept, chunk, n);
        out->partial = kept;
    }
    out->len = n;
}

/* Writes every complete line of chunk [0, n) and keeps the rest. */
static void emit_lines(pg_output_t *out, const char *chunk, size_t n)
{
    size_t start = 0;
    const char *nl;

    while (start < n && (nl = memchr(chunk + start, '\n', n - start)) != NULL) {
        size_t end = (size_t)(nl - chunk) + 1;

        emit(out, chunk + start, end - start, 0);
        start = end;
    }
    if (start == 0 && n == PG_OUTPUT_BUF) {
        emit(out, chunk, n, 0); /* an over-long line: a piece of it */
        start = n;
    }
    keep_partial(out, chunk + start, n - start);
}

static void finish(pg_output_t *out)
{
    /* a tagged partial line gets its newline so the next tag starts a line */
    if (out->len > 0)
        emit(out, out->partial, out->len, out->tag != NULL);
    keep_partial(out, NULL, 0);
    out->eof = 1;
    if (out->ev != NULL)
        event_del(out->ev);
}

/* Reads up to max_reads times, stopping at EAGAIN.  Returns 1 at EOF. */
static int read_some(pg_output_t *out, int max_reads)
{
    char chunk[PG_OUTPUT_BUF];

    while (max_reads-- > 0) {
        size_t have = out->len;
        ssize_t n;

        if (have > 0)
            memcpy(chunk, out->partial, have);
        n = read(out->src_fd, chunk + have, sizeof(chunk) - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0) {
            finish(out);
            return 1;
        }
        emit_lines(out, chunk, have + (size_t)n);
    }
    return 0;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    read_some(arg, 1);
}

pg_output_t *pg_output_new(struct event_base *base, int src_fd, int dst_fd, const char *tag)
{
    pg_output_t *out = calloc(1, sizeof(*out));

    if (out == NULL)
        return NULL;
    out->src_fd = src_fd;
    out->dst_fd = dst_fd;
    out->at_line_start = 1;
    if (tag != NULL) {
        out->tag = strdup(tag);
        out->taglen = strlen(tag);
        if (out->tag == NULL)
            goto fail;
    }
    (void)fcntl(src_fd, F_SETFL, fcntl(src_fd, F_GETFL) | O_NONBLOCK);
    out->ev = event_new(base, src_fd, EV_READ | EV_PERSIST, on_readable, out);
    if (out->ev == NULL || event_add(out->ev, NULL) != 0)
        goto fail;
    return out;
fail:
    out->src_fd = -1; /* the caller still owns src_fd on failure */
    pg_output_free(out);
    return NULL;
}

void pg_output_free(pg_output_t *out)
{
    if (out == NULL)
        return;
    if (out->ev != NULL)
        event_free(out->ev);
    if (out->src_fd >= 0)
        close(out->src_fd);
    free(out->tag);
    free(out->partial);
    free(out);
}

int pg_output_drain(pg_output_t *out)
{
    if (out->eof)
        return 1;
    /* bounded: a grandchild that keeps the pipe open and writes must not
     * keep pmigate from exiting */
    return read_some(out, 64);
}
