/*
 * pg_cl_shm: mapping, checking and reading the node-shared key segment
 * (see pg_cl_shm.h; layout in pg_shm_format.h).
 *
 * Every number a reader takes from the file is checked before it is used:
 * the header when the file is mapped (a file that fails is not used at
 * all), each entry when a lookup reaches it (offsets and lengths must stay
 * inside the strings area, which ends in a NUL; an entry that fails is
 * treated as absent, so the server answers).  Checking entries lazily keeps
 * the per-fence cost of a process at one open/fstat/mmap instead of a pass
 * over the whole table -- with a thousand processes per node that pass
 * would cost more than the gets it serves.
 *
 * Nothing is mapped that could shrink under the mapping (a reader touching
 * a page cut off by a truncation would die of SIGBUS): the segment must be
 * sealed against writes and shrinking, the commit table against shrinking
 * (gateway/io/pg_shm.c makes both as sealed memfds); anything else -- a file
 * PMIGATE_SHM names that any process of the user could truncate -- is
 * treated as absent.
 *
 * The commit table (for PMIx lookups) is mapped once, read-only, at the
 * first good refresh, and kept: the gateway writes it in place for the
 * job's life.
 */
#include "client/pg_cl_shm.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wire/pg_shm_format.h"

/* One mapped, checked generation. */
typedef struct shm_map {
    void *base;
    size_t size;
    uint64_t generation;
    uint32_t job_size;
    uint32_t nslots;
    const pg_shm_entry_t *slots;
    const char *strings;
    uint64_t strings_size;
} shm_map_t;

struct pg_cl_shm {
    pthread_rwlock_t lock; /* readers: lookups; writer: swapping the map */
    char *path;
    char *commits_path;    /* the commit table beside the segment */
    char *nspace;
    shm_map_t map;         /* base == NULL: nothing mapped */
    /* A fence ended and its segment is not mapped yet: the first lookup
     * maps generation `want` (one try).  Why not at the fence: a process
     * that gets nothing after it -- every rank but one after a job's
     * closing fence -- would map, and at exit unmap, the whole segment:
     * with thousands of ranks that page-table work was most of their exit
     * (docs/performance.md, "Own clients at scale"). */
    bool pending;
    uint64_t want;
    const uint64_t *commits; /* NULL: not mapped (PMIx lookups ask) */
    size_t commits_size;
};

pg_cl_shm_t *pg_cl_shm_new(const char *spec, const char *nspace)
{
    const char *colon;
    pg_cl_shm_t *s;

    if (spec == NULL || spec[0] == '\0' || nspace == NULL || nspace[0] == '\0')
        return NULL;
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    /* "SEGMENT:TABLE"; without a table, PMIx lookups ask */
    colon = strrchr(spec, ':');
    s->path = colon != NULL ? strndup(spec, (size_t)(colon - spec)) : strdup(spec);
    s->commits_path = strdup(colon != NULL ? colon + 1 : "");
    s->nspace = strdup(nspace);
    if (s->path == NULL || s->commits_path == NULL || s->nspace == NULL ||
        pthread_rwlock_init(&s->lock, NULL) != 0) {
        free(s->path);
        free(s->commits_path);
        free(s->nspace);
        free(s);
        return NULL;
    }
    return s;
}

static void map_release(shm_map_t *m)
{
    if (m->base != NULL)
        munmap(m->base, m->size);
    memset(m, 0, sizeof(*m));
}

void pg_cl_shm_free(pg_cl_shm_t *s)
{
    if (s == NULL)
        return;
    map_release(&s->map);
    if (s->commits != NULL)
        munmap((void *)s->commits, s->commits_size);
    pthread_rwlock_destroy(&s->lock);
    free(s->path);
    free(s->commits_path);
    free(s->nspace);
    free(s);
}

/* ---- checking a mapped file --------------------------------------------- */

/* [off, off + len) lies inside [0, total). */
static bool range_ok(uint64_t off, uint64_t len, uint64_t total)
{
    return off <= total && len <= total - off;
}

static bool header_ok(const pg_shm_header_t *h, size_t size, const char *nspace)
{
    const char *base = (const char *)h;
    size_t nslen = strlen(nspace);

    if (memcmp(h->magic, PG_SHM_MAGIC, sizeof(h->magic)) != 0 || h->version != PG_SHM_VERSION ||
        h->header_size != sizeof(*h) || h->total_size != size)
        return false;
    if (h->nslots == 0 || (h->nslots & (h->nslots - 1)) != 0 || h->nentries >= h->nslots ||
        h->slots_off % sizeof(uint64_t) != 0 ||
        !range_ok(h->slots_off, (uint64_t)h->nslots * sizeof(pg_shm_entry_t), size))
        return false;
    if (!range_ok(h->strings_off, h->strings_size, size) || h->strings_size == 0 ||
        h->strings_size > UINT32_MAX || ((const char *)h)[h->strings_off + h->strings_size - 1] != '\0')
        return false;
    /* the segment must be this job's */
    return h->nspace_len == nslen && range_ok(h->nspace_off, (uint64_t)nslen + 1, size) &&
           memcmp(base + h->nspace_off, nspace, nslen + 1) == 0;
}

