/*
 * pg_trace_rec: the recorder behind `pmigate run --trace`.  See
 * pg_trace_rec.h.
 *
 * The hook sees one received message per call, but a batch of replies per
 * call on the way out; replies are cut into messages with the wire framer so
 * the trace has one line per message either way (PMIx frames are cut with
 * their own length header).
 */
#include "gateway/tools/pg_trace_rec.h"

#include <errno.h>
#include <fcntl.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/pg_trace.h"
#include "wire/pg_clock.h"
#include "wire/pg_detect.h"
#include "wire/pg_pmix_frame.h"

enum {
    PG_TRACE_STDIO_BUF = 1 << 20,
    PG_TRACE_IDLE_FLUSH_MS = 250,
    PG_TRACE_CMDLINE_MAX = 64 * 1024,
};

typedef struct rec_conn {
    pg_trace_recorder_t *rec;
    int id;
    pg_proto_t proto;         /* as detected from the first message */
    pg_conn_trace_fn also;
    void *also_arg;
    int rank_offset;          /* a spawned job's ranks: after the root's rows */
} rec_conn_t;

struct pg_trace_recorder {
    FILE *f;
    char *path;
    char *stdio_buf;
    uint64_t t0;
    struct event *flush_ev;   /* NULL without an event base */
    int flush_armed;
    int failed;
    rec_conn_t **conns;       /* owned, one per attached connection */
    int nconns, cap;
    char *scratch;            /* escape buffer, reused */
    size_t scratch_cap;
    pg_trace_parsed_t parsed; /* for detecting a first message's protocol */
};

static void wall_clock_iso(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    char day[32];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06ldZ", day, ts.tv_nsec / 1000);
}

/* This process's command line, arguments joined by spaces (those with a
 * space or nothing in them single-quoted).  NULL if /proc is not there. */
static char *read_cmdline(void)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    char *raw = malloc(PG_TRACE_CMDLINE_MAX), *out = NULL;
    size_t n, o = 0;

    if (f == NULL || raw == NULL)
        goto out;
    n = fread(raw, 1, PG_TRACE_CMDLINE_MAX - 1, f);
    raw[n] = '\0';
    out = malloc(n * 3 + 3); /* each argument may gain two quotes and a space */
    if (out == NULL)
        goto out;
    for (size_t i = 0; i < n; i += strlen(raw + i) + 1) {
        const char *arg = raw + i;
        int quote = arg[0] == '\0' || strchr(arg, ' ') != NULL;

        o += (size_t)sprintf(out + o, "%s%s%s%s", o ? " " : "", quote ? "'" : "", arg,
                             quote ? "'" : "");
    }
    out[o] = '\0';
out:
    if (f != NULL)
        fclose(f);
    free(raw);
    return out;
}

static void on_idle_flush(evutil_socket_t fd, short what, void *arg)
{
    pg_trace_recorder_t *rec = arg;

    (void)fd;
    (void)what;
    rec->flush_armed = 0;
    if (fflush(rec->f) != 0)
        rec->failed = 1;
}

static void arm_flush(pg_trace_recorder_t *rec)
{
    struct timeval tv = { 0, PG_TRACE_IDLE_FLUSH_MS * 1000 };

    if (rec->flush_ev == NULL || rec->flush_armed)
        return;
    if (evtimer_add(rec->flush_ev, &tv) == 0)
        rec->flush_armed = 1;
}

/* The connection's protocol; before the gateway has decided (the first
 * message), decided here the same way from the message itself. */
static pg_proto_t conn_proto(rec_conn_t *rc, const pg_conn_t *conn, const char *bytes,
                             size_t len)
{
    pg_proto_t p = pg_conn_proto(conn);
    pg_version_t v;

    if (p != PG_PROTO_NONE)
        return rc->proto = p;
    if (rc->proto != PG_PROTO_NONE)
        return rc->proto;
    if (pg_pmix_is_start(bytes, len))
        rc->proto = PG_PROTO_PMIX; /* the preamble, before the gateway opened PMIx */
    else if (pg_trace_parse(&rc->rec->parsed, bytes, len) == PG_WIRE_OK &&
        pg_detect(&rc->rec->parsed.msg, &v) == 0)
        rc->proto = v.proto;
    return rc->proto;
}

