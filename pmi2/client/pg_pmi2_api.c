/*
 * pg_pmi2_api: the PMI2_* entry points of libpmi2.so.0 (pmi2/pmi2.h).  Each
 * call encodes one request with the shared encoders, goes through the thread
 * multiplexer (pg_pmi2_mux.c) and reads its reply tolerantly
 * (docs/wire-protocol.md, "Client libraries: what they accept": rc missing
 * means success, pmiverbose TRUE/FALSE or
 * an integer, pmi-version missing, the lookup port in port= or value=).
 *
 * The process-wide state (the PMI-2 API is global by definition) is one
 * struct.  Init and Finalize take its lock; the other calls only read the
 * facts Init wrote, so the request path takes the lock only to count
 * itself in and out (PMI2_REQUIRE_INIT): PMI2_Finalize refuses calls that
 * start once it has begun, fails those waiting, and frees the state only
 * when the last one has left.  Without
 * a PMI environment the process is a singleton: size 1, rank 0, and local
 * stores for keys, node attributes and names (docs/wire-protocol.md,
 * "Singletons").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/pg_cl_io.h"
#include "client/pg_cl_kv.h"
#include "client/pg_cl_shm.h"
#include "client/pg_cl_util.h"
#include "pmi2/client/pg_pmi2_mux.h"
#include "pmi2/pmi2.h"

#define PMI2_MAPPING_KEY "PMI_process_mapping"
/* A key nobody puts: a get of it after a fence returns only once every
 * process has fenced (hydra), which turns the fence into a barrier. */
#define PMI2_BARRIER_KEY "-NONEXIST-KEY"

static struct pmi2_state {
    pthread_mutex_t lock;       /* init/finalize, cached facts, singleton stores */
    pthread_cond_t idle;        /* signalled when the last call in progress leaves */
    /* calls, finalizing and inited are read and changed with atomics:
     * counting a call in and out takes no lock (pmi2_enter) */
    unsigned calls;             /* calls in progress (between enter and leave) */
    bool finalizing;            /* PMI2_Finalize has begun: calls are refused */
    bool inited;
    bool want_threaded;         /* PMI2_Set_threaded before PMI2_Init */
    bool fence_is_barrier;      /* the server's kvs-fence is a true barrier (pmigate) */
    bool fd_taken;              /* PMI_FD was handed to a mux (closed by now or at
                                   finalize): never take that number again */
    pg_pmi2_mux_t *mux;         /* NULL for a singleton */
    int rank, size, appnum, spawned;
    int node_size;              /* PMI2_Info_GetSize, 0 until computed */
    char jobid[64];             /* the singleton's made-up job id */
    pg_cl_kv_t *kvs, *node, *names; /* the singleton's stores */
    pg_cl_shm_t *shm;           /* the node's shared key segment, NULL if not offered */
    uint64_t fences;            /* completed fences = the segment generation to use;
                                   written by the fencing thread only */
} pmi2 = { .lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER };

/* ---- requests -------------------------------------------------------------- */

/* Arguments of one request, read by the build functions below. */
typedef struct req {
    pg_cmd_t cmd;
    const char *a, *b;
    int i;
    bool flag;
    int ncmds;
    const pg_spawn_cmd_t *cmds;
    int npre;
    const pg_kv_t *pre;
} req_t;

static int build_init(pg_enc_t *e, const char *thrid, const void *v)
{
    (void)thrid;
    (void)v;
    return pg_enc_pmi1_init(e, 2, 0);
}

static int build_fullinit(pg_enc_t *e, const char *thrid, const void *v)
{
    const req_t *r = v;

    (void)thrid; /* M4.0 never sends thrid in fullinit either */
    return pg_enc_pmi2_fullinit(e, r->a, r->i, r->flag, pmi2.shm != NULL);
}

static int build_simple(pg_enc_t *e, const char *thrid, const void *v)
{
    return pg_enc_pmi2_request(e, ((const req_t *)v)->cmd, thrid);
}

static int build_abort(pg_enc_t *e, const char *thrid, const void *v)
{
    const req_t *r = v;

    (void)thrid;
    return pg_enc_pmi2_abort(e, r->flag, r->a);
}

