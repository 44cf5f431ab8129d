/*
 * test_trace_pmix: the trace tool's PMIx rules on synthetic frames built
 * with the transport's own encoder — decoding for `trace show`, pairing
 * replies by request id when they come out of order, which PMIx fences are
 * the job's fences, and the replay's rewriting and comparison (namespace and
 * machine-dependent keys are volatile, everything else is compared).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"
#include "tests/pg_cunit.h"
#include "trace/pg_replay_pmix.h"
#include "trace/pg_trace.h"
#include "trace/pg_trace_analyze.h"
#include "trace/pg_trace_pmix.h"
#include "wire/pg_pmix_frame.h"

/* ---------------------------------------------------------------- */
/* frames                                                             */
/* ---------------------------------------------------------------- */

typedef struct frame {
    char bytes[1024];
    size_t len;
} frame_t;

static void frame_take(frame_t *f, pmix_data_buffer_t *b)
{
    CU_ASSERT_FATAL(pg_pmix_msg_seal(b) == PMIX_SUCCESS);
    CU_ASSERT_FATAL(b->bytes_used <= sizeof(f->bytes));
    memcpy(f->bytes, b->base_ptr, b->bytes_used);
    f->len = b->bytes_used;
    pg_buffer_destruct(b);
}

static void get_request(frame_t *f, uint32_t id, const char *nspace, pmix_rank_t rank,
                        const char *key)
{
    pmix_data_buffer_t b;
    pmix_proc_t p = { .rank = rank };
    bool nb = false;

    snprintf(p.nspace, sizeof(p.nspace), "%s", nspace);
    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin(&b, PG_PMIX_CMD_GET, id) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &p, PMIX_PROC) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &key, PMIX_STRING) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, NULL, 0, PMIX_INFO) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &nb, PMIX_BOOL) == PMIX_SUCCESS);
    frame_take(f, &b);
}

static void get_reply(frame_t *f, uint32_t id, pmix_status_t st, const char *value,
                      pmix_rank_t poster)
{
    pmix_data_buffer_t b;
    pmix_value_t v = { 0 };

    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin_reply(&b, PG_PMIX_CMD_GET, id, st) == PMIX_SUCCESS);
    if (st == PMIX_SUCCESS) {
        CU_ASSERT(pg_value_load(&v, value, PMIX_STRING) == PMIX_SUCCESS);
        CU_ASSERT(pg_pmix_pack_one(&b, &v, PMIX_VALUE) == PMIX_SUCCESS);
        CU_ASSERT(pg_pmix_pack_one(&b, &poster, PMIX_PROC_RANK) == PMIX_SUCCESS);
        pg_value_destruct(&v);
    }
    frame_take(f, &b);
}

/* A fence over `procs` (NULL: the whole namespace). */
static void fence_request(frame_t *f, uint32_t id, const pmix_proc_t *procs, size_t n)
{
    pmix_data_buffer_t b;

    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin(&b, PG_PMIX_CMD_FENCE, id) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, procs, n, PMIX_PROC) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, NULL, 0, PMIX_INFO) == PMIX_SUCCESS);
    frame_take(f, &b);
}

static void status_reply(frame_t *f, int cmd, uint32_t id)
{
    pmix_data_buffer_t b;

    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin_reply(&b, (uint8_t)cmd, id, PMIX_SUCCESS) == PMIX_SUCCESS);
    frame_take(f, &b);
}

/* An init reply whose job info holds one key with a string value. */
static void init_reply(frame_t *f, const char *nspace, const char *key, const char *value)
{
    pmix_data_buffer_t b;
    pmix_info_t info;
    pmix_rank_t rank = 0;

    memset(&info, 0, sizeof(info));
    snprintf(info.key, sizeof(info.key), "%s", key);
    CU_ASSERT(pg_value_load(&info.value, value, PMIX_STRING) == PMIX_SUCCESS);
    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin_reply(&b, PG_PMIX_CMD_INIT, 1, PMIX_SUCCESS) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &nspace, PMIX_STRING) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &rank, PMIX_PROC_RANK) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, &info, 1, PMIX_INFO) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, NULL, 0, PMIX_INFO) == PMIX_SUCCESS);
    pg_value_destruct(&info.value);
    frame_take(f, &b);
}

