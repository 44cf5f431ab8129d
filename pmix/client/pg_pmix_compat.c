/*
 * pg_pmix_compat: see pg_pmix_compat.h.
 *
 * Cleanup registrations: Open MPI's ranks create a session directory and
 * ask the PMIx server (PMIx_Job_control_nb with PMIX_REGISTER_CLEANUP_DIR
 * and PMIX_CLEANUP_RECURSIVE, targets = the rank itself) to remove it when
 * they terminate; a failed request aborts MPI_Init.  The process itself
 * can keep that promise as well as the gateway can for every exit that
 * runs library destructors (return from main, exit(), the unloading of
 * libpmix): the paths are recorded here and removed then, by the process
 * that registered them only (a forked child's exit removes nothing).  A
 * rank killed by a signal leaves its paths behind.
 */
#include "config/config.h"

#include "pmix/client/pg_pmix_compat.h"

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reserved keys whose value the host supplies for every process. */
static const char *const host_supplied_keys[] = {
    PMIX_HOSTNAME, PMIX_CPUSET, PMIX_LOCALITY_STRING, NULL,
};

pmix_status_t pg_pmix_reserved_put(const char *key)
{
    for (size_t i = 0; host_supplied_keys[i] != NULL; i++)
        if (strcmp(key, host_supplied_keys[i]) == 0)
            return PMIX_SUCCESS;
    return PMIX_ERR_BAD_PARAM;
}

/* Reserved keys the client library computes itself. */
static const char *const client_computed_keys[] = {
    PMIX_LOCALITY, NULL,
};

bool pg_pmix_reserved_store(const char *key, pmix_status_t *rc)
{
    for (size_t i = 0; client_computed_keys[i] != NULL; i++)
        if (strcmp(key, client_computed_keys[i]) == 0)
            return true;
    *rc = pg_pmix_reserved_put(key);
    return false;
}

/* ---- cleanup ------------------------------------------------------------ */

typedef struct cleanup_path {
    struct cleanup_path *next;
    pid_t owner; /* the process that registered it */
    bool directory, recursive, empty_only, leave_top;
    char path[];
} cleanup_path_t;

static struct {
    pthread_mutex_t lock;
    cleanup_path_t *paths;
    char **ignore; /* names never removed, NULL-terminated */
    size_t nignore;
} cleanup = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0 };