/* Requests with up to two string arguments. */
static int build_pair(pg_enc_t *e, const char *thrid, const void *v)
{
    const req_t *r = v;

    switch (r->cmd) {
    case PG_CMD_PMI2_KVS_PUT:
        return pg_enc_pmi2_kvs_put(e, thrid, r->a, r->b);
    case PG_CMD_PMI2_KVS_GET:
        return pg_enc_pmi2_kvs_get(e, thrid, r->a, r->i, r->b);
    case PG_CMD_PMI2_INFO_PUTNODEATTR:
        return pg_enc_pmi2_info_putnodeattr(e, thrid, r->a, r->b);
    case PG_CMD_PMI2_INFO_GETNODEATTR:
        return pg_enc_pmi2_info_getnodeattr(e, thrid, r->a, r->flag);
    case PG_CMD_PMI2_INFO_GETJOBATTR:
        return pg_enc_pmi2_info_getjobattr(e, thrid, r->a);
    case PG_CMD_PMI2_NAME_PUBLISH:
        return pg_enc_pmi2_name_publish(e, thrid, r->a, r->b);
    case PG_CMD_PMI2_NAME_UNPUBLISH:
        return pg_enc_pmi2_name_unpublish(e, thrid, r->a);
    case PG_CMD_PMI2_NAME_LOOKUP:
        return pg_enc_pmi2_name_lookup(e, thrid, r->a);
    case PG_CMD_PMI2_JOB_CONNECT:
        return pg_enc_pmi2_job_connect(e, thrid, r->a);
    case PG_CMD_PMI2_JOB_DISCONNECT:
        return pg_enc_pmi2_job_disconnect(e, thrid, r->a);
    case PG_CMD_PMI2_RING:
        return pg_enc_pmi2_ring(e, thrid, r->i, r->a, r->b);
    case PG_CMD_PMI2_SPAWN:
        return pg_enc_pmi2_spawn(e, thrid, r->ncmds, r->cmds, r->npre, r->pre);
    default:
        return PG_WIRE_EINVAL;
    }
}

/* The server's rc: missing is success; any other failure is PMI2_FAIL
 * (servers use their own numbers: hydra 1 or -1, Slurm its error codes). */
static int reply_rc(const pg_msg_t *m)
{
    pg_str_t s = pg_msg_get(m, "rc");
    long rc;

    if (s.ptr == NULL)
        return PMI2_SUCCESS;
    return pg_str_to_long(s, &rc) == 0 && rc == 0 ? PMI2_SUCCESS : PMI2_FAIL;
}

/* found=TRUE/FALSE; when absent, a value= means found (Slurm's lookup). */
static bool reply_found(const pg_msg_t *m)
{
    pg_str_t f = pg_msg_get(m, "found");
    bool found;

    if (f.ptr != NULL && pg_str_to_bool(f, &found) == 0)
        return found;
    return pg_msg_get(m, "value").ptr != NULL;
}

/* One round trip; PMI2_SUCCESS only when the reply's rc is 0 too. */
static int pmi2_call(const req_t *r, pg_pmi2_build_fn build, pg_cmd_t expect, pg_pmi2_reply_t *reply)
{
    int rc = pg_pmi2_mux_call(pmi2.mux, build, r, expect, reply);

    return rc == PMI2_SUCCESS ? reply_rc(&reply->msg) : rc;
}

static int pmi2_call_simple(pg_cmd_t cmd, pg_cmd_t expect)
{
    req_t r = { .cmd = cmd };
    pg_pmi2_reply_t reply;
    int rc = pmi2_call(&r, build_simple, expect, &reply);

    pg_pmi2_reply_release(&reply);
    return rc;
}

