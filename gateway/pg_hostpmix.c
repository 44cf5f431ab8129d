/*
 * pg_hostpmix: the OpenPMIx client calls of `pmigate proxy`.  See
 * pg_hostpmix.h.  This is the one translation unit compiled against
 * OpenPMIx's headers (pkg-config pmix); it includes none of pmigate's PMIx
 * headers.
 *
 * The slots of a collecting exchange (see docs/architecture.md): bank b =
 * the exchange's parity; "pmigate.h<b>" is the head (HEAD_LEN bytes:
 * magic, sequence, blob length, piece size); "pmigate.<b>.<c>.<i>" is
 * piece i of class c, always exactly 2^c bytes.  A blob of n bytes takes
 * n / P pieces of the largest class P (the host's limit for one value),
 * then one piece of the smallest class that holds the rest.  A key
 * therefore never changes size (OpenPMIx 4.2.2's shared-memory store
 * answers PMIX_ERR_NOT_FOUND or another fence's bytes for a key re-put
 * with a different size; tests/integration/proxy_limits.sh checks the
 * sizes through a real host), and a bank is rewritten only two exchanges
 * later, when every peer has read it: a peer's next fence cannot complete
 * before it did.
 */
#include "gateway/pg_hostpmix.h"

#include "gateway/pg_be.h"
#include "wire/pg_clock.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pmix.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    HEAD_LEN = 32,
    HEAD_MAGIC = 0x50475831,      /* "PGX1" */
    CLASS_MIN = 6,                /* 64-byte pieces at least */
    PIECE_LOG2_MAX = 24,          /* 16 MiB: more is not needed in one value */
    /* OpenPMIx's dstore data segment (its NS_DATA_SEG_SIZE default): one
     * value must fit one segment, with its key and bookkeeping */
    HOST_SEGMENT_DEFAULT = 4 << 20,
};

/* What the hosts' collectives carry in one fence: 32-bit lengths. */
#define HOST_FENCE_MAX ((size_t)INT32_MAX - (1u << 20))

/* The start-up allgather's key (used once, before the banks). */
#define PG_HOST_CARD_KEY "pmigate.card"

/* The slots the host's store holds for this proxy: per bank and class,
 * how many indices were used. */
typedef struct slot_marks {
    unsigned top[2][PIECE_LOG2_MAX + 1];
} slot_marks_t;

/* One get of the running exchange: a peer's head, or one of its pieces. */
struct host_get {
    struct pg_hostpmix *h;
    int peer;                  /* node index */
    char key[PMIX_MAX_KEYLEN + 1];
    size_t offset, len;        /* where a piece goes in the peer's blob */
    bool head;
};

/* The work the loop hands the worker thread: put, commit, fence. */
struct host_work {
    bool posted;
    bool collect;
    unsigned char *blob;       /* owned until put */
    size_t len;
};

struct pg_hostpmix {
    pmix_proc_t me;
    int size;
    pmix_scope_t scope;        /* where the other proxies are (local, remote, both) */
    size_t piece;              /* the largest piece P */
    size_t store_max;          /* what the store may hold for this proxy */
    slot_marks_t marks;        /* the loop thread's */
    unsigned seq;              /* collecting exchanges started */
    int pipe_r, pipe_w;        /* progress thread -> libevent thread */
    struct event *ev;          /* on pipe_r */
    /* the worker thread */
    pthread_t worker;
    bool worker_started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct host_work work;     /* under lock */
    bool stop;                 /* under lock */
    /* the running exchange */
    bool busy;
    bool collect;
    atomic_int status;         /* the first failure, set by any thread */
    atomic_bool other_fence;   /* a peer's head was of another exchange */
    atomic_bool complete;      /* the exchange is over: the pipe's byte is for it */
    atomic_int pending;        /* gets in flight (+1 while they are being put) */
    _Atomic uint64_t fenced_at, got_at;
    struct host_get *heads;    /* [size] */
    struct host_get **pieces;  /* [size] each peer's piece gets, progress thread's */
    void **blobs;              /* [size] */
    size_t *lens;
    uint64_t started_at;
    _Atomic uint64_t put_at;
    _Atomic uint64_t commit_bytes;
    pg_hostpmix_times_t times; /* of the last exchange */
    pg_hostpmix_done_fn done;
    void *done_arg;
    /* the host's loss */
    atomic_bool lost;
    bool lost_told;
    void (*lost_fn)(void *arg);
    void *lost_arg;
};

