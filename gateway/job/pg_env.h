/*
 * pg_env: the environment a rank is exec'd with.  Both MPICH's PMI-1 client
 * and Slurm's libpmi2 find their server through it (docs/wire-protocol.md,
 * "The rank's environment"), so
 * the rules live in one testable place:
 *   - variables another launcher may have left in pmigate's own environment
 *     (PMI_ID, PMI_PORT, PMIX_NAMESPACE, ...) are removed, so a rank never
 *     takes its grandparent's identity;
 *   - then --genv, then the segment's --env;
 *   - then the PMI variables, which always win (PMI_FD with PMI_RANK and
 *     PMI_SIZE, because newer MPICH ignores PMI_FD without PMI_SIZE); they
 *     are set by pg_env_pmix.h's pg_env_set_rank, with the rest a rank needs
 *     to be pmigate's client.
 * PMIx variables are deliberately not set: MPICH takes them to mean "a PMIx
 * launcher is present" and would not use PMI_FD.  What programs built for
 * OpenPMIx (Open MPI) need instead is set by pg_env_pmix.h, unless the
 * user set it.
 *
 * Ownership: a pg_env_t owns copies of all its strings.
 */
#ifndef PG_ENV_H
#define PG_ENV_H

#include <stddef.h>

typedef struct pg_env pg_env_t;

/* Copies base (a NULL-terminated "K=V" array such as environ), minus the
 * variables of other launchers.  Returns NULL when out of memory. */
pg_env_t *pg_env_new(char *const *base);
pg_env_t *pg_env_clone(const pg_env_t *env);
void pg_env_free(pg_env_t *env);

/* Sets key to value, replacing an earlier value.  Returns 0 or -1 (ENOMEM,
 * or an empty key / a key containing '='). */
int pg_env_set(pg_env_t *env, const char *key, const char *value);
/* Same with one "K=V" string. */
int pg_env_put(pg_env_t *env, const char *kv);
/* The value of key, or NULL.  Points into env. */
const char *pg_env_get(const pg_env_t *env, const char *key);

/* NULL-terminated array for execve; owned by env, valid until its next change. */
char **pg_env_array(pg_env_t *env);
size_t pg_env_count(const pg_env_t *env);

/* 1 if a variable named like this is removed from an inherited environment. */
int pg_env_is_foreign_launcher_var(const char *kv);

#endif
