/*
 * pg_spawn: spawn requests -> spawned jobs.  See pg_spawn.h for the rules
 * and what a child that cannot start does to the rest.  Over several nodes
 * (`pmigate proxy`) a request is checked here, then placed by the job's
 * hub (gateway/proxy/pg_proxy_spawn.c), and every node builds its share of the
 * new job from the same request (pg_spawn_share).
 */
#include "gateway/run/pg_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/job/pg_launch.h"
#include "gateway/job/pg_job_ctx.h"
#include "pmix_common.h"

/* Options the spawn owns: pg_run_opts_t borrows its strings, so they live
 * here beside it (opts first: pg_spawn_opts_free gets back to the rest). */
typedef struct spawn_opts {
    pg_run_opts_t opts;
    char **strs; /* every string the options point at, owned */
    int nstrs;
} spawn_opts_t;

/* What the info keys of one command say. */
typedef struct cmd_info {
    const char *wdir;
    const char *path;
    const char *host;
    const char *env; /* "K=V[ K=V...]" */
} cmd_info_t;

void pg_spawn_opts_free(pg_run_opts_t *opts)
{
    spawn_opts_t *so = (spawn_opts_t *)opts;

    if (so == NULL)
        return;
    for (int i = 0; i < so->nstrs; i++)
        free(so->strs[i]);
    free(so->strs);
    for (int s = 0; so->opts.segments != NULL && s < so->opts.nsegments; s++) {
        free(so->opts.segments[s].argv);
        free(so->opts.segments[s].env);
    }
    free(so->opts.segments);
    free(so);
}

/* Keeps a copy of `text` (len bytes, or all of it when len < 0) with the
 * options; NULL when out of memory. */
static char *keep(spawn_opts_t *so, const char *text, int len)
{
    char **grown = realloc(so->strs, (size_t)(so->nstrs + 1) * sizeof(*grown));
    char *copy = len < 0 ? strdup(text) : strndup(text, (size_t)len);

    if (grown != NULL)
        so->strs = grown;
    if (grown == NULL || copy == NULL) {
        free(copy);
        return NULL;
    }
    so->strs[so->nstrs++] = copy;
    return copy;
}

static int push_env(spawn_opts_t *so, pg_segment_t *seg, const char *kv, int len)
{
    const char **grown = realloc(seg->env, (size_t)(seg->nenv + 1) * sizeof(*grown));
    char *copy;

    if (grown == NULL)
        return -1;
    seg->env = grown;
    if ((copy = keep(so, kv, len)) == NULL)
        return -1;
    seg->env[seg->nenv++] = copy;
    return 0;
}

/* One "K=V" pair of an env info value per word; a word without '=' is
 * refused (clear error) rather than guessed at. */
static int add_env_words(spawn_opts_t *so, pg_segment_t *seg, const char *words)
{
    const char *p = words;

    while (*p != '\0') {
        size_t n;

        p += strspn(p, " \t");
        n = strcspn(p, " \t");
        if (n == 0)
            break;
        if (memchr(p, '=', n) == NULL || p[0] == '=')
            return -2;
        if (push_env(so, seg, p, (int)n) != 0)
            return -1;
        p += n;
    }
    return 0;
}

/* `quiet`: another node said so already (a share of a spawn over nodes). */
static void read_info(pg_job_t *parent, const pg_spawn_cmd_t *cmd, int quiet, cmd_info_t *ci)
{
    memset(ci, 0, sizeof(*ci));
    for (int k = 0; k < cmd->ninfo; k++) {
        const char *key = cmd->info[k].key, *val = cmd->info[k].val;

        if (key == NULL || val == NULL)
            continue;
        if (strcmp(key, "wdir") == 0)
            ci->wdir = val;
        else if (strcmp(key, "path") == 0)
            ci->path = val;
        else if (strcmp(key, "host") == 0 || strcmp(key, "hosts") == 0)
            ci->host = val;
        else if (strcmp(key, "env") == 0)
            ci->env = val;
        else if (pg_job_opts(parent)->verbose && !quiet) /* as hydra: ignored */
            pg_job_log(parent, "spawn: info key '%s' ignored", key);
    }
}

