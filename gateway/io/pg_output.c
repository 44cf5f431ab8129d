/*
 * pg_output: non-blocking, line-whole forwarding of the ranks' output.  See
 * pg_output.h for the rules.
 *
 * How a sink writes without waiting.  Setting O_NONBLOCK on pmigate's
 * inherited stdout would change the open file description it shares with the
 * parent shell and anything else writing there (a shell reading a terminal
 * left non-blocking fails with EAGAIN; pmigate killed by SIGKILL could not
 * restore it).  So, by what fd is:
 *  - a pipe, FIFO or terminal: pmigate opens it again through
 *    /proc/self/fd/N, which gives a new description of the same pipe or
 *    terminal, private to pmigate, and makes that one non-blocking;
 *  - a socket: send() with MSG_DONTWAIT, which is per call;
 *  - a regular file or block device: plain writes, which never wait for a
 *    reader;
 *  - anything else, or a reopen that failed (permissions): O_NONBLOCK is set
 *    around each write and cleared right after, so others see it only for
 *    the length of one system call.
 * When a write would block, the sink waits for the fd to become writable in
 * the event loop; the lines stay queued meanwhile and the forwarders stop
 * reading their pipes once their share is queued (back-pressure).
 */
#include "gateway/io/pg_output.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum {
    PG_SINK_IOV = 64,           /* chunks per writev */
    PG_SINK_RETRY_MS = 10,      /* when the fd cannot be watched (epoll refuses it) */
    PG_OUTPUT_DRAIN_READS = 64, /* reads per drain: a writing descendant must not hold us */
    PG_OUTPUT_TAG_MAX = 40,     /* "[2147483647.2147483647+] " (spawned jobs) */
    PG_SINK_LOG_ROOM = 1024 * 1024, /* pmigate's own lines beyond the sink's bound */
};

typedef enum sink_way {
    SINK_PRIVATE, /* our own non-blocking description of the pipe/terminal */
    SINK_SOCKET,  /* send(MSG_DONTWAIT) */
    SINK_PLAIN,   /* a regular file: writes do not wait for anyone */
    SINK_TOGGLE,  /* O_NONBLOCK around each write */
} sink_way_t;

/* A run of whole lines of one forwarder (or one log line), queued. */
typedef struct pg_chunk {
    struct pg_chunk *next;
    pg_output_t *owner; /* NULL: a log line, or its forwarder was freed */
    size_t len;
    size_t off;         /* bytes already written */
    char data[];
} pg_chunk_t;

struct pg_sink {
    int refs;
    int fd;             /* what we write to */
    int own_fd;         /* fd is our reopened description: close it */
    sink_way_t way;
    dev_t dev;          /* the file, for pg_sink_share */
    ino_t ino;
    int gone;           /* a write failed for good: output is dropped */
    int waiting;        /* for the fd to become writable */
    uint64_t stalled_since; /* 0 when keeping up */
    struct event *wev;
    struct event *retry;
    pg_chunk_t *head, *tail;
    size_t queued;
    pg_output_t *held;  /* forwarders paused until the sink drains */
    size_t logs_dropped; /* pmigate's lines not queued: no room */
    int tty;            /* a terminal: a status line may be shown */
    int status_shown;   /* a status line is on the terminal (pg_sink_status) */
};

struct pg_output {
    int src_fd;
    pg_sink_t *sink;
    struct event *ev;
    int armed;          /* ev is added */
    int stopped;        /* EOF, or finish done: reads no more */
    int hold_self;      /* paused: too much of its own output queued */
    int hold_sink;      /* paused: the sink is full (on sink->held) */
    pg_output_t *next_held, *prev_held;
    int finishing;      /* pg_output_finish: read `remaining` more, then stop */
    size_t remaining;
    char tag[PG_OUTPUT_TAG_MAX];      /* "[3] ", or "" */
    char cont_tag[PG_OUTPUT_TAG_MAX]; /* "[3+] ": a piece of a cut line */
    int continuing;     /* the next line continues a cut one */
    size_t queued;      /* bytes of its chunks in the sink */
    /* The unfinished last line, between reads; owned, NULL when none.
     * Reads go to a stack chunk, so an idle rank costs no buffer: at
     * N = 1024 two 64 KB buffers per rank were most of pmigate's RSS. */
    char *partial;
    size_t len;
    void (*activity)(void *arg); /* bytes came (pg_output_set_activity) */
    void *activity_arg;
};

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- */
/* forwarders: pausing and resuming                                   */
/* ---------------------------------------------------------------- */

