/*
 * pg_pmi1_cl: the PMI-1 client protocol (see pg_pmi1_cl.h): requests built
 * with the shared encoders, replies framed and parsed by the shared codec,
 * and the tolerance rules of docs/wire-protocol.md, "Client libraries: what
 * they accept".
 */
#include "pmi1/client/pg_pmi1_cl.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/pg_cl_io.h"
#include "client/pg_cl_kv.h"
#include "client/pg_cl_shm.h"
#include "client/pg_cl_util.h"
#include "parser/pg_parse.h"
#include "pmi1/pmi.h"
#include "wire/pg_shm_format.h"

/* The init-line attribute that asks pmigate for keyval_cache pushes
 * (pmi1/pg_pmi1_server.h PG_PMI1_KEYVAL_CACHE_ATTR). */
#define PMI1_CACHE_OPT_IN "pmigate_keyval_cache"

enum {
    PMI1_LINE_MAX = 1024,        /* what every server reads in one line, '\n' included */
    PMI1_DEFAULT_KVSNAME_MAX = 256,
    PMI1_DEFAULT_KEYLEN_MAX = 64,
    PMI1_DEFAULT_VALLEN_MAX = 1024,
};

struct pg_pmi1_cl {
    pg_cl_conn_t conn;      /* conn.fd < 0: singleton */
    pthread_mutex_t write_lock; /* every write: an abort may come from another thread */
    bool ext;               /* ask for keyval_cache pushes */
    bool shm_reader;        /* tell init we read the key segment */
    pg_cl_kv_t *cache;      /* own puts and pushed pairs; the singleton's store */
    pg_cl_kv_t *names;      /* singleton name service */
    pg_cl_shm_t *shm;       /* the node's shared segment, NULL when not offered */
    uint64_t barriers;      /* completed barriers: the segment generation to use */
    int rank;               /* for the segment's "own value first" rule */
    pg_msg_t reply;         /* last reply; tokens point into conn.buf */
    int kvsname_max, keylen_max, vallen_max;
    char kvsname[PMI1_DEFAULT_KVSNAME_MAX + 1];
};

pg_pmi1_cl_t *pg_pmi1_cl_new(int fd, bool keyval_cache, bool shm_reader)
{
    pg_pmi1_cl_t *cl = calloc(1, sizeof(*cl));

    if (cl == NULL)
        return NULL;
    pg_cl_conn_init(&cl->conn, fd);
    pthread_mutex_init(&cl->write_lock, NULL);
    pg_msg_init(&cl->reply);
    cl->ext = keyval_cache;
    cl->shm_reader = shm_reader;
    cl->kvsname_max = PMI1_DEFAULT_KVSNAME_MAX;
    cl->keylen_max = PMI1_DEFAULT_KEYLEN_MAX;
    cl->vallen_max = PMI1_DEFAULT_VALLEN_MAX;
    cl->cache = pg_cl_kv_new();
    cl->names = pg_cl_kv_new();
    if (cl->cache == NULL || cl->names == NULL) {
        cl->conn.fd = -1; /* the caller still owns fd on failure */
        pg_pmi1_cl_free(cl);
        return NULL;
    }
    return cl;
}

void pg_pmi1_cl_free(pg_pmi1_cl_t *cl)
{
    if (cl == NULL)
        return;
    if (cl->conn.fd >= 0)
        close(cl->conn.fd);
    pg_cl_conn_release(&cl->conn);
    pg_msg_release(&cl->reply);
    pg_cl_kv_free(cl->cache);
    pg_cl_kv_free(cl->names);
    pg_cl_shm_free(cl->shm);
    pthread_mutex_destroy(&cl->write_lock);
    free(cl);
}

int pg_pmi1_cl_use_shm(pg_pmi1_cl_t *cl, const char *path, int rank)
{
    pg_cl_shm_free(cl->shm);
    cl->shm = pg_cl_shm_new(path, cl->kvsname);
    cl->rank = rank;
    return cl->shm != NULL || path == NULL || path[0] == '\0' ? 0 : -1;
}

bool pg_pmi1_cl_is_singleton(const pg_pmi1_cl_t *cl)
{
    return cl->conn.fd < 0;
}

