/*
 * pg_probe_pmix: `pmigate probe` over PMIx.  See pg_probe.h.
 *
 * Built like pg_hostpmix.c, against OpenPMIx's pmix.h (it includes none of
 * pmigate's PMIx headers), because under mpirun or srun --mpi=pmix the
 * probe must be a client of OpenPMIx's server: pmigate's libpmix speaks
 * only pmigate's transport.  Under pmigate it is pmigate's libpmix that
 * is probed.  Either library is reached through a table filled by dlsym on
 * a handle of that very library, never by a direct call: the pmigate
 * binary itself defines PMIx_* functions (its PMIx codec), which a direct
 * call could bind to.  pmigate's libpmix is opened with RTLD_DEEPBIND so
 * that its own calls between its PMIx_* functions stay inside it, with
 * OpenPMIx's library (the binary's dependency, of the same soname) already
 * loaded.  Both libraries have OpenPMIx 4.2's ABI (pmigate's is checked
 * against OpenPMIx's header by tests/pmix/pmix_abi.sh), so one set of
 * types serves both.
 */
#include "gateway/tools/pg_probe.h"

#include <dlfcn.h>
#include <pmix.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PG_OPENPMIX_LIB
#define PG_OPENPMIX_LIB "libpmix.so.2"
#endif

/* The calls the probe makes, from one library. */
typedef struct pmix_fns {
    __typeof__(&PMIx_Init) init;
    __typeof__(&PMIx_Finalize) finalize;
    __typeof__(&PMIx_Abort) abort;
    __typeof__(&PMIx_Put) put;
    __typeof__(&PMIx_Commit) commit;
    __typeof__(&PMIx_Fence) fence;
    __typeof__(&PMIx_Get) get;
    __typeof__(&PMIx_Error_string) error_string;
    __typeof__(&PMIx_Get_version) get_version;
    __typeof__(&PMIx_Value_destruct) value_destruct;
} pmix_fns_t;

typedef struct probe_pmix {
    pmix_fns_t fn;
    bool openpmix; /* the host's OpenPMIx, not pmigate's libpmix */
    pmix_proc_t me;
} probe_pmix_t;

#define FN_SYM(field, name) { offsetof(pmix_fns_t, field), name }
static const struct {
    size_t offset;
    const char *name;
} fn_syms[] = {
    FN_SYM(init, "PMIx_Init"),         FN_SYM(finalize, "PMIx_Finalize"),
    FN_SYM(abort, "PMIx_Abort"),       FN_SYM(put, "PMIx_Put"),
    FN_SYM(commit, "PMIx_Commit"),     FN_SYM(fence, "PMIx_Fence"),
    FN_SYM(get, "PMIx_Get"),           FN_SYM(error_string, "PMIx_Error_string"),
    FN_SYM(get_version, "PMIx_Get_version"), FN_SYM(value_destruct, "PMIx_Value_destruct"),
};

void *pg_probe_pmix_open(const char *lib, char *err, size_t errlen)
{
    const char *path = lib != NULL ? lib : PG_OPENPMIX_LIB;
    probe_pmix_t *p = calloc(1, sizeof(*p));
    void *h;

    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->openpmix = lib == NULL;
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL | (p->openpmix ? 0 : RTLD_DEEPBIND));
    if (h == NULL) {
        snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
        free(p);
        return NULL;
    }
    for (size_t i = 0; i < sizeof(fn_syms) / sizeof(fn_syms[0]); i++) {
        void *sym = dlsym(h, fn_syms[i].name);

        if (sym == NULL) {
            snprintf(err, errlen, "%s has no %s", path, fn_syms[i].name);
            free(p);
            return NULL; /* the handle stays: a library half-used is not unloaded */
        }
        memcpy((char *)&p->fn + fn_syms[i].offset, &sym, sizeof(sym));
    }
    return p;
}

static int check(const probe_pmix_t *p, pmix_status_t st, const char *call, char *err,
                 size_t errlen)
{
    if (st == PMIX_SUCCESS)
        return 0;
    snprintf(err, errlen, "%s: %s", call, p->fn.error_string(st));
    return -1;
}

static void value_release(const probe_pmix_t *p, pmix_value_t *v)
{
    if (v != NULL) {
        p->fn.value_destruct(v);
        free(v);
    }
}

/* An unsigned number of any integer PMIx type, or -1. */
static long value_number(const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_UINT32:
        return (long)v->data.uint32;
    case PMIX_UINT16:
        return (long)v->data.uint16;
    case PMIX_UINT64:
        return (long)v->data.uint64;
    case PMIX_UINT8:
        return (long)v->data.uint8;
    case PMIX_INT:
        return (long)v->data.integer;
    case PMIX_INT32:
        return (long)v->data.int32;
    case PMIX_PROC_RANK:
        return (long)v->data.rank;
    case PMIX_SIZE:
        return (long)v->data.size;
    default:
        return -1;
    }
}

/* key of `rank` (PMIX_RANK_WILDCARD: the job's) as a number. */
static int get_number(const probe_pmix_t *p, pmix_rank_t rank, const char *key, long *out,
                      char *err, size_t errlen)
{
    pmix_proc_t who;
    pmix_value_t *v = NULL;
    char call[96];
    int rc;

    memset(&who, 0, sizeof(who));
    memcpy(who.nspace, p->me.nspace, sizeof(who.nspace));
    who.rank = rank;
    snprintf(call, sizeof(call), "PMIx_Get(%s)", key);
    rc = check(p, p->fn.get(&who, key, NULL, 0, &v), call, err, errlen);
    if (rc == 0 && (v == NULL || (*out = value_number(v)) < 0)) {
        snprintf(err, errlen, "%s: not an unsigned number (type %d)", call,
                 v != NULL ? (int)v->type : -1);
        rc = -1;
    }
    value_release(p, v);
    return rc;
}