/* Adds or removes the read event to match the forwarder's state. */
static void output_refresh(pg_output_t *out)
{
    int want = !out->stopped && !out->hold_self && !out->hold_sink;

    if (want && !out->armed)
        out->armed = event_add(out->ev, NULL) == 0;
    else if (!want && out->armed) {
        event_del(out->ev);
        out->armed = 0;
    }
}

static void held_unlink(pg_output_t *out)
{
    pg_sink_t *s = out->sink;

    if (!out->hold_sink)
        return;
    if (out->prev_held != NULL)
        out->prev_held->next_held = out->next_held;
    else
        s->held = out->next_held;
    if (out->next_held != NULL)
        out->next_held->prev_held = out->prev_held;
    out->next_held = out->prev_held = NULL;
    out->hold_sink = 0;
}

/* Pauses out until its sink has drained to half its bound. */
static void hold_for_sink(pg_output_t *out)
{
    pg_sink_t *s = out->sink;

    if (out->hold_sink)
        return;
    out->hold_sink = 1;
    out->next_held = s->held;
    if (s->held != NULL)
        s->held->prev_held = out;
    s->held = out;
    output_refresh(out);
}

static int sink_full(const pg_sink_t *s)
{
    return !s->gone && s->queued >= PG_OUTPUT_SINK_QUEUE;
}

/* n bytes of out's chunks were written (or dropped). */
static void output_consumed(pg_output_t *out, size_t n)
{
    out->queued -= n;
    if (out->hold_self && out->queued <= PG_OUTPUT_RANK_QUEUE / 2) {
        out->hold_self = 0;
        output_refresh(out);
    }
}

/* ---------------------------------------------------------------- */
/* sinks                                                              */
/* ---------------------------------------------------------------- */

static ssize_t sink_write(pg_sink_t *s, struct iovec *iov, int cnt)
{
    struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)cnt };
    ssize_t n;
    int saved, flags;

    switch (s->way) {
    case SINK_SOCKET:
        return sendmsg(s->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    case SINK_TOGGLE:
        /* read each time: whatever another process set stays set */
        flags = fcntl(s->fd, F_GETFL);
        if (flags >= 0 && !(flags & O_NONBLOCK))
            (void)fcntl(s->fd, F_SETFL, flags | O_NONBLOCK);
        n = writev(s->fd, iov, cnt);
        saved = errno;
        if (flags >= 0 && !(flags & O_NONBLOCK))
            (void)fcntl(s->fd, F_SETFL, flags);
        errno = saved;
        return n;
    default:
        return writev(s->fd, iov, cnt);
    }
}

static void chunk_drop(pg_chunk_t *c, size_t n)
{
    if (c->owner != NULL)
        output_consumed(c->owner, n);
}

/* Takes n written bytes off the head of the queue. */
static void sink_consume(pg_sink_t *s, size_t n)
{
    while (n > 0 && s->head != NULL) {
        pg_chunk_t *c = s->head;
        size_t take = c->len - c->off < n ? c->len - c->off : n;

        c->off += take;
        n -= take;
        s->queued -= take;
        chunk_drop(c, take);
        if (c->off == c->len) {
            s->head = c->next;
            if (s->head == NULL)
                s->tail = NULL;
            free(c);
        }
    }
}

/* Resumes the forwarders the full sink paused, once it has room again. */
static void sink_wake_held(pg_sink_t *s)
{
    if (s->queued > PG_OUTPUT_SINK_QUEUE / 2 && !s->gone)
        return;
    while (s->held != NULL) {
        pg_output_t *out = s->held;

        held_unlink(out);
        output_refresh(out);
    }
}

/* Drops the queue, but keeps a chunk already half written when keep_head. */
static size_t sink_drop_queue(pg_sink_t *s, int keep_head)
{
    pg_chunk_t *c = s->head, *keep = NULL;
    size_t dropped = 0;

    if (keep_head && c != NULL && c->off > 0) {
        keep = c;
        c = c->next;
        keep->next = NULL;
    }
    while (c != NULL) {
        pg_chunk_t *next = c->next;

        dropped += c->len - c->off;
        chunk_drop(c, c->len - c->off);
        free(c);
        c = next;
    }
    s->head = s->tail = keep;
    s->queued = keep != NULL ? keep->len - keep->off : 0;
    return dropped;
}

/* The reader is gone (EPIPE, a closed terminal): output is dropped from now
 * on, and the ranks keep running -- they must not die because nobody reads
 * pmigate's stdout. */