/* Checks a whole mapped file and describes it in *m. */
static bool map_check(void *base, size_t size, const char *nspace, shm_map_t *m)
{
    const pg_shm_header_t *h = base;

    if (size < sizeof(*h) || !header_ok(h, size, nspace))
        return false;
    m->base = base;
    m->size = size;
    m->generation = h->generation;
    m->job_size = h->job_size;
    m->nslots = h->nslots;
    m->slots = (const pg_shm_entry_t *)((const char *)base + h->slots_off);
    m->strings = (const char *)base + h->strings_off;
    m->strings_size = h->strings_size;
    return true;
}

/* Is the open file one whose mapping can never fault: sealed against
 * shrinking (and, with `unchanging`, against every write)?  A file that
 * anyone of the user could truncate is not mapped: a reader touching a page
 * cut off under it would die of SIGBUS. */
static bool sealed(int fd, bool unchanging)
{
    int want = F_SEAL_SHRINK | (unchanging ? F_SEAL_WRITE : 0);
    int seals = fcntl(fd, F_GET_SEALS);

    return seals >= 0 && (seals & want) == want;
}

/* Maps the file at path if it is generation `want` of nspace's segment. */
static bool map_open(const char *path, const char *nspace, uint64_t want, shm_map_t *m)
{
    struct stat st;
    void *base;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool ok;

    memset(m, 0, sizeof(*m));
    if (fd < 0)
        return false;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(pg_shm_header_t) ||
        (uint64_t)st.st_size > SIZE_MAX / 2 || !sealed(fd, true)) {
        close(fd);
        return false;
    }
    /* No MAP_POPULATE: the gets' faults map only the pages they touch --
     * the index, the keys and this reader's run of values (the writer
     * keeps text and PMIx encodings apart) -- sixteen pages a fault
     * (fault-around).  Measured on the test machine, a 2.5 MB segment
     * touched whole: 160 us mapped by faults, 245 us populated. */
    base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return false;
    ok = map_check(base, (size_t)st.st_size, nspace, m) && m->generation == want;
    if (!ok) {
        munmap(base, (size_t)st.st_size);
        memset(m, 0, sizeof(*m));
    }
    return ok;
}

/* Maps the commit table of a job of job_size ranks, read-only; NULL when
 * it is missing, of another size or could shrink. */
static const uint64_t *commits_open(const char *path, uint32_t job_size, size_t *size)
{
    struct stat st;
    void *base;
    int fd = path[0] != '\0' ? open(path, O_RDONLY | O_CLOEXEC) : -1;

    *size = pg_shm_commits_size(job_size);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != *size ||
        !sealed(fd, false)) {
        close(fd);
        return NULL;
    }
    base = mmap(NULL, *size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return base == MAP_FAILED ? NULL : base;
}

/* Forgets the mapping; with `expect`, the next lookup maps generation
 * `want`.  The old one is unmapped outside the lock, so lookups wait only
 * for the swap. */
static void map_forget(pg_cl_shm_t *s, bool expect, uint64_t want)
{
    shm_map_t old;

    pthread_rwlock_wrlock(&s->lock);
    old = s->map;
    memset(&s->map, 0, sizeof(s->map));
    s->pending = expect;
    s->want = want;
    pthread_rwlock_unlock(&s->lock);
    map_release(&old);
}

void pg_cl_shm_expect(pg_cl_shm_t *s, uint64_t fences)
{
    if (s != NULL)
        map_forget(s, true, fences);
}

/* Maps the expected generation if that has not been tried yet; true when
 * a segment is mapped.  Takes the write lock: call without the lock. */
static bool map_pending(pg_cl_shm_t *s)
{
    shm_map_t next;
    bool ok;

    pthread_rwlock_wrlock(&s->lock);
    if (s->pending) {
        s->pending = false;
        if (map_open(s->path, s->nspace, s->want, &next)) {
            s->map = next;
            if (s->commits == NULL)
                s->commits = commits_open(s->commits_path, next.job_size, &s->commits_size);
        }
    }
    ok = s->map.base != NULL;
    pthread_rwlock_unlock(&s->lock);
    return ok;
}

/* Takes the read lock with the expected segment mapped, if it can be. */
static void read_lock_mapped(pg_cl_shm_t *s)
{
    pthread_rwlock_rdlock(&s->lock);
    if (!s->pending)
        return;
    pthread_rwlock_unlock(&s->lock);
    (void)map_pending(s);
    pthread_rwlock_rdlock(&s->lock);
}

