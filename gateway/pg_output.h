/*
 * pg_output: forwards one rank's stdout or stderr pipe to pmigate's own,
 * a whole line at a time, so lines of different ranks never interleave in
 * the middle, optionally tagged "[rank] ".  A partial last line is written
 * when the pipe reaches EOF; a line longer than the buffer is written in
 * pieces (tagged once), so memory stays bounded.
 *
 * Ownership: pg_output_t owns src_fd (closed by pg_output_free) and its read
 * event; dst_fd is borrowed.
 */
#ifndef PG_OUTPUT_H
#define PG_OUTPUT_H

#include <stddef.h>

struct event_base;
typedef struct pg_output pg_output_t;

/* tag: text written before every line ("[3] "), copied; NULL for none.
 * src_fd is made non-blocking.  Returns NULL when out of memory. */
pg_output_t *pg_output_new(struct event_base *base, int src_fd, int dst_fd, const char *tag);
void pg_output_free(pg_output_t *out);

/* Reads and forwards whatever the pipe holds now, without waiting; used when
 * the rank has been reaped so its last words are printed before pmigate
 * exits.  Returns 1 once EOF was reached (a read error counts as EOF); the
 * forwarder has then flushed everything and stopped reading. */
int pg_output_drain(pg_output_t *out);

#endif