const char *pg_pmi1_cl_cached(const pg_pmi1_cl_t *cl, const char *key)
{
    return pg_cl_kv_get(cl->cache, key, NULL);
}

/* ---- replies ------------------------------------------------------------ */

/* rc of a reply: missing counts as success (S and H4.0 leave it out of many
 * replies); an unreadable rc counts as failure. */
static int reply_rc(const pg_msg_t *m)
{
    pg_str_t s = pg_msg_get(m, "rc");
    long rc;

    if (s.ptr == NULL)
        return 0;
    return pg_str_to_long(s, &rc) == 0 ? (int)rc : -1;
}

/* S's publish/unpublish/lookup results carry info=ok|fail and no rc. */
static bool reply_ok(const pg_msg_t *m)
{
    return reply_rc(m) == 0 && !pg_str_eq(pg_msg_get(m, "info"), "fail");
}

static void cache_pushed_pairs(pg_pmi1_cl_t *cl, const pg_msg_t *m)
{
    for (uint32_t i = 0; i < m->ntokens; i++)
        if (m->tokens[i].val.ptr != NULL && m->tokens[i].key.len > 0)
            (void)pg_cl_kv_put(cl->cache, m->tokens[i].key, m->tokens[i].val);
}

/* Reads lines until the one named `expect` arrives; cl->reply holds it.
 * keyval_cache lines fill the cache; a stray barrier_out (PMI 1.2 tags) is
 * dropped; anything else is a protocol error. */
static int pmi1_await(pg_pmi1_cl_t *cl, pg_cmd_t expect)
{
    for (;;) {
        pg_frame_t f;
        int rc;

        if (pg_cl_conn_next(&cl->conn, &f) != 0 || f.proto != PG_PROTO_PMI1)
            return PMI_FAIL;
        rc = pg_parse_frame(cl->conn.buf, &f, &cl->reply);
        if (rc == PG_WIRE_ESYNTAX || rc == PG_WIRE_ENOMEM)
            return PMI_FAIL;
        if (cl->reply.cmd == expect)
            return PMI_SUCCESS;
        if (cl->reply.cmd == PG_CMD_PMI1_KEYVAL_CACHE)
            cache_pushed_pairs(cl, &cl->reply);
        else if (cl->reply.cmd != PG_CMD_PMI1_BARRIER_OUT)
            return PMI_FAIL;
    }
}

/* Writes the message in e whole: PMI_SUCCESS or PMI_FAIL. */
static int pmi1_send(pg_pmi1_cl_t *cl, const pg_enc_t *e)
{
    int rc;

    pthread_mutex_lock(&cl->write_lock);
    rc = pg_cl_send(cl->conn.fd, e->buf, e->len) == 0 ? PMI_SUCCESS : PMI_FAIL;
    pthread_mutex_unlock(&cl->write_lock);
    return rc;
}

/* Sends the message in e and waits for `expect`. */
static int pmi1_call(pg_pmi1_cl_t *cl, int enc_rc, const pg_enc_t *e, pg_cmd_t expect)
{
    if (enc_rc == PG_WIRE_EOVERFLOW)
        return PMI_ERR_INVALID_LENGTH;
    if (enc_rc != 0)
        return PMI_ERR_INVALID_ARG;
    if (pmi1_send(cl, e) != PMI_SUCCESS)
        return PMI_FAIL;
    return pmi1_await(cl, expect);
}

/* Reads a decimal reply key; *out untouched if absent or unreadable. */
static void reply_int(const pg_msg_t *m, const char *key, int *out)
{
    long v;

    if (pg_str_to_long(pg_msg_get(m, key), &v) == 0)
        *out = (int)v;
}

/* ---- handshake ---------------------------------------------------------- */

int pg_pmi1_cl_initack(pg_pmi1_cl_t *cl, int pmiid, int *size, int *rank)
{
    char line[64];
    pg_enc_t e;
    int rc;

    pg_enc_init(&e, line, sizeof(line));
    rc = pmi1_call(cl, pg_enc_pmi1_initack_request(&e, pmiid), &e, PG_CMD_PMI1_INITACK);
    for (int i = 0; i < 3 && rc == PMI_SUCCESS; i++) {
        rc = pmi1_await(cl, PG_CMD_PMI1_SET);
        reply_int(&cl->reply, "size", size);
        reply_int(&cl->reply, "rank", rank);
    }
    return rc;
}