static void sink_gone(pg_sink_t *s)
{
    s->gone = 1;
    s->waiting = 0;
    event_del(s->wev);
    (void)sink_drop_queue(s, 0);
    sink_wake_held(s);
}

static void sink_wait(pg_sink_t *s)
{
    static const struct timeval retry = { 0, PG_SINK_RETRY_MS * 1000 };

    s->waiting = 1;
    if (s->stalled_since == 0)
        s->stalled_since = now_ns();
    if (event_add(s->wev, NULL) != 0)
        (void)evtimer_add(s->retry, &retry); /* a regular file, say: poll it */
}

/* Writes as much of the queue as the fd takes now. */
static void sink_flush(pg_sink_t *s)
{
    s->waiting = 0;
    while (s->head != NULL) {
        struct iovec iov[PG_SINK_IOV];
        int cnt = 0;
        ssize_t n;

        for (pg_chunk_t *c = s->head; c != NULL && cnt < PG_SINK_IOV; c = c->next, cnt++) {
            iov[cnt].iov_base = c->data + c->off;
            iov[cnt].iov_len = c->len - c->off;
        }
        n = sink_write(s, iov, cnt);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            sink_wait(s);
            return;
        }
        if (n <= 0) {
            sink_gone(s);
            return;
        }
        s->stalled_since = 0;
        sink_consume(s, (size_t)n);
    }
    s->stalled_since = 0;
    sink_wake_held(s);
}

static void on_sink_writable(evutil_socket_t fd, short what, void *arg)
{
    pg_sink_t *s = arg;

    (void)fd;
    (void)what;
    sink_flush(s);
    sink_wake_held(s);
}

static pg_chunk_t *chunk_new(pg_output_t *owner, size_t cap)
{
    pg_chunk_t *c = malloc(sizeof(*c) + cap);

    if (c == NULL)
        return NULL;
    c->next = NULL;
    c->owner = owner;
    c->len = 0;
    c->off = 0;
    return c;
}

/* Queues c (taking it); writes at once unless already waiting. */
static void sink_enqueue_raw(pg_sink_t *s, pg_chunk_t *c)
{
    if (s->gone) {
        free(c);
        return;
    }
    c->next = NULL;
    if (s->tail != NULL)
        s->tail->next = c;
    else
        s->head = c;
    s->tail = c;
    s->queued += c->len;
    if (c->owner != NULL)
        c->owner->queued += c->len;
    if (!s->waiting)
        sink_flush(s);
}

/* The status line's bytes: back to the line's start, the text (or none),
 * erase to the end of the line. */
static void sink_status_queue(pg_sink_t *s, const char *text)
{
    size_t n = text != NULL ? strlen(text) : 0;
    pg_chunk_t *c = chunk_new(NULL, n + 4);

    if (c == NULL)
        return;
    c->data[0] = '\r';
    if (n > 0)
        memcpy(c->data + 1, text, n);
    memcpy(c->data + 1 + n, "\033[K", 3);
    c->len = n + 4;
    s->status_shown = n > 0;
    sink_enqueue_raw(s, c);
}

/* Queues a chunk of lines; a status line on the terminal is erased first. */
static void sink_enqueue(pg_sink_t *s, pg_chunk_t *c)
{
    if (s->status_shown)
        sink_status_queue(s, NULL);
    sink_enqueue_raw(s, c);
}

void pg_sink_status(pg_sink_t *s, const char *text)
{
    if (s == NULL || !s->tty || s->gone)
        return;
    if (text == NULL || text[0] == '\0') {
        if (s->status_shown)
            sink_status_queue(s, NULL);
        return;
    }
    if (s->head == NULL) /* never behind other output: skipped while any waits */
        sink_status_queue(s, text);
}

/* Picks how to write fd without waiting (see the top of this file). */
static void sink_choose_way(pg_sink_t *s, int fd, const struct stat *st)
{
    char path[64];

    s->fd = fd;
    if (S_ISREG(st->st_mode) || S_ISBLK(st->st_mode)) {
        s->way = SINK_PLAIN;
        return;
    }
    if (S_ISSOCK(st->st_mode)) {
        s->way = SINK_SOCKET;
        return;
    }
    s->way = SINK_TOGGLE;
    if (!S_ISFIFO(st->st_mode) && !isatty(fd))
        return;
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    s->fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (s->fd < 0) {
        s->fd = fd;
        return;
    }
    s->own_fd = 1;
    s->way = SINK_PRIVATE;
}