static int reply_int(const pg_msg_t *m, const char *key, int *out)
{
    long v;

    if (pg_str_to_long(pg_msg_get(m, key), &v) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* Copies a reply value into a caller buffer (truncation is an error).  A
 * value the reply should carry and does not makes the reply broken: every
 * server sends value= with found=TRUE, ring-left= and ring-right=. */
static int copy_out(pg_str_t v, char *dst, int cap)
{
    if (v.ptr == NULL)
        return PMI2_FAIL;
    if (cap <= 0)
        return PMI2_ERR_INVALID_LENGTH;
    return pg_cl_copy(v, dst, (size_t)cap) == 0 ? PMI2_SUCCESS : PMI2_ERR_INVALID_LENGTH;
}

static pg_str_t cstr(const char *s)
{
    pg_str_t v = { s, s != NULL ? (uint32_t)strlen(s) : 0 };

    return v;
}

/* Counts a call out; the last one out while a finalize waits wakes it. */
static void pmi2_call_out(void)
{
    if (__atomic_sub_fetch(&pmi2.calls, 1, __ATOMIC_SEQ_CST) == 0 &&
        __atomic_load_n(&pmi2.finalizing, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&pmi2.lock);
        pthread_cond_broadcast(&pmi2.idle);
        pthread_mutex_unlock(&pmi2.lock);
    }
}

/* A call counts itself in, unless the library is not initialised or
 * PMI2_Finalize has begun (then it fails with PMI2_ERR_INIT).  Lock-free:
 * a wire-up makes N gets per rank, and two lock round trips per call were
 * a sixth of a get from the segment.  The count goes up before the flags
 * are read, and PMI2_Finalize sets `finalizing` before it reads the
 * count (both sequentially consistent): either the call sees the finalize
 * and backs out, or the finalize sees the call and waits for it. */
static int pmi2_enter(void)
{
    __atomic_add_fetch(&pmi2.calls, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pmi2.inited, __ATOMIC_SEQ_CST) &&
        !__atomic_load_n(&pmi2.finalizing, __ATOMIC_SEQ_CST))
        return PMI2_SUCCESS;
    pmi2_call_out();
    return PMI2_ERR_INIT;
}

/* Counts a call out (a cleanup handler: `entered` is pmi2_enter's result). */
static void pmi2_leave(int *entered)
{
    if (*entered == PMI2_SUCCESS)
        pmi2_call_out();
}

/* At the top of every call that uses the state: the call is counted in
 * until it returns, whichever return that is. */
#define PMI2_REQUIRE_INIT()                                                    \
    int pmi2_entered_ __attribute__((cleanup(pmi2_leave))) = pmi2_enter();     \
    if (pmi2_entered_ != PMI2_SUCCESS)                                         \
        return PMI2_ERR_INIT

/* ---- start-up and shut-down ------------------------------------------------ */

static int singleton_start(void)
{
    pmi2.kvs = pg_cl_kv_new();
    pmi2.node = pg_cl_kv_new();
    pmi2.names = pg_cl_kv_new();
    if (pmi2.kvs == NULL || pmi2.node == NULL || pmi2.names == NULL)
        return PMI2_ERR_NOMEM;
    pmi2.size = 1;
    pmi2.rank = 0;
    pmi2.appnum = -1;
    pmi2.spawned = 0;
    snprintf(pmi2.jobid, sizeof(pmi2.jobid), "singinit_kvs_%d_0", (int)getpid());
    return PMI2_SUCCESS;
}

static int read_fullinit_response(const pg_msg_t *m)
{
    pmi2.appnum = -1;
    if (reply_int(m, "rank", &pmi2.rank) != 0 || reply_int(m, "size", &pmi2.size) != 0 ||
        pmi2.size <= 0 || pmi2.rank < 0 || pmi2.rank >= pmi2.size)
        return PMI2_FAIL;
    (void)reply_int(m, "appnum", &pmi2.appnum);
    pmi2.spawned = pg_msg_get(m, "spawner-jobid").ptr != NULL;
    return PMI2_SUCCESS; /* pmi-version and pmiverbose are not needed */
}

static int server_start(const pg_cl_env_t *env)
{
    req_t r = { .cmd = PG_CMD_PMI2_FULLINIT };
    pg_pmi2_reply_t reply;
    int rc;

    if (env->mode == PG_CL_FD && pmi2.fd_taken)
        return PMI2_ERR_INIT; /* whatever file has that number now is not the server */
    if ((pmi2.mux = pg_pmi2_mux_new(env->fd)) == NULL)
        return PMI2_ERR_NOMEM;
    pmi2.fd_taken = pmi2.fd_taken || env->mode == PG_CL_FD;
    if (pmi2.want_threaded)
        pg_pmi2_mux_set_threaded(pmi2.mux);
    pmi2.fence_is_barrier = env->pmigate_ext;
    if (env->shm != NULL && env->shm[0] != '\0' && env->jobid != NULL &&
        (pmi2.shm = pg_cl_shm_new(env->shm, env->jobid)) == NULL)
        return PMI2_ERR_NOMEM;
    rc = pmi2_call(&r, build_init, PG_CMD_PMI1_RESPONSE_TO_INIT, &reply);
    pg_pmi2_reply_release(&reply);
    if (rc != PMI2_SUCCESS)
        return PMI2_ERR_INIT;
    /* Slurm needs all three keys; hydra needs pmirank */
    r.a = env->jobid != NULL ? env->jobid : "0";
    r.i = env->id >= 0 ? env->id : env->rank >= 0 ? env->rank : 0;
    r.flag = pmi2.want_threaded;
    rc = pmi2_call(&r, build_fullinit, PG_CMD_PMI2_FULLINIT_RESPONSE, &reply);
    if (rc == PMI2_SUCCESS)
        rc = read_fullinit_response(&reply.msg);
    pg_pmi2_reply_release(&reply);
    return rc == PMI2_SUCCESS ? rc : PMI2_ERR_INIT;
}

static void pmi2_forget(void)
{
    pg_pmi2_mux_free(pmi2.mux);
    pmi2.mux = NULL;
    pg_cl_kv_free(pmi2.kvs);
    pg_cl_kv_free(pmi2.node);
    pg_cl_kv_free(pmi2.names);
    pmi2.kvs = pmi2.node = pmi2.names = NULL;
    pg_cl_shm_free(pmi2.shm);
    pmi2.shm = NULL;
    pmi2.fences = 0;
    pmi2.jobid[0] = '\0';
    pmi2.node_size = 0;
    __atomic_store_n(&pmi2.inited, false, __ATOMIC_SEQ_CST);
}

int PMI2_Init(int *spawned, int *size, int *rank, int *appnum)
{
    pg_cl_env_t env;
    int rc = PMI2_SUCCESS;

    pthread_mutex_lock(&pmi2.lock);
    if (__atomic_load_n(&pmi2.finalizing, __ATOMIC_SEQ_CST)) /* what is inited now is about to go */
        rc = PMI2_ERR_INIT;
    else if (!pmi2.inited) {
        if (pg_cl_env_read(&env) != 0)
            rc = PMI2_ERR_INIT;
        else
            rc = env.mode == PG_CL_SINGLETON ? singleton_start() : server_start(&env);
        if (rc == PMI2_SUCCESS)
            __atomic_store_n(&pmi2.inited, true, __ATOMIC_SEQ_CST);
        else
            pmi2_forget();
    }
    if (rc == PMI2_SUCCESS) {
        if (spawned != NULL)
            *spawned = pmi2.spawned;
        if (size != NULL)
            *size = pmi2.size;
        if (rank != NULL)
            *rank = pmi2.rank;
        if (appnum != NULL)
            *appnum = pmi2.appnum;
    }
    pthread_mutex_unlock(&pmi2.lock);
    return rc;
}

int PMI2_Initialized(void)
{
    return __atomic_load_n(&pmi2.inited, __ATOMIC_SEQ_CST);
}

int PMI2_Set_threaded(int is_threaded)
{
    pthread_mutex_lock(&pmi2.lock);
    pmi2.want_threaded = is_threaded != 0;
    if (pmi2.mux != NULL && is_threaded)
        pg_pmi2_mux_set_threaded(pmi2.mux);
    pthread_mutex_unlock(&pmi2.lock);
    return PMI2_SUCCESS;
}

/* Calls that start from now on are refused; calls still waiting for a
 * reply fail once the socket is shut down; the state goes when the last
 * one has left (they used to find it freed under them). */
int PMI2_Finalize(void)
{
    int rc = PMI2_SUCCESS;

    pthread_mutex_lock(&pmi2.lock);
    if (__atomic_load_n(&pmi2.finalizing, __ATOMIC_SEQ_CST)) { /* another thread's finalize */
        pthread_mutex_unlock(&pmi2.lock);
        return PMI2_ERR_INIT;
    }
    __atomic_store_n(&pmi2.finalizing, true, __ATOMIC_SEQ_CST);
    if (pmi2.inited && pmi2.mux != NULL)
        rc = pmi2_call_simple(PG_CMD_PMI2_FINALIZE, PG_CMD_PMI2_FINALIZE_RESPONSE);
    if (pmi2.mux != NULL)
        pg_pmi2_mux_shutdown(pmi2.mux);
    while (__atomic_load_n(&pmi2.calls, __ATOMIC_SEQ_CST) > 0)
        pthread_cond_wait(&pmi2.idle, &pmi2.lock);
    pmi2_forget();
    __atomic_store_n(&pmi2.finalizing, false, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pmi2.lock);
    return rc;
}

int PMI2_Abort(int flag, const char msg[])
{
    req_t r = { .cmd = PG_CMD_PMI2_ABORT, .a = msg, .flag = flag != 0 };

    fprintf(stderr, "PMI2_Abort(%d): %s\n", flag, msg != NULL ? msg : "");
    fflush(stderr);
    /* counted in and never out: the process ends here, and a finalize
     * racing it must not free the mux under the send */
    if (pmi2_enter() == PMI2_SUCCESS && pmi2.mux != NULL)
        (void)pg_pmi2_mux_send(pmi2.mux, build_abort, &r);
    exit(flag != 0 ? flag : 1);
}

/* ---- jobs ------------------------------------------------------------------ */

/* Asked every time (a singleton makes its id up at init): the request is
 * cheap and the answer is the server's to give. */
int PMI2_Job_GetId(char jobid[], int jobid_size)
{
    req_t r = { .cmd = PG_CMD_PMI2_JOB_GETID };
    pg_pmi2_reply_t reply;
    pg_str_t id;
    int rc;

    PMI2_REQUIRE_INIT();
    if (jobid == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux == NULL)
        return copy_out(cstr(pmi2.jobid), jobid, jobid_size);
    rc = pmi2_call(&r, build_simple, PG_CMD_PMI2_JOB_GETID_RESPONSE, &reply);
    id = pg_msg_get(&reply.msg, "jobid");
    if (rc == PMI2_SUCCESS)
        rc = id.ptr != NULL && id.len > 0 ? copy_out(id, jobid, jobid_size) : PMI2_FAIL;
    pg_pmi2_reply_release(&reply);
    return rc;
}

int PMI2_Job_GetRank(int *rank)
{
    PMI2_REQUIRE_INIT();
    if (rank == NULL)
        return PMI2_ERR_INVALID_ARG;
    *rank = pmi2.rank;
    return PMI2_SUCCESS;
}

static int spawn_request(const req_t *r, char jobId[], int jobIdSize, int errors[], int nerrors)
{
    pg_pmi2_reply_t reply;
    int mux = pg_pmi2_mux_call(pmi2.mux, build_pair, r, PG_CMD_PMI2_SPAWN_RESPONSE, &reply), n;
    int rc = mux == PMI2_SUCCESS ? reply_rc(&reply.msg) : mux;

    for (int i = 0; errors != NULL && i < nerrors; i++)
        errors[i] = 0;
    /* a failed spawn's errcodes say which children could not start */
    if (mux == PMI2_SUCCESS && errors != NULL)
        (void)pg_cl_int_list(pg_msg_get(&reply.msg, "errcodes"), errors, nerrors, &n);
    if (rc == PMI2_SUCCESS && jobId != NULL && jobIdSize > 0)
        rc = copy_out(pg_msg_get(&reply.msg, "jobid"), jobId, jobIdSize);
    pg_pmi2_reply_release(&reply);
    return rc;
}

int PMI2_Job_Spawn(int count, const char *cmds[], int argcs[], const char **argvs[],
                   const int maxprocs[], const int info_keyval_sizes[],
                   const PMI2_keyval_t *info_keyval_vectors[], int preput_keyval_size,
                   const PMI2_keyval_t preput_keyval_vector[], char jobId[], int jobIdSize,
                   int errors[])
{
    req_t r = { .cmd = PG_CMD_PMI2_SPAWN, .ncmds = count, .npre = preput_keyval_size };
    pg_spawn_cmd_t *sc;
    int rc, total = 0;

    PMI2_REQUIRE_INIT();
    if (count <= 0 || cmds == NULL || maxprocs == NULL || preput_keyval_size < 0)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux == NULL)
        return PMI2_FAIL; /* a singleton has no process manager to spawn with */
    if ((sc = calloc((size_t)count, sizeof(*sc))) == NULL)
        return PMI2_ERR_NOMEM;
    /* PMI2_keyval_t and pg_kv_t are both {const char *key, *val} */
    for (int i = 0; i < count; i++) {
        sc[i] = (pg_spawn_cmd_t){ .command = cmds[i], .maxprocs = maxprocs[i],
                                  .argc = argcs != NULL ? argcs[i] : 0,
                                  .argv = argvs != NULL ? argvs[i] : NULL };
        if (info_keyval_sizes != NULL && info_keyval_vectors != NULL) {
            sc[i].ninfo = info_keyval_sizes[i];
            sc[i].info = (const pg_kv_t *)info_keyval_vectors[i];
        }
        total += maxprocs[i];
    }
    r.cmds = sc;
    r.pre = (const pg_kv_t *)preput_keyval_vector;
    rc = spawn_request(&r, jobId, jobIdSize, errors, total);
    free(sc);
    return rc;
}

