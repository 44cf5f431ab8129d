/*
 * pg_pmix_client: the PMIx client API of libpmix (<pmix.h>), on top of the
 * mux (one socket to the gateway, a progress thread, replies routed by id)
 * and the cache (own puts, reserved job data, fetched values).
 *
 * Why it exists: programs written to the PMIx Standard link -lpmix and run
 * under a plain `pmigate run`; the gateway's engine applies the Standard's
 * server-side rules, this file applies the client-side ones (argument
 * conventions, the cache step of the retrieval order, PMIX_OPTIONAL,
 * PMIX_GET_REFRESH_CACHE, reserved keys, the callback contract of the
 * non-blocking calls).  Behaviour: docs/man3/, docs/pmix-transport.md.
 *
 * After each whole-job fence the gateway publishes the job's committed
 * data as the node's read-only segment (docs/shm-segment.md); a get of a
 * peer's key is then a lookup there (client/pg_cl_shm) instead of a round
 * trip, in the retrieval order's cache step, and only where the segment's
 * answer is the one the server would give.
 *
 * State: one process-wide client, because the PMIx API itself is
 * process-wide (PMIx_Init takes no handle).  `life` serialises
 * Init/Finalize; `lock` guards the cache; `commit` serialises commits from
 * taking the staged puts to the gateway's answer.  No lock the progress
 * thread takes is held while waiting for the gateway, so callbacks can
 * always run.
 */
#include "config/config.h"

#include <pmix.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client/pg_cl_shm.h"
#include "pmix/client/pg_cache.h"
#include "pmix/client/pg_mux.h"
#include "pmix/client/pg_pmix_client_int.h"
#include "pmix/client/pg_pmix_api.h"
#include "pmix/client/pg_pmix_compat.h"
#include "pmix/client/pg_pmix_spawn.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"
#include "wire/pg_pmix_frame.h"

typedef struct pg_client {
    pthread_mutex_t life;   /* Init / Finalize */
    pthread_mutex_t lock;   /* cache */
    pthread_mutex_t commit; /* one commit at a time, so they reach the gateway in put order */
    int refs;               /* PMIx_Init calls not yet finalized */
    pg_mux_t *mux;
    pg_cache_t *cache;
    pmix_proc_t self;
    pg_cl_shm_t *shm;       /* the node segment; NULL: not offered */
    uint64_t fences;        /* whole-job fences completed = segment generation */
    bool collected;         /* the last of them had PMIX_COLLECT_DATA */
} pg_client_t;

static pg_client_t client = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
                              PTHREAD_MUTEX_INITIALIZER, 0, NULL, NULL, { { 0 }, 0 },
                              NULL, 0, false };

static bool client_ready(void)
{
    return __atomic_load_n(&client.refs, __ATOMIC_ACQUIRE) > 0 && client.mux != NULL;
}

/* ---- connecting -------------------------------------------------------- */

/* The socket to the gateway: the inherited PMI_FD socketpair end (taken
 * once), or the PMIGATE_PMI_PORT unix socket (then the preamble names
 * PMI_RANK). */
static pmix_status_t client_connect(int *fd, uint32_t *rank)
{
    const char *pmi_fd = getenv("PMI_FD"), *port = getenv("PMIGATE_PMI_PORT");
    const char *pmi_rank = getenv("PMI_RANK");
    struct sockaddr_un sa;
    char *end;
    long v;

    if (pmi_fd != NULL && *pmi_fd != '\0') {
        v = strtol(pmi_fd, &end, 10);
        if (*end != '\0' || v < 0 || v > 0x7fffffff || fcntl((int)v, F_GETFD) < 0)
            return PMIX_ERR_UNREACH;
        *fd = (int)v;
        *rank = PG_PMIX_RANK_FROM_FD;
        (void)fcntl(*fd, F_SETFD, FD_CLOEXEC);
        /* the socket is ours now and closed at finalize: a later Init must
         * not take whatever file then gets its number */
        unsetenv("PMI_FD");
        return PMIX_SUCCESS;
    }
    if (port == NULL || pmi_rank == NULL || strlen(port) >= sizeof(sa.sun_path))
        return PMIX_ERR_UNREACH; /* no gateway: MPICH then runs as a singleton */
    v = strtol(pmi_rank, &end, 10);
    if (*end != '\0' || v < 0 || v > 0x7fffffff)
        return PMIX_ERR_UNREACH;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, port);
    *fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return PMIX_ERR_UNREACH;
    if (connect(*fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(*fd);
        return PMIX_ERR_UNREACH;
    }
    *rank = (uint32_t)v;
    return PMIX_SUCCESS;
}

/* Stores one view of reserved data (job: rank WILDCARD, or own rank). */
static pmix_status_t cache_view(pmix_data_buffer_t *reply, pmix_rank_t rank)
{
    pmix_info_t *info = NULL;
    size_t n = 0;
    pmix_status_t rc = pg_pmix_unpack_array(reply, (void **)&info, &n, PMIX_INFO);

    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++)
        rc = pg_cache_store(client.cache, client.self.nspace, rank, info[i].key, &info[i].value,
                            true);
    pg_pmix_array_free(info, n, PMIX_INFO);
    return rc;
}

