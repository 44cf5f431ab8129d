/*
 * pg_env_pmix: see pg_env_pmix.h.  Above pg_env.c: it sets variables
 * through pg_env.h, which calls nothing here.
 */
#include "config/config.h"

#include "gateway/job/pg_env_pmix.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An installed pmigate's directory holding only a link to its
 * libpmix.so.2 (pmix/client.am): the libdir itself would also hold
 * libpmi.so.0 and libpmi2.so.0, and ranks must keep the PMI libraries they
 * were linked with. */
#ifndef PG_PMIX_ONLY_DIR
#define PG_PMIX_ONLY_DIR "/usr/local/lib/pmigate/pmix"
#endif

/* Directories the dynamic loader searches without being told. */
static const char *const loader_default_dirs[] = {
    "/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu", NULL,
};

/* Set for every rank unless the user set them. */
static const char *const ompi_defaults[][2] = {
    { "OMPI_MCA_pmix", "ext3x" },
    { "OMPI_MCA_schizo", "^orte" },
};

static bool holds_libpmix(const char *dir)
{
    char path[PATH_MAX];

    return snprintf(path, sizeof(path), "%s/libpmix.so.2", dir) < (int)sizeof(path) &&
           access(path, R_OK) == 0;
}

static char libpmix_dir[PATH_MAX];
static pthread_once_t libpmix_once = PTHREAD_ONCE_INIT;

/* <build>/gateway/pmigate next to <build>/pmix/.libs/libpmix.so.2. */
static void find_libpmix_dir(void)
{
    char exe[PATH_MAX], *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n > 0) {
        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            if (snprintf(libpmix_dir, sizeof(libpmix_dir), "%s/../pmix/.libs", exe) <
                    (int)sizeof(libpmix_dir) &&
                holds_libpmix(libpmix_dir) && realpath(libpmix_dir, exe) != NULL) {
                snprintf(libpmix_dir, sizeof(libpmix_dir), "%s", exe);
                return;
            }
        }
    }
    if (holds_libpmix(PG_PMIX_ONLY_DIR))
        snprintf(libpmix_dir, sizeof(libpmix_dir), "%s", PG_PMIX_ONLY_DIR);
    else
        libpmix_dir[0] = '\0';
}

const char *pg_env_libpmix_dir(void)
{
    pthread_once(&libpmix_once, find_libpmix_dir);
    return libpmix_dir[0] != '\0' ? libpmix_dir : NULL;
}

static bool loader_searches(const char *dir)
{
    for (int i = 0; loader_default_dirs[i] != NULL; i++)
        if (strcmp(dir, loader_default_dirs[i]) == 0)
            return true;
    return false;
}

static int prepend_library_path(pg_env_t *env, const char *dir)
{
    const char *old = pg_env_get(env, "LD_LIBRARY_PATH");
    size_t dlen = strlen(dir);
    char *path;
    int rc;

    if (old == NULL || old[0] == '\0')
        return pg_env_set(env, "LD_LIBRARY_PATH", dir);
    if (strncmp(old, dir, dlen) == 0 && (old[dlen] == ':' || old[dlen] == '\0'))
        return 0; /* already first: the same env serves rank after rank */
    path = malloc(dlen + strlen(old) + 2);
    if (path == NULL)
        return -1;
    sprintf(path, "%s:%s", dir, old);
    rc = pg_env_set(env, "LD_LIBRARY_PATH", path);
    free(path);
    return rc;
}

/* Open MPI's ranks make <base>/ompi.<host>.<uid>/jf.<family>/… and each
 * removes only its own part when it exits normally: under pmigate the base
 * is the job's directory, so a killed rank's files and the jf.* directories
 * go with the job. */
#define OMPI_SESSION_BASE "OMPI_MCA_orte_tmpdir_base"

int pg_env_set_pmix_clients(pg_env_t *env, const char *dir, const char *job_dir)
{
    for (size_t i = 0; i < sizeof(ompi_defaults) / sizeof(ompi_defaults[0]); i++)
        if (pg_env_get(env, ompi_defaults[i][0]) == NULL &&
            pg_env_set(env, ompi_defaults[i][0], ompi_defaults[i][1]) != 0)
            return -1;
    if (job_dir != NULL && job_dir[0] != '\0' && pg_env_get(env, OMPI_SESSION_BASE) == NULL &&
        pg_env_set(env, OMPI_SESSION_BASE, job_dir) != 0)
        return -1;
    if (dir == NULL || dir[0] == '\0' || loader_searches(dir))
        return 0;
    return prepend_library_path(env, dir);
}

static int set_int(pg_env_t *env, const char *key, int value)
{
    char num[16];

    snprintf(num, sizeof(num), "%d", value);
    return pg_env_set(env, key, num);
}

int pg_env_set_rank(pg_env_t *env, const pg_rank_env_t *r)
{
    if (set_int(env, "PMI_FD", r->pmi_fd) != 0 || set_int(env, "PMI_RANK", r->rank) != 0 ||
        set_int(env, "PMI_SIZE", r->size) != 0 ||
        set_int(env, "MPI_LOCALNRANKS", r->local_size) != 0 ||
        set_int(env, "MPI_LOCALRANKID", r->local_rank) != 0 ||
        pg_env_set(env, "PMI_JOBID", r->jobid) != 0)
        return -1;
    if (r->port != NULL && pg_env_set(env, "PMIGATE_PMI_PORT", r->port) != 0)
        return -1;
    /* where pmigate's client libraries find the keys published after each
     * fence (docs/shm-segment.md) */
    if (r->shm != NULL && pg_env_set(env, "PMIGATE_SHM", r->shm) != 0)
        return -1;
    /* pmigate's own client libraries use the extensions this server offers
     * (PMI-1 keys pushed at barrier, a PMI-2 fence that is a real barrier)
     * only when they know they talk to pmigate. */
    if (pg_env_set(env, "PMIGATE_PMI_EXT", "1") != 0)
        return -1;
    return pg_env_set_pmix_clients(env, r->libpmix_dir, r->job_dir);
}
