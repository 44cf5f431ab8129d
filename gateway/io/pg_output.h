/*
 * pg_output: forwards the ranks' stdout and stderr pipes to pmigate's own
 * without ever blocking the event loop, a whole line at a time, so lines of
 * different ranks never mix, optionally tagged "[rank] ".
 *
 * Two objects:
 *  - a sink is one of pmigate's own outputs (fd 1 or fd 2).  It queues whole
 *    lines in arrival order and writes them when the reader takes them;
 *    a line once started is finished before any other, so a short write
 *    never lets another rank's bytes in.  Writes never wait (see
 *    pg_output.c for how, without changing the description pmigate's stdout
 *    shares with its parent shell).
 *  - a forwarder (pg_output_t) reads one rank's pipe, cuts it into lines and
 *    queues them on a sink.  Back-pressure: it stops reading its pipe while
 *    PG_OUTPUT_RANK_QUEUE of its lines wait in the sink, or while the sink
 *    holds PG_OUTPUT_SINK_QUEUE in all; the rank's own writes then block, as
 *    they would on a slow terminal, and PMI service, timers and signals go on.
 *
 * Lines: a line is forwarded once its '\n' arrives.  A line longer than
 * PG_OUTPUT_LINE_MAX is cut there (never inside a UTF-8 character) and each
 * piece ends with an added '\n'; with tags the pieces after the first are
 * tagged "[rank+] ", so "[3] a" then "[3+] b" is the one line "ab".  A last
 * line without '\n' is forwarded with a '\n' added when the rank's pipe
 * ends, so it is never glued to another rank's next line.
 *
 * Ownership: a sink is reference-counted (pg_sink_share); pg_output_t owns
 * src_fd (closed by pg_output_free) and its read event, and borrows its sink,
 * which must outlive it.
 */
#ifndef PG_OUTPUT_H
#define PG_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

enum {
    PG_OUTPUT_LINE_MAX = 64 * 1024,          /* longest line kept whole */
    PG_OUTPUT_RANK_QUEUE = 64 * 1024,        /* one stream's queued bytes that pause its pipe */
    PG_OUTPUT_SINK_QUEUE = 8 * 1024 * 1024,  /* a sink's queued bytes that pause every pipe */
};

struct event_base;
typedef struct pg_sink pg_sink_t;
typedef struct pg_output pg_output_t;

/* A sink for pmigate's fd (1 or 2).  Returns NULL when out of memory. */
pg_sink_t *pg_sink_new(struct event_base *base, int fd);
/* sink again (one more reference) when fd is the same file as sink's, so
 * that `2>&1` keeps one queue and lines of stdout and stderr do not mix;
 * NULL when fd goes elsewhere. */
pg_sink_t *pg_sink_share(pg_sink_t *sink, int fd);
/* Drops a reference; the last one tries a last write without waiting and
 * frees what is still queued. */
void pg_sink_free(pg_sink_t *sink);

/* Queues "pmigate: " + line + "\n" after the output already queued, with
 * the line passed through pg_output_sanitize (so text a rank sent can never
 * start a line of its own), whatever its length.  sink NULL: written
 * straight to fd 2. */
void pg_sink_log(pg_sink_t *sink, const char *line);

/* A transient status line (pmigate run's wire-up progress) when the sink
 * is a terminal, else nothing: written as "\r" + text + erase-to-end-of-
 * line, without a newline, and erased before the next line the sink
 * writes, when text is NULL or "", and when the sink is freed.  An update
 * is skipped while other output waits in the queue: the line never holds
 * anything up. */
void pg_sink_status(pg_sink_t *sink, const char *text);

/* Bytes queued and not yet written. */
size_t pg_sink_queued(const pg_sink_t *sink);
/* How long (ns, by the monotonic `now`) the sink has been unable to write
 * anything while holding output; 0 when it is keeping up. */
uint64_t pg_sink_stalled_ns(const pg_sink_t *sink, uint64_t now);
/* Gives up the queued output (a line already half written is kept, so the
 * next one does not glue to it); returns the bytes dropped. */
size_t pg_sink_discard(pg_sink_t *sink);

/* Copies in to out (cap bytes, NUL included, cut before an escape that
 * would not fit) with control characters made visible: \n \r \t as those
 * two characters, other C0 bytes, DEL, C1 controls and bytes that are not
 * UTF-8 as \xHH.  Returns strlen(out). */
size_t pg_output_sanitize(const char *in, char *out, size_t cap);
/* The same, whole, in a malloc'd string (NULL when out of memory). */
char *pg_output_sanitize_dup(const char *in);

/* Forwards src_fd (made non-blocking) to sink, tagging lines "[rank] " when
 * rank >= 0.  Returns NULL when out of memory (src_fd is then not closed). */
pg_output_t *pg_output_new(struct event_base *base, int src_fd, pg_sink_t *sink, int rank);
void pg_output_free(pg_output_t *out);
/* Tags lines "[label] " instead (a spawned job's rank: "[1.0] "), before
 * the first line is read.  NULL out is ignored. */
void pg_output_set_label(pg_output_t *out, const char *label);
/* fn(arg) runs whenever bytes come from the rank (a sign of life, for
 * --heartbeat), before they are forwarded.  NULL out is ignored. */
void pg_output_set_activity(pg_output_t *out, void (*fn)(void *arg), void *arg);

/* Reads what the pipe holds now, as far as back-pressure allows, without
 * waiting: a reaped rank's last words go before pmigate's verdict on it. */
void pg_output_drain(pg_output_t *out);
/* The job is over: forward what the pipe holds now (a descendant that keeps
 * it open and writing does not keep pmigate alive), then the unfinished line
 * with its '\n', then stop.  Reading goes on from the loop as the sink
 * drains. */
void pg_output_finish(pg_output_t *out);
/* 1 once the forwarder has stopped (pipe ended or finish done). */
int pg_output_finished(const pg_output_t *out);
/* Bytes read from the rank or still to read under pg_output_finish that
 * have not been written yet. */
size_t pg_output_undelivered(const pg_output_t *out);

#endif
