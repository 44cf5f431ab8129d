/*
 * pg_shm: building and publishing a segment generation.  See pg_shm.h;
 * the format is wire/pg_shm_format.h.
 *
 * Building is three steps over the staged entries: sort them by (key,
 * rank) so each key's lowest poster comes first and each key is stored
 * once; size the file; fill it (strings, then the hash table, linear
 * probing at load <= 3/4).  The strings area holds three runs -- the keys,
 * the text values, the PMIx-packed values -- so a reader touches the pages
 * of its own kind only: a libpmi2 rank maps no PMIx encoding, a libpmix
 * rank no text (with thousands of ranks each mapping the segment, pages
 * mapped are the cost of a fence; docs/performance.md, "Own clients at
 * scale").  The image is built in place in a fresh memfd, mapped while
 * the gateway fills it, then unmapped, sealed, and put at the previous
 * generation's descriptor number.
 *
 * Why memfds: the ranks run as the same user as pmigate, so a file in a
 * directory, however private, is one a rank can truncate -- and a reader
 * whose mapping loses its pages dies of SIGBUS, as would the gateway
 * storing into a truncated commit table.  A sealed memfd cannot shrink,
 * whoever opens it; readers reach it as /proc/<pmigate>/fd/<n> and check
 * the seals before they map it (client/pg_cl_shm.c).
 *
 * PMIx values go in as the PMIx server would answer them: converted by the
 * handler's own pg_pmix_value_from_engine and packed with the Standard's
 * encoding, so a libpmix reader unpacks exactly the reply it would have
 * received.  The commit table is the one shared-writable memory: mapped
 * here for the job's life, a store per commit, sealed against every other
 * writer (F_SEAL_FUTURE_WRITE) and against resizing.
 */
#include "gateway/io/pg_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pmi1/pg_pmi1_server.h"
#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"
#include "wire/pg_enc.h"
#include "wire/pg_shm_format.h"
#include "wire/pg_wire.h"


typedef struct staged {
    const char *key;
    const char *val;   /* NULL: not a string the servers send verbatim */
    uint32_t key_len;
    uint32_t val_len;
    uint32_t rank;
    uint32_t pval_len; /* 0: no PMIx encoding (readers ask) */
    size_t pval_at;    /* offset in the writer's `packed` arena */
} staged_t;

struct pg_shm {
    int seg_fd;        /* the published generation (a sealed memfd) */
    int commits_fd;    /* the commit table (a memfd); -1: not made */
    char *spec;        /* what readers open: "/proc/PID/fd/SEG:/proc/PID/fd/TABLE" */
    uint64_t *commits; /* the commit table, mapped shared; NULL: not made */
    char *nspace;
    uint32_t job_size;
    staged_t *ents;
    size_t n, cap;
    pmix_data_buffer_t packed; /* this generation's packed PMIx values */
};

/* What readers rely on: a generation never changes size nor bytes; the
 * commit table never changes size, and nobody but the mapping made before
 * the seal (the gateway's) may write it. */
enum {
    SEG_SEALS = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL,
    COMMITS_SEALS = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL,
};

static int memfd_new(const char *name)
{
    return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

/* Makes the zeroed commit table, maps it for writing, then seals it: the
 * gateway's mapping stays writable, no one can open another writable one,
 * write to it or change its size.  0 or an errno. */
static int commits_make(pg_shm_t *w)
{
    size_t size = pg_shm_commits_size(w->job_size);
    void *base;

    w->commits_fd = memfd_new("pmigate-kvs-commits");
    if (w->commits_fd < 0)
        return errno;
    if (ftruncate(w->commits_fd, (off_t)size) != 0)
        return errno;
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, w->commits_fd, 0);
    if (base == MAP_FAILED)
        return errno;
    w->commits = base;
    return fcntl(w->commits_fd, F_ADD_SEALS, COMMITS_SEALS) == 0 ? 0 : errno;
}

pg_shm_t *pg_shm_new(const char *nspace, uint32_t job_size, int *err)
{
    pg_shm_t *w = calloc(1, sizeof(*w));
    long pid = (long)getpid();

    *err = ENOMEM;
    if (w == NULL)
        return NULL;
    w->seg_fd = w->commits_fd = -1;
    w->job_size = job_size;
    pg_buffer_construct(&w->packed);
    w->nspace = strdup(nspace);
    if (w->nspace == NULL)
        goto fail;
    /* an empty memfd holds the readers' descriptor number until the first
     * generation takes it over (an empty file is no segment to a reader) */
    w->seg_fd = memfd_new("pmigate-kvs");
    if (w->seg_fd < 0 || (*err = commits_make(w)) != 0) {
        *err = w->seg_fd < 0 ? errno : *err;
        goto fail;
    }
    *err = ENOMEM;
    if (asprintf(&w->spec, "/proc/%ld/fd/%d:/proc/%ld/fd/%d", pid, w->seg_fd, pid,
                 w->commits_fd) < 0) {
        w->spec = NULL;
        goto fail;
    }
    return w;
fail:
    pg_shm_free(w);
    return NULL;
}