/* No server implements job-connect (hydra aborts the job on it); a server
 * that answers kvscopy=TRUE asks for a KVS copy this library cannot do. */
int PMI2_Job_Connect(const char jobid[], PMI2_Connect_comm_t *conn)
{
    req_t r = { .cmd = PG_CMD_PMI2_JOB_CONNECT, .a = jobid };
    pg_pmi2_reply_t reply;
    int rc;

    (void)conn;
    PMI2_REQUIRE_INIT();
    if (jobid == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux == NULL)
        return PMI2_FAIL;
    rc = pmi2_call(&r, build_pair, PG_CMD_PMI2_JOB_CONNECT_RESPONSE, &reply);
    if (rc == PMI2_SUCCESS && pg_str_eq(pg_msg_get(&reply.msg, "kvscopy"), "TRUE"))
        rc = PMI2_ERR_OTHER;
    pg_pmi2_reply_release(&reply);
    return rc;
}

int PMI2_Job_Disconnect(const char jobid[])
{
    req_t r = { .cmd = PG_CMD_PMI2_JOB_DISCONNECT, .a = jobid };
    pg_pmi2_reply_t reply;
    int rc;

    PMI2_REQUIRE_INIT();
    if (jobid == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux == NULL)
        return PMI2_FAIL;
    rc = pmi2_call(&r, build_pair, PG_CMD_PMI2_JOB_DISCONNECT_RESPONSE, &reply);
    pg_pmi2_reply_release(&reply);
    return rc;
}

