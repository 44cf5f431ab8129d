/*
 * test_client_core: the client core both PMI libraries share — the key
 * cache map, the reply framing on a socket (messages in pieces, several in
 * one read, both PMI-2 length alignments, EOF, garbage), integer lists and
 * the PMI_process_mapping arithmetic behind PMI_Get_clique_*
 * (docs/wire-protocol.md, "PMI_process_mapping", with the wrap-around rule).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client/pg_cl_io.h"
#include "client/pg_cl_kv.h"
#include "client/pg_cl_util.h"
#include "tests/pg_cunit.h"

static pg_str_t S(const char *s)
{
    pg_str_t v = { s, (uint32_t)strlen(s) };

    return v;
}

/* ---- key map ---------------------------------------------------------------- */

static void test_kv_last_put_wins_and_values_are_copied(void)
{
    pg_cl_kv_t *kv = pg_cl_kv_new();
    char val[8] = "first";
    size_t len;

    CU_ASSERT_EQUAL(pg_cl_kv_put_cstr(kv, "k", val), 0);
    strcpy(val, "XXXXX");
    CU_ASSERT_STRING_EQUAL(pg_cl_kv_get(kv, "k", NULL), "first");
    CU_ASSERT_EQUAL(pg_cl_kv_put_cstr(kv, "k", "second"), 0);
    CU_ASSERT_STRING_EQUAL(pg_cl_kv_get(kv, "k", &len), "second");
    CU_ASSERT_EQUAL(len, 6);
    CU_ASSERT_EQUAL(pg_cl_kv_count(kv), 1);
    pg_cl_kv_free(kv);
}

static void test_kv_keys_from_tokens_are_length_delimited(void)
{
    pg_cl_kv_t *kv = pg_cl_kv_new();
    pg_str_t key = { "abcdef", 3 }, val = { "v1;rest", 2 };

    CU_ASSERT_EQUAL(pg_cl_kv_put(kv, key, val), 0);
    CU_ASSERT_STRING_EQUAL(pg_cl_kv_get(kv, "abc", NULL), "v1");
    CU_ASSERT_PTR_NULL(pg_cl_kv_get(kv, "abcdef", NULL));
    CU_ASSERT_EQUAL(pg_cl_kv_del(kv, "abc"), 0);
    CU_ASSERT_EQUAL(pg_cl_kv_del(kv, "abc"), -1);
    CU_ASSERT_EQUAL(pg_cl_kv_put(kv, S("empty"), S("")), 0);
    CU_ASSERT_STRING_EQUAL(pg_cl_kv_get(kv, "empty", NULL), "");
    pg_cl_kv_free(kv);
}

/* ---- copies and lists --------------------------------------------------------- */

static void test_copy_reports_truncation(void)
{
    char buf[4];

    CU_ASSERT_EQUAL(pg_cl_copy(S("abc"), buf, sizeof(buf)), 0);
    CU_ASSERT_STRING_EQUAL(buf, "abc");
    CU_ASSERT_EQUAL(pg_cl_copy(S("abcd"), buf, sizeof(buf)), -1);
    CU_ASSERT_STRING_EQUAL(buf, "abc");
    CU_ASSERT_EQUAL(pg_cl_copy(S("a"), buf, 0), -1);
}