void pg_shm_free(pg_shm_t *w)
{
    if (w == NULL)
        return;
    if (w->commits != NULL)
        munmap(w->commits, pg_shm_commits_size(w->job_size));
    if (w->commits_fd >= 0)
        close(w->commits_fd);
    if (w->seg_fd >= 0)
        close(w->seg_fd);
    free(w->ents);
    free(w->spec);
    free(w->nspace);
    pg_buffer_destruct(&w->packed);
    free(w);
}

const char *pg_shm_path(const pg_shm_t *w)
{
    return w != NULL ? w->spec : NULL;
}

/* Appends v, as the PMIx server's get reply carries it, to the arena.
 * *len = 0 when the handler could not convert it (then it would not
 * answer it either: readers ask). */
static int pack_pmix(pg_shm_t *w, const pg_value_t *v, size_t *at, uint32_t *len)
{
    pmix_value_t pv;
    size_t before = w->packed.bytes_used;
    pmix_status_t rc = pg_pmix_value_from_engine(v, &pv);

    *at = before;
    *len = 0;
    if (rc == PMIX_ERR_NOMEM)
        return -ENOMEM;
    if (rc != PMIX_SUCCESS)
        return 0;
    rc = pg_pmix_pack_one(&w->packed, &pv, PMIX_VALUE);
    pg_value_destruct(&pv);
    if (rc != PMIX_SUCCESS || w->packed.bytes_used - before > UINT32_MAX)
        return rc == PMIX_ERR_NOMEM ? -ENOMEM : 0;
    *len = (uint32_t)(w->packed.bytes_used - before);
    return 0;
}

int pg_shm_add(pg_shm_t *w, const char *key, uint32_t rank, const pg_value_t *v)
{
    size_t klen = key != NULL ? strlen(key) : 0;
    bool text = v != NULL && v->type == PMIX_STRING;
    size_t pval_at;
    uint32_t pval_len;
    int rc;

    if (klen == 0 || klen > UINT32_MAX || rank >= w->job_size || v == NULL ||
        v->size > UINT32_MAX)
        return -EINVAL;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 256;
        staged_t *e = realloc(w->ents, cap * sizeof(*e));

        if (e == NULL)
            return -ENOMEM;
        w->ents = e;
        w->cap = cap;
    }
    if ((rc = pack_pmix(w, v, &pval_at, &pval_len)) != 0)
        return rc;
    w->ents[w->n++] = (staged_t){ key, text ? v->data : NULL, (uint32_t)klen,
                                  text ? (uint32_t)v->size : 0, rank, pval_len, pval_at };
    return 0;
}

/* Empties the staging and the arena (keeping its memory). */
static void staging_reset(pg_shm_t *w)
{
    w->n = 0;
    w->packed.bytes_used = 0;
    w->packed.pack_ptr = w->packed.base_ptr;
    w->packed.unpack_ptr = w->packed.base_ptr;
}

void pg_shm_abort(pg_shm_t *w)
{
    staging_reset(w);
}

void pg_shm_committed(pg_shm_t *w, uint32_t rank, uint64_t generation)
{
    if (w == NULL || w->commits == NULL || rank >= w->job_size)
        return;
    /* generations only grow: plain stores keep each word a maximum */
    __atomic_store_n(&w->commits[1 + rank], generation, __ATOMIC_RELEASE);
    __atomic_store_n(&w->commits[0], generation, __ATOMIC_RELEASE);
}

/* ---- building one generation --------------------------------------------- */

