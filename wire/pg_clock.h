/*
 * pg_clock: the one clock of the gateway, its protocol handlers and the
 * trace tools — monotonic nanoseconds, the unit the engine's deadlines and
 * the trace's timestamps are in.  It sits in wire/ (the lowest room every
 * user already links) so a handler or `pmigate replay` can tell the time
 * without including the launcher.
 *
 * The protocol handlers do not read it themselves: they ask their host
 * (server/pg_handler.h, clock_now), so a test host can choose the time (the
 * PMIx handler's fuzzer advances a fake clock per frame); the gateway's
 * connection layer answers with this clock.
 */
#ifndef PG_CLOCK_H
#define PG_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t pg_clock_now(void);

/* The calling thread's CPU time in nanoseconds: what a phase costs the
 * gateway itself, apart from waiting for a CPU (the proxy's timing line,
 * on a machine whose cores the ranks share). */
uint64_t pg_clock_thread_cpu(void);

#endif