static int pmi1_send_init(pg_pmi1_cl_t *cl)
{
    char line[128];
    pg_enc_t e;

    pg_enc_init(&e, line, sizeof(line));
    pg_enc_begin(&e, PG_CMD_PMI1_INIT);
    pg_enc_add_long(&e, "pmi_version", PMI_VERSION);
    pg_enc_add_long(&e, "pmi_subversion", PMI_SUBVERSION);
    if (cl->ext)
        pg_enc_add(&e, PMI1_CACHE_OPT_IN, "yes");
    if (cl->shm_reader)
        pg_enc_add(&e, PG_SHM_READER_ATTR, "yes");
    return pmi1_call(cl, pg_enc_end(&e), &e, PG_CMD_PMI1_RESPONSE_TO_INIT);
}

static int pmi1_simple_call(pg_pmi1_cl_t *cl, pg_cmd_t req, pg_cmd_t expect)
{
    char line[64];
    pg_enc_t e;

    pg_enc_init(&e, line, sizeof(line));
    return pmi1_call(cl, pg_enc_pmi1_simple(&e, req), &e, expect);
}

/* Keeps a server's limit only when it is sane and no larger than ours. */
static void clamp_max(const pg_msg_t *m, const char *key, int *limit)
{
    int v = -1;

    reply_int(m, key, &v);
    if (v > 0 && v < *limit)
        *limit = v;
}

int pg_pmi1_cl_init(pg_pmi1_cl_t *cl)
{
    int rc;

    if (pg_pmi1_cl_is_singleton(cl)) {
        snprintf(cl->kvsname, sizeof(cl->kvsname), "singinit_kvs_%d_0", (int)getpid());
        return PMI_SUCCESS;
    }
    if ((rc = pmi1_send_init(cl)) != PMI_SUCCESS)
        return rc;
    if (reply_rc(&cl->reply) != 0)
        return PMI_FAIL;
    if ((rc = pmi1_simple_call(cl, PG_CMD_PMI1_GET_MAXES, PG_CMD_PMI1_MAXES)) != PMI_SUCCESS)
        return rc;
    clamp_max(&cl->reply, "kvsname_max", &cl->kvsname_max);
    clamp_max(&cl->reply, "keylen_max", &cl->keylen_max);
    clamp_max(&cl->reply, "vallen_max", &cl->vallen_max);
    rc = pmi1_simple_call(cl, PG_CMD_PMI1_GET_MY_KVSNAME, PG_CMD_PMI1_MY_KVSNAME);
    if (rc != PMI_SUCCESS || reply_rc(&cl->reply) != 0)
        return PMI_FAIL;
    if (pg_cl_copy(pg_msg_get(&cl->reply, "kvsname"), cl->kvsname, sizeof(cl->kvsname)) != 0 ||
        cl->kvsname[0] == '\0')
        return PMI_FAIL;
    return PMI_SUCCESS;
}

const char *pg_pmi1_cl_kvsname(const pg_pmi1_cl_t *cl)
{
    return cl->kvsname;
}

void pg_pmi1_cl_maxes(const pg_pmi1_cl_t *cl, int *kvsname, int *keylen, int *vallen)
{
    /* "cmd=put kvsname= key= value=\n" is 29 bytes */
    int fits = PMI1_LINE_MAX - 29 - (int)strlen(cl->kvsname) - cl->keylen_max;

    if (kvsname != NULL)
        *kvsname = cl->kvsname_max;
    if (keylen != NULL)
        *keylen = cl->keylen_max;
    if (vallen != NULL)
        *vallen = fits < cl->vallen_max ? fits : cl->vallen_max;
}

/* One integer the server knows (appnum, universe size): a singleton has
 * no server and answers `alone`; a reply without `key` leaves -1. */