static int staged_cmp(const void *a, const void *b)
{
    const staged_t *x = a, *y = b;
    int c = strcmp(x->key, y->key);

    return c != 0 ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* Would the PMI-1 server send this value in its get_result?  Decided by
 * the server's own rule, pg_enc_pmi1_value_sendable. */
static bool pmi1_sends_verbatim(const char *val, uint32_t len)
{
    char text[PG_PMI1_VALLEN_MAX + 1];

    if (len > PG_PMI1_VALLEN_MAX || memchr(val, '\0', len) != NULL)
        return false;
    memcpy(text, val, len);
    text[len] = '\0';
    return pg_enc_pmi1_value_sendable(text);
}

/* Which servers would send this value verbatim for this key: none for a
 * job attribute (answered from the layout) or a key over the protocol's
 * limit; PMI-2 up to its value limit; PMI-1 as pmi1_sends_verbatim says. */
static uint32_t entry_flags(const staged_t *s)
{
    uint32_t flags = 0;

    if (s->val == NULL || s->key_len > PG_PMI2_KEYLEN_MAX || pg_ns_attr_known(s->key))
        return 0;
    if (s->val_len <= PG_PMI2_VALLEN_MAX)
        flags |= PG_SHM_PMI2_OK;
    if (s->key_len <= PG_PMI1_KEYLEN_MAX && pmi1_sends_verbatim(s->val, s->val_len))
        flags |= PG_SHM_PMI1_OK;
    return flags;
}

/* The strings area's runs, in this order. */
enum { RUN_KEYS, RUN_TEXT, RUN_PACKED, NRUNS };

typedef struct image {
    int fd;            /* the generation's memfd; -1: none */
    size_t size;       /* its size, mapped at buf while it is filled */
    char *buf;
    pg_shm_header_t *h;
    pg_shm_entry_t *slots;
    char *strings;
    uint32_t run_at[NRUNS];  /* where each run starts in the strings area */
    uint32_t run_pos[NRUNS]; /* next free byte of each run */
} image_t;

/* Appends bytes + NUL to a run of the strings area; returns their offset. */
static uint32_t image_string(image_t *im, int run, const char *s, uint32_t len)
{
    uint32_t at = im->run_pos[run];

    if (len > 0)
        memcpy(im->strings + at, s, len);
    im->strings[at + len] = '\0';
    im->run_pos[run] += len + 1;
    return at;
}

static void image_insert(image_t *im, const pg_shm_entry_t *e)
{
    uint32_t mask = im->h->nslots - 1, at = e->hash & mask;

    while (im->slots[at].key_len != 0)
        at = (at + 1) & mask;
    im->slots[at] = *e;
    im->h->nentries++;
}

/* The strings area's bytes: the runs, one after the other. */
static uint64_t runs_total(const uint64_t run_size[NRUNS])
{
    return run_size[RUN_KEYS] + run_size[RUN_TEXT] + run_size[RUN_PACKED];
}

/* Sizes of the sorted staging: distinct keys, and the bytes of each run. */
static int image_measure(const pg_shm_t *w, size_t *nkeys, uint64_t run_size[NRUNS])
{
    *nkeys = 0;
    memset(run_size, 0, NRUNS * sizeof(run_size[0]));
    for (size_t i = 0; i < w->n; i++) {
        if (i == 0 || strcmp(w->ents[i - 1].key, w->ents[i].key) != 0) {
            ++*nkeys;
            run_size[RUN_KEYS] += (uint64_t)w->ents[i].key_len + 1;
        }
        run_size[RUN_TEXT] += (uint64_t)w->ents[i].val_len + 1;
        if (w->ents[i].pval_len > 0)
            run_size[RUN_PACKED] += (uint64_t)w->ents[i].pval_len + 1;
    }
    return runs_total(run_size) + 1 > UINT32_MAX || w->n + *nkeys >= UINT32_MAX / 2 ? -EFBIG : 0;
}

/* The generation's file: a fresh memfd of `total` bytes (zero-filled, so
 * nothing of an earlier generation can leak into it), mapped for the fill
 * with its pages populated in one call -- page faults on every 4 KiB as
 * the fill touched it were a third of a publish on the test machine.
 * Built in place, the image needs no copy in the gateway's memory (that
 * buffer was 6-13 MB of its resident size at 4 096 ranks) and no write(). */
static int image_file(image_t *im, size_t total)
{
    void *m;

    /* fallocate, not ftruncate: every page exists before the fill, so a
     * machine out of memory fails the publish here instead of killing
     * the gateway with SIGBUS at a store into the mapping */
    im->fd = memfd_new("pmigate-kvs");
    if (im->fd < 0 || fallocate(im->fd, 0, 0, (off_t)total) != 0)
        return -errno;
    m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, im->fd, 0);
    if (m == MAP_FAILED)
        return -errno;
    im->buf = m;
    im->size = total;
    return 0;
}

/* Unmaps and closes what image_file made (what is published lives on). */
static void image_release(image_t *im)
{
    if (im->buf != NULL)
        munmap(im->buf, im->size);
    im->buf = NULL;
    if (im->fd >= 0)
        close(im->fd);
    im->fd = -1;
}

/* Lays out an image of the staging in its file: the header and the
 * namespace written; the table and the strings area are zeroes. */