/* The proxy whose host connection is watched (one per process: OpenPMIx's
 * event handlers carry no context of ours). */
static pg_hostpmix_t *watched;

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

/* The scope a blob needs: PMIX_LOCAL when every other proxy shares this
 * one's host server, PMIX_REMOTE when none does, PMIX_GLOBAL (every byte
 * sent twice) when some do -- or when the host does not say. */
static pmix_scope_t blob_scope(pg_hostpmix_t *h)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    pmix_scope_t scope = PMIX_GLOBAL;

    PMIX_LOAD_PROCID(&wild, h->me.nspace, PMIX_RANK_WILDCARD);
    if (h->size > 1 && PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &v) == PMIX_SUCCESS &&
        v != NULL && v->type == PMIX_STRING && v->data.string != NULL) {
        int local = 1; /* commas + 1 ranks, this proxy among them */

        for (const char *c = v->data.string; *c != '\0'; c++)
            local += *c == ',';
        scope = local >= h->size ? PMIX_LOCAL : local == 1 ? PMIX_REMOTE : PMIX_GLOBAL;
    }
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    return scope;
}

/* The largest piece: the biggest power of two no more than a quarter of
 * the host's dstore segment (NS_DATA_SEG_SIZE when the job's environment
 * sets it, as it must for the host to use another size). */
static size_t piece_size(void)
{
    const char *text = getenv("NS_DATA_SEG_SIZE");
    unsigned long long seg = HOST_SEGMENT_DEFAULT;
    size_t piece = (size_t)1 << CLASS_MIN;
    char *end;

    if (text != NULL && *text != '\0') {
        unsigned long long v = strtoull(text, &end, 10);

        if (*end == '\0' && v > 0)
            seg = v;
    }
    while (piece * 2 <= seg / 4 && piece < ((size_t)1 << PIECE_LOG2_MAX))
        piece *= 2;
    return piece;
}

/* This proxy's share of what the host carries in one fence. */
static size_t store_max(const pg_hostpmix_t *h)
{
    const char *text = getenv("PMIGATE_HOST_MAX");
    size_t share = HOST_FENCE_MAX / (size_t)h->size;
    char *end;

    if (text != NULL && *text != '\0') {
        unsigned long long v = strtoull(text, &end, 10);

        if (*end == '\0' && v < share)
            share = (size_t)v;
    }
    return share;
}

/* ---- slots ---- */

/* One slot of a blob's layout: key class (log2 of its size) and index, and
 * the part of the blob it holds. */
typedef struct slot {
    unsigned cls, idx;
    size_t off, len;
} slot_t;

static unsigned log2_of(size_t pow2)
{
    unsigned c = 0;

    while (((size_t)1 << c) < pow2)
        c++;
    return c;
}

/* How many slots a blob of len bytes takes with pieces of `piece`. */
static size_t slot_count(size_t len, size_t piece)
{
    return len / piece + (len % piece != 0 ? 1 : 0);
}

/* Slot i of that layout. */
static void slot_at(size_t len, size_t piece, size_t i, slot_t *s)
{
    size_t full = len / piece;

    s->off = i * piece;
    if (i < full) {
        *s = (slot_t){ log2_of(piece), (unsigned)i, i * piece, piece };
        return;
    }
    s->len = len - s->off;
    s->cls = log2_of(s->len);
    if (s->cls < CLASS_MIN)
        s->cls = CLASS_MIN;
    /* a rest that needs a whole piece is one more piece of the largest class */
    s->idx = ((size_t)1 << s->cls) >= piece ? (unsigned)i : 0;
    if (((size_t)1 << s->cls) >= piece)
        s->cls = log2_of(piece);
}

static void slot_key(char *key, size_t len, unsigned bank, const slot_t *s)
{
    snprintf(key, len, "pmigate.%u.%u.%u", bank, s->cls, s->idx);
}