/* The init exchange: who am I, and the reserved data of my job. */
static pmix_status_t client_handshake(void)
{
    pmix_data_buffer_t req, reply;
    char *nspace = NULL;
    pmix_rank_t rank = PMIX_RANK_UNDEF;
    uint32_t id;
    pmix_status_t rc;

    pg_buffer_construct(&req);
    rc = pg_mux_begin(client.mux, &req, PG_PMIX_CMD_INIT, &id);
    if (rc != PMIX_SUCCESS) {
        pg_buffer_destruct(&req);
        return rc;
    }
    rc = pg_mux_call(client.mux, &req, id, &reply);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_unpack_one(&reply, &nspace, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_unpack_one(&reply, &rank, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS && (nspace == NULL || strlen(nspace) > PMIX_MAX_NSLEN))
        rc = PMIX_ERR_UNPACK_FAILURE;
    if (rc == PMIX_SUCCESS) {
        PMIX_LOAD_PROCID(&client.self, nspace, rank);
        rc = cache_view(&reply, PMIX_RANK_WILDCARD);
    }
    if (rc == PMIX_SUCCESS)
        rc = cache_view(&reply, rank);
    free(nspace);
    pg_buffer_destruct(&reply);
    return rc;
}

/* The segment, when pmigate offers one (PMIGATE_SHM beside
 * PMIGATE_PMI_EXT=1, as for libpmi2).  Without it every get asks. */
static void shm_start(void)
{
    const char *ext = getenv("PMIGATE_PMI_EXT");

    client.fences = 0;
    client.collected = false;
    if (ext != NULL && strcmp(ext, "1") == 0)
        client.shm = pg_cl_shm_new(getenv("PMIGATE_SHM"), client.self.nspace);
}

static void client_teardown(void)
{
    pg_mux_free(client.mux);
    client.mux = NULL;
    pg_client_events_detach();
    pg_pmix_group_shared_clear();
    pg_cl_shm_free(client.shm);
    client.shm = NULL;
    pg_cache_free(client.cache);
    client.cache = NULL;
    memset(&client.self, 0, sizeof(client.self));
}

/* Connects (the process's connect, or a tool's), says init and takes the
 * identity the gateway gives; the first caller does it, later ones count. */
static pmix_status_t client_start(pmix_proc_t *proc, pg_client_connect_fn connect, void *arg,
                                  bool tool)
{
    pmix_status_t rc = PMIX_SUCCESS;

    pthread_mutex_lock(&client.life);
    if (client.refs == 0) {
        /* the cache first: once connected, only the mux closes the socket */
        if ((client.cache = pg_cache_new()) == NULL)
            rc = PMIX_ERR_NOMEM;
        if (rc == PMIX_SUCCESS)
            rc = connect(arg, &client.mux);
        if (rc == PMIX_SUCCESS)
            pg_client_events_attach(client.mux); /* events may follow the init reply */
        if (rc == PMIX_SUCCESS)
            rc = client_handshake();
        if (rc == PMIX_SUCCESS && !tool) /* a tool reads no rank's segment */
            shm_start();
        if (rc != PMIX_SUCCESS)
            client_teardown();
    }
    if (rc == PMIX_SUCCESS) {
        __atomic_add_fetch(&client.refs, 1, __ATOMIC_RELEASE);
        if (proc != NULL)
            *proc = client.self;
    }
    pthread_mutex_unlock(&client.life);
    return rc;
}

/* A rank's connection: PMI_FD or PMIGATE_PMI_PORT. */
static pmix_status_t rank_connect(void *arg, pg_mux_t **mux)
{
    uint32_t rank;
    pmix_status_t rc;
    int fd;

    (void)arg;
    rc = client_connect(&fd, &rank);
    if (rc == PMIX_SUCCESS && (*mux = pg_mux_new(fd, rank)) == NULL)
        rc = PMIX_ERR_UNREACH;
    return rc;
}

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
    (void)info;
    (void)ninfo;
    return client_start(proc, rank_connect, NULL, false);
}

pmix_status_t pg_client_start_tool(pmix_proc_t *proc, pg_client_connect_fn connect, void *arg)
{
    return client_start(proc, connect, arg, true);
}

int PMIx_Initialized(void)
{
    return client_ready();
}

/* ---- small helpers ------------------------------------------------------ */

static bool key_ok(const char *key)
{
    return key != NULL && key[0] != '\0' && strnlen(key, PMIX_MAX_KEYLEN + 1) <= PMIX_MAX_KEYLEN;
}

static bool info_is(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

static bool info_flag(const pmix_info_t info[], size_t n, const char *key)
{
    for (size_t i = 0; info != NULL && i < n; i++)
        if (info_is(&info[i], key))
            return PMIx_Info_true(&info[i]);
    return false;
}

static bool info_has(const pmix_info_t info[], size_t n, const char *key)
{
    for (size_t i = 0; info != NULL && i < n; i++)
        if (info_is(&info[i], key))
            return true;
    return false;
}

/* Packs info[] plus, when `extra` is given, one more boolean directive. */
static pmix_status_t pack_info_plus(pmix_data_buffer_t *buf, const pmix_info_t info[], size_t n,
                                    const char *extra)
{
    pmix_info_t *all;
    pmix_status_t rc;

    if (extra == NULL || info_flag(info, n, extra))
        return pg_pmix_pack_array(buf, info, info != NULL ? n : 0, PMIX_INFO);
    all = calloc(n + 1, sizeof(*all));
    if (all == NULL)
        return PMIX_ERR_NOMEM;
    if (n > 0)
        memcpy(all, info, n * sizeof(*all)); /* shallow: only read by pack */
    PMIX_INFO_LOAD(&all[n], extra, NULL, PMIX_BOOL);
    rc = pg_pmix_pack_array(buf, all, n + 1, PMIX_INFO);
    free(all); /* the extra entry owns nothing */
    return rc;
}

/* A request with nothing but a status in the reply. */
static pmix_status_t call_status(pmix_data_buffer_t *req, uint32_t id)
{
    pmix_data_buffer_t reply;
    pmix_status_t rc = pg_mux_call(client.mux, req, id, &reply);

    pg_buffer_destruct(&reply);
    return rc;
}

/* Callback plumbing for the *_nb calls that report only a status. */
typedef struct op_cb {
    pmix_op_cbfunc_t fn;
    void *arg;
    bool is_fence;
    bool whole_job;    /* a fence the gateway publishes a segment after */
    bool collect;      /* ... with PMIX_COLLECT_DATA */
} op_cb_t;

static void forget_fetched(void)
{
    pthread_mutex_lock(&client.lock);
    if (client.cache != NULL)
        pg_cache_forget_fetched(client.cache);
    pthread_mutex_unlock(&client.lock);
}

/* A whole-job fence ended.  The gateway counts the same fences and names
 * each segment by that count, so a segment answers only while its
 * generation equals ours; a failed fence drops the mapping (the counts may
 * part; ours can then only lag, and a lagging count never matches). */
static void fence_counted(bool whole_job, bool collect, pmix_status_t status)
{
    uint64_t n;

    if (!whole_job || client.shm == NULL)
        return;
    if (status != PMIX_SUCCESS) {
        pg_cl_shm_drop(client.shm);
        return;
    }
    n = __atomic_add_fetch(&client.fences, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&client.collected, collect, __ATOMIC_RELEASE);
    pg_cl_shm_expect(client.shm, n);
}

static void op_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    op_cb_t *cb = arg;

    (void)reply;
    if (cb->is_fence && status == PMIX_SUCCESS)
        forget_fetched();
    if (cb->is_fence)
        fence_counted(cb->whole_job, cb->collect, status);
    if (cb->fn != NULL)
        cb->fn(status, cb->arg);
    free(cb);
}

static pmix_status_t send_cb_nb(pmix_data_buffer_t *req, uint32_t id, const op_cb_t *proto)
{
    op_cb_t *cb = calloc(1, sizeof(*cb));
    pmix_status_t rc;

    if (cb == NULL) {
        pg_buffer_destruct(req);
        return PMIX_ERR_NOMEM;
    }
    *cb = *proto;
    rc = pg_mux_send_nb(client.mux, req, id, op_reply, cb);
    if (rc != PMIX_SUCCESS)
        free(cb);
    return rc;
}

