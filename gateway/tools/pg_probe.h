/*
 * pg_probe: `pmigate probe`, a PMI client self-test that runs as the ranks of
 * any launcher (`mpiexec.hydra -n 4 pmigate probe`, `srun --mpi=pmi2 ...`,
 * `mpirun -n 4 ...`, `pmigate run -n 4 ...`) and says in one line whether
 * its PMI works: when a job hangs or fails at wire-up, this tells the
 * launcher apart from the application.
 *
 * Why it is split this way: what the probe does (find the interface, the
 * steps, the checks, the report) is here, plain C over a table of
 * operations, so it is unit tested with a scripted backend; the backends
 * speak the real thing through the project's own client code:
 *   - PMI-1 (gateway/tools/pg_probe_pmi1.c): libpmi's PMI_* calls;
 *   - PMI-2 (gateway/tools/pg_probe_pmi2.c): libpmi2's PMI2_* calls;
 *   - PMIx (gateway/tools/pg_probe_pmix.c, built like pg_hostpmix.c against
 *     OpenPMIx's pmix.h): OpenPMIx's client under a PMIx server (mpirun,
 *     srun --mpi=pmix), pmigate's own libpmix under pmigate, both loaded by
 *     path so neither binds to the other's symbols.
 *
 * The steps, every rank: init; the job and node attributes; put of its key
 * ("pmigate.probe.<rank>") and commit; a fence (timed); a get of every
 * rank's key (timed), each value checked; then a second put/fence that
 * carries each rank's verdict and times to rank 0, which prints
 *   probe: PMI-1 (hydra via PMI_FD, job kvs_7_0, 1 node, 4 local,
 *   universe 4) rank 0 of 4, put/fence/get ok, fence 1.2 ms, all-get 0.4 ms
 * (the times are the slowest rank's), or names the step that failed and
 * where.  A rank that cannot go on (init, put, commit or a fence failed)
 * says why on stderr and aborts the job through its PMI.  Exit status 0
 * only when every step worked on every rank.
 */
#ifndef PG_PROBE_H
#define PG_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum pg_probe_iface {
    PG_PROBE_AUTO = 0, /* what the environment offers */
    PG_PROBE_PMI1,
    PG_PROBE_PMI2,
    PG_PROBE_PMIX,
} pg_probe_iface_t;

/* `pmigate probe` options. */
typedef struct pg_probe_opts {
    pg_probe_iface_t iface; /* --pmi1 / --pmi2 / --pmix, else AUTO */
    double timeout;         /* --timeout S: a step that takes longer fails; 0 = none */
    bool help;
} pg_probe_opts_t;

/* Default of --timeout: long enough for a slow launcher's fence of
 * thousands of ranks, short enough that a hang is reported. */
#define PG_PROBE_TIMEOUT_DEFAULT 120.0

/* Parses the arguments after `probe`.  0, or -1 with a message in err. */
int pg_probe_parse(int argc, char **argv, pg_probe_opts_t *opts, char *err, size_t errlen);

extern const char pg_probe_usage[];

/* What the environment says: the interface to speak and, for the report,
 * who launched the rank and how it reaches its server.  Strings are
 * static. */
typedef struct pg_probe_env {
    pg_probe_iface_t iface;
    bool pmigate;         /* launched by pmigate: PMIx is pmigate's own libpmix */
    const char *launcher; /* "pmigate", "hydra", "srun", "mpirun", ... */
    const char *via;      /* "PMI_FD", "PMI_PORT", "PMIX_SERVER_URI4", ... */
} pg_probe_env_t;

/* Decides from envp (an environ-like array) and the forced interface
 * (AUTO: PMIx under pmigate or a PMIx server, PMI-2 under srun's PMI_FD,
 * else PMI-1 on PMI_FD / PMI_PORT).  0, or -1 with the reason in err (no
 * PMI at all, or none for the forced interface). */
int pg_probe_detect(char *const *envp, pg_probe_iface_t forced, pg_probe_env_t *out, char *err,
                    size_t errlen);

const char *pg_probe_iface_name(pg_probe_iface_t iface);

/* What a backend learns; -1 / "" where the launcher did not say. */
typedef struct pg_probe_facts {
    int rank, size;
    int universe;
    int nnodes;
    int local_size;
    char job[256];    /* kvsname / jobid / namespace */
    char client[64];  /* the client library when it is not pmigate's own code,
                         e.g. "OpenPMIx 4.2.2" */
} pg_probe_facts_t;

/* One PMI interface.  Each call returns 0, or -1 with a one-line reason in
 * err.  get reads the key `key` put by `rank` into value[cap]. */
typedef struct pg_probe_ops {
    int (*init)(void *be, pg_probe_facts_t *f, char *err, size_t errlen);
    /* the job's and this node's attributes, into f */
    int (*attrs)(void *be, pg_probe_facts_t *f, char *err, size_t errlen);
    int (*put)(void *be, const char *key, const char *value, char *err, size_t errlen);
    int (*commit)(void *be, char *err, size_t errlen);
    int (*fence)(void *be, char *err, size_t errlen);
    int (*get)(void *be, int rank, const char *key, char *value, size_t cap, char *err,
               size_t errlen);
    void (*abort)(void *be, int code, const char *msg);
    int (*finalize)(void *be, char *err, size_t errlen);
} pg_probe_ops_t;

/* Runs the steps above over ops/be as one rank; rank 0 writes its line to
 * out, every rank its own failure to errf.  Arms a SIGALRM per step when
 * timeout > 0.  Returns the exit status (0, or 1). */
int pg_probe_run(const pg_probe_ops_t *ops, void *be, const pg_probe_env_t *env, double timeout,
                 FILE *out, FILE *errf);

/* From PMI_process_mapping (the PMI-1 key, the PMI-2 job attribute):
 * f->nnodes, f->local_size and, when not NULL, the node of f->rank and the
 * first rank on it.  0, or -1 with err set for a value that is no mapping
 * of f->size ranks. */
int pg_probe_mapping(const char *mapping, pg_probe_facts_t *f, int *node, int *first,
                     char *err, size_t errlen);

/* Writes "(hydra via PMI_FD, job kvs_7_0, 1 node, 4 local, universe 4)"
 * into buf (the parts the facts have). */
void pg_probe_describe(const pg_probe_env_t *env, const pg_probe_facts_t *f, char *buf,
                       size_t len);

/* The backends, in the pmigate binary only (the unit tests drive
 * pg_probe_run with a scripted one):
 *   PMI-1 and PMI-2 on pmigate's libpmi and libpmi2 code (be: NULL);
 *   PMIx through a libpmix loaded by path (pg_probe_pmix_open: `lib` NULL
 *   is the host's OpenPMIx pmigate was built with, else pmigate's own
 *   libpmix.so.2); be is what open returned. */
extern const pg_probe_ops_t pg_probe_pmi1_ops;
extern const pg_probe_ops_t pg_probe_pmi2_ops;
extern const pg_probe_ops_t pg_probe_pmix_ops;
void *pg_probe_pmix_open(const char *lib, char *err, size_t errlen);

#endif
