/*
 * pmix_seeds OUTDIR TRACE...: writes the starting corpus of fuzz_pmix
 * (tests/fuzz/run.sh builds and runs it), so the fuzzer begins from what
 * real clients send instead of rediscovering the pack format:
 *   - every PMIx frame of the traces (tests/traces/), requests and replies,
 *     each alone;
 *   - the whole job's requests as one stream, the request ids rewritten to
 *     id * 4 + connection so fuzz_pmix hands each connection's frames to one
 *     rank (it routes by id % 4), after a preamble;
 *   - a scripted job built with the transport's encoder: puts of every
 *     value type, gets that succeed, wait and carry every qualifier,
 *     publish/lookup/unpublish, fences, finalize (as one stream, and each
 *     request alone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"
#include "wire/pg_escape.h"
#include "wire/pg_pmix_frame.h"

enum { SEED_NRANKS = 4, SEED_ID_OFFSET = PG_PMIX_HEADER_LEN + 7 + 6 };

static int seed_write(const char *dir, const char *name, int n, const void *bytes, size_t len)
{
    char path[4096];
    FILE *f;
    int rc;

    snprintf(path, sizeof(path), "%s/%s-%d", dir, name, n);
    f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    rc = fwrite(bytes, 1, len, f) == len ? 0 : -1;
    return fclose(f) == 0 ? rc : -1;
}

/* The request id sits at a fixed place: after the frame length, the UINT8
 * command group (7 bytes) and the UINT32 group's type and count (6). */
static void seed_route(char *frame, size_t len, int conn)
{
    uint32_t id;

    if (len < SEED_ID_OFFSET + 4)
        return;
    id = pg_pmix_get_u32((unsigned char *)frame + SEED_ID_OFFSET);
    pg_pmix_put_u32((unsigned char *)frame + SEED_ID_OFFSET,
                    id * SEED_NRANKS + (uint32_t)(conn % SEED_NRANKS));
}

/* Every PMIx line of one trace. */
static int seeds_of_trace(const char *dir, const char *path, FILE *job, int *n)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;

    if (f == NULL)
        return -1;
    while ((got = getline(&line, &cap, f)) > 0) {
        unsigned long long t;
        int conn, rank, off = 0;
        char proto[8], dir_word[4];
        size_t len;

        if (sscanf(line, "%llu %d %d %7s %3s %n", &t, &conn, &rank, proto, dir_word, &off) != 5 ||
            strcmp(proto, "pmix") != 0 || off == 0)
            continue;
        got -= off;
        if (got > 0 && line[off + got - 1] == '\n')
            got--;
        if (pg_unescape(line + off, (size_t)got, line + off, &len) != 0)
            continue;
        if (seed_write(dir, dir_word[0] == 'C' ? "trace-request" : "trace-reply", ++*n, line + off,
                       len) != 0)
            break;
        if (dir_word[0] == 'C' && !pg_pmix_is_start(line + off, len)) {
            seed_route(line + off, len, conn);
            fwrite(line + off, 1, len, job);
        }
    }
    free(line);
    fclose(f);
    return 0;
}

/* ---- requests built with the encoder ---------------------------------- */