/* ---- key-value space --------------------------------------------------------- */

static int check_key_value(const char *key, const char *value)
{
    if (key == NULL || key[0] == '\0')
        return PMI2_ERR_INVALID_KEY;
    if (strlen(key) > PMI2_MAX_KEYLEN)
        return PMI2_ERR_INVALID_KEY_LENGTH;
    if (value == NULL)
        return PMI2_ERR_INVALID_VAL;
    return strlen(value) > PMI2_MAX_VALLEN ? PMI2_ERR_INVALID_VAL_LENGTH : PMI2_SUCCESS;
}

/* Stores into a singleton map under the state lock. */
static int local_put(pg_cl_kv_t *kv, const char *key, const char *value)
{
    int rc;

    pthread_mutex_lock(&pmi2.lock);
    rc = pg_cl_kv_put_cstr(kv, key, value) == 0 ? PMI2_SUCCESS : PMI2_ERR_NOMEM;
    pthread_mutex_unlock(&pmi2.lock);
    return rc;
}

/* Copies a singleton map's value out: found or not, under the state lock. */
static int local_get(pg_cl_kv_t *kv, const char *key, char *dst, int cap, bool *found)
{
    const char *v;
    int rc = PMI2_SUCCESS;

    pthread_mutex_lock(&pmi2.lock);
    v = pg_cl_kv_get(kv, key, NULL);
    *found = v != NULL;
    if (v != NULL)
        rc = copy_out(cstr(v), dst, cap);
    pthread_mutex_unlock(&pmi2.lock);
    return rc;
}

