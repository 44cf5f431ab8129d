/*
 * pg_mpir: the MPIR Process Acquisition Interface's symbols and the table
 * behind them (pg_mpir.h).  What pmigate offers a debugger, and what it
 * does not, is docs/user-guide.md, "Debuggers and tools".
 */
#include "gateway/run/pg_mpir.h"

#include <stdlib.h>
#include <string.h>

/* `used`: a debugger reads and writes them by name; nothing in pmigate
 * may drop them for want of a reader. */
__attribute__((used)) volatile int MPIR_being_debugged = 0;
__attribute__((used)) MPIR_PROCDESC *MPIR_proctable = NULL;
__attribute__((used)) int MPIR_proctable_size = 0;
__attribute__((used)) volatile int MPIR_debug_state = MPIR_NULL;
__attribute__((used)) char *MPIR_debug_abort_string = NULL;
/* Their presence is what they say: pmigate is not one of the job's
 * processes, and a debugger may attach to some ranks only (the others go
 * on once pmigate leaves MPIR_Breakpoint: docs/user-guide.md, "Debuggers
 * and tools"). */
__attribute__((used)) int MPIR_i_am_starter = 1;
__attribute__((used)) int MPIR_partial_attach_ok = 1;

static int table_cap;

/* noinline and the barrier: the call must stay, with every store to the
 * table before it, for the debugger's breakpoint to stop there and read a
 * whole table.  noclone is gcc's (a specialised copy would carry another
 * name); clang makes no such copies and does not know the attribute. */
#if defined(__clang__)
#define PG_MPIR_NOCLONE
#else
#define PG_MPIR_NOCLONE __attribute__((noclone))
#endif
__attribute__((used, noinline)) PG_MPIR_NOCLONE void MPIR_Breakpoint(void)
{
    __asm__ volatile("" ::: "memory");
}

int pg_mpir_debugged(void)
{
    return MPIR_being_debugged != 0;
}

/* Room for one more entry: 0, or -1 out of memory. */
static int table_reserve(void)
{
    int cap = table_cap > 0 ? 2 * table_cap : 16;
    MPIR_PROCDESC *grown;

    if (MPIR_proctable_size < table_cap)
        return 0;
    grown = realloc(MPIR_proctable, (size_t)cap * sizeof(*grown));
    if (grown == NULL)
        return -1;
    MPIR_proctable = grown;
    table_cap = cap;
    return 0;
}

int pg_mpir_append(const char *host, const char *exe, pid_t pid)
{
    char *h = NULL, *e = NULL;
    int rc = -1;

    if (table_reserve() != 0)
        goto out;
    h = strdup(host);
    e = strdup(exe);
    if (h == NULL || e == NULL)
        goto out;
    MPIR_proctable[MPIR_proctable_size] =
        (MPIR_PROCDESC){ .host_name = h, .executable_name = e, .pid = (int)pid };
    MPIR_proctable_size++;
    h = e = NULL;
    rc = 0;
out:
    free(h);
    free(e);
    return rc;
}

void pg_mpir_spawned(void)
{
    MPIR_debug_state = MPIR_DEBUG_SPAWNED;
    MPIR_Breakpoint();
}

void pg_mpir_aborting(const char *why)
{
    if (MPIR_debug_state == MPIR_DEBUG_ABORTING)
        return;
    MPIR_debug_abort_string = strdup(why); /* NULL out of memory: the state still says it */
    MPIR_debug_state = MPIR_DEBUG_ABORTING;
    MPIR_Breakpoint();
}

void pg_mpir_clear(void)
{
    for (int i = 0; i < MPIR_proctable_size; i++) {
        free(MPIR_proctable[i].host_name);
        free(MPIR_proctable[i].executable_name);
    }
    free(MPIR_proctable);
    MPIR_proctable = NULL;
    MPIR_proctable_size = 0;
    table_cap = 0;
    free(MPIR_debug_abort_string);
    MPIR_debug_abort_string = NULL;
    MPIR_debug_state = MPIR_NULL;
}
