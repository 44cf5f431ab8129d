/*
 * pg_trace_view: the text views of a trace — `pmigate trace show` (one line
 * per message, filtered by rank and command) and `pmigate trace stats`
 * (requests per command with their waits, every fence and barrier with its
 * duration and the ranks that entered it last).
 *
 * Output goes to a caller's FILE so the tests can read it back.
 */
#ifndef PG_TRACE_VIEW_H
#define PG_TRACE_VIEW_H

#include <stdio.h>

#include "trace/pg_trace_analyze.h"

typedef struct pg_trace_show_opts {
    int rank;          /* only this rank, or -1 for all */
    const char *cmd;   /* only this command (a request and its reply), or NULL */
    int full;          /* print whole messages, not the first PG_TRACE_SHOW_WIDTH bytes */
} pg_trace_show_opts_t;

enum { PG_TRACE_SHOW_WIDTH = 160, PG_TRACE_SLOWEST_SHOWN = 3 };

/* Prints the listing; returns the number of messages shown. */
size_t pg_trace_show(const pg_trace_analysis_t *a, const pg_trace_show_opts_t *o, FILE *out);

void pg_trace_print_stats(const pg_trace_analysis_t *a, FILE *out);

/* "812 ns", "12.3 us", "4.56 ms", "1.23 s" into buf. */
const char *pg_trace_fmt_duration(uint64_t ns, char *buf, size_t len);

/* 1 if event `ev` is command `name` or answers a request named `name`
 * (compared with the wire name, case-insensitively). */
int pg_trace_event_matches_cmd(const pg_trace_analysis_t *a, size_t ev, const char *name);

#endif
