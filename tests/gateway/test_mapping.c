/*
 * Unit tests for placement and PMI_process_mapping (gateway/util/pg_mapping.c):
 * the strings hydra 4.0 writes for these layouts (docs/wire-protocol.md,
 * "PMI_process_mapping"), and
 * that every string decodes (with MPICH's wrap-around rule) to the placement
 * the launcher really made.
 */
#include <string.h>

#include "gateway/util/pg_mapping.h"
#include "tests/pg_cunit.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct layout_case {
    int slots[4];
    int nnodes;
    int nranks;
    const char *mapping;
} layout_case_t;

/* hydra 4.0's mappings (mpiexec.hydra -launcher manual -verbose prints them) */
static const layout_case_t hydra_table[] = {
    { { 1 }, 1, 2, "(vector,(0,1,1))" },             /* -n 2, one slot */
    { { 4 }, 1, 4, "(vector,(0,1,4))" },             /* localhost:4 -n 4 */
    { { 2, 2 }, 2, 4, "(vector,(0,2,2))" },          /* n1:2,n2:2 -n 4 */
    { { 2, 2 }, 2, 6, "(vector,(0,2,2))" },          /* ... -n 6 wraps */
    { { 2, 3 }, 2, 5, "(vector,(0,1,2),(1,1,3))" },  /* n1:2,n2:3 -n 5 */
    { { 1, 1 }, 2, 4, "(vector,(0,2,1))" },          /* -ppn 1 -n 4 */
    { { 4, 4 }, 2, 8, "(vector,(0,2,4))" },          /* n1:4,n2:4 -n 8 */
    { { 3, 1, 3 }, 3, 7, "(vector,(0,1,3),(1,1,1),(2,1,3))" },
};

static void test_hydra_table(void)
{
    for (int i = 0; i < N(hydra_table); i++) {
        const layout_case_t *c = &hydra_table[i];
        char buf[PG_MAPPING_MAX + 1];

        CU_ASSERT_TRUE(pg_mapping_format(c->slots, c->nnodes, c->nranks, buf, sizeof(buf)) > 0);
        CU_ASSERT_STRING_EQUAL(buf, c->mapping);
    }
}

static void test_mapping_decodes_to_the_placement(void)
{
    for (int i = 0; i < N(hydra_table); i++) {
        const layout_case_t *c = &hydra_table[i];
        int placed[16], decoded[16];
        char buf[PG_MAPPING_MAX + 1];

        CU_ASSERT_EQUAL_FATAL(pg_layout_fill(c->slots, c->nnodes, c->nranks, placed), 0);
        pg_mapping_format(c->slots, c->nnodes, c->nranks, buf, sizeof(buf));
        CU_ASSERT_EQUAL_FATAL(pg_mapping_decode(buf, c->nranks, decoded), 0);
        CU_ASSERT_EQUAL(memcmp(placed, decoded, (size_t)c->nranks * sizeof(int)), 0);
    }
}

static void test_one_node_names_every_rank(void)
{
    int slots = 16;
    char buf[PG_MAPPING_MAX + 1];

    CU_ASSERT_EQUAL(pg_mapping_format(&slots, 1, 16, buf, sizeof(buf)), 17);
    CU_ASSERT_STRING_EQUAL(buf, "(vector,(0,1,16))");
}

static void test_job_smaller_than_slots(void)
{
    int slots[2] = { 4, 4 };
    int placed[6], decoded[6];
    char buf[PG_MAPPING_MAX + 1];

    pg_mapping_format(slots, 2, 2, buf, sizeof(buf));
    CU_ASSERT_STRING_EQUAL(buf, "(vector,(0,1,2))"); /* node 1 is never reached */
    pg_mapping_format(slots, 2, 6, buf, sizeof(buf));
    CU_ASSERT_STRING_EQUAL(buf, "(vector,(0,1,4),(1,1,2))");
    pg_layout_fill(slots, 2, 6, placed);
    CU_ASSERT_EQUAL(pg_mapping_decode(buf, 6, decoded), 0);
    CU_ASSERT_EQUAL(memcmp(placed, decoded, sizeof(placed)), 0);
}

