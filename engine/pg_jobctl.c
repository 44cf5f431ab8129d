/*
 * pg_jobctl.c: what processes declare about themselves through
 * PMIx_Job_control -- that their job may be preempted, and how they want to
 * be told to checkpoint (a signal, an event code).
 *
 * Why it exists: these directives ask for no action; the Standard has the
 * host record them, so a later request (a checkpoint) and a query (is the
 * job preemptible? how does rank 3 checkpoint?) find them.  The engine keeps
 * them per process, beside the process table, because any process of the
 * gateway may ask about any other; delivering a checkpoint (a signal, an
 * event) is the handler's and the host's.
 */
#include "engine/pg_engine_int.h"

pmix_status_t pg_jobctl_set(pg_engine_t *e, const pg_proc_t *proc, const pg_jobctl_t *decl)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);

    if (job == NULL)
        return rc;
    if (decl == NULL || proc->rank >= job->size)
        return PMIX_ERR_BAD_PARAM;
    if (job->jobctl == NULL) {
        job->jobctl = pg_mem_alloc(e, job->size * sizeof(*job->jobctl));
        if (job->jobctl == NULL)
            return PMIX_ERR_NOMEM;
        memset(job->jobctl, 0, job->size * sizeof(*job->jobctl));
    }
    job->jobctl[proc->rank] = *decl;
    return PMIX_SUCCESS;
}

pmix_status_t pg_jobctl_get(pg_engine_t *e, const pg_proc_t *proc, pg_jobctl_t *out)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);

    if (job == NULL)
        return rc;
    if (out == NULL || proc->rank >= job->size)
        return PMIX_ERR_BAD_PARAM;
    memset(out, 0, sizeof(*out));
    if (job->jobctl != NULL)
        *out = job->jobctl[proc->rank];
    return PMIX_SUCCESS;
}

bool pg_jobctl_preemptible(pg_engine_t *e, const char *nspace)
{
    pg_ns_t *job = pg_ns_find(e, nspace);

    for (uint32_t r = 0; job != NULL && job->jobctl != NULL && r < job->size; r++)
        if (job->jobctl[r].preemptible)
            return true;
    return false;
}

void pg_jobctl_free(pg_engine_t *e, pg_ns_t *job)
{
    pg_mem_free(e, job->jobctl, job->jobctl != NULL ? job->size * sizeof(*job->jobctl) : 0);
    job->jobctl = NULL;
}
