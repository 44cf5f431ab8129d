/*
 * pg_tmpdir: the private directory a job keeps under $TMPDIR (or /tmp):
 * pmigate.XXXXXX (the PMI_PORT socket, pg_listen, and what the ranks put
 * there).  pmigate-shm.XXXXXX, where older pmigates kept the key segment
 * (now sealed memory, pg_shm), is still swept.  A pmigate killed with
 * SIGKILL cannot remove them, so each records its owner: an "owner.lock"
 * file that the owning pmigate holds flock()ed for its whole life.  The kernel drops the lock
 * when the owner dies, however it dies, so the next `pmigate run` of the
 * same user can tell a dead job's directory from a live one (even across
 * pid namespaces sharing /tmp, where a recorded pid would mislead) and
 * removes it (pg_tmpdir_sweep).
 *
 * Ownership: the caller keeps the lock descriptor (close-on-exec) until
 * pg_tmpdir_remove.
 */
#ifndef PG_TMPDIR_H
#define PG_TMPDIR_H

#include <stddef.h>

#include "wire/pg_jobdir.h"

/* The name every job directory starts with (then "." or "-shm."). */
#define PG_TMPDIR_PREFIX PG_JOBDIR_PREFIX
#define PG_TMPDIR_LOCK PG_JOBDIR_LOCK

/* Creates <$TMPDIR or /tmp>/<name>.XXXXXX (mode 0700) into dir[len] and
 * its owner lock, held in *lock_fd.  Returns 0 or an errno (dir is then ""). */
int pg_tmpdir_new(const char *name, char *dir, size_t len, int *lock_fd);

/* Releases the lock and removes the directory with everything in it (what
 * the job's processes left there too, e.g. Open MPI's session tree:
 * pg_env_set_pmix_clients), at any depth and whatever rights they left on
 * it; symlinks are removed, never followed.  A NULL or "" dir is a no-op. */
void pg_tmpdir_remove(const char *dir, int lock_fd);

/* Removes the job directories (whole trees, as pg_tmpdir_remove) under
 * $TMPDIR (or /tmp) whose owner is dead:
 * this user's, with an owner lock nobody holds.  Directories without a
 * lock (another program's, or made by an older pmigate) are left alone.
 * Returns how many were removed. */
int pg_tmpdir_sweep(void);


#endif
