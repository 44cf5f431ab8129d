/*
 * test_pmi1: scripted PMI-1 conversations with the gateway's PMI-1 handler
 * over real connections (socketpairs, libevent loop, engine), one test per
 * rule of docs/wire-protocol.md ("PMI-1 commands", "Semantics") that MPICH's
 * client or a user relies on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmix_common.h"
#include "tests/handlers/hh_harness.h"

/* A job whose ranks all finished the PMI-1 version handshake. */
static hh_t *pmi1_job(int size)
{
    hh_t *h = hh_new(size, 1);

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    for (int c = 0; c < size; c++) {
        hh_send1(h, c, "cmd=init pmi_version=1 pmi_subversion=1\n");
        EXPECT(h, c, hh_reply, "response_to_init");
        CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    }
    return h;
}

static void put(hh_t *h, int c, const char *key, const char *value)
{
    char line[2048];

    snprintf(line, sizeof(line), "cmd=put kvsname=%s key=%s value=%s\n", hh_kvsname(h), key, value);
    hh_send1(h, c, line);
    EXPECT(h, c, hh_reply, "put_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
}

/* Sends a get and receives the get_result into hh_reply. */
static void get(hh_t *h, int c, const char *key)
{
    char line[256];

    snprintf(line, sizeof(line), "cmd=get kvsname=%s key=%s\n", hh_kvsname(h), key);
    hh_send1(h, c, line);
    EXPECT(h, c, hh_reply, "get_result");
}

static void barrier_all(hh_t *h, int size)
{
    for (int c = 0; c < size; c++)
        hh_send1(h, c, "cmd=barrier_in\n");
    for (int c = 0; c < size; c++)
        EXPECT(h, c, hh_reply, "barrier_out");
}

/* ---- version handshake ------------------------------------------------- */

static void test_init_1_1_is_answered_1_1_rc0(void)
{
    hh_t *h = hh_new(1, 1);

    hh_send1(h, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    EXPECT(h, 0, hh_reply, "response_to_init");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmi_version"), "1");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmi_subversion"), "1");
    hh_free(h);
}

/* pmigate's libpmi says it reads the key segment; MPICH's built-in PMI-1
 * says nothing, and the gateway then writes none (docs/shm-segment.md). */
static void test_init_tells_the_host_who_reads_the_segment(void)
{
    hh_t *h = hh_new(2, 1);

    hh_send1(h, 0, "cmd=init pmi_version=1 pmi_subversion=1 pmigate_shm=yes\n");
    EXPECT(h, 0, hh_reply, "response_to_init");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 1, "cmd=init pmi_version=1 pmi_subversion=1\n");
    EXPECT(h, 1, hh_reply, "response_to_init");
    CU_ASSERT_TRUE(hh_reads_segment(h, 0));
    CU_ASSERT_FALSE(hh_reads_segment(h, 1));
    hh_free(h);
}

static void test_init_1_0_is_served_as_1_1(void)
{
    hh_t *h = hh_new(1, 1);

    hh_send1(h, 0, "cmd=init pmi_version=1 pmi_subversion=0\n");
    EXPECT(h, 0, hh_reply, "response_to_init");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmi_subversion"), "1");
    hh_free(h);
}

static void test_unsupported_version_gets_nonzero_rc_and_conn_stays(void)
{
    hh_t *h = hh_new(1, 1);

    hh_send1(h, 0, "cmd=init pmi_version=3 pmi_subversion=0\n");
    EXPECT(h, 0, hh_reply, "response_to_init");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 0, "cmd=init pmi_subversion=1\n"); /* version missing: hydra's proxy crashes */
    EXPECT(h, 0, hh_reply, "response_to_init");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 0, "cmd=get_maxes\n");
    EXPECT(h, 0, hh_reply, "maxes");
    hh_free(h);
}