/* "OpenPMIx 4.2.2rc2 (PMIx Standard: 4.2, ...)" -> "OpenPMIx 4.2.2rc2" */
static void client_name(const probe_pmix_t *p, char *buf, size_t len)
{
    const char *v = p->fn.get_version();
    size_t n;

    if (v == NULL)
        v = "";
    n = strcspn(v, ",(");
    while (n > 0 && v[n - 1] == ' ')
        n--;
    snprintf(buf, len, "%.*s", (int)n, v);
}

static int pmix_init(void *be, pg_probe_facts_t *f, char *err, size_t errlen)
{
    probe_pmix_t *p = be;
    long size;

    if (check(p, p->fn.init(&p->me, NULL, 0), "PMIx_Init", err, errlen) != 0)
        return -1;
    f->rank = (int)p->me.rank;
    snprintf(f->job, sizeof(f->job), "%s", p->me.nspace);
    if (p->openpmix)
        client_name(p, f->client, sizeof(f->client));
    if (get_number(p, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size, err, errlen) != 0)
        return -1;
    f->size = (int)size;
    return 0;
}

/* The job's (universe, nodes, appnum) and this node's and process's
 * (local size, node id, local rank, host name) reserved keys. */
static int pmix_attrs(void *be, pg_probe_facts_t *f, char *err, size_t errlen)
{
    probe_pmix_t *p = be;
    long universe, nnodes, local, appnum, nodeid, local_rank;
    pmix_value_t *v = NULL;
    int rc;

    if (get_number(p, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &universe, err, errlen) != 0 ||
        get_number(p, PMIX_RANK_WILDCARD, PMIX_NUM_NODES, &nnodes, err, errlen) != 0 ||
        get_number(p, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, &local, err, errlen) != 0 ||
        get_number(p, p->me.rank, PMIX_APPNUM, &appnum, err, errlen) != 0 ||
        get_number(p, p->me.rank, PMIX_NODEID, &nodeid, err, errlen) != 0 ||
        get_number(p, p->me.rank, PMIX_LOCAL_RANK, &local_rank, err, errlen) != 0)
        return -1;
    f->universe = (int)universe;
    f->nnodes = (int)nnodes;
    f->local_size = (int)local;
    if (nodeid >= nnodes || local_rank >= local) {
        snprintf(err, errlen, "node %ld of %ld, local rank %ld of %ld", nodeid, nnodes,
                 local_rank, local);
        return -1;
    }
    rc = check(p, p->fn.get(&p->me, PMIX_HOSTNAME, NULL, 0, &v), "PMIx_Get(" PMIX_HOSTNAME ")",
               err, errlen);
    if (rc == 0 && (v == NULL || v->type != PMIX_STRING || v->data.string == NULL)) {
        snprintf(err, errlen, "PMIx_Get(" PMIX_HOSTNAME "): not a string");
        rc = -1;
    }
    value_release(p, v);
    return rc;
}

static int pmix_put(void *be, const char *key, const char *value, char *err, size_t errlen)
{
    probe_pmix_t *p = be;
    pmix_value_t v;

    memset(&v, 0, sizeof(v));
    v.type = PMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies it */
    return check(p, p->fn.put(PMIX_GLOBAL, key, &v), "PMIx_Put", err, errlen);
}

static int pmix_commit(void *be, char *err, size_t errlen)
{
    probe_pmix_t *p = be;

    return check(p, p->fn.commit(), "PMIx_Commit", err, errlen);
}

/* A fence of the whole namespace that collects the data, as MPI's
 * wire-up does. */
static int pmix_fence(void *be, char *err, size_t errlen)
{
    probe_pmix_t *p = be;
    pmix_info_t collect;

    memset(&collect, 0, sizeof(collect));
    snprintf(collect.key, sizeof(collect.key), "%s", PMIX_COLLECT_DATA);
    collect.value.type = PMIX_BOOL;
    collect.value.data.flag = true;
    return check(p, p->fn.fence(NULL, 0, &collect, 1), "PMIx_Fence", err, errlen);
}

static int pmix_get(void *be, int rank, const char *key, char *value, size_t cap, char *err,
                    size_t errlen)
{
    probe_pmix_t *p = be;
    pmix_proc_t who;
    pmix_value_t *v = NULL;
    int rc;

    memset(&who, 0, sizeof(who));
    memcpy(who.nspace, p->me.nspace, sizeof(who.nspace));
    who.rank = (pmix_rank_t)rank;
    rc = check(p, p->fn.get(&who, key, NULL, 0, &v), "PMIx_Get", err, errlen);
    if (rc == 0 && (v == NULL || v->type != PMIX_STRING || v->data.string == NULL)) {
        snprintf(err, errlen, "PMIx_Get: not a string (type %d)", v != NULL ? (int)v->type : -1);
        rc = -1;
    }
    if (rc == 0)
        snprintf(value, cap, "%s", v->data.string);
    value_release(p, v);
    return rc;
}

static void pmix_abort(void *be, int code, const char *msg)
{
    probe_pmix_t *p = be;

    (void)p->fn.abort(code, msg, NULL, 0);
}

static int pmix_finalize(void *be, char *err, size_t errlen)
{
    probe_pmix_t *p = be;

    return check(p, p->fn.finalize(NULL, 0), "PMIx_Finalize", err, errlen);
}

const pg_probe_ops_t pg_probe_pmix_ops = {
    .init = pmix_init,
    .attrs = pmix_attrs,
    .put = pmix_put,
    .commit = pmix_commit,
    .fence = pmix_fence,
    .get = pmix_get,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
};