static bool is_key(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

/* A boolean directive: present and not explicitly false. */
static bool info_true(const pmix_info_t dirs[], size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (is_key(&dirs[i], key))
            return dirs[i].value.type != PMIX_BOOL || dirs[i].value.data.flag;
    return false;
}

static bool is_cleanup_key(const pmix_info_t *i)
{
    return is_key(i, PMIX_REGISTER_CLEANUP) || is_key(i, PMIX_REGISTER_CLEANUP_DIR) ||
           is_key(i, PMIX_CLEANUP_IGNORE);
}

/* The caller alone: one target, this process. */
static bool targets_are_self(const pmix_proc_t targets[], size_t ntargets)
{
    pmix_value_t *me = NULL;
    bool self;

    if (targets == NULL || ntargets != 1)
        return false;
    if (PMIx_Get(NULL, PMIX_PROCID, NULL, 0, &me) != PMIX_SUCCESS || me == NULL)
        return false;
    self = me->type == PMIX_PROC && me->data.proc != NULL &&
           PMIX_CHECK_PROCID(&targets[0], me->data.proc);
    PMIX_VALUE_RELEASE(me);
    return self;
}

static pmix_status_t add_path(const char *path, size_t len, bool directory,
                              const pmix_info_t dirs[], size_t ndirs)
{
    cleanup_path_t *p = calloc(1, sizeof(*p) + len + 1);

    if (p == NULL)
        return PMIX_ERR_NOMEM;
    memcpy(p->path, path, len);
    p->owner = getpid();
    p->directory = directory;
    p->recursive = info_true(dirs, ndirs, PMIX_CLEANUP_RECURSIVE);
    p->empty_only = info_true(dirs, ndirs, PMIX_CLEANUP_EMPTY);
    p->leave_top = info_true(dirs, ndirs, PMIX_CLEANUP_LEAVE_TOPDIR);
    p->next = cleanup.paths;
    cleanup.paths = p;
    return PMIX_SUCCESS;
}

static pmix_status_t add_ignore(const char *name, size_t len)
{
    char **grown = realloc(cleanup.ignore, (cleanup.nignore + 2) * sizeof(char *));

    if (grown == NULL)
        return PMIX_ERR_NOMEM;
    cleanup.ignore = grown;
    if ((grown[cleanup.nignore] = strndup(name, len)) == NULL)
        return PMIX_ERR_NOMEM;
    grown[++cleanup.nignore] = NULL;
    return PMIX_SUCCESS;
}

/* One directive's value: a comma-separated list of absolute paths (or,
 * for PMIX_CLEANUP_IGNORE, of paths or file names). */
static pmix_status_t add_list(const pmix_info_t *i, const pmix_info_t dirs[], size_t ndirs)
{
    const char *s = i->value.data.string;
    pmix_status_t rc = PMIX_SUCCESS;
    bool ignore = is_key(i, PMIX_CLEANUP_IGNORE);

    if (i->value.type != PMIX_STRING || s == NULL)
        return PMIX_ERR_BAD_PARAM;
    while (rc == PMIX_SUCCESS && *s != '\0') {
        size_t len = strcspn(s, ",");

        if (len > 0 && ignore)
            rc = add_ignore(s, len);
        else if (len > 0 && s[0] != '/')
            rc = PMIX_ERR_BAD_PARAM; /* relative to what, at exit? */
        else if (len > 0)
            rc = add_path(s, len, is_key(i, PMIX_REGISTER_CLEANUP_DIR), dirs, ndirs);
        s += len + (s[len] == ',');
    }
    return rc;
}

static void cleanup_at_exit(void) __attribute__((destructor));

pmix_status_t pg_pmix_cleanup_request(const pmix_proc_t targets[], size_t ntargets,
                                      const pmix_info_t directives[], size_t ndirs)
{
    pmix_status_t rc = PMIX_SUCCESS;
    bool any = false;

    for (size_t i = 0; i < ndirs && directives != NULL; i++)
        any = any || is_cleanup_key(&directives[i]);
    if (!any)
        return PMIX_ERR_NOT_FOUND;
    if (!targets_are_self(targets, ntargets))
        return PMIX_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&cleanup.lock);
    for (size_t i = 0; i < ndirs && rc == PMIX_SUCCESS; i++)
        if (is_cleanup_key(&directives[i]))
            rc = add_list(&directives[i], directives, ndirs);
    pthread_mutex_unlock(&cleanup.lock);
    return rc;
}

static bool ignored(const char *path)
{
    const char *base = strrchr(path, '/');

    base = base != NULL ? base + 1 : path;
    for (size_t i = 0; i < cleanup.nignore; i++)
        if (strcmp(path, cleanup.ignore[i]) == 0 || strcmp(base, cleanup.ignore[i]) == 0)
            return true;
    return false;
}

/* nftw visits a directory's entries before the directory (FTW_DEPTH), so
 * each directory is empty by the time it is removed, unless an ignored
 * entry stays - then its rmdir fails and it stays too. */
static const cleanup_path_t *walking;

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    if (ignored(path))
        return 0;
    if (ftw->level == 0 && walking->leave_top)
        return 0;
    if (type == FTW_DP)
        (void)rmdir(path);
    else if (!walking->empty_only)
        (void)unlink(path);
    return 0;
}

static void remove_path(const cleanup_path_t *p)
{
    if (ignored(p->path))
        return;
    if (!p->directory) {
        (void)unlink(p->path);
        return;
    }
    if (!p->recursive) {
        if (!p->leave_top)
            (void)rmdir(p->path); /* only if empty */
        return;
    }
    walking = p;
    (void)nftw(p->path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void cleanup_at_exit(void)
{
    cleanup_path_t *p, *next;

    pthread_mutex_lock(&cleanup.lock);
    for (p = cleanup.paths; p != NULL; p = next) {
        next = p->next;
        if (p->owner == getpid())
            remove_path(p);
        free(p);
    }
    cleanup.paths = NULL;
    for (size_t i = 0; i < cleanup.nignore; i++)
        free(cleanup.ignore[i]);
    free(cleanup.ignore);
    cleanup.ignore = NULL;
    cleanup.nignore = 0;
    pthread_mutex_unlock(&cleanup.lock);
}
