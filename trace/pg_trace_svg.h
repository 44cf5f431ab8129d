/*
 * pg_trace_svg: `pmigate trace timeline` — one row per rank, a bar per
 * request from the moment the gateway read it to the moment it answered,
 * coloured by phase (init, put, fence/barrier wait, get, finalize), so the
 * rank that held a fence is the one whose fence bar is short while every
 * other rank's is long; it is also marked.  A time axis with labels and a
 * legend make the picture readable on its own.
 *
 * The SVG is self-contained: no scripts, fonts or external references;
 * tooltips (<title>) give each bar's command and duration.
 */
#ifndef PG_TRACE_SVG_H
#define PG_TRACE_SVG_H

#include <stdio.h>

#include "trace/pg_trace_analyze.h"

enum { PG_TRACE_SVG_WIDTH = 1280 };

/* Writes the picture; returns 0, or -1 on a write error. */
int pg_trace_svg_write(const pg_trace_analysis_t *a, FILE *out);

#endif