static void test_init_2_0_switches_the_connection_to_pmi2(void)
{
    hh_t *h = hh_new(1, 1);

    hh_send1(h, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
    EXPECT(h, 0, hh_reply, "response_to_init");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmi_version"), "2");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "pmi_subversion"), "0");
    hh_send2_left(h, 0, "cmd=fullinit;pmirank=0;threaded=FALSE;");
    EXPECT(h, 0, hh_reply, "fullinit-response");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_free(h);
}

static void test_initack_answers_four_lines_with_size_and_rank(void)
{
    hh_t *h = hh_new(4, 1);
    int c = hh_add_unidentified(h);

    CU_ASSERT_FATAL(c >= 0);
    hh_send1(h, c, "cmd=initack pmiid=2\n");
    EXPECT(h, c, hh_reply, "initack");
    EXPECT(h, c, hh_reply, "set");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "size"), "4");
    EXPECT(h, c, hh_reply, "set");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rank"), "2");
    EXPECT(h, c, hh_reply, "set");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "debug"), "0");
    hh_send1(h, c, "cmd=init pmi_version=1 pmi_subversion=1\n");
    EXPECT(h, c, hh_reply, "response_to_init");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_free(h);
}

/* ---- job facts ----------------------------------------------------------- */

static void test_maxes_are_256_64_1024(void)
{
    hh_t *h = pmi1_job(1);

    hh_send1(h, 0, "cmd=get_maxes\n");
    EXPECT(h, 0, hh_reply, "maxes");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "kvsname_max"), "256");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "keylen_max"), "64");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "vallen_max"), "1024");
    hh_free(h);
}

static void test_appnum_kvsname_and_universe_size_is_job_size(void)
{
    hh_t *h = pmi1_job(4);

    hh_send1(h, 3, "cmd=get_appnum\n");
    EXPECT(h, 3, hh_reply, "appnum");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "appnum"), "0");
    hh_send1(h, 3, "cmd=get_my_kvsname\n");
    EXPECT(h, 3, hh_reply, "my_kvsname");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "kvsname"), hh_kvsname(h));
    hh_send1(h, 3, "cmd=get_universe_size\n");
    EXPECT(h, 3, hh_reply, "universe_size");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "size"), "4");
    hh_free(h);
}

/* ---- put / get --------------------------------------------------------------- */

static void test_own_put_is_visible_at_once_others_after_barrier(void)
{
    hh_t *h = pmi1_job(2);

    put(h, 0, "key0", "got-key0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "msg"), "success");
    get(h, 0, "key0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "got-key0");
    barrier_all(h, 2);
    get(h, 1, "key0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "got-key0");
    hh_free(h);
}

static void test_put_twice_keeps_the_last_value_and_empty_values_work(void)
{
    hh_t *h = pmi1_job(1);

    put(h, 0, "k", "first");
    put(h, 0, "k", "second");
    put(h, 0, "empty", "");
    put(h, 0, "eq", "x=y");
    get(h, 0, "k");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "second");
    get(h, 0, "empty");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "");
    get(h, 0, "eq");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "x=y");
    hh_free(h);
}

static void test_get_missing_fails_at_once_with_value_last(void)
{
    hh_t *h = pmi1_job(2);

    get(h, 0, "nokey");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "-1");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "msg"), "key_nokey_not_found");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "unknown");
    CU_ASSERT_STRING_EQUAL(hh_last_key(hh_reply), "value");
    hh_free(h);
}

static void test_get_result_keeps_value_last(void)
{
    hh_t *h = pmi1_job(1);

    put(h, 0, "k", "v");
    get(h, 0, "k");
    CU_ASSERT_STRING_EQUAL(hh_last_key(hh_reply), "value");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_reply->raw, " value=v\n"));
    hh_free(h);
}

static void test_get_process_mapping_and_universe_size_from_job(void)
{
    hh_t *h = pmi1_job(2);

    get(h, 1, "PMI_process_mapping");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "value"), "(vector"));
    get(h, 1, "universeSize");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "2");
    get(h, 1, "PMI_dead_processes");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), "");
    hh_free(h);
}