static int pmi1_int_query(pg_pmi1_cl_t *cl, pg_cmd_t req, pg_cmd_t expect, const char *key,
                          int alone, int *out)
{
    int rc;

    *out = alone;
    if (pg_pmi1_cl_is_singleton(cl))
        return PMI_SUCCESS;
    rc = pmi1_simple_call(cl, req, expect);
    if (rc != PMI_SUCCESS || reply_rc(&cl->reply) != 0)
        return PMI_FAIL;
    *out = -1;
    reply_int(&cl->reply, key, out);
    return PMI_SUCCESS;
}

int pg_pmi1_cl_appnum(pg_pmi1_cl_t *cl, int *appnum)
{
    return pmi1_int_query(cl, PG_CMD_PMI1_GET_APPNUM, PG_CMD_PMI1_APPNUM, "appnum", -1, appnum);
}

int pg_pmi1_cl_universe_size(pg_pmi1_cl_t *cl, int *size)
{
    return pmi1_int_query(cl, PG_CMD_PMI1_GET_UNIVERSE_SIZE, PG_CMD_PMI1_UNIVERSE_SIZE, "size", 1,
                          size);
}

/* ---- key-value space ---------------------------------------------------- */

static bool is_my_kvs(const pg_pmi1_cl_t *cl, const char *kvsname)
{
    return kvsname == NULL || kvsname[0] == '\0' || strcmp(kvsname, cl->kvsname) == 0;
}

static int check_key(const pg_pmi1_cl_t *cl, const char *key)
{
    if (key == NULL || key[0] == '\0')
        return PMI_ERR_INVALID_KEY;
    return strlen(key) > (size_t)cl->keylen_max ? PMI_ERR_INVALID_KEY_LENGTH : PMI_SUCCESS;
}

int pg_pmi1_cl_put(pg_pmi1_cl_t *cl, const char *kvsname, const char *key, const char *value)
{
    char line[PMI1_LINE_MAX];
    pg_enc_t e;
    int rc = check_key(cl, key);

    if (rc != PMI_SUCCESS)
        return rc;
    if (value == NULL)
        return PMI_ERR_INVALID_VAL;
    if (strlen(value) > (size_t)cl->vallen_max)
        return PMI_ERR_INVALID_VAL_LENGTH;
    if (!pg_pmi1_cl_is_singleton(cl)) {
        pg_enc_init(&e, line, sizeof(line));
        rc = pg_enc_pmi1_put(&e, kvsname != NULL ? kvsname : cl->kvsname, key, value);
        if (rc == PG_WIRE_EINVAL)
            return PMI_ERR_INVALID_VAL; /* a space or newline: PMI-1 cannot carry it */
        if (rc == PG_WIRE_EOVERFLOW)
            return PMI_ERR_INVALID_VAL_LENGTH;
        rc = pmi1_call(cl, rc, &e, PG_CMD_PMI1_PUT_RESULT);
        if (rc != PMI_SUCCESS || reply_rc(&cl->reply) != 0)
            return PMI_FAIL;
    }
    /* own puts read back at once, whatever the server's visibility rule */
    if (is_my_kvs(cl, kvsname) && pg_cl_kv_put_cstr(cl->cache, key, value) != 0)
        return PMI_ERR_NOMEM;
    return PMI_SUCCESS;
}

static int copy_value(pg_str_t v, char *value, int length)
{
    if (length <= 0)
        return PMI_ERR_INVALID_LENGTH;
    return pg_cl_copy(v, value, (size_t)length) == 0 ? PMI_SUCCESS : PMI_ERR_INVALID_LENGTH;
}

/* The lookups that need no round trip: the key cache (own puts first: the
 * server shows a process its own puts at once), then the segment published
 * after the last barrier.  *answered says whether the result is final. */
static int pmi1_get_local(const pg_pmi1_cl_t *cl, const char *kvsname, const char *key,
                          char *value, int length, bool *answered)
{
    const char *cached;
    size_t len = 0;

    *answered = false;
    if (!is_my_kvs(cl, kvsname))
        return PMI_SUCCESS;
    if ((cached = pg_cl_kv_get(cl->cache, key, NULL)) != NULL) {
        pg_str_t v = { cached, (uint32_t)strlen(cached) };

        *answered = true;
        return copy_value(v, value, length);
    }
    if (length <= 0 || pg_cl_shm_get(cl->shm, PG_CL_SHM_PMI1, key, -1, cl->rank, value,
                                     (size_t)length, &len) != PG_CL_SHM_FOUND)
        return PMI_SUCCESS;
    *answered = true;
    return len < (size_t)length ? PMI_SUCCESS : PMI_ERR_INVALID_LENGTH;
}