static char *formatted(const frame_t *f, int from_client)
{
    pg_trace_pmix_msg_t m = { 0 };
    char *text;

    pg_trace_pmix_decode(f->bytes, f->len, from_client, &m);
    text = pg_trace_pmix_format(&m);
    pg_trace_pmix_msg_release(&m);
    return text;
}

/* ---------------------------------------------------------------- */
/* synthetic traces                                                   */
/* ---------------------------------------------------------------- */

typedef struct tbuild {
    char *text;
    size_t len;
    FILE *f;
    char *scratch;
    size_t cap;
} tbuild_t;

static void tb_begin(tbuild_t *b, int size)
{
    pg_trace_header_t h = { .size = size };

    memset(b, 0, sizeof(*b));
    snprintf(h.kvsname, sizeof(h.kvsname), "kvs_1_0");
    snprintf(h.start, sizeof(h.start), "2026-01-01T00:00:00.000000Z");
    b->f = open_memstream(&b->text, &b->len);
    CU_ASSERT_FATAL(b->f != NULL);
    CU_ASSERT(pg_trace_write_header(b->f, &h) == 0);
}

static void tb_bytes(tbuild_t *b, uint64_t t_us, int rank, char dir, const char *bytes, size_t len)
{
    CU_ASSERT(pg_trace_write_event(b->f, t_us * 1000, rank, rank, PG_PROTO_PMIX,
                                   dir == 'C' ? PG_TRACE_C2S : PG_TRACE_S2C, bytes, len,
                                   &b->scratch, &b->cap) == 0);
}

static void tb_frame(tbuild_t *b, uint64_t t_us, int rank, char dir, const frame_t *f)
{
    tb_bytes(b, t_us, rank, dir, f->bytes, f->len);
}

static void tb_preamble(tbuild_t *b, uint64_t t_us, int rank)
{
    unsigned char pre[PG_PMIX_PREAMBLE_LEN];

    pg_pmix_preamble_encode(pre, PG_PMIX_RANK_FROM_FD);
    tb_bytes(b, t_us, rank, 'C', (const char *)pre, sizeof(pre));
}

static pg_trace_t *tb_load(tbuild_t *b)
{
    char err[256] = "";
    FILE *f;
    pg_trace_t *t;

    fclose(b->f);
    f = fmemopen(b->text, b->len, "r");
    CU_ASSERT_FATAL(f != NULL);
    t = pg_trace_load_stream(f, err, sizeof(err));
    fclose(f);
    if (t == NULL)
        fprintf(stderr, "load failed: %s\n", err);
    free(b->text);
    free(b->scratch);
    return t;
}

/* ---------------------------------------------------------------- */
/* decoding                                                           */
/* ---------------------------------------------------------------- */

static void test_show_decodes_command_id_and_arguments(void)
{
    frame_t req, rep;
    char *a, *b;

    get_request(&req, 4, "kvs_1_0", 1, "card-1");
    get_reply(&rep, 4, PMIX_SUCCESS, "hello", 1);
    a = formatted(&req, 1);
    b = formatted(&rep, 0);
    CU_ASSERT_STRING_EQUAL(a, "get #4 proc=kvs_1_0:1 key=\"card-1\" info=[] nonblocking=false");
    CU_ASSERT_STRING_EQUAL(b, "get #4 SUCCESS value=\"hello\" poster=1");
    free(a);
    free(b);
    get_reply(&rep, 5, PMIX_ERR_NOT_FOUND, NULL, 0);
    b = formatted(&rep, 0);
    CU_ASSERT_STRING_EQUAL(b, "get #5 ERR_NOT_FOUND");
    free(b);
}