static void test_getbyidx_reports_no_more_keyvals(void)
{
    hh_t *h = pmi1_job(1);

    hh_send1(h, 0, "cmd=getbyidx kvsname=x idx=0\n");
    EXPECT(h, 0, hh_reply, "getbyidx_results");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "reason"), "no_more_keyvals");
    hh_free(h);
}

/* ---- barrier -------------------------------------------------------------------- */

static void test_barrier_out_waits_for_the_last_rank(void)
{
    hh_t *h = pmi1_job(3);

    hh_send1(h, 0, "cmd=barrier_in\n");
    hh_send1(h, 1, "cmd=barrier_in\n");
    CU_ASSERT(hh_quiet(h, 0));
    CU_ASSERT(hh_quiet(h, 1));
    hh_send1(h, 2, "cmd=barrier_in\n");
    for (int c = 0; c < 3; c++)
        EXPECT(h, c, hh_reply, "barrier_out");
    hh_free(h);
}

static void test_no_keyval_cache_unless_the_client_asks(void)
{
    hh_t *h = pmi1_job(2);

    put(h, 0, "a", "1");
    barrier_all(h, 2); /* barrier_out is the very next line: MPICH 4.0 expects it */
    hh_free(h);
}

static void test_keyval_cache_lines_respect_line_and_token_limits(void)
{
    hh_t *h = hh_new(2, 1);
    char key[32], value[700];
    int seen = 0, big = 0;

    hh_send1(h, 0, "cmd=init pmi_version=1 pmi_subversion=1 pmigate_keyval_cache=yes\n");
    EXPECT(h, 0, hh_reply, "response_to_init");
    hh_send1(h, 1, "cmd=init pmi_version=1 pmi_subversion=1\n");
    EXPECT(h, 1, hh_reply, "response_to_init");
    for (int i = 0; i < 100; i++) { /* many small pairs: the 64-token limit */
        snprintf(key, sizeof(key), "k%d", i);
        put(h, 1, key, "v");
    }
    memset(value, 'A', 600);
    value[600] = '\0';
    for (int i = 0; i < 3; i++) { /* big pairs: the 1023-byte line limit */
        snprintf(key, sizeof(key), "big%d", i);
        put(h, 1, key, value);
    }
    hh_send1(h, 0, "cmd=barrier_in\n");
    hh_send1(h, 1, "cmd=barrier_in\n");
    EXPECT(h, 1, hh_reply, "barrier_out");
    for (;;) {
        CU_ASSERT_FATAL(hh_recv(h, 0, hh_reply));
        CU_ASSERT(hh_reply->len <= 1023);
        if (strcmp(hh_cmd(hh_reply), "barrier_out") == 0)
            break;
        CU_ASSERT_STRING_EQUAL(hh_cmd(hh_reply), "keyval_cache");
        CU_ASSERT(hh_reply->msg.ntokens + 1 <= 64);
        for (unsigned t = 0; t < hh_reply->msg.ntokens; t++) {
            seen++;
            big += hh_reply->msg.tokens[t].val.len == 600;
        }
    }
    CU_ASSERT_EQUAL(seen, 103);
    CU_ASSERT_EQUAL(big, 3);
    hh_free(h);
}

/* ---- life cycle ---------------------------------------------------------------------- */

static void test_finalize_acks_and_closes(void)
{
    hh_t *h = pmi1_job(1);

    hh_send1(h, 0, "cmd=finalize\n");
    EXPECT(h, 0, hh_reply, "finalize_ack");
    CU_ASSERT(hh_eof(h, 0));
    CU_ASSERT(hh_closed(h, 0));
    CU_ASSERT_PTR_NULL(hh_close_reason(h, 0));
    hh_free(h);
}

static void test_abort_ends_the_job_with_its_exitcode_and_no_reply(void)
{
    hh_t *h = pmi1_job(2);

    hh_send1(h, 1, "cmd=abort exitcode=7 message=abort\n");
    CU_ASSERT(hh_quiet(h, 1));
    CU_ASSERT_EQUAL(hh_abort_code(h), 7);
    CU_ASSERT_EQUAL(hh_abort_rank(h), 1);
    hh_free(h);
}

