/*
 * pg_trace: the trace file format (docs/trace-format.md) — writing one line
 * per message, reading a whole file back, and decoding a traced message with
 * the wire codec.  The recorder (pg_trace_rec.h), the viewers
 * (pg_trace_stats.h, pg_trace_svg.h) and the replayer (pg_replay.h) all go
 * through this one file, so the format has exactly one definition.
 *
 * A trace is text so people can grep it: a header line, then one line per
 * message
 *     <ns> <conn> <rank> <proto> <dir> <message, escaped>
 * where the message is the exact bytes that crossed the socket (PMI-2 length
 * field and PMI-1 '\n' included; a PMIx preamble, or one PMIx frame with its
 * length), escaped so every byte round-trips.  PMIx messages are decoded
 * with pg_trace_pmix.h.
 *
 * Ownership: a pg_trace_t owns its events and their bytes; pg_trace_free()
 * releases everything.  Functions return 0 / -1 (or NULL) and never abort.
 */
#ifndef PG_TRACE_H
#define PG_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/pg_trace_pmix.h"
#include "wire/pg_escape.h"
#include "wire/pg_wire.h"

/* The version this pmigate writes and the newest it reads. */
enum { PG_TRACE_VERSION = 1 };
enum { PG_TRACE_KVSNAME_MAX = 255, PG_TRACE_APPS_MAX = 256, PG_TRACE_HOST_MAX = 255 };

/* Which way a message went. */
typedef enum pg_trace_dir {
    PG_TRACE_C2S = 0, /* "C": client -> gateway (a request) */
    PG_TRACE_S2C = 1, /* "S": gateway -> client (a reply) */
} pg_trace_dir_t;

typedef struct pg_trace_header {
    int version;
    char kvsname[PG_TRACE_KVSNAME_MAX + 1];
    int size;            /* ranks in the job */
    char start[64];      /* wall clock at the start, ISO 8601 UTC */
    char apps[PG_TRACE_APPS_MAX]; /* ranks per MPMD application ("2,2,2"); ""
                                   * when one application or not recorded */
    int node, nnodes;    /* recorded by `pmigate proxy`: this node's index and the
                          * number of nodes (nnodes 0: a single-node job); the
                          * ranks are the job's global ranks either way */
    char host[PG_TRACE_HOST_MAX + 1]; /* the node's name ("" when not recorded) */
    char *cmdline;       /* owned (by the pg_trace_t when loaded); may be NULL */
} pg_trace_header_t;

/* One traced message, decoded once at load time. */
typedef struct pg_trace_event {
    uint64_t t_ns;       /* monotonic ns since the trace started */
    int conn;            /* the connection's index in pg_trace_t.conns (dense, 0..) */
    int conn_id;         /* the connection id as recorded (0.. in order of creation) */
    int rank;            /* -1 while unknown (a PMI_PORT connection's first message);
                          * pg_trace_load fills it in from the connection's later events */
    int rank_as_recorded;
    pg_proto_t proto;
    pg_trace_dir_t dir;
    char *bytes;         /* the raw message, owned by the trace */
    size_t len;
    unsigned line;       /* line number in the file, for messages */
    pg_cmd_t cmd;        /* from the codec; PG_CMD_UNKNOWN when not parseable */
    char name[32];       /* the command name as sent; for PMIx the transport's
                          * command name or "preamble" ("" when unparseable) */
    pg_trace_pmix_head_t pmix; /* PMIx: kind, command, request id, reply status
                                * (kind PG_TRACE_PMIX_BAD for PMI messages) */
} pg_trace_event_t;

/* What the file says about one connection. */
typedef struct pg_trace_conn {
    int id;              /* as recorded */
    int rank;            /* -1 if it never said */
    int via_port;        /* 1: the first message came before the rank was known
                          * (a PMI_PORT connection); 0: a PMI_FD connection */
    pg_proto_t proto;
    size_t nevents;
} pg_trace_conn_t;

/* What happened to the job besides messages ("#!" lines, which readers
 * older than them skip as comments): a rank's exit, the job's end, and
 * under `pmigate proxy` what the other nodes contributed to each
 * cross-node fence. */
typedef enum pg_trace_record_kind {
    PG_TRACE_REC_EXIT = 1,   /* rank, code or signal, teardown */
    PG_TRACE_REC_END,        /* status: pmigate's exit status */
    PG_TRACE_REC_XFENCE,     /* fence, node, blob (or failed) */
} pg_trace_record_kind_t;