int pg_pmi1_cl_get(pg_pmi1_cl_t *cl, const char *kvsname, const char *key, char *value, int length)
{
    char line[PMI1_LINE_MAX];
    bool answered;
    pg_enc_t e;
    int rc = check_key(cl, key);

    if (rc != PMI_SUCCESS)
        return rc;
    if (value == NULL)
        return PMI_ERR_INVALID_VAL;
    rc = pmi1_get_local(cl, kvsname, key, value, length, &answered);
    if (answered)
        return rc;
    if (pg_pmi1_cl_is_singleton(cl))
        return PMI_FAIL;
    pg_enc_init(&e, line, sizeof(line));
    rc = pmi1_call(cl, pg_enc_pmi1_get(&e, kvsname != NULL ? kvsname : cl->kvsname, key), &e,
                   PG_CMD_PMI1_GET_RESULT);
    if (rc != PMI_SUCCESS)
        return rc;
    if (reply_rc(&cl->reply) != 0 || pg_str_eq(pg_msg_get(&cl->reply, "found"), "FALSE"))
        return PMI_FAIL; /* not found: rc=-1 (hydra 4.0) or rc=1 (newer hydra, Slurm) */
    return copy_value(pg_msg_get(&cl->reply, "value"), value, length);
}

int pg_pmi1_cl_barrier(pg_pmi1_cl_t *cl)
{
    int rc;

    if (pg_pmi1_cl_is_singleton(cl))
        return PMI_SUCCESS;
    rc = pmi1_simple_call(cl, PG_CMD_PMI1_BARRIER_IN, PG_CMD_PMI1_BARRIER_OUT);
    if (rc != PMI_SUCCESS || reply_rc(&cl->reply) != 0) {
        pg_cl_shm_drop(cl->shm); /* out of step with the server's count now */
        return PMI_FAIL;
    }
    /* the gateway published this barrier's segment before answering */
    pg_cl_shm_expect(cl->shm, ++cl->barriers);
    return PMI_SUCCESS;
}

/* ---- name service ------------------------------------------------------- */

int pg_pmi1_cl_publish(pg_pmi1_cl_t *cl, const char *service, const char *port)
{
    char line[PMI1_LINE_MAX];
    pg_enc_t e;

    if (service == NULL || port == NULL)
        return PMI_ERR_INVALID_ARG;
    if (pg_pmi1_cl_is_singleton(cl)) {
        if (pg_cl_kv_get(cl->names, service, NULL) != NULL)
            return PMI_FAIL; /* duplicates are refused, as hydra does */
        return pg_cl_kv_put_cstr(cl->names, service, port) == 0 ? PMI_SUCCESS : PMI_ERR_NOMEM;
    }
    pg_enc_init(&e, line, sizeof(line));
    if (pmi1_call(cl, pg_enc_pmi1_publish_name(&e, service, port), &e, PG_CMD_PMI1_PUBLISH_RESULT) !=
        PMI_SUCCESS)
        return PMI_FAIL;
    return reply_ok(&cl->reply) ? PMI_SUCCESS : PMI_FAIL;
}

int pg_pmi1_cl_unpublish(pg_pmi1_cl_t *cl, const char *service)
{
    char line[PMI1_LINE_MAX];
    pg_enc_t e;

    if (service == NULL)
        return PMI_ERR_INVALID_ARG;
    if (pg_pmi1_cl_is_singleton(cl))
        return pg_cl_kv_del(cl->names, service) == 0 ? PMI_SUCCESS : PMI_FAIL;
    pg_enc_init(&e, line, sizeof(line));
    if (pmi1_call(cl, pg_enc_pmi1_unpublish_name(&e, service), &e, PG_CMD_PMI1_UNPUBLISH_RESULT) !=
        PMI_SUCCESS)
        return PMI_FAIL;
    return reply_ok(&cl->reply) ? PMI_SUCCESS : PMI_FAIL;
}