static int image_layout(pg_shm_t *w, uint64_t generation, image_t *im)
{
    size_t nkeys, nslots = 8, nslen = strlen(w->nspace);
    uint64_t run_size[NRUNS], strings, slots_off, strings_off, total;
    int rc;

    if (image_measure(w, &nkeys, run_size) != 0)
        return -EFBIG;
    strings = runs_total(run_size);
    /* entries <= 3/4 of the slots (and one slot always empty: a probe ends) */
    while (nslots < (w->n + nkeys) * 4 / 3 + 1)
        nslots *= 2;
    slots_off = (sizeof(pg_shm_header_t) + nslen + 1 + 7) & ~(uint64_t)7;
    strings_off = slots_off + nslots * sizeof(pg_shm_entry_t);
    total = strings_off + strings + 1;
    rc = image_file(im, total);
    if (rc != 0)
        return rc;
    im->h = (pg_shm_header_t *)im->buf;
    memcpy(im->h->magic, PG_SHM_MAGIC, sizeof(im->h->magic));
    im->h->version = PG_SHM_VERSION;
    im->h->header_size = sizeof(pg_shm_header_t);
    im->h->generation = generation;
    im->h->total_size = total;
    im->h->job_size = w->job_size;
    im->h->nslots = (uint32_t)nslots;
    im->h->nspace_len = (uint32_t)nslen;
    im->h->nspace_off = sizeof(pg_shm_header_t);
    im->h->slots_off = slots_off;
    im->h->strings_off = strings_off;
    im->h->strings_size = strings + 1;
    memcpy(im->buf + im->h->nspace_off, w->nspace, nslen + 1);
    im->slots = (pg_shm_entry_t *)(im->buf + slots_off);
    im->strings = im->buf + strings_off;
    /* offset 0 holds "", the value of entries readers must not answer */
    im->run_at[RUN_KEYS] = 1;
    im->run_at[RUN_TEXT] = im->run_at[RUN_KEYS] + (uint32_t)run_size[RUN_KEYS];
    im->run_at[RUN_PACKED] = im->run_at[RUN_TEXT] + (uint32_t)run_size[RUN_TEXT];
    memcpy(im->run_pos, im->run_at, sizeof(im->run_pos));
    return 0;
}

/* Fills the table: one entry per (key, rank), and per key one key-only
 * entry sharing the lowest poster's key, value and flags. */
static void image_fill(const pg_shm_t *w, image_t *im)
{
    uint32_t key_off = 0;

    for (size_t i = 0; i < w->n; i++) {
        const staged_t *s = &w->ents[i];
        bool first = i == 0 || strcmp(w->ents[i - 1].key, s->key) != 0;
        pg_shm_entry_t e = { 0 };

        if (first)
            key_off = image_string(im, RUN_KEYS, s->key, s->key_len);
        e.rank = s->rank;
        e.key_len = s->key_len;
        e.key_off = key_off;
        e.val_len = s->val_len;
        e.val_off = s->val != NULL ? image_string(im, RUN_TEXT, s->val, s->val_len) : 0;
        e.flags = entry_flags(s);
        if (s->pval_len > 0) {
            e.pval_len = s->pval_len;
            e.pval_off = image_string(im, RUN_PACKED, w->packed.base_ptr + s->pval_at, s->pval_len);
            e.flags |= PG_SHM_PMIX_OK;
        }
        e.hash = pg_shm_hash(s->key, s->key_len, s->rank);
        image_insert(im, &e);
        if (first) {
            e.rank = PG_SHM_ANY_RANK;
            e.hash = pg_shm_hash(s->key, s->key_len, PG_SHM_ANY_RANK);
            image_insert(im, &e);
        }
    }
}

/* Unmaps the filled image, seals its file (no size change, no write: a
 * rank can neither truncate it under its readers nor change it; the seal
 * needs the gateway's writable mapping gone) and puts it at the readers'
 * descriptor number: one dup3 replaces the previous generation, so a
 * reader opens either whole.  A process that mapped the previous one
 * keeps it: the memory lives while it is mapped. */
static int image_publish(const pg_shm_t *w, image_t *im)
{
    munmap(im->buf, im->size);
    im->buf = NULL;
    if (fcntl(im->fd, F_ADD_SEALS, SEG_SEALS) != 0 || dup3(im->fd, w->seg_fd, O_CLOEXEC) < 0)
        return -errno;
    return 0;
}

int pg_shm_publish(pg_shm_t *w, uint64_t generation)
{
    image_t im = { .fd = -1 };
    int rc;

    if (w->n > 1) /* nothing staged yet: no array at all */
        qsort(w->ents, w->n, sizeof(*w->ents), staged_cmp);
    rc = image_layout(w, generation, &im);
    if (rc == 0) {
        image_fill(w, &im);
        rc = image_publish(w, &im);
    }
    image_release(&im);
    staging_reset(w);
    return rc;
}
