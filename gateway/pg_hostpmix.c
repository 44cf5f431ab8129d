/*
 * pg_hostpmix: the OpenPMIx client calls of `pmigate proxy`.  See
 * pg_hostpmix.h.  This is the one translation unit compiled against
 * OpenPMIx's headers (pkg-config pmix); it includes none of pmigate's PMIx
 * headers.
 */
#include "gateway/pg_hostpmix.h"

#include "wire/pg_clock.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pmix.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Key of exchange `seq`: a new key each time, so a peer's blob of an earlier
 * exchange can never be read for a later one.  The price: OpenPMIx's
 * PMIx_Commit sends everything this client ever put, so every commit
 * carries all earlier blobs again (a job of F fences sends O(F^2) bytes to
 * the host).  Two keys used in turn would bound that, but OpenPMIx 4.2.2
 * under mpirun answers a peer's get of a re-put key PMIX_ERR_NOT_FOUND now
 * and then (MPICH hello's fourth fence in proxy.sh; a bare OpenPMIx client
 * doing put, commit, collecting fence, get with two keys in turn sees it
 * from its fifth round on), so every exchange gets a key of its own. */
#define PG_HOST_KEY_FMT "pmigate.x%u"
#define PG_HOST_KEY(seq) (seq)

/* One peer's get of the running exchange. */
struct host_get {
    struct pg_hostpmix *h;
    pmix_proc_t peer;
    int index;
};

struct pg_hostpmix {
    pmix_proc_t me;
    int size;
    unsigned seq;              /* exchanges started */
    int pipe_r, pipe_w;        /* progress thread -> libevent thread */
    struct event *ev;          /* on pipe_r */
    /* the running non-blocking exchange */
    bool busy;
    bool collect;
    atomic_int fence_status;   /* written by the progress thread */
    _Atomic uint64_t fenced_at; /* pg_clock_now() of the fence's completion, ditto */
    /* the peers' blobs, fetched by the progress thread with one PMIx_Get_nb
     * each, all in flight at once (the libevent thread owns them again
     * after the pipe's byte) */
    char key[PMIX_MAX_KEYLEN + 1];
    struct host_get *gets;     /* [size] */
    void **blobs;
    size_t *lens;
    atomic_int pending;
    atomic_int get_status;
    _Atomic uint64_t got_at;
    uint64_t started_at, put_at;
    pg_hostpmix_times_t times; /* of the last exchange */
    pg_hostpmix_done_fn done;
    void *done_arg;
};

/* A host is there when the launcher left its rendezvous in our environment;
 * without one OpenPMIx would start a singleton instead of failing. */
static bool host_present(void)
{
    extern char **environ;

    for (char **e = environ; *e != NULL; e++)
        if (strncmp(*e, "PMIX_SERVER_URI", 15) == 0)
            return true;
    return false;
}

static int job_size(pg_hostpmix_t *h)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    int size = -1;

    PMIX_PROC_CONSTRUCT(&wild);
    PMIX_LOAD_PROCID(&wild, h->me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
        v->type == PMIX_UINT32)
        size = (int)v->data.uint32;
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    return size;
}

pg_hostpmix_t *pg_hostpmix_init(char *err, size_t errlen)
{
    pg_hostpmix_t *h;
    pmix_status_t st;

    if (!host_present()) {
        snprintf(err, errlen, "no PMIx host runtime found (start it under mpirun or "
                              "srun --mpi=pmix, one per node)");
        return NULL;
    }
    h = calloc(1, sizeof(*h));
    if (h == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->pipe_r = h->pipe_w = -1;
    st = PMIx_Init(&h->me, NULL, 0);
    if (st != PMIX_SUCCESS) {
        snprintf(err, errlen, "cannot reach the PMIx host runtime: %s", PMIx_Error_string(st));
        free(h);
        return NULL;
    }
    h->size = job_size(h);
    if (h->size < 1 || h->me.rank >= (pmix_rank_t)h->size) {
        snprintf(err, errlen, "the PMIx host did not say how many proxies there are");
        PMIx_Finalize(NULL, 0);
        free(h);
        return NULL;
    }
    h->gets = calloc((size_t)h->size, sizeof(*h->gets));
    if (h->gets == NULL) {
        snprintf(err, errlen, "out of memory");
        PMIx_Finalize(NULL, 0);
        free(h);
        return NULL;
    }
    for (int i = 0; i < h->size; i++) {
        h->gets[i] = (struct host_get){ .h = h, .index = i };
        PMIX_LOAD_PROCID(&h->gets[i].peer, h->me.nspace, (pmix_rank_t)i);
    }
    return h;
}

void pg_hostpmix_finalize(pg_hostpmix_t *h)
{
    if (h == NULL)
        return;
    /* first: it stops OpenPMIx's progress thread, which may still call
     * on_fence_done and write into the pipe */
    PMIx_Finalize(NULL, 0);
    if (h->ev != NULL)
        event_free(h->ev);
    if (h->pipe_r >= 0)
        close(h->pipe_r);
    if (h->pipe_w >= 0)
        close(h->pipe_w);
    pg_hostpmix_blobs_free(h, h->blobs, h->lens);
    free(h->gets);
    free(h);
}

int pg_hostpmix_rank(const pg_hostpmix_t *h)
{
    return (int)h->me.rank;
}

int pg_hostpmix_size(const pg_hostpmix_t *h)
{
    return h->size;
}

/* Put + commit of this proxy's blob for exchange h->seq. */
static pmix_status_t put_blob(pg_hostpmix_t *h, const void *mine, size_t len)
{
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t v;
    pmix_status_t st;

    snprintf(key, sizeof(key), PG_HOST_KEY_FMT, PG_HOST_KEY(h->seq));
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)mine; /* PMIx_Put copies it */
    v.data.bo.size = len;
    st = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (st == PMIX_SUCCESS)
        st = PMIx_Commit();
    return st;
}

