/*
 * test_shm_segment: the node-shared key segment end to end in one process
 * -- the gateway's writer (gateway/io/pg_shm.c) publishes generations, the
 * client libraries' reader (client/pg_cl_shm.c) maps and answers.
 * What a user relies on: a get answered from the segment gives exactly
 * what pmigate's server would (by rank, own value first, lowest poster for
 * a get without a rank); anything the reader cannot vouch for -- a stale
 * generation, another job's file, a damaged or truncated file, a file that
 * could be truncated under its mapping (not sealed), a value the server
 * would convert or refuse -- is left to the server (PG_CL_SHM_ASK); what
 * the writer publishes can be neither truncated nor written by anyone
 * else; and a republished generation never disturbs a reader mid-lookup.
 * For libpmix: typed values come back as the PMIx server's get reply would
 * carry them, and a commit after the fence sends the PMIx reader of that
 * rank (of any rank, for a get without a rank) to the server.
 */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/pg_cl_shm.h"
#include "gateway/io/pg_shm.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"
#include "wire/pg_shm_format.h"
#include "tests/pg_cunit.h"

#define BOTH (PG_CL_SHM_PMI1 | PG_CL_SHM_PMI2)

static pg_shm_t *writer(uint32_t size)
{
    int err = 0;
    pg_shm_t *w = pg_shm_new("ns", size, &err);

    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    return w;
}

/* Stages a string value, or with NULL a typed one (a PMIx uint32). */
static int add(pg_shm_t *w, const char *key, uint32_t rank, const char *value)
{
    static const uint32_t typed = 7;
    pg_value_t v = value != NULL ? pg_value_string(value)
                                 : pg_value_bytes(PMIX_UINT32, &typed, sizeof(typed));

    return pg_shm_add(w, key, rank, &v);
}

/* Stages what the PMIx handler would store for a put of *pv. */
static int add_pmix(pg_shm_t *w, const char *key, uint32_t rank, const pmix_value_t *pv)
{
    pmix_data_buffer_t scratch;
    pg_value_t v;
    int rc;

    pg_buffer_construct(&scratch);
    CU_ASSERT_EQUAL_FATAL(pg_pmix_value_to_engine(pv, &scratch, &v), PMIX_SUCCESS);
    rc = pg_shm_add(w, key, rank, &v); /* copies the PMIx encoding; a string
                                          value stays *pv's until publish */
    pg_buffer_destruct(&scratch);
    return rc;
}

/* The segment's path in the writer's "SEGMENT:TABLE" (static buffer). */
static const char *seg_path(const pg_shm_t *w)
{
    static char path[256];

    snprintf(path, sizeof(path), "%.*s", (int)strcspn(pg_shm_path(w), ":"), pg_shm_path(w));
    return path;
}

static const char *table_path(const pg_shm_t *w)
{
    return strchr(pg_shm_path(w), ':') + 1;
}

/* The value a lookup answers, or "<ask>". */
static const char *get(pg_cl_shm_t *r, unsigned dialect, const char *key, int rank, int self)
{
    static char buf[2048];
    size_t len = 0;

    if (pg_cl_shm_get(r, dialect, key, rank, self, buf, sizeof(buf), &len) != PG_CL_SHM_FOUND)
        return "<ask>";
    CU_ASSERT_EQUAL(len, strlen(buf));
    return buf;
}

static void test_gets_by_rank_own_value_first_then_lowest_poster(void)
{
    pg_shm_t *w = writer(4);
    pg_cl_shm_t *r;

    CU_ASSERT_EQUAL(add(w, "card-2", 2, "two"), 0);
    CU_ASSERT_EQUAL(add(w, "shared", 3, "v3"), 0);
    CU_ASSERT_EQUAL(add(w, "shared", 1, "v1"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_EQUAL(pg_cl_shm_generation(r), 1);
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "card-2", 2, 0), "two");
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "card-2", -1, 0), "two");   /* no rank */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "card-2", 1, 0), "two");    /* rank is a hint */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "shared", 3, 0), "v3");
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "shared", -1, 0), "v1");    /* lowest poster */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "shared", -1, 3), "v3");    /* own value first */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "shared", 2, 0), "v1");     /* 2 posted none */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "shared", 99, 3), "v3");    /* out of range = none */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "missing", 0, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "card-", 2, 0), "<ask>");   /* no prefix match */
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

