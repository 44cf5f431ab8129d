/*
 * pg_pmix_srv_query: PMIx_Query_info -- each query key pmigate answers has
 * its row in a table (namespaces, process tables, what spawn supports,
 * the groups, what processes declared through job control, the supported
 * keys, which the table itself lists); any other reserved key is answered
 * as the job data a get reads.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"

/* Results of one PMIx_Query_info call, grown as answers come. */
typedef struct query_out {
    pmix_info_t *info;
    size_t n, cap;
    size_t asked, answered; /* keys */
    bool can_spawn;         /* the host serves PMIx_Spawn (pg_peer_ops_t.spawn) */
    bool can_hold;          /* the host holds ranks in init (pg_peer_ops_t.debugger_release) */
} query_out_t;

/* A fresh slot for `key` (the caller fills its value), or NULL. */
static pmix_info_t *query_slot(query_out_t *o, const char *key)
{
    if (o->n == o->cap) {
        size_t cap = o->cap > 0 ? o->cap * 2 : 8;
        pmix_info_t *grown = realloc(o->info, cap * sizeof(*grown));

        if (grown == NULL)
            return NULL;
        o->info = grown;
        o->cap = cap;
    }
    PMIX_INFO_CONSTRUCT(&o->info[o->n]);
    PMIX_LOAD_KEY(o->info[o->n].key, key);
    return &o->info[o->n++];
}

static pmix_status_t query_add(query_out_t *o, const char *key, const void *data,
                               pmix_data_type_t type)
{
    pmix_info_t *slot = query_slot(o, key);

    if (slot == NULL)
        return PMIX_ERR_NOMEM;
    return PMIx_Value_load(&slot->value, data, type);
}

/* What a query's qualifiers name: a namespace (PMIX_NSPACE, or the
 * nspace of PMIX_PROCID) and a rank (PMIX_RANK, PMIX_PROCID). */
typedef struct query_target {
    const char *nspace; /* borrowed; the requester's when not qualified */
    pmix_rank_t rank;   /* WILDCARD when not qualified */
} query_target_t;

/* One key being answered: where the answer goes, who asks, about what. */
typedef struct query_key {
    query_out_t *o;
    pg_engine_t *e;
    const pg_proc_t *self;
    query_target_t t;
    const char *key;
    const pmix_info_t *q; /* the query's qualifiers */
    size_t nq;
} query_key_t;

static query_target_t query_target_of(const pmix_info_t *q, size_t nq, const pg_proc_t *self)
{
    query_target_t t = { self->nspace, PMIX_RANK_WILDCARD };
    uint64_t u;

    for (size_t i = 0; i < nq; i++) {
        const pmix_value_t *v = &q[i].value;

        if (pg_pmix_info_is(&q[i], PMIX_NSPACE) && v->type == PMIX_STRING && v->data.string != NULL)
            t.nspace = v->data.string;
        else if (pg_pmix_info_is(&q[i], PMIX_RANK) && pg_pmix_value_uint(v, &u) && u <= UINT32_MAX)
            t.rank = (pmix_rank_t)u;
        else if (pg_pmix_info_is(&q[i], PMIX_PROCID) && v->type == PMIX_PROC &&
                 v->data.proc != NULL) {
            if (v->data.proc->nspace[0] != '\0')
                t.nspace = v->data.proc->nspace;
            t.rank = v->data.proc->rank;
        }
    }
    return t;
}

static void strlist_append(void *arg, const char *item)
{
    char **list = arg, *grown;
    size_t have = *list != NULL ? strlen(*list) : 0;

    if (have > 0 && *list == NULL)
        return;
    grown = realloc(*list, have + strlen(item) + 2);
    if (grown == NULL)
        return; /* the answer is shorter; the query still answers */
    if (have > 0)
        grown[have++] = ',';
    strcpy(grown + have, item);
    *list = grown;
}

static pmix_status_t query_namespaces(const query_key_t *k)
{
    char *list = NULL;
    pmix_status_t rc;

    pg_ns_foreach(k->e, strlist_append, &list);
    rc = query_add(k->o, k->key, list != NULL ? list : "", PMIX_STRING);
    free(list);
    return rc;
}

static pmix_status_t query_add_array(const query_key_t *k, pmix_data_array_t *arr);