void pg_hostpmix_blobs_free(const pg_hostpmix_t *h, void **blobs, size_t *lens)
{
    for (int i = 0; blobs != NULL && i < h->size; i++)
        free(blobs[i]);
    free(blobs);
    free(lens);
}

/* After the blocking collecting fence of exchange h->seq: every proxy's
 * blob, this proxy's own included. */
static pmix_status_t get_blobs(pg_hostpmix_t *h, void ***out, size_t **lens)
{
    char key[PMIX_MAX_KEYLEN + 1];
    void **blobs = calloc((size_t)h->size, sizeof(*blobs));
    size_t *len = calloc((size_t)h->size, sizeof(*len));
    pmix_status_t st = blobs && len ? PMIX_SUCCESS : PMIX_ERR_NOMEM;

    snprintf(key, sizeof(key), PG_HOST_KEY_FMT, PG_HOST_KEY(h->seq));
    for (int i = 0; i < h->size && st == PMIX_SUCCESS; i++) {
        pmix_proc_t peer;
        pmix_value_t *v = NULL;

        PMIX_LOAD_PROCID(&peer, h->me.nspace, (pmix_rank_t)i);
        st = PMIx_Get(&peer, key, NULL, 0, &v);
        if (st == PMIX_SUCCESS && (v == NULL || v->type != PMIX_BYTE_OBJECT))
            st = PMIX_ERR_TYPE_MISMATCH;
        if (st == PMIX_SUCCESS && v->data.bo.size > 0) {
            blobs[i] = malloc(v->data.bo.size);
            if (blobs[i] == NULL)
                st = PMIX_ERR_NOMEM;
            else
                memcpy(blobs[i], v->data.bo.bytes, v->data.bo.size);
            len[i] = v->data.bo.size;
        }
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
    }
    if (st != PMIX_SUCCESS) {
        pg_hostpmix_blobs_free(h, blobs, len);
        return st;
    }
    *out = blobs;
    *lens = len;
    return PMIX_SUCCESS;
}

int pg_hostpmix_allgather(pg_hostpmix_t *h, const void *mine, size_t len, void ***out,
                          size_t **lens, char *err, size_t errlen)
{
    pmix_info_t info;
    bool yes = true;
    pmix_status_t st;

    h->seq++;
    st = put_blob(h, mine, len);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (st == PMIX_SUCCESS)
        st = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (st == PMIX_SUCCESS)
        st = get_blobs(h, out, lens);
    if (st != PMIX_SUCCESS) {
        snprintf(err, errlen, "exchange with the other proxies failed: %s",
                 PMIx_Error_string(st));
        return -1;
    }
    return 0;
}

/* ---- non-blocking exchange ---- */

/* Hands the exchange over to the libevent thread. */
static void wake_loop(pg_hostpmix_t *h)
{
    char byte = 1;

    while (write(h->pipe_w, &byte, 1) < 0 && errno == EINTR)
        ;
}

/* One get fewer in flight; the last one wakes the loop. */
static void get_finished(pg_hostpmix_t *h)
{
    if (atomic_fetch_sub(&h->pending, 1) == 1) {
        atomic_store(&h->got_at, pg_clock_now());
        wake_loop(h);
    }
}

