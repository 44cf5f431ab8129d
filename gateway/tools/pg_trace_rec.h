/*
 * pg_trace_rec: `pmigate run --trace FILE` — records every message of every
 * connection of a job into a trace file (format: pg_trace.h,
 * docs/trace-format.md) through the connection layer's trace hook.
 *
 * Cheap on purpose: one stdio stream with a 1 MiB buffer, no fsync, and a
 * libevent timer that flushes a quarter second after the last write, so a
 * hanging job's trace can be read (tail -f) while it hangs.  Without
 * --trace nothing is attached and the connection layer pays one NULL test.
 *
 * Ownership: the recorder owns the file and one small context per attached
 * connection (freed by pg_trace_recorder_close, so a connection may be freed
 * before the recorder but must not outlive it with the hook still set).
 */
#ifndef PG_TRACE_REC_H
#define PG_TRACE_REC_H

#include "gateway/util/pg_cli.h"
#include "gateway/io/pg_conn.h"

struct event_base;
typedef struct pg_trace_recorder pg_trace_recorder_t;

/* Creates (truncates) opts->trace_path and writes the header: format
 * version, kvsname, size, wall-clock start, the ranks of each MPMD
 * application (so a replay starts the same layout) and this process's
 * command line.  base may be NULL (no idle flush).  Returns NULL with *err
 * set to an errno value. */
pg_trace_recorder_t *pg_trace_recorder_open(struct event_base *base, const pg_run_opts_t *opts,
                                            const char *kvsname, int *err);

/* Records conn from now on (the connection gets the next connection id).
 * `also` (may be NULL) is another trace function called first with also_arg
 * for every message, so --verbose and --trace work together.  Returns 0, or
 * -1 when out of memory (the connection is then not traced). */
int pg_trace_recorder_attach(pg_trace_recorder_t *rec, pg_conn_t *conn, pg_conn_trace_fn also,
                             void *also_arg);

/* The same for a connection of a spawned job: its ranks are recorded as
 * rank_offset + rank, so each spawned job gets rows of its own after the
 * root job's (docs/trace-format.md). */
int pg_trace_recorder_attach_as(pg_trace_recorder_t *rec, pg_conn_t *conn, int rank_offset,
                                pg_conn_trace_fn also, void *also_arg);

/* Records (docs/trace-format.md, "Records"), each a no-op with a NULL
 * recorder.  A rank's process was reaped with `wstatus` (row: its row in
 * the trace, as for attach_as; teardown: pmigate was already ending the
 * job, so a replay leaves it to the replay gateway). */
void pg_trace_recorder_exit(pg_trace_recorder_t *rec, int row, int wstatus, int teardown);
/* The job ends and pmigate exits with `status`; stopped: it was ended from
 * outside (--timeout, a signal to pmigate) or could not start. */
void pg_trace_recorder_end(pg_trace_recorder_t *rec, int status, int stopped);
/* `pmigate proxy`: cross-node fence number `fence` (1, 2, ...) ended with
 * `status` (0: blobs[n] is node n's contribution, this node's own is not
 * recorded; else it failed), so that a replay of this node can stand in
 * for the other nodes. */
void pg_trace_recorder_xfence(pg_trace_recorder_t *rec, unsigned fence, int status, int nnodes,
                              int self, void *const *blobs, const size_t *lens);

/* The path given to open (borrowed from the recorder). */
const char *pg_trace_recorder_path(const pg_trace_recorder_t *rec);

/* Flushes and closes the file, frees everything.  Returns 0, or -1 when a
 * write failed at any point (the trace is incomplete). NULL is a no-op. */
int pg_trace_recorder_close(pg_trace_recorder_t *rec);

#endif
