/*
 * pg_jobdir: job directories as their readers see them.  See pg_jobdir.h.
 */
#include "wire/pg_jobdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *pg_jobdir_base(void)
{
    const char *tmp = getenv("TMPDIR");

    return tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp";
}

pg_jobdir_owner_t pg_jobdir_owner(int parent, const char *name)
{
    char lock[512];
    struct stat st;
    int fd, dead;

    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid())
        return PG_JOBDIR_NOT_OURS;
    if ((size_t)snprintf(lock, sizeof(lock), "%s/" PG_JOBDIR_LOCK, name) >= sizeof(lock))
        return PG_JOBDIR_NOT_OURS;
    fd = openat(parent, lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return PG_JOBDIR_NOT_OURS;
    dead = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd); /* our own lock goes with it */
    return dead ? PG_JOBDIR_DEAD : PG_JOBDIR_ALIVE;
}

int pg_jobdir_live(char ***dirs, size_t *n)
{
    DIR *tmp = opendir(pg_jobdir_base());
    struct dirent *e;
    char **list = NULL, **grown, *path;
    size_t count = 0;
    int err = 0;

    *dirs = NULL;
    *n = 0;
    if (tmp == NULL)
        return errno;
    while ((e = readdir(tmp)) != NULL) {
        if (strncmp(e->d_name, PG_JOBDIR_PREFIX ".", strlen(PG_JOBDIR_PREFIX ".")) != 0 ||
            pg_jobdir_owner(dirfd(tmp), e->d_name) != PG_JOBDIR_ALIVE)
            continue;
        grown = realloc(list, (count + 1) * sizeof(*list));
        if (grown == NULL || asprintf(&path, "%s/%s", pg_jobdir_base(), e->d_name) < 0) {
            list = grown != NULL ? grown : list;
            err = ENOMEM;
            break;
        }
        list = grown;
        list[count++] = path;
    }
    closedir(tmp);
    if (err != 0) {
        pg_jobdir_list_free(list, count);
        return err;
    }
    *dirs = list;
    *n = count;
    return 0;
}

void pg_jobdir_list_free(char **dirs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
}