int pg_pmi1_cl_lookup(pg_pmi1_cl_t *cl, const char *service, char *port, size_t cap)
{
    char line[PMI1_LINE_MAX];
    pg_enc_t e;
    pg_str_t p;

    if (service == NULL || port == NULL)
        return PMI_ERR_INVALID_ARG;
    if (pg_pmi1_cl_is_singleton(cl)) {
        const char *v = pg_cl_kv_get(cl->names, service, NULL);

        if (v == NULL)
            return PMI_FAIL;
        p.ptr = v;
        p.len = (uint32_t)strlen(v);
        return pg_cl_copy(p, port, cap) == 0 ? PMI_SUCCESS : PMI_ERR_INVALID_LENGTH;
    }
    pg_enc_init(&e, line, sizeof(line));
    if (pmi1_call(cl, pg_enc_pmi1_lookup_name(&e, service), &e, PG_CMD_PMI1_LOOKUP_RESULT) !=
        PMI_SUCCESS || !reply_ok(&cl->reply))
        return PMI_FAIL;
    p = pg_msg_get(&cl->reply, "port");
    if (p.ptr == NULL)
        return PMI_FAIL;
    return pg_cl_copy(p, port, cap) == 0 ? PMI_SUCCESS : PMI_ERR_INVALID_LENGTH;
}

/* ---- spawn, abort, finalize -------------------------------------------- */

int pg_pmi1_cl_spawn(pg_pmi1_cl_t *cl, int count, const pg_spawn_cmd_t *cmds, int npreput,
                     const pg_kv_t *preput, int *errors, int nerrors)
{
    size_t cap = PG_PMI1_MCMD_MAX;
    char *buf = NULL;
    pg_enc_t e;
    int rc = PMI_FAIL, n = 0;

    for (int i = 0; i < nerrors; i++)
        errors[i] = 0;
    if (pg_pmi1_cl_is_singleton(cl))
        return PMI_FAIL; /* no process manager to spawn with */
    if (count <= 0 || (buf = malloc(cap)) == NULL)
        return count <= 0 ? PMI_ERR_INVALID_ARG : PMI_ERR_NOMEM;
    pg_enc_init(&e, buf, cap);
    /* preputs in every block, as MPICH 4.0 sends them: every server accepts that */
    for (int i = 0; i < count; i++) {
        int erc = pg_enc_pmi1_spawn(&e, &cmds[i], count, i + 1, npreput, preput);

        if (erc != 0) {
            rc = erc == PG_WIRE_EOVERFLOW ? PMI_ERR_INVALID_LENGTH : PMI_ERR_INVALID_ARGS;
            goto out;
        }
    }
    if (pmi1_send(cl, &e) != PMI_SUCCESS || pmi1_await(cl, PG_CMD_PMI1_SPAWN_RESULT) != PMI_SUCCESS)
        goto out;
    /* also after a failure: the errcodes say which children could not start */
    (void)pg_cl_int_list(pg_msg_get(&cl->reply, "errcodes"), errors, nerrors, &n);
    if (reply_rc(&cl->reply) == 0)
        rc = PMI_SUCCESS;
out:
    free(buf);
    return rc;
}

int pg_pmi1_cl_abort(pg_pmi1_cl_t *cl, int code)
{
    char line[64];
    pg_enc_t e;

    if (pg_pmi1_cl_is_singleton(cl))
        return PMI_SUCCESS;
    pg_enc_init(&e, line, sizeof(line));
    if (pg_enc_pmi1_abort(&e, code, NULL) != 0 || pmi1_send(cl, &e) != PMI_SUCCESS)
        return PMI_FAIL;
    return PMI_SUCCESS;
}

int pg_pmi1_cl_finalize(pg_pmi1_cl_t *cl)
{
    int rc;

    if (pg_pmi1_cl_is_singleton(cl))
        return PMI_SUCCESS;
    rc = pmi1_simple_call(cl, PG_CMD_PMI1_FINALIZE, PG_CMD_PMI1_FINALIZE_ACK);
    shutdown(cl->conn.fd, SHUT_RDWR);
    close(cl->conn.fd);
    cl->conn.fd = -1;
    return rc;
}