static void write_one(rec_conn_t *rc, uint64_t t, int rank, pg_proto_t proto,
                      pg_trace_dir_t dir, const char *bytes, size_t len)
{
    pg_trace_recorder_t *rec = rc->rec;

    if (pg_trace_write_event(rec->f, t, rc->id, rank, proto, dir, bytes, len, &rec->scratch,
                             &rec->scratch_cap) != 0)
        rec->failed = 1;
}

static void rec_hook(void *arg, const pg_conn_t *conn, pg_conn_dir_t dir, const char *bytes,
                     size_t len)
{
    rec_conn_t *rc = arg;
    uint64_t t = pg_clock_now() - rc->rec->t0;
    int rank = pg_conn_rank(conn);
    pg_proto_t proto;

    if (rank >= 0)
        rank += rc->rank_offset;
    if (rc->also != NULL)
        rc->also(rc->also_arg, conn, dir, bytes, len);
    proto = conn_proto(rc, conn, bytes, len);
    if (dir == PG_CONN_IN) {
        write_one(rc, t, rank, proto, PG_TRACE_C2S, bytes, len);
    } else {
        while (len > 0) {
            size_t n = pg_trace_first_message(proto, bytes, len);

            write_one(rc, t, rank, proto, PG_TRACE_S2C, bytes, n);
            bytes += n;
            len -= n;
        }
    }
    arm_flush(rc->rec);
}

/* "2,2,2" for `-n 2 a : -n 2 b : -n 2 c`; "" for one application. */
static void apps_text(const pg_run_opts_t *opts, char *buf, size_t len)
{
    size_t o = 0;

    buf[0] = '\0';
    for (int s = 0; opts->nsegments > 1 && s < opts->nsegments && o < len; s++)
        o += (size_t)snprintf(buf + o, len - o, "%s%d", s ? "," : "", opts->segments[s].nprocs);
    if (o >= len)
        buf[0] = '\0'; /* too many applications to say: the replay runs one */
}

/* A trace holds every key and value of the job: it is created 0600 whatever
 * the umask, and a file that was already there (an earlier trace, a file
 * the user made) is made private before a byte is written to it. */
static FILE *open_private(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f;

    if (fd < 0)
        return NULL;
    if (fchmod(fd, 0600) != 0 || (f = fdopen(fd, "w")) == NULL) {
        int e = errno;

        close(fd);
        errno = e;
        return NULL;
    }
    return f;
}

pg_trace_recorder_t *pg_trace_recorder_open(struct event_base *base, const pg_run_opts_t *opts,
                                            const char *kvsname, int *err)
{
    pg_trace_recorder_t *rec = calloc(1, sizeof(*rec));
    pg_trace_header_t h = { .size = opts->nprocs };
    const char *path = opts->trace_path;

    *err = ENOMEM;
    if (rec == NULL || (rec->path = strdup(path)) == NULL ||
        (rec->stdio_buf = malloc(PG_TRACE_STDIO_BUF)) == NULL)
        goto fail;
    if (base != NULL && (rec->flush_ev = evtimer_new(base, on_idle_flush, rec)) == NULL)
        goto fail;
    rec->f = open_private(path);
    if (rec->f == NULL) {
        *err = errno;
        goto fail;
    }
    setvbuf(rec->f, rec->stdio_buf, _IOFBF, PG_TRACE_STDIO_BUF);
    snprintf(h.kvsname, sizeof(h.kvsname), "%s", kvsname);
    wall_clock_iso(h.start, sizeof(h.start));
    apps_text(opts, h.apps, sizeof(h.apps));
    if (opts->trace_nnodes > 1) {
        h.node = opts->trace_node;
        h.nnodes = opts->trace_nnodes;
        snprintf(h.host, sizeof(h.host), "%s", opts->trace_host ? opts->trace_host : "");
    }
    h.cmdline = read_cmdline();
    rec->t0 = pg_clock_now();
    if (pg_trace_write_header(rec->f, &h) != 0 || fflush(rec->f) != 0) {
        *err = errno ? errno : EIO;
        free(h.cmdline);
        goto fail;
    }
    free(h.cmdline);
    *err = 0;
    return rec;
fail:
    pg_trace_recorder_close(rec);
    return NULL;
}

