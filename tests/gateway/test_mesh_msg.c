/*
 * test_mesh_msg: the mesh's one codec for frame bodies
 * (gateway/mesh/pg_mesh_msg.c) and a spawn request on that wire
 * (gateway/proxy/pg_spawn_wire.c).  A body comes from
 * another node: every prefix of a good one, and bodies that lie about their
 * counts, must be refused without a crash or a leak (valgrind runs these
 * suites), and a good one must come back as it was sent.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/proxy/pg_spawn_wire.h"
#include "tests/pg_cunit.h"

static void test_fields_round_trip(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_mesh_rd_t r;
    char *s, *none, *empty;

    pg_mesh_wr_i32(&b, -7);
    pg_mesh_wr_nstr(&b, "node");
    pg_mesh_wr_nstr(&b, NULL);
    pg_mesh_wr_nstr(&b, "");
    pg_mesh_wr_u32(&b, 2);
    CU_ASSERT_FATAL(!b.bad);
    r = pg_mesh_rd(b.buf, b.len);
    CU_ASSERT_EQUAL(pg_mesh_rd_i32(&r), -7);
    s = pg_mesh_rd_nstr(&r);
    none = pg_mesh_rd_nstr(&r);
    empty = pg_mesh_rd_nstr(&r);
    CU_ASSERT(s != NULL && strcmp(s, "node") == 0);
    CU_ASSERT_PTR_NULL(none);
    CU_ASSERT(empty != NULL && empty[0] == '\0');
    CU_ASSERT_EQUAL(pg_mesh_rd_count(&r, 0), 2);
    CU_ASSERT(pg_mesh_rd_done(&r));
    /* past the end: zeros, and the reader says so */
    CU_ASSERT_EQUAL(pg_mesh_rd_i32(&r), 0);
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
    s = pg_mesh_rd_nstr(&r);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT(r.bad);
    r = pg_mesh_rd(b.buf, b.len); /* a count of 8-byte items larger than the body */
    CU_ASSERT_EQUAL(pg_mesh_rd_count(&r, 8), 0);
    CU_ASSERT(r.bad);
    pg_mesh_wr_free(&b);
    pg_mesh_wr_bytes(&b, "a\0b", 3); /* a NUL inside a string is bad */
    r = pg_mesh_rd(b.buf, b.len);
    CU_ASSERT_PTR_NULL(pg_mesh_rd_nstr(&r));
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

static void test_msg_round_trip(void)
{
    pg_mesh_wr_t w;
    pg_mesh_rd_t r;
    char s1[16], s2[4];
    size_t n;
    const void *b;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_u8(&w, 7);
    pg_mesh_wr_u32(&w, 0xdeadbeef);
    pg_mesh_wr_u64(&w, 0x0102030405060708ull);
    pg_mesh_wr_str(&w, "svc");
    pg_mesh_wr_str(&w, NULL);
    pg_mesh_wr_bytes(&w, "a\0b", 3);
    CU_ASSERT_FALSE(w.bad);
    CU_ASSERT_EQUAL(w.len, 1 + 4 + 8 + 7 + 4 + 7);
    CU_ASSERT_EQUAL(w.buf[1], 0xde); /* big-endian */
    r = pg_mesh_rd(w.buf, w.len);
    CU_ASSERT_EQUAL(pg_mesh_rd_u8(&r), 7);
    CU_ASSERT_EQUAL(pg_mesh_rd_u32(&r), 0xdeadbeef);
    CU_ASSERT_EQUAL(pg_mesh_rd_u64(&r), 0x0102030405060708ull);
    CU_ASSERT_STRING_EQUAL(pg_mesh_rd_str(&r, s1, sizeof(s1)), "svc");
    CU_ASSERT_STRING_EQUAL(pg_mesh_rd_str(&r, s1, sizeof(s1)), "");
    CU_ASSERT_FALSE(pg_mesh_rd_done(&r)); /* the bytes are left */
    b = pg_mesh_rd_bytes(&r, &n);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(memcmp(b, "a\0b", 3), 0);
    CU_ASSERT_TRUE(pg_mesh_rd_done(&r));
    /* a string too long for its buffer, or with a NUL inside, is bad */
    r = pg_mesh_rd(w.buf + 13, w.len - 13);
    pg_mesh_rd_str(&r, s2, sizeof(s2)); /* "svc" + NUL fits 4 */
    CU_ASSERT_FALSE(r.bad);
    r = pg_mesh_rd(w.buf + 13, w.len - 13);
    CU_ASSERT_STRING_EQUAL(pg_mesh_rd_str(&r, s2, 3), "");
    CU_ASSERT_TRUE(r.bad);
    r = pg_mesh_rd(w.buf + 24, w.len - 24);
    pg_mesh_rd_str(&r, s1, sizeof(s1));
    CU_ASSERT_TRUE(r.bad);
    pg_mesh_wr_free(&w);
}