/* One info per value type, nested arrays included. */
static size_t seed_infos(pmix_info_t *info)
{
    static pmix_proc_t proc = { "fuzzjob", 1 };
    static pmix_info_t inner[2];
    static pmix_data_array_t da = { PMIX_INFO, 2, inner };
    pmix_byte_object_t bo = { (char *)"\x00\x01\x02", 3 };
    struct timeval tv = { 5, 6 };
    pmix_envar_t env = { (char *)"NAME", (char *)"value", ':' };
    size_t n = 0;

    PMIX_INFO_LOAD(&inner[0], "inner", "text", PMIX_STRING);
    PMIX_INFO_LOAD(&inner[1], PMIX_TIMEOUT, &(int){ 1 }, PMIX_INT);
    PMIX_INFO_LOAD(&info[n++], PMIX_IMMEDIATE, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &(int){ 2 }, PMIX_INT);
    PMIX_INFO_LOAD(&info[n++], PMIX_DATA_SCOPE, &(pmix_scope_t){ PMIX_REMOTE }, PMIX_SCOPE);
    PMIX_INFO_LOAD(&info[n++], PMIX_HOSTNAME, "node1", PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_NODE_INFO, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[n++], PMIX_APPNUM, &(uint32_t){ 0 }, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], "bo", &bo, PMIX_BYTE_OBJECT);
    PMIX_INFO_LOAD(&info[n++], "proc", &proc, PMIX_PROC);
    PMIX_INFO_LOAD(&info[n++], "darray", &da, PMIX_DATA_ARRAY);
    PMIX_INFO_LOAD(&info[n++], "double", &(double){ -0.5 }, PMIX_DOUBLE);
    PMIX_INFO_LOAD(&info[n++], "float", &(float){ 2.5f }, PMIX_FLOAT);
    PMIX_INFO_LOAD(&info[n++], "tv", &tv, PMIX_TIMEVAL);
    PMIX_INFO_LOAD(&info[n++], "env", &env, PMIX_ENVAR);
    PMIX_INFO_LOAD(&info[n++], "size", &(size_t){ 7 }, PMIX_SIZE);
    PMIX_INFO_LOAD(&info[n++], "i64", &(int64_t){ -7 }, PMIX_INT64);
    PMIX_INFO_LOAD(&info[n++], "rank", &(pmix_rank_t){ 3 }, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[n++], "status", &(pmix_status_t){ -46 }, PMIX_STATUS);
    PMIX_INFO_LOAD(&info[n++], "u16", &(uint16_t){ 9 }, PMIX_UINT16);
    return n;
}

/* ---- a scripted job, built with the encoder ----------------------------- */

/* One request under construction; `rank` picks the connection through the
 * request id (id % SEED_NRANKS, as fuzz_pmix routes). */
typedef struct seed_req {
    pmix_data_buffer_t buf;
} seed_req_t;

static uint32_t seed_next_id;

static void req_begin(seed_req_t *q, uint8_t cmd, int rank)
{
    pg_buffer_construct(&q->buf);
    pg_pmix_msg_begin(&q->buf, cmd, ++seed_next_id * SEED_NRANKS + (uint32_t)rank);
}

static void req_proc(seed_req_t *q, int rank)
{
    pmix_proc_t p;

    PMIX_LOAD_PROCID(&p, "", (pmix_rank_t)rank);
    pg_pmix_pack_one(&q->buf, &p, PMIX_PROC);
}

static void req_string(seed_req_t *q, const char *s)
{
    pg_pmix_pack_one(&q->buf, &s, PMIX_STRING);
}

