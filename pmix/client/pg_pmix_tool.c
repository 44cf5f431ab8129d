/*
 * pg_pmix_tool: PMIx_tool_init and PMIx_tool_finalize (<pmix_tool.h>) in
 * pmigate's libpmix: a tool (a debugger, a job lister) attaches to a
 * running pmigate job of its user on this node.
 *
 * Why it exists: a tool is no rank of the job, so it has no PMI_FD nor
 * PMI_RANK; it finds the job the way `pmigate status` does
 * (docs/gateway.md, "The status endpoint"): the job directories
 * $TMPDIR/pmigate.XXXXXX (or /tmp) of this user whose owner lives (its
 * owner.lock is held), each with its PMI_PORT socket "pmi".  It connects
 * there with a tool preamble (docs/pmix-transport.md, "Tools") and the
 * gateway gives it a namespace and rank of its own, as the Standard says a
 * server gives a tool its identity.  Which job, when several run, is said
 * with the Standard's attributes: PMIX_SERVER_PIDINFO (pmigate's pid),
 * PMIX_SERVER_URI (the socket's path, as PMIX_SERVER_URI reads after
 * init) or PMIX_SERVER_NSPACE (the job's namespace); without one, one job
 * must be running.  Everything after init is the client library's
 * (queries, gets, events).
 */
#include "config/config.h"

#include <pmix_tool.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "pmix/client/pg_mux.h"
#include "pmix/client/pg_pmix_client_int.h"
#include "wire/pg_jobdir.h"

/* The PMI_PORT socket in a job directory, as gateway/io/pg_listen.h names
 * it (libpmix links none of the gateway), and the scheme of the URI a tool
 * may name it by. */
#define TOOL_SOCKET "pmi"
#define TOOL_URI_SCHEME "pmigate:"

/* Which job the tool asked for (all unset: the only one running). */
typedef struct tool_choice {
    pid_t pid;          /* PMIX_SERVER_PIDINFO, 0: any */
    const char *uri;    /* PMIX_SERVER_URI, NULL: any */
    const char *nspace; /* PMIX_SERVER_NSPACE, NULL: any */
} tool_choice_t;

/* The candidates: sockets of live job directories, malloc'd paths. */
typedef struct tool_paths {
    char **path;
    size_t n;
} tool_paths_t;

static void tool_say(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "pmigate libpmix: PMIx_tool_init: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
}

static void paths_free(tool_paths_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->path[i]);
    free(p->path);
    p->path = NULL;
    p->n = 0;
}

/* The PMI_PORT sockets of this user's live pmigate jobs on this node
 * (wire/pg_jobdir.h finds their directories). */
static pmix_status_t live_sockets(tool_paths_t *p)
{
    char **dirs;
    size_t n;

    if (pg_jobdir_live(&dirs, &n) != 0)
        return PMIX_SUCCESS; /* no directory: no job */
    p->path = calloc(n > 0 ? n : 1, sizeof(*p->path));
    for (size_t i = 0; p->path != NULL && i < n; i++)
        if (asprintf(&p->path[p->n], "%s/" TOOL_SOCKET, dirs[i]) >= 0)
            p->n++;
    pg_jobdir_list_free(dirs, n);
    return p->path != NULL && p->n == n ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

/* Connects to the unix socket at path.  A path too long for a socket
 * address is reached through /proc/self/fd/N of its directory, as
 * gateway/io/pg_listen.h's pg_listen_address does.  fd, or -1. */
static int dial(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    const char *slash = strrchr(path, '/');
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), dir_fd = -1, rc;

    if (fd < 0)
        return -1;
    if (strlen(path) < sizeof(sa.sun_path)) {
        strcpy(sa.sun_path, path);
    } else if (slash != NULL) {
        char *dir = strndup(path, (size_t)(slash - path));

        dir_fd = dir != NULL ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        free(dir);
        if (dir_fd < 0 || (size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d%s",
                                           dir_fd, slash) >= sizeof(sa.sun_path)) {
            sa.sun_path[0] = '\0';
        }
    }
    rc = sa.sun_path[0] != '\0' ? connect(fd, (struct sockaddr *)&sa, sizeof(sa)) : -1;
    if (dir_fd >= 0)
        close(dir_fd);
    if (rc != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The process listening on the other end (pmigate), 0 if unknown. */
static pid_t listener_pid(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return 0;
    return cred.pid;
}

static void choice_read(const pmix_info_t info[], size_t ninfo, tool_choice_t *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; info != NULL && i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;

        if (PMIX_CHECK_KEY(&info[i], PMIX_SERVER_PIDINFO) && v->type == PMIX_PID)
            c->pid = v->data.pid;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_SERVER_PIDINFO) && v->type == PMIX_INT)
            c->pid = (pid_t)v->data.integer;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_SERVER_PIDINFO) && v->type == PMIX_UINT32)
            c->pid = (pid_t)v->data.uint32;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_SERVER_URI) && v->type == PMIX_STRING)
            c->uri = v->data.string;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_SERVER_NSPACE) && v->type == PMIX_STRING)
            c->nspace = v->data.string;
    }
    if (c->uri != NULL && strncmp(c->uri, TOOL_URI_SCHEME, strlen(TOOL_URI_SCHEME)) == 0)
        c->uri += strlen(TOOL_URI_SCHEME);
}