static void head_key(char *key, size_t len, unsigned bank)
{
    snprintf(key, len, "pmigate.h%u", bank);
}

static pmix_status_t put_bytes(pmix_scope_t scope, const char *key, const void *data, size_t len)
{
    pmix_value_t v;

    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)data; /* PMIx_Put copies it */
    v.data.bo.size = len;
    return PMIx_Put(scope, key, &v);
}

/* The bytes of every slot the store holds for this proxy once a blob of
 * `len` is in bank `bank`: what every later collecting fence carries. */

static uint64_t store_bytes(const slot_marks_t *mk)
{
    uint64_t total = 2 * HEAD_LEN;

    for (int b = 0; b < 2; b++)
        for (unsigned c = 0; c <= PIECE_LOG2_MAX; c++)
            total += (uint64_t)mk->top[b][c] << c;
    return total;
}

static void mark_blob(slot_marks_t *mk, unsigned bank, size_t len, size_t piece)
{
    for (size_t i = 0; i < slot_count(len, piece); i++) {
        slot_t s;

        slot_at(len, piece, i, &s);
        if (mk->top[bank][s.cls] < s.idx + 1)
            mk->top[bank][s.cls] = s.idx + 1;
    }
}

/* Puts a blob into bank `bank`: its pieces (padded to their class) and
 * its head. */
static pmix_status_t put_blob(pg_hostpmix_t *h, unsigned bank, unsigned seq,
                              const unsigned char *blob, size_t len)
{
    unsigned char head[HEAD_LEN] = { 0 }, *pad = NULL;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_status_t st = PMIX_SUCCESS;

    for (size_t i = 0; i < slot_count(len, h->piece) && st == PMIX_SUCCESS; i++) {
        slot_t s;
        size_t size;

        slot_at(len, h->piece, i, &s);
        size = (size_t)1 << s.cls;
        slot_key(key, sizeof(key), bank, &s);
        if (s.len == size) {
            st = put_bytes(h->scope, key, blob + s.off, size);
            continue;
        }
        pad = pad != NULL ? pad : calloc(1, h->piece);
        if (pad == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(pad, blob + s.off, s.len);
        memset(pad + s.len, 0, size - s.len);
        st = put_bytes(h->scope, key, pad, size);
    }
    free(pad);
    pg_be32_put(head, HEAD_MAGIC);
    pg_be32_put(head + 4, seq);
    pg_be64_put(head + 8, (uint64_t)len);
    pg_be32_put(head + 16, (uint32_t)h->piece);
    head_key(key, sizeof(key), bank);
    return st == PMIX_SUCCESS ? put_bytes(h->scope, key, head, sizeof(head)) : st;
}

/* Bytes this process has written (the kernel's count), 0 if unknown. */
static uint64_t bytes_written(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    unsigned long long v = 0;
    char line[128];

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "wchar: %llu", &v) == 1)
            break;
    fclose(f);
    return v;
}

/* ---- life cycle ---- */

static void worker_stop(pg_hostpmix_t *h);

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
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cond, NULL);
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
    h->scope = blob_scope(h);
    h->piece = piece_size();
    h->store_max = store_max(h);
    h->heads = calloc((size_t)h->size, sizeof(*h->heads));
    h->pieces = calloc((size_t)h->size, sizeof(*h->pieces));
    if (h->heads == NULL || h->pieces == NULL) {
        snprintf(err, errlen, "out of memory");
        PMIx_Finalize(NULL, 0);
        free(h->heads);
        free(h->pieces);
        free(h);
        return NULL;
    }
    return h;
}

static void free_pieces(pg_hostpmix_t *h)
{
    for (int i = 0; i < h->size; i++) {
        free(h->pieces[i]);
        h->pieces[i] = NULL;
    }
}

