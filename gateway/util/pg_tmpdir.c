/*
 * pg_tmpdir: job directories that name their owner by a lock.  See
 * pg_tmpdir.h.
 *
 * The lock is taken on a file made under a temporary name and only then
 * renamed to owner.lock, so a sweeping pmigate never finds an owner.lock
 * that nobody holds yet (which it would take for a dead job's).
 */
#include "gateway/util/pg_tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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
    if ((size_t)snprintf(dir, len, "%s/%s.XXXXXX", pg_jobdir_base(), name) >= len) {
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

/* Work one removal may do (entries looked at), so a tree that a surviving
 * process keeps growing cannot hold pmigate for ever. */
#define REMOVE_BUDGET (1L << 24)

/* Opens parent/name, a directory, for emptying: never through a symlink,
 * and made readable, searchable and writable for us first when a rank took
 * those rights away (mode 000, 0500).  The rights are changed through an
 * O_PATH descriptor of the directory itself, so a link swapped in cannot
 * redirect the chmod.  Returns the descriptor (its identity in *st) or -1. */
static int open_for_removal(int parent, const char *name, struct stat *st)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0 && errno == EACCES) {
        int path = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        char proc[64];

        if (path < 0)
            return -1;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path);
        (void)chmod(proc, S_IRWXU);
        close(path);
        fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0) {
        close(fd);
        return -1;
    }
    if ((st->st_mode & S_IRWXU) != S_IRWXU) /* its entries must be removable */
        (void)fchmod(fd, st->st_mode | S_IRWXU);
    return fd;
}

/* Removes what the directory at fd holds, except subdirectories that are
 * not empty: returns 1 with the name of one of those in sub (to go into),
 * 0 when none is left, -1 when it cannot be read or the budget ran out. */
static int empty_dir(int fd, char *sub, long *budget)
{
    int dfd = dup(fd), found = 0;
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    struct dirent *e;

    if (d == NULL) {
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    rewinddir(d); /* the dup shares its offset with fd's earlier readers */
    while (!found && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (--*budget < 0) {
            found = -1;
            break;
        }
        if (unlinkat(fd, e->d_name, 0) == 0 || (errno != EISDIR && errno != EPERM))
            continue; /* gone, or nothing we can do about it */
        if (unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0 || (errno != ENOTEMPTY && errno != EEXIST))
            continue; /* an empty directory, or one that stays (a mount point) */
        snprintf(sub, NAME_MAX + 1, "%s", e->d_name);
        found = 1;
    }
    closedir(d);
    return found;
}

/* Removes dirfd_parent/name and everything under it, at any depth, never
 * following a symlink (a rank could plant one pointing anywhere: links are
 * unlinked, not entered) and whatever rights a rank left on its
 * directories.  One descriptor is open at a time: the walk goes down by
 * name and back up by "..", which must be the directory it came from
 * (device and inode kept per level) or the removal stops there.  Returns
 * the unlinkat of name itself (0 or -1). */
static int remove_tree(int dirfd_parent, const char *name)
{
    struct id {
        dev_t dev;
        ino_t ino;
    } *path = NULL;
    size_t depth = 0, cap = 0;
    long budget = REMOVE_BUDGET;
    char sub[NAME_MAX + 1];
    struct stat st;
    int fd = open_for_removal(dirfd_parent, name, &st);

    while (fd >= 0) {
        int r = empty_dir(fd, sub, &budget), next;

        if (r < 0)
            break;
        if (r == 1) { /* down */
            if (depth == cap) {
                struct id *grown = realloc(path, (cap = cap ? 2 * cap : 64) * sizeof(*path));

                if (grown == NULL)
                    break;
                path = grown;
            }
            path[depth] = (struct id){ st.st_dev, st.st_ino };
            next = open_for_removal(fd, sub, &st);
            if (next < 0)
                break;
            depth++;
        } else if (depth > 0) { /* emptied: up, where the loop removes it */
            next = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            depth--;
            if (next >= 0 && (fstat(next, &st) != 0 || st.st_dev != path[depth].dev ||
                              st.st_ino != path[depth].ino)) {
                close(next); /* moved away under us: not ours to go on with */
                next = -1;
            }
            if (next < 0)
                break;
        } else {
            break; /* the top is empty */
        }
        close(fd);
        fd = next;
    }
    if (fd >= 0)
        close(fd);
    free(path);
    return unlinkat(dirfd_parent, name, AT_REMOVEDIR);
}

void pg_tmpdir_remove(const char *dir, int lock_fd)
{
    if (dir != NULL && dir[0] != '\0')
        (void)remove_tree(AT_FDCWD, dir);
    if (lock_fd >= 0)
        close(lock_fd);
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
    DIR *tmp = opendir(pg_jobdir_base());
    struct dirent *e;
    int removed = 0;

    if (tmp == NULL)
        return 0;
    while ((e = readdir(tmp)) != NULL)
        if (is_job_dir_name(e->d_name) &&
            pg_jobdir_owner(dirfd(tmp), e->d_name) == PG_JOBDIR_DEAD &&
            remove_tree(dirfd(tmp), e->d_name) == 0)
            removed++;
    closedir(tmp);
    return removed;
}
