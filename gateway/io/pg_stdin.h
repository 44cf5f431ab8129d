/*
 * pg_stdin: gives pmigate's stdin to rank 0, as mpiexec does (the other
 * ranks read /dev/null).  A regular file or /dev/null is simply inherited;
 * a pipe, socket or terminal is forwarded through the event loop, because
 * the ranks run in their own process group and a background group reading
 * the terminal would be stopped by SIGTTIN.  Forwarding is bounded: reading
 * pauses while rank 0 has not consumed what is queued.
 *
 * Ownership: pg_stdin_t owns its pipe ends, events and buffer; fd 0 stays
 * pmigate's (never made non-blocking: the file description is shared with
 * the shell).
 */
#ifndef PG_STDIN_H
#define PG_STDIN_H

struct event_base;
typedef struct pg_stdin pg_stdin_t;

/* Decides how rank 0 gets its stdin.  Returns NULL when out of memory. */
pg_stdin_t *pg_stdin_new(struct event_base *base);
void pg_stdin_free(pg_stdin_t *in);

/* The fd rank 0 should dup2() onto 0 in the child (-1: open /dev/null). */
int pg_stdin_child_fd(const pg_stdin_t *in);
/* Called after rank 0 was forked: closes the parent's copy of the child's
 * end and starts forwarding. */
int pg_stdin_start(pg_stdin_t *in);
/* Stops forwarding (rank 0 exited, or the job is torn down). */
void pg_stdin_stop(pg_stdin_t *in);

#endif