static pmix_status_t send_op_nb(pmix_data_buffer_t *req, uint32_t id, pmix_op_cbfunc_t fn,
                                void *arg, bool is_fence)
{
    return send_cb_nb(req, id, &(op_cb_t){ fn, arg, is_fence, false, false });
}

/* ---- what the other API files use (pg_pmix_client_int.h) ---------------- */

pg_mux_t *pg_client_mux(void)
{
    return client_ready() ? client.mux : NULL;
}

void pg_client_self(pmix_proc_t *self)
{
    *self = client.self;
}

pmix_status_t pg_client_call_status(pmix_data_buffer_t *req, uint32_t id)
{
    return call_status(req, id);
}

pmix_status_t pg_client_send_op_nb(pmix_data_buffer_t *req, uint32_t id, pmix_op_cbfunc_t fn,
                                   void *arg)
{
    return send_op_nb(req, id, fn, arg, false);
}

/* ---- finalize and abort ------------------------------------------------- */

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo)
{
    pmix_data_buffer_t req;
    pmix_status_t rc = PMIX_SUCCESS;
    uint32_t id;

    pthread_mutex_lock(&client.life);
    if (client.refs == 0) {
        pthread_mutex_unlock(&client.life);
        return PMIX_ERR_INIT;
    }
    if (client.refs > 1) {
        __atomic_sub_fetch(&client.refs, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&client.life);
        return PMIX_SUCCESS;
    }
    /* a callback cannot stop the thread it runs on */
    if (pg_mux_on_progress_thread(client.mux)) {
        pthread_mutex_unlock(&client.life);
        return PMIX_ERR_WOULD_BLOCK;
    }
    if (info_flag(info, ninfo, PMIX_EMBED_BARRIER))
        rc = PMIx_Fence(NULL, 0, NULL, 0);
    pg_client_events_quiet(); /* the gateway closes the socket after this */
    pg_buffer_construct(&req);
    if (pg_mux_begin(client.mux, &req, PG_PMIX_CMD_FINALIZE, &id) == PMIX_SUCCESS &&
        pg_pmix_pack_array(&req, NULL, 0, PMIX_INFO) == PMIX_SUCCESS) {
        pmix_status_t frc = call_status(&req, id);
        if (rc == PMIX_SUCCESS)
            rc = frc;
    } else
        pg_buffer_destruct(&req);
    __atomic_store_n(&client.refs, 0, __ATOMIC_RELEASE);
    client_teardown();
    pthread_mutex_unlock(&client.life);
    return rc;
}

pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[], size_t nprocs)
{
    pmix_data_buffer_t req;
    char *text = (char *)(msg != NULL ? msg : "");
    pmix_status_t rc;
    uint32_t id;

    if (!client_ready())
        return PMIX_ERR_INIT;
    pg_buffer_construct(&req);
    rc = pg_mux_begin(client.mux, &req, PG_PMIX_CMD_ABORT, &id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&req, &status, PMIX_STATUS);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&req, &text, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(&req, procs, procs != NULL ? nprocs : 0, PMIX_PROC);
    if (rc != PMIX_SUCCESS) {
        pg_buffer_destruct(&req);
        return rc;
    }
    return call_status(&req, id);
}

const char *PMIx_Get_version(void)
{
    return "pmigate " PACKAGE_VERSION " (PMIx Standard client API, OpenPMIx 4.2 ABI)";
}

/* ---- put / commit / store_internal ------------------------------------------ */

static bool value_ok(const pmix_value_t *val)
{
    return val != NULL && val->type != PMIX_POINTER && pg_type_is_supported(val->type);
}

/* Does the value, packed, fit in PG_PMIX_VALUE_MAX?  One that does not
 * could never be committed (nor got back), so the put refuses it and stages
 * nothing.  Strings and byte objects are measured by their length; anything
 * holding more than a fixed-size field (arrays, info lists...) is packed to
 * be measured. */
static bool value_fits(const pmix_value_t *val)
{
    pmix_data_buffer_t scratch;
    bool fits;

    switch (val->type) {
    case PMIX_STRING:
        return val->data.string == NULL || strlen(val->data.string) < PG_PMIX_VALUE_MAX - 64;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
        return val->data.bo.size < PG_PMIX_VALUE_MAX - 64;
    case PMIX_DATA_ARRAY:
    case PMIX_INFO:
    case PMIX_REGEX:
    case PMIX_ENVAR:
    case PMIX_COORD:
    case PMIX_TOPO:
    case PMIX_GEOMETRY:
    case PMIX_DEVICE_DIST:
    case PMIX_ENDPOINT:
    case PMIX_REGATTR:
        break;
    default:
        return true; /* a fixed-size field */
    }
    pg_buffer_construct(&scratch);
    fits = pg_pmix_pack_one(&scratch, val, PMIX_VALUE) == PMIX_SUCCESS &&
           scratch.bytes_used <= PG_PMIX_VALUE_MAX;
    pg_buffer_destruct(&scratch);
    return fits;
}

pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val)
{
    pmix_status_t rc;

    if (!client_ready())
        return PMIX_ERR_INIT;
    if (!key_ok(key) || !value_ok(val))
        return PMIX_ERR_BAD_PARAM;
    if (PMIX_CHECK_RESERVED_KEY(key))
        return pg_pmix_reserved_put(key); /* reserved keys belong to the host (Standard) */
    if (!value_fits(val))
        return PMIX_ERR_BAD_PARAM; /* over PG_PMIX_VALUE_MAX: `pmigate info` says it */
    if (scope != PMIX_LOCAL && scope != PMIX_REMOTE && scope != PMIX_GLOBAL &&
        scope != PMIX_INTERNAL)
        return PMIX_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&client.lock);
    rc = pg_cache_put_own(client.cache, scope, key, val);
    pthread_mutex_unlock(&client.lock);
    return rc;
}

/* The staged puts, cut into commit requests that each fit in a frame (a
 * commit of 24 MiB of keys is several requests; each key and value goes
 * whole into one).  Built under the client's lock, sent after it. */
typedef struct commit_part {
    pmix_data_buffer_t entries; /* scope, key, value of each */
    uint32_t n;
} commit_part_t;

typedef struct commit_parts {
    commit_part_t *part;
    size_t nparts, cap;
} commit_parts_t;

static commit_part_t *commit_part_add(commit_parts_t *cp)
{
    if (cp->nparts == cp->cap) {
        size_t cap = cp->cap ? 2 * cp->cap : 4;
        commit_part_t *grown = realloc(cp->part, cap * sizeof(*grown));

        if (grown == NULL)
            return NULL;
        cp->part = grown;
        cp->cap = cap;
    }
    pg_buffer_construct(&cp->part[cp->nparts].entries);
    cp->part[cp->nparts].n = 0;
    return &cp->part[cp->nparts++];
}