/* What the libraries do at a fence: expect its generation, which the
 * first lookup after it maps -- a process that gets nothing maps nothing
 * (with thousands of ranks, every rank mapping the closing fence's segment
 * was most of their exit) -- and only that generation: one the gateway
 * has not published is asked for, and looked for once, not at every get. */
static void test_only_the_generation_of_the_last_fence_is_used(void)
{
    pg_shm_t *w = writer(2);
    pg_cl_shm_t *r;

    CU_ASSERT_EQUAL(add(w, "k", 0, "old"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns");
    pg_cl_shm_expect(r, 1);
    CU_ASSERT_EQUAL(pg_cl_shm_generation(r), 0); /* nothing mapped yet */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 1), "old");
    CU_ASSERT_EQUAL(pg_cl_shm_generation(r), 1);
    pg_cl_shm_expect(r, 2); /* fence 2 ended; the gateway did not publish it */
    CU_ASSERT_EQUAL(pg_cl_shm_generation(r), 0); /* generation 1 is gone at once */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 1), "<ask>");
    CU_ASSERT_EQUAL(add(w, "k", 0, "new"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 2), 0);
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 1), "<ask>"); /* tried once */
    CU_ASSERT_TRUE(pg_cl_shm_refresh(r, 2)); /* expect, and map at once */
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 1), "new");
    pg_cl_shm_expect(r, 3);
    pg_cl_shm_drop(r); /* a failed fence: nothing is expected any more */
    CU_ASSERT_EQUAL(add(w, "k", 0, "three"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 3), 0);
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 1), "<ask>");
    CU_ASSERT_EQUAL(pg_cl_shm_generation(r), 0);
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

static void test_another_jobs_segment_is_not_used(void)
{
    pg_shm_t *w = writer(1);
    pg_cl_shm_t *r;

    CU_ASSERT_EQUAL(add(w, "k", 0, "v"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns2");
    CU_ASSERT_FALSE(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 0), "<ask>");
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

/* Values the servers would convert, refuse or answer from the job layout. */
static void test_values_the_server_would_not_send_verbatim_are_asked_for(void)
{
    char big[1001], longkey[80];
    pg_shm_t *w = writer(3);
    pg_cl_shm_t *r;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    CU_ASSERT_EQUAL(add(w, "typed", 0, NULL), 0);
    CU_ASSERT_EQUAL(add(w, "spaced", 0, "a b"), 0);
    CU_ASSERT_EQUAL(add(w, "big", 0, big), 0);
    CU_ASSERT_EQUAL(add(w, "PMI_process_mapping", 0, "(vector,(0,9,9))"), 0);
    CU_ASSERT_EQUAL(add(w, "universeSize", 0, "99"), 0);
    CU_ASSERT_EQUAL(add(w, longkey, 0, "v"), 0);
    /* the lowest poster's value is typed: a get without rank must ask,
     * though a higher rank's string is there */
    CU_ASSERT_EQUAL(add(w, "mixed", 1, NULL), 0);
    CU_ASSERT_EQUAL(add(w, "mixed", 2, "text"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "typed", 0, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI2, "spaced", 0, 0), "a b");
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI1, "spaced", 0, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI2, "big", 0, 0), big);
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI1, "big", 0, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "PMI_process_mapping", 0, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "universeSize", -1, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, longkey, 0, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "mixed", -1, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "mixed", 2, 0), "text");
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

/* PMI-1 values are served from the segment exactly up to the longest one
 * the server's get_result line carries (MPICH reads replies into a
 * 1024-byte buffer), and a PMI_ key that is no job attribute is an
 * ordinary key. */
static void test_pmi1_limit_is_the_servers_line(void)
{
    enum { FITS = 1023 - (int)sizeof("cmd=get_result rc=0 msg=success value=") + 1 - 1 };
    char fits[FITS + 1], over[FITS + 2];
    pg_shm_t *w = writer(1);
    pg_cl_shm_t *r;

    memset(fits, 'f', FITS);
    fits[FITS] = '\0';
    memset(over, 'o', FITS + 1);
    over[FITS + 1] = '\0';
    CU_ASSERT_EQUAL(add(w, "fits", 0, fits), 0);
    CU_ASSERT_EQUAL(add(w, "over", 0, over), 0);
    CU_ASSERT_EQUAL(add(w, "PMI_mine", 0, "v"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI1, "fits", 0, 0), fits);
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI1, "over", 0, 0), "<ask>");
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI2, "over", 0, 0), over);
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "PMI_mine", 0, 0), "v");
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