pg_sink_t *pg_sink_new(struct event_base *base, int fd)
{
    pg_sink_t *s = calloc(1, sizeof(*s));
    struct stat st;

    if (s == NULL)
        return NULL;
    s->refs = 1;
    s->fd = -1;
    if (fstat(fd, &st) != 0) {
        s->gone = 1; /* closed: nothing to write to */
        memset(&st, 0, sizeof(st));
        st.st_mode = S_IFREG;
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->tty = isatty(fd);
    sink_choose_way(s, fd, &st);
    s->wev = event_new(base, s->fd, EV_WRITE, on_sink_writable, s);
    s->retry = evtimer_new(base, on_sink_writable, s);
    if (s->wev == NULL || s->retry == NULL) {
        pg_sink_free(s);
        return NULL;
    }
    return s;
}

pg_sink_t *pg_sink_share(pg_sink_t *sink, int fd)
{
    struct stat st;

    if (sink == NULL || fstat(fd, &st) != 0 || st.st_dev != sink->dev || st.st_ino != sink->ino)
        return NULL;
    sink->refs++;
    return sink;
}

void pg_sink_free(pg_sink_t *s)
{
    if (s == NULL || --s->refs > 0)
        return;
    if (s->status_shown && !s->gone)
        sink_status_queue(s, NULL); /* the terminal is left as it was */
    if (!s->gone && s->head != NULL && s->wev != NULL)
        sink_flush(s); /* a last try, without waiting */
    (void)sink_drop_queue(s, 0);
    if (s->wev != NULL)
        event_free(s->wev);
    if (s->retry != NULL)
        event_free(s->retry);
    if (s->own_fd)
        close(s->fd);
    free(s);
}

size_t pg_sink_queued(const pg_sink_t *s)
{
    return s->queued;
}

uint64_t pg_sink_stalled_ns(const pg_sink_t *s, uint64_t now)
{
    return s->head != NULL && s->stalled_since != 0 && now > s->stalled_since
               ? now - s->stalled_since
               : 0;
}

size_t pg_sink_discard(pg_sink_t *s)
{
    size_t dropped = sink_drop_queue(s, 1);

    sink_wake_held(s);
    return dropped;
}

static void sink_log_queue(pg_sink_t *sink, const char *clean, size_t n)
{
    pg_chunk_t *c = chunk_new(NULL, n + 10);

    if (c == NULL) {
        sink->logs_dropped++;
        return;
    }
    memcpy(c->data, "pmigate: ", 9);
    memcpy(c->data + 9, clean, n);
    c->data[9 + n] = '\n';
    c->len = n + 10;
    sink_enqueue(sink, c);
}

char *pg_output_sanitize_dup(const char *in)
{
    size_t cap = 4 * strlen(in) + 1; /* an escape is at most 4 bytes per byte */
    char *out = malloc(cap);

    if (out != NULL)
        (void)pg_output_sanitize(in, out, cap);
    return out;
}

void pg_sink_log(pg_sink_t *sink, const char *line)
{
    char *clean = pg_output_sanitize_dup(line);
    size_t n;

    if (clean == NULL)
        return; /* out of memory: the line is lost, not the gateway */
    n = strlen(clean);
    if (sink == NULL) {
        dprintf(STDERR_FILENO, "pmigate: %s\n", clean);
        free(clean);
        return;
    }
    /* pmigate's own lines are not paused like a rank's, but bounded too:
     * --verbose on a stalled stderr must not grow pmigate without end */
    if (!sink->gone && sink->queued >= PG_OUTPUT_SINK_QUEUE + PG_SINK_LOG_ROOM) {
        sink->logs_dropped++;
        free(clean);
        return;
    }
    if (sink->logs_dropped > 0) {
        char note[80];
        int len = snprintf(note, sizeof(note), "(%zu messages dropped: stderr was not read)",
                           sink->logs_dropped);

        sink->logs_dropped = 0;
        sink_log_queue(sink, note, (size_t)len);
    }
    sink_log_queue(sink, clean, n);
    free(clean);
}

/* ---------------------------------------------------------------- */
/* text a rank sent, made safe to print                               */
/* ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (avail bytes), 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *p, size_t avail)
{
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf;

    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        need = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        need = 3;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        need = 4;
    else
        return 0;
    if (p[0] == 0xe0)
        lo = 0xa0; /* overlong */
    else if (p[0] == 0xed)
        hi = 0x9f; /* surrogates */
    else if (p[0] == 0xf0)
        lo = 0x90;
    else if (p[0] == 0xf4)
        hi = 0x8f;
    if (avail < need || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return need;
}

/* The visible form of byte b (NUL-terminated in esc), or esc[0] = 0 when b
 * is printed as it is. */
static void escape_byte(unsigned char b, char esc[5])
{
    esc[0] = '\0';
    if (b == '\n')
        memcpy(esc, "\\n", 3);
    else if (b == '\r')
        memcpy(esc, "\\r", 3);
    else if (b == '\t')
        memcpy(esc, "\\t", 3);
    else if (b < 0x20 || b >= 0x7f)
        snprintf(esc, 5, "\\x%02x", b);
}

size_t pg_output_sanitize(const char *in, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t avail = strlen(in), o = 0;

    if (cap == 0)
        return 0;
    while (avail > 0) {
        size_t seq = p[0] >= 0x80 ? utf8_seq_len(p, avail) : 0;
        /* C1 controls (U+0080..U+009F: C2 80..C2 9F) are escapes too */
        int c1 = seq == 2 && p[0] == 0xc2 && p[1] < 0xa0;
        char esc[5];
        const char *piece = (const char *)p;
        size_t plen = 1;

        if (seq > 0 && !c1)
            plen = seq;
        else {
            escape_byte(p[0], esc);
            if (esc[0] != '\0') {
                piece = esc;
                plen = strlen(esc);
            }
        }
        if (o + plen >= cap)
            break;
        memcpy(out + o, piece, plen);
        o += plen;
        p += seq > 0 && !c1 ? seq : 1;
        avail -= seq > 0 && !c1 ? seq : 1;
    }
    out[o] = '\0';
    return o;
}

/* ---------------------------------------------------------------- */
/* forwarders: lines                                                  */
/* ---------------------------------------------------------------- */

/* Where to cut a line that filled the buffer (n bytes): at n, or before a
 * UTF-8 character that n would split. */
static size_t utf8_cut(const char *bytes, size_t n)
{
    const unsigned char *p = (const unsigned char *)bytes;

    for (size_t back = 1; back <= 3 && back < n; back++) {
        unsigned char b = p[n - back];

        if (b < 0x80)
            return n; /* ASCII: nothing is split */
        if (b >= 0xc0) {
            size_t need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
            return need > back ? n - back : n;
        }
    }
    return n;
}

static size_t count_newlines(const char *bytes, size_t n)
{
    size_t count = 0;
    const char *p = bytes, *end = bytes + n, *nl;

    while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        count++;
        p = nl + 1;
    }
    return count;
}