/* One pmix_proc_info_t row from the engine's process table. */
static pmix_status_t proc_row(pg_engine_t *e, const char *nspace, pmix_rank_t rank,
                              pmix_proc_info_t *row, pg_proc_desc_t *d)
{
    pg_proc_t p = { nspace, rank };
    pmix_status_t rc = pg_proc_describe(e, &p, d);

    if (rc != PMIX_SUCCESS)
        return rc;
    PMIX_LOAD_PROCID(&row->proc, nspace, rank);
    row->hostname = d->hostname != NULL ? strdup(d->hostname) : NULL;
    row->executable_name = d->executable != NULL ? strdup(d->executable) : NULL;
    row->pid = (pid_t)d->pid;
    row->exit_code = d->exit_code;
    row->state = d->state;
    if ((d->hostname != NULL && row->hostname == NULL) ||
        (d->executable != NULL && row->executable_name == NULL))
        return PMIX_ERR_NOMEM;
    return PMIX_SUCCESS;
}

/* PMIX_QUERY_PROC_TABLE (every rank of the nspace) or, `local`,
 * PMIX_QUERY_LOCAL_PROC_TABLE (the ranks on the requester's node). */
static pmix_status_t proc_table(const query_key_t *k, bool local)
{
    pg_engine_t *e = k->e;
    const char *nspace = k->t.nspace;
    pg_proc_desc_t mine, d;
    pmix_data_array_t *arr;
    pmix_proc_info_t *rows;
    size_t size = 0, n = 0;
    pmix_info_t *slot;
    pmix_status_t rc;
    pg_value_t v;

    if (pg_ns_attr(e, nspace, "universeSize", &v) != PMIX_SUCCESS)
        return PMIX_ERR_NOT_FOUND; /* not a namespace of this gateway */
    rc = pg_proc_describe(e, k->self, &mine);
    if (rc != PMIX_SUCCESS)
        return rc;
    while (pg_proc_describe(e, &(pg_proc_t){ nspace, (pmix_rank_t)size }, &d) == PMIX_SUCCESS)
        size++;
    arr = PMIx_Data_array_create(size, PMIX_PROC_INFO);
    if (arr == NULL && size > 0)
        return PMIX_ERR_NOMEM;
    rows = arr != NULL ? arr->array : NULL;
    for (size_t r = 0; r < size && rc == PMIX_SUCCESS; r++) {
        rc = proc_row(e, nspace, (pmix_rank_t)r, &rows[n], &d);
        if (rc == PMIX_SUCCESS && (!local || (d.hostname != NULL && mine.hostname != NULL &&
                                              strcmp(d.hostname, mine.hostname) == 0)))
            n++;
        else
            PMIX_PROC_INFO_DESTRUCT(&rows[n]);
    }
    if (arr != NULL)
        arr->size = n;
    if (rc == PMIX_SUCCESS && (slot = query_slot(k->o, k->key)) != NULL) {
        slot->value.type = PMIX_DATA_ARRAY;
        slot->value.data.darray = arr; /* the result owns it */
        return PMIX_SUCCESS;
    }
    PMIx_Data_array_free(arr);
    return rc == PMIX_SUCCESS ? PMIX_ERR_NOMEM : rc;
}

/* The ranks of `nspace` the engine knows (0: no such namespace). */
static size_t ns_size(pg_engine_t *e, const char *nspace)
{
    pg_proc_desc_t d;
    size_t size = 0;

    while (pg_proc_describe(e, &(pg_proc_t){ nspace, (pmix_rank_t)size }, &d) == PMIX_SUCCESS)
        size++;
    return size;
}

/* PMIX_QUERY_JOB_STATUS of the namespace (PMIX_NSPACE, else the
 * requester's): PMIX_SUCCESS while none of its processes failed,
 * PMIX_ERR_PROC_TERM_WO_SYNC once one ended without PMIx_Finalize (its
 * connection lost), PMIX_ERR_JOB_TERMINATED once one exited non-zero. */
static pmix_status_t query_job_status(const query_key_t *k)
{
    size_t size = ns_size(k->e, k->t.nspace);
    pmix_status_t status = PMIX_SUCCESS;
    pg_proc_desc_t d;

    if (size == 0)
        return PMIX_ERR_NOT_FOUND;
    for (size_t r = 0; r < size; r++) {
        (void)pg_proc_describe(k->e, &(pg_proc_t){ k->t.nspace, (pmix_rank_t)r }, &d);
        if (d.state == PMIX_PROC_STATE_TERM_NON_ZERO)
            status = PMIX_ERR_JOB_TERMINATED;
        else if (d.state == PMIX_PROC_STATE_TERM_WO_SYNC && status == PMIX_SUCCESS)
            status = PMIX_ERR_PROC_TERM_WO_SYNC;
    }
    return query_add(k->o, k->key, &status, PMIX_STATUS);
}

