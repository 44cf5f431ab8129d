/*
 * test_msgbuf: the dynamic jobs' message fields (gateway/mesh/pg_msgbuf.c, on
 * the mesh's pg_mesh_msg) and a spawn request on that wire
 * (gateway/proxy/pg_spawn_wire.c).  A body comes from
 * another node: every prefix of a good one, and bodies that lie about their
 * counts, must be refused without a crash or a leak (valgrind runs these
 * suites), and a good one must come back as it was sent.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/mesh/pg_msgbuf.h"
#include "gateway/proxy/pg_spawn_wire.h"
#include "tests/pg_cunit.h"

static void test_fields_round_trip(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_mesh_rd_t r;
    char *s, *none, *empty;

    pg_msgbuf_wr_i32(&b, -7);
    pg_msgbuf_wr_nstr(&b, "node");
    pg_msgbuf_wr_nstr(&b, NULL);
    pg_msgbuf_wr_nstr(&b, "");
    pg_mesh_wr_u32(&b, 2);
    CU_ASSERT_FATAL(!b.bad);
    r = pg_mesh_rd(b.buf, b.len);
    CU_ASSERT_EQUAL(pg_msgbuf_rd_i32(&r), -7);
    s = pg_msgbuf_rd_nstr(&r);
    none = pg_msgbuf_rd_nstr(&r);
    empty = pg_msgbuf_rd_nstr(&r);
    CU_ASSERT(s != NULL && strcmp(s, "node") == 0);
    CU_ASSERT_PTR_NULL(none);
    CU_ASSERT(empty != NULL && empty[0] == '\0');
    CU_ASSERT_EQUAL(pg_msgbuf_rd_count(&r, 0), 2);
    CU_ASSERT(pg_mesh_rd_done(&r));
    /* past the end: zeros, and the reader says so */
    CU_ASSERT_EQUAL(pg_msgbuf_rd_i32(&r), 0);
    CU_ASSERT(r.bad);
    free(s);
    free(empty);
    pg_mesh_wr_free(&b);
}

static void test_lying_counts(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_mesh_rd_t r;
    char *s;

    pg_mesh_wr_u32(&b, 1000000); /* a string "of" a million bytes, then 4 */
    pg_mesh_wr_u32(&b, 0);
    r = pg_mesh_rd(b.buf, b.len);
    s = pg_msgbuf_rd_nstr(&r);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT(r.bad);
    r = pg_mesh_rd(b.buf, b.len); /* a count of 8-byte items larger than the body */
    CU_ASSERT_EQUAL(pg_msgbuf_rd_count(&r, 8), 0);
    CU_ASSERT(r.bad);
    pg_mesh_wr_free(&b);
    pg_mesh_wr_bytes(&b, "a\0b", 3); /* a NUL inside a string is bad */
    r = pg_mesh_rd(b.buf, b.len);
    CU_ASSERT_PTR_NULL(pg_msgbuf_rd_nstr(&r));
    CU_ASSERT(r.bad);
    pg_mesh_wr_free(&b);
}

/* Two commands, infos, preput, env, the end flags. */
static const pg_kv_t info0[] = { { "wdir", "/tmp" }, { "host", "n2" } };
static const pg_kv_t preput[] = { { "PARENT_ROOT_PORT_NAME", "tag#0$port#1" } };
static const pg_kv_t env[] = { { "A", "1" }, { "B", "" } };
static const char *const argv0[] = { "-x", "two words" };
static const pg_spawn_cmd_t cmds[] = {
    { "/bin/prog0", 3, 2, argv0, 2, info0 },
    { "/bin/prog1", 2, 0, NULL, 0, NULL },
};
static const pg_spawn_req_t req = { 2, cmds, 1, preput, env, 2, 1, 0 };

static void test_request_round_trip(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_mesh_rd_t r;
    pg_spawn_wire_t w;

    pg_spawn_wire_pack(&b, &req);
    CU_ASSERT_FATAL(!b.bad);
    r = pg_mesh_rd(b.buf, b.len);
    CU_ASSERT_FATAL(pg_spawn_wire_unpack(&r, &w) == 0);
    CU_ASSERT_EQUAL(w.total, 5);
    CU_ASSERT_EQUAL(w.req.ncmds, 2);
    CU_ASSERT_STRING_EQUAL(w.req.cmds[0].command, "/bin/prog0");
    CU_ASSERT_EQUAL(w.req.cmds[0].maxprocs, 3);
    CU_ASSERT_EQUAL(w.req.cmds[0].argc, 2);
    CU_ASSERT_STRING_EQUAL(w.req.cmds[0].argv[1], "two words");
    CU_ASSERT_PTR_NULL(w.req.cmds[0].argv[2]);
    CU_ASSERT_EQUAL(w.req.cmds[0].ninfo, 2);
    CU_ASSERT_STRING_EQUAL(w.req.cmds[0].info[1].val, "n2");
    CU_ASSERT_EQUAL(w.req.cmds[1].argc, 0);
    CU_ASSERT_EQUAL(w.req.npreput, 1);
    CU_ASSERT_STRING_EQUAL(w.req.preput[0].val, "tag#0$port#1");
    CU_ASSERT_EQUAL(w.req.nenv, 2);
    CU_ASSERT_STRING_EQUAL(w.req.env[1].val, "");
    CU_ASSERT(w.req.notify_end == 1 && w.req.end_silent_ok == 0);
    pg_spawn_wire_free(&w);
    pg_mesh_wr_free(&b);
}

/* Every prefix of a good request is refused, whole (nothing kept). */
static void test_request_prefixes(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_spawn_wire_t w;

    pg_spawn_wire_pack(&b, &req);
    CU_ASSERT_FATAL(!b.bad);
    for (size_t len = 0; len < b.len; len++) {
        pg_mesh_rd_t r = pg_mesh_rd(b.buf, len);

        CU_ASSERT(pg_spawn_wire_unpack(&r, &w) == -1);
        CU_ASSERT(w.cmds == NULL && w.strs == NULL && w.kvs == NULL);
    }
    pg_mesh_wr_free(&b);
}

/* A command of no processes, or of a negative number, is no request. */
static void test_request_bad_counts(void)
{
    static const int counts[] = { 0, -1, PG_SPAWN_WIRE_MAX_PROCS + 1 };

    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        pg_spawn_cmd_t bad = { "/bin/true", counts[i], 0, NULL, 0, NULL };
        pg_spawn_req_t one = { 1, &bad, 0, NULL, NULL, 0, 0, 0 };
        pg_mesh_wr_t b = { 0 };
        pg_mesh_rd_t r;
        pg_spawn_wire_t w;

        pg_spawn_wire_pack(&b, &one);
        r = pg_mesh_rd(b.buf, b.len);
        CU_ASSERT(pg_spawn_wire_unpack(&r, &w) == -1);
        pg_mesh_wr_free(&b);
    }
}

int main(void)
{
    static const pg_cunit_test_t body_tests[] = {
        { "fields come back as written", test_fields_round_trip },
        { "counts and lengths past the body are refused", test_lying_counts },
        { NULL, NULL },
    };
    static const pg_cunit_test_t spawn_tests[] = {
        { "a request comes back as sent", test_request_round_trip },
        { "every prefix of a request is refused whole", test_request_prefixes },
        { "a command of no processes is refused", test_request_bad_counts },
        { NULL, NULL },
    };
    static const pg_cunit_suite_t suites[] = {
        { "msgbuf", body_tests, NULL, NULL },
        { "spawn_wire", spawn_tests, NULL, NULL },
        { NULL, NULL, NULL, NULL },
    };

    return pg_cunit_run("test_msgbuf", suites);
}