/* A group construct and its reply: the context id is a number. */
static void test_group_construct_shows_members_and_context_id(void)
{
    pmix_data_buffer_t b;
    frame_t req, rep;
    pmix_proc_t members[2];
    const char *grp = "pair";
    size_t cid = 7;
    char *a, *r;

    PMIX_LOAD_PROCID(&members[0], "kvs_1_0", 0);
    PMIX_LOAD_PROCID(&members[1], "kvs_1_0", 1);
    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin(&b, PG_PMIX_CMD_GROUP_CONSTRUCT, 9) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &grp, PMIX_STRING) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, members, 2, PMIX_PROC) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, NULL, 0, PMIX_INFO) == PMIX_SUCCESS);
    frame_take(&req, &b);
    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin_reply(&b, PG_PMIX_CMD_GROUP_CONSTRUCT, 9, PMIX_SUCCESS) ==
              PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &cid, PMIX_SIZE) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &(uint32_t){ 0 }, PMIX_UINT32) == PMIX_SUCCESS);
    frame_take(&rep, &b);
    a = formatted(&req, 1);
    r = formatted(&rep, 0);
    CU_ASSERT_STRING_EQUAL(a, "group-construct #9 group=\"pair\" procs=[kvs_1_0:0, kvs_1_0:1] info=[]");
    /* what the members shared follows the count (none here) */
    CU_ASSERT_STRING_EQUAL(r, "group-construct #9 SUCCESS context_id=7 nshared=0");
    free(a);
    free(r);
}

/* A group invite that some declined: the members are shown although the
 * status is PARTIAL_SUCCESS; a decline's join shows context id 0. */
static void test_group_invite_partial_shows_members(void)
{
    pmix_data_buffer_t b;
    frame_t rep, dec;
    pmix_proc_t members[2];
    size_t cid = 3, none = 0;
    char *r, *d;

    PMIX_LOAD_PROCID(&members[0], "kvs_1_0", 0);
    PMIX_LOAD_PROCID(&members[1], "kvs_1_0", 1);
    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin_reply(&b, PG_PMIX_CMD_GROUP_INVITE, 4,
                                      PMIX_ERR_PARTIAL_SUCCESS) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &cid, PMIX_SIZE) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, members, 2, PMIX_PROC) == PMIX_SUCCESS);
    frame_take(&rep, &b);
    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin_reply(&b, PG_PMIX_CMD_GROUP_JOIN, 5, PMIX_SUCCESS) ==
              PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &none, PMIX_SIZE) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_array(&b, NULL, 0, PMIX_PROC) == PMIX_SUCCESS);
    frame_take(&dec, &b);
    r = formatted(&rep, 0);
    d = formatted(&dec, 0);
    CU_ASSERT_STRING_EQUAL(r, "group-invite #4 ERR_PARTIAL_SUCCESS context_id=3 "
                              "members=[kvs_1_0:0, kvs_1_0:1]");
    CU_ASSERT_STRING_EQUAL(d, "group-join #5 SUCCESS context_id=0 members=[]");
    free(r);
    free(d);
}

static void test_truncated_frame_is_reported_not_misread(void)
{
    frame_t req;
    pg_trace_pmix_msg_t m = { 0 };
    char *text;

    get_request(&req, 4, "kvs_1_0", 1, "card-1");
    req.len -= 3; /* cut inside the last group, length header fixed to match */
    pg_pmix_put_u32((unsigned char *)req.bytes, (uint32_t)(req.len - PG_PMIX_HEADER_LEN));
    CU_ASSERT_EQUAL(pg_trace_pmix_decode(req.bytes, req.len, 1, &m), -1);
    CU_ASSERT_STRING_EQUAL(m.error, "nonblocking: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER");
    text = pg_trace_pmix_format(&m);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "(undecoded: nonblocking:"));
    free(text);
    pg_trace_pmix_msg_release(&m);
    /* garbage is no frame at all */
    CU_ASSERT_EQUAL(pg_trace_pmix_decode("\x00\x00\x00\x02zz", 6, 1, &m), -1);
    CU_ASSERT_EQUAL(m.head.kind, PG_TRACE_PMIX_BAD);
    pg_trace_pmix_msg_release(&m);
}