/* One namespace's entry of PMIX_QUERY_NAMESPACE_INFO: PMIX_NSPACE and
 * PMIX_CMD_LINE (its rank 0's program), as an info array. */
static pmix_status_t ns_info_entry(pg_engine_t *e, const char *nspace, pmix_info_t *entry)
{
    pmix_data_array_t *arr = PMIx_Data_array_create(2, PMIX_INFO);
    pmix_info_t *in = arr != NULL ? arr->array : NULL;
    pg_proc_desc_t d;

    if (arr == NULL)
        return PMIX_ERR_NOMEM;
    PMIX_INFO_LOAD(&in[0], PMIX_NSPACE, nspace, PMIX_STRING);
    if (pg_proc_describe(e, &(pg_proc_t){ nspace, 0 }, &d) != PMIX_SUCCESS || d.executable == NULL)
        d.executable = "";
    PMIX_INFO_LOAD(&in[1], PMIX_CMD_LINE, d.executable, PMIX_STRING);
    PMIX_LOAD_KEY(entry->key, PMIX_QUERY_NAMESPACE_INFO);
    entry->value.type = PMIX_DATA_ARRAY;
    entry->value.data.darray = arr;
    return PMIX_SUCCESS;
}

typedef struct ns_list {
    char **names;
    size_t n;
    bool nomem;
} ns_list_t;

static void ns_list_add(void *arg, const char *nspace)
{
    ns_list_t *l = arg;
    char **grown = realloc(l->names, (l->n + 1) * sizeof(*grown));

    if (grown == NULL || (grown[l->n] = strdup(nspace)) == NULL) {
        l->names = grown != NULL ? grown : l->names;
        l->nomem = true;
        return;
    }
    l->names = grown;
    l->n++;
}

/* PMIX_QUERY_NAMESPACE_INFO: every job's namespace (the root and the
 * spawned; tools' not) with its command, an array of info arrays (the
 * layout OpenPMIx's examples/tool.c reads). */
static pmix_status_t query_namespace_info(const query_key_t *k)
{
    ns_list_t l = { NULL, 0, false };
    pmix_data_array_t *arr;
    pmix_status_t rc = PMIX_SUCCESS;

    pg_ns_foreach(k->e, ns_list_add, &l);
    arr = l.nomem ? NULL : PMIx_Data_array_create(l.n, PMIX_INFO);
    for (size_t i = 0; arr != NULL && i < l.n && rc == PMIX_SUCCESS; i++)
        rc = ns_info_entry(k->e, l.names[i], &((pmix_info_t *)arr->array)[i]);
    for (size_t i = 0; i < l.n; i++)
        free(l.names[i]);
    free(l.names);
    if (rc != PMIX_SUCCESS) {
        PMIx_Data_array_free(arr);
        return rc;
    }
    return query_add_array(k, arr);
}

static pmix_status_t query_proc_table(const query_key_t *k)
{
    return proc_table(k, false);
}

static pmix_status_t query_local_proc_table(const query_key_t *k)
{
    return proc_table(k, true);
}

static void query_value_done(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                             void *cbdata)
{
    pmix_value_t *out = cbdata;

    (void)poster;
    if (status != PMIX_SUCCESS || pg_pmix_value_from_engine(value, out) != PMIX_SUCCESS)
        out->type = PMIX_UNDEF;
}

/* Any other reserved key (PMIX_JOB_SIZE, PMIX_LOCAL_PEERS, ...): the job
 * data a PMIx_Get of {nspace, rank} would read, at once. */