static void commit_parts_free(commit_parts_t *cp)
{
    for (size_t i = 0; i < cp->nparts; i++)
        pg_buffer_destruct(&cp->part[i].entries);
    free(cp->part);
}

/* Room for the header, the command and the count before the entries. */
enum { COMMIT_ENTRIES_MAX = PG_PMIX_FRAME_MAX - 256 };

static pmix_status_t pack_staged(pmix_scope_t scope, const char *key, const pmix_value_t *val,
                                 void *arg)
{
    commit_parts_t *cp = arg;
    commit_part_t *last = cp->nparts ? &cp->part[cp->nparts - 1] : NULL;
    pmix_data_buffer_t one;
    char *k = (char *)key;
    pmix_status_t rc;

    pg_buffer_construct(&one);
    rc = pg_pmix_pack_one(&one, &scope, PMIX_SCOPE);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&one, &k, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&one, val, PMIX_VALUE);
    if (rc == PMIX_SUCCESS && one.bytes_used > COMMIT_ENTRIES_MAX)
        rc = PMIX_ERR_BAD_PARAM; /* PMIx_Put refuses such a value */
    if (rc == PMIX_SUCCESS && (last == NULL || last->entries.bytes_used + one.bytes_used >
                                                   COMMIT_ENTRIES_MAX))
        last = commit_part_add(cp);
    if (rc == PMIX_SUCCESS && last == NULL)
        rc = PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS)
        rc = pg_buffer_append(&last->entries, one.base_ptr, one.bytes_used);
    if (rc == PMIX_SUCCESS)
        last->n++;
    pg_buffer_destruct(&one);
    return rc;
}

/* One commit request of a part's entries, and its answer. */
static pmix_status_t commit_send(const commit_part_t *part)
{
    pmix_data_buffer_t req;
    pmix_status_t rc;
    uint32_t id, n = part->n;

    pg_buffer_construct(&req);
    rc = pg_mux_begin(client.mux, &req, PG_PMIX_CMD_COMMIT, &id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&req, &n, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = pg_buffer_append(&req, part->entries.base_ptr, part->entries.bytes_used);
    if (rc != PMIX_SUCCESS) {
        pg_buffer_destruct(&req);
        return rc;
    }
    return call_status(&req, id);
}

/* Sends every staged put, in as few commit requests as frames allow (one,
 * unless they hold more than a frame), and waits for each answer.  Nothing
 * is taken for committed unless every request could be built. */
static pmix_status_t commit_staged(void)
{
    commit_parts_t cp = { 0 };
    pmix_status_t rc;

    pthread_mutex_lock(&client.lock);
    rc = pg_cache_each_staged(client.cache, pack_staged, &cp);
    if (rc == PMIX_SUCCESS && cp.nparts == 0)
        rc = commit_part_add(&cp) != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM; /* nothing staged: one empty commit */
    if (rc == PMIX_SUCCESS)
        pg_cache_commit_done(client.cache);
    pthread_mutex_unlock(&client.lock);
    for (size_t i = 0; rc == PMIX_SUCCESS && i < cp.nparts; i++)
        rc = commit_send(&cp.part[i]);
    commit_parts_free(&cp);
    return rc;
}

/* Commits are serialised from taking the staged puts to the answer: two
 * threads committing at once could otherwise send in the other order than
 * they took their puts, and a key put twice would end with its older
 * value at the gateway.  The progress thread never takes `commit`, and
 * a commit from it is refused before, so waiting under it cannot block a
 * callback. */
pmix_status_t PMIx_Commit(void)
{
    pmix_status_t rc;

    if (!client_ready())
        return PMIX_ERR_INIT;
    /* it could not wait for its answer there: refuse before the staged
     * puts are taken for sent */
    if (pg_mux_on_progress_thread(client.mux))
        return PMIX_ERR_WOULD_BLOCK;
    pthread_mutex_lock(&client.commit);
    rc = client_ready() ? commit_staged() : PMIX_ERR_INIT;
    pthread_mutex_unlock(&client.commit);
    return rc;
}

pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[], pmix_value_t *val)
{
    const char *ns;
    pmix_status_t rc;

    if (!client_ready())
        return PMIX_ERR_INIT;
    if (proc == NULL || !key_ok(key) || val == NULL || !pg_type_is_supported(val->type))
        return PMIX_ERR_BAD_PARAM;
    if (PMIX_CHECK_RESERVED_KEY(key) && !pg_pmix_reserved_store(key, &rc))
        return rc;
    ns = proc->nspace[0] != '\0' ? proc->nspace : client.self.nspace;
    pthread_mutex_lock(&client.lock);
    rc = pg_cache_store(client.cache, ns, proc->rank, key, val, true);
    pthread_mutex_unlock(&client.lock);
    return rc;
}

/* ---- fence ------------------------------------------------------------ */

/* The request body fence, lookup and unpublish share: one array of
 * `type`, then the infos. On error nothing is left to release in req. */
static pmix_status_t array_info_request(uint8_t cmd, const void *array, size_t n,
                                        pmix_data_type_t type, const pmix_info_t info[],
                                        size_t ninfo, pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc;

    pg_buffer_construct(req);
    rc = pg_mux_begin(client.mux, req, cmd, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, array, n, type);
    if (rc == PMIX_SUCCESS)
        rc = pack_info_plus(req, info, ninfo, NULL);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

static pmix_status_t fence_request(const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_data_buffer_t *req, uint32_t *id)
{
    if (!client_ready())
        return PMIX_ERR_INIT;
    if (procs == NULL && nprocs != 0)
        return PMIX_ERR_BAD_PARAM;
    return array_info_request(PG_PMIX_CMD_FENCE, procs, nprocs, PMIX_PROC, info, ninfo, req, id);
}

/* The fences the gateway publishes a segment after: the whole of my job
 * named as the gateway's engine names it (NULL, or my nspace with
 * PMIX_RANK_WILDCARD; an explicit list of every rank is another fence). */
static bool fence_is_whole_job(const pmix_proc_t procs[], size_t nprocs)
{
    return nprocs == 0 ||
           (nprocs == 1 && procs[0].rank == PMIX_RANK_WILDCARD &&
            (procs[0].nspace[0] == '\0' || PMIX_CHECK_NSPACE(procs[0].nspace, client.self.nspace)));
}

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                         size_t ninfo)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = fence_request(procs, nprocs, info, ninfo, &req, &id);

    if (rc != PMIX_SUCCESS)
        return rc;
    rc = call_status(&req, id);
    if (rc == PMIX_SUCCESS)
        forget_fetched();
    fence_counted(fence_is_whole_job(procs, nprocs), info_flag(info, ninfo, PMIX_COLLECT_DATA),
                  rc);
    return rc;
}

pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = fence_request(procs, nprocs, info, ninfo, &req, &id);
    op_cb_t cb = { cbfunc, cbdata, true, fence_is_whole_job(procs, nprocs),
                   info_flag(info, ninfo, PMIX_COLLECT_DATA) };

    return rc == PMIX_SUCCESS ? send_cb_nb(&req, id, &cb) : rc;
}

/* ---- get -------------------------------------------------------------- */

/* One get, as the retrieval order sees it. */
typedef struct get_op {
    /* the names first: get_prepare clears the fields from `reserved` on */
    pmix_proc_t target;        /* normalised: nspace filled in */
    char key[PMIX_MAX_KEYLEN + 1];
    bool reserved;             /* "pmix" prefix */
    bool own_ns;               /* the target is of my namespace */
    bool qualified;            /* realm qualifiers: not answered from the cache */
    bool optional, refresh, scoped;
    bool by_cid;               /* PMIX_GROUP_CONTEXT_ID: what a group member shared */
    size_t cid;
    pmix_value_cbfunc_t cb;    /* Get_nb */
    void *cbdata;
    pmix_status_t status;      /* deferred answers */
    pmix_value_t *value;
} get_op_t;

static const char *const realm_qualifiers[] = {
    PMIX_SESSION_INFO, PMIX_JOB_INFO, PMIX_APP_INFO, PMIX_NODE_INFO, PMIX_APPNUM, PMIX_NODEID,
    PMIX_HOSTNAME, PMIX_SESSION_ID,
};

/* Copies a name of at most `max` bytes and its NUL into `dst` (max + 1
 * bytes): what PMIX_LOAD_KEY/NSPACE do, without clearing the whole field
 * first.  A wire-up makes N^2 gets, each loads a key and a
 * namespace (docs/performance.md, "Own clients at scale"). */
static void load_name(char *dst, const char *src, size_t max)
{
    size_t n = strnlen(src, max);

    memcpy(dst, src, n);
    dst[n] = '\0';
}

static pmix_status_t get_prepare(const pmix_proc_t *proc, const char *key,
                                 const pmix_info_t info[], size_t ninfo, get_op_t *op)
{
    pmix_status_t rc;

    /* the names are loaded below; clearing their 800 bytes was a tenth of
     * a get from the segment */
    memset(&op->reserved, 0, sizeof(*op) - offsetof(get_op_t, reserved));
    op->target.nspace[0] = '\0';
    op->key[0] = '\0';
    if (!client_ready())
        return PMIX_ERR_INIT;
    if (key == NULL)
        return PMIX_ERR_NOT_SUPPORTED; /* "every key of a process" is not offered */
    if (!key_ok(key) || (info == NULL && ninfo > 0))
        return PMIX_ERR_BAD_PARAM;
    /* NULL proc: a globally unique key of my namespace */
    load_name(op->target.nspace,
              proc != NULL && proc->nspace[0] != '\0' ? proc->nspace : client.self.nspace,
              PMIX_MAX_NSLEN);
    op->target.rank = proc != NULL ? proc->rank : PMIX_RANK_UNDEF;
    op->own_ns = PMIX_CHECK_NSPACE(op->target.nspace, client.self.nspace);
    load_name(op->key, key, PMIX_MAX_KEYLEN);
    op->reserved = PMIX_CHECK_RESERVED_KEY(key);
    for (size_t i = 0; ninfo > 0 && i < sizeof(realm_qualifiers) / sizeof(realm_qualifiers[0]); i++)
        op->qualified = op->qualified || info_has(info, ninfo, realm_qualifiers[i]);
    op->optional = info_flag(info, ninfo, PMIX_OPTIONAL);
    op->refresh = info_flag(info, ninfo, PMIX_GET_REFRESH_CACHE);
    op->scoped = info_has(info, ninfo, PMIX_DATA_SCOPE);
    for (size_t i = 0; info != NULL && i < ninfo; i++)
        if (info_is(&info[i], PMIX_GROUP_CONTEXT_ID)) {
            op->by_cid = true;
            PMIX_VALUE_GET_NUMBER(rc, &info[i].value, op->cid, size_t);
            if (rc != PMIX_SUCCESS)
                return PMIX_ERR_BAD_PARAM;
        }
    return PMIX_SUCCESS;
}

static bool op_is_self(const get_op_t *op, pmix_rank_t rank)
{
    return op->own_ns && rank == client.self.rank;
}

/* Answers the client itself knows without asking (the process id). */
static bool get_identity(const get_op_t *op, pmix_value_t **val, pmix_status_t *rc)
{
    bool me = op->own_ns && (op->target.rank == PMIX_RANK_UNDEF ||
                             op->target.rank == PMIX_RANK_INVALID ||
                             op_is_self(op, op->target.rank));

    if (!me || !(PMIX_CHECK_KEY(op, PMIX_PROCID) ||
                 (PMIX_CHECK_KEY(op, PMIX_RANK) && op->target.rank == PMIX_RANK_INVALID)))
        return false;
    *val = PMIx_Value_create(1);
    if (*val == NULL)
        *rc = PMIX_ERR_NOMEM;
    else if (PMIX_CHECK_KEY(op, PMIX_PROCID))
        *rc = PMIx_Value_load(*val, &client.self, PMIX_PROC);
    else
        *rc = PMIx_Value_load(*val, &client.self.rank, PMIX_PROC_RANK);
    return true;
}

/* Where an unqualified reserved key of my own job lives in the cache. */
static pmix_rank_t reserved_view_rank(const get_op_t *op)
{
    return op->target.rank == PMIX_RANK_UNDEF ? PMIX_RANK_WILDCARD : op->target.rank;
}

/* rc; unless it is success, *val (made before the failure) is released
 * and NULL, so no failed get hands back or leaks a half-made value. */
static pmix_status_t value_or_release(pmix_value_t **val, pmix_status_t rc)
{
    if (rc != PMIX_SUCCESS && *val != NULL) {
        PMIX_VALUE_RELEASE(*val);
        *val = NULL;
    }
    return rc;
}

/* The segment answers a get when the server's answer is the segment's
 * entry: a non-reserved key of a peer of my job (or without a rank) --
 * my own values are the cache's --, no refresh (that asks the server
 * first), no PMIX_DATA_SCOPE (the server filters by the poster's scope),
 * and for PMIX_OPTIONAL only after a collecting fence (without one the
 * data is not local, as in the Standard). */
static bool segment_may_answer(const get_op_t *op)
{
    pmix_rank_t t = op->target.rank;

    if (client.shm == NULL || op->reserved || op->refresh || op->scoped ||
        !op->own_ns || op_is_self(op, t))
        return false;
    if (op->optional && !__atomic_load_n(&client.collected, __ATOMIC_ACQUIRE))
        return false;
    return PMIX_RANK_IS_VALID(t) || t == PMIX_RANK_UNDEF;
}