/* Found by fuzzing `pmigate trace show`: a request whose key is a group of
 * two strings leaked the first one.  It is reported as malformed, and
 * (under valgrind) nothing stays allocated. */
static void test_several_where_one_belongs_is_reported(void)
{
    pmix_data_buffer_t b;
    pmix_proc_t p = { .nspace = "kvs_1_0", .rank = 1 };
    char *keys[] = { "first", "second" };
    pg_trace_pmix_msg_t m = { 0 };
    frame_t req;

    pg_buffer_construct(&b);
    CU_ASSERT(pg_pmix_msg_begin(&b, PG_PMIX_CMD_GET, 7) == PMIX_SUCCESS);
    CU_ASSERT(pg_pmix_pack_one(&b, &p, PMIX_PROC) == PMIX_SUCCESS);
    CU_ASSERT(pg_pack(&b, keys, 2, PMIX_STRING) == PMIX_SUCCESS);
    frame_take(&req, &b);
    CU_ASSERT_EQUAL(pg_trace_pmix_decode(req.bytes, req.len, 1, &m), -1);
    CU_ASSERT_STRING_EQUAL(m.error, "key: PMIX_ERR_UNPACK_FAILURE");
    pg_trace_pmix_msg_release(&m);
}

/* ---------------------------------------------------------------- */
/* analysis                                                           */
/* ---------------------------------------------------------------- */

