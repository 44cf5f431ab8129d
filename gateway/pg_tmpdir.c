/*
 * pg_tmpdir: job directories that name their owner by a lock.  See
 * pg_tmpdir.h.
 *
 * The lock is taken on a file made under a temporary name and only then
 * renamed to owner.lock, so a sweeping pmigate never finds an owner.lock
 * that nobody holds yet (which it would take for a dead job's).
 */
#include "gateway/pg_tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tmp_base(void)
{
    const char *tmp = getenv("TMPDIR");

    return tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp";
}

/* Makes dir/owner.lock, locked, in *lock_fd.  0 or an errno. */
static int take_lock(const char *dir, int *lock_fd)
{
    char fresh[4096], lock[4096];
    int fd, err;

    if ((size_t)snprintf(fresh, sizeof(fresh), "%s/." PG_TMPDIR_LOCK ".new", dir) >=
            sizeof(fresh) ||
        (size_t)snprintf(lock, sizeof(lock), "%s/" PG_TMPDIR_LOCK, dir) >= sizeof(lock))
        return ENAMETOOLONG;
    fd = open(fresh, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return errno;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || rename(fresh, lock) != 0) {
        err = errno;
        (void)unlink(fresh);
        close(fd);
        return err;
    }
    *lock_fd = fd;
    return 0;
}

int pg_tmpdir_new(const char *name, char *dir, size_t len, int *lock_fd)
{
    int err;

    *lock_fd = -1;
    if ((size_t)snprintf(dir, len, "%s/%s.XXXXXX", tmp_base(), name) >= len) {
        dir[0] = '\0';
        return ENAMETOOLONG;
    }
    if (mkdtemp(dir) == NULL) { /* 0700 */
        err = errno;
        dir[0] = '\0';
        return err;
    }
    err = take_lock(dir, lock_fd);
    if (err != 0) {
        (void)rmdir(dir);
        dir[0] = '\0';
    }
    return err;
}

/* How deep a job directory's tree may go: Open MPI's session tree, the
 * deepest thing ranks make in it, is ompi.<host>.<uid>/jf.<n>/<job>/<rank>/… */
#define TREE_DEPTH_MAX 16

/* Removes dirfd_parent/name and everything under it, never following a
 * symlink (a rank could plant one pointing anywhere): links are unlinked,
 * not entered.  Returns the unlinkat of name itself (0 or -1). */
static int remove_tree(int dirfd_parent, const char *name, int depth)
{
    int fd;
    DIR *d;
    struct dirent *e;

    if (depth < TREE_DEPTH_MAX &&
        (fd = openat(dirfd_parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
        d = fdopendir(fd);
        if (d == NULL) {
            close(fd);
            return -1;
        }
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (unlinkat(fd, e->d_name, 0) != 0 && (errno == EISDIR || errno == EPERM))
                (void)remove_tree(fd, e->d_name, depth + 1);
        }
        closedir(d);
    }
    return unlinkat(dirfd_parent, name, AT_REMOVEDIR);
}

void pg_tmpdir_remove(const char *dir, int lock_fd)
{
    if (dir != NULL && dir[0] != '\0')
        (void)remove_tree(AT_FDCWD, dir, 0);
    if (lock_fd >= 0)
        close(lock_fd);
}

/* 1 if parent/name is a job directory of this user whose owner is dead. */
static int owner_is_dead(int parent, const char *name)
{
    char lock[512];
    struct stat st;
    int fd, dead;

    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid())
        return 0;
    if ((size_t)snprintf(lock, sizeof(lock), "%s/" PG_TMPDIR_LOCK, name) >= sizeof(lock))
        return 0;
    fd = openat(parent, lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    dead = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd); /* our own lock goes with it */
    return dead;
}

static int is_job_dir_name(const char *name)
{
    static const char *const kinds[] = { PG_TMPDIR_PREFIX ".", PG_TMPDIR_PREFIX "-shm.", NULL };

    for (int i = 0; kinds[i] != NULL; i++)
        if (strncmp(name, kinds[i], strlen(kinds[i])) == 0)
            return 1;
    return 0;
}

int pg_tmpdir_sweep(void)
{
    DIR *tmp = opendir(tmp_base());
    struct dirent *e;
    int removed = 0;

    if (tmp == NULL)
        return 0;
    while ((e = readdir(tmp)) != NULL)
        if (is_job_dir_name(e->d_name) && owner_is_dead(dirfd(tmp), e->d_name) &&
            remove_tree(dirfd(tmp), e->d_name, 0) == 0)
            removed++;
    closedir(tmp);
    return removed;
}