/* host=: this node only (a comma list must name nothing else). */
static int host_is_here(pg_job_t *parent, const char *hosts)
{
    const char *me = pg_job_ctx(parent)->hostname, *p = hosts;
    size_t melen = strcspn(me, "."); /* short name matches too */

    while (*p != '\0') {
        size_t n = strcspn(p, ", ");

        if (n > 0 && !(n == strlen(me) && strncmp(p, me, n) == 0) &&
            !(n == melen && strncmp(p, me, n) == 0) && !(n == 9 && strncmp(p, "localhost", 9) == 0))
            return 0;
        p += n;
        p += strspn(p, ", ");
    }
    return 1;
}

/* One spawn request, from the request to the reply: on the heap, since
 * the children's execs are collected from the loop (pg_job_spawn). */
typedef struct spawn_call {
    pg_job_t *parent;
    int rank;             /* the rank of `parent` that asked */
    const pg_spawn_req_t *req; /* borrowed: valid in pg_spawn_start only */
    int total;
    int *errcodes;        /* [total] */
    char errmsg[400];
    char **wdirs;         /* [ncmds] */
    spawn_opts_t *so;
    const char *jobid;    /* the new job's name once pg_job_spawn took it */
    int refusal;          /* errno for every process of a spawn refused whole
                           * (0: ECANCELED, nothing was started) */
    pg_spawn_done_fn done;
    void *cbdata;
    /* over several nodes */
    const pg_job_node_t *node; /* the parent's nodes, NULL: this one only */
    unsigned char *on_nodes;   /* [nnodes] named by host= (NULL: none named) */
    int share;                 /* building this node's share: placed already */
    pg_spawn_share_fn share_done;
} spawn_call_t;

/* Fills the errcodes of a spawn none of whose children starts: `err` for
 * command `bad`'s processes, ECANCELED for the rest. */
static void errcodes_all_failed(spawn_call_t *c, int bad, int err)
{
    int at = 0;

    for (int i = 0; i < c->req->ncmds; i++)
        for (int k = 0; k < c->req->cmds[i].maxprocs; k++)
            c->errcodes[at++] = i == bad ? err : ECANCELED;
}

/* The program a command runs: `path`/command when path= is given (hydra's
 * rule) and the command has no '/'. */
static const char *command_path(spawn_call_t *c, const pg_spawn_cmd_t *cmd, const cmd_info_t *ci)
{
    char *joined;

    if (ci->path == NULL || strchr(cmd->command, '/') != NULL)
        return keep(c->so, cmd->command, -1);
    if (asprintf(&joined, "%s/%s", ci->path, cmd->command) < 0)
        return NULL;
    {
        const char *kept = keep(c->so, joined, -1);

        free(joined);
        return kept;
    }
}

/* Is the program there for the child, which starts in `wdir` (NULL:
 * pmigate's directory) and finds it as execvpe does (pmigate's PATH,
 * relative entries and names from its working directory)?  0, or an errno
 * with c->errmsg naming the program and where it was looked for. */
