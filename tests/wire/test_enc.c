/*
 * test_enc: the encoders write exactly what the peers expect (byte for byte
 * where docs/wire-protocol.md says which form pmigate sends), escape and unescape round trip,
 * nothing partial is ever left in the buffer, and everything encoded parses
 * back to the same command and tokens.
 */
#include <event2/buffer.h>
#include <limits.h>

#include "tests/pg_cunit.h"
#include "tests/wire/wire_fixture.h"
#include "wire/pg_enc.h"
#include "wire/pg_enc_event.h"

static char buf[8192];
static pg_enc_t e;
static pg_msg_t msg;

static int setup(void)
{
    pg_msg_init(&msg);
    return 0;
}

static int teardown(void)
{
    pg_msg_release(&msg);
    return 0;
}

static void reset(void)
{
    pg_enc_init(&e, buf, sizeof buf);
}

/* The buffer holds exactly want. */
static int holds(const char *want)
{
    size_t n = strlen(want);
    if (e.len != n || memcmp(e.buf, want, n) != 0) {
        fprintf(stderr, "\n  got  '%.*s'\n  want '%s'\n", (int)e.len, e.buf, want);
        return 0;
    }
    return 1;
}

/* Frames and parses the single message in the buffer into msg. */
static int parse_back(void)
{
    pg_frame_t f;
    static char copy[sizeof buf];
    memcpy(copy, e.buf, e.len);
    if (pg_frame_next(copy, e.len, &f) != PG_WIRE_OK || f.consumed != e.len)
        return -1;
    return pg_parse_frame(copy, &f, &msg);
}