static void test_replies_pair_by_request_id_out_of_order(void)
{
    frame_t fence, get, get_rep, fence_rep;
    pg_trace_analysis_t *a;
    pg_trace_t *t;
    tbuild_t b;

    fence_request(&fence, 1, NULL, 0);
    get_request(&get, 2, "kvs_1_0", 0, "k");
    get_reply(&get_rep, 2, PMIX_SUCCESS, "v", 0);
    status_reply(&fence_rep, PG_PMIX_CMD_FENCE, 1);
    tb_begin(&b, 1);
    tb_preamble(&b, 0, 0);
    tb_frame(&b, 1, 0, 'C', &fence);
    tb_frame(&b, 2, 0, 'C', &get);  /* a Fence_nb, then a get */
    tb_frame(&b, 3, 0, 'S', &get_rep);
    tb_frame(&b, 10, 0, 'S', &fence_rep);
    t = tb_load(&b);
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_STRING_EQUAL(pg_trace_event_name(&t->events[0]), "preamble");
    a = pg_trace_analyze(t);
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_EQUAL(a->nspans, 2); /* the preamble is no request */
    CU_ASSERT_EQUAL(a->spans[0].phase, PG_TRACE_PHASE_FENCE);
    CU_ASSERT_EQUAL(a->spans[0].rep, 4);
    CU_ASSERT_EQUAL(a->spans[0].end - a->spans[0].start, 9000);
    CU_ASSERT_EQUAL(a->spans[1].phase, PG_TRACE_PHASE_GET);
    CU_ASSERT_EQUAL(a->spans[1].rep, 3);
    CU_ASSERT_EQUAL(a->pmix_cmds[PG_PMIX_CMD_GET].answered, 1);
    CU_ASSERT_EQUAL(a->pmix_cmds[PG_PMIX_CMD_FENCE].max_wait, 9000);
    CU_ASSERT_EQUAL(a->unknown_requests, 0);
    CU_ASSERT_EQUAL(a->nfences, 1);
    CU_ASSERT_STRING_EQUAL(a->fences[0].name, "fence");
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

static void test_a_batch_of_replies_becomes_one_event_per_frame(void)
{
    frame_t r1, r2;
    char both[2048];
    pg_trace_t *t;
    tbuild_t b;

    get_reply(&r1, 7, PMIX_SUCCESS, "a", 0);
    get_reply(&r2, 8, PMIX_SUCCESS, "b", 1);
    memcpy(both, r1.bytes, r1.len);
    memcpy(both + r1.len, r2.bytes, r2.len);
    tb_begin(&b, 1);
    tb_bytes(&b, 5, 0, 'S', both, r1.len + r2.len); /* how a version 1 recorder wrote it */
    t = tb_load(&b);
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL_FATAL(t->nevents, 2);
    CU_ASSERT_EQUAL(t->events[0].pmix.id, 7);
    CU_ASSERT_EQUAL(t->events[1].pmix.id, 8);
    CU_ASSERT_EQUAL(t->events[1].len, r2.len);
    pg_trace_free(t);
}

static void test_only_whole_namespace_fences_are_job_fences(void)
{
    pmix_proc_t some = { .nspace = "kvs_1_0", .rank = 0 };
    pmix_proc_t all = { .nspace = "kvs_1_0", .rank = PMIX_RANK_WILDCARD };
    frame_t f;

    fence_request(&f, 1, NULL, 0);
    CU_ASSERT_TRUE(pg_trace_pmix_fence_is_whole(f.bytes, f.len, "kvs_1_0"));
    fence_request(&f, 1, &all, 1);
    CU_ASSERT_TRUE(pg_trace_pmix_fence_is_whole(f.bytes, f.len, "kvs_1_0"));
    CU_ASSERT_FALSE(pg_trace_pmix_fence_is_whole(f.bytes, f.len, "kvs_2_0"));
    fence_request(&f, 1, &some, 1);
    CU_ASSERT_FALSE(pg_trace_pmix_fence_is_whole(f.bytes, f.len, "kvs_1_0"));
}

/* ---------------------------------------------------------------- */
/* replay rules                                                       */
/* ---------------------------------------------------------------- */

static void test_rewrite_moves_namespace_ranks_and_key_suffixes(void)
{
    pg_replay_map_t plain = { .old_kvs = "kvs_1_0", .new_kvs = "kvs_12345_0" };
    pg_replay_map_t copy = { .old_kvs = "kvs_1_0", .new_kvs = "kvs_9_0", .nrec = 2,
                             .block_base = 2 };
    frame_t req, out;
    char *bytes, *text;
    size_t len;

    get_request(&req, 3, "kvs_1_0", 1, "card-1");
    CU_ASSERT_EQUAL_FATAL(pg_replay_pmix_rewrite(&plain, req.bytes, req.len, &bytes, &len), 0);
    memcpy(out.bytes, bytes, len);
    out.len = len;
    free(bytes);
    text = formatted(&out, 1);
    CU_ASSERT_STRING_EQUAL(text, "get #3 proc=kvs_12345_0:1 key=\"card-1\" info=[] nonblocking=false");
    free(text);
    CU_ASSERT_EQUAL_FATAL(pg_replay_pmix_rewrite(&copy, req.bytes, req.len, &bytes, &len), 0);
    memcpy(out.bytes, bytes, len);
    out.len = len;
    free(bytes);
    text = formatted(&out, 1);
    CU_ASSERT_STRING_EQUAL(text, "get #3 proc=kvs_9_0:3 key=\"card-3\" info=[] nonblocking=false");
    free(text);
}

static void test_compare_ignores_namespace_and_machine_keys_only(void)
{
    pg_replay_map_t m = { .old_kvs = "kvs_1_0", .new_kvs = "kvs_77_0" };
    frame_t exp, got;
    char why[512];

    init_reply(&exp, "kvs_1_0", PMIX_HOSTNAME, "node-a");
    init_reply(&got, "kvs_77_0", PMIX_HOSTNAME, "node-b");
    CU_ASSERT_EQUAL(pg_replay_pmix_compare(&m, NULL, 0, exp.bytes, exp.len, got.bytes, got.len, 0,
                                           why, sizeof(why)), 0);
    init_reply(&exp, "kvs_1_0", "app.key", "kvs_1_0-x");
    init_reply(&got, "kvs_77_0", "app.key", "kvs_77_0-x");
    CU_ASSERT_EQUAL(pg_replay_pmix_compare(&m, NULL, 0, exp.bytes, exp.len, got.bytes, got.len, 0,
                                           why, sizeof(why)), 0);
    init_reply(&got, "kvs_77_0", "app.key", "something else");
    CU_ASSERT_EQUAL(pg_replay_pmix_compare(&m, NULL, 0, exp.bytes, exp.len, got.bytes, got.len, 0,
                                           why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "job[app.key]: expected STRING \"kvs_77_0-x\", got STRING "
                                "\"something else\"");
}

static void test_compare_names_the_first_difference(void)
{
    pg_replay_map_t m = { 0 };
    frame_t req, exp, got;
    char why[512];

    get_reply(&exp, 4, PMIX_SUCCESS, "card-0", 0);
    get_reply(&got, 4, PMIX_SUCCESS, "card-0X", 0);
    CU_ASSERT_EQUAL(pg_replay_pmix_compare(&m, NULL, 0, exp.bytes, exp.len, got.bytes, got.len, 0,
                                           why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "value: expected STRING \"card-0\", got STRING \"card-0X\"");
    get_reply(&got, 4, PMIX_ERR_NOT_FOUND, NULL, 0);
    CU_ASSERT_EQUAL(pg_replay_pmix_compare(&m, NULL, 0, exp.bytes, exp.len, got.bytes, got.len, 0,
                                           why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "status: expected SUCCESS, got ERR_NOT_FOUND");
    get_reply(&got, 5, PMIX_SUCCESS, "card-0", 0);
    CU_ASSERT_EQUAL(pg_replay_pmix_compare(&m, NULL, 0, exp.bytes, exp.len, got.bytes, got.len, 0,
                                           why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "request id: expected 4, got 5");
    /* a get of a machine-dependent key: its value is not compared */
    get_request(&req, 4, "kvs_1_0", 0, PMIX_HOSTNAME);
    get_reply(&exp, 4, PMIX_SUCCESS, "node-a", 0);
    get_reply(&got, 4, PMIX_SUCCESS, "node-b", 0);
    CU_ASSERT_EQUAL(pg_replay_pmix_compare(&m, req.bytes, req.len, exp.bytes, exp.len, got.bytes,
                                           got.len, 0, why, sizeof(why)), 0);
    /* the load generator checks command, id and status only */
    get_reply(&got, 4, PMIX_SUCCESS, "other", 3);
    CU_ASSERT_EQUAL(pg_replay_pmix_compare(&m, NULL, 0, exp.bytes, exp.len, got.bytes, got.len, 1,
                                           why, sizeof(why)), 0);
}

static const pg_cunit_test_t decode_tests[] = {
    { "show decodes command, request id and arguments", test_show_decodes_command_id_and_arguments },
    { "a group construct shows its members and the context id",
      test_group_construct_shows_members_and_context_id },
    { "a group invite some declined shows its members", test_group_invite_partial_shows_members },
    { "a truncated frame is reported, not misread", test_truncated_frame_is_reported_not_misread },
    { "several where one belongs is reported", test_several_where_one_belongs_is_reported },
    { NULL, NULL },
};

static const pg_cunit_test_t analysis_tests[] = {
    { "replies pair by request id, out of order", test_replies_pair_by_request_id_out_of_order },
    { "a batch of replies becomes one event per frame", test_a_batch_of_replies_becomes_one_event_per_frame },
    { "only whole-namespace fences are job fences", test_only_whole_namespace_fences_are_job_fences },
    { NULL, NULL },
};

static const pg_cunit_test_t replay_tests[] = {
    { "rewrite moves namespace, ranks and key suffixes", test_rewrite_moves_namespace_ranks_and_key_suffixes },
    { "namespace and machine keys are not compared", test_compare_ignores_namespace_and_machine_keys_only },
    { "the first difference is named", test_compare_names_the_first_difference },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "PMIx decoding", decode_tests, NULL, NULL },
    { "PMIx analysis", analysis_tests, NULL, NULL },
    { "PMIx replay rules", replay_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