bool pg_cl_shm_refresh(pg_cl_shm_t *s, uint64_t fences)
{
    if (s == NULL)
        return false;
    pg_cl_shm_expect(s, fences);
    return map_pending(s);
}

void pg_cl_shm_drop(pg_cl_shm_t *s)
{
    if (s != NULL)
        map_forget(s, false, 0);
}

uint64_t pg_cl_shm_generation(pg_cl_shm_t *s)
{
    uint64_t g;

    if (s == NULL)
        return 0;
    pthread_rwlock_rdlock(&s->lock);
    g = s->map.generation;
    pthread_rwlock_unlock(&s->lock);
    return g;
}

/* ---- lookups ------------------------------------------------------------- */

/* A string of the strings area: len bytes then a NUL, all inside. */
static bool string_ok(const shm_map_t *m, uint32_t off, uint32_t len)
{
    return (uint64_t)off + len < m->strings_size && m->strings[off + len] == '\0';
}

static const pg_shm_entry_t *map_find(const shm_map_t *m, const char *key, size_t klen,
                                      uint32_t rank)
{
    uint32_t h = pg_shm_hash(key, klen, rank), mask = m->nslots - 1;

    for (uint32_t i = 0, at = h & mask; i < m->nslots; i++, at = (at + 1) & mask) {
        const pg_shm_entry_t *e = &m->slots[at];

        if (e->key_len == 0)
            return NULL; /* the probe chain ends at the first empty slot */
        if (e->hash == h && e->rank == rank && e->key_len == klen &&
            string_ok(m, e->key_off, e->key_len) && memcmp(m->strings + e->key_off, key, klen) == 0)
            return string_ok(m, e->val_off, e->val_len) ? e : NULL;
    }
    return NULL;
}

/* The server's order for a PMI get: the named rank, the caller's own
 * value, the lowest poster's. */
static const pg_shm_entry_t *map_lookup(const shm_map_t *m, const char *key, int rank, int self)
{
    size_t klen = strlen(key);
    const pg_shm_entry_t *e = NULL;

    if (rank >= 0 && (uint32_t)rank < m->job_size)
        e = map_find(m, key, klen, (uint32_t)rank);
    if (e == NULL && self >= 0 && (uint32_t)self < m->job_size)
        e = map_find(m, key, klen, (uint32_t)self);
    if (e == NULL)
        e = map_find(m, key, klen, PG_SHM_ANY_RANK);
    return e;
}

int pg_cl_shm_get(pg_cl_shm_t *s, unsigned dialect, const char *key, int rank, int self,
                  char *dst, size_t cap, size_t *len)
{
    const pg_shm_entry_t *e;
    int rc = PG_CL_SHM_ASK;

    if (s == NULL || key == NULL || dst == NULL || cap == 0)
        return PG_CL_SHM_ASK;
    read_lock_mapped(s);
    if (s->map.base != NULL && (e = map_lookup(&s->map, key, rank, self)) != NULL &&
        (e->flags & dialect) != 0) {
        size_t n = e->val_len < cap - 1 ? e->val_len : cap - 1;

        memcpy(dst, s->map.strings + e->val_off, n);
        dst[n] = '\0';
        *len = e->val_len;
        rc = PG_CL_SHM_FOUND;
    }
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

/* Has nobody whose commit could change the answer for `rank` (any rank for
 * PG_CL_SHM_ANY) committed since the mapped generation was published? */
static bool still_fresh(const pg_cl_shm_t *s, uint32_t rank)
{
    size_t word = rank == PG_CL_SHM_ANY ? 0 : (size_t)rank + 1;

    return __atomic_load_n(&s->commits[word], __ATOMIC_ACQUIRE) < s->map.generation;
}

int pg_cl_shm_get_packed(pg_cl_shm_t *s, const char *key, uint32_t rank, pg_cl_shm_take_fn take,
                         void *arg)
{
    const pg_shm_entry_t *e;
    int rc = PG_CL_SHM_ASK;

    if (s == NULL || key == NULL || take == NULL)
        return PG_CL_SHM_ASK;
    read_lock_mapped(s);
    if (s->map.base != NULL && s->commits != NULL &&
        (rank < s->map.job_size || rank == PG_CL_SHM_ANY) &&
        (e = map_find(&s->map, key, strlen(key), rank == PG_CL_SHM_ANY ? PG_SHM_ANY_RANK : rank)) !=
            NULL &&
        (e->flags & PG_SHM_PMIX_OK) != 0 && string_ok(&s->map, e->pval_off, e->pval_len) &&
        still_fresh(s, rank) && take(s->map.strings + e->pval_off, e->pval_len, arg) == 0)
        rc = PG_CL_SHM_FOUND;
    pthread_rwlock_unlock(&s->lock);
    return rc;
}