/* Unpacks a segment entry: the server's get reply value, byte for byte. */
static int segment_take(const void *bytes, size_t len, void *arg)
{
    pmix_value_t **val = arg, *v = malloc(sizeof(*v)); /* the unpack fills it */

    if (v == NULL)
        return -1;
    if (pg_unpack_value_whole(bytes, len, v) != PMIX_SUCCESS) {
        free(v); /* a failed unpack leaves nothing allocated in it */
        return -1;
    }
    *val = v;
    return 0;
}

static bool segment_get(const get_op_t *op, pmix_value_t **val)
{
    uint32_t rank = op->target.rank == PMIX_RANK_UNDEF ? PG_CL_SHM_ANY : op->target.rank;

    return segment_may_answer(op) &&
           pg_cl_shm_get_packed(client.shm, op->key, rank, segment_take, val) == PG_CL_SHM_FOUND;
}

/* Steps 1-2 of the retrieval order, in the client.  Returns PMIX_SUCCESS
 * with *val, a final error, or PMIX_OPERATION_IN_PROGRESS: ask the server. */
static pmix_status_t get_local(const get_op_t *op, pmix_value_t **val)
{
    const pmix_value_t *hit = NULL;
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;

    *val = NULL;
    if (get_identity(op, val, &rc))
        return value_or_release(val, rc);
    /* what members shared at a group's construct came with its answer: the
     * gateway keeps none of it */
    if (op->by_cid || PMIX_CHECK_KEY(op, PMIX_GROUP_LOCAL_CID))
        return pg_pmix_group_shared_get(&op->target, op->key, op->by_cid, op->cid, val);
    if (op->reserved && op->qualified)
        return PMIX_OPERATION_IN_PROGRESS;
    pthread_mutex_lock(&client.lock);
    if (op->reserved) {
        if (!op->refresh)
            hit = pg_cache_find(client.cache, op->target.nspace, reserved_view_rank(op), op->key);
    } else {
        /* the caller's own put: what a refresh would bring is never newer
         * (the Standard looks in the cache after the refresh) */
        if (op_is_self(op, op->target.rank) || (op->own_ns && op->target.rank == PMIX_RANK_UNDEF))
            hit = pg_cache_own(client.cache, op->key);
        if (hit == NULL && !op->scoped && !op->refresh)
            hit = pg_cache_find(client.cache, op->target.nspace, op->target.rank, op->key);
    }
    if (hit != NULL) {
        *val = PMIx_Value_create(1);
        rc = *val == NULL ? PMIX_ERR_NOMEM : pg_value_copy(*val, hit);
    }
    pthread_mutex_unlock(&client.lock);
    if (hit != NULL)
        return value_or_release(val, rc);
    if (segment_get(op, val))
        return PMIX_SUCCESS; /* fenced data in the node segment */
    if (op->refresh)
        return PMIX_OPERATION_IN_PROGRESS; /* REFRESH: the server first */
    /* my job's lists left out of init are asked for once, then cached */
    if (op->reserved && op->own_ns && pg_pmix_init_on_demand(op->key))
        return PMIX_OPERATION_IN_PROGRESS;
    if (op->optional)
        return PMIX_ERR_NOT_FOUND; /* the cache was the last stop */
    /* the rest of my job's reserved data came with init: what is not there
     * does not exist */
    if (op->reserved && op->own_ns &&
        (reserved_view_rank(op) == PMIX_RANK_WILDCARD || op_is_self(op, op->target.rank)))
        return PMIX_ERR_NOT_FOUND;
    return PMIX_OPERATION_IN_PROGRESS;
}

static pmix_status_t get_request(const get_op_t *op, const pmix_info_t info[], size_t ninfo,
                                 bool nonblocking, pmix_data_buffer_t *req, uint32_t *id)
{
    char *key = (char *)op->key;
    /* reserved data never waits; a refresh only refreshes */
    const char *extra = op->reserved || op->refresh ? PMIX_IMMEDIATE : NULL;
    pmix_status_t rc;

    pg_buffer_construct(req);
    rc = pg_mux_begin(client.mux, req, PG_PMIX_CMD_GET, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &op->target, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &key, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = pack_info_plus(req, info, ninfo, extra);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &nonblocking, PMIX_BOOL);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

/* Step 3's answer: unpack, cache what may be cached. */
static pmix_status_t get_finish(const get_op_t *op, pmix_status_t status,
                                pmix_data_buffer_t *reply, pmix_value_t **val)
{
    pmix_rank_t poster = PMIX_RANK_UNDEF;
    pmix_value_t *v = NULL;

    *val = NULL;
    if (op->refresh && (status == PMIX_ERR_NOT_FOUND || status == PMIX_ERR_EXISTS_OUTSIDE_SCOPE))
        return PMIX_ERR_NOT_FOUND; /* refreshed, and still absent */
    if (status != PMIX_SUCCESS)
        return status;
    v = PMIx_Value_create(1);
    if (v == NULL)
        return PMIX_ERR_NOMEM;
    status = reply != NULL ? pg_pmix_unpack_one(reply, v, PMIX_VALUE) : PMIX_ERR_UNPACK_FAILURE;
    if (status == PMIX_SUCCESS)
        status = pg_pmix_unpack_one(reply, &poster, PMIX_PROC_RANK);
    if (status != PMIX_SUCCESS) {
        PMIX_VALUE_RELEASE(v);
        return status;
    }
    if (!op->qualified && !op->scoped) {
        pthread_mutex_lock(&client.lock);
        if (client.cache != NULL)
            (void)pg_cache_store(client.cache, op->target.nspace, op->target.rank, op->key, v,
                                 op->reserved);
        pthread_mutex_unlock(&client.lock);
    }
    *val = v;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t **val)
{
    pmix_data_buffer_t req, reply;
    get_op_t op;
    uint32_t id;
    pmix_status_t rc;

    if (val == NULL)
        return PMIX_ERR_BAD_PARAM;
    *val = NULL;
    rc = get_prepare(proc, key, info, ninfo, &op);
    if (rc == PMIX_SUCCESS)
        rc = get_local(&op, val);
    if (rc != PMIX_OPERATION_IN_PROGRESS)
        return rc;
    rc = get_request(&op, info, ninfo, false, &req, &id);
    if (rc != PMIX_SUCCESS)
        return rc;
    rc = pg_mux_call(client.mux, &req, id, &reply);
    rc = get_finish(&op, rc, &reply, val);
    pg_buffer_destruct(&reply);
    return rc;
}

/* Get_nb's callback: the value is the library's and released afterwards
 * (OpenPMIx's contract too: copy what you keep). */
static void get_nb_deliver(get_op_t *op)
{
    if (op->cb != NULL)
        op->cb(op->status, op->value, op->cbdata);
    if (op->value != NULL)
        PMIX_VALUE_RELEASE(op->value);
    free(op);
}

static void get_nb_deferred(void *arg)
{
    get_nb_deliver(arg);
}

static void get_nb_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    get_op_t *op = arg;

    op->status = get_finish(op, status, reply, &op->value);
    get_nb_deliver(op);
}

pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                          size_t ninfo, pmix_value_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    get_op_t *op = malloc(sizeof(*op));
    uint32_t id;
    pmix_status_t rc;

    if (op == NULL)
        return PMIX_ERR_NOMEM;
    rc = get_prepare(proc, key, info, ninfo, op);
    if (rc != PMIX_SUCCESS) {
        free(op);
        return rc;
    }
    op->cb = cbfunc;
    op->cbdata = cbdata;
    op->status = get_local(op, &op->value);
    if (op->status != PMIX_OPERATION_IN_PROGRESS) {
        /* answered locally: the callback still runs on the progress thread */
        rc = pg_mux_defer(client.mux, get_nb_deferred, op);
    } else {
        rc = get_request(op, info, ninfo, true, &req, &id);
        if (rc == PMIX_SUCCESS)
            rc = pg_mux_send_nb(client.mux, &req, id, get_nb_reply, op);
    }
    if (rc != PMIX_SUCCESS) {
        if (op->value != NULL)
            PMIX_VALUE_RELEASE(op->value);
        free(op);
    }
    return rc;
}

/* ---- publish / lookup / unpublish ---------------------------------------- */

static pmix_status_t publish_request(const pmix_info_t info[], size_t ninfo,
                                     pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc;

    if (!client_ready())
        return PMIX_ERR_INIT;
    if (info == NULL || ninfo == 0)
        return PMIX_ERR_BAD_PARAM;
    pg_buffer_construct(req);
    rc = pg_mux_begin(client.mux, req, PG_PMIX_CMD_PUBLISH, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, info, ninfo, PMIX_INFO);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = publish_request(info, ninfo, &req, &id);

    return rc == PMIX_SUCCESS ? call_status(&req, id) : rc;
}

pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                              void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = publish_request(info, ninfo, &req, &id);

    return rc == PMIX_SUCCESS ? send_op_nb(&req, id, cbfunc, cbdata, false) : rc;
}

static pmix_status_t keys_request(uint8_t cmd, char **keys, size_t nkeys,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_data_buffer_t *req, uint32_t *id)
{
    if (!client_ready())
        return PMIX_ERR_INIT;
    for (size_t i = 0; i < nkeys; i++)
        if (!key_ok(keys[i]))
            return PMIX_ERR_BAD_PARAM;
    return array_info_request(cmd, keys, nkeys, PMIX_STRING, info, ninfo, req, id);
}

static size_t argv_len(char **keys)
{
    size_t n = 0;

    while (keys != NULL && keys[n] != NULL)
        n++;
    return n;
}

/* The lookup reply: status, then one pdata per requested key, in order;
 * any other count is a broken reply. */
static pmix_status_t lookup_unpack(pmix_status_t status, pmix_data_buffer_t *reply,
                                   size_t nkeys, pmix_pdata_t **pd, size_t *n)
{
    *pd = NULL;
    *n = 0;
    if (status != PMIX_SUCCESS && status != PMIX_ERR_PARTIAL_SUCCESS)
        return status;
    if (reply == NULL || pg_pmix_unpack_array(reply, (void **)pd, n, PMIX_PDATA) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE;
    if (*n != nkeys) {
        pg_pmix_array_free(*pd, *n, PMIX_PDATA);
        *pd = NULL;
        *n = 0;
        return PMIX_ERR_UNPACK_FAILURE;
    }
    return status;
}

pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[],
                          size_t ninfo)
{
    pmix_data_buffer_t req, reply;
    char **keys;
    pmix_pdata_t *found = NULL;
    size_t nfound = 0;
    uint32_t id;
    pmix_status_t rc;

    if (data == NULL || ndata == 0)
        return PMIX_ERR_BAD_PARAM;
    keys = calloc(ndata, sizeof(*keys));
    if (keys == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < ndata; i++)
        keys[i] = data[i].key;
    rc = keys_request(PG_PMIX_CMD_LOOKUP, keys, ndata, info, ninfo, &req, &id);
    free(keys);
    if (rc != PMIX_SUCCESS)
        return rc;
    rc = pg_mux_call(client.mux, &req, id, &reply);
    rc = lookup_unpack(rc, &reply, ndata, &found, &nfound);
    for (size_t i = 0; i < nfound; i++)
        if (found[i].value.type != PMIX_UNDEF) {
            PMIX_VALUE_DESTRUCT(&data[i].value);
            data[i].proc = found[i].proc;
            data[i].value = found[i].value; /* moved */
            found[i].value.type = PMIX_UNDEF;
        }
    pg_pmix_array_free(found, nfound, PMIX_PDATA);
    pg_buffer_destruct(&reply);
    return rc;
}

typedef struct lookup_cb {
    pmix_lookup_cbfunc_t fn;
    void *arg;
    size_t nkeys;
} lookup_cb_t;

static void lookup_nb_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    lookup_cb_t *cb = arg;
    pmix_pdata_t *pd;
    size_t n;

    status = lookup_unpack(status, reply, cb->nkeys, &pd, &n);
    if (cb->fn != NULL)
        cb->fn(status, pd, n, cb->arg);
    pg_pmix_array_free(pd, n, PMIX_PDATA);
    free(cb);
}

pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                             pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    size_t nkeys = argv_len(keys);
    lookup_cb_t *cb;
    uint32_t id;
    pmix_status_t rc;

    if (nkeys == 0)
        return PMIX_ERR_BAD_PARAM;
    rc = keys_request(PG_PMIX_CMD_LOOKUP, keys, nkeys, info, ninfo, &req, &id);
    if (rc != PMIX_SUCCESS)
        return rc;
    cb = malloc(sizeof(*cb));
    if (cb == NULL) {
        pg_buffer_destruct(&req);
        return PMIX_ERR_NOMEM;
    }
    *cb = (lookup_cb_t){ cbfunc, cbdata, nkeys };
    rc = pg_mux_send_nb(client.mux, &req, id, lookup_nb_reply, cb);
    if (rc != PMIX_SUCCESS)
        free(cb);
    return rc;
}

pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = keys_request(PG_PMIX_CMD_UNPUBLISH, keys, argv_len(keys), info, ninfo,
                                    &req, &id);

    return rc == PMIX_SUCCESS ? call_status(&req, id) : rc;
}

pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = keys_request(PG_PMIX_CMD_UNPUBLISH, keys, argv_len(keys), info, ninfo,
                                    &req, &id);

    return rc == PMIX_SUCCESS ? send_op_nb(&req, id, cbfunc, cbdata, false) : rc;
}

/* ---- resolve peers / nodes ------------------------------------------------ */

/* A copy of a string in my job's reserved data, or NULL: from the cache,
 * or asked for (the lists init leaves out, pg_pmix_init_on_demand). */
static char *job_string(const char *key)
{
    pmix_proc_t job;
    pmix_value_t *v = NULL;
    char *s = NULL;

    PMIX_LOAD_PROCID(&job, client.self.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, key, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING &&
        v->data.string != NULL)
        s = strdup(v->data.string);
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    return s;
}

/* The job a resolve call names: mine (NULL or "" means mine), or another
 * this client cannot know about. */
static pmix_status_t resolve_nspace(const char *nspace)
{
    if (!client_ready())
        return PMIX_ERR_INIT;
    if (nspace == NULL || nspace[0] == '\0' || PMIX_CHECK_NSPACE(nspace, client.self.nspace))
        return PMIX_SUCCESS;
    return PMIX_ERR_INVALID_NAMESPACE;
}

pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist)
{
    pmix_status_t rc = resolve_nspace(nspace);

    if (nodelist == NULL)
        return PMIX_ERR_BAD_PARAM;
    *nodelist = NULL;
    if (rc == PMIX_SUCCESS)
        *nodelist = job_string(PMIX_NODE_LIST); /* NULL: no nodes assigned */
    return rc;
}

/* Fills procs from one node's comma list of ranks. */
static pmix_status_t peers_from_list(char *ranks, pmix_proc_t **procs, size_t *nprocs)
{
    size_t n = 1;
    char *save = NULL;

    for (const char *p = ranks; *p != '\0'; p++)
        n += *p == ',';
    PMIX_PROC_CREATE(*procs, n);
    if (*procs == NULL)
        return PMIX_ERR_NOMEM;
    *nprocs = 0;
    for (char *tok = strtok_r(ranks, ",", &save); tok != NULL && *nprocs < n;
         tok = strtok_r(NULL, ",", &save)) {
        pmix_proc_t *p = &(*procs)[*nprocs];

        PMIX_LOAD_PROCID(p, client.self.nspace, (pmix_rank_t)strtoul(tok, NULL, 10));
        (*nprocs)++;
    }
    if (*nprocs == 0)
        PMIX_PROC_FREE(*procs, n);
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Resolve_peers(const char *nodename, const pmix_nspace_t nspace,
                                 pmix_proc_t **procs, size_t *nprocs)
{
    pmix_status_t rc = resolve_nspace(nspace);
    char *nodes = NULL, *map = NULL, *host = NULL, *nsave = NULL, *msave = NULL;

    if (procs == NULL || nprocs == NULL)
        return PMIX_ERR_BAD_PARAM;
    *procs = NULL;
    *nprocs = 0;
    if (rc != PMIX_SUCCESS)
        return rc;
    host = nodename != NULL ? strdup(nodename) : job_string(PMIX_HOSTNAME);
    nodes = job_string(PMIX_NODE_LIST);
    map = job_string(PMIX_PROC_MAP);
    if (host == NULL || nodes == NULL || map == NULL) {
        rc = PMIX_ERR_DATA_VALUE_NOT_FOUND; /* the layout was not provided */
        goto out;
    }
    /* node i of the node list hosts the ranks of entry i of the proc map */
    for (char *node = strtok_r(nodes, ",", &nsave), *ranks = strtok_r(map, ";", &msave);
         node != NULL && ranks != NULL;
         node = strtok_r(NULL, ",", &nsave), ranks = strtok_r(NULL, ";", &msave))
        if (strcmp(node, host) == 0) {
            rc = peers_from_list(ranks, procs, nprocs);
            break;
        }
out:
    free(host);
    free(nodes);
    free(map);
    return rc; /* a node of no concern to the job: success, no peers */
}

/* ---- for the other API files (pmix/client/pg_pmix_api.h) ---------------- */

bool pg_pmix_ready(void)
{
    return client_ready();
}

pg_mux_t *pg_pmix_mux(void)
{
    return client.mux;
}

const pmix_proc_t *pg_pmix_self(void)
{
    return &client.self;
}

/* A status delivered later through one of the two callback shapes. */
typedef struct deferred_status {
    pmix_op_cbfunc_t op;
    pmix_info_cbfunc_t info;
    void *cbdata;
    pmix_status_t status;
} deferred_status_t;

static void deferred_run(void *arg)
{
    deferred_status_t *d = arg;

    if (d->op != NULL)
        d->op(d->status, d->cbdata);
    else if (d->info != NULL)
        d->info(d->status, NULL, 0, d->cbdata, NULL, NULL);
    free(d);
}

static pmix_status_t defer_status(pmix_op_cbfunc_t op, pmix_info_cbfunc_t info, void *cbdata,
                                  pmix_status_t status)
{
    deferred_status_t *d;
    pmix_status_t rc;

    if (!client_ready())
        return PMIX_ERR_INIT;
    if ((d = calloc(1, sizeof(*d))) == NULL)
        return PMIX_ERR_NOMEM;
    *d = (deferred_status_t){ op, info, cbdata, status };
    rc = pg_mux_defer(client.mux, deferred_run, d);
    if (rc != PMIX_SUCCESS)
        free(d);
    return rc;
}

static void status_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    deferred_status_t *d = arg;

    (void)reply;
    d->status = status;
    deferred_run(d);
}

pmix_status_t pg_pmix_send_status_nb(pmix_data_buffer_t *req, uint32_t id, pmix_op_cbfunc_t op,
                                     pmix_info_cbfunc_t info, void *cbdata)
{
    deferred_status_t *d = calloc(1, sizeof(*d));
    pmix_status_t rc;

    if (d == NULL) {
        pg_buffer_destruct(req);
        return PMIX_ERR_NOMEM;
    }
    *d = (deferred_status_t){ op, info, cbdata, PMIX_SUCCESS };
    rc = pg_mux_send_nb(client.mux, req, id, status_reply, d);
    if (rc != PMIX_SUCCESS)
        free(d);
    return rc;
}

pmix_status_t pg_pmix_defer_op(pmix_op_cbfunc_t cbfunc, void *cbdata, pmix_status_t status)
{
    return defer_status(cbfunc, NULL, cbdata, status);
}

pmix_status_t pg_pmix_defer_info(pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_status_t status)
{
    return defer_status(NULL, cbfunc, cbdata, status);
}

/* ---- for pg_pmix_spawn.c ------------------------------------------------- */

pg_mux_t *pg_pmix_spawn_mux(void)
{
    return client_ready() ? client.mux : NULL;
}