/* A mixed job: the PMIx process of rank 0 hears PMIX_ERR_PROC_ABORTED
 * (-101) from the PMI-1 rank that aborted, with its code and message; the
 * aborting rank itself is not told. */
static void test_abort_tells_the_pmix_ranks(void)
{
    hh_t *h = pmi1_job(3);
    char want[128];

    CU_ASSERT_EQUAL_FATAL(hh_watch_events(h, 0), 0);
    CU_ASSERT_EQUAL_FATAL(hh_watch_events(h, 2), 0);
    hh_send1(h, 2, "cmd=abort exitcode=7 message=no_more\n");
    CU_ASSERT_EQUAL(hh_abort_code(h), 7);
    snprintf(want, sizeof(want), "%d source 2 %s=7 %s=no_more\n", PMIX_ERR_PROC_ABORTED,
             PMIX_EXIT_CODE, PMIX_EVENT_TEXT_MESSAGE);
    CU_ASSERT_STRING_EQUAL(hh_events(h), want);
    hh_free(h);
}

/* ---- name service ------------------------------------------------------------------ */

static void test_name_service_publish_duplicate_lookup_unpublish(void)
{
    hh_t *h = pmi1_job(2);

    hh_send1(h, 0, "cmd=publish_name service=svc port=tag#0$port#99$\n");
    EXPECT(h, 0, hh_reply, "publish_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "info"), "ok");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "msg"), "success");
    hh_send1(h, 1, "cmd=publish_name service=svc port=other\n");
    EXPECT(h, 1, hh_reply, "publish_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "1");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "msg"), "key_already_present");
    hh_send1(h, 1, "cmd=lookup_name service=svc\n");
    EXPECT(h, 1, hh_reply, "lookup_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "port"), "tag#0$port#99$");
    hh_send1(h, 0, "cmd=unpublish_name service=svc\n");
    EXPECT(h, 0, hh_reply, "unpublish_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 0, "cmd=unpublish_name service=svc\n");
    EXPECT(h, 0, hh_reply, "unpublish_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 1, "cmd=lookup_name service=svc\n");
    EXPECT(h, 1, hh_reply, "lookup_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NULL(hh_get(hh_reply, "port"));
    hh_free(h);
}

/* ---- spawn ----------------------------------------------------------------------------- */

/* The two blocks MPICH 4.0 sent hydra (tests/captures/doc.cap; argcnt after
 * the args, preputs repeated), with an argument holding '=' and a tab. */
static const char spawn_block1[] =
    "mcmd=spawn\nnprocs=2\nexecname=python3\ntotspawns=2\nspawnssofar=1\narg1=probe6.py\n"
    "arg2=v1\narg3=a b c\narg4=k=v\tx\nargcnt=4\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\n"
    "preput_val_0=tag#0$port#99$\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/scratch/job\nendcmd\n";
static const char spawn_block2[] =
    "mcmd=spawn\nnprocs=1\nexecname=python3\ntotspawns=2\nspawnssofar=2\narg1=probe6.py\n"
    "arg2=v1\nargcnt=2\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\n"
    "preput_val_0=tag#0$port#99$\ninfo_num=0\nendcmd\n";

static void test_spawn_blocks_make_one_request_and_one_reply(void)
{
    hh_t *h = pmi1_job(1);

    hh_enable_spawn(h);
    hh_send(h, 0, spawn_block1, strlen(spawn_block1));
    CU_ASSERT(hh_quiet(h, 0)); /* no reply before the last block */
    hh_send(h, 0, spawn_block2, strlen(spawn_block2));
    EXPECT(h, 0, hh_reply, "spawn_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "errcodes"), "0,0,0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "jobid"), "kvs_spawned_1");
    CU_ASSERT_STRING_EQUAL(hh_spawned(h),
                           "preput PARENT_ROOT_PORT_NAME=tag#0$port#99$\n"
                           "cmd python3 x2 [probe6.py] [v1] [a b c] [k=v\tx] wdir=/scratch/job\n"
                           "cmd python3 x1 [probe6.py] [v1]\n");
    CU_ASSERT(hh_quiet(h, 0));
    hh_free(h);
}

/* Newer MPICH writes all blocks in one buffer, preputs in block 1 only. */
static void test_spawn_blocks_in_one_write_preput_once(void)
{
    hh_t *h = pmi1_job(1);
    const char both[] =
        "mcmd=spawn\nnprocs=1\nexecname=a.out\ntotspawns=2\nspawnssofar=1\nargcnt=0\n"
        "preput_num=1\npreput_key_0=k\npreput_val_0=v\ninfo_num=0\nendcmd\n"
        "mcmd=spawn\nnprocs=2\nexecname=b.out\ntotspawns=2\nspawnssofar=2\nargcnt=0\n"
        "info_num=0\nendcmd\n";

    hh_enable_spawn(h);
    hh_send(h, 0, both, strlen(both));
    EXPECT(h, 0, hh_reply, "spawn_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_spawned(h), "preput k=v\ncmd a.out x1\ncmd b.out x2\n");
    hh_free(h);
}

/* A failed spawn still says which processes could not start. */
static void test_spawn_failure_carries_errcodes(void)
{
    hh_t *h = pmi1_job(1);

    hh_enable_spawn(h);
    hh_send1(h, 0, "mcmd=spawn\nnprocs=2\nexecname=missing\ntotspawns=1\nspawnssofar=1\n"
                   "argcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n");
    EXPECT(h, 0, hh_reply, "spawn_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "errcodes"), "2,2");
    hh_free(h);
}

/* A block out of order or whose counts lie is refused, and the next spawn
 * starts afresh. */
static void test_spawn_bad_blocks_are_refused(void)
{
    hh_t *h = pmi1_job(1);

    hh_enable_spawn(h);
    hh_send1(h, 0, "mcmd=spawn\nnprocs=1\nexecname=a.out\ntotspawns=2\nspawnssofar=2\n"
                   "argcnt=0\ninfo_num=0\nendcmd\n");
    EXPECT(h, 0, hh_reply, "spawn_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "msg"), "out_of_order"));
    hh_send1(h, 0, "mcmd=spawn\nnprocs=1\nexecname=a.out\ntotspawns=1\nspawnssofar=1\n"
                   "argcnt=2\narg1=x\ninfo_num=0\nendcmd\n");
    EXPECT(h, 0, hh_reply, "spawn_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "msg"), "missing_arg2"));
    hh_send(h, 0, spawn_block1, strlen(spawn_block1));
    hh_send(h, 0, spawn_block2, strlen(spawn_block2));
    EXPECT(h, 0, hh_reply, "spawn_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_free(h);
}

/* ---- refusals and bad input ---------------------------------------------------------- */

static void test_spawn_and_legacy_kvs_commands_are_refused_clearly(void)
{
    hh_t *h = pmi1_job(1);

    hh_send1(h, 0, "mcmd=spawn\nnprocs=1\nexecname=a.out\ntotspawns=1\nspawnssofar=1\n"
                   "argcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n");
    EXPECT(h, 0, hh_reply, "spawn_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "msg"), "not_supported"));
    hh_send1(h, 0, "cmd=create_kvs\n");
    EXPECT(h, 0, hh_reply, "newkvs");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 0, "cmd=destroy_kvs kvsname=x\n");
    EXPECT(h, 0, hh_reply, "kvs_destroyed");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 0, "cmd=get_appnum\n");
    EXPECT(h, 0, hh_reply, "appnum");
    hh_free(h);
}

static void test_unknown_command_gets_an_error_and_conn_stays(void)
{
    hh_t *h = pmi1_job(2);

    hh_send1(h, 0, "cmd=bogus_command foo=bar\n");
    EXPECT(h, 0, hh_reply, "bogus_command_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "-1");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "msg"), "unsupported_command_bogus_command");
    CU_ASSERT_EQUAL(hh_abort_code(h), -1);
    hh_send1(h, 0, "cmd=barrier_out\n"); /* a response name sent as a request */
    EXPECT(h, 0, hh_reply, "barrier_out_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "-1");
    barrier_all(h, 2);
    hh_free(h);
}

static void test_put_with_100_char_key_is_refused_and_conn_stays(void)
{
    hh_t *h = pmi1_job(1);
    char line[256], key[101];

    memset(key, 'k', 100);
    key[100] = '\0';
    snprintf(line, sizeof(line), "cmd=put kvsname=x key=%s value=v\n", key);
    hh_send1(h, 0, line);
    EXPECT(h, 0, hh_reply, "put_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "-1");
    CU_ASSERT_STRING_EQUAL(strstr(hh_get(hh_reply, "msg"), "key_too_long"), hh_get(hh_reply, "msg"));
    put(h, 0, "ok", "v");
    hh_free(h);
}

static void test_put_with_overlong_value_is_refused_and_conn_stays(void)
{
    hh_t *h = pmi1_job(1);
    char line[2200], value[2001];

    memset(value, 'v', 2000);
    value[2000] = '\0';
    snprintf(line, sizeof(line), "cmd=put kvsname=x key=k value=%s\n", value);
    hh_send1(h, 0, line);
    EXPECT(h, 0, hh_reply, "put_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "msg"), "value_too_long"));
    get(h, 0, "k");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "-1");
    hh_free(h);
}

/* A put is accepted only if its get can return it: the get_result line
 * ("cmd=get_result rc=0 msg=success value=...\n", 39 bytes around the
 * value) must fit MPICH's 1023 bytes, so 984 bytes is the most a value
 * can have, below vallen_max (1024). */
static void test_put_accepts_only_values_a_get_can_return(void)
{
    hh_t *h = pmi1_job(1);
    char line[1200], value[1001];

    memset(value, 'v', 1000);
    value[1000] = '\0';
    snprintf(line, sizeof(line), "cmd=put kvsname=x key=big value=%s\n", value);
    hh_send1(h, 0, line);
    EXPECT(h, 0, hh_reply, "put_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "-1");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "msg"), "value_too_long"));
    get(h, 0, "big");
    CU_ASSERT_PTR_NOT_NULL(strstr(hh_get(hh_reply, "msg"), "not_found"));
    value[984] = '\0';
    put(h, 0, "edge", value);
    get(h, 0, "edge");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "value"), value);
    CU_ASSERT(hh_reply->len <= 1023);
    value[984] = 'v';
    value[985] = '\0';
    snprintf(line, sizeof(line), "cmd=put kvsname=x key=over value=%s\n", value);
    hh_send1(h, 0, line);
    EXPECT(h, 0, hh_reply, "put_result");
    CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "-1");
    hh_free(h);
}

static void test_malformed_message_is_refused_and_conn_stays(void)
{
    hh_t *h = pmi1_job(1);

    hh_send1(h, 0, "cmd=put key\n"); /* a token without '=' */
    EXPECT(h, 0, hh_reply, "put_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 0, "cmd=get kvsname=x\n"); /* no key */
    EXPECT(h, 0, hh_reply, "get_result");
    CU_ASSERT_STRING_NOT_EQUAL(hh_get(hh_reply, "rc"), "0");
    hh_send1(h, 0, "cmd=get_maxes\n");
    EXPECT(h, 0, hh_reply, "maxes");
    hh_free(h);
}

static void test_pipelined_and_split_requests_are_answered_in_order(void)
{
    hh_t *h = pmi1_job(1);

    hh_send1(h, 0, "cmd=get_maxes\ncmd=get_appnum\ncmd=get_universe_size\n");
    EXPECT(h, 0, hh_reply, "maxes");
    EXPECT(h, 0, hh_reply, "appnum");
    EXPECT(h, 0, hh_reply, "universe_size");
    hh_send1(h, 0, "cmd=get_my");
    CU_ASSERT(hh_quiet(h, 0));
    hh_send1(h, 0, "_kvsname\n");
    EXPECT(h, 0, hh_reply, "my_kvsname");
    hh_free(h);
}

static const pg_cunit_test_t handshake_tests[] = {
    { "init 1.1 is answered 1.1 rc=0", test_init_1_1_is_answered_1_1_rc0 },
    { "init tells the host who reads the segment", test_init_tells_the_host_who_reads_the_segment },
    { "init 1.0 is served as 1.1", test_init_1_0_is_served_as_1_1 },
    { "unsupported version: rc!=0, connection stays", test_unsupported_version_gets_nonzero_rc_and_conn_stays },
    { "init 2.0 switches the connection to PMI-2", test_init_2_0_switches_the_connection_to_pmi2 },
    { "initack answers initack + 3 set lines", test_initack_answers_four_lines_with_size_and_rank },
    { "maxes are 256/64/1024", test_maxes_are_256_64_1024 },
    { "appnum, kvsname; universe size = job size", test_appnum_kvsname_and_universe_size_is_job_size },
    { NULL, NULL },
};

static const pg_cunit_test_t kvs_tests[] = {
    { "own put visible at once, others after barrier", test_own_put_is_visible_at_once_others_after_barrier },
    { "put twice keeps last; empty and '=' values", test_put_twice_keeps_the_last_value_and_empty_values_work },
    { "get of a missing key fails at once, value= last", test_get_missing_fails_at_once_with_value_last },
    { "get_result keeps value= last", test_get_result_keeps_value_last },
    { "PMI_process_mapping, universeSize, PMI_dead_processes", test_get_process_mapping_and_universe_size_from_job },
    { "getbyidx: no_more_keyvals", test_getbyidx_reports_no_more_keyvals },
    { "barrier_out waits for the last rank", test_barrier_out_waits_for_the_last_rank },
    { "no keyval_cache unless asked (MPICH 4.0)", test_no_keyval_cache_unless_the_client_asks },
    { "keyval_cache: <=1023 bytes, <=64 tokens a line", test_keyval_cache_lines_respect_line_and_token_limits },
    { NULL, NULL },
};

static const pg_cunit_test_t life_tests[] = {
    { "finalize acks and closes", test_finalize_acks_and_closes },
    { "abort: exit code, no reply", test_abort_ends_the_job_with_its_exitcode_and_no_reply },
    { "abort: the PMIx ranks are told", test_abort_tells_the_pmix_ranks },
    { "name service: publish, duplicate, lookup, unpublish", test_name_service_publish_duplicate_lookup_unpublish },
    { NULL, NULL },
};

static const pg_cunit_test_t bad_input_tests[] = {
    { "spawn, create_kvs, destroy_kvs refused clearly", test_spawn_and_legacy_kvs_commands_are_refused_clearly },
    { "spawn: MPICH 4.0's blocks make one request, one reply", test_spawn_blocks_make_one_request_and_one_reply },
    { "spawn: blocks in one write, preputs once", test_spawn_blocks_in_one_write_preput_once },
    { "spawn: a failure carries errcodes", test_spawn_failure_carries_errcodes },
    { "spawn: bad blocks refused, next spawn afresh", test_spawn_bad_blocks_are_refused },
    { "unknown command: error reply, connection stays", test_unknown_command_gets_an_error_and_conn_stays },
    { "100-char key: key_too_long, connection stays", test_put_with_100_char_key_is_refused_and_conn_stays },
    { "over-long value refused, connection stays", test_put_with_overlong_value_is_refused_and_conn_stays },
    { "put accepts only what a get can return (<= 984 bytes)", test_put_accepts_only_values_a_get_can_return },
    { "malformed message refused, connection stays", test_malformed_message_is_refused_and_conn_stays },
    { "pipelined and split requests", test_pipelined_and_split_requests_are_answered_in_order },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "pmi1 handshake and job facts", handshake_tests, hh_suite_init, hh_suite_cleanup },
    { "pmi1 key-value space and barrier", kvs_tests, hh_suite_init, hh_suite_cleanup },
    { "pmi1 life cycle and name service", life_tests, hh_suite_init, hh_suite_cleanup },
    { "pmi1 bad input", bad_input_tests, hh_suite_init, hh_suite_cleanup },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