static void test_int_list_parses_and_rejects(void)
{
    int v[4], n;

    CU_ASSERT_EQUAL(pg_cl_int_list(S("1,-2, 3"), v, 4, &n), 0);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(v[0], 1);
    CU_ASSERT_EQUAL(v[1], -2);
    CU_ASSERT_EQUAL(v[2], 3);
    CU_ASSERT_EQUAL(pg_cl_int_list(S("1,2,3,4,5"), v, 4, &n), 0);
    CU_ASSERT_EQUAL(n, 5); /* counted beyond max, written up to max */
    CU_ASSERT_EQUAL(pg_cl_int_list(S(""), v, 4, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(pg_cl_int_list(S("1,,2"), v, 4, &n), -1);
    CU_ASSERT_EQUAL(pg_cl_int_list(S("1,"), v, 4, &n), -1);
    CU_ASSERT_EQUAL(pg_cl_int_list(S("x"), v, 4, &n), -1);
    CU_ASSERT_EQUAL(pg_cl_int_list(S("99999999999"), v, 4, &n), -1);
}

/* ---- process mapping ---------------------------------------------------------- */

static void check_nodes(const char *mapping, int size, const int *want)
{
    int got[16];

    CU_ASSERT_EQUAL_FATAL(pg_cl_mapping_nodes(mapping, size, got), 0);
    for (int r = 0; r < size; r++)
        CU_ASSERT_EQUAL(got[r], want[r]);
}

static void test_mapping_blocks_and_wraparound(void)
{
    static const int block[] = { 0, 0, 1, 1 };
    static const int wrap_one[] = { 0, 0 };
    static const int cyclic[] = { 0, 1, 0, 1 };
    static const int uneven[] = { 0, 0, 1, 1, 1 };
    static const int wrap_six[] = { 0, 0, 1, 1, 0, 0 };

    check_nodes("(vector,(0,2,2))", 4, block);
    check_nodes("(vector,(0,1,1))", 2, wrap_one);      /* hydra -n 2 on 1 slot */
    check_nodes("(vector,(0,2,1))", 4, cyclic);
    check_nodes("(vector,(0,1,2),(1,1,3))", 5, uneven);
    check_nodes("(vector,(0,2,2))", 6, wrap_six);
}

static void test_mapping_rejects_garbage(void)
{
    int nodes[4];

    CU_ASSERT_EQUAL(pg_cl_mapping_nodes("", 2, nodes), -1);
    CU_ASSERT_EQUAL(pg_cl_mapping_nodes("(vector)", 2, nodes), -1);
    CU_ASSERT_EQUAL(pg_cl_mapping_nodes("(vector,(0,1,", 2, nodes), -1);
    CU_ASSERT_EQUAL(pg_cl_mapping_nodes("(vector,(0,0,0))", 2, nodes), -1); /* no progress */
    CU_ASSERT_EQUAL(pg_cl_mapping_nodes("(vector,(1,1,1))", 2, nodes), -1); /* nothing to wrap to */
    CU_ASSERT_EQUAL(pg_cl_mapping_nodes("[0]x2", 2, nodes), -1);
}

/* The mapping comes from the server: blocks of two billion nodes with no
 * process on them must cost nothing, not a walk over every node. */
static void test_mapping_empty_huge_blocks_cost_nothing(void)
{
    const char *mapping = "(vector,(0,2147483647,0),(0,2147483647,0),(0,2147483647,0),(0,1,2))";
    struct timespec t0, t1;
    int nodes[2];

    clock_gettime(CLOCK_MONOTONIC, &t0);
    CU_ASSERT_EQUAL(pg_cl_mapping_nodes(mapping, 2, nodes), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CU_ASSERT_EQUAL(nodes[1], 0);
    CU_ASSERT_TRUE(t1.tv_sec - t0.tv_sec < 1); /* the walk took seconds per block */
}

static void test_clique_lists_the_node_mates(void)
{
    int ranks[8], n;

    CU_ASSERT_EQUAL(pg_cl_mapping_clique("(vector,(0,2,2))", 3, 4, ranks, 8, &n), 0);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(ranks[0], 2);
    CU_ASSERT_EQUAL(ranks[1], 3);
    CU_ASSERT_EQUAL(pg_cl_mapping_clique("(vector,(0,2,1))", 0, 4, ranks, 8, &n), 0);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(ranks[1], 2);
    /* no usable mapping: the process is its own clique */
    CU_ASSERT_EQUAL(pg_cl_mapping_clique("junk", 1, 4, ranks, 8, &n), 0);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(ranks[0], 1);
    CU_ASSERT_EQUAL(pg_cl_mapping_clique("(vector,(0,1,4))", 4, 4, ranks, 8, &n), -1);
}

/* ---- framing on a socket ------------------------------------------------------ */

static void feed(int fd, const char *bytes)
{
    CU_ASSERT_EQUAL(pg_cl_send(fd, bytes, strlen(bytes)), 0);
}

static void test_conn_frames_pieces_and_batches(void)
{
    int sv[2];
    pg_cl_conn_t c;
    pg_frame_t f;

    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pg_cl_conn_init(&c, sv[0]);
    /* a PMI-1 line, a right-aligned and a left-aligned PMI-2 body, in one write */
    feed(sv[1], "cmd=barrier_out\n    13cmd=finalize;13    cmd=finalize;");
    CU_ASSERT_EQUAL(pg_cl_conn_next(&c, &f), 0);
    CU_ASSERT_EQUAL(f.proto, PG_PROTO_PMI1);
    CU_ASSERT_EQUAL(f.body_len, strlen("cmd=barrier_out"));
    CU_ASSERT_EQUAL(pg_cl_conn_next(&c, &f), 0);
    CU_ASSERT_EQUAL(f.proto, PG_PROTO_PMI2);
    CU_ASSERT_EQUAL(memcmp(c.buf + f.body_off, "cmd=finalize;", 13), 0);
    CU_ASSERT_EQUAL(pg_cl_conn_next(&c, &f), 0);
    CU_ASSERT_EQUAL(f.body_len, 13);
    /* one message split across writes */
    feed(sv[1], "   ");
    feed(sv[1], " 26cmd=kvs-put-resp");
    feed(sv[1], "onse;rc=0;");
    CU_ASSERT_EQUAL(pg_cl_conn_next(&c, &f), 0);
    CU_ASSERT_EQUAL(memcmp(c.buf + f.body_off, "cmd=kvs-put-response;rc=0;", 26), 0);
    /* EOF */
    close(sv[1]);
    CU_ASSERT_EQUAL(pg_cl_conn_next(&c, &f), -EPIPE);
    pg_cl_conn_release(&c);
    close(sv[0]);
}

static void test_conn_rejects_unframable_bytes(void)
{
    int sv[2];
    pg_cl_conn_t c;
    pg_frame_t f;

    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pg_cl_conn_init(&c, sv[0]);
    feed(sv[1], "garbage!!\n");
    CU_ASSERT_EQUAL(pg_cl_conn_next(&c, &f), -EPROTO);
    pg_cl_conn_release(&c);
    close(sv[0]);
    close(sv[1]);
}

static void test_env_without_pmi_is_a_singleton(void)
{
    pg_cl_env_t env;

    unsetenv("PMI_FD");
    unsetenv("PMI_PORT");
    unsetenv("PMIGATE_PMI_EXT");
    CU_ASSERT_EQUAL(pg_cl_env_read(&env), 0);
    CU_ASSERT_EQUAL(env.mode, PG_CL_SINGLETON);
    CU_ASSERT_FALSE(env.pmigate_ext);
    setenv("PMI_FD", "7x", 1);
    CU_ASSERT_EQUAL(pg_cl_env_read(&env), -1); /* a launcher is there: never go singleton */
    setenv("PMI_FD", "7", 1);
    setenv("PMI_RANK", "3", 1);
    setenv("PMIGATE_PMI_EXT", "1", 1);
    CU_ASSERT_EQUAL(pg_cl_env_read(&env), 0);
    CU_ASSERT_EQUAL(env.mode, PG_CL_FD);
    CU_ASSERT_EQUAL(env.fd, 7);
    CU_ASSERT_EQUAL(env.rank, 3);
    CU_ASSERT_TRUE(env.pmigate_ext);
    unsetenv("PMI_FD");
    unsetenv("PMI_RANK");
    unsetenv("PMIGATE_PMI_EXT");
}

static const pg_cunit_test_t kv_tests[] = {
    { "last put wins, values copied", test_kv_last_put_wins_and_values_are_copied },
    { "token keys are length-delimited", test_kv_keys_from_tokens_are_length_delimited },
    { NULL, NULL },
};
static const pg_cunit_test_t util_tests[] = {
    { "copy reports truncation", test_copy_reports_truncation },
    { "int lists", test_int_list_parses_and_rejects },
    { "mapping blocks and wrap-around", test_mapping_blocks_and_wraparound },
    { "mapping garbage rejected", test_mapping_rejects_garbage },
    { "mapping: empty huge blocks cost nothing", test_mapping_empty_huge_blocks_cost_nothing },
    { "clique lists node mates", test_clique_lists_the_node_mates },
    { NULL, NULL },
};
static const pg_cunit_test_t io_tests[] = {
    { "frames pieces and batches", test_conn_frames_pieces_and_batches },
    { "unframable bytes rejected", test_conn_rejects_unframable_bytes },
    { "environment: singleton, PMI_FD", test_env_without_pmi_is_a_singleton },
    { NULL, NULL },
};
static const pg_cunit_suite_t suites[] = {
    { "client key map", kv_tests, NULL, NULL },
    { "client util", util_tests, NULL, NULL },
    { "client io", io_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