static void test_a_long_value_is_cut_and_its_length_reported(void)
{
    pg_shm_t *w = writer(1);
    pg_cl_shm_t *r;
    char buf[4];
    size_t len = 0;

    CU_ASSERT_EQUAL(add(w, "k", 0, "abcdefgh"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_EQUAL(pg_cl_shm_get(r, BOTH, "k", 0, 0, buf, sizeof(buf), &len), PG_CL_SHM_FOUND);
    CU_ASSERT_EQUAL(len, 8);
    CU_ASSERT_STRING_EQUAL(buf, "abc");
    CU_ASSERT_EQUAL(pg_cl_shm_get(r, BOTH, "k", 0, 0, buf, 0, &len), PG_CL_SHM_ASK);
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

/* ---- damaged files ------------------------------------------------------ */

typedef struct blob {
    char *data;
    size_t size;
} blob_t;

static blob_t read_file(const char *path)
{
    blob_t b = { NULL, 0 };
    struct stat st;
    int fd = open(path, O_RDONLY);

    CU_ASSERT_FATAL(fd >= 0 && fstat(fd, &st) == 0);
    b.size = (size_t)st.st_size;
    b.data = malloc(b.size);
    CU_ASSERT_FATAL(b.data != NULL && read(fd, b.data, b.size) == (ssize_t)b.size);
    close(fd);
    return b;
}

static char damaged_path[64];
static int damaged_fd = -1;

/* A copy of the bytes as the writer makes a segment: a memfd sealed
 * with `seals`, at damaged_path (/proc/self/fd/N). */
static void write_sealed(const char *data, size_t size, int seals)
{
    if (damaged_fd >= 0)
        close(damaged_fd);
    damaged_fd = memfd_create("pg-shm-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    CU_ASSERT_FATAL(damaged_fd >= 0);
    CU_ASSERT_FATAL(size == 0 || write(damaged_fd, data, size) == (ssize_t)size);
    CU_ASSERT_FATAL(fcntl(damaged_fd, F_ADD_SEALS, seals) == 0);
    snprintf(damaged_path, sizeof(damaged_path), "/proc/self/fd/%d", damaged_fd);
}

static void write_damaged(const char *data, size_t size)
{
    write_sealed(data, size, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
}

static void damaged_done(void)
{
    close(damaged_fd);
    damaged_fd = -1;
}

/* Does a reader of the segment at `path` answer "k"? */
static bool damaged_answers_at(const char *path)
{
    pg_cl_shm_t *r = pg_cl_shm_new(path, "ns");
    bool used = pg_cl_shm_refresh(r, 1) && strcmp(get(r, BOTH, "k", -1, -1), "<ask>") != 0;

    pg_cl_shm_free(r);
    return used;
}

/* Does a reader of the damaged copy answer "k"? */
static bool damaged_answers(const char *data, size_t size)
{
    write_damaged(data, size);
    return damaged_answers_at(damaged_path);
}

#define FIELD(b, type, member) (*(type *)((b).data + offsetof(pg_shm_header_t, member)))

static pg_shm_entry_t *entry_of(blob_t b, const char *key, uint32_t rank)
{
    const pg_shm_header_t *h = (const pg_shm_header_t *)b.data;
    pg_shm_entry_t *slots = (pg_shm_entry_t *)(b.data + h->slots_off);

    for (uint32_t i = 0; i < h->nslots; i++)
        if (slots[i].key_len == strlen(key) && slots[i].rank == rank &&
            memcmp(b.data + h->strings_off + slots[i].key_off, key, strlen(key)) == 0)
            return &slots[i];
    return NULL;
}

static void test_damaged_or_truncated_segments_are_treated_as_absent(void)
{
    pg_shm_t *w = writer(2);
    blob_t good, bad;
    const pg_shm_header_t *h;

    CU_ASSERT_EQUAL(add(w, "k", 0, "value"), 0);
    CU_ASSERT_EQUAL(add(w, "other", 1, "fine"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    good = read_file(seg_path(w));
    h = (const pg_shm_header_t *)good.data;
    bad.size = good.size;
    bad.data = malloc(good.size);
    CU_ASSERT_FATAL(bad.data != NULL);

    CU_ASSERT_TRUE(damaged_answers(good.data, good.size)); /* the copy itself is fine */
    CU_ASSERT_FALSE(damaged_answers(good.data, good.size / 2));
    CU_ASSERT_FALSE(damaged_answers(good.data, sizeof(pg_shm_header_t) - 1));
    CU_ASSERT_FALSE(damaged_answers(good.data, 0));
#define DAMAGE(stmt)                                                                  \
    do {                                                                              \
        memcpy(bad.data, good.data, good.size);                                       \
        stmt;                                                                         \
        CU_ASSERT_FALSE(damaged_answers(bad.data, bad.size));                          \
    } while (0)
    DAMAGE(bad.data[0] ^= 1);
    DAMAGE(FIELD(bad, uint32_t, version) = PG_SHM_VERSION + 1);
    DAMAGE(FIELD(bad, uint64_t, total_size) += 1);
    DAMAGE(FIELD(bad, uint32_t, nslots) = 3);
    DAMAGE(FIELD(bad, uint32_t, nslots) = 1u << 30);
    DAMAGE(FIELD(bad, uint64_t, slots_off) = good.size);
    DAMAGE(FIELD(bad, uint64_t, strings_off) = good.size - 1);
    DAMAGE(FIELD(bad, uint64_t, strings_size) = UINT64_MAX - 8);
    DAMAGE(bad.data[h->strings_off + h->strings_size - 1] = 'x'); /* no final NUL */
    DAMAGE(FIELD(bad, uint64_t, nspace_off) = good.size + 100);
    DAMAGE(bad.data[h->nspace_off] = 'X');
    /* a damaged entry: that entry is asked for, the rest still answers */
    memcpy(bad.data, good.data, good.size);
    entry_of(bad, "k", 0)->val_off = UINT32_MAX - 2;
    entry_of(bad, "k", PG_SHM_ANY_RANK)->val_len = UINT32_MAX;
    write_damaged(bad.data, bad.size);
    {
        pg_cl_shm_t *r = pg_cl_shm_new(damaged_path, "ns");

        CU_ASSERT_TRUE(pg_cl_shm_refresh(r, 1));
        CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 1), "<ask>");
        CU_ASSERT_STRING_EQUAL(get(r, BOTH, "other", 1, 0), "fine");
        pg_cl_shm_free(r);
    }
    damaged_done();
    free(good.data);
    free(bad.data);
    pg_shm_free(w);
}

static void test_a_fence_with_no_data_publishes_an_empty_segment(void)
{
    pg_shm_t *w = writer(2);
    pg_cl_shm_t *r = pg_cl_shm_new(pg_shm_path(w), "ns");

    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    CU_ASSERT_TRUE(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 0), "<ask>");
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

static void test_no_segment_offered_or_file_missing_means_ask(void)
{
    pg_shm_t *w = writer(1);
    pg_cl_shm_t *r;
    char buf[8];
    size_t len;
    struct stat st;
    char *path;

    CU_ASSERT_PTR_NULL(pg_cl_shm_new(NULL, "ns"));
    CU_ASSERT_PTR_NULL(pg_cl_shm_new("", "ns"));
    CU_ASSERT_PTR_NULL(pg_cl_shm_new("/x", NULL));
    CU_ASSERT_EQUAL(pg_cl_shm_get(NULL, BOTH, "k", 0, 0, buf, sizeof(buf), &len), PG_CL_SHM_ASK);
    CU_ASSERT_FALSE(pg_cl_shm_refresh(NULL, 1));
    r = pg_cl_shm_new(pg_shm_path(w), "ns"); /* nothing published yet */
    CU_ASSERT_FALSE(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_STRING_EQUAL(get(r, BOTH, "k", 0, 0), "<ask>");
    pg_cl_shm_free(r);
    /* the writer's input checks, and its cleanup */
    CU_ASSERT_EQUAL(add(w, "", 0, "v"), -EINVAL);
    CU_ASSERT_EQUAL(add(w, "k", 1, "v"), -EINVAL);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    path = strdup(seg_path(w));
    CU_ASSERT_EQUAL(stat(path, &st), 0);
    pg_shm_free(w);
    CU_ASSERT_NOT_EQUAL(stat(path, &st), 0); /* nothing outlives the writer */
    free(path);
}

static bool pmix_get(pg_cl_shm_t *r, const char *key, uint32_t rank, pmix_value_t *out);

/* A file any process of the user could truncate is never mapped: touching
 * a page cut off under a mapping kills the reader (SIGBUS).  Only a segment
 * sealed against shrinking and writing is used, and only a commit table
 * sealed against shrinking. */
static void test_files_that_could_shrink_are_not_mapped(void)
{
    pg_shm_t *w = writer(2);
    char plain[] = "/tmp/pg-shm-plain.XXXXXX", spec[512];
    pg_cl_shm_t *r;
    pmix_value_t out;
    blob_t good;
    int fd;

    CU_ASSERT_EQUAL(add(w, "k", 1, "v1"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    good = read_file(seg_path(w));
    fd = mkstemp(plain);
    CU_ASSERT_FATAL(fd >= 0 && write(fd, good.data, good.size) == (ssize_t)good.size);
    close(fd);
    CU_ASSERT_FALSE(damaged_answers_at(plain));
    write_sealed(good.data, good.size, F_SEAL_SHRINK); /* could still be written */
    CU_ASSERT_FALSE(damaged_answers_at(damaged_path));
    write_sealed(good.data, good.size, F_SEAL_SHRINK | F_SEAL_WRITE);
    CU_ASSERT_TRUE(damaged_answers_at(damaged_path));
    /* the writer's segment beside an unsealed table: PMI readers only */
    fd = open(plain, O_WRONLY | O_TRUNC);
    CU_ASSERT_FATAL(fd >= 0 && ftruncate(fd, (off_t)pg_shm_commits_size(2)) == 0);
    close(fd);
    snprintf(spec, sizeof(spec), "%s:%s", seg_path(w), plain);
    r = pg_cl_shm_new(spec, "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI2, "k", 1, 0), "v1");
    CU_ASSERT_FALSE(pmix_get(r, "k", 1, &out));
    pg_cl_shm_free(r);
    unlink(plain);
    damaged_done();
    free(good.data);
    pg_shm_free(w);
}

/* What a rank could do to the files it is offered, and fails to: shrink,
 * write or map for writing the segment or the commit table.  The readers
 * and the writer (who stores into the table) go on as before. */
static void test_nobody_can_shrink_or_write_what_readers_map(void)
{
    pg_shm_t *w = writer(2);
    const char *paths[2];
    pg_cl_shm_t *r;
    pmix_value_t out;

    CU_ASSERT_EQUAL(add(w, "k", 1, "v1"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    paths[0] = seg_path(w);
    paths[1] = table_path(w);
    for (int i = 0; i < 2; i++) {
        int fd = open(paths[i], O_RDWR);
        void *m;

        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_NOT_EQUAL(ftruncate(fd, 0), 0);
        CU_ASSERT_NOT_EQUAL(truncate(paths[i], 8), 0);
        CU_ASSERT_NOT_EQUAL(write(fd, "XXXXXXXX", 8), 8);
        CU_ASSERT_NOT_EQUAL(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096), 0);
        m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        CU_ASSERT_EQUAL(m, MAP_FAILED);
        CU_ASSERT_NOT_EQUAL(fcntl(fd, F_ADD_SEALS, 0), 0); /* sealed for good */
        close(fd);
    }
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI2, "k", 1, 0), "v1");
    CU_ASSERT_TRUE(pmix_get(r, "k", 1, &out));
    pg_value_destruct(&out);
    pg_shm_committed(w, 1, 1); /* the writer's store still lands, and is seen */
    CU_ASSERT_FALSE(pmix_get(r, "k", 1, &out));
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

/* ---- PMIx lookups (libpmix) ------------------------------------------------ */

static int take_value(const void *bytes, size_t len, void *arg)
{
    pmix_data_buffer_t view;

    pg_pmix_msg_view(&view, bytes, len);
    if (pg_pmix_unpack_one(&view, arg, PMIX_VALUE) != PMIX_SUCCESS)
        return -1;
    return pg_buffer_unread(&view) == 0 ? 0 : -1;
}

/* Looks (key, rank) up for PMIx; true and *out (to destruct) when found. */
static bool pmix_get(pg_cl_shm_t *r, const char *key, uint32_t rank, pmix_value_t *out)
{
    PMIX_VALUE_CONSTRUCT(out);
    return pg_cl_shm_get_packed(r, key, rank, take_value, out) == PG_CL_SHM_FOUND;
}

static void test_pmix_values_come_back_typed_as_the_server_sends_them(void)
{
    pg_shm_t *w = writer(3);
    pg_cl_shm_t *r;
    pmix_value_t in[4], out;
    pmix_proc_t proc;
    pmix_byte_object_t bo = { (char *)"\0bytes\0", 7 };
    int32_t i32 = -42;

    PMIX_LOAD_PROCID(&proc, "other-job", 5);
    PMIX_VALUE_LOAD(&in[0], &i32, PMIX_INT32);
    PMIX_VALUE_LOAD(&in[1], "a card with spaces", PMIX_STRING);
    PMIX_VALUE_LOAD(&in[2], &bo, PMIX_BYTE_OBJECT);
    PMIX_VALUE_LOAD(&in[3], &proc, PMIX_PROC); /* kept packed by the engine */
    CU_ASSERT_EQUAL(add_pmix(w, "int", 1, &in[0]), 0);
    CU_ASSERT_EQUAL(add_pmix(w, "str", 2, &in[1]), 0);
    CU_ASSERT_EQUAL(add_pmix(w, "str", 1, &in[0]), 0);
    CU_ASSERT_EQUAL(add_pmix(w, "bo", 0, &in[2]), 0);
    CU_ASSERT_EQUAL(add_pmix(w, "proc", 2, &in[3]), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_TRUE_FATAL(pmix_get(r, "int", 1, &out));
    CU_ASSERT_EQUAL(pg_value_compare(&out, &in[0]), PMIX_EQUAL);
    pg_value_destruct(&out);
    CU_ASSERT_TRUE_FATAL(pmix_get(r, "str", 2, &out));
    CU_ASSERT_EQUAL(pg_value_compare(&out, &in[1]), PMIX_EQUAL);
    pg_value_destruct(&out);
    /* without a rank: the lowest poster's, typed */
    CU_ASSERT_TRUE_FATAL(pmix_get(r, "str", PG_CL_SHM_ANY, &out));
    CU_ASSERT_EQUAL(pg_value_compare(&out, &in[0]), PMIX_EQUAL);
    pg_value_destruct(&out);
    CU_ASSERT_TRUE_FATAL(pmix_get(r, "bo", 0, &out));
    CU_ASSERT_EQUAL(pg_value_compare(&out, &in[2]), PMIX_EQUAL);
    pg_value_destruct(&out);
    CU_ASSERT_TRUE_FATAL(pmix_get(r, "proc", 2, &out));
    CU_ASSERT_EQUAL(out.type, PMIX_PROC);
    CU_ASSERT_TRUE(PMIX_CHECK_PROCID(out.data.proc, &proc));
    pg_value_destruct(&out);
    /* what the segment does not hold, and ranks outside the job: ask */
    CU_ASSERT_FALSE(pmix_get(r, "int", 0, &out));
    CU_ASSERT_FALSE(pmix_get(r, "none", PG_CL_SHM_ANY, &out));
    CU_ASSERT_FALSE(pmix_get(r, "int", 3, &out));
    CU_ASSERT_FALSE(pmix_get(r, "int", PMIX_RANK_WILDCARD, &out));
    /* PMI readers: only the string is theirs, the typed ones are asked */
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI2, "str", 2, 0), "a card with spaces");
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI2, "int", 1, 0), "<ask>");
    for (int i = 0; i < 4; i++)
        PMIX_VALUE_DESTRUCT(&in[i]);
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

static void test_a_commit_after_the_fence_sends_pmix_readers_to_the_server(void)
{
    pg_shm_t *w = writer(3);
    pg_cl_shm_t *r;
    pmix_value_t out;

    CU_ASSERT_EQUAL(add(w, "k", 0, "v0"), 0);
    CU_ASSERT_EQUAL(add(w, "k", 1, "v1"), 0);
    /* commits before the fence closed (generation 0 was current) */
    pg_shm_committed(w, 0, 0);
    pg_shm_committed(w, 1, 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    r = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_TRUE(pmix_get(r, "k", 1, &out));
    pg_value_destruct(&out);
    CU_ASSERT_TRUE(pmix_get(r, "k", PG_CL_SHM_ANY, &out));
    CU_ASSERT_STRING_EQUAL(out.data.string, "v0");
    pg_value_destruct(&out);
    /* rank 1 commits again after generation 1 is out: the server may hold
     * a newer value of it, and of any get without a rank */
    pg_shm_committed(w, 1, 1);
    CU_ASSERT_FALSE(pmix_get(r, "k", 1, &out));
    CU_ASSERT_FALSE(pmix_get(r, "k", PG_CL_SHM_ANY, &out));
    CU_ASSERT_TRUE(pmix_get(r, "k", 0, &out));
    pg_value_destruct(&out);
    /* the next fence's generation is fresh again */
    CU_ASSERT_EQUAL(add(w, "k", 1, "v1 again"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 2), 0);
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 2));
    CU_ASSERT_TRUE_FATAL(pmix_get(r, "k", 1, &out));
    CU_ASSERT_STRING_EQUAL(out.data.string, "v1 again");
    pg_value_destruct(&out);
    pg_shm_committed(w, 9, 2); /* out of the job: ignored */
    CU_ASSERT_TRUE(pmix_get(r, "k", PG_CL_SHM_ANY, &out));
    pg_value_destruct(&out);
    pg_cl_shm_free(r);
    pg_shm_free(w);
}

/* A segment whose commit table cannot be mapped still serves PMI readers,
 * but never PMIx ones: without it a newer commit could not be seen. */
static void test_without_the_commit_table_pmix_readers_ask(void)
{
    pg_shm_t *w = writer(2);
    pg_cl_shm_t *r;
    pmix_value_t out;
    blob_t b;

    CU_ASSERT_EQUAL(add(w, "k", 1, "v1"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    b = read_file(seg_path(w));
    write_damaged(b.data, b.size); /* the segment alone, no table named */
    r = pg_cl_shm_new(damaged_path, "ns");
    CU_ASSERT_TRUE_FATAL(pg_cl_shm_refresh(r, 1));
    CU_ASSERT_STRING_EQUAL(get(r, PG_CL_SHM_PMI2, "k", 1, 0), "v1");
    CU_ASSERT_FALSE(pmix_get(r, "k", 1, &out));
    pg_cl_shm_free(r);
    damaged_done();
    free(b.data);
    pg_shm_free(w);
}

/* ---- generations replaced under readers ------------------------------------ */

/* The writer builds every generation in the same memory: a smaller one
 * after a larger one must not carry the larger one's bytes into its file. */
static void test_a_generation_carries_nothing_of_an_earlier_one(void)
{
    static const char *const typed[] = { "t0", "t1", "t2" };
    pg_shm_t *w = writer(4);
    char big[900], *file = NULL;
    size_t size = 0;
    FILE *f;

    memset(big, 'Q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (uint32_t r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(add(w, "card", r, big), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    CU_ASSERT_EQUAL(add(w, "card", 0, "small"), 0);
    for (uint32_t r = 0; r < 4; r++) /* each sized for text, but stored as none */
        for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++)
            CU_ASSERT_EQUAL(add(w, typed[i], r, NULL), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 2), 0);
    f = fopen(seg_path(w), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    file = malloc(65536);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    size = fread(file, 1, 65536, f);
    fclose(f);
    CU_ASSERT(size > sizeof(pg_shm_header_t));
    CU_ASSERT_EQUAL(size, ((const pg_shm_header_t *)file)->total_size);
    /* eight in a row: no hash or offset is made of them by chance */
    CU_ASSERT_PTR_NULL(memmem(file, size, "QQQQQQQQ", 8));
    free(file);
    pg_shm_free(w);
}

static void test_a_mapped_generation_survives_its_replacement(void)
{
    pg_shm_t *w = writer(1);
    pg_cl_shm_t *old, *fresh;

    CU_ASSERT_EQUAL(add(w, "k", 0, "gen1"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 1), 0);
    old = pg_cl_shm_new(pg_shm_path(w), "ns");
    fresh = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_TRUE(pg_cl_shm_refresh(old, 1));
    CU_ASSERT_EQUAL(add(w, "k", 0, "gen2"), 0);
    CU_ASSERT_EQUAL(pg_shm_publish(w, 2), 0);
    CU_ASSERT_STRING_EQUAL(get(old, BOTH, "k", 0, 0), "gen1");
    CU_ASSERT_TRUE(pg_cl_shm_refresh(fresh, 2));
    CU_ASSERT_STRING_EQUAL(get(fresh, BOTH, "k", 0, 0), "gen2");
    pg_cl_shm_free(old);
    pg_cl_shm_free(fresh);
    pg_shm_free(w);
}

enum { RANKS = 16, GENERATIONS = 40, THREADS = 3 };

typedef struct hammer {
    pg_cl_shm_t *r;
    volatile int stop;
    int bad;
    long found;
} hammer_t;

/* Every answer must be a whole value of one generation: "<rank>:<gen>". */
static void *hammer_run(void *arg)
{
    hammer_t *h = arg;
    char key[16], buf[64];
    size_t len;

    for (unsigned i = 0; !h->stop; i++) {
        unsigned rank = i % RANKS, r2, g;

        snprintf(key, sizeof(key), "card-%u", rank);
        if (pg_cl_shm_get(h->r, BOTH, key, (int)rank, 0, buf, sizeof(buf), &len) !=
            PG_CL_SHM_FOUND)
            continue;
        __atomic_fetch_add(&h->found, 1, __ATOMIC_RELAXED);
        if (sscanf(buf, "%u:%u", &r2, &g) != 2 || r2 != rank || g == 0 || g > GENERATIONS ||
            len != strlen(buf))
            __atomic_fetch_add(&h->bad, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* The republishing must meet running readers: on a loaded machine the
 * threads may not have run at all yet.  Waits for their first find (10 s
 * at most). */
static void wait_for_a_find(hammer_t *h)
{
    for (int ms = 0; ms < 10000 && __atomic_load_n(&h->found, __ATOMIC_RELAXED) == 0; ms++)
        usleep(1000);
}

static void test_concurrent_readers_see_whole_generations_during_republish(void)
{
    pg_shm_t *w = writer(RANKS);
    hammer_t h = { 0 };
    pthread_t t[THREADS];
    char keys[RANKS][16], vals[RANKS][16]; /* borrowed by the writer until publish */

    h.r = pg_cl_shm_new(pg_shm_path(w), "ns");
    CU_ASSERT_PTR_NOT_NULL_FATAL(h.r);
    for (int i = 0; i < THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, hammer_run, &h), 0);
    for (unsigned g = 1; g <= GENERATIONS; g++) {
        for (unsigned r = 0; r < RANKS; r++) {
            snprintf(keys[r], sizeof(keys[r]), "card-%u", r);
            snprintf(vals[r], sizeof(vals[r]), "%u:%u", r, g);
            CU_ASSERT_EQUAL(add(w, keys[r], r, vals[r]), 0);
        }
        CU_ASSERT_EQUAL(pg_shm_publish(w, g), 0);
        CU_ASSERT_TRUE(pg_cl_shm_refresh(h.r, g));
        if (g == 1)
            wait_for_a_find(&h);
        usleep(1000);
    }
    h.stop = 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(h.bad, 0);
    CU_ASSERT_TRUE(h.found > 0);
    pg_cl_shm_free(h.r);
    pg_shm_free(w);
}

static const pg_cunit_test_t tests[] = {
    { "gets_by_rank_own_value_first_then_lowest_poster",
      test_gets_by_rank_own_value_first_then_lowest_poster },
    { "only_the_generation_of_the_last_fence_is_used",
      test_only_the_generation_of_the_last_fence_is_used },
    { "another_jobs_segment_is_not_used", test_another_jobs_segment_is_not_used },
    { "values_the_server_would_not_send_verbatim_are_asked_for",
      test_values_the_server_would_not_send_verbatim_are_asked_for },
    { "pmi1_limit_is_the_servers_line", test_pmi1_limit_is_the_servers_line },
    { "a_long_value_is_cut_and_its_length_reported",
      test_a_long_value_is_cut_and_its_length_reported },
    { "damaged_or_truncated_segments_are_treated_as_absent",
      test_damaged_or_truncated_segments_are_treated_as_absent },
    { "a_fence_with_no_data_publishes_an_empty_segment",
      test_a_fence_with_no_data_publishes_an_empty_segment },
    { "no_segment_offered_or_file_missing_means_ask",
      test_no_segment_offered_or_file_missing_means_ask },
    { "files_that_could_shrink_are_not_mapped", test_files_that_could_shrink_are_not_mapped },
    { "nobody_can_shrink_or_write_what_readers_map",
      test_nobody_can_shrink_or_write_what_readers_map },
    { "pmix_values_come_back_typed_as_the_server_sends_them",
      test_pmix_values_come_back_typed_as_the_server_sends_them },
    { "a_commit_after_the_fence_sends_pmix_readers_to_the_server",
      test_a_commit_after_the_fence_sends_pmix_readers_to_the_server },
    { "without_the_commit_table_pmix_readers_ask", test_without_the_commit_table_pmix_readers_ask },
    { "a_generation_carries_nothing_of_an_earlier_one",
      test_a_generation_carries_nothing_of_an_earlier_one },
    { "a_mapped_generation_survives_its_replacement",
      test_a_mapped_generation_survives_its_replacement },
    { "concurrent_readers_see_whole_generations_during_republish",
      test_concurrent_readers_see_whole_generations_during_republish },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "shm_segment", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