static void test_msg_short_bodies(void)
{
    unsigned char body[12] = { 0, 0, 0, 200, 'x', 'y' }; /* a length past the end */
    pg_mesh_rd_t r = pg_mesh_rd(body, 6);
    char s[256];
    size_t n = 99;

    CU_ASSERT_PTR_NULL(pg_mesh_rd_bytes(&r, &n));
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_TRUE(r.bad);
    CU_ASSERT_EQUAL(pg_mesh_rd_u32(&r), 0); /* bad stays bad */
    CU_ASSERT_STRING_EQUAL(pg_mesh_rd_str(&r, s, sizeof(s)), "");
    r = pg_mesh_rd(body, 3);
    CU_ASSERT_EQUAL(pg_mesh_rd_u32(&r), 0);
    CU_ASSERT_FALSE(pg_mesh_rd_done(&r));
    r = pg_mesh_rd(body, 0);
    CU_ASSERT_EQUAL(pg_mesh_rd_u8(&r), 0);
    CU_ASSERT_TRUE(r.bad);
}


/* Raw fields: a fixed-size one and the rest of the body, without lengths
 * of their own (the layout of the fence's, modex's and jobend's frames). */
static void test_msg_raw_and_rest(void)
{
    pg_mesh_wr_t w;
    pg_mesh_rd_t r;
    const unsigned char *name;
    const char *rest;
    size_t n = 99;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_raw(&w, "NAME", 4);
    pg_mesh_wr_u32(&w, 5);
    pg_mesh_wr_raw(&w, "text", 4);
    CU_ASSERT_FATAL(!w.bad);
    CU_ASSERT_EQUAL(w.len, 12);
    CU_ASSERT_EQUAL(memcmp(w.buf, "NAME\0\0\0\5text", 12), 0);
    r = pg_mesh_rd(w.buf, w.len);
    name = pg_mesh_rd_raw(&r, 4);
    CU_ASSERT(name != NULL && memcmp(name, "NAME", 4) == 0);
    CU_ASSERT_EQUAL(pg_mesh_rd_u32(&r), 5);
    rest = pg_mesh_rd_rest(&r, &n);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT(rest != NULL && memcmp(rest, "text", 4) == 0);
    CU_ASSERT_TRUE(pg_mesh_rd_done(&r));
    /* an empty rest is no error */
    r = pg_mesh_rd(w.buf, 8);
    (void)pg_mesh_rd_raw(&r, 4);
    (void)pg_mesh_rd_u32(&r);
    (void)pg_mesh_rd_rest(&r, &n);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_TRUE(pg_mesh_rd_done(&r));
    /* a fixed field past the end is bad, and so is every read after it */
    r = pg_mesh_rd(w.buf, 3);
    CU_ASSERT_PTR_NULL(pg_mesh_rd_raw(&r, 4));
    CU_ASSERT_TRUE(r.bad);
    (void)pg_mesh_rd_rest(&r, &n);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_FALSE(pg_mesh_rd_done(&r));
    pg_mesh_wr_free(&w);
}

int main(void)
{
    static const pg_cunit_test_t body_tests[] = {
        { "what is written reads back", test_msg_round_trip },
        { "short or lying bodies are refused", test_msg_short_bodies },
        { "raw fields and the rest of the body", test_msg_raw_and_rest },
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
        { "mesh_msg", body_tests, NULL, NULL },
        { "spawn_wire", spawn_tests, NULL, NULL },
        { NULL, NULL, NULL, NULL },
    };

    return pg_cunit_run("test_mesh_msg", suites);
}
