/*
 * pg_clock: the one clock of the gateway, its protocol handlers and the
 * trace tools — monotonic nanoseconds, the unit the engine's deadlines and
 * the trace's timestamps are in.  It sits in wire/ (the lowest room every
 * user already links) so a handler or `pmigate replay` can tell the time
 * without including the launcher.
 *
 * Out of line on purpose: a test that must choose the time (the PMIx
 * handler's regression tests and fuzzer advance a fake clock per frame)
 * defines its own pg_clock_now(), which the linker then takes instead of
 * the library's.
 */
#ifndef PG_CLOCK_H
#define PG_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t pg_clock_now(void);

#endif
