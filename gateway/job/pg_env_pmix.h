/*
 * pg_env_pmix: a rank's own variables, set over the environment pg_env.h
 * builds: the PMI ones that make it pmigate's client (pg_env_set_rank; the
 * rules are pg_env.h's), and what its environment needs so that programs
 * built for OpenPMIx - Open MPI 4.1 binaries first - become clients of
 * pmigate with nothing typed by the user (docs/user-guide.md, "An Open
 * MPI job"):
 *   - pmigate's libpmix.so.2 first on LD_LIBRARY_PATH, so the dynamic
 *     loader binds their libpmix.so.2 (Open MPI's mca_pmix_ext3x.so needs
 *     one) to pmigate's client library rather than OpenPMIx's;
 *   - the Open MPI MCA settings that make an Open MPI 4.1 process take its
 *     PMIx component (OMPI_MCA_pmix=ext3x) and, with no launcher of its own
 *     around, not decide it is a singleton (OMPI_MCA_schizo=^orte leaves
 *     its launch detection undetermined, so its ess picks "pmi").
 * PMIx variables (PMIX_SERVER_URI*, PMIX_NAMESPACE...) stay unset: MPICH
 * would take them to mean another PMIx server (pg_env.h).
 */
#ifndef PG_ENV_PMIX_H
#define PG_ENV_PMIX_H

#include "gateway/job/pg_env.h"

/* What a rank learns from its environment. */
typedef struct pg_rank_env {
    int pmi_fd;           /* where the rank finds its socketpair end */
    int rank;             /* global rank */
    int size;             /* job size */
    int local_rank;       /* index among the ranks of this node */
    int local_size;       /* ranks on this node */
    const char *jobid;    /* the kvsname, also PMI_JOBID (borrowed) */
    const char *port;     /* the listener path for PMIGATE_PMI_PORT, or NULL */
    const char *shm;      /* the job's shared key segment for PMIGATE_SHM, or NULL */
    const char *libpmix_dir; /* put first on LD_LIBRARY_PATH (pg_env_pmix.h), or NULL */
    const char *job_dir;     /* the job's private directory (pg_env_pmix.h), or NULL */
} pg_rank_env_t;

/* Sets the PMI variables of one rank (pg_env.h's rules), and the
 * PMIx-client settings below. */
int pg_env_set_rank(pg_env_t *env, const pg_rank_env_t *r);

/* The directory of the libpmix.so.2 built with this pmigate: its build
 * tree's when pmigate runs from there, else the installed directory that
 * holds nothing but a link to it (<pkglibdir>/pmix, never the libdir with
 * pmigate's libpmi.so.0 / libpmi2.so.0); NULL when neither holds one.
 * Computed once. */
const char *pg_env_libpmix_dir(void);

/* Sets the variables above in env: each OMPI_MCA_* one unless env already
 * has it (the user's --genv / --env win); libpmix_dir (when not NULL and
 * not a directory the loader searches anyway) prepended to LD_LIBRARY_PATH
 * unless it is already first; job_dir (when not NULL), the job's private
 * directory that pmigate removes with everything in it however the job
 * ends, as the base of Open MPI's session tree (OMPI_MCA_orte_tmpdir_base),
 * which mpirun's daemon would otherwise have removed.  Returns 0 or -1
 * (out of memory). */
int pg_env_set_pmix_clients(pg_env_t *env, const char *libpmix_dir, const char *job_dir);

#endif
