/*
 * pg_jobdir: the job directories a pmigate keeps under $TMPDIR (or /tmp),
 * as those who look for them see them: `pmigate status` and the sweep of
 * dead jobs' directories (gateway/util/pg_tmpdir.h, which makes them) and
 * a PMIx tool finding a job (pmix/client/pg_pmix_tool.c).  Here because
 * the gateway writes the format and libpmix, which links none of the
 * gateway, reads it: the lowest room both share, like the key segment's
 * format (pg_shm_format.h).
 *
 * A job directory is <base>/pmigate.XXXXXX, mode 0700, of its owner's
 * uid, holding an "owner.lock" file its pmigate keeps flock()ed for its
 * whole life: the kernel drops the lock when pmigate dies, however it
 * dies, so a held lock is a live job.
 */
#ifndef PG_JOBDIR_H
#define PG_JOBDIR_H

#include <stddef.h>

#define PG_JOBDIR_PREFIX "pmigate"
#define PG_JOBDIR_LOCK "owner.lock"

/* Where job directories are: $TMPDIR, or /tmp when it is unset or empty. */
const char *pg_jobdir_base(void);

/* What parent/name is: a job directory of this user whose owner lives or
 * has died, or anything else (another user's, no lock, not a directory).
 * Telling dead from alive takes the lock for a moment when nobody holds
 * it. */
typedef enum { PG_JOBDIR_NOT_OURS, PG_JOBDIR_ALIVE, PG_JOBDIR_DEAD } pg_jobdir_owner_t;
pg_jobdir_owner_t pg_jobdir_owner(int parent, const char *name);

/* The job directories (PG_JOBDIR_PREFIX ".XXXXXX", the ones holding a
 * job's sockets) of this user whose owner lives.  *dirs is a malloc'd
 * array of *n malloc'd paths (pg_jobdir_list_free).  0, or an errno. */
int pg_jobdir_live(char ***dirs, size_t *n);
void pg_jobdir_list_free(char **dirs, size_t n);

#endif
