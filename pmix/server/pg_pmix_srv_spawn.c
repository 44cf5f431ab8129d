/*
 * pg_pmix_srv_spawn: the dynamic jobs of the PMIx handler -- PMIx_Spawn
 * decoded into the seam's pg_spawn_req_t for the host to start (user guide,
 * "Spawning jobs"), and PMIx_Connect / PMIx_Disconnect.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"

/* ---- dynamic jobs: spawn, connect, disconnect -------------------------- */

/* One decoded PMIx_Spawn: the apps as pg_spawn_cmd_t (argv after argv[0]),
 * the info keys the gateway understands translated (PMIX_WDIR and cwd ->
 * wdir, PMIX_PREFIX -> path = prefix/bin, PMIX_HOST -> host), each app's
 * env and PMIX_SET_ENVAR as variables for the children. */
typedef struct spawn_in {
    pmix_info_t *jinfo;
    size_t njinfo;
    pmix_app_t *apps;
    uint32_t napps;
    pg_spawn_cmd_t *cmds;
    pg_kv_t *kv;      /* [napps * 4] translated infos, then env */
    char **owned;     /* strings made here */
    size_t nowned;
    pg_kv_t *env;
    size_t nenv;
} spawn_in_t;

static void spawn_app_free(pmix_app_t *app)
{
    for (char **p = app->argv; p != NULL && *p != NULL; p++)
        free(*p);
    for (char **p = app->env; p != NULL && *p != NULL; p++)
        free(*p);
    free(app->argv);
    free(app->env);
    free(app->cmd);
    free(app->cwd);
    pg_pmix_array_free(app->info, app->ninfo, PMIX_INFO);
}

static void spawn_in_free(spawn_in_t *sp)
{
    for (uint32_t a = 0; sp->apps != NULL && a < sp->napps; a++)
        spawn_app_free(&sp->apps[a]);
    free(sp->apps);
    pg_pmix_array_free(sp->jinfo, sp->njinfo, PMIX_INFO);
    for (size_t i = 0; i < sp->nowned; i++)
        free(sp->owned[i]);
    free(sp->owned);
    free(sp->cmds);
    free(sp->kv);
    free(sp->env);
}

static const char *spawn_keep(spawn_in_t *sp, char *text)
{
    char **grown = text != NULL ? realloc(sp->owned, (sp->nowned + 1) * sizeof(*grown)) : NULL;

    if (grown == NULL) {
        free(text);
        return NULL;
    }
    sp->owned = grown;
    return sp->owned[sp->nowned++] = text;
}