/* OpenPMIx's progress thread: a peer's blob (kv is the library's: copied). */
static void on_got(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    struct host_get *g = cbdata;
    pg_hostpmix_t *h = g->h;

    if (status == PMIX_SUCCESS && (kv == NULL || kv->type != PMIX_BYTE_OBJECT))
        status = PMIX_ERR_TYPE_MISMATCH;
    if (status == PMIX_SUCCESS && kv->data.bo.size > 0) {
        h->blobs[g->index] = malloc(kv->data.bo.size);
        if (h->blobs[g->index] == NULL)
            status = PMIX_ERR_NOMEM;
        else
            memcpy(h->blobs[g->index], kv->data.bo.bytes, kv->data.bo.size);
        h->lens[g->index] = kv->data.bo.size;
    }
    if (status != PMIX_SUCCESS)
        atomic_store(&h->get_status, (int)status);
    get_finished(h);
}

/* OpenPMIx's progress thread (or the loop, when the fence was done
 * inline): the fence is over; a collecting one puts every peer's get in
 * flight at once, so their round trips to the host overlap. */
static void on_fence_done(pmix_status_t status, void *cbdata)
{
    pg_hostpmix_t *h = cbdata;

    atomic_store(&h->fence_status, (int)status);
    atomic_store(&h->fenced_at, pg_clock_now());
    atomic_store(&h->got_at, pg_clock_now());
    if (status != PMIX_SUCCESS || !h->collect) {
        wake_loop(h);
        return;
    }
    atomic_store(&h->pending, h->size); /* the peers' gets, and one for this loop */
    for (int i = 0; i < h->size; i++) {
        pmix_status_t st;

        if (i == (int)h->me.rank) {
            get_finished(h);
            continue;
        }
        st = PMIx_Get_nb(&h->gets[i].peer, h->key, NULL, 0, on_got, &h->gets[i]);
        if (st != PMIX_SUCCESS) {
            atomic_store(&h->get_status, (int)st);
            get_finished(h);
        }
    }
}

/* Where the exchange's time went, and how many bytes came in; picked_up:
 * when the libevent thread took the exchange over. */
static void note_times(pg_hostpmix_t *h, const size_t *lens, uint64_t picked_up)
{
    uint64_t fenced = atomic_load(&h->fenced_at), got = atomic_load(&h->got_at);

    h->times.put_ns = h->put_at - h->started_at;
    h->times.fence_ns = fenced > h->put_at ? fenced - h->put_at : 0;
    h->times.get_ns = got > fenced ? got - fenced : 0;
    h->times.handoff_ns = picked_up > got ? picked_up - got : 0;
    h->times.bytes_in = 0;
    for (int i = 0; lens != NULL && i < h->size; i++)
        h->times.bytes_in += lens[i];
}

void pg_hostpmix_last_times(const pg_hostpmix_t *h, pg_hostpmix_times_t *t)
{
    *t = h->times;
}

/* The libevent thread: the fence is over, read the blobs, report. */
static void on_pipe(evutil_socket_t fd, short what, void *arg)
{
    pg_hostpmix_t *h = arg;
    uint64_t picked_up = pg_clock_now();
    pmix_status_t st = (pmix_status_t)atomic_load(&h->fence_status);
    void **blobs = NULL;
    size_t *lens = NULL;
    char byte, msg[160] = "";
    pg_hostpmix_done_fn done = h->done;

    (void)what;
    while (read(fd, &byte, 1) < 0 && errno == EINTR)
        ;
    if (!h->busy)
        return;
    h->busy = false;
    if (st == PMIX_SUCCESS && h->collect)
        st = (pmix_status_t)atomic_load(&h->get_status);
    if (h->collect) {
        blobs = h->blobs; /* ours now */
        lens = h->lens;
        h->blobs = NULL;
        h->lens = NULL;
    }
    note_times(h, (const size_t *)lens, picked_up);
    if (st != PMIX_SUCCESS)
        snprintf(msg, sizeof(msg), "the host's fence failed: %s", PMIx_Error_string(st));
    done(h->done_arg, st == PMIX_SUCCESS ? 0 : -1, msg, blobs, lens);
    pg_hostpmix_blobs_free(h, blobs, lens);
}

int pg_hostpmix_attach(pg_hostpmix_t *h, struct event_base *base)
{
    int fds[2];

    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    h->pipe_r = fds[0];
    h->pipe_w = fds[1];
    h->ev = event_new(base, h->pipe_r, EV_READ | EV_PERSIST, on_pipe, h);
    return h->ev != NULL && event_add(h->ev, NULL) == 0 ? 0 : -1;
}