static void req_infos(seed_req_t *q, pmix_info_t *info, size_t n)
{
    pg_pmix_pack_array(&q->buf, info, n, PMIX_INFO);
    for (size_t i = 0; i < n; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
}

/* Seals the request and appends it to the session (and writes it alone). */
static int req_end(seed_req_t *q, const char *dir, int *n, FILE *session)
{
    int rc = pg_pmix_msg_seal(&q->buf) == PMIX_SUCCESS ? 0 : -1;

    if (rc == 0)
        rc = seed_write(dir, "built", ++*n, q->buf.base_ptr, q->buf.bytes_used);
    if (rc == 0)
        rc = fwrite(q->buf.base_ptr, 1, q->buf.bytes_used, session) == q->buf.bytes_used ? 0 : -1;
    pg_buffer_destruct(&q->buf);
    return rc;
}

static void seed_init(seed_req_t *q, int rank)
{
    req_begin(q, PG_PMIX_CMD_INIT, rank);
}

/* rank puts every value type (key-0 is a string), then commits */
static void seed_commit(seed_req_t *q, int rank)
{
    pmix_info_t info[32];
    uint32_t n = (uint32_t)seed_infos(info);

    req_begin(q, PG_PMIX_CMD_COMMIT, rank);
    pg_pmix_pack_one(&q->buf, &n, PMIX_UINT32);
    for (uint32_t i = 0; i < n; i++) {
        pmix_scope_t scope = (pmix_scope_t)(1 + i % 3);
        char key[16];

        snprintf(key, sizeof(key), "key-%u", i);
        pg_pmix_pack_one(&q->buf, &scope, PMIX_SCOPE);
        req_string(q, key);
        pg_pmix_pack_one(&q->buf, &info[i].value, PMIX_VALUE);
        PMIX_INFO_DESTRUCT(&info[i]);
    }
}

static void seed_get(seed_req_t *q, int rank, int target, const char *key, pmix_info_t *info,
                     size_t ninfo)
{
    bool nb = ninfo % 2 == 1;

    req_begin(q, PG_PMIX_CMD_GET, rank);
    req_proc(q, target);
    req_string(q, key);
    req_infos(q, info, ninfo);
    pg_pmix_pack_one(&q->buf, &nb, PMIX_BOOL);
}

static void seed_keys(seed_req_t *q, uint8_t cmd, int rank, const char *key, pmix_info_t *info,
                      size_t ninfo)
{
    req_begin(q, cmd, rank);
    pg_pmix_pack_array(&q->buf, &key, key != NULL ? 1 : 0, PMIX_STRING);
    req_infos(q, info, ninfo);
}

static void seed_fence(seed_req_t *q, int rank, int nprocs)
{
    pmix_proc_t procs[2];
    pmix_info_t info[1];

    PMIX_LOAD_PROCID(&procs[0], "", 0);
    PMIX_LOAD_PROCID(&procs[1], "", 1);
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    req_begin(q, PG_PMIX_CMD_FENCE, rank);
    pg_pmix_pack_array(&q->buf, procs, (size_t)nprocs, PMIX_PROC);
    req_infos(q, info, 1);
}

/* Rank 3 inits (0-2 are inited by fuzz_pmix), puts and commits; the others
 * get its values, reserved keys with every qualifier, and keys posted
 * later (held gets); publish, lookups that wait, fences over everyone and
 * over two ranks, unpublish, finalize. */
static int seeds_built(const char *dir, int *n)
{
    char path[4096];
    seed_req_t q;
    pmix_info_t i[4];
    FILE *s;
    int rc = 0;

    snprintf(path, sizeof(path), "%s/built-session", dir);
    s = fopen(path, "wb");
    if (s == NULL)
        return -1;
#define STEP(call) \
    do {                                           \
        call;                                      \
        if (rc == 0)                               \
            rc = req_end(&q, dir, n, s);           \
    } while (0)
    STEP(seed_init(&q, 3));
    STEP(seed_commit(&q, 3));
    STEP(seed_get(&q, 1, 3, "key-0", NULL, 0));
    STEP(seed_get(&q, 1, 3, "key-7", NULL, 0));
    PMIX_INFO_LOAD(&i[0], PMIX_TIMEOUT, &(int){ 2 }, PMIX_INT);
    STEP(seed_get(&q, 0, 2, "later", i, 1));
    STEP(seed_get(&q, 2, PMIX_RANK_UNDEF, "anyone", NULL, 0));
    PMIX_INFO_LOAD(&i[0], PMIX_HOSTNAME, "node1", PMIX_STRING);
    STEP(seed_get(&q, 1, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, i, 1));
    PMIX_INFO_LOAD(&i[0], PMIX_NODE_INFO, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&i[1], PMIX_NODEID, &(uint32_t){ 1 }, PMIX_UINT32);
    STEP(seed_get(&q, 1, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, i, 2));
    PMIX_INFO_LOAD(&i[0], PMIX_APP_INFO, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&i[1], PMIX_APPNUM, &(uint32_t){ 0 }, PMIX_UINT32);
    PMIX_INFO_LOAD(&i[2], PMIX_GET_REFRESH_CACHE, NULL, PMIX_BOOL);
    STEP(seed_get(&q, 0, PMIX_RANK_WILDCARD, PMIX_APP_SIZE, i, 3));
    PMIX_INFO_LOAD(&i[0], PMIX_SESSION_INFO, NULL, PMIX_BOOL);
    STEP(seed_get(&q, 0, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, i, 1));
    PMIX_INFO_LOAD(&i[0], PMIX_JOB_INFO, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&i[1], PMIX_IMMEDIATE, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&i[2], PMIX_DATA_SCOPE, &(pmix_scope_t){ PMIX_LOCAL }, PMIX_SCOPE);
    STEP(seed_get(&q, 2, 3, "key-1", i, 3));
    PMIX_INFO_LOAD(&i[0], "pub-1", "v", PMIX_STRING);
    PMIX_INFO_LOAD(&i[1], PMIX_RANGE, &(pmix_data_range_t){ PMIX_RANGE_SESSION }, PMIX_DATA_RANGE);
    PMIX_INFO_LOAD(&i[2], "pub-2", &(uint64_t){ 5 }, PMIX_UINT64);
    STEP(req_begin(&q, PG_PMIX_CMD_PUBLISH, 3); req_infos(&q, i, 3));
    STEP(seed_keys(&q, PG_PMIX_CMD_LOOKUP, 2, "pub-1", NULL, 0));
    PMIX_INFO_LOAD(&i[0], PMIX_WAIT, &(int){ 1 }, PMIX_INT);
    PMIX_INFO_LOAD(&i[1], PMIX_TIMEOUT, &(int){ 1 }, PMIX_INT);
    STEP(seed_keys(&q, PG_PMIX_CMD_LOOKUP, 0, "pub-3", i, 2));
    PMIX_INFO_LOAD(&i[0], "pub-3", "late", PMIX_STRING);
    STEP(req_begin(&q, PG_PMIX_CMD_PUBLISH, 1); req_infos(&q, i, 1));
    STEP(seed_keys(&q, PG_PMIX_CMD_UNPUBLISH, 1, "pub-3", NULL, 0));
    for (int r = 0; r < SEED_NRANKS; r++)
        STEP(seed_fence(&q, r, 0));
    STEP(seed_fence(&q, 0, 2));
    STEP(seed_fence(&q, 1, 2));
    STEP(seed_commit(&q, 2));
    STEP(seed_keys(&q, PG_PMIX_CMD_UNPUBLISH, 3, NULL, NULL, 0));
    for (int r = 0; r < SEED_NRANKS; r++)
        STEP(req_begin(&q, PG_PMIX_CMD_FINALIZE, r); req_infos(&q, NULL, 0));
    if (rc == 0) { /* an abort, alone */
        req_begin(&q, PG_PMIX_CMD_ABORT, 1);
        pg_pmix_pack_one(&q.buf, &(pmix_status_t){ 3 }, PMIX_STATUS);
        req_string(&q, "bye");
        pg_pmix_pack_array(&q.buf, NULL, 0, PMIX_PROC);
        rc = req_end(&q, dir, n, s);
    }
#undef STEP
    return fclose(s) == 0 ? rc : -1;
}

int main(int argc, char **argv)
{
    unsigned char pre[PG_PMIX_PREAMBLE_LEN];
    char path[4096];
    FILE *job;
    int n = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: pmix_seeds OUTDIR [TRACE...]\n");
        return 2;
    }
    snprintf(path, sizeof(path), "%s/trace-job", argv[1]);
    job = fopen(path, "wb");
    if (job == NULL)
        return 1;
    pg_pmix_preamble_encode(pre, PG_PMIX_RANK_FROM_FD);
    fwrite(pre, 1, sizeof(pre), job);
    for (int i = 2; i < argc; i++)
        if (seeds_of_trace(argv[1], argv[i], job, &n) != 0)
            fprintf(stderr, "pmix_seeds: cannot read %s\n", argv[i]);
    if (fclose(job) != 0 || seeds_built(argv[1], &n) != 0)
        return 1;
    printf("%d\n", n);
    return 0;
}