static int put_pair(pg_cmd_t cmd, pg_cmd_t expect, const char *key, const char *value)
{
    req_t r = { .cmd = cmd, .a = key, .b = value };
    pg_pmi2_reply_t reply;
    int rc = pmi2_call(&r, build_pair, expect, &reply);

    pg_pmi2_reply_release(&reply);
    return rc;
}

/* A put of a key or a node attribute: checked first, then kept in the
 * singleton's own store `*local` (read once init is known done) or sent. */
static int put_checked(pg_cl_kv_t *const *local, pg_cmd_t cmd, pg_cmd_t expect, const char *key,
                       const char *value)
{
    int rc = check_key_value(key, value);

    PMI2_REQUIRE_INIT();
    if (rc != PMI2_SUCCESS)
        return rc;
    if (pmi2.mux == NULL)
        return local_put(*local, key, value);
    return put_pair(cmd, expect, key, value);
}

int PMI2_KVS_Put(const char key[], const char value[])
{
    return put_checked(&pmi2.kvs, PG_CMD_PMI2_KVS_PUT, PG_CMD_PMI2_KVS_PUT_RESPONSE, key, value);
}

int PMI2_KVS_Fence(void)
{
    req_t r = { .cmd = PG_CMD_PMI2_KVS_GET, .i = PMI2_ID_NULL, .b = PMI2_BARRIER_KEY };
    pg_pmi2_reply_t reply;
    int rc;

    PMI2_REQUIRE_INIT();
    if (pmi2.mux == NULL)
        return PMI2_SUCCESS;
    rc = pmi2_call_simple(PG_CMD_PMI2_KVS_FENCE, PG_CMD_PMI2_KVS_FENCE_RESPONSE);
    if (rc != PMI2_SUCCESS) {
        pg_cl_shm_drop(pmi2.shm); /* out of step with the server's count now */
        return rc;
    }
    if (pmi2.fence_is_barrier) {
        /* pmigate published this fence's segment before answering */
        pg_cl_shm_expect(pmi2.shm, ++pmi2.fences);
        return rc;
    }
    /* hydra's fence returns at once; the get of a key nobody puts returns
     * when everyone has fenced (found=FALSE is the expected answer) */
    rc = pmi2_call(&r, build_pair, PG_CMD_PMI2_KVS_GET_RESPONSE, &reply);
    pg_pmi2_reply_release(&reply);
    return rc;
}

/* Copies a found value; too long: a truncated copy and -(needed length). */
static int kvs_value_out(pg_str_t v, char *value, int maxvalue, int *vallen)
{
    if (v.ptr == NULL)
        return PMI2_FAIL; /* found=TRUE without a value: a broken reply */
    if (maxvalue <= 0)
        return PMI2_ERR_INVALID_LENGTH;
    if (pg_cl_copy(v, value, (size_t)maxvalue) != 0) {
        if (vallen != NULL)
            *vallen = -(int)v.len;
        return PMI2_SUCCESS;
    }
    if (vallen != NULL)
        *vallen = (int)v.len;
    return PMI2_SUCCESS;
}

/* A get from the segment of the last fence: what the server would answer,
 * without asking it (pg_cl_shm.h says when that holds). */
static bool kvs_get_shm(const char *key, int src, char *value, int maxvalue, int *vallen)
{
    size_t len;

    if (maxvalue <= 0 || pg_cl_shm_get(pmi2.shm, PG_CL_SHM_PMI2, key, src, pmi2.rank, value,
                                       (size_t)maxvalue, &len) != PG_CL_SHM_FOUND)
        return false;
    if (vallen != NULL)
        *vallen = len < (size_t)maxvalue ? (int)len : -(int)len;
    return true;
}

/* A get from the singleton's store, answered as a server's reply would be
 * (a too small buffer gets the prefix and -(length)). */
static int kvs_get_singleton(const char *key, char *value, int maxvalue, int *vallen)
{
    const char *v;
    int rc = PMI2_FAIL;

    pthread_mutex_lock(&pmi2.lock);
    v = pg_cl_kv_get(pmi2.kvs, key, NULL);
    if (v != NULL) {
        rc = kvs_value_out(cstr(v), value, maxvalue, vallen);
    } else if (strcmp(key, PMI2_BARRIER_KEY) == 0) {
        rc = PMI2_SUCCESS; /* MPICH's barrier idiom works in a singleton too */
        if (vallen != NULL)
            *vallen = 0;
    }
    pthread_mutex_unlock(&pmi2.lock);
    return rc;
}

/* Gets answered without a round trip: the node's shared segment, or the
 * singleton's store.  *handled tells whether the answer is final. */
static int kvs_get_local(const char *key, int src, char *value, int maxvalue, int *vallen,
                         bool *handled)
{
    *handled = pmi2.mux == NULL;
    if (*handled)
        return kvs_get_singleton(key, value, maxvalue, vallen);
    *handled = kvs_get_shm(key, src, value, maxvalue, vallen);
    return PMI2_SUCCESS;
}