void pg_hostpmix_finalize(pg_hostpmix_t *h)
{
    if (h == NULL)
        return;
    worker_stop(h);
    if (watched == h)
        watched = NULL;
    /* then: it stops OpenPMIx's progress thread, which may still call
     * back and write into the pipe */
    PMIx_Finalize(NULL, 0);
    if (h->ev != NULL)
        event_free(h->ev);
    if (h->pipe_r >= 0)
        close(h->pipe_r);
    if (h->pipe_w >= 0)
        close(h->pipe_w);
    pg_hostpmix_blobs_free(h, h->blobs, h->lens);
    free(h->work.blob);
    free_pieces(h);
    free(h->pieces);
    free(h->heads);
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->cond);
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

void pg_hostpmix_blobs_free(const pg_hostpmix_t *h, void **blobs, size_t *lens)
{
    for (int i = 0; blobs != NULL && i < h->size; i++)
        free(blobs[i]);
    free(blobs);
    free(lens);
}

/* ---- the start-up allgather (blocking) ---- */

/* After the blocking collecting fence: every proxy's card, this proxy's
 * own included. */
static pmix_status_t get_cards(pg_hostpmix_t *h, void ***out, size_t **lens)
{
    void **blobs = calloc((size_t)h->size, sizeof(*blobs));
    size_t *len = calloc((size_t)h->size, sizeof(*len));
    pmix_status_t st = blobs && len ? PMIX_SUCCESS : PMIX_ERR_NOMEM;

    for (int i = 0; i < h->size && st == PMIX_SUCCESS; i++) {
        pmix_proc_t peer;
        pmix_value_t *v = NULL;

        PMIX_LOAD_PROCID(&peer, h->me.nspace, (pmix_rank_t)i);
        st = PMIx_Get(&peer, PG_HOST_CARD_KEY, NULL, 0, &v);
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

    st = put_bytes(PMIX_GLOBAL, PG_HOST_CARD_KEY, mine, len);
    if (st == PMIX_SUCCESS)
        st = PMIx_Commit();
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (st == PMIX_SUCCESS)
        st = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (st == PMIX_SUCCESS)
        st = get_cards(h, out, lens);
    if (st != PMIX_SUCCESS) {
        snprintf(err, errlen, "exchange with the other proxies failed: %s",
                 PMIx_Error_string(st));
        return -1;
    }
    return 0;
}

/* ---- non-blocking exchange ---- */

/* Hands the exchange (or the host's loss) over to the libevent thread. */
static void wake_loop(pg_hostpmix_t *h)
{
    char byte = 1;

    while (write(h->pipe_w, &byte, 1) < 0 && errno == EINTR)
        ;
}

static void fail_exchange(pg_hostpmix_t *h, pmix_status_t st)
{
    int none = PMIX_SUCCESS;

    atomic_compare_exchange_strong(&h->status, &none, (int)st);
}

/* The exchange is over: the loop takes it from here. */
static void exchange_over(pg_hostpmix_t *h)
{
    atomic_store(&h->got_at, pg_clock_now());
    atomic_store(&h->complete, true);
    wake_loop(h);
}

/* One get fewer in flight; the last one ends the exchange. */
static void get_finished(pg_hostpmix_t *h)
{
    if (atomic_fetch_sub(&h->pending, 1) == 1)
        exchange_over(h);
}

static void on_got(pmix_status_t status, pmix_value_t *kv, void *cbdata);

/* OpenPMIx's progress thread: a peer's head says how long its blob is and
 * in which pieces; their gets go in flight at once. */
static pmix_status_t fetch_pieces(pg_hostpmix_t *h, int peer, const unsigned char *head,
                                  size_t len)
{
    uint64_t blob_len;
    size_t piece, n;
    unsigned bank = h->seq % 2;
    pmix_proc_t proc;

    if (len != HEAD_LEN || pg_be32_get(head) != HEAD_MAGIC)
        return PMIX_ERR_BAD_PARAM;
    if (pg_be32_get(head + 4) != h->seq) {
        atomic_store(&h->other_fence, true);
        return PMIX_ERR_BAD_PARAM;
    }
    blob_len = pg_be64_get(head + 8);
    piece = pg_be32_get(head + 16);
    if (piece < ((size_t)1 << CLASS_MIN) || (piece & (piece - 1)) != 0 ||
        piece > ((size_t)1 << PIECE_LOG2_MAX) || blob_len > HOST_FENCE_MAX)
        return PMIX_ERR_BAD_PARAM;
    h->lens[peer] = (size_t)blob_len;
    if (blob_len == 0)
        return PMIX_SUCCESS;
    n = slot_count((size_t)blob_len, piece);
    h->blobs[peer] = malloc((size_t)blob_len);
    h->pieces[peer] = calloc(n, sizeof(struct host_get));
    if (h->blobs[peer] == NULL || h->pieces[peer] == NULL)
        return PMIX_ERR_NOMEM;
    PMIX_LOAD_PROCID(&proc, h->me.nspace, (pmix_rank_t)peer);
    atomic_fetch_add(&h->pending, (int)n);
    for (size_t i = 0; i < n; i++) {
        struct host_get *g = &h->pieces[peer][i];
        slot_t s;
        pmix_status_t st;

        slot_at((size_t)blob_len, piece, i, &s);
        *g = (struct host_get){ .h = h, .peer = peer, .offset = s.off, .len = s.len };
        slot_key(g->key, sizeof(g->key), bank, &s);
        st = PMIx_Get_nb(&proc, g->key, NULL, 0, on_got, g);
        if (st != PMIX_SUCCESS) {
            fail_exchange(h, st);
            get_finished(h);
        }
    }
    return PMIX_SUCCESS;
}

/* OpenPMIx's progress thread: a head or a piece (kv is the library's:
 * copied). */
static void on_got(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    struct host_get *g = cbdata;
    pg_hostpmix_t *h = g->h;

    if (status == PMIX_SUCCESS && (kv == NULL || kv->type != PMIX_BYTE_OBJECT))
        status = PMIX_ERR_TYPE_MISMATCH;
    if (status == PMIX_SUCCESS && g->head)
        status = fetch_pieces(h, g->peer, (const unsigned char *)kv->data.bo.bytes,
                              kv->data.bo.size);
    else if (status == PMIX_SUCCESS) {
        if (kv->data.bo.size < g->len)
            status = PMIX_ERR_BAD_PARAM;
        else
            memcpy((char *)h->blobs[g->peer] + g->offset, kv->data.bo.bytes, g->len);
    }
    if (status != PMIX_SUCCESS)
        fail_exchange(h, status);
    get_finished(h);
}

/* OpenPMIx's progress thread (or the worker, when the fence was done
 * inline): the fence is over; a collecting one puts every peer's head get
 * in flight at once, so their round trips to the host overlap. */
static void on_fence_done(pmix_status_t status, void *cbdata)
{
    pg_hostpmix_t *h = cbdata;

    atomic_store(&h->fenced_at, pg_clock_now());
    if (status != PMIX_SUCCESS)
        fail_exchange(h, status);
    if (status != PMIX_SUCCESS || !h->collect) {
        exchange_over(h);
        return;
    }
    atomic_store(&h->pending, h->size); /* the peers' heads, and one for this loop */
    for (int i = 0; i < h->size; i++) {
        pmix_proc_t proc;
        pmix_status_t st;

        if (i == (int)h->me.rank) {
            get_finished(h);
            continue;
        }
        h->heads[i] = (struct host_get){ .h = h, .peer = i, .head = true };
        head_key(h->heads[i].key, sizeof(h->heads[i].key), h->seq % 2);
        PMIX_LOAD_PROCID(&proc, h->me.nspace, (pmix_rank_t)i);
        st = PMIx_Get_nb(&proc, h->heads[i].key, NULL, 0, on_got, &h->heads[i]);
        if (st != PMIX_SUCCESS) {
            fail_exchange(h, st);
            get_finished(h);
        }
    }
}

/* The worker: put and commit of one exchange's slots, then the fence. */
static void worker_run(pg_hostpmix_t *h, struct host_work *w)
{
    pmix_info_t info;
    bool yes = true;
    pmix_status_t st = PMIX_SUCCESS;
    uint64_t written = bytes_written();

    if (w->collect) {
        st = put_blob(h, h->seq % 2, h->seq, w->blob, w->len);
        if (st == PMIX_SUCCESS)
            st = PMIx_Commit();
    }
    free(w->blob);
    w->blob = NULL;
    atomic_store(&h->commit_bytes, w->collect && written > 0 ? bytes_written() - written : 0);
    atomic_store(&h->put_at, pg_clock_now());
    if (st == PMIX_SUCCESS) {
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        st = PMIx_Fence_nb(NULL, 0, w->collect ? &info : NULL, w->collect ? 1 : 0,
                           on_fence_done, h);
        PMIX_INFO_DESTRUCT(&info);
        if (st == PMIX_OPERATION_SUCCEEDED) { /* done inline: no callback comes */
            on_fence_done(PMIX_SUCCESS, h);
            return;
        }
    }
    if (st != PMIX_SUCCESS) {
        fail_exchange(h, st);
        atomic_store(&h->fenced_at, pg_clock_now());
        exchange_over(h);
    }
}

static void *worker_main(void *arg)
{
    pg_hostpmix_t *h = arg;

    pthread_mutex_lock(&h->lock);
    for (;;) {
        struct host_work w;

        while (!h->work.posted && !h->stop)
            pthread_cond_wait(&h->cond, &h->lock);
        if (h->stop)
            break;
        w = h->work;
        h->work = (struct host_work){ 0 };
        pthread_mutex_unlock(&h->lock);
        worker_run(h, &w);
        pthread_mutex_lock(&h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void worker_stop(pg_hostpmix_t *h)
{
    if (!h->worker_started)
        return;
    pthread_mutex_lock(&h->lock);
    h->stop = true;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->worker, NULL);
    h->worker_started = false;
}

/* Where the exchange's time went, and how many bytes came in; picked_up:
 * when the libevent thread took the exchange over. */
static void note_times(pg_hostpmix_t *h, const size_t *lens, uint64_t picked_up)
{
    uint64_t put = atomic_load(&h->put_at), fenced = atomic_load(&h->fenced_at);
    uint64_t got = atomic_load(&h->got_at);

    h->times.put_ns = put > h->started_at ? put - h->started_at : 0;
    h->times.fence_ns = fenced > put ? fenced - put : 0;
    h->times.get_ns = got > fenced ? got - fenced : 0;
    h->times.handoff_ns = picked_up > got ? picked_up - got : 0;
    h->times.commit_bytes = atomic_load(&h->commit_bytes);
    h->times.bytes_in = 0;
    for (int i = 0; lens != NULL && i < h->size; i++)
        h->times.bytes_in += lens[i];
}

void pg_hostpmix_last_times(const pg_hostpmix_t *h, pg_hostpmix_times_t *t)
{
    *t = h->times;
}

/* The libevent thread: the host was lost. */
static void report_lost(pg_hostpmix_t *h)
{
    if (!atomic_load(&h->lost) || h->lost_told || h->lost_fn == NULL)
        return;
    h->lost_told = true;
    h->lost_fn(h->lost_arg);
}

/* The libevent thread: the exchange is over (or the host is lost). */
static void on_pipe(evutil_socket_t fd, short what, void *arg)
{
    pg_hostpmix_t *h = arg;
    uint64_t picked_up = pg_clock_now();
    pmix_status_t st = (pmix_status_t)atomic_load(&h->status);
    void **blobs = NULL;
    size_t *lens = NULL;
    char byte, msg[160] = "";
    pg_hostpmix_done_fn done = h->done;

    (void)what;
    while (read(fd, &byte, 1) < 0 && errno == EINTR)
        ;
    report_lost(h);
    if (!h->busy || !atomic_exchange(&h->complete, false))
        return;
    h->busy = false;
    if (h->collect) {
        blobs = h->blobs; /* ours now */
        lens = h->lens;
        h->blobs = NULL;
        h->lens = NULL;
    }
    free_pieces(h);
    note_times(h, (const size_t *)lens, picked_up);
    if (atomic_load(&h->other_fence))
        snprintf(msg, sizeof(msg), "a node's fence data is from another fence: were all "
                                   "nodes' ranks in the same fence?");
    else if (st != PMIX_SUCCESS)
        snprintf(msg, sizeof(msg), "the host's fence failed: %s", PMIx_Error_string(st));
    done(h->done_arg, st == PMIX_SUCCESS ? 0 : -1, msg, st == PMIX_SUCCESS ? blobs : NULL,
         st == PMIX_SUCCESS ? lens : NULL);
    pg_hostpmix_blobs_free(h, blobs, lens);
}

/* OpenPMIx's progress thread: the host's connection is lost. */
static void on_host_lost(size_t evhdlr_id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                         size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                         void *cbdata)
{
    pg_hostpmix_t *h = watched;

    (void)evhdlr_id;
    (void)status;
    (void)source;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    if (h != NULL && !atomic_exchange(&h->lost, true) && h->pipe_w >= 0)
        wake_loop(h);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

void pg_hostpmix_on_lost(pg_hostpmix_t *h, void (*fn)(void *arg), void *arg)
{
    pmix_status_t codes[] = { PMIX_ERR_LOST_CONNECTION, PMIX_ERR_UNREACH };

    h->lost_fn = fn;
    h->lost_arg = arg;
    if (watched == NULL) {
        watched = h;
        (void)PMIx_Register_event_handler(codes, 2, NULL, 0, on_host_lost, NULL, NULL);
    }
}

int pg_hostpmix_attach(pg_hostpmix_t *h, struct event_base *base)
{
    int fds[2];

    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    h->pipe_r = fds[0];
    h->pipe_w = fds[1];
    h->ev = event_new(base, h->pipe_r, EV_READ | EV_PERSIST, on_pipe, h);
    if (h->ev == NULL || event_add(h->ev, NULL) != 0)
        return -1;
    if (pthread_create(&h->worker, NULL, worker_main, h) != 0)
        return -1;
    h->worker_started = true;
    return 0;
}

int pg_hostpmix_exchange(pg_hostpmix_t *h, bool collect, const void *mine, size_t len,
                         pg_hostpmix_done_fn done, void *arg, char *err, size_t errlen)
{
    unsigned char *copy = NULL;

    if (h->busy || h->ev == NULL || !h->worker_started) {
        snprintf(err, errlen, "an exchange with the host is already running");
        return -1;
    }
    if (collect) {
        slot_marks_t next = h->marks;

        mark_blob(&next, (h->seq + 1) % 2, len, h->piece);
        if (store_bytes(&next) > h->store_max) {
            snprintf(err, errlen,
                     "this node's fence data (%zu bytes, %llu in the host's slots with what "
                     "it keeps of earlier fences) is more than the host runtime can carry "
                     "from one node (%zu bytes%s)",
                     len, (unsigned long long)store_bytes(&next), h->store_max,
                     getenv("PMIGATE_HOST_MAX") != NULL ? ": PMIGATE_HOST_MAX"
                                                        : ": 2 GiB in all, over the nodes");
            return -1;
        }
        h->blobs = calloc((size_t)h->size, sizeof(*h->blobs));
        h->lens = calloc((size_t)h->size, sizeof(*h->lens));
        copy = len > 0 ? malloc(len) : NULL;
        if (h->blobs == NULL || h->lens == NULL || (len > 0 && copy == NULL)) {
            pg_hostpmix_blobs_free(h, h->blobs, h->lens);
            h->blobs = NULL;
            h->lens = NULL;
            free(copy);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (len > 0)
            memcpy(copy, mine, len);
        h->marks = next;
        h->seq++;
    }
    atomic_store(&h->status, PMIX_SUCCESS);
    atomic_store(&h->other_fence, false);
    atomic_store(&h->complete, false);
    atomic_store(&h->pending, 0);
    h->started_at = pg_clock_now();
    h->times = (pg_hostpmix_times_t){ .bytes_out = collect ? len : 0 };
    h->busy = true;
    h->collect = collect;
    h->done = done;
    h->done_arg = arg;
    pthread_mutex_lock(&h->lock);
    h->work = (struct host_work){ .posted = true, .collect = collect, .blob = copy, .len = len };
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    return 0;
}

void pg_hostpmix_abort(pg_hostpmix_t *h, int code, const char *msg)
{
    (void)PMIx_Abort(code, msg, NULL, 0);
    (void)h;
}