static int check_program(spawn_call_t *c, const char *prog, const char *wdir)
{
    int dirfd = wdir != NULL ? open(wdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
    int err;

    if (wdir != NULL && dirfd < 0) {
        err = errno;
        snprintf(c->errmsg, sizeof(c->errmsg), "wdir '%s': %s", wdir, strerror(err));
        return err;
    }
    err = pg_launch_program_check_at(dirfd, prog);
    if (dirfd != AT_FDCWD)
        close(dirfd);
    if (err != 0)
        snprintf(c->errmsg, sizeof(c->errmsg), "cannot run '%s'%s%s%s: %s", prog,
                 wdir != NULL ? " in wdir '" : "", wdir != NULL ? wdir : "", wdir != NULL ? "'" : "",
                 err == ENOENT && strchr(prog, '/') == NULL ? "command not found" : strerror(err));
    return err;
}

/* Is `name` (n bytes) node `node`'s name, or its short name? */
static int names_node(const char *name, size_t n, const char *node)
{
    size_t short_len = strcspn(node, ".");

    return (n == strlen(node) || n == short_len) && strncmp(name, node, n) == 0;
}

/* host= over several nodes: every name is one of the job's nodes (as
 * `pmigate proxy` names them, or a short name; `localhost`: the
 * requester's), and the spawn's processes go to the nodes named.  0, or
 * EHOSTUNREACH with c->errmsg naming the stranger. */
static int hosts_to_nodes(spawn_call_t *c, const char *hosts)
{
    const pg_job_node_t *node = c->node;
    const char *p = hosts;

    if (c->on_nodes == NULL && (c->on_nodes = calloc((size_t)node->nnodes, 1)) == NULL)
        return -1;
    while (*p != '\0') {
        size_t n = strcspn(p, ", ");
        int found = n == 0;

        if (n == 9 && strncmp(p, "localhost", 9) == 0) {
            c->on_nodes[node->nodeid] = 1;
            found = 1;
        }
        for (int k = 0; !found && k < node->nnodes; k++)
            if (names_node(p, n, node->hostnames[k]))
                c->on_nodes[k] = found = 1;
        if (!found) {
            snprintf(c->errmsg, sizeof(c->errmsg), "host '%.*s' is not a node of this job",
                     (int)(n < 200 ? n : 200), p);
            return EHOSTUNREACH;
        }
        p += n;
        p += strspn(p, ", ");
    }
    return 0;
}

/* One command -> one segment.  Returns 0, -1 (out of memory) or an errno
 * that stops the spawn (c->errmsg says why). */
static int build_segment(spawn_call_t *c, int i)
{
    const pg_spawn_cmd_t *cmd = &c->req->cmds[i];
    pg_segment_t *seg = &c->so->opts.segments[i];
    const char *prog;
    cmd_info_t ci;
    int err, erc;

    read_info(c->parent, cmd, c->share, &ci);
    if (ci.host != NULL && c->node != NULL) { /* the hub places by it */
        if (!c->share && (err = hosts_to_nodes(c, ci.host)) != 0)
            return err;
    } else if (ci.host != NULL && !host_is_here(c->parent, ci.host)) {
        snprintf(c->errmsg, sizeof(c->errmsg), "host '%s' is not this node (%s): pmigate runs one node",
                 ci.host, pg_job_ctx(c->parent)->hostname);
        return EHOSTUNREACH;
    }
    if ((prog = command_path(c, cmd, &ci)) == NULL)
        return -1;
    if ((err = check_program(c, prog, ci.wdir)) != 0)
        return err;
    seg->nprocs = cmd->maxprocs;
    seg->argc = cmd->argc + 1;
    seg->argv = calloc((size_t)cmd->argc + 2, sizeof(*seg->argv));
    if (seg->argv == NULL)
        return -1;
    seg->argv[0] = (char *)prog;
    for (int a = 0; a < cmd->argc; a++)
        if ((seg->argv[a + 1] = keep(c->so, cmd->argv[a] ? cmd->argv[a] : "", -1)) == NULL)
            return -1;
    if (ci.wdir != NULL && (c->wdirs[i] = strdup(ci.wdir)) == NULL)
        return -1;
    erc = ci.env != NULL ? add_env_words(c->so, seg, ci.env) : 0;
    if (erc == -2) {
        snprintf(c->errmsg, sizeof(c->errmsg), "info env='%s' is not K=V words", ci.env);
        return EINVAL;
    }
    return erc;
}

/* The variables every child gets: spawned, the parent's job, the caller's. */
static int add_spawn_env(spawn_call_t *c, pg_segment_t *seg)
{
    char kv[160];
    const char *parent = pg_job_kvsname(c->parent);

    if (push_env(c->so, seg, "PMI_SPAWNED=1", -1) != 0)
        return -1;
    snprintf(kv, sizeof(kv), "PMI_PARENT_ID=%s", parent);
    if (push_env(c->so, seg, kv, -1) != 0)
        return -1;
    snprintf(kv, sizeof(kv), "PMIX_PARENT_ID=%s", parent);
    if (push_env(c->so, seg, kv, -1) != 0)
        return -1;
    for (int k = 0; k < c->req->nenv; k++) {
        if (c->req->env[k].key == NULL || c->req->env[k].val == NULL ||
            snprintf(kv, sizeof(kv), "%s=%s", c->req->env[k].key, c->req->env[k].val) >=
                (int)sizeof(kv))
            continue;
        if (push_env(c->so, seg, kv, -1) != 0)
            return -1;
    }
    return 0;
}

/* The per-gateway cap, on every process spawned over the run (so a chain
 * of children each spawning one more ends too, not only a fan-out): 0 when
 * the spawn fits, else the message is set. */
static int check_cap(spawn_call_t *c)
{
    const pg_run_opts_t *ro = pg_job_ctx(c->parent)->opts;
    int cap = ro->max_procs_set ? ro->max_procs : PG_SPAWN_MAX_PROCS_DEFAULT;
    int so_far = pg_job_ctx(c->parent)->spawned_total;

    if (c->total <= cap - so_far)
        return 0;
    snprintf(c->errmsg, sizeof(c->errmsg),
             "spawning %d process%s would exceed --max-procs %d (%d spawned so far)", c->total,
             c->total == 1 ? "" : "es", cap, so_far);
    return -1;
}

static int check_request(spawn_call_t *c)
{
    const pg_spawn_req_t *req = c->req;

    if (req->ncmds < 1 || req->cmds == NULL) {
        snprintf(c->errmsg, sizeof(c->errmsg), "a spawn needs at least one command");
        return -1;
    }
    for (int i = 0; i < req->ncmds; i++) {
        if (req->cmds[i].command == NULL || req->cmds[i].command[0] == '\0' ||
            req->cmds[i].maxprocs < 1 || req->cmds[i].maxprocs > (1 << 20) - c->total ||
            req->cmds[i].argc < 0) {
            snprintf(c->errmsg, sizeof(c->errmsg),
                     "command %d of the spawn has no program or a bad process count", i);
            return -1;
        }
        c->total += req->cmds[i].maxprocs;
    }
    return 0;
}

static void finish(spawn_call_t *c, int rc)
{
    pg_spawn_result_t res;

    /* a refused spawn started nothing: no process may read as started */
    for (int i = 0; rc != 0 && c->errcodes != NULL && i < c->total; i++)
        if (c->errcodes[i] == 0)
            c->errcodes[i] = c->refusal != 0 ? c->refusal : ECANCELED;
    res = (pg_spawn_result_t){
        .rc = rc, .errmsg = rc != 0 ? c->errmsg : NULL, .jobid = rc == 0 ? c->jobid : NULL,
        .nprocs = c->errcodes != NULL ? c->total : 0, .errcodes = c->errcodes,
    };

    if (rc != 0)
        pg_job_log(c->parent, "spawn refused: %s", c->errmsg);
    c->done(&res, c->cbdata);
}

static void spawn_call_free(spawn_call_t *c)
{
    int ncmds = c->so != NULL ? c->so->opts.nsegments : 0;

    free(c->on_nodes);
    for (int i = 0; c->wdirs != NULL && i < ncmds; i++)
        free(c->wdirs[i]);
    free(c->wdirs);
    pg_spawn_opts_free(c->so ? &c->so->opts : NULL);
    free(c->errcodes);
    free(c);
}

/* The job's launch is over (pg_job_launched_fn): the reply. */
static void spawn_launched(int failed, const char *why, void *arg)
{
    spawn_call_t *c = arg;
    int rc;

    if (failed < 0) {
        snprintf(c->errmsg, sizeof(c->errmsg), "%s", why != NULL ? why : "launch failed");
        rc = PMIX_ERROR;
    } else if (failed > 0) {
        for (int i = 0; i < c->total; i++)
            if (c->errcodes[i] == 0)
                c->errcodes[i] = ECANCELED; /* started, then taken back */
        snprintf(c->errmsg, sizeof(c->errmsg), "%d of the %d spawned process%s could not start",
                 failed, c->total, c->total == 1 ? "" : "es");
        rc = PMIX_ERR_NOT_FOUND;
    } else {
        rc = PMIX_SUCCESS;
        if (pg_job_ctx(c->parent)->opts->verbose)
            pg_job_log(c->parent, "rank %d spawned job %s (%d process%s)", c->rank, c->jobid,
                       c->total, c->total == 1 ? "" : "es");
    }
    finish(c, rc);
    spawn_call_free(c);
}

/* Builds every command's segment: 0, or a PMIx status with the errcodes
 * and the message set (nothing is forked then). */
static int build_segments(spawn_call_t *c)
{
    for (int i = 0; i < c->req->ncmds; i++) {
        int err = build_segment(c, i);

        if (err == 0)
            err = add_spawn_env(c, &c->so->opts.segments[i]);
        if (err < 0)
            return PMIX_ERR_NOMEM;
        if (err > 0) { /* nothing forked yet: no child of this spawn starts */
            errcodes_all_failed(c, i, err);
            return PMIX_ERR_NOT_FOUND;
        }
    }
    return PMIX_SUCCESS;
}

/* The call's options, working directories and segments, from its
 * request (c->errcodes allocated before).  PMIX_SUCCESS, PMIX_ERR_NOMEM,
 * or build_segments' refusal (c->errmsg says why). */
static int build_call(spawn_call_t *c)
{
    const pg_run_opts_t *ro = pg_job_ctx(c->parent)->opts;
    int ncmds = c->req->ncmds;

    c->so = calloc(1, sizeof(*c->so));
    c->wdirs = calloc((size_t)ncmds, sizeof(*c->wdirs));
    if (c->errcodes == NULL || c->so == NULL || c->wdirs == NULL)
        return PMIX_ERR_NOMEM;
    c->so->opts = (pg_run_opts_t){ .nsegments = ncmds, .nprocs = c->total,
                                   .genv = ro->genv, .ngenv = ro->ngenv,
                                   .tag_output = ro->tag_output, .verbose = ro->verbose };
    c->so->opts.segments = calloc((size_t)ncmds, sizeof(pg_segment_t));
    if (c->so->opts.segments == NULL)
        return PMIX_ERR_NOMEM;
    return build_segments(c);
}

/* ---- over several nodes ---- */

/* A request the hub answers: the spawner's completion, said as here. */
typedef struct remote_call {
    pg_job_t *parent;
    int rank;
    pg_spawn_done_fn done;
    void *cbdata;
} remote_call_t;

static void remote_done(const pg_spawn_result_t *res, void *arg)
{
    remote_call_t *rc = arg;

    if (res->rc != 0)
        pg_job_log(rc->parent, "spawn refused: %s", res->errmsg ? res->errmsg : "failed");
    else if (pg_job_ctx(rc->parent)->opts->verbose)
        pg_job_log(rc->parent, "rank %d spawned job %s (%d process%s)", rc->rank, res->jobid,
                   res->nprocs, res->nprocs == 1 ? "" : "es");
    rc->done(res, rc->cbdata);
    free(rc);
}

/* Checked here (request, programs, info keys): the hub places and starts
 * it, and counts it against --max-procs job-wide.  Returns 0, or -1 when
 * it could not even be sent (c is then finished by the caller). */
static int forward(spawn_call_t *c)
{
    remote_call_t *rc;

    if (c->node->spawn == NULL) {
        snprintf(c->errmsg, sizeof(c->errmsg), "spawn is not supported here");
        return -1;
    }
    if ((rc = calloc(1, sizeof(*rc))) == NULL)
        return -1;
    *rc = (remote_call_t){ c->parent, c->rank, c->done, c->cbdata };
    c->node->spawn(c->node->dyn_ctx, c->parent, c->rank, c->req, c->on_nodes, remote_done, rc);
    return 0;
}

/* This node's share is launched (pg_job_launched_fn). */
static void share_launched(int failed, const char *why, void *arg)
{
    spawn_call_t *c = arg;

    if (failed < 0)
        snprintf(c->errmsg, sizeof(c->errmsg), "%s", why != NULL ? why : "launch failed");
    else if (failed > 0)
        snprintf(c->errmsg, sizeof(c->errmsg), "%d of the %d spawned process%s could not start",
                 failed, c->total, c->total == 1 ? "" : "es");
    c->share_done(c->cbdata, failed == 0 ? 0 : -1, c->errcodes, c->total,
                  failed == 0 ? NULL : c->errmsg);
    spawn_call_free(c);
}

void pg_spawn_share(pg_job_t *parent, int rank, int jobno, const pg_job_node_t *node,
                    const pg_spawn_req_t *req, pg_spawn_share_fn done, void *arg)
{
    spawn_call_t *c = calloc(1, sizeof(*c));
    const char *why = "out of memory";
    spawn_opts_t *so;
    char **wdirs;

    if (c == NULL) {
        done(arg, -1, NULL, 0, "out of memory");
        return;
    }
    *c = (spawn_call_t){ .parent = parent, .rank = rank, .req = req, .node = node, .share = 1,
                         .share_done = done, .cbdata = arg };
    snprintf(c->errmsg, sizeof(c->errmsg), "out of memory");
    if (check_request(c) != 0)
        goto refuse;
    c->errcodes = calloc((size_t)c->total, sizeof(*c->errcodes));
    if (build_call(c) != PMIX_SUCCESS)
        goto refuse;
    so = c->so;
    wdirs = c->wdirs;
    c->so = NULL;
    c->wdirs = NULL;
    c->req = NULL;
    if (pg_job_spawn_share(parent, rank, jobno, node, &so->opts, wdirs, req, c->errcodes, &why,
                           share_launched, c) == 0)
        return; /* share_launched tells (it may have already) */
    snprintf(c->errmsg, sizeof(c->errmsg), "%s", why);
refuse:
    for (int i = 0; c->errcodes != NULL && i < c->total; i++)
        if (c->errcodes[i] == 0)
            c->errcodes[i] = ECANCELED;
    done(arg, -1, c->errcodes, c->errcodes != NULL ? c->total : 0, c->errmsg);
    spawn_call_free(c);
}

/* ---- the request ---- */

void pg_spawn_start(pg_job_t *parent, int rank, const pg_spawn_req_t *req, pg_spawn_done_fn done,
                    void *cbdata)
{
    spawn_call_t *c = calloc(1, sizeof(*c));
    const char *why = NULL;
    spawn_opts_t *so;
    char **wdirs;
    int rc = PMIX_ERR_NOMEM;

    if (c == NULL) {
        pg_spawn_result_t res = { .rc = PMIX_ERR_NOMEM, .errmsg = "out of memory" };

        pg_job_log(parent, "spawn refused: out of memory");
        done(&res, cbdata);
        return;
    }
    *c = (spawn_call_t){ .parent = parent, .rank = rank, .req = req, .done = done,
                         .cbdata = cbdata, .node = pg_job_node(parent) };
    snprintf(c->errmsg, sizeof(c->errmsg), "out of memory");
    if (check_request(c) != 0) {
        rc = PMIX_ERR_BAD_PARAM;
        goto refuse;
    }
    c->errcodes = calloc((size_t)c->total, sizeof(*c->errcodes));
    if (c->node == NULL && check_cap(c) != 0) { /* over several nodes: the hub counts */
        c->refusal = EAGAIN;
        rc = PMIX_ERR_OUT_OF_RESOURCE;
        goto refuse;
    }
    if ((rc = build_call(c)) != PMIX_SUCCESS)
        goto refuse;
    if (c->node != NULL) { /* checked: the hub takes it from here */
        if (forward(c) == 0) {
            spawn_call_free(c);
            return;
        }
        rc = PMIX_ERR_NOT_SUPPORTED;
        goto refuse;
    }
    so = c->so; /* the job's from here on, or freed */
    wdirs = c->wdirs;
    c->so = NULL;
    c->wdirs = NULL;
    c->req = NULL;
    if (pg_job_spawn(parent, rank, &so->opts, wdirs, req, c->errcodes, &c->jobid, &why,
                     spawn_launched, c) == 0)
        return; /* spawn_launched replies (it may have already) */
    snprintf(c->errmsg, sizeof(c->errmsg), "%s", why);
    rc = PMIX_ERROR;
refuse:
    finish(c, rc);
    spawn_call_free(c);
}
