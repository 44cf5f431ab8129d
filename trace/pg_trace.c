/*
 * pg_trace: the trace file format.  See pg_trace.h and docs/trace-format.md.
 *
 * The reader is strict about structure (a wrong field is an error naming the
 * line, never a guess) and lenient about content (a message the codec cannot
 * parse is kept with cmd = PG_CMD_UNKNOWN: a trace of a misbehaving client
 * is exactly what people need to read).
 */
#include "trace/pg_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "parser/pg_parse.h"
#include "wire/pg_pmix_msg.h"
#include "wire/pg_escape.h"
#include "wire/pg_frame.h"
#include "wire/pg_pmix_frame.h"

static const char header_magic[] = "#pmigate-trace";
static const char record_mark[] = "#! "; /* a record: older readers skip it as a comment */

/* ---------------------------------------------------------------- */
/* writing                                                            */
/* ---------------------------------------------------------------- */

const char *pg_trace_proto_word(pg_proto_t proto)
{
    switch (proto) {
    case PG_PROTO_PMI1:
        return "pmi1";
    case PG_PROTO_PMI2:
        return "pmi2";
    case PG_PROTO_PMIX:
        return "pmix";
    default:
        return "-";
    }
}

static int proto_of_word(const char *w, pg_proto_t *out)
{
    static const pg_proto_t all[] = { PG_PROTO_NONE, PG_PROTO_PMI1, PG_PROTO_PMI2, PG_PROTO_PMIX };

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(w, pg_trace_proto_word(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

static int grow_scratch(char **buf, size_t *cap, size_t need)
{
    char *grown;

    if (*cap >= need)
        return 0;
    grown = realloc(*buf, need);
    if (grown == NULL)
        return -1;
    *buf = grown;
    *cap = need;
    return 0;
}

int pg_trace_write_header(FILE *f, const pg_trace_header_t *h)
{
    const char *cmd = h->cmdline ? h->cmdline : "";
    size_t len = strlen(cmd);
    char *esc = malloc(pg_escaped_max(len));
    int rc;

    if (esc == NULL)
        return -1;
    pg_escape(cmd, len, esc);
    rc = fprintf(f, "%s %d kvsname=%s size=%d start=%s%s%s", header_magic, PG_TRACE_VERSION,
                 h->kvsname[0] ? h->kvsname : "-", h->size, h->start[0] ? h->start : "-",
                 h->apps[0] ? " apps=" : "", h->apps) < 0 ||
                 (h->nnodes > 1 && fprintf(f, " node=%d nnodes=%d host=%s", h->node, h->nnodes,
                                           h->host[0] ? h->host : "-") < 0) ||
                 fprintf(f, " cmdline=%s\n", esc) < 0
             ? -1
             : 0;
    free(esc);
    return rc;
}

int pg_trace_write_event(FILE *f, uint64_t t_ns, int conn, int rank, pg_proto_t proto,
                         pg_trace_dir_t dir, const char *bytes, size_t len, char **scratch,
                         size_t *scratch_cap)
{
    size_t n;

    if (grow_scratch(scratch, scratch_cap, pg_escaped_max(len)) != 0)
        return -1;
    n = pg_escape(bytes, len, *scratch);
    if (fprintf(f, "%" PRIu64 " %d %d %s %c ", t_ns, conn, rank, pg_trace_proto_word(proto),
                dir == PG_TRACE_C2S ? 'C' : 'S') < 0 ||
        fwrite(*scratch, 1, n, f) != n || putc('\n', f) == EOF)
        return -1;
    return 0;
}

int pg_trace_write_exit(FILE *f, uint64_t t_ns, int rank, int wstatus, int teardown)
{
    int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;

    return fprintf(f, "%s%" PRIu64 " exit rank=%d %s=%d%s\n", record_mark, t_ns, rank,
                   sig ? "signal" : "code", sig ? sig : WEXITSTATUS(wstatus),
                   teardown ? " teardown" : "") < 0
               ? -1
               : 0;
}

int pg_trace_write_end(FILE *f, uint64_t t_ns, int status, int stopped)
{
    return fprintf(f, "%s%" PRIu64 " end status=%d%s\n", record_mark, t_ns, status,
                   stopped ? " stopped" : "") < 0
               ? -1
               : 0;
}

int pg_trace_write_xfence(FILE *f, uint64_t t_ns, unsigned fence, int node, const void *blob,
                          size_t len, char **scratch, size_t *scratch_cap)
{
    size_t n;

    if (node < 0)
        return fprintf(f, "%s%" PRIu64 " xfence fence=%u failed\n", record_mark, t_ns, fence) < 0
                   ? -1
                   : 0;
    if (grow_scratch(scratch, scratch_cap, pg_escaped_max(len) + 1) != 0)
        return -1;
    n = len > 0 ? pg_escape(blob, len, *scratch) : 0;
    if (fprintf(f, "%s%" PRIu64 " xfence fence=%u node=%d ", record_mark, t_ns, fence, node) < 0 ||
        fwrite(*scratch, 1, n, f) != n || putc('\n', f) == EOF)
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- */
/* decoding                                                           */
/* ---------------------------------------------------------------- */

int pg_trace_parse(pg_trace_parsed_t *p, const char *bytes, size_t len)
{
    pg_frame_t frame;
    int rc;

    if (!p->msg_ready) {
        pg_msg_init(&p->msg);
        p->msg_ready = 1;
    }
    if (grow_scratch(&p->buf, &p->cap, len + 1) != 0)
        return PG_WIRE_ENOMEM;
    memcpy(p->buf, bytes, len);
    p->buf[len] = '\0';
    rc = pg_frame_next(p->buf, len, &frame);
    if (rc == PG_WIRE_ENEED_MORE)
        return PG_WIRE_EBAD_START; /* a traced message is always whole */
    if (rc != PG_WIRE_OK)
        return rc;
    return pg_parse_frame(p->buf, &frame, &p->msg);
}

void pg_trace_parsed_release(pg_trace_parsed_t *p)
{
    if (p->msg_ready)
        pg_msg_release(&p->msg);
    free(p->buf);
    memset(p, 0, sizeof(*p));
}

size_t pg_trace_first_message(pg_proto_t proto, const char *bytes, size_t len)
{
    pg_frame_t frame;
    size_t n;

    if (proto == PG_PROTO_PMIX || pg_pmix_is_start(bytes, len)) {
        n = pg_trace_pmix_first(bytes, len);
        return n > 0 ? n : len;
    }
    if (pg_frame_next(bytes, len, &frame) != PG_WIRE_OK || frame.consumed == 0)
        return len;
    return frame.consumed;
}

const char *pg_trace_event_name(const pg_trace_event_t *e)
{
    if (e->cmd != PG_CMD_UNKNOWN)
        return pg_cmd_name(e->cmd);
    if (e->name[0] != '\0')
        return e->name;
    return e->proto == PG_PROTO_PMIX ? "pmix" : "?";
}

/* A message error (syntax, a limit) still names the command; a framing
 * error does not. */
static int parse_rc_has_cmd(int rc)
{
    return rc == PG_WIRE_OK || (rc <= PG_WIRE_ESYNTAX && rc >= PG_WIRE_EKVSNAME_TOO_LONG);
}

/* PMIx: the header (pairing needs the request id).  A preamble recorded
 * before the connection's protocol was known (version 1 traces say "-")
 * is PMIx all the same: nothing else starts with 0x89. */
static void decode_pmix_event(pg_trace_event_t *e)
{
    e->proto = PG_PROTO_PMIX;
    if (pg_trace_pmix_head(e->bytes, e->len, e->dir == PG_TRACE_C2S, &e->pmix) != 0)
        return;
    snprintf(e->name, sizeof(e->name), "%s",
             e->pmix.kind == PG_TRACE_PMIX_PREAMBLE ? "preamble" : pg_pmix_cmd_name(e->pmix.cmd));
}

static void decode_event(pg_trace_event_t *e, pg_trace_parsed_t *p)
{
    e->cmd = PG_CMD_UNKNOWN;
    e->name[0] = '\0';
    memset(&e->pmix, 0, sizeof(e->pmix));
    if (e->proto == PG_PROTO_PMIX || pg_pmix_is_start(e->bytes, e->len)) {
        decode_pmix_event(e);
        return;
    }
    if (!parse_rc_has_cmd(pg_trace_parse(p, e->bytes, e->len)))
        return;
    e->cmd = p->msg.cmd;
    if (p->msg.name.ptr != NULL)
        snprintf(e->name, sizeof(e->name), "%.*s", (int)p->msg.name.len, p->msg.name.ptr);
}

/* ---------------------------------------------------------------- */
/* reading                                                            */
/* ---------------------------------------------------------------- */

typedef struct reader {
    FILE *f;
    char *line;
    size_t line_cap;
    unsigned lineno;
    int whole;          /* the line read last ended with its newline */
    uint64_t last_t;    /* the time of the last event or record */
    size_t rec_cap;
    char *err;
    size_t errlen;
    pg_trace_t *t;
    size_t cap;
} reader_t;

static int rd_fail(reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int rd_fail(reader_t *r, const char *fmt, ...)
{
    char what[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (r->lineno > 0)
        snprintf(r->err, r->errlen, "line %u: %s", r->lineno, what);
    else
        snprintf(r->err, r->errlen, "%s", what);
    return -1;
}

/* Reads the next line without its '\n'; returns its length or -1 at EOF.
 * r->whole says whether it had its '\n' (every line a recorder writes has
 * one: a line without is where the file was cut). */
static ssize_t rd_line(reader_t *r)
{
    ssize_t n = getline(&r->line, &r->line_cap, r->f);

    if (n < 0)
        return -1;
    r->lineno++;
    r->whole = n > 0 && r->line[n - 1] == '\n';
    if (r->whole)
        r->line[--n] = '\0';
    return n;
}

/* "key=value" at *p (value up to the next space); advances *p. */
static int header_field(char **p, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key), vlen;

    while (**p == ' ')
        (*p)++;
    if (strncmp(*p, key, klen) != 0 || (*p)[klen] != '=')
        return -1;
    *p += klen + 1;
    vlen = strcspn(*p, " ");
    if (vlen >= outlen)
        return -1;
    memcpy(out, *p, vlen);
    out[vlen] = '\0';
    *p += vlen;
    return 0;
}

/* The optional "apps=2,2,2" after start= (ranks per MPMD application). */
static int parse_apps(char **p, pg_trace_header_t *h)
{
    char *save = *p;

    if (header_field(p, "apps", h->apps, sizeof(h->apps)) != 0) {
        *p = save;
        h->apps[0] = '\0';
        return 0;
    }
    return h->apps[0] == '\0' || strspn(h->apps, "0123456789,") != strlen(h->apps) ? -1 : 0;
}

/* The optional "node=1 nnodes=4 host=NAME" of a trace `pmigate proxy`
 * recorded.  Returns 0 (absent or valid) or -1. */
static int parse_node(char **p, pg_trace_header_t *h)
{
    char *save = *p, num[16], *end;
    long v;

    if (header_field(p, "node", num, sizeof(num)) != 0) {
        *p = save;
        return 0;
    }
    v = strtol(num, &end, 10);
    if (*end != '\0' || end == num || v < 0 || v > (1 << 20))
        return -1;
    h->node = (int)v;
    if (header_field(p, "nnodes", num, sizeof(num)) != 0)
        return -1;
    v = strtol(num, &end, 10);
    if (*end != '\0' || end == num || v <= h->node || v > (1 << 20))
        return -1;
    h->nnodes = (int)v;
    return header_field(p, "host", h->host, sizeof(h->host));
}

static int parse_header(reader_t *r, char *line, size_t len)
{
    pg_trace_header_t *h = &r->t->header;
    char *p = line + sizeof(header_magic) - 1, *end;
    char size[16];
    size_t clen;
    long v;

    if (strncmp(line, header_magic, sizeof(header_magic) - 1) != 0 || *p != ' ')
        return rd_fail(r, "not a pmigate trace (the first line must start with '%s')",
                       header_magic);
    errno = 0;
    v = strtol(p + 1, &end, 10);
    if (end == p + 1 || errno != 0 || v < 1)
        return rd_fail(r, "the header has no valid format version");
    if (v > PG_TRACE_VERSION)
        return rd_fail(r, "trace format version %ld is newer than this pmigate reads (%d)", v,
                       PG_TRACE_VERSION);
    h->version = (int)v;
    p = end;
    if (header_field(&p, "kvsname", h->kvsname, sizeof(h->kvsname)) != 0 ||
        header_field(&p, "size", size, sizeof(size)) != 0 ||
        header_field(&p, "start", h->start, sizeof(h->start)) != 0)
        return rd_fail(r, "the header needs kvsname=, size= and start=");
    errno = 0;
    v = strtol(size, &end, 10);
    if (*end != '\0' || errno != 0 || v < 0 || v > (1 << 20))
        return rd_fail(r, "the header's size '%s' is not a number of ranks", size);
    h->size = (int)v;
    if (parse_apps(&p, h) != 0)
        return rd_fail(r, "the header's apps= is not a list of rank counts");
    if (parse_node(&p, h) != 0)
        return rd_fail(r, "the header's node= needs nnodes= above it and host=");
    while (*p == ' ')
        p++;
    if (strncmp(p, "cmdline=", 8) != 0)
        return 0;
    p += 8;
    clen = (size_t)(line + len - p);
    h->cmdline = malloc(clen + 1);
    if (h->cmdline == NULL || pg_unescape(p, clen, h->cmdline, &clen) != 0)
        return rd_fail(r, "the header's cmdline has a malformed escape");
    h->cmdline[clen] = '\0';
    return 0;
}

/* Reads a decimal field ending at a space; advances *p past the space. */
static int num_field(char **p, long long min, long long max, long long *out)
{
    char *end;
    long long v;

    if (**p == '\0' || **p == ' ')
        return -1;
    errno = 0;
    v = strtoll(*p, &end, 10);
    if (errno != 0 || *end != ' ' || v < min || v > max)
        return -1;
    *out = v;
    *p = end + 1;
    return 0;
}

static int word_field(char **p, char *out, size_t outlen)
{
    size_t n = strcspn(*p, " ");

    if (n == 0 || n >= outlen || (*p)[n] != ' ')
        return -1;
    memcpy(out, *p, n);
    out[n] = '\0';
    *p += n + 1;
    return 0;
}

/* One more zeroed element of `size` bytes at the end of *array (*n of
 * them, room for *cap), doubling it when full; NULL when out of memory. */
static void *push_zeroed(void **array, size_t *n, size_t *cap, size_t size, size_t first_cap)
{
    char *at;

    if (*n == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : first_cap;
        void *grown = realloc(*array, grown_cap * size);

        if (grown == NULL)
            return NULL;
        *array = grown;
        *cap = grown_cap;
    }
    at = (char *)*array + (*n)++ * size;
    memset(at, 0, size);
    return at;
}

static pg_trace_event_t *push_event(reader_t *r)
{
    return push_zeroed((void **)&r->t->events, &r->t->nevents, &r->cap, sizeof(pg_trace_event_t),
                       256);
}

static int parse_event(reader_t *r, char *line, size_t len)
{
    char *p = line, proto[8], dir[4];
    long long t, conn, rank;
    pg_trace_event_t *e;
    size_t mlen;

    if (num_field(&p, 0, INT64_MAX, &t) != 0)
        return rd_fail(r, "expected a time in ns first");
    if (num_field(&p, 0, 1 << 24, &conn) != 0)
        return rd_fail(r, "expected a connection id after the time");
    if (num_field(&p, -1, 1 << 20, &rank) != 0)
        return rd_fail(r, "expected a rank (or -1) after the connection id");
    if (word_field(&p, proto, sizeof(proto)) != 0)
        return rd_fail(r, "expected a protocol (pmi1, pmi2, pmix, -) after the rank");
    if (word_field(&p, dir, sizeof(dir)) != 0 || (strcmp(dir, "C") != 0 && strcmp(dir, "S") != 0))
        return rd_fail(r, "expected a direction (C or S) after the protocol");
    e = push_event(r);
    if (e == NULL)
        return rd_fail(r, "out of memory");
    if (proto_of_word(proto, &e->proto) != 0)
        return rd_fail(r, "unknown protocol '%s'", proto);
    if ((uint64_t)t < r->last_t)
        return rd_fail(r, "time goes backwards");
    r->last_t = e->t_ns = (uint64_t)t;
    e->conn = e->conn_id = (int)conn;
    e->rank = e->rank_as_recorded = (int)rank;
    e->dir = dir[0] == 'C' ? PG_TRACE_C2S : PG_TRACE_S2C;
    e->line = r->lineno;
    mlen = (size_t)(line + len - p);
    e->bytes = malloc(mlen + 1);
    if (e->bytes == NULL)
        return rd_fail(r, "out of memory");
    if (pg_unescape(p, mlen, e->bytes, &e->len) != 0)
        return rd_fail(r, "malformed escape in the message");
    if (e->len == 0)
        return rd_fail(r, "empty message");
    return 0;
}

static pg_trace_record_t *push_record(reader_t *r)
{
    return push_zeroed((void **)&r->t->records, &r->t->nrecords, &r->rec_cap,
                       sizeof(pg_trace_record_t), 16);
}

/* "key=<int>" at *p, then a space or the end; advances *p. */
static int int_field(char **p, const char *key, long long min, long long max, long long *out)
{
    size_t klen = strlen(key);
    char *end;

    if (strncmp(*p, key, klen) != 0 || (*p)[klen] != '=')
        return -1;
    errno = 0;
    *out = strtoll(*p + klen + 1, &end, 10);
    if (errno != 0 || end == *p + klen + 1 || (*end != ' ' && *end != '\0') || *out < min ||
        *out > max)
        return -1;
    *p = *end == ' ' ? end + 1 : end;
    return 0;
}

static int parse_exit(reader_t *r, char *p, pg_trace_record_t *rec)
{
    long long v;

    rec->kind = PG_TRACE_REC_EXIT;
    if (int_field(&p, "rank", 0, 1 << 20, &v) != 0)
        return rd_fail(r, "an exit record needs rank=");
    rec->rank = (int)v;
    if (int_field(&p, "code", 0, 255, &v) == 0)
        rec->code = (int)v;
    else if (int_field(&p, "signal", 1, 64, &v) == 0)
        rec->signal = (int)v;
    else
        return rd_fail(r, "an exit record needs code= or signal=");
    rec->teardown = strcmp(p, "teardown") == 0;
    return *p == '\0' || rec->teardown ? 0 : rd_fail(r, "an exit record ends in '%s'", p);
}

static int parse_xfence(reader_t *r, char *p, pg_trace_record_t *rec)
{
    long long v;
    size_t len;

    rec->kind = PG_TRACE_REC_XFENCE;
    if (int_field(&p, "fence", 1, UINT32_MAX, &v) != 0)
        return rd_fail(r, "an xfence record needs fence=");
    rec->fence = (unsigned)v;
    if (strcmp(p, "failed") == 0) {
        rec->node = -1;
        return 0;
    }
    if (int_field(&p, "node", 0, 1 << 20, &v) != 0)
        return rd_fail(r, "an xfence record needs node= or failed");
    rec->node = (int)v;
    len = strlen(p);
    if (len == 0)
        return 0;
    rec->blob = malloc(len);
    if (rec->blob == NULL)
        return rd_fail(r, "out of memory");
    if (pg_unescape(p, len, rec->blob, &rec->len) != 0)
        return rd_fail(r, "malformed escape in an xfence record");
    return 0;
}

/* "#! <ns> <kind> ...": a record.  Kinds this reader does not know are
 * skipped, as a comment. */
static int parse_record(reader_t *r, char *line)
{
    char *p = line + sizeof(record_mark) - 1, kind[16];
    long long t, v;
    pg_trace_record_t *rec;

    if (num_field(&p, 0, INT64_MAX, &t) != 0)
        return rd_fail(r, "a record needs a time in ns first");
    if (word_field(&p, kind, sizeof(kind)) != 0 ||
        (strcmp(kind, "exit") != 0 && strcmp(kind, "end") != 0 && strcmp(kind, "xfence") != 0))
        return 0;
    if ((uint64_t)t < r->last_t)
        return rd_fail(r, "time goes backwards");
    rec = push_record(r);
    if (rec == NULL)
        return rd_fail(r, "out of memory");
    r->last_t = rec->t_ns = (uint64_t)t;
    rec->before = r->t->nevents;
    rec->line = r->lineno;
    if (strcmp(kind, "exit") == 0)
        return parse_exit(r, p, rec);
    if (strcmp(kind, "xfence") == 0)
        return parse_xfence(r, p, rec);
    rec->kind = PG_TRACE_REC_END;
    if (int_field(&p, "status", 0, 255, &v) != 0)
        return rd_fail(r, "an end record needs status=");
    rec->status = (int)v;
    rec->stopped = strcmp(p, "stopped") == 0;
    return *p == '\0' || rec->stopped ? 0 : rd_fail(r, "an end record ends in '%s'", p);
}

/* A PMIx batch (replies written at once) on one line — how version 1
 * recorders wrote it — becomes one event per frame, as if recorded so. */
static int split_batch(reader_t *r)
{
    size_t last = r->t->nevents - 1;
    pg_trace_event_t *e = &r->t->events[last];
    size_t n;

    if (e->proto != PG_PROTO_PMIX && !pg_pmix_is_start(e->bytes, e->len))
        return 0;
    while ((n = pg_trace_first_message(PG_PROTO_PMIX, e->bytes, e->len)) < e->len) {
        pg_trace_event_t head = *e, *tail;

        tail = push_event(r);
        if (tail == NULL)
            return rd_fail(r, "out of memory");
        e = &r->t->events[last]; /* push_event may have moved the array */
        *tail = head;
        tail->len = head.len - n;
        tail->bytes = malloc(tail->len);
        if (tail->bytes == NULL)
            return rd_fail(r, "out of memory");
        memcpy(tail->bytes, head.bytes + n, tail->len);
        e->len = n;
        e = tail;
        last = r->t->nevents - 1;
    }
    return 0;
}

static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

/* The recorded connection ids, sorted and without repeats, in ids[]
 * (caller frees); their count in *n. */
static int *distinct_conn_ids(const pg_trace_t *t, int *n)
{
    int *ids = malloc((t->nevents + 1) * sizeof(*ids));
    int k = 0;

    if (ids == NULL)
        return NULL;
    for (size_t i = 0; i < t->nevents; i++)
        ids[i] = t->events[i].conn;
    qsort(ids, t->nevents, sizeof(*ids), compare_ints);
    for (size_t i = 0; i < t->nevents; i++)
        if (k == 0 || ids[k - 1] != ids[i])
            ids[k++] = ids[i];
    *n = k;
    return ids;
}

/* Builds the connection table and gives every event its connection's rank.
 * Connections are numbered densely in the order of their recorded ids
 * (e->conn becomes that index, e->conn_id keeps the id): the tables of the
 * viewers and of replay are sized by the connections a trace has, not by
 * the largest id it names (a one-line trace naming connection 16777216
 * would otherwise cost gigabytes). */
static int index_conns(pg_trace_t *t)
{
    int n = 0;
    int *ids = distinct_conn_ids(t, &n);

    if (ids == NULL)
        return -1;
    t->nconns = n;
    t->conns = calloc((size_t)n + 1, sizeof(*t->conns));
    if (t->conns == NULL) {
        free(ids);
        return -1;
    }
    for (int c = 0; c < n; c++)
        t->conns[c] = (pg_trace_conn_t){ .id = ids[c], .rank = -1, .via_port = -1 };
    for (size_t i = 0; i < t->nevents; i++) {
        pg_trace_event_t *e = &t->events[i];
        int *slot = bsearch(&e->conn_id, ids, (size_t)n, sizeof(*ids), compare_ints);
        pg_trace_conn_t *c;

        e->conn = (int)(slot - ids);
        c = &t->conns[e->conn];
        if (c->via_port < 0)
            c->via_port = e->rank_as_recorded < 0;
        if (c->rank < 0 && e->rank >= 0)
            c->rank = e->rank;
        if (c->proto == PG_PROTO_NONE)
            c->proto = e->proto;
        c->nevents++;
    }
    for (size_t i = 0; i < t->nevents; i++)
        t->events[i].rank = t->conns[t->events[i].conn].rank;
    free(ids);
    return 0;
}

pg_trace_t *pg_trace_load_stream(FILE *f, char *err, size_t errlen)
{
    reader_t r = { .f = f, .err = err, .errlen = errlen };
    pg_trace_parsed_t parsed = { 0 };
    ssize_t n;

    r.t = calloc(1, sizeof(*r.t));
    if (r.t == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    n = rd_line(&r);
    if (n < 0) {
        rd_fail(&r, "empty file: not a pmigate trace");
        goto fail;
    }
    if (!r.whole && strncmp(r.line, header_magic, sizeof(header_magic) - 1) == 0) {
        rd_fail(&r, "the file is cut inside its header");
        goto fail;
    }
    if (parse_header(&r, r.line, (size_t)n) != 0)
        goto fail;
    while ((n = rd_line(&r)) >= 0) {
        size_t first = r.t->nevents;

        if (!r.whole) { /* cut here: what came before is the trace */
            r.t->cut_line = r.lineno;
            break;
        }
        if (strncmp(r.line, record_mark, sizeof(record_mark) - 1) == 0) {
            if (parse_record(&r, r.line) != 0)
                goto fail;
            continue;
        }
        if (n == 0 || r.line[0] == '#')
            continue; /* comments and blank lines are for people */
        if (parse_event(&r, r.line, (size_t)n) != 0 || split_batch(&r) != 0)
            goto fail;
        for (size_t i = first; i < r.t->nevents; i++)
            decode_event(&r.t->events[i], &parsed);
    }
    if (ferror(f)) {
        rd_fail(&r, "read error: %s", strerror(errno));
        goto fail;
    }
    if (index_conns(r.t) != 0) {
        rd_fail(&r, "out of memory");
        goto fail;
    }
    free(r.line);
    pg_trace_parsed_release(&parsed);
    return r.t;
fail:
    free(r.line);
    pg_trace_parsed_release(&parsed);
    pg_trace_free(r.t);
    return NULL;
}

pg_trace_t *pg_trace_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    pg_trace_t *t;

    if (f == NULL) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return NULL;
    }
    t = pg_trace_load_stream(f, err, errlen);
    fclose(f);
    return t;
}

void pg_trace_say_cut(const pg_trace_t *t, const char *who, const char *path)
{
    if (t->cut_line > 0)
        fprintf(stderr,
                "%s: %s is cut short: its line %u is incomplete; read the %u whole lines "
                "before it\n",
                who, path, t->cut_line, t->cut_line - 1);
}

void pg_trace_free(pg_trace_t *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->nevents; i++)
        free(t->events[i].bytes);
    for (size_t i = 0; i < t->nrecords; i++)
        free(t->records[i].blob);
    free(t->records);
    free(t->events);
    free(t->conns);
    free(t->header.cmdline);
    free(t);
}
