/*
 * pg_env: a rank's environment.  See pg_env.h for the rules.
 */
#include "gateway/job/pg_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct pg_env {
    char **vars; /* "K=V" strings, owned; vars[n] == NULL */
    size_t n;
    size_t cap;
};

/* Exact names another launcher sets for its own ranks. */
static const char *const foreign_names[] = {
    "PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE", "PMI_JOBID", "PMI_SPAWNED",
    "MPI_LOCALNRANKS", "MPI_LOCALRANKID", "PMIX_NAMESPACE", "PMIX_RANK", "PMIX_VERSION",
    "PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR", "PRTE_LAUNCHED", "HYDI_CONTROL_FD",
    /* what Open MPI's mpirun gives its ranks (a pmigate proxy is one): an
     * Open MPI rank below pmigate that saw them would call mpirun's daemon */
    "PMIX_ID", "PMIX_HOSTNAME", "PMIX_SECURITY_MODE", "PMIX_BFROP_BUFFER_TYPE",
    "PMIX_GDS_MODULE", "OMPI_MCA_orte_local_daemon_uri", "OMPI_MCA_orte_hnp_uri",
    "OMPI_MCA_orte_launch", "OMPI_MCA_ess", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_ess_base_vpid",
    "OMPI_MCA_orte_ess_num_procs", "OMPI_MCA_orte_ess_node_rank", "OMPI_MCA_orte_app_num",
    "OMPI_MCA_orte_num_nodes", "OMPI_MCA_orte_bound_at_launch", "OMPI_MCA_orte_jobfam_session_dir",
    "OMPI_MCA_orte_precondition_transports", "OMPI_MCA_pmix", "OMPI_COMMAND", "OMPI_FILE_LOCATION",
    "OMPI_UNIVERSE_SIZE", "OMPI_FIRST_RANKS", "OMPI_APP_CTX_NUM_PROCS", "OMPI_NUM_APP_CTX", NULL,
};
/* Prefixes of the same kind. */
static const char *const foreign_prefixes[] = { "PMIX_SERVER_URI", "PMIGATE_", "PMIX_DSTORE_",
                                                 "OMPI_COMM_WORLD_", NULL };

static size_t key_len(const char *kv)
{
    const char *eq = strchr(kv, '=');

    return eq ? (size_t)(eq - kv) : strlen(kv);
}

int pg_env_is_foreign_launcher_var(const char *kv)
{
    size_t klen = key_len(kv);

    for (int i = 0; foreign_names[i] != NULL; i++)
        if (strlen(foreign_names[i]) == klen && strncmp(kv, foreign_names[i], klen) == 0)
            return 1;
    for (int i = 0; foreign_prefixes[i] != NULL; i++)
        if (strncmp(kv, foreign_prefixes[i], strlen(foreign_prefixes[i])) == 0)
            return 1;
    return 0;
}

static int env_reserve(pg_env_t *env, size_t extra)
{
    size_t want = env->n + extra + 1;
    char **grown;

    if (want <= env->cap)
        return 0;
    if (want < 2 * env->cap)
        want = 2 * env->cap;
    grown = realloc(env->vars, want * sizeof(char *));
    if (grown == NULL)
        return -1;
    env->vars = grown;
    env->cap = want;
    return 0;
}

static pg_env_t *env_alloc(size_t hint)
{
    pg_env_t *env = calloc(1, sizeof(*env));

    if (env == NULL || env_reserve(env, hint) != 0) {
        free(env);
        return NULL;
    }
    env->vars[0] = NULL;
    return env;
}

/* Appends a copy of kv (the caller has checked the key is new). */
static int env_append(pg_env_t *env, const char *kv)
{
    char *copy;

    if (env_reserve(env, 1) != 0 || (copy = strdup(kv)) == NULL)
        return -1;
    env->vars[env->n++] = copy;
    env->vars[env->n] = NULL;
    return 0;
}

pg_env_t *pg_env_new(char *const *base)
{
    size_t n = 0;
    pg_env_t *env;

    while (base != NULL && base[n] != NULL)
        n++;
    env = env_alloc(n);
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (strchr(base[i], '=') == NULL || pg_env_is_foreign_launcher_var(base[i]))
            continue;
        if (pg_env_put(env, base[i]) != 0) {
            pg_env_free(env);
            return NULL;
        }
    }
    return env;
}

pg_env_t *pg_env_clone(const pg_env_t *src)
{
    pg_env_t *env = env_alloc(src->n);

    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < src->n; i++) {
        if (env_append(env, src->vars[i]) != 0) {
            pg_env_free(env);
            return NULL;
        }
    }
    return env;
}

void pg_env_free(pg_env_t *env)
{
    if (env == NULL)
        return;
    for (size_t i = 0; i < env->n; i++)
        free(env->vars[i]);
    free(env->vars);
    free(env);
}

static ssize_t env_find(const pg_env_t *env, const char *key, size_t klen)
{
    for (size_t i = 0; i < env->n; i++)
        if (key_len(env->vars[i]) == klen && strncmp(env->vars[i], key, klen) == 0)
            return (ssize_t)i;
    return -1;
}

int pg_env_put(pg_env_t *env, const char *kv)
{
    size_t klen = key_len(kv);
    ssize_t at;
    char *copy;

    if (klen == 0 || kv[klen] != '=')
        return -1;
    at = env_find(env, kv, klen);
    if (at < 0)
        return env_append(env, kv);
    if ((copy = strdup(kv)) == NULL)
        return -1;
    free(env->vars[at]);
    env->vars[at] = copy;
    return 0;
}

int pg_env_set(pg_env_t *env, const char *key, const char *value)
{
    size_t klen = strlen(key), vlen = strlen(value);
    char *kv;
    int rc;

    if (klen == 0 || strchr(key, '=') != NULL)
        return -1;
    kv = malloc(klen + vlen + 2);
    if (kv == NULL)
        return -1;
    memcpy(kv, key, klen);
    kv[klen] = '=';
    memcpy(kv + klen + 1, value, vlen + 1);
    rc = pg_env_put(env, kv);
    free(kv);
    return rc;
}

const char *pg_env_get(const pg_env_t *env, const char *key)
{
    ssize_t at = env_find(env, key, strlen(key));

    return at < 0 ? NULL : env->vars[at] + strlen(key) + 1;
}

char **pg_env_array(pg_env_t *env)
{
    return env->vars;
}

size_t pg_env_count(const pg_env_t *env)
{
    return env->n;
}