int pg_trace_recorder_attach(pg_trace_recorder_t *rec, pg_conn_t *conn, pg_conn_trace_fn also,
                             void *also_arg)
{
    return pg_trace_recorder_attach_as(rec, conn, 0, also, also_arg);
}

int pg_trace_recorder_attach_as(pg_trace_recorder_t *rec, pg_conn_t *conn, int rank_offset,
                                pg_conn_trace_fn also, void *also_arg)
{
    rec_conn_t *rc;

    if (rec->nconns == rec->cap) {
        int cap = rec->cap ? rec->cap * 2 : 64;
        rec_conn_t **grown = realloc(rec->conns, (size_t)cap * sizeof(*grown));

        if (grown == NULL)
            return -1;
        rec->conns = grown;
        rec->cap = cap;
    }
    rc = calloc(1, sizeof(*rc));
    if (rc == NULL)
        return -1;
    *rc = (rec_conn_t){ rec, rec->nconns, PG_PROTO_NONE, also, also_arg, rank_offset };
    rec->conns[rec->nconns++] = rc;
    pg_conn_set_trace(conn, rec_hook, rc);
    return 0;
}

/* Time since the recording started, as the message lines have it. */
static uint64_t rec_now(const pg_trace_recorder_t *rec)
{
    return pg_clock_now() - rec->t0;
}

void pg_trace_recorder_exit(pg_trace_recorder_t *rec, int row, int wstatus, int teardown)
{
    if (rec == NULL)
        return;
    if (pg_trace_write_exit(rec->f, rec_now(rec), row, wstatus, teardown) != 0)
        rec->failed = 1;
    arm_flush(rec);
}

void pg_trace_recorder_end(pg_trace_recorder_t *rec, int status, int stopped)
{
    if (rec != NULL && pg_trace_write_end(rec->f, rec_now(rec), status, stopped) != 0)
        rec->failed = 1;
}

void pg_trace_recorder_xfence(pg_trace_recorder_t *rec, unsigned fence, int status, int nnodes,
                              int self, void *const *blobs, const size_t *lens)
{
    uint64_t t;

    if (rec == NULL)
        return;
    t = rec_now(rec);
    if (status != 0 && pg_trace_write_xfence(rec->f, t, fence, -1, NULL, 0, &rec->scratch,
                                             &rec->scratch_cap) != 0)
        rec->failed = 1;
    for (int n = 0; status == 0 && n < nnodes; n++)
        if (n != self && pg_trace_write_xfence(rec->f, t, fence, n, blobs ? blobs[n] : NULL,
                                               blobs && blobs[n] ? lens[n] : 0, &rec->scratch,
                                               &rec->scratch_cap) != 0)
            rec->failed = 1;
    arm_flush(rec);
}

const char *pg_trace_recorder_path(const pg_trace_recorder_t *rec)
{
    return rec->path;
}

int pg_trace_recorder_close(pg_trace_recorder_t *rec)
{
    int rc;

    if (rec == NULL)
        return 0;
    if (rec->f != NULL && fclose(rec->f) != 0)
        rec->failed = 1;
    rc = rec->failed ? -1 : 0;
    if (rec->flush_ev != NULL)
        event_free(rec->flush_ev);
    for (int i = 0; i < rec->nconns; i++)
        free(rec->conns[i]);
    free(rec->conns);
    free(rec->scratch);
    pg_trace_parsed_release(&rec->parsed);
    free(rec->stdio_buf);
    free(rec->path);
    free(rec);
    return rc;
}