int PMI2_KVS_Get(const char *jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
                 int *vallen)
{
    req_t r = { .cmd = PG_CMD_PMI2_KVS_GET, .a = jobid, .i = src_pmi_id, .b = key };
    pg_pmi2_reply_t reply;
    bool handled;
    int rc;

    PMI2_REQUIRE_INIT();
    if (key == NULL || value == NULL)
        return PMI2_ERR_INVALID_ARG;
    rc = kvs_get_local(key, src_pmi_id, value, maxvalue, vallen, &handled);
    if (handled)
        return rc;
    rc = pmi2_call(&r, build_pair, PG_CMD_PMI2_KVS_GET_RESPONSE, &reply);
    if (rc == PMI2_SUCCESS)
        rc = reply_found(&reply.msg)
                 ? kvs_value_out(pg_msg_get(&reply.msg, "value"), value, maxvalue, vallen)
                 : PMI2_FAIL;
    pg_pmi2_reply_release(&reply);
    return rc;
}

/* ---- attributes ----------------------------------------------------------- */

static int singleton_jobattr(const char *name, char *value, int valuelen, int *found)
{
    const char *v = strcmp(name, PMI2_MAPPING_KEY) == 0 ? "(vector,(0,1,1))"
                    : strcmp(name, "universeSize") == 0 ? "1"
                                                         : NULL;

    *found = v != NULL;
    return v != NULL ? copy_out(cstr(v), value, valuelen) : PMI2_SUCCESS;
}

/* info-getjobattr / info-getnodeattr: *found, and the value when found. */
static int get_attr(pg_cmd_t cmd, pg_cmd_t expect, const char *name, bool wait, char *value,
                    int valuelen, int *found)
{
    req_t r = { .cmd = cmd, .a = name, .flag = wait };
    pg_pmi2_reply_t reply;
    int rc = pmi2_call(&r, build_pair, expect, &reply);

    *found = 0;
    if (rc == PMI2_SUCCESS && reply_found(&reply.msg)) {
        rc = copy_out(pg_msg_get(&reply.msg, "value"), value, valuelen);
        *found = rc != PMI2_FAIL; /* found, unless the reply was broken */
    }
    pg_pmi2_reply_release(&reply);
    return rc;
}

int PMI2_Info_GetJobAttr(const char name[], char value[], int valuelen, int *found)
{
    PMI2_REQUIRE_INIT();
    if (name == NULL || value == NULL || found == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux == NULL)
        return singleton_jobattr(name, value, valuelen, found);
    return get_attr(PG_CMD_PMI2_INFO_GETJOBATTR, PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE, name, false,
                    value, valuelen, found);
}

int PMI2_Info_GetNodeAttr(const char name[], char value[], int valuelen, int *found, int waitfor)
{
    bool have;
    int rc;

    PMI2_REQUIRE_INIT();
    if (name == NULL || value == NULL || found == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux != NULL)
        return get_attr(PG_CMD_PMI2_INFO_GETNODEATTR, PG_CMD_PMI2_INFO_GETNODEATTR_RESPONSE, name,
                        waitfor != 0, value, valuelen, found);
    /* a singleton is alone on its node: waiting could never end */
    rc = local_get(pmi2.node, name, value, valuelen, &have);
    *found = have;
    return rc;
}

int PMI2_Info_PutNodeAttr(const char name[], const char value[])
{
    return put_checked(&pmi2.node, PG_CMD_PMI2_INFO_PUTNODEATTR,
                       PG_CMD_PMI2_INFO_PUTNODEATTR_RESPONSE, name, value);
}

/* An attribute holding "i,j,k". */
static int int_array(int rc, const char *text, int found, int array[], int arraylen, int *outlen)
{
    if (rc != PMI2_SUCCESS || !found) {
        *outlen = 0;
        return rc;
    }
    if (pg_cl_int_list(cstr(text), array, arraylen, outlen) != 0)
        return PMI2_ERR_INVALID_VAL;
    if (*outlen > arraylen)
        *outlen = arraylen;
    return PMI2_SUCCESS;
}

int PMI2_Info_GetNodeAttrIntArray(const char name[], int array[], int arraylen, int *outlen,
                                  int *found)
{
    char text[PMI2_MAX_ATTRVALUE + 1];
    int rc;

    if (array == NULL || outlen == NULL || found == NULL || arraylen < 0)
        return PMI2_ERR_INVALID_ARG;
    rc = PMI2_Info_GetNodeAttr(name, text, sizeof(text), found, 0);
    return int_array(rc, text, *found, array, arraylen, outlen);
}

int PMI2_Info_GetJobAttrIntArray(const char name[], int array[], int arraylen, int *outlen,
                                 int *found)
{
    char text[PMI2_MAX_ATTRVALUE + 1];
    int rc;

    if (array == NULL || outlen == NULL || found == NULL || arraylen < 0)
        return PMI2_ERR_INVALID_ARG;
    rc = PMI2_Info_GetJobAttr(name, text, sizeof(text), found);
    return int_array(rc, text, *found, array, arraylen, outlen);
}

