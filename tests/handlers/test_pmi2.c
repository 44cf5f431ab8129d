/*
 * test_pmi2: scripted PMI-2 conversations with the gateway's PMI-2 handler
 * over real connections (socketpairs, libevent loop, engine), one test per
 * rule of docs/wire-protocol.md ("PMI-2 commands", "Semantics") that Slurm's
 * libpmi2, MPICH or a user relies on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmix_common.h"
#include "tests/handlers/hh_harness.h"

/* A job (ranks in blocks over nnodes) whose ranks all did init + fullinit
 * the way Slurm's libpmi2 does (left-aligned length). */
static hh_t *pmi2_job(int size, int nnodes)
{
    hh_t *h = hh_new(size, nnodes);
    char body[128];

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    for (int c = 0; c < size; c++) {
        hh_send1(h, c, "cmd=init pmi_version=2 pmi_subversion=0\n");
        EXPECT(h, c, hh_reply, "response_to_init");
        snprintf(body, sizeof(body), "cmd=fullinit;pmirank=%d;threaded=FALSE;", c);
        hh_send2_left(h, c, body);
        EXPECT(h, c, hh_reply, "fullinit-response");
        CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    }
    return h;
}

static void kvs_put(hh_t *h, int c, const char *key, const char *value)
{
    char body[2048];

    snprintf(body, sizeof(body), "cmd=kvs-put;key=%s;value=%s;", key, value);
    hh_send2(h, c, body);
    EXPECT(h, c, hh_reply, "kvs-put-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
}

static void send_get(hh_t *h, int c, const char *key, int srcid, const char *thrid)
{
    char body[512];

    snprintf(body, sizeof(body), "cmd=kvs-get;%s%s%sjobid=%s;srcid=%d;key=%s;", thrid ? "thrid=" : "",
             thrid ? thrid : "", thrid ? ";" : "", hh_kvsname(h), srcid, key);
    hh_send2(h, c, body);
}

static void fence_all(hh_t *h, int size)
{
    for (int c = 0; c < size; c++)
        hh_send2(h, c, "cmd=kvs-fence;");
    for (int c = 0; c < size; c++) {
        EXPECT(h, c, hh_reply, "kvs-fence-response");
        CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    }
}

/* ---- handshake -------------------------------------------------------------- */

static void test_fullinit_response_has_version_keys(void)
{
    hh_t *h = hh_new(2, 1);

    hh_send1(h, 1, "cmd=init pmi_version=2 pmi_subversion=0\n");
    EXPECT(h, 1, hh_reply, "response_to_init");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmi_version"), "2");
    hh_send2_left(h, 1, "cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;");
    EXPECT(h, 1, hh_reply, "fullinit-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmi-version"), "2");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmi-subversion"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rank"), "1");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "size"), "2");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "appnum"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "debugged"), "FALSE");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmiverbose"), "FALSE");
    hh_free(h);
}

/* pmigate's libpmi2 says it reads the key segment; Slurm's says nothing,
 * and the gateway then writes none (docs/shm-segment.md). */
static void test_fullinit_tells_the_host_who_reads_the_segment(void)
{
    hh_t *h = hh_new(2, 1);

    for (int c = 0; c < 2; c++) {
        hh_send1(h, c, "cmd=init pmi_version=2 pmi_subversion=0\n");
        EXPECT(h, c, hh_reply, "response_to_init");
    }
    hh_send2(h, 0, "cmd=fullinit;pmirank=0;threaded=FALSE;pmigate_shm=yes;");
    EXPECT(h, 0, hh_reply, "fullinit-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send2_left(h, 1, "cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;");
    EXPECT(h, 1, hh_reply, "fullinit-response");
    CU_ASSERT_TRUE(hh_reads_segment(h, 0));
    CU_ASSERT_FALSE(hh_reads_segment(h, 1));
    hh_free(h);
}

static void test_fullinit_without_keys_takes_the_fd_rank(void)
{
    hh_t *h = hh_new(3, 1);

    hh_send1(h, 2, "cmd=init pmi_version=2 pmi_subversion=0\n");
    EXPECT(h, 2, hh_reply, "response_to_init");
    hh_send2(h, 2, "cmd=fullinit;");
    EXPECT(h, 2, hh_reply, "fullinit-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rank"), "2");
    hh_free(h);
}

