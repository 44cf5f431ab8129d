/*
 * pg_mpir: the starter's side of the MPIR Process Acquisition Interface,
 * the way a parallel debugger (TotalView, DDT, STAT, gdb scripts) finds
 * the ranks of a job that `pmigate run` starts (docs/user-guide.md,
 * "Debuggers and tools").
 *
 * The interface is a set of global symbols whose names it fixes (MPIR_*,
 * not pg_*: the debugger looks them up by name in pmigate's symbol table):
 * the debugger sets MPIR_being_debugged before pmigate starts, and stops
 * in MPIR_Breakpoint() to read MPIR_proctable once pmigate has filled it.
 * These functions are the run's way to fill it; without MPIR_being_debugged
 * they are never called (pg_mpir_debugged() is the run's only cost).
 *
 * One table per process, as the interface has it: the run's loop thread
 * is its only writer.
 */
#ifndef PG_MPIR_H
#define PG_MPIR_H

#include <sys/types.h>

/* The interface's process descriptor (its layout is the ABI debuggers read). */
typedef struct {
    char *host_name;       /* where the process runs */
    char *executable_name; /* the program's path */
    int pid;
} MPIR_PROCDESC;

/* MPIR_debug_state's values. */
enum {
    MPIR_NULL = 0,
    MPIR_DEBUG_SPAWNED = 1,  /* the table lists every process started so far */
    MPIR_DEBUG_ABORTING = 2, /* the job is aborting: MPIR_debug_abort_string says why */
};

extern volatile int MPIR_being_debugged;
extern MPIR_PROCDESC *MPIR_proctable;
extern int MPIR_proctable_size;
extern volatile int MPIR_debug_state;
extern char *MPIR_debug_abort_string;
extern int MPIR_i_am_starter;
extern int MPIR_partial_attach_ok;

/* Where the debugger stops: called each time the table or the state
 * changed.  Does nothing itself. */
void MPIR_Breakpoint(void);

/* Did a debugger set MPIR_being_debugged (read when a launch ends)? */
int pg_mpir_debugged(void);

/* Appends process `pid` running `exe` on `host` to the table (the strings
 * are copied).  The debugger sees it at the next pg_mpir_spawned().  0, or
 * -1 out of memory (the table is left as it was). */
int pg_mpir_append(const char *host, const char *exe, pid_t pid);

/* The table lists every process started so far: MPIR_DEBUG_SPAWNED, and
 * the debugger's breakpoint. */
void pg_mpir_spawned(void);

/* The job is aborting because of `why` (copied): MPIR_DEBUG_ABORTING, the
 * string, and the breakpoint.  Once per process; later calls do nothing. */
void pg_mpir_aborting(const char *why);

/* Empties the table and forgets the abort string (the end of a run). */
void pg_mpir_clear(void);

#endif