/* The connector client_start calls: the socket found, as a tool's mux. */
static pmix_status_t tool_mux(void *arg, pg_mux_t **mux)
{
    int *fd = arg;

    *mux = pg_mux_new_tool(*fd);
    *fd = -1; /* the mux has it, or closed it */
    return *mux != NULL ? PMIX_SUCCESS : PMIX_ERR_UNREACH;
}

/* The namespace of the job the gateway serves (the init reply's
 * PMIX_SERVER_NSPACE) is `want`. */
static int serves_nspace(const pmix_proc_t *self, const char *want)
{
    pmix_proc_t job = *self;
    pmix_value_t *v = NULL;
    int same;

    job.rank = PMIX_RANK_WILDCARD;
    if (PMIx_Get(&job, PMIX_SERVER_NSPACE, NULL, 0, &v) != PMIX_SUCCESS || v == NULL)
        return 0;
    same = v->type == PMIX_STRING && v->data.string != NULL && strcmp(v->data.string, want) == 0;
    PMIX_VALUE_RELEASE(v);
    return same;
}

/* Attaches to the job at `path` if it is the one chosen: PMIX_SUCCESS,
 * PMIX_ERR_NOT_FOUND (not the one), or the failure. */
static pmix_status_t try_attach(const char *path, const tool_choice_t *c, pmix_proc_t *proc)
{
    int fd = dial(path);
    pmix_status_t rc;

    if (fd < 0)
        return PMIX_ERR_UNREACH;
    if (c->pid != 0 && listener_pid(fd) != c->pid) {
        close(fd);
        return PMIX_ERR_NOT_FOUND;
    }
    rc = pg_client_start_tool(proc, tool_mux, &fd);
    if (fd >= 0)
        close(fd);
    if (rc == PMIX_SUCCESS && c->nspace != NULL && !serves_nspace(proc, c->nspace)) {
        (void)PMIx_Finalize(NULL, 0);
        rc = PMIX_ERR_NOT_FOUND;
    }
    return rc;
}

/* Without a choice there must be exactly one job; with one, the first
 * candidate that matches. */
static pmix_status_t attach_among(const tool_paths_t *p, const tool_choice_t *c,
                                  pmix_proc_t *proc)
{
    int chosen = c->pid != 0 || c->nspace != NULL;
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;

    if (p->n == 0) {
        tool_say("no pmigate job of this user runs on this node (looked in %s)%s", pg_jobdir_base(), "");
        return PMIX_ERR_UNREACH;
    }
    if (p->n > 1 && !chosen) {
        tool_say("%s and other pmigate jobs of this user run on this node: choose one with %s",
                 p->path[0], "PMIX_SERVER_PIDINFO, PMIX_SERVER_URI or PMIX_SERVER_NSPACE");
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < p->n && rc == PMIX_ERR_NOT_FOUND; i++) {
        rc = try_attach(p->path[i], c, proc);
        if (rc == PMIX_ERR_UNREACH && !chosen)
            break;
        if (rc == PMIX_ERR_UNREACH)
            rc = PMIX_ERR_NOT_FOUND; /* ended meanwhile: try the next */
    }
    if (rc == PMIX_ERR_NOT_FOUND)
        tool_say("no pmigate job of this user on this node is the one asked for%s%s",
                 c->nspace != NULL ? ": namespace " : "", c->nspace != NULL ? c->nspace : "");
    return rc;
}

pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
    tool_paths_t p = { NULL, 0 };
    tool_choice_t c;
    pmix_status_t rc;

    choice_read(info, ninfo, &c);
    if (c.uri != NULL) { /* the socket itself */
        rc = try_attach(c.uri, &c, proc);
        if (rc != PMIX_SUCCESS)
            tool_say("cannot attach to the pmigate job at %s%s", c.uri,
                     rc == PMIX_ERR_NOT_FOUND ? " (not the one asked for)" : "");
        return rc;
    }
    rc = live_sockets(&p);
    if (rc == PMIX_SUCCESS)
        rc = attach_among(&p, &c, proc);
    paths_free(&p);
    return rc;
}

/* A tool outlives the job it watched: when pmigate has already gone (the
 * job ended), there is nobody to tell, and the tool's side is finalized
 * all the same. */
pmix_status_t PMIx_tool_finalize(void)
{
    pmix_status_t rc = PMIx_Finalize(NULL, 0);

    return rc == PMIX_ERR_LOST_CONNECTION || rc == PMIX_ERR_UNREACH ? PMIX_SUCCESS : rc;
}