/* Queues the whole lines bytes [0, n) (n ends with '\n' unless cut, when a
 * '\n' is added) as one chunk, each line tagged. */
static void queue_lines(pg_output_t *out, const char *bytes, size_t n, int cut)
{
    size_t taglen = strlen(out->tag), ctaglen = strlen(out->cont_tag);
    size_t lines = count_newlines(bytes, n) + (cut ? 1 : 0);
    pg_chunk_t *c = chunk_new(out, n + (size_t)cut + lines * ctaglen);
    const char *p = bytes, *end = bytes + n;

    if (c == NULL)
        return; /* out of memory: these lines are lost, the rest goes on */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        const char *tag = out->continuing ? out->cont_tag : out->tag;
        size_t tlen = out->continuing ? ctaglen : taglen;

        memcpy(c->data + c->len, tag, tlen);
        memcpy(c->data + c->len + tlen, p, len);
        c->len += tlen + len;
        out->continuing = 0;
        p += len;
    }
    if (cut) {
        c->data[c->len++] = '\n';
        out->continuing = 1;
    }
    sink_enqueue(out->sink, c);
}

/* Keeps bytes [0, n) of chunk as the unfinished line.  On ENOMEM they are
 * forwarded now, as a cut line: a line split in two beats lost output. */
static void keep_partial(pg_output_t *out, const char *chunk, size_t n)
{
    char *kept = n > 0 ? realloc(out->partial, n) : NULL;

    if (n > 0 && kept == NULL) {
        queue_lines(out, chunk, n, 1);
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

/* Queues every complete line of chunk [0, n), cuts a line that filled the
 * buffer, and keeps the rest. */
static void take_lines(pg_output_t *out, const char *chunk, size_t n)
{
    const char *last_nl = memrchr(chunk, '\n', n);
    size_t whole = last_nl != NULL ? (size_t)(last_nl - chunk) + 1 : 0;

    if (whole > 0)
        queue_lines(out, chunk, whole, 0);
    if (n - whole >= PG_OUTPUT_LINE_MAX) {
        size_t cut = utf8_cut(chunk + whole, n - whole);

        queue_lines(out, chunk + whole, cut, 1);
        whole += cut;
    }
    keep_partial(out, chunk + whole, n - whole);
}

/* The pipe ended (or finish is done): the unfinished line goes out with a
 * '\n', and reading stops. */
static void output_stop(pg_output_t *out)
{
    if (out->len > 0)
        queue_lines(out, out->partial, out->len, 1);
    out->continuing = 0;
    keep_partial(out, NULL, 0);
    out->stopped = 1;
    held_unlink(out);
    output_refresh(out);
}

/* Reads up to max_reads times, stopping at EAGAIN, EOF or back-pressure. */
static void read_some(pg_output_t *out, int max_reads)
{
    char chunk[PG_OUTPUT_LINE_MAX];

    while (max_reads-- > 0 && !out->stopped && !out->hold_self && !out->hold_sink) {
        size_t have = out->len, room = sizeof(chunk) - have;
        ssize_t n;

        if (sink_full(out->sink)) {
            hold_for_sink(out);
            return;
        }
        if (out->finishing && out->remaining < room)
            room = out->remaining;
        if (have > 0)
            memcpy(chunk, out->partial, have);
        n = room > 0 ? read(out->src_fd, chunk + have, room) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            output_stop(out); /* EOF, a read error, or finish done */
            return;
        }
        if (out->finishing)
            out->remaining -= (size_t)n;
        if (out->activity != NULL)
            out->activity(out->activity_arg);
        take_lines(out, chunk, have + (size_t)n);
        if (out->finishing && out->remaining == 0) {
            output_stop(out); /* the last words are out; later writers are not waited for */
            return;
        }
        if (out->queued >= PG_OUTPUT_RANK_QUEUE) {
            out->hold_self = 1;
            output_refresh(out);
        }
    }
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    read_some(arg, 1);
}

void pg_output_set_label(pg_output_t *out, const char *label)
{
    if (out == NULL)
        return;
    snprintf(out->tag, sizeof(out->tag), "[%s] ", label);
    snprintf(out->cont_tag, sizeof(out->cont_tag), "[%s+] ", label);
}

void pg_output_set_activity(pg_output_t *out, void (*fn)(void *arg), void *arg)
{
    if (out == NULL)
        return;
    out->activity = fn;
    out->activity_arg = arg;
}

pg_output_t *pg_output_new(struct event_base *base, int src_fd, pg_sink_t *sink, int rank)
{
    pg_output_t *out = calloc(1, sizeof(*out));

    if (out == NULL)
        return NULL;
    out->src_fd = src_fd;
    out->sink = sink;
    if (rank >= 0) {
        snprintf(out->tag, sizeof(out->tag), "[%d] ", rank);
        snprintf(out->cont_tag, sizeof(out->cont_tag), "[%d+] ", rank);
    }
    (void)fcntl(src_fd, F_SETFL, fcntl(src_fd, F_GETFL) | O_NONBLOCK);
    out->ev = event_new(base, src_fd, EV_READ | EV_PERSIST, on_readable, out);
    if (out->ev == NULL)
        goto fail;
    output_refresh(out);
    if (!out->armed)
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
    held_unlink(out);
    /* its queued lines stay queued, without an owner to tell */
    for (pg_chunk_t *c = out->sink != NULL ? out->sink->head : NULL; c != NULL; c = c->next)
        if (c->owner == out)
            c->owner = NULL;
    if (out->ev != NULL)
        event_free(out->ev);
    if (out->src_fd >= 0)
        close(out->src_fd);
    free(out->partial);
    free(out);
}

void pg_output_drain(pg_output_t *out)
{
    read_some(out, PG_OUTPUT_DRAIN_READS);
}

void pg_output_finish(pg_output_t *out)
{
    int avail = 0;

    if (out->stopped || out->finishing)
        return;
    out->finishing = 1;
    /* what the pipe holds now: the reaped ranks' last words; a read error
     * means the same as an empty pipe */
    if (ioctl(out->src_fd, FIONREAD, &avail) != 0 || avail < 0)
        avail = 0;
    out->remaining = (size_t)avail;
    if (out->remaining == 0)
        output_stop(out);
    else
        read_some(out, 1);
}

int pg_output_finished(const pg_output_t *out)
{
    return out->stopped;
}

size_t pg_output_undelivered(const pg_output_t *out)
{
    return out->queued + out->len + (out->finishing && !out->stopped ? out->remaining : 0);
}
