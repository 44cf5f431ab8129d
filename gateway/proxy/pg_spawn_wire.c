/*
 * pg_spawn_wire: a spawn request on the proxies' wire.  See pg_spawn_wire.h.
 *
 * Layout: ncmds, then per command its program, maxprocs, argc and argv,
 * its info pairs; the preput pairs, the env pairs; notify_end and
 * end_silent_ok.  A pair array is a count and key, value strings.
 */
#include "gateway/proxy/pg_spawn_wire.h"

#include <stdlib.h>

static void pack_kvs(pg_mesh_wr_t *b, const pg_kv_t *kv, int n)
{
    pg_mesh_wr_u32(b, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        pg_mesh_wr_nstr(b, kv[i].key);
        pg_mesh_wr_nstr(b, kv[i].val);
    }
}

void pg_spawn_wire_pack(pg_mesh_wr_t *b, const pg_spawn_req_t *req)
{
    pg_mesh_wr_u32(b, (uint32_t)req->ncmds);
    for (int i = 0; i < req->ncmds; i++) {
        const pg_spawn_cmd_t *c = &req->cmds[i];

        pg_mesh_wr_nstr(b, c->command);
        pg_mesh_wr_i32(b, c->maxprocs);
        pg_mesh_wr_u32(b, (uint32_t)c->argc);
        for (int a = 0; a < c->argc; a++)
            pg_mesh_wr_nstr(b, c->argv[a] != NULL ? c->argv[a] : "");
        pack_kvs(b, c->info, c->ninfo);
    }
    pack_kvs(b, req->preput, req->npreput);
    pack_kvs(b, req->env, req->nenv);
    pg_mesh_wr_u32(b, (uint32_t)req->notify_end);
    pg_mesh_wr_u32(b, (uint32_t)req->end_silent_ok);
}

void pg_spawn_wire_free(pg_spawn_wire_t *w)
{
    for (size_t i = 0; i < w->nstrs; i++)
        free(w->strs[i]);
    free(w->strs);
    for (size_t i = 0; i < w->nkvs; i++)
        free(w->kvs[i]);
    free(w->kvs);
    if (w->cmds != NULL)
        for (int i = 0; i < w->req.ncmds; i++)
            free((void *)w->cmds[i].argv);
    free(w->cmds);
    *w = (pg_spawn_wire_t){ 0 };
}

/* A string of the request, kept with it; NULL only for a NULL string. */
static char *take_str(pg_spawn_wire_t *w, pg_mesh_rd_t *r)
{
    char *s = pg_mesh_rd_nstr(r);
    char **grown;

    if (s == NULL)
        return NULL;
    if ((grown = realloc(w->strs, (w->nstrs + 1) * sizeof(*grown))) == NULL) {
        free(s);
        r->bad = true;
        return NULL;
    }
    w->strs = grown;
    w->strs[w->nstrs++] = s;
    return s;
}

/* An array of key/value pairs, kept with the request (NULL: none). */
static const pg_kv_t *take_kvs(pg_spawn_wire_t *w, pg_mesh_rd_t *r, int *n)
{
    uint32_t count = pg_mesh_rd_count(r, 8);
    pg_kv_t **grown, *kv;

    *n = 0;
    if (count == 0)
        return NULL;
    grown = realloc(w->kvs, (w->nkvs + 1) * sizeof(*grown));
    kv = calloc(count, sizeof(*kv));
    if (grown != NULL)
        w->kvs = grown;
    if (grown == NULL || kv == NULL) {
        free(kv);
        r->bad = true;
        return NULL;
    }
    w->kvs[w->nkvs++] = kv;
    for (uint32_t i = 0; i < count && !r->bad; i++) {
        if ((kv[i].key = take_str(w, r)) == NULL)
            r->bad = true; /* a key is never NULL */
        kv[i].val = take_str(w, r);
    }
    *n = (int)count;
    return kv;
}

int pg_spawn_wire_unpack(pg_mesh_rd_t *r, pg_spawn_wire_t *w)
{
    uint32_t ncmds = pg_mesh_rd_count(r, 16);

    *w = (pg_spawn_wire_t){ 0 };
    if (ncmds == 0 || (w->cmds = calloc(ncmds, sizeof(*w->cmds))) == NULL) {
        r->bad = true;
        return -1;
    }
    w->req.ncmds = (int)ncmds;
    for (uint32_t i = 0; i < ncmds && !r->bad; i++) {
        pg_spawn_cmd_t *c = &w->cmds[i];
        uint32_t argc;
        const char **argv;

        c->command = take_str(w, r);
        c->maxprocs = pg_mesh_rd_i32(r);
        argc = pg_mesh_rd_count(r, 4);
        if ((argv = calloc((size_t)argc + 1, sizeof(*argv))) == NULL)
            goto fail;
        c->argv = argv;
        c->argc = (int)argc;
        for (uint32_t a = 0; a < argc && !r->bad; a++)
            if ((argv[a] = take_str(w, r)) == NULL)
                r->bad = true; /* the sender writes none */
        c->info = take_kvs(w, r, &c->ninfo);
        if (c->command == NULL || c->maxprocs < 1 ||
            c->maxprocs > PG_SPAWN_WIRE_MAX_PROCS - w->total)
            goto fail;
        w->total += c->maxprocs;
    }
    w->req.preput = take_kvs(w, r, &w->req.npreput);
    w->req.env = take_kvs(w, r, &w->req.nenv);
    w->req.notify_end = pg_mesh_rd_u32(r) != 0;
    w->req.end_silent_ok = pg_mesh_rd_u32(r) != 0;
    w->req.cmds = w->cmds;
    if (r->bad)
        goto fail;
    return 0;
fail:
    r->bad = true;
    pg_spawn_wire_free(w);
    return -1;
}