static pmix_status_t query_reserved(const query_key_t *k)
{
    const char *key = k->key;
    pg_proc_t target = { k->t.nspace, k->t.rank };
    pmix_value_t v;
    pmix_info_t *slot;
    pg_get_req_t q;

    if (!PMIX_CHECK_RESERVED_KEY(key))
        return PMIX_ERR_NOT_FOUND; /* a query is about the system, not posted data */
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UNDEF;
    pg_get_req_init(&q, k->self, &target, key);
    q.flags |= PG_GET_IMMEDIATE;
    (void)pg_get(k->e, &q, 0, query_value_done, &v); /* IMMEDIATE: inline, no clock */
    if (v.type == PMIX_UNDEF)
        return PMIX_ERR_NOT_FOUND;
    slot = query_slot(k->o, key);
    if (slot == NULL) {
        PMIX_VALUE_DESTRUCT(&v);
        return PMIX_ERR_NOMEM;
    }
    slot->value = v; /* moved */
    return PMIX_SUCCESS;
}

/* The spawn attributes the host honours (pg_pmix_srv_spawn.c), when it
 * serves spawn at all. */
static pmix_status_t query_spawn_support(const query_key_t *k)
{
    return query_add(k->o, k->key,
                     k->o->can_spawn ? PMIX_WDIR "," PMIX_PREFIX "," PMIX_HOST "," PMIX_SET_ENVAR
                                       "," PMIX_NOTIFY_COMPLETION "," PMIX_NOTIFY_JOB_EVENTS
                                       "," PMIX_EVENT_SILENT_TERMINATION
                                     : "",
                     PMIX_STRING);
}

/* The debugger attributes served: holding ranks in init, where the host
 * does (a tool's launch then releases them with PMIX_DEBUGGER_RELEASE). */
static pmix_status_t query_debug_support(const query_key_t *k)
{
    return query_add(k->o, k->key, k->o->can_hold ? PMIX_DEBUG_STOP_IN_INIT : "", PMIX_STRING);
}

/* No psets: an empty answer, not a missing one. */
static pmix_status_t query_empty_list(const query_key_t *k)
{
    return query_add(k->o, k->key, "", PMIX_STRING);
}

/* No psets. */
static pmix_status_t query_zero(const query_key_t *k)
{
    size_t zero = 0;

    return query_add(k->o, k->key, &zero, PMIX_SIZE);
}

/* ---- groups: every job of the gateway shares one session ---- */

/* The result slot takes the data array (owns it from then on). */
static pmix_status_t query_add_array(const query_key_t *k, pmix_data_array_t *arr)
{
    pmix_info_t *slot;

    if (arr == NULL)
        return PMIX_ERR_NOMEM;
    if ((slot = query_slot(k->o, k->key)) == NULL) {
        PMIx_Data_array_free(arr);
        return PMIX_ERR_NOMEM;
    }
    slot->value.type = PMIX_DATA_ARRAY;
    slot->value.data.darray = arr;
    return PMIX_SUCCESS;
}

static size_t groups_count(pg_engine_t *e)
{
    size_t cursor = 0, n = 0;

    while (pg_group_next(e, &cursor) != NULL)
        n++;
    return n;
}

/* PMIX_QUERY_NUM_GROUPS: the groups that exist (constructed, not yet
 * destructed). */
static pmix_status_t query_num_groups(const query_key_t *k)
{
    size_t n = groups_count(k->e);

    return query_add(k->o, k->key, &n, PMIX_SIZE);
}

/* PMIX_QUERY_GROUP_NAMES: their names (a data array of strings). */
static pmix_status_t query_group_names(const query_key_t *k)
{
    size_t n = groups_count(k->e), cursor = 0;
    pmix_data_array_t *arr = PMIx_Data_array_create(n, PMIX_STRING);
    char **names = arr != NULL ? arr->array : NULL;
    const char *name;

    for (size_t i = 0; arr != NULL && i < n && (name = pg_group_next(k->e, &cursor)) != NULL;
         i++)
        if ((names[i] = strdup(name)) == NULL) {
            PMIx_Data_array_free(arr);
            return PMIX_ERR_NOMEM;
        }
    return query_add_array(k, arr);
}

/* PMIX_QUERY_GROUP_MEMBERSHIP of the group PMIX_GROUP_ID names (a data
 * array of pmix_proc_t); no such group (or no PMIX_GROUP_ID): not found. */
