/*
 * pg_run_mpir: a run's jobs in the MPIR process table.  See pg_run_mpir.h.
 */
#include "gateway/run/pg_run_mpir.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "gateway/run/pg_mpir.h"

/* Rank `rank` of `job` in the table, with the program's path as the
 * kernel has it (what a debugger opens to read its symbols; a name found
 * in PATH would not do), else as the command line named it. */
static int append_rank(const pg_job_t *job, int rank, const char *host)
{
    pid_t pid = pg_job_pids(job)[rank];
    char link[64], exe[PATH_MAX];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
    n = readlink(link, exe, sizeof(exe) - 1);
    if (n <= 0)
        return pg_mpir_append(host, pg_job_rank_program(job, rank), pid);
    exe[n] = '\0';
    return pg_mpir_append(host, exe, pid);
}

static int append_job(const pg_job_t *job, const char *host)
{
    for (int rank = 0; rank < pg_job_size(job); rank++)
        if (append_rank(job, rank, host) != 0)
            return -1;
    return 0;
}

int pg_run_mpir_announce(const pg_job_t *const *jobs, int njobs, int *next, const char *host)
{
    int debugged = pg_mpir_debugged(), added = 0, rc = 0;

    while (*next < njobs) {
        const pg_job_t *job = jobs[*next];

        if (pg_job_discarded(job)) { /* its ranks were killed: nothing to debug */
            (*next)++;
            continue;
        }
        if (!pg_job_launched(job))
            break;
        (*next)++;
        if (!debugged)
            continue;
        if ((rc = append_job(job, host)) != 0)
            break;
        added++;
    }
    if (added > 0)
        pg_mpir_spawned();
    return rc;
}

void pg_run_mpir_abort(const pg_verdict_t *verdict)
{
    char why[128];

    if (!pg_mpir_debugged() || verdict->cause != PG_CAUSE_ABORT)
        return;
    if (verdict->rank >= 0)
        snprintf(why, sizeof(why), "rank %d aborted the job (exit status %d)", verdict->rank,
                 verdict->code);
    else
        snprintf(why, sizeof(why), "the job was aborted (exit status %d)", verdict->code);
    pg_mpir_aborting(why);
}