static void test_srcid_names_the_rank_of_a_port_client(void)
{
    hh_t *h = hh_new(4, 1);
    int c = hh_add_unidentified(h);

    CU_ASSERT_FATAL(c >= 0);
    hh_send1(h, c, "cmd=init pmi_version=2 pmi_subversion=0\n");
    EXPECT(h, c, hh_reply, "response_to_init");
    hh_send2_left(h, c, "cmd=fullinit;srcid=3;threaded=FALSE;");
    EXPECT(h, c, hh_reply, "fullinit-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rank"), "3");
    hh_free(h);
}

static void test_left_and_right_padded_lengths_and_off_by_6_junk(void)
{
    hh_t *h = pmi2_job(1, 1);
    const char *body = "cmd=job-getid;";
    char buf[64];

    hh_send2(h, 0, body);
    EXPECT(h, 0, hh_reply, "job-getid-response");
    hh_send2_left(h, 0, body);
    EXPECT(h, 0, hh_reply, "job-getid-response");
    /* MPICH 3.3-4.0 simple2pmi: the length claims 6 more bytes, then junk */
    snprintf(buf, sizeof(buf), "%-6d%s", (int)strlen(body) + 6, body);
    memcpy(buf + 6 + strlen(body), "\x01\x7f\xffZ=\x02", 6);
    hh_send(h, 0, buf, 6 + strlen(body) + 6);
    EXPECT(h, 0, hh_reply, "job-getid-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "jobid"), hh_kvsname(h));
    hh_send2(h, 0, "cmd=job-getid;");
    EXPECT(h, 0, hh_reply, "job-getid-response");
    hh_free(h);
}

/* ---- key-value space ----------------------------------------------------------- */

static void test_put_is_invisible_to_its_owner_until_the_fence(void)
{
    hh_t *h = pmi2_job(2, 1);

    kvs_put(h, 0, "k0", "v0");
    send_get(h, 0, "k0", 0, "0xa1");
    CU_ASSERT(hh_quiet(h, 0)); /* hidden: the get is held */
    hh_send2(h, 0, "cmd=kvs-fence;thrid=0xf0;"); /* commits: the held get sees it */
    EXPECT(h, 0, hh_reply, "kvs-get-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "thrid"), "0xa1");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "TRUE");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "v0");
    hh_send2(h, 1, "cmd=kvs-fence;");
    EXPECT(h, 0, hh_reply, "kvs-fence-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "thrid"), "0xf0");
    EXPECT(h, 1, hh_reply, "kvs-fence-response");
    hh_free(h);
}

static void test_put_is_invisible_to_others_until_the_owners_fence(void)
{
    hh_t *h = pmi2_job(2, 1);

    kvs_put(h, 0, "k0", "v0");
    send_get(h, 1, "k0", 0, NULL);
    CU_ASSERT(hh_quiet(h, 1));
    hh_send2(h, 0, "cmd=kvs-fence;");
    EXPECT(h, 1, hh_reply, "kvs-get-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "TRUE");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "v0");
    hh_send2(h, 1, "cmd=kvs-fence;");
    EXPECT(h, 0, hh_reply, "kvs-fence-response");
    EXPECT(h, 1, hh_reply, "kvs-fence-response");
    hh_free(h);
}

static void test_fence_is_a_real_barrier(void)
{
    hh_t *h = pmi2_job(2, 1);

    hh_send2(h, 0, "cmd=kvs-fence;");
    CU_ASSERT(hh_quiet(h, 0));
    hh_send2(h, 1, "cmd=kvs-fence;");
    EXPECT(h, 0, hh_reply, "kvs-fence-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    EXPECT(h, 1, hh_reply, "kvs-fence-response");
    hh_free(h);
}

static void test_every_ranks_key_after_the_fence(void)
{
    hh_t *h = pmi2_job(4, 2);
    char key[16], value[16];

    for (int c = 0; c < 4; c++) {
        snprintf(key, sizeof(key), "card%d", c);
        snprintf(value, sizeof(value), "val%d", c);
        kvs_put(h, c, key, value);
    }
    fence_all(h, 4);
    for (int c = 0; c < 4; c++)
        for (int src = 0; src < 4; src++) {
            snprintf(key, sizeof(key), "card%d", src);
            snprintf(value, sizeof(value), "val%d", src);
            send_get(h, c, key, c == 3 ? -1 : src, NULL);
            EXPECT(h, c, hh_reply, "kvs-get-response");
            CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
            CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "TRUE");
            CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), value);
        }
    hh_free(h);
}

static void test_missing_key_after_a_fence_is_found_false_at_once(void)
{
    hh_t *h = pmi2_job(2, 1);

    fence_all(h, 2);
    send_get(h, 0, "-NONEXIST-KEY", -1, NULL);
    EXPECT(h, 0, hh_reply, "kvs-get-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "FALSE");
    CU_ASSERT_PTR_NULL(hh_get(hh_reply, "value"));
    hh_free(h);
}

static void test_missing_key_before_any_fence_is_answered(void)
{
    hh_t *h = pmi2_job(2, 1);
    hh_t *single = pmi2_job(1, 1);

    /* alone in its job: nobody else could ever post it */
    send_get(single, 0, "nokey", -1, NULL);
    EXPECT(single, 0, hh_reply, "kvs-get-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "FALSE");
    hh_free(single);
    /* the other rank waits in a fence only the asker can release */
    send_get(h, 0, "nokey", -1, NULL);
    hh_send2(h, 1, "cmd=kvs-fence;");
    EXPECT(h, 0, hh_reply, "kvs-get-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "FALSE");
    hh_send2(h, 0, "cmd=kvs-fence;");
    EXPECT(h, 0, hh_reply, "kvs-fence-response");
    EXPECT(h, 1, hh_reply, "kvs-fence-response");
    hh_free(h);
}

static void test_semicolons_in_values_round_trip_escaped(void)
{
    hh_t *h = pmi2_job(1, 1);

    kvs_put(h, 0, "semi", "val;;with;;semis 0");
    fence_all(h, 1);
    send_get(h, 0, "semi", 0, NULL);
    EXPECT(h, 0, hh_reply, "kvs-get-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "val;with;semis 0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_reply->raw, "val;;with;;semis 0;"));
    hh_free(h);
}

static void test_thrid_is_echoed_from_any_position(void)
{
    hh_t *h = pmi2_job(1, 1);

    hh_send2(h, 0, "cmd=job-getid;thrid=0x7ffd3c1a2b40;");
    EXPECT(h, 0, hh_reply, "job-getid-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "thrid"), "0x7ffd3c1a2b40");
    hh_send2(h, 0, "cmd=kvs-put;key=a;value=b;thrid=T2;");
    EXPECT(h, 0, hh_reply, "kvs-put-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "thrid"), "T2");
    hh_send2(h, 0, "cmd=info-getjobattr;thrid=T3;key=nosuchattr;");
    EXPECT(h, 0, hh_reply, "info-getjobattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "thrid"), "T3");
    hh_send2(h, 0, "cmd=bogus;thrid=T4;");
    EXPECT(h, 0, hh_reply, "bogus-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "thrid"), "T4");
    hh_send2(h, 0, "cmd=kvs-put;thrid=T5;key=");
    EXPECT(h, 0, hh_reply, "kvs-put-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_free(h);
}

/* The PMI-2 design note names the operation id "opid": it is echoed under
 * that name, just as thrid is. */
static void test_opid_is_echoed_as_opid(void)
{
    hh_t *h = pmi2_job(1, 1);

    hh_send2(h, 0, "cmd=job-getid;opid=42;");
    EXPECT(h, 0, hh_reply, "job-getid-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "opid"), "42");
    CU_ASSERT_PTR_NULL(hh_get(hh_reply, "thrid"));
    hh_send2(h, 0, "cmd=bogus;opid=43;");
    EXPECT(h, 0, hh_reply, "bogus-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "opid"), "43");
    hh_free(h);
}

/* ---- attributes ------------------------------------------------------------------ */

static void test_job_attributes_mapping_universe_and_unknown(void)
{
    hh_t *h = pmi2_job(4, 1);

    hh_send2_left(h, 0, "cmd=info-getjobattr;key=PMI_process_mapping;");
    EXPECT(h, 0, hh_reply, "info-getjobattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "TRUE");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "(vector,(0,1,4))");
    hh_send2_left(h, 0, "cmd=info-getjobattr;key=universeSize;");
    EXPECT(h, 0, hh_reply, "info-getjobattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "4");
    hh_send2_left(h, 0, "cmd=info-getjobattr;key=PMI_no_such_attr;");
    EXPECT(h, 0, hh_reply, "info-getjobattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "FALSE");
    hh_free(h);
}

static void test_node_attributes_put_get_and_wait(void)
{
    hh_t *h = pmi2_job(2, 1);

    hh_send2(h, 0, "cmd=info-getnodeattr;key=nk;wait=FALSE;");
    EXPECT(h, 0, hh_reply, "info-getnodeattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "FALSE");
    hh_send2(h, 0, "cmd=info-getnodeattr;key=nk;wait=TRUE;");
    CU_ASSERT(hh_quiet(h, 0));
    hh_send2(h, 1, "cmd=info-putnodeattr;key=nk;value=nv1;");
    EXPECT(h, 1, hh_reply, "info-putnodeattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    EXPECT(h, 0, hh_reply, "info-getnodeattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "TRUE");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "nv1");
    hh_send2(h, 1, "cmd=info-getnodeattr;key=nk;wait=FALSE;");
    EXPECT(h, 1, hh_reply, "info-getnodeattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "nv1");
    hh_free(h);
}

static void test_node_attributes_are_per_node(void)
{
    hh_t *h = pmi2_job(2, 2); /* rank 0 on node 0, rank 1 on node 1 */

    hh_send2(h, 0, "cmd=info-putnodeattr;key=nk;value=n0;");
    EXPECT(h, 0, hh_reply, "info-putnodeattr-response");
    hh_send2(h, 1, "cmd=info-getnodeattr;key=nk;wait=FALSE;");
    EXPECT(h, 1, hh_reply, "info-getnodeattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "FALSE");
    hh_free(h);
}

static void test_never_satisfiable_node_wait_ends_found_false(void)
{
    hh_t *h = pmi2_job(2, 1);

    hh_send2(h, 0, "cmd=info-getnodeattr;key=never;wait=TRUE;");
    CU_ASSERT(hh_quiet(h, 0));
    hh_send2(h, 1, "cmd=finalize;");
    EXPECT(h, 1, hh_reply, "finalize-response");
    EXPECT(h, 0, hh_reply, "info-getnodeattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "FALSE");
    hh_free(h);
}

/* A threaded client (its requests carry thrid) keeps working in other
 * threads while one waits for a node attribute: both ranks waiting that way
 * must not be judged hung, and the waits end when the attribute appears. */
static void test_threaded_node_waits_are_not_judged_hung(void)
{
    hh_t *h = pmi2_job(2, 1);

    hh_send2(h, 0, "cmd=info-getnodeattr;thrid=0x1;key=late;wait=TRUE;");
    hh_send2(h, 1, "cmd=info-getnodeattr;thrid=0x2;key=late;wait=TRUE;");
    CU_ASSERT(hh_quiet(h, 0));
    CU_ASSERT(hh_quiet(h, 1));
    hh_send2(h, 0, "cmd=info-putnodeattr;thrid=0x3;key=late;value=here;");
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_FATAL(hh_recv(h, 0, hh_reply));
        if (strcmp(hh_cmd(hh_reply), "info-getnodeattr-response") == 0) {
            CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "TRUE");
            CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "here");
        }
    }
    EXPECT(h, 1, hh_reply, "info-getnodeattr-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "TRUE");
    hh_free(h);
}

/* ---- name service ------------------------------------------------------------------- */

static void test_name_service_duplicate_and_lookup_with_port_and_value(void)
{
    hh_t *h = pmi2_job(2, 1);

    hh_send2_left(h, 0, "cmd=name-publish;name=svc;port=portstr;infokeycount=0;");
    EXPECT(h, 0, hh_reply, "name-publish-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send2_left(h, 1, "cmd=name-publish;name=svc;port=other;infokeycount=0;");
    EXPECT(h, 1, hh_reply, "name-publish-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(hh_get(hh_reply, "errmsg"));
    hh_send2_left(h, 1, "cmd=name-lookup;name=svc;infokeycount=0;");
    EXPECT(h, 1, hh_reply, "name-lookup-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "TRUE");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "port"), "portstr");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "portstr");
    hh_send2_left(h, 0, "cmd=name-unpublish;name=svc;infokeycount=0;");
    EXPECT(h, 0, hh_reply, "name-unpublish-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send2_left(h, 0, "cmd=name-unpublish;name=svc;infokeycount=0;");
    EXPECT(h, 0, hh_reply, "name-unpublish-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send2_left(h, 1, "cmd=name-lookup;name=svc;infokeycount=0;");
    EXPECT(h, 1, hh_reply, "name-lookup-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "found"), "FALSE");
    hh_free(h);
}

/* ---- life cycle -------------------------------------------------------------------------- */

static void test_finalize_responds_and_closes(void)
{
    hh_t *h = pmi2_job(1, 1);

    hh_send2_left(h, 0, "cmd=finalize;");
    EXPECT(h, 0, hh_reply, "finalize-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT(hh_eof(h, 0));
    CU_ASSERT_PTR_NULL(hh_close_reason(h, 0));
    hh_free(h);
}

static void test_abort_isworld_kills_the_job(void)
{
    hh_t *h = pmi2_job(2, 1);

    hh_send2_left(h, 1, "cmd=abort;isworld=TRUE;msg=bye;");
    CU_ASSERT(hh_quiet(h, 1));
    CU_ASSERT_EQUAL(hh_abort_rank(h), 1);
    CU_ASSERT_NOT_EQUAL(hh_abort_code(h), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_log(h), "bye"));
    hh_free(h);
}

/* A mixed job: the PMIx process of rank 0 hears PMIX_ERR_PROC_ABORTED
 * from the PMI-2 rank that aborted the job; an abort for itself only
 * (isworld=FALSE) ends nothing and tells no one. */
static void test_abort_tells_the_pmix_ranks(void)
{
    hh_t *h = pmi2_job(2, 1);
    char want[128];

    CU_ASSERT_EQUAL_FATAL(hh_watch_events(h, 0), 0);
    hh_send2(h, 1, "cmd=abort;isworld=FALSE;msg=only me;");
    CU_ASSERT_STRING_EQUAL(hh_events(h), "");
    hh_send2(h, 1, "cmd=abort;exitcode=9;message=all of us;");
    CU_ASSERT_EQUAL(hh_abort_code(h), 9);
    snprintf(want, sizeof(want), "%d source 1 %s=9 %s=all of us\n", PMIX_ERR_PROC_ABORTED,
             PMIX_EXIT_CODE, PMIX_EVENT_TEXT_MESSAGE);
    CU_ASSERT_STRING_EQUAL(hh_events(h), want);
    hh_free(h);
}

static void test_abort_exitcode_form_and_isworld_false(void)
{
    hh_t *h = pmi2_job(2, 1);

    hh_send2(h, 0, "cmd=abort;isworld=FALSE;msg=only me;");
    CU_ASSERT(hh_quiet(h, 0));
    CU_ASSERT_EQUAL(hh_abort_code(h), -1);
    hh_send2(h, 1, "cmd=abort;exitcode=9;message=line one\nline two;");
    CU_ASSERT(hh_quiet(h, 1));
    CU_ASSERT_EQUAL(hh_abort_code(h), 9);
    hh_free(h);
}

/* ---- refusals and bad input ------------------------------------------------------------ */

static void test_connect_disconnect_spawn_are_refused_clearly(void)
{
    hh_t *h = pmi2_job(1, 1);

    /* a job this gateway does not have: refused, kvscopy kept */
    hh_send2(h, 0, "cmd=job-connect;jobid=other;");
    EXPECT(h, 0, hh_reply, "job-connect-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "kvscopy"), "FALSE");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "no_such_job"));
    /* disconnecting from a job never connected */
    hh_send2(h, 0, "cmd=job-disconnect;jobid=other;");
    EXPECT(h, 0, hh_reply, "job-disconnect-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "not_connected"));
    /* a host without the spawn op (this harness) */
    hh_send2(h, 0, "cmd=spawn;ncmds=1;preputcount=0;subcmd=a.out;maxprocs=1;argc=0;infokeycount=0;");
    EXPECT(h, 0, hh_reply, "spawn-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "not_supported"));
    hh_send2(h, 0, "cmd=job-getid;");
    EXPECT(h, 0, hh_reply, "job-getid-response");
    hh_free(h);
}

/* The message MPICH 4.0 sent hydra (tests/captures/doc.cap), keys in
 * Slurm's strict order; argv/ppkey/infokey from 0. */
static void test_spawn_segments_make_one_request(void)
{
    hh_t *h = pmi2_job(1, 1);

    hh_enable_spawn(h);
    hh_send2(h, 0, "cmd=spawn;thrid=7;ncmds=2;preputcount=1;ppkey0=PARENT_ROOT_PORT_NAME;"
                   "ppval0=tag#0$port#99$;subcmd=python3;maxprocs=2;argc=3;argv0=probe6.py;"
                   "argv1=v2;argv2=x y;infokeycount=1;infokey0=wdir;infoval0=/scratch/job;"
                   "subcmd=python3;maxprocs=1;argc=2;argv0=probe6.py;argv1=v2;infokeycount=0;");
    EXPECT(h, 0, hh_reply, "spawn-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "jobid"), "kvs_spawned_1");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "errcodes"), "0,0,0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "thrid"), "7");
    CU_ASSERT_STRING_EQUAL(hh_spawned(h), "preput PARENT_ROOT_PORT_NAME=tag#0$port#99$\n"
                                          "cmd python3 x2 [probe6.py] [v2] [x y] wdir=/scratch/job\n"
                                          "cmd python3 x1 [probe6.py] [v2]\n");
    hh_free(h);
}

/* ncmds that does not match the segments, a missing argv, a missing
 * preputcount: refused with a reason, nothing spawned. */
static void test_spawn_bad_messages_are_refused(void)
{
    hh_t *h = pmi2_job(1, 1);

    hh_enable_spawn(h);
    hh_send2(h, 0, "cmd=spawn;ncmds=2;preputcount=0;subcmd=a;maxprocs=1;argc=0;");
    EXPECT(h, 0, hh_reply, "spawn-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "ncmds"));
    hh_send2(h, 0, "cmd=spawn;ncmds=1;preputcount=0;subcmd=a;maxprocs=1;argc=2;argv0=x;");
    EXPECT(h, 0, hh_reply, "spawn-response");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "missing_argv1"));
    hh_send2(h, 0, "cmd=spawn;ncmds=1;subcmd=a;maxprocs=1;argc=0;");
    EXPECT(h, 0, hh_reply, "spawn-response");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "preputcount"));
    hh_send2(h, 0, "cmd=spawn;ncmds=1;preputcount=0;subcmd=missing;maxprocs=2;argc=0;");
    EXPECT(h, 0, hh_reply, "spawn-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "errcodes"), "2,2");
    hh_free(h);
}

/* job-connect to a job of this gateway (here the only one: its own)
 * succeeds with kvscopy=FALSE, as MPICH's and Slurm's clients require. */
static void test_connect_to_a_known_job_succeeds_without_kvscopy(void)
{
    hh_t *h = pmi2_job(1, 1);
    char line[256];

    snprintf(line, sizeof(line), "cmd=job-connect;jobid=%s;", hh_kvsname(h));
    hh_send2(h, 0, line);
    EXPECT(h, 0, hh_reply, "job-connect-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "kvscopy"), "FALSE");
    hh_free(h);
}

static void test_unknown_command_gets_an_error_and_conn_stays(void)
{
    hh_t *h = pmi2_job(1, 1);

    hh_send2(h, 0, "cmd=frobnicate;a=b;");
    EXPECT(h, 0, hh_reply, "frobnicate-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "unsupported_command"));
    CU_ASSERT_EQUAL(hh_abort_code(h), -1);
    hh_send2(h, 0, "cmd=job-getid;");
    EXPECT(h, 0, hh_reply, "job-getid-response");
    hh_free(h);
}

static void test_long_key_and_long_value_are_refused_and_conn_stays(void)
{
    hh_t *h = pmi2_job(1, 1);
    char body[2200], key[101], value[2001];

    memset(key, 'k', 100);
    key[100] = '\0';
    memset(value, 'v', 2000);
    value[2000] = '\0';
    snprintf(body, sizeof(body), "cmd=kvs-put;key=%s;value=v;", key);
    hh_send2(h, 0, body);
    EXPECT(h, 0, hh_reply, "kvs-put-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "key_too_long"));
    snprintf(body, sizeof(body), "cmd=kvs-put;key=k;value=%s;", value);
    hh_send2(h, 0, body);
    EXPECT(h, 0, hh_reply, "kvs-put-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "errmsg"), "value_too_long"));
    snprintf(body, sizeof(body), "cmd=kvs-get;key=%s;", key);
    hh_send2(h, 0, body);
    EXPECT(h, 0, hh_reply, "kvs-get-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    kvs_put(h, 0, "k", "fine");
    hh_free(h);
}

static void test_malformed_body_is_refused_and_conn_stays(void)
{
    hh_t *h = pmi2_job(1, 1);

    hh_send2(h, 0, "cmd=kvs-put;novalue;key=a;");
    EXPECT(h, 0, hh_reply, "kvs-put-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send2(h, 0, "cmd=kvs-put;key=a;"); /* no value */
    EXPECT(h, 0, hh_reply, "kvs-put-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send2(h, 0, "cmd=job-getid;");
    EXPECT(h, 0, hh_reply, "job-getid-response");
    hh_free(h);
}

static void test_lost_rank_fails_the_fence_of_the_others(void)
{
    hh_t *h = pmi2_job(2, 1);

    hh_send2(h, 0, "cmd=kvs-fence;");
    CU_ASSERT(hh_quiet(h, 0));
    hh_send(h, 1, "abcdef", 6); /* broken framing: rank 1 is failed */
    EXPECT(h, 0, hh_reply, "kvs-fence-response");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_free(h);
}

static const pg_cunit_test_t handshake_tests[] = {
    { "fullinit-response has pmi-version/pmi-subversion", test_fullinit_response_has_version_keys },
    { "fullinit tells the host who reads the segment", test_fullinit_tells_the_host_who_reads_the_segment },
    { "fullinit without keys takes the fd's rank", test_fullinit_without_keys_takes_the_fd_rank },
    { "srcid names the rank of a PMI_PORT client", test_srcid_names_the_rank_of_a_port_client },
    { "left/right padded lengths, off-by-6 junk", test_left_and_right_padded_lengths_and_off_by_6_junk },
    { NULL, NULL },
};

static const pg_cunit_test_t kvs_tests[] = {
    { "put invisible to its owner until the fence", test_put_is_invisible_to_its_owner_until_the_fence },
    { "put invisible to others until the owner's fence", test_put_is_invisible_to_others_until_the_owners_fence },
    { "fence is a real barrier", test_fence_is_a_real_barrier },
    { "every rank's key after the fence (srcid hint)", test_every_ranks_key_after_the_fence },
    { "missing key after a fence: found=FALSE at once", test_missing_key_after_a_fence_is_found_false_at_once },
    { "missing key before any fence is answered", test_missing_key_before_any_fence_is_answered },
    { "';' in values round-trips as ';;'", test_semicolons_in_values_round_trip_escaped },
    { "thrid echoed from any position", test_thrid_is_echoed_from_any_position },
    { "opid echoed as opid", test_opid_is_echoed_as_opid },
    { NULL, NULL },
};

static const pg_cunit_test_t attr_tests[] = {
    { "job attributes: mapping, universeSize, unknown", test_job_attributes_mapping_universe_and_unknown },
    { "node attributes: put, get, wait satisfied later", test_node_attributes_put_get_and_wait },
    { "node attributes are per node", test_node_attributes_are_per_node },
    { "never-satisfiable wait ends found=FALSE", test_never_satisfiable_node_wait_ends_found_false },
    { "threaded node waits are not judged hung", test_threaded_node_waits_are_not_judged_hung },
    { "name service: duplicate; lookup has port= and value=", test_name_service_duplicate_and_lookup_with_port_and_value },
    { NULL, NULL },
};

static const pg_cunit_test_t life_tests[] = {
    { "finalize responds and closes", test_finalize_responds_and_closes },
    { "abort isworld=TRUE kills the job", test_abort_isworld_kills_the_job },
    { "abort exitcode form; isworld=FALSE spares the job", test_abort_exitcode_form_and_isworld_false },
    { "abort: the PMIx ranks are told", test_abort_tells_the_pmix_ranks },
    { NULL, NULL },
};

static const pg_cunit_test_t bad_input_tests[] = {
    { "job-connect/disconnect/spawn refused clearly", test_connect_disconnect_spawn_are_refused_clearly },
    { "job-connect to a known job: rc=0 kvscopy=FALSE", test_connect_to_a_known_job_succeeds_without_kvscopy },
    { "spawn: MPICH 4.0's segments make one request", test_spawn_segments_make_one_request },
    { "spawn: bad messages refused with a reason", test_spawn_bad_messages_are_refused },
    { "unknown command: error reply, connection stays", test_unknown_command_gets_an_error_and_conn_stays },
    { "long key / long value refused, connection stays", test_long_key_and_long_value_are_refused_and_conn_stays },
    { "malformed body refused, connection stays", test_malformed_body_is_refused_and_conn_stays },
    { "a lost rank fails the others' fence", test_lost_rank_fails_the_fence_of_the_others },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "pmi2 handshake and framing quirks", handshake_tests, hh_suite_init, hh_suite_cleanup },
    { "pmi2 key-value space and fence", kvs_tests, hh_suite_init, hh_suite_cleanup },
    { "pmi2 attributes and name service", attr_tests, hh_suite_init, hh_suite_cleanup },
    { "pmi2 life cycle", life_tests, hh_suite_init, hh_suite_cleanup },
    { "pmi2 bad input", bad_input_tests, hh_suite_init, hh_suite_cleanup },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