/* Processes on this node: from PMI_process_mapping, else MPI_LOCALNRANKS. */
static int count_node_ranks(void)
{
    char mapping[PMI2_MAX_ATTRVALUE + 1];
    const char *env = getenv("MPI_LOCALNRANKS");
    int found = 0, count = 0;

    if (PMI2_Info_GetJobAttr(PMI2_MAPPING_KEY, mapping, sizeof(mapping), &found) == PMI2_SUCCESS &&
        found && pg_cl_mapping_clique(mapping, pmi2.rank, pmi2.size, NULL, 0, &count) == 0 &&
        count > 0)
        return count;
    count = env != NULL ? atoi(env) : 0;
    return count > 0 ? count : 1;
}

int PMI2_Info_GetSize(int *size)
{
    PMI2_REQUIRE_INIT();
    if (size == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.node_size == 0) {
        int n = count_node_ranks();

        pthread_mutex_lock(&pmi2.lock);
        pmi2.node_size = n;
        pthread_mutex_unlock(&pmi2.lock);
    }
    *size = pmi2.node_size;
    return PMI2_SUCCESS;
}

/* ---- name service ------------------------------------------------------------- */

int PMI2_Nameserv_publish(const char service_name[], const PMI2_keyval_t *info_ptr,
                          const char port[])
{
    bool dup;
    char old[2];

    (void)info_ptr; /* every server ignores the infos; infokeycount=0 is sent */
    PMI2_REQUIRE_INIT();
    if (service_name == NULL || port == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux != NULL)
        return put_pair(PG_CMD_PMI2_NAME_PUBLISH, PG_CMD_PMI2_NAME_PUBLISH_RESPONSE, service_name,
                        port);
    (void)local_get(pmi2.names, service_name, old, sizeof(old), &dup);
    return dup ? PMI2_FAIL : local_put(pmi2.names, service_name, port);
}

int PMI2_Nameserv_lookup(const char service_name[], const PMI2_keyval_t *info_ptr, char port[],
                         int portLen)
{
    req_t r = { .cmd = PG_CMD_PMI2_NAME_LOOKUP, .a = service_name };
    pg_pmi2_reply_t reply;
    pg_str_t p;
    bool found;
    int rc;

    (void)info_ptr;
    PMI2_REQUIRE_INIT();
    if (service_name == NULL || port == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux == NULL) {
        rc = local_get(pmi2.names, service_name, port, portLen, &found);
        return found ? rc : PMI2_FAIL;
    }
    rc = pmi2_call(&r, build_pair, PG_CMD_PMI2_NAME_LOOKUP_RESPONSE, &reply);
    /* hydra answers port=, Slurm value= */
    p = pg_msg_get(&reply.msg, "port");
    if (p.ptr == NULL)
        p = pg_msg_get(&reply.msg, "value");
    if (rc == PMI2_SUCCESS)
        rc = p.ptr != NULL && !pg_str_eq(pg_msg_get(&reply.msg, "found"), "FALSE")
                 ? copy_out(p, port, portLen)
                 : PMI2_FAIL;
    pg_pmi2_reply_release(&reply);
    return rc;
}

int PMI2_Nameserv_unpublish(const char service_name[], const PMI2_keyval_t *info_ptr)
{
    int rc;

    (void)info_ptr;
    PMI2_REQUIRE_INIT();
    if (service_name == NULL)
        return PMI2_ERR_INVALID_ARG;
    if (pmi2.mux != NULL)
        return put_pair(PG_CMD_PMI2_NAME_UNPUBLISH, PG_CMD_PMI2_NAME_UNPUBLISH_RESPONSE, service_name,
                        NULL);
    pthread_mutex_lock(&pmi2.lock);
    rc = pg_cl_kv_del(pmi2.names, service_name) == 0 ? PMI2_SUCCESS : PMI2_FAIL;
    pthread_mutex_unlock(&pmi2.lock);
    return rc;
}

/* ---- Slurm's ring ------------------------------------------------------------- */

int PMIX_Ring(const char value[], int *rank, int *ranks, char left[], char right[], int maxvalue)
{
    req_t r = { .cmd = PG_CMD_PMI2_RING, .a = value, .b = value, .i = 1 };
    pg_pmi2_reply_t reply;
    int rc;

    PMI2_REQUIRE_INIT();
    if (value == NULL || rank == NULL || ranks == NULL || left == NULL || right == NULL)
        return PMI2_ERR_INVALID_ARG;
    *ranks = pmi2.size;
    if (pmi2.mux == NULL) {
        *rank = 0;
        rc = copy_out(cstr(value), left, maxvalue);
        return rc == PMI2_SUCCESS ? copy_out(cstr(value), right, maxvalue) : rc;
    }
    rc = pmi2_call(&r, build_pair, PG_CMD_PMI2_RING_RESPONSE, &reply);
    if (rc == PMI2_SUCCESS && reply_int(&reply.msg, "ring-count", rank) != 0)
        rc = PMI2_FAIL;
    if (rc == PMI2_SUCCESS)
        rc = copy_out(pg_msg_get(&reply.msg, "ring-left"), left, maxvalue);
    if (rc == PMI2_SUCCESS)
        rc = copy_out(pg_msg_get(&reply.msg, "ring-right"), right, maxvalue);
    pg_pmi2_reply_release(&reply);
    return rc;
}