int pg_hostpmix_exchange(pg_hostpmix_t *h, bool collect, const void *mine, size_t len,
                         pg_hostpmix_done_fn done, void *arg)
{
    pmix_info_t info;
    bool yes = true;
    pmix_status_t st = PMIX_SUCCESS;

    if (h->busy || h->ev == NULL)
        return -1;
    if (collect) {
        h->blobs = calloc((size_t)h->size, sizeof(*h->blobs));
        h->lens = calloc((size_t)h->size, sizeof(*h->lens));
        if (h->blobs == NULL || h->lens == NULL) {
            pg_hostpmix_blobs_free(h, h->blobs, h->lens);
            h->blobs = NULL;
            h->lens = NULL;
            return -1;
        }
    }
    atomic_store(&h->get_status, PMIX_SUCCESS);
    h->seq++;
    snprintf(h->key, sizeof(h->key), PG_HOST_KEY_FMT, PG_HOST_KEY(h->seq));
    h->started_at = pg_clock_now();
    if (collect)
        st = put_blob(h, mine, len);
    if (st != PMIX_SUCCESS)
        goto fail;
    h->put_at = pg_clock_now();
    h->times = (pg_hostpmix_times_t){ .bytes_out = collect ? len : 0 };
    h->busy = true;
    h->collect = collect;
    h->done = done;
    h->done_arg = arg;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    st = PMIx_Fence_nb(NULL, 0, collect ? &info : NULL, collect ? 1 : 0, on_fence_done, h);
    PMIX_INFO_DESTRUCT(&info);
    if (st == PMIX_OPERATION_SUCCEEDED) /* done inline: no callback comes */
        on_fence_done(PMIX_SUCCESS, h);
    else if (st != PMIX_SUCCESS) {
        h->busy = false;
        goto fail;
    }
    return 0;
fail:
    pg_hostpmix_blobs_free(h, h->blobs, h->lens);
    h->blobs = NULL;
    h->lens = NULL;
    return -1;
}

/* ---- name service ---- */

/* The host's key for a pmigate name: ours never meet other clients' names. */
static int name_key(const char *key, char *out, size_t len)
{
    int n = snprintf(out, len, "pmigate.name.%s", key);

    return n > 0 && (size_t)n < len && (size_t)n <= PMIX_MAX_KEYLEN ? 0 : -1;
}

/* A name's value on the host: rank and type (4 bytes each, big-endian),
 * then the bytes. */
static void put_u32(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static unsigned get_u32(const unsigned char *p)
{
    return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

int pg_hostpmix_publish(pg_hostpmix_t *h, const char *key, unsigned rank, unsigned type,
                        const void *data, size_t len)
{
    char hkey[PMIX_MAX_KEYLEN + 1];
    unsigned char *blob;
    pmix_info_t info;
    pmix_status_t st;

    (void)h;
    if (name_key(key, hkey, sizeof(hkey)) != 0 || (blob = malloc(len + 8)) == NULL)
        return -1;
    put_u32(blob, rank);
    put_u32(blob + 4, type);
    if (len > 0)
        memcpy(blob + 8, data, len);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_LOAD_KEY(info.key, hkey);
    info.value.type = PMIX_BYTE_OBJECT;
    info.value.data.bo.bytes = (char *)blob;
    info.value.data.bo.size = len + 8;
    st = PMIx_Publish(&info, 1);
    free(blob);
    if (st == PMIX_ERR_NOT_SUPPORTED)
        return -2;
    return st == PMIX_SUCCESS ? 0 : -1;
}

int pg_hostpmix_lookup(pg_hostpmix_t *h, const char *key, unsigned *rank, unsigned *type,
                       void **data, size_t *len)
{
    char hkey[PMIX_MAX_KEYLEN + 1];
    pmix_pdata_t pd;
    pmix_status_t st;
    int rc = -1;

    (void)h;
    if (name_key(key, hkey, sizeof(hkey)) != 0)
        return -1;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, hkey);
    st = PMIx_Lookup(&pd, 1, NULL, 0);
    if (st == PMIX_SUCCESS && pd.value.type == PMIX_BYTE_OBJECT && pd.value.data.bo.size >= 8) {
        const unsigned char *b = (const unsigned char *)pd.value.data.bo.bytes;

        *len = pd.value.data.bo.size - 8;
        *data = malloc(*len + 1);
        if (*data != NULL) {
            *rank = get_u32(b);
            *type = get_u32(b + 4);
            memcpy(*data, b + 8, *len);
            ((char *)*data)[*len] = '\0'; /* strings come back NUL-terminated */
            rc = 0;
        }
    }
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}

int pg_hostpmix_unpublish(pg_hostpmix_t *h, const char *key)
{
    char hkey[PMIX_MAX_KEYLEN + 1];
    char *keys[2] = { hkey, NULL };

    (void)h;
    if (name_key(key, hkey, sizeof(hkey)) != 0)
        return -1;
    return PMIx_Unpublish(keys, NULL, 0) == PMIX_SUCCESS ? 0 : -1;
}

void pg_hostpmix_abort(pg_hostpmix_t *h, int code, const char *msg)
{
    (void)PMIx_Abort(code, msg, NULL, 0);
    (void)h;
}