static void test_fill_wraps_like_hydra(void)
{
    int slots[2] = { 2, 3 };
    int placed[7];
    const int want[7] = { 0, 0, 1, 1, 1, 0, 0 };

    CU_ASSERT_EQUAL(pg_layout_fill(slots, 2, 7, placed), 0);
    CU_ASSERT_EQUAL(memcmp(placed, want, sizeof(want)), 0);
}

static void test_too_long_mapping_is_empty(void)
{
    /* 400 nodes of alternating sizes cannot be merged: far over 1024 bytes */
    int slots[400];
    char buf[4096];

    for (int i = 0; i < N(slots); i++)
        slots[i] = 1 + i % 2;
    CU_ASSERT_EQUAL(pg_mapping_format(slots, N(slots), 600, buf, sizeof(buf)), 0);
    CU_ASSERT_STRING_EQUAL(buf, "");
    /* a small caller buffer is respected too */
    int one = 4;
    CU_ASSERT_EQUAL(pg_mapping_format(&one, 1, 4, buf, 8), 0);
    CU_ASSERT_STRING_EQUAL(buf, "");
}

static void test_invalid_layouts_are_refused(void)
{
    int zero = 0, ok = 1, out[4];
    char buf[64];

    CU_ASSERT_EQUAL(pg_layout_fill(&zero, 1, 4, out), -1);
    CU_ASSERT_EQUAL(pg_layout_fill(&ok, 0, 4, out), -1);
    CU_ASSERT_EQUAL(pg_mapping_format(&ok, 1, 0, buf, sizeof(buf)), -1);
    CU_ASSERT_EQUAL(pg_mapping_format(&zero, 1, 2, buf, sizeof(buf)), -1);
}

static void test_decode_rejects_garbage(void)
{
    int out[4];

    CU_ASSERT_EQUAL(pg_mapping_decode("", 4, out), -1);
    CU_ASSERT_EQUAL(pg_mapping_decode("(vector)", 4, out), -1);
    CU_ASSERT_EQUAL(pg_mapping_decode("(vector,(0,1,2)", 4, out), -1);
    CU_ASSERT_EQUAL(pg_mapping_decode("(vector,(0,1,x))", 4, out), -1);
    CU_ASSERT_EQUAL(pg_mapping_decode("(vector,(0,1,0))", 4, out), -1); /* places nobody */
    CU_ASSERT_EQUAL(pg_mapping_decode("(vector,(1,1,1))", 4, out), -1); /* no block at node 0 to wrap to */
    CU_ASSERT_EQUAL(pg_mapping_decode("(vector,(1,1,4))", 4, out), 0);  /* ... unless none is needed */
}

static void test_decode_wraps_from_first_block_at_node_zero(void)
{
    /* Slurm's cyclic form: (0,2,1),(0,2,1) -> 0,1,0,1,0,1 */
    int out[6];
    const int want[6] = { 0, 1, 0, 1, 0, 1 };

    CU_ASSERT_EQUAL(pg_mapping_decode("(vector,(0,2,1),(0,2,1))", 6, out), 0);
    CU_ASSERT_EQUAL(memcmp(out, want, sizeof(want)), 0);
}

static const pg_cunit_test_t mapping_tests[] = {
    { "hydra's mappings for the same layouts", test_hydra_table },
    { "each mapping decodes to the real placement", test_mapping_decodes_to_the_placement },
    { "one node: (vector,(0,1,N))", test_one_node_names_every_rank },
    { "a job smaller than the slots names only reached nodes", test_job_smaller_than_slots },
    { "placement wraps to node 0 when slots run out", test_fill_wraps_like_hydra },
    { "a mapping over 1024 bytes becomes empty", test_too_long_mapping_is_empty },
    { "invalid layouts are refused", test_invalid_layouts_are_refused },
    { "decode rejects malformed mappings", test_decode_rejects_garbage },
    { "decode wraps from the first block at node 0", test_decode_wraps_from_first_block_at_node_zero },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "PMI_process_mapping", mapping_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