static pmix_status_t query_group_membership(const query_key_t *k)
{
    const char *grp = NULL;
    const pg_proc_t *m;
    pmix_data_array_t *arr;
    size_t n = 0;

    for (size_t i = 0; i < k->nq; i++)
        if (pg_pmix_info_is(&k->q[i], PMIX_GROUP_ID) && k->q[i].value.type == PMIX_STRING)
            grp = k->q[i].value.data.string;
    if (grp == NULL || (m = pg_group_members(k->e, grp, &n)) == NULL)
        return PMIX_ERR_NOT_FOUND;
    if ((arr = PMIx_Data_array_create(n, PMIX_PROC)) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        PMIX_LOAD_PROCID(&((pmix_proc_t *)arr->array)[i], m[i].nspace, m[i].rank);
    return query_add_array(k, arr);
}

/* ---- job control: what processes declared (pg_pmix_srv_jobctl.c) ---- */

/* PMIX_JOB_CTRL_PREEMPTIBLE: of a rank (PMIX_RANK), or of its job (a
 * process of it declared the job preemptible). */
static pmix_status_t query_preemptible(const query_key_t *k)
{
    pg_proc_t p = { k->t.nspace, k->t.rank };
    pg_jobctl_t d;
    bool yes;

    if (k->t.rank == PMIX_RANK_WILDCARD) {
        pg_value_t v;

        if (pg_ns_attr(k->e, k->t.nspace, "universeSize", &v) != PMIX_SUCCESS)
            return PMIX_ERR_NOT_FOUND; /* not a namespace of this gateway */
        yes = pg_jobctl_preemptible(k->e, k->t.nspace);
    } else if (pg_jobctl_get(k->e, &p, &d) == PMIX_SUCCESS) {
        yes = d.preemptible;
    } else {
        return PMIX_ERR_NOT_FOUND;
    }
    return query_add(k->o, k->key, &yes, PMIX_BOOL);
}

/* PMIX_JOB_CTRL_CHECKPOINT_METHOD of a rank (PMIX_RANK): a data array of
 * the methods it declared (PMIX_JOB_CTRL_CHECKPOINT_SIGNAL as an int,
 * PMIX_JOB_CTRL_CHECKPOINT_EVENT as the event code); none: not found. */
static pmix_status_t query_checkpoint_method(const query_key_t *k)
{
    pg_proc_t p = { k->t.nspace, k->t.rank };
    pmix_data_array_t *arr;
    pmix_info_t *info;
    pg_jobctl_t d;
    size_t n = 0;

    if (k->t.rank == PMIX_RANK_WILDCARD || pg_jobctl_get(k->e, &p, &d) != PMIX_SUCCESS ||
        (d.ckpt_signal == 0 && d.ckpt_event == 0))
        return PMIX_ERR_NOT_FOUND;
    if ((arr = PMIx_Data_array_create((d.ckpt_signal != 0) + (d.ckpt_event != 0),
                                      PMIX_INFO)) == NULL)
        return PMIX_ERR_NOMEM;
    info = arr->array;
    if (d.ckpt_signal != 0)
        PMIX_INFO_LOAD(&info[n++], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &d.ckpt_signal, PMIX_INT);
    if (d.ckpt_event != 0)
        PMIX_INFO_LOAD(&info[n++], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &d.ckpt_event, PMIX_STATUS);
    return query_add_array(k, arr);
}

static pmix_status_t query_supported_keys(const query_key_t *k);

/* The query keys pmigate answers, each with its answer, in the order
 * PMIX_QUERY_SUPPORTED_KEYS lists them; any other reserved key is
 * answered as job data (query_reserved). */
static const struct query_row {
    const char *key;
    pmix_status_t (*answer)(const query_key_t *k);
} query_table[] = {
    { PMIX_QUERY_NAMESPACES, query_namespaces },
    { PMIX_QUERY_PROC_TABLE, query_proc_table },
    { PMIX_QUERY_LOCAL_PROC_TABLE, query_local_proc_table },
    { PMIX_QUERY_NAMESPACE_INFO, query_namespace_info },
    { PMIX_QUERY_JOB_STATUS, query_job_status },
    { PMIX_QUERY_SPAWN_SUPPORT, query_spawn_support },
    { PMIX_QUERY_DEBUG_SUPPORT, query_debug_support },
    { PMIX_QUERY_NUM_PSETS, query_zero },
    { PMIX_QUERY_PSET_NAMES, query_empty_list },
    { PMIX_QUERY_SUPPORTED_KEYS, query_supported_keys },
    { PMIX_QUERY_NUM_GROUPS, query_num_groups },
    { PMIX_QUERY_GROUP_NAMES, query_group_names },
    { PMIX_QUERY_GROUP_MEMBERSHIP, query_group_membership },
    { PMIX_JOB_CTRL_PREEMPTIBLE, query_preemptible },
    { PMIX_JOB_CTRL_CHECKPOINT_METHOD, query_checkpoint_method },
};
enum { NQUERY_ROWS = sizeof(query_table) / sizeof(query_table[0]) };

static pmix_status_t query_supported_keys(const query_key_t *k)
{
    char *list = NULL;
    pmix_status_t rc;

    for (size_t i = 0; i < NQUERY_ROWS; i++)
        strlist_append(&list, query_table[i].key);
    rc = query_add(k->o, k->key, list != NULL ? list : "", PMIX_STRING);
    free(list);
    return rc;
}

/* One key of one query: its row of the table, or job data. */
static pmix_status_t query_one(query_out_t *o, pg_engine_t *e, const pg_proc_t *self,
                               const char *key, const pmix_info_t *q, size_t nq)
{
    query_key_t k = { o, e, self, query_target_of(q, nq, self), key, q, nq };

    for (size_t i = 0; i < NQUERY_ROWS; i++)
        if (strcmp(key, query_table[i].key) == 0)
            return query_table[i].answer(&k);
    return query_reserved(&k);
}

/* One pmix_query_t off the wire: keys[], qualifiers[]. */
static pmix_status_t query_unpack_run(pg_pmix_in_t *in, query_out_t *o, pg_engine_t *e,
                                      const pg_proc_t *self)
{
    char **keys = NULL;
    pmix_info_t *q = NULL;
    size_t nkeys = 0, nq = 0;
    pmix_status_t rc;

    rc = pg_pmix_unpack_array(in->args, (void **)&keys, &nkeys, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_unpack_array(in->args, (void **)&q, &nq, PMIX_INFO);
    for (size_t k = 0; k < nkeys && rc == PMIX_SUCCESS; k++) {
        pmix_status_t one = keys[k] != NULL ? query_one(o, e, self, keys[k], q, nq)
                                            : PMIX_ERR_NOT_FOUND;
        o->asked++;
        if (one == PMIX_SUCCESS)
            o->answered++;
        else if (one == PMIX_ERR_NOMEM)
            rc = one;
    }
    pg_pmix_array_free(keys, nkeys, PMIX_STRING);
    pg_pmix_array_free(q, nq, PMIX_INFO);
    return rc;
}

int pg_pmix_serve_query(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    query_out_t o = { .can_spawn = in->peer->ops->spawn != NULL,
                      .can_hold = in->peer->ops->debugger_release != NULL };
    pmix_data_buffer_t buf;
    pmix_status_t rc, status;
    uint32_t n = 0;

    if (pg_pmix_unpack_one(in->args, &n, PMIX_UINT32) != PMIX_SUCCESS ||
        n > pg_buffer_unread(in->args))
        return PG_HANDLER_FAIL;
    if (e == NULL || n == 0)
        return pg_pmix_reply_status(in->peer, in->cmd, in->id,
                                    e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_BAD_PARAM),
               PG_HANDLER_OK;
    rc = PMIX_SUCCESS;
    for (uint32_t i = 0; i < n && rc == PMIX_SUCCESS; i++)
        rc = query_unpack_run(in, &o, e, &self);
    if (rc == PMIX_ERR_NOMEM || rc == PMIX_SUCCESS)
        status = rc != PMIX_SUCCESS           ? rc
                 : o.answered == o.asked      ? PMIX_SUCCESS
                 : o.answered > 0             ? PMIX_ERR_PARTIAL_SUCCESS
                                              : PMIX_ERR_NOT_FOUND;
    else {
        pg_pmix_array_free(o.info, o.n, PMIX_INFO);
        return PG_HANDLER_FAIL; /* not what libpmix sends */
    }
    pg_buffer_construct(&buf);
    rc = pg_pmix_msg_begin_reply(&buf, in->cmd, in->id, status);
    if (rc == PMIX_SUCCESS && (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS))
        rc = pg_pmix_pack_array(&buf, o.info, o.n, PMIX_INFO);
    pg_pmix_array_free(o.info, o.n, PMIX_INFO);
    if (rc != PMIX_SUCCESS) {
        pg_buffer_destruct(&buf);
        return pg_pmix_reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
    }
    return pg_pmix_reply_send(in->peer, &buf) == 0 ? PG_HANDLER_OK : PG_HANDLER_FAIL;
}