typedef struct pg_trace_record {
    pg_trace_record_kind_t kind;
    uint64_t t_ns;
    size_t before;       /* the number of events recorded before it */
    unsigned line;
    int rank;            /* EXIT: the rank (spawned jobs' after the root's) */
    int code, signal;    /* EXIT: its exit code, or the signal that killed it (0: none) */
    int teardown;        /* EXIT: pmigate was already tearing the job down */
    int status;          /* END */
    int stopped;         /* END: the job was ended from outside (--timeout, a signal to
                          * pmigate) or could not start: a replay cannot repeat that */
    unsigned fence;      /* XFENCE: the node's cross-node fence, 1, 2, ... */
    int node;            /* XFENCE: the node whose contribution this is; -1: failed */
    char *blob;          /* XFENCE: its bytes, owned (NULL when empty) */
    size_t len;
} pg_trace_record_t;

typedef struct pg_trace {
    pg_trace_header_t header;
    pg_trace_event_t *events; /* in file order (= time order) */
    size_t nevents;
    pg_trace_conn_t *conns;   /* indexed by pg_trace_event_t.conn, in recorded-id order */
    int nconns;
    pg_trace_record_t *records; /* in file order */
    size_t nrecords;
    unsigned cut_line;        /* the file ends inside this line (a cut trace: the line
                               * and anything after it are not read); 0: ends whole */
} pg_trace_t;

/* Messages are escaped with wire/pg_escape.h (pg_escape, pg_unescape). */

/* ---- writing ---- */

const char *pg_trace_proto_word(pg_proto_t proto); /* "pmi1", "pmi2", "pmix", "-" */
int pg_trace_write_header(FILE *f, const pg_trace_header_t *h);
/* One message line.  scratch/scratch_cap: a reusable escape buffer the
 * caller owns (grown with realloc as needed; may start NULL/0). */
int pg_trace_write_event(FILE *f, uint64_t t_ns, int conn, int rank, pg_proto_t proto,
                         pg_trace_dir_t dir, const char *bytes, size_t len, char **scratch,
                         size_t *scratch_cap);
/* Records: a rank's exit (wstatus as waitpid gave it; teardown: pmigate
 * was ending the job already), the job's end (stopped: see
 * pg_trace_record_t), a node's contribution to cross-node fence `fence`
 * (node -1: the fence failed). */
int pg_trace_write_exit(FILE *f, uint64_t t_ns, int rank, int wstatus, int teardown);
int pg_trace_write_end(FILE *f, uint64_t t_ns, int status, int stopped);
int pg_trace_write_xfence(FILE *f, uint64_t t_ns, unsigned fence, int node, const void *blob,
                          size_t len, char **scratch, size_t *scratch_cap);

/* ---- reading ---- */

/* Loads a whole trace.  On error returns NULL and writes a one-line message
 * naming the line into err.  A file cut short (its last line has no
 * newline: the job or the machine died while writing) loads as far as its
 * last whole line, with cut_line set. */
pg_trace_t *pg_trace_load(const char *path, char *err, size_t errlen);
pg_trace_t *pg_trace_load_stream(FILE *f, char *err, size_t errlen);
void pg_trace_free(pg_trace_t *t);

/* Tells `who` (a tool's name) where a cut trace was cut, on stderr; nothing
 * for a whole one. */
void pg_trace_say_cut(const pg_trace_t *t, const char *who, const char *path);

/* ---- decoding ---- */

/* A parsed copy of one event's message (the codec parses in place, so the
 * event's bytes are copied first).  Init with {0}; free with
 * pg_trace_parsed_release(). */
typedef struct pg_trace_parsed {
    char *buf;
    size_t cap;
    pg_msg_t msg;
    int msg_ready;
} pg_trace_parsed_t;

/* Frames and parses bytes[0..len) as one message.  Returns the codec's
 * result (0, a message error with tokens still valid, or a framing error);
 * the tokens stay valid until the next call or the release. */
int pg_trace_parse(pg_trace_parsed_t *p, const char *bytes, size_t len);
void pg_trace_parsed_release(pg_trace_parsed_t *p);

/* The command name of an event for people: the codec's name, the name as
 * sent, or "pmix" / "?". */
const char *pg_trace_event_name(const pg_trace_event_t *e);

/* Splits a batch of bytes into whole messages of `proto`: returns the
 * length of the first message in bytes[0..len) (a PMI message, a PMIx
 * preamble or frame), or len when it cannot be framed (a partial message). */
size_t pg_trace_first_message(pg_proto_t proto, const char *bytes, size_t len);

#endif