static pmix_status_t spawn_unpack_app(pmix_data_buffer_t *b, pmix_app_t *app)
{
    size_t nargv = 0, nenv = 0;
    char **argv = NULL, **env = NULL;
    pmix_status_t rc;

    if ((rc = pg_pmix_unpack_one(b, &app->cmd, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_array(b, (void **)&argv, &nargv, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_array(b, (void **)&env, &nenv, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_one(b, &app->cwd, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_one(b, &app->maxprocs, PMIX_INT32)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_array(b, (void **)&app->info, &app->ninfo, PMIX_INFO)) !=
            PMIX_SUCCESS) {
        pg_pmix_array_free(argv, nargv, PMIX_STRING);
        pg_pmix_array_free(env, nenv, PMIX_STRING);
        return rc;
    }
    /* NULL-terminated, as pmix_app_t holds them */
    app->argv = calloc(nargv + 1, sizeof(char *));
    app->env = calloc(nenv + 1, sizeof(char *));
    if (app->argv == NULL || app->env == NULL) {
        pg_pmix_array_free(argv, nargv, PMIX_STRING);
        pg_pmix_array_free(env, nenv, PMIX_STRING);
        return PMIX_ERR_NOMEM;
    }
    if (nargv > 0) /* an app without argv or env comes as NULL arrays */
        memcpy(app->argv, argv, nargv * sizeof(char *));
    if (nenv > 0)
        memcpy(app->env, env, nenv * sizeof(char *));
    free(argv);
    free(env);
    return PMIX_SUCCESS;
}

static pmix_status_t spawn_add_env(spawn_in_t *sp, const char *k, size_t klen, const char *v)
{
    pg_kv_t *grown = realloc(sp->env, (sp->nenv + 1) * sizeof(*grown));
    const char *key, *val;

    if (grown == NULL)
        return PMIX_ERR_NOMEM;
    sp->env = grown;
    key = spawn_keep(sp, strndup(k, klen));
    val = spawn_keep(sp, strdup(v));
    if (key == NULL || val == NULL)
        return PMIX_ERR_NOMEM;
    sp->env[sp->nenv++] = (pg_kv_t){ key, val };
    return PMIX_SUCCESS;
}

/* info[] of one app (or the job's) -> the gateway's spawn info keys. */
static pmix_status_t spawn_info(spawn_in_t *sp, const pmix_info_t *info, size_t n, pg_kv_t *kv,
                                int *nkv)
{
    for (size_t i = 0; i < n; i++) {
        const pmix_value_t *v = &info[i].value;
        char *prefix_bin;

        if (pg_pmix_info_is(&info[i], "pmix.envar.set") && v->type == PMIX_ENVAR &&
            v->data.envar.envar != NULL) {
            if (spawn_add_env(sp, v->data.envar.envar, strlen(v->data.envar.envar),
                              v->data.envar.value ? v->data.envar.value : "") != PMIX_SUCCESS)
                return PMIX_ERR_NOMEM;
            continue;
        }
        if (v->type != PMIX_STRING || v->data.string == NULL || *nkv >= 3)
            continue;
        if (pg_pmix_info_is(&info[i], PMIX_WDIR))
            kv[(*nkv)++] = (pg_kv_t){ "wdir", v->data.string };
        else if (pg_pmix_info_is(&info[i], "pmix.host"))
            kv[(*nkv)++] = (pg_kv_t){ "host", v->data.string };
        else if (pg_pmix_info_is(&info[i], "pmix.prefix")) {
            if (asprintf(&prefix_bin, "%s/bin", v->data.string) < 0 ||
                spawn_keep(sp, prefix_bin) == NULL)
                return PMIX_ERR_NOMEM;
            kv[(*nkv)++] = (pg_kv_t){ "path", prefix_bin };
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t spawn_decode(pmix_data_buffer_t *b, spawn_in_t *sp)
{
    pmix_status_t rc;

    if ((rc = pg_pmix_unpack_array(b, (void **)&sp->jinfo, &sp->njinfo, PMIX_INFO)) !=
            PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_one(b, &sp->napps, PMIX_UINT32)) != PMIX_SUCCESS)
        return rc;
    if (sp->napps == 0 || sp->napps > 4096)
        return PMIX_ERR_BAD_PARAM;
    sp->apps = calloc(sp->napps, sizeof(*sp->apps));
    sp->cmds = calloc(sp->napps, sizeof(*sp->cmds));
    sp->kv = calloc((size_t)sp->napps * 4, sizeof(*sp->kv));
    if (sp->apps == NULL || sp->cmds == NULL || sp->kv == NULL)
        return PMIX_ERR_NOMEM;
    for (uint32_t a = 0; a < sp->napps; a++) {
        pmix_app_t *app = &sp->apps[a];
        pg_kv_t *kv = &sp->kv[a * 4];
        int nkv = 0, argc = 0;

        if ((rc = spawn_unpack_app(b, app)) != PMIX_SUCCESS)
            return rc;
        if (app->cwd != NULL && app->cwd[0] != '\0')
            kv[nkv++] = (pg_kv_t){ "wdir", app->cwd };
        if ((rc = spawn_info(sp, sp->jinfo, sp->njinfo, kv, &nkv)) != PMIX_SUCCESS ||
            (rc = spawn_info(sp, app->info, app->ninfo, kv, &nkv)) != PMIX_SUCCESS)
            return rc;
        for (char **e = app->env; *e != NULL; e++) {
            const char *eq = strchr(*e, '=');

            if (eq != NULL && eq > *e &&
                spawn_add_env(sp, *e, (size_t)(eq - *e), eq + 1) != PMIX_SUCCESS)
                return PMIX_ERR_NOMEM;
        }
        while (app->argv[argc] != NULL)
            argc++;
        /* argv[0] is the program (the Standard's pmix_app_t) */
        sp->cmds[a] = (pg_spawn_cmd_t){
            .command = app->cmd, .maxprocs = app->maxprocs, .argc = argc > 0 ? argc - 1 : 0,
            .argv = (const char *const *)(argc > 0 ? app->argv + 1 : app->argv),
            .ninfo = nkv, .info = kv,
        };
    }
    return PMIX_SUCCESS;
}

static void spawn_done(const pg_spawn_result_t *res, void *cbdata)
{
    pg_pmix_req_t *r = cbdata;
    pmix_data_buffer_t buf;
    const char *nspace = res->jobid != NULL ? res->jobid : "";
    pmix_status_t st = res->rc;

    if (r->s != NULL) { /* the host logged why a spawn failed */
        pg_buffer_construct(&buf);
        if (pg_pmix_msg_begin_reply(&buf, r->cmd, r->id, st) == PMIX_SUCCESS &&
            pg_pmix_pack_one(&buf, &nspace, PMIX_STRING) == PMIX_SUCCESS)
            (void)pg_pmix_reply_send(r->s->peer, &buf);
        else
            pg_buffer_destruct(&buf);
    }
    pg_pmix_req_free(r);
}

/* Is boolean attribute `key` set (true) in the spawn's job info? */
static bool spawn_asks(const spawn_in_t *sp, const char *key)
{
    for (size_t i = 0; i < sp->njinfo; i++)
        if (pg_pmix_info_is(&sp->jinfo[i], key) && pg_pmix_info_true(&sp->jinfo[i]))
            return true;
    return false;
}

/* PMIX_DEBUG_STOP_IN_INIT in the job info: which of the new job's ranks
 * wait in init for a debugger.  The Standard types it pmix_rank_t (a rank,
 * or PMIX_RANK_WILDCARD: all); OpenPMIx's debugger.c passes a bool, true
 * meaning all.  *rank is set and true returned when some rank is held. */
static bool spawn_stop_in_init(const spawn_in_t *sp, uint32_t *rank)
{
    for (size_t i = 0; i < sp->njinfo; i++) {
        const pmix_info_t *x = &sp->jinfo[i];

        if (!pg_pmix_info_is(x, PMIX_DEBUG_STOP_IN_INIT))
            continue;
        if (x->value.type == PMIX_PROC_RANK || x->value.type == PMIX_UINT32) {
            *rank = x->value.type == PMIX_PROC_RANK ? x->value.data.rank : x->value.data.uint32;
            return true;
        }
        *rank = PMIX_RANK_WILDCARD;
        return pg_pmix_info_true(x);
    }
    return false;
}

/* PMIx_Spawn: the host starts the job; the reply names its namespace. */
int pg_pmix_serve_spawn(pg_pmix_in_t *in)
{
    spawn_in_t sp = { 0 };
    pmix_status_t rc = spawn_decode(in->args, &sp);
    pg_pmix_req_t *r;
    pg_spawn_req_t req;

    if (rc == PMIX_SUCCESS && in->peer->ops->spawn == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    if (rc == PMIX_SUCCESS && (r = pg_pmix_req_new(in)) == NULL)
        rc = PMIX_ERR_NOMEM;
    if (rc != PMIX_SUCCESS) {
        spawn_in_free(&sp);
        return pg_pmix_reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
    }
    req = (pg_spawn_req_t){
        .ncmds = (int)sp.napps, .cmds = sp.cmds, .env = sp.env, .nenv = (int)sp.nenv,
        .notify_end = spawn_asks(&sp, PMIX_NOTIFY_COMPLETION) ||
                      spawn_asks(&sp, PMIX_NOTIFY_JOB_EVENTS),
        .end_silent_ok = spawn_asks(&sp, PMIX_EVENT_SILENT_TERMINATION),
    };
    req.stop_in_init = spawn_stop_in_init(&sp, &req.stop_rank);
    in->peer->ops->spawn(in->peer, &req, spawn_done, r); /* done always runs */
    spawn_in_free(&sp);
    return PG_HANDLER_OK;
}

/* PMIx_Connect / PMIx_Disconnect: every job of the gateway shares one
 * store, so a connect only checks that each namespace is one of them;
 * gets on a connected namespace then read its keys. */
int pg_pmix_serve_connect(pg_pmix_in_t *in)
{
    pmix_proc_t *procs = NULL;
    pmix_info_t *info = NULL;
    size_t nprocs = 0, ninfo = 0;
    pmix_status_t rc = PMIX_SUCCESS;
    pg_value_t v;

    if (pg_pmix_unpack_array(in->args, (void **)&procs, &nprocs, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(procs, nprocs, PMIX_PROC);
        return PG_HANDLER_FAIL;
    }
    for (size_t i = 0; i < nprocs && rc == PMIX_SUCCESS; i++)
        if (in->peer->job->engine == NULL ||
            pg_ns_attr(in->peer->job->engine, procs[i].nspace, "universeSize", &v) != PMIX_SUCCESS)
            rc = PMIX_ERR_NOT_FOUND;
    pg_pmix_array_free(procs, nprocs, PMIX_PROC);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return pg_pmix_reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
}