static void test_pmi2_responses_use_the_recommended_forms(void)
{
    pg_reply_t ok = { 0, NULL, { NULL, 0 } };
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi2_fullinit_response(&e, &ok, 1, 4, 0, NULL, false, false), 0);
    CU_ASSERT(holds("   113cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=4;"
                    "appnum=0;debugged=FALSE;pmiverbose=FALSE;"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi2_name_lookup_response(&e, &ok, true, "tag#0$port#7$"), 0);
    CU_ASSERT(holds("    80cmd=name-lookup-response;rc=0;found=TRUE;port=tag#0$port#7$;value=tag#0$port#7$;"));
    reset();
    pg_str_t v = { "(vector,(0,1,1))", 16 };
    pg_reply_t threaded = { 0, NULL, { "thrid=0xdeadbeef", 16 } };
    CU_ASSERT_EQUAL(pg_enc_pmi2_found_response(&e, PG_CMD_PMI2_KVS_GET_RESPONSE, &threaded, true, v), 0);
    CU_ASSERT(holds("    77cmd=kvs-get-response;thrid=0xdeadbeef;rc=0;found=TRUE;value=(vector,(0,1,1));"));
    reset();
    pg_reply_t fail = { 1, "duplicate service", { NULL, 0 } };
    CU_ASSERT_EQUAL(pg_enc_pmi2_response(&e, PG_CMD_PMI2_NAME_PUBLISH_RESPONSE, &fail), 0);
    CU_ASSERT(holds("    56cmd=name-publish-response;rc=1;errmsg=duplicate service;"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi2_job_connect_response(&e, &ok), 0);
    CU_ASSERT(holds("    44cmd=job-connect-response;rc=0;kvscopy=FALSE;"));
}

static void test_pmi1_responses_use_the_recommended_forms(void)
{
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi1_get_result(&e, "2F64"), 0);
    CU_ASSERT(holds("cmd=get_result rc=0 msg=success value=2F64\n"));
    reset();
    pg_str_t key = { "k0", 2 };
    CU_ASSERT_EQUAL(pg_enc_pmi1_get_result_missing(&e, key), 0);
    CU_ASSERT(holds("cmd=get_result rc=-1 msg=key_k0_not_found value=unknown\n"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi1_maxes(&e), 0);
    CU_ASSERT(holds("cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi1_response_to_init(&e, 0, 1, 1), 0);
    CU_ASSERT(holds("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi1_lookup_result(&e, 0, NULL, "tag#0$port#1$"), 0);
    CU_ASSERT(holds("cmd=lookup_result port=tag#0$port#1$ info=ok rc=0 msg=success\n"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi1_initack(&e, 2, 0, 0), 0);
    CU_ASSERT(holds("cmd=initack\ncmd=set size=2\ncmd=set rank=0\ncmd=set debug=0\n"));
    reset();
    int errs[] = { 0, 0, -1 };
    CU_ASSERT_EQUAL(pg_enc_pmi1_spawn_result(&e, 0, "kvs_1", errs, 3), 0);
    CU_ASSERT(holds("cmd=spawn_result rc=0 jobid=kvs_1 errcodes=0,0,-1\n"));
}

static void test_requests_match_what_real_clients_send(void)
{
    reset(); /* libpmi2's own bytes, except the length is right-aligned */
    CU_ASSERT_EQUAL(pg_enc_pmi2_fullinit(&e, NULL, 0, false, false), 0);
    CU_ASSERT(holds("    38cmd=fullinit;pmirank=0;threaded=FALSE;"));
    reset(); /* pmigate's libpmi2 reading the key segment tells pmigate */
    CU_ASSERT_EQUAL(pg_enc_pmi2_fullinit(&e, NULL, 0, false, true), 0);
    CU_ASSERT(holds("    54cmd=fullinit;pmirank=0;threaded=FALSE;pmigate_shm=yes;"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi2_kvs_get(&e, NULL, "kvs_18074_0_2116934929_vm", 1, "key1"), 0);
    CU_ASSERT(holds("    61cmd=kvs-get;jobid=kvs_18074_0_2116934929_vm;srcid=1;key=key1;"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi2_name_publish(&e, NULL, "pg-svc", "tag#0$port#7$"), 0);
    CU_ASSERT(holds("    63cmd=name-publish;name=pg-svc;port=tag#0$port#7$;infokeycount=0;"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi1_init(&e, 1, 1), 0);
    CU_ASSERT(holds("cmd=init pmi_version=1 pmi_subversion=1\n"));
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi1_put(&e, "kvs_1", "-bcast-1-0", "2F64"), 0);
    CU_ASSERT(holds("cmd=put kvsname=kvs_1 key=-bcast-1-0 value=2F64\n"));
    reset();
    const char *argv[] = { "probe6.py", "a b c" };
    pg_spawn_cmd_t cmd = { "python3", 2, 2, argv, 0, NULL };
    pg_kv_t pre = { "PARENT_ROOT_PORT_NAME", "tag#0$port#99$" };
    CU_ASSERT_EQUAL(pg_enc_pmi1_spawn(&e, &cmd, 1, 1, 1, &pre), 0);
    CU_ASSERT(holds("mcmd=spawn\nnprocs=2\nexecname=python3\ntotspawns=1\nspawnssofar=1\nargcnt=2\n"
                    "arg1=probe6.py\narg2=a b c\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\n"
                    "preput_val_0=tag#0$port#99$\ninfo_num=0\nendcmd\n"));
    CU_ASSERT_EQUAL(parse_back(), PG_WIRE_OK);
    CU_ASSERT_EQUAL(msg.cmd, PG_CMD_PMI1_SPAWN);
    CU_ASSERT(wire_has(&msg, "arg2", "a b c"));
}

static void test_pmi2_semicolons_round_trip_through_escaping(void)
{
    const char *values[] = { "val;with;semis", ";", ";;", "a;", ";a", "x;;;y", "", "no semi",
                             "=;=;", "line\nbreak;" };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        reset();
        CU_ASSERT_EQUAL_FATAL(pg_enc_pmi2_kvs_put(&e, NULL, "key0", values[i]), 0);
        CU_ASSERT_EQUAL(parse_back(), PG_WIRE_OK);
        CU_ASSERT(wire_has(&msg, "value", values[i]));
        CU_ASSERT(wire_has(&msg, "key", "key0"));
    }
    reset();
    pg_enc_pmi2_kvs_put(&e, NULL, "k", "a;b");
    CU_ASSERT(holds("    29cmd=kvs-put;key=k;value=a;;b;")); /* what libpmi2 sends */
}

static void test_unrepresentable_values_are_refused(void)
{
    reset();
    CU_ASSERT_EQUAL(pg_enc_pmi1_put(&e, "kvs", "k", "a b"), PG_WIRE_EINVAL);
    CU_ASSERT_EQUAL(pg_enc_pmi1_put(&e, "kvs", "k", "new\nline"), PG_WIRE_EINVAL);
    /* token keys: no separators, not empty */
    const char *pmi1_keys[] = { "k=1", "", "a b", "a\nb" };
    for (size_t i = 0; i < 4; i++) {
        pg_enc_begin(&e, PG_CMD_PMI1_PUT);
        pg_enc_add(&e, pmi1_keys[i], "v");
        CU_ASSERT_EQUAL(pg_enc_end(&e), PG_WIRE_EINVAL);
    }
    pg_enc_begin(&e, PG_CMD_PMI2_KVS_PUT);
    pg_enc_add(&e, "k;", "v");
    CU_ASSERT_EQUAL(pg_enc_end(&e), PG_WIRE_EINVAL);
    pg_enc_add(&e, "k", "v"); /* outside begin/end */
    CU_ASSERT_EQUAL(pg_enc_end(&e), PG_WIRE_EINVAL);
    CU_ASSERT_EQUAL(pg_enc_pmi2_kvs_put(&e, NULL, "k", NULL), PG_WIRE_EINVAL);
    CU_ASSERT_EQUAL(pg_enc_pmi1_simple(&e, PG_CMD_PMI2_KVS_FENCE), PG_WIRE_EINVAL);
    CU_ASSERT_EQUAL(pg_enc_pmi2_request(&e, PG_CMD_UNKNOWN, NULL), PG_WIRE_EINVAL);
    CU_ASSERT_EQUAL(e.len, 0);
    const char *argv[] = { "two\nlines" };
    pg_spawn_cmd_t cmd = { "x", 1, 1, argv, 0, NULL };
    CU_ASSERT_EQUAL(pg_enc_pmi1_spawn(&e, &cmd, 1, 1, 0, NULL), PG_WIRE_EINVAL);
    CU_ASSERT_EQUAL(e.len, 0);
}

/* Encodes one token key=<val> (val.len bytes, NULs included) after
 * pg_enc_begin(cmd) or pg_enc_begin_mcmd(cmd); returns pg_enc_end's code. */
static int encode_token(pg_cmd_t cmd, bool mcmd, const char *key, pg_str_t val)
{
    reset();
    if (mcmd)
        pg_enc_begin_mcmd(&e, cmd);
    else
        pg_enc_begin(&e, cmd);
    pg_enc_add_str(&e, key, val);
    return pg_enc_end(&e);
}

/* "abc" with byte c at index where: 0 start, 1 middle, 2 end. */
static void key_with_byte_at(char c, int where, char key[4])
{
    memcpy(key, "abc", 4);
    key[where] = c;
}

static void test_keys_refuse_exactly_the_bytes_their_framing_reserves(void)
{
    static const struct {
        pg_cmd_t cmd;
        bool mcmd;
        const char *reserved; /* bytes refused in a key */
        const char *allowed;  /* reserved elsewhere, fine here */
    } framings[] = {
        { PG_CMD_PMI2_KVS_PUT, false, ";=\n", " " },
        { PG_CMD_PMI1_PUT, false, " =\n", ";" },
        { PG_CMD_PMI1_SPAWN, true, "=\n", " ;" },
    };
    pg_str_t v = { "v", 1 };
    char key[4];

    for (size_t f = 0; f < sizeof framings / sizeof framings[0]; f++) {
        for (const char *c = framings[f].reserved; *c != '\0'; c++)
            for (int where = 0; where < 3; where++) {
                key_with_byte_at(*c, where, key);
                CU_ASSERT_EQUAL(encode_token(framings[f].cmd, framings[f].mcmd, key, v), PG_WIRE_EINVAL);
                CU_ASSERT_EQUAL(e.len, 0);
            }
        for (const char *c = framings[f].allowed; *c != '\0'; c++)
            for (int where = 0; where < 3; where++) {
                key_with_byte_at(*c, where, key);
                CU_ASSERT_EQUAL(encode_token(framings[f].cmd, framings[f].mcmd, key, v), 0);
            }
        CU_ASSERT_EQUAL(encode_token(framings[f].cmd, framings[f].mcmd, "", v), PG_WIRE_EINVAL);
        CU_ASSERT_EQUAL(encode_token(framings[f].cmd, framings[f].mcmd, NULL, v), PG_WIRE_EINVAL);
    }
    /* a key of every byte no framing reserves passes everywhere */
    char all[256];
    size_t n = 0;
    for (int b = 1; b < 256; b++)
        if (b != ' ' && b != '=' && b != ';' && b != '\n')
            all[n++] = (char)b;
    all[n] = '\0';
    CU_ASSERT_EQUAL(encode_token(PG_CMD_PMI2_KVS_PUT, false, all, v), 0);
    CU_ASSERT_EQUAL(encode_token(PG_CMD_PMI1_PUT, false, all, v), 0);
    CU_ASSERT_EQUAL(encode_token(PG_CMD_PMI1_SPAWN, true, all, v), 0);
}

static void test_values_refuse_nul_and_pmi1_separators_anywhere(void)
{
    static const struct {
        pg_cmd_t cmd;
        bool mcmd;
        const char *refused; /* besides NUL */
        const char *carried;
    } framings[] = {
        { PG_CMD_PMI2_KVS_PUT, false, "", " =\n\t" },
        { PG_CMD_PMI1_PUT, false, " \n", "=;\t" },
        { PG_CMD_PMI1_SPAWN, true, "\n", " =;\t" },
    };
    char val[3];

    for (size_t f = 0; f < sizeof framings / sizeof framings[0]; f++)
        for (int where = 0; where < 3; where++) {
            memcpy(val, "abc", 3);
            val[where] = '\0';
            CU_ASSERT_EQUAL(encode_token(framings[f].cmd, framings[f].mcmd, "k", (pg_str_t){ val, 3 }),
                            PG_WIRE_EINVAL);
            for (const char *c = framings[f].refused; *c != '\0'; c++) {
                memcpy(val, "abc", 3);
                val[where] = *c;
                CU_ASSERT_EQUAL(encode_token(framings[f].cmd, framings[f].mcmd, "k",
                                             (pg_str_t){ val, 3 }),
                                PG_WIRE_EINVAL);
                CU_ASSERT_EQUAL(e.len, 0);
            }
            for (const char *c = framings[f].carried; *c != '\0'; c++) {
                memcpy(val, "abc", 3);
                val[where] = *c;
                CU_ASSERT_EQUAL(encode_token(framings[f].cmd, framings[f].mcmd, "k",
                                             (pg_str_t){ val, 3 }),
                                0);
            }
        }
}

static void test_pmi2_value_semicolons_double_at_start_end_and_throughout(void)
{
    CU_ASSERT_EQUAL(encode_token(PG_CMD_PMI2_KVS_PUT, false, "k", (pg_str_t){ ";ab", 3 }), 0);
    CU_ASSERT(holds("    19cmd=kvs-put;k=;;ab;"));
    CU_ASSERT_EQUAL(encode_token(PG_CMD_PMI2_KVS_PUT, false, "k", (pg_str_t){ "ab;", 3 }), 0);
    CU_ASSERT(holds("    19cmd=kvs-put;k=ab;;;"));
    CU_ASSERT_EQUAL(encode_token(PG_CMD_PMI2_KVS_PUT, false, "k", (pg_str_t){ ";;;;", 4 }), 0);
    CU_ASSERT(holds("    23cmd=kvs-put;k=;;;;;;;;;"));
    CU_ASSERT_EQUAL(encode_token(PG_CMD_PMI2_KVS_PUT, false, "k", (pg_str_t){ "", 0 }), 0);
    CU_ASSERT(holds("    15cmd=kvs-put;k=;"));
    /* a long all-';' value, as long as a value may be, round trips */
    char semis[PG_PMI2_VALLEN_MAX + 1];
    memset(semis, ';', PG_PMI2_VALLEN_MAX);
    semis[PG_PMI2_VALLEN_MAX] = '\0';
    reset();
    CU_ASSERT_EQUAL_FATAL(pg_enc_pmi2_kvs_put(&e, NULL, "key0", semis), 0);
    CU_ASSERT_EQUAL(parse_back(), PG_WIRE_OK);
    CU_ASSERT(wire_has(&msg, "value", semis));
}

static void test_numbers_and_booleans_are_written_as_clients_read_them(void)
{
    reset();
    pg_enc_begin(&e, PG_CMD_PMI2_KVS_PUT);
    pg_enc_add_long(&e, "a", 0);
    pg_enc_add_long(&e, "b", -1);
    pg_enc_add_long(&e, "c", LONG_MIN);
    pg_enc_add_long(&e, "d", LONG_MAX);
    pg_enc_add_bool(&e, "t", true);
    pg_enc_add_bool(&e, "f", false);
    CU_ASSERT_EQUAL(pg_enc_end(&e), 0);
    CU_ASSERT(holds("    81cmd=kvs-put;a=0;b=-1;c=-9223372036854775808;d=9223372036854775807;"
                    "t=TRUE;f=FALSE;"));
    /* a number under a key the framing cannot carry is refused like any value */
    reset();
    pg_enc_begin(&e, PG_CMD_PMI1_PUT);
    pg_enc_add_long(&e, "a b", 1);
    CU_ASSERT_EQUAL(pg_enc_end(&e), PG_WIRE_EINVAL);
    pg_enc_add_bool(&e, "k", true); /* outside begin/end */
    CU_ASSERT_EQUAL(pg_enc_end(&e), PG_WIRE_EINVAL);
    CU_ASSERT_EQUAL(e.len, 0);
}

static void test_overflow_never_leaves_a_partial_message(void)
{
    char small[40];
    pg_enc_init(&e, small, sizeof small);
    CU_ASSERT_EQUAL(pg_enc_pmi1_simple(&e, PG_CMD_PMI1_BARRIER_IN), 0);
    CU_ASSERT_EQUAL(e.len, 15);
    CU_ASSERT_EQUAL(pg_enc_pmi1_get(&e, "kvs_22577_0_856301159_vm", "PMI_process_mapping"),
                    PG_WIRE_EOVERFLOW);
    CU_ASSERT_EQUAL(e.len, 15); /* the first message is intact, nothing after it */
    CU_ASSERT_EQUAL(pg_enc_pmi1_simple(&e, PG_CMD_PMI1_FINALIZE), 0);
    CU_ASSERT_EQUAL(e.len, 28);
    CU_ASSERT_EQUAL(memcmp(small, "cmd=barrier_in\ncmd=finalize\n", 28), 0);
    CU_ASSERT_EQUAL(pg_enc_pmi1_initack(&e, 2, 0, 0), PG_WIRE_EOVERFLOW);
    CU_ASSERT_EQUAL(e.len, 28);
    /* every size up to the message's own: refused whole */
    for (size_t cap = 0; cap < 43; cap++) {
        pg_enc_init(&e, buf, cap);
        CU_ASSERT_EQUAL(pg_enc_pmi2_kvs_put(&e, NULL, "key0", "val;with"), PG_WIRE_EOVERFLOW);
        CU_ASSERT_EQUAL(e.len, 0);
    }
    pg_enc_init(&e, buf, 43);
    CU_ASSERT_EQUAL(pg_enc_pmi2_kvs_put(&e, NULL, "key0", "val;with"), 0);
    CU_ASSERT_EQUAL(e.len, 43); /* "    37cmd=kvs-put;key=key0;value=val;;with;" */
}

static void test_every_typed_encoder_parses_back_to_its_command(void)
{
    pg_reply_t ok = { 0, NULL, { NULL, 0 } };
    pg_str_t v = { "v", 1 };
    const char *argv[] = { "a" };
    pg_spawn_cmd_t sc = { "exe", 1, 1, argv, 0, NULL };
    int errs[] = { 0 };
#define CASE(call, want)                              \
    do {                                              \
        reset();                                      \
        CU_ASSERT_EQUAL(call, 0);                     \
        CU_ASSERT_EQUAL(parse_back(), PG_WIRE_OK);    \
        CU_ASSERT_EQUAL(msg.cmd, want);               \
    } while (0)
    CASE(pg_enc_pmi1_response_to_init(&e, 0, 2, 0), PG_CMD_PMI1_RESPONSE_TO_INIT);
    CASE(pg_enc_pmi1_appnum(&e, 0), PG_CMD_PMI1_APPNUM);
    CASE(pg_enc_pmi1_my_kvsname(&e, "kvs"), PG_CMD_PMI1_MY_KVSNAME);
    CASE(pg_enc_pmi1_universe_size(&e, 4), PG_CMD_PMI1_UNIVERSE_SIZE);
    CASE(pg_enc_pmi1_put_result(&e, 0, "success"), PG_CMD_PMI1_PUT_RESULT);
    CASE(pg_enc_pmi1_barrier_out(&e), PG_CMD_PMI1_BARRIER_OUT);
    CASE(pg_enc_pmi1_finalize_ack(&e), PG_CMD_PMI1_FINALIZE_ACK);
    CASE(pg_enc_pmi1_publish_result(&e, 1, "key_already_present"), PG_CMD_PMI1_PUBLISH_RESULT);
    CASE(pg_enc_pmi1_unpublish_result(&e, 0, NULL), PG_CMD_PMI1_UNPUBLISH_RESULT);
    CASE(pg_enc_pmi1_singinit(&e), PG_CMD_PMI1_SINGINIT);
    CASE(pg_enc_pmi1_singinit_info(&e, true, false, "kvs"), PG_CMD_PMI1_SINGINIT_INFO);
    CASE(pg_enc_pmi1_initack_request(&e, 3), PG_CMD_PMI1_INITACK);
    CASE(pg_enc_pmi1_abort(&e, 7, "abort"), PG_CMD_PMI1_ABORT);
    CASE(pg_enc_pmi1_publish_name(&e, "svc", "p"), PG_CMD_PMI1_PUBLISH_NAME);
    CASE(pg_enc_pmi1_unpublish_name(&e, "svc"), PG_CMD_PMI1_UNPUBLISH_NAME);
    CASE(pg_enc_pmi1_lookup_name(&e, "svc"), PG_CMD_PMI1_LOOKUP_NAME);
    CASE(pg_enc_pmi2_response(&e, PG_CMD_PMI2_KVS_FENCE_RESPONSE, &ok), PG_CMD_PMI2_KVS_FENCE_RESPONSE);
    CASE(pg_enc_pmi2_job_getid_response(&e, &ok, "kvs"), PG_CMD_PMI2_JOB_GETID_RESPONSE);
    CASE(pg_enc_pmi2_found_response(&e, PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE, &ok, false, v),
         PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE);
    CASE(pg_enc_pmi2_spawn_response(&e, &ok, "kvs_1", errs, 1), PG_CMD_PMI2_SPAWN_RESPONSE);
    CASE(pg_enc_pmi2_ring_response(&e, &ok, 1, "l", "r"), PG_CMD_PMI2_RING_RESPONSE);
    CASE(pg_enc_pmi2_request(&e, PG_CMD_PMI2_KVS_FENCE, "0x1"), PG_CMD_PMI2_KVS_FENCE);
    CASE(pg_enc_pmi2_abort(&e, true, "bye; now"), PG_CMD_PMI2_ABORT);
    CASE(pg_enc_pmi2_job_connect(&e, NULL, "kvs"), PG_CMD_PMI2_JOB_CONNECT);
    CASE(pg_enc_pmi2_job_disconnect(&e, NULL, "kvs"), PG_CMD_PMI2_JOB_DISCONNECT);
    CASE(pg_enc_pmi2_info_putnodeattr(&e, NULL, "k", "v"), PG_CMD_PMI2_INFO_PUTNODEATTR);
    CASE(pg_enc_pmi2_info_getnodeattr(&e, NULL, "k", true), PG_CMD_PMI2_INFO_GETNODEATTR);
    CASE(pg_enc_pmi2_info_getjobattr(&e, NULL, "universeSize"), PG_CMD_PMI2_INFO_GETJOBATTR);
    CASE(pg_enc_pmi2_name_unpublish(&e, NULL, "svc"), PG_CMD_PMI2_NAME_UNPUBLISH);
    CASE(pg_enc_pmi2_name_lookup(&e, NULL, "svc"), PG_CMD_PMI2_NAME_LOOKUP);
    CASE(pg_enc_pmi2_spawn(&e, NULL, 1, &sc, 0, NULL), PG_CMD_PMI2_SPAWN);
    CASE(pg_enc_pmi2_ring(&e, NULL, 1, "l", "r"), PG_CMD_PMI2_RING);
#undef CASE
    CU_ASSERT(wire_has(&msg, "ring-left", "l"));
}

static void test_evbuffer_adaptor_appends_the_complete_messages(void)
{
    struct evbuffer *out = evbuffer_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    reset();
    pg_enc_pmi1_barrier_out(&e);
    pg_enc_pmi1_finalize_ack(&e);
    CU_ASSERT_EQUAL(pg_enc_evbuffer_add(out, &e), 0);
    CU_ASSERT_EQUAL(evbuffer_get_length(out), e.len);
    CU_ASSERT_EQUAL(memcmp(evbuffer_pullup(out, -1), "cmd=barrier_out rc=0\ncmd=finalize_ack rc=0\n", e.len), 0);
    evbuffer_free(out);
}

static const pg_cunit_test_t form_tests[] = {
    { "PMI-2 responses use the recommended forms", test_pmi2_responses_use_the_recommended_forms },
    { "PMI-1 responses use the recommended forms", test_pmi1_responses_use_the_recommended_forms },
    { "requests match what real clients send", test_requests_match_what_real_clients_send },
    { "every typed encoder parses back to its command", test_every_typed_encoder_parses_back_to_its_command },
    { NULL, NULL },
};

static const pg_cunit_test_t safety_tests[] = {
    { "PMI-2 ';' round trips through escaping", test_pmi2_semicolons_round_trip_through_escaping },
    { "unrepresentable values are refused", test_unrepresentable_values_are_refused },
    { "keys refuse exactly the bytes their framing reserves",
      test_keys_refuse_exactly_the_bytes_their_framing_reserves },
    { "values refuse NUL and PMI-1 separators anywhere",
      test_values_refuse_nul_and_pmi1_separators_anywhere },
    { "PMI-2 value ';' doubles at start, end and throughout",
      test_pmi2_value_semicolons_double_at_start_end_and_throughout },
    { "numbers and booleans are written as clients read them",
      test_numbers_and_booleans_are_written_as_clients_read_them },
    { "overflow never leaves a partial message", test_overflow_never_leaves_a_partial_message },
    { "evbuffer adaptor appends the complete messages", test_evbuffer_adaptor_appends_the_complete_messages },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "enc: wire forms", form_tests, setup, teardown },
    { "enc: escaping and buffers", safety_tests, setup, teardown },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
