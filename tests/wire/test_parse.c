/*
 * test_parse: the PMI-1 and PMI-2 machines.  Every name in pg_cmd.def maps
 * to its enum; the quirks real peers send are accepted (docs/wire-protocol.md,
 * "What pmigate tolerates"); everything else is rejected with a code and a reason; each limit
 * gives its own code while still delivering the command and its tokens.
 */
#include "tests/pg_cunit.h"
#include "tests/wire/wire_fixture.h"

static wire_parsed_t p; /* large: keep it off the stack */

static const struct {
    pg_cmd_t cmd;
    pg_proto_t proto;
    const char *name;
} def_rows[] = {
#define PG_CMD(e, proto, dir, name) { PG_CMD_##e, PG_PROTO_##proto, name },
#include "wire/pg_cmd.def"
#undef PG_CMD
};

static void test_every_def_name_maps_to_its_enum(void)
{
    char text[128];
    for (size_t i = 0; i < sizeof def_rows / sizeof def_rows[0]; i++) {
        int pmi1 = def_rows[i].proto == PG_PROTO_PMI1;
        /* once alone, once followed by a token: the name ends at ' '/';' or at the end */
        for (int with_token = 0; with_token <= 1; with_token++) {
            snprintf(text, sizeof text, pmi1 ? "cmd=%s%s" : "cmd=%s;%s", def_rows[i].name,
                     with_token ? (pmi1 ? " k=v" : "k=v;") : "");
            CU_ASSERT_EQUAL(wire_parse(&p, pmi1 ? pg_parse_pmi1 : pg_parse_pmi2, text), PG_WIRE_OK);
            if (p.msg.cmd != def_rows[i].cmd)
                fprintf(stderr, "'%s' gave %s\n", text, pg_cmd_enum_name(p.msg.cmd));
            CU_ASSERT_EQUAL(p.msg.cmd, def_rows[i].cmd);
            CU_ASSERT_EQUAL(p.msg.proto, def_rows[i].proto);
            CU_ASSERT(pg_str_eq(p.msg.name, def_rows[i].name));
            CU_ASSERT_STRING_EQUAL(pg_cmd_name(def_rows[i].cmd), def_rows[i].name);
        }
    }
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1_mcmd, "mcmd=spawn\nnprocs=1\n"), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI1_SPAWN);
}

static void test_unknown_and_prefix_names_are_unknown_but_well_formed(void)
{
    const char *pmi1[] = { "cmd=get_maxesx", "cmd=ge", "cmd=bogus_command foo=bar", "cmd=kvs-get" };
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, pmi1[i]), PG_WIRE_OK);
        CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_UNKNOWN);
    }
    CU_ASSERT(pg_str_eq(p.msg.name, "kvs-get"));
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=get_maxes;"), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_UNKNOWN); /* a PMI-1 name in PMI-2 framing */
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-getall;key=x;"), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_UNKNOWN);
    CU_ASSERT(pg_str_eq(p.msg.name, "kvs-getall"));
}

static void test_pmi1_hydra_found_true_after_value_is_its_own_token(void)
{
    /* hydra 4.1-4.2 (pmodels/mpich#7050) */
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, "cmd=get_result rc=0 value=X found=TRUE"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "value", "X"));
    CU_ASSERT(wire_has(&p.msg, "found", "TRUE"));
    CU_ASSERT_EQUAL(p.msg.ntokens, 3);
}

static void test_pmi1_value_last_runs_to_end_of_line(void)
{
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, "cmd=put kvsname=k key=x value=a b  c  "), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "value", "a b  c"));
    CU_ASSERT_EQUAL(p.msg.ntokens, 3);
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, "cmd=get_result rc=0 value=x=y"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "value", "x=y"));
}

static void test_pmi1_spaces_and_empty_values_are_tolerated(void)
{
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, "cmd=put   kvsname=k  key=x value= "), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.ntokens, 3);
    CU_ASSERT(wire_has(&p.msg, "value", ""));
    CU_ASSERT(wire_has(&p.msg, "key", "x"));
    /* hydra's keyval_cache ends with a space */
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, "cmd=keyval_cache -bcast-1-0=2F6 "), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "-bcast-1-0", "2F6"));
    /* a single trailing '\n' is the line end, not part of the line */
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, "cmd=barrier_in\n"), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI1_BARRIER_IN);
}

static void test_pmi1_words_without_equals_only_in_responses(void)
{
    /* gforker: "msg=KVS <name> not found" */
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, "cmd=kvs_destroyed rc=-1 msg=KVS foo not found"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "msg", "KVS"));
    CU_ASSERT(wire_has(&p.msg, "foo", NULL));
    CU_ASSERT_EQUAL(p.msg.ntokens, 5);
    CU_ASSERT_EQUAL(pg_msg_get(&p.msg, "foo").ptr, NULL);
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1, "cmd=get kvsname=k oops key=x"), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI1_GET);
    CU_ASSERT_PTR_NOT_NULL(p.msg.err_reason);
}

static void test_pmi1_malformed_lines_are_rejected_with_a_reason(void)
{
    static const struct { const char *text; size_t len; } bad[] = {
        { "get_maxes", 9 }, { "cmd=", 4 }, { "cmd= x=1", 8 }, { "cmd=put =v", 10 },
        { "cmd=put k=v\nx=1", 15 }, { "cmd=put k=\0v", 11 }, { " cmd=get_maxes", 14 },
        { "", 0 }, { "cmd", 3 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(wire_parse_n(&p, pg_parse_pmi1, bad[i].text, bad[i].len), PG_WIRE_ESYNTAX);
        CU_ASSERT_PTR_NOT_NULL(p.msg.err_reason);
    }
    wire_parse(&p, pg_parse_pmi1, "cmd=");
    CU_ASSERT_STRING_EQUAL(p.msg.err_reason, "empty command name");
    wire_parse(&p, pg_parse_pmi1, "cmd=put =v");
    CU_ASSERT_STRING_EQUAL(p.msg.err_reason, "token with an empty key");
}

static void test_pmi1_mcmd_block_values_run_to_end_of_line(void)
{
    const char *block = "mcmd=spawn\nnprocs=2\nexecname=python3\ntotspawns=1\nspawnssofar=1\n"
                        "arg1=probe6.py\narg2=a b\tc=d\narg3=endcmd\nargcnt=3\npreput_num=0\n"
                        "info_num=0\n";
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1_mcmd, block), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI1_SPAWN);
    CU_ASSERT_EQUAL(p.msg.ntokens, 10);
    CU_ASSERT(wire_has(&p.msg, "arg2", "a b\tc=d"));
    CU_ASSERT(wire_has(&p.msg, "arg3", "endcmd"));
    /* with its endcmd line, as a caller holding the whole block might pass it */
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1_mcmd, "mcmd=spawn\nnprocs=1\nendcmd\n"), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.ntokens, 1);
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1_mcmd, "mcmd=spawn\nnprocs\n"), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1_mcmd, "mcmd=spawn\n\nnprocs=1\n"), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1_mcmd, "cmd=spawn\nnprocs=1\n"), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi1_mcmd, "mcmd=spawn\nendcmd\nx=1\n"), PG_WIRE_ESYNTAX);
}

static void test_pmi2_final_semicolon_optional_empty_values_ok(void)
{
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-fence"), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI2_KVS_FENCE);
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-get;key=k0"), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI2_KVS_GET);
    CU_ASSERT(wire_has(&p.msg, "key", "k0"));
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-put;key=empty;value=;"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "value", ""));
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=abort;isworld=TRUE;message=two\nlines=ok;"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "message", "two\nlines=ok"));
}

static void test_pmi2_double_semicolon_is_unescaped_in_place(void)
{
    /* Slurm libpmi2 writes ';' in a value as ";;" (captured, hydra_slurm_pmi2.cap) */
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-put;key=key0;value=val;;with;;semis;"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "value", "val;with;semis"));
    CU_ASSERT(wire_has(&p.msg, "key", "key0"));
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-put;value=;;;;;key=x;"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "value", ";;"));
    CU_ASSERT(wire_has(&p.msg, "key", "x"));
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-put;value=a;;;"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "value", "a;"));
}

static void test_pmi2_m40_off_by_6_junk_is_ignored(void)
{
    static const char *junk[] = { "\0\0\0\0\0\0", "\x7f\xff\0\x01\x61\x62", "abcdef", "a;b\0;;", "=x;y=\0" };
    char body[64];
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        memcpy(body, "cmd=kvs-get;key=k;", 18);
        memcpy(body + 18, junk[i], 6);
        CU_ASSERT_EQUAL(wire_parse_n(&p, pg_parse_pmi2, body, 24), PG_WIRE_OK);
        CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI2_KVS_GET);
        CU_ASSERT(wire_has(&p.msg, "key", "k"));
    }
    memcpy(body, "cmd=kvs-fence;\0\0\0\0\0\0", 20);
    CU_ASSERT_EQUAL(wire_parse_n(&p, pg_parse_pmi2, body, 20), PG_WIRE_OK);
    CU_ASSERT_EQUAL(p.msg.ntokens, 0);
    /* more than 6 bytes of junk is a malformed body */
    memcpy(body, "cmd=kvs-fence;\0\0\0\0\0\0\0", 21);
    CU_ASSERT_EQUAL(wire_parse_n(&p, pg_parse_pmi2, body, 21), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI2_KVS_FENCE);
}

static void test_pmi2_pairs_without_equals_only_in_responses(void)
{
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-get-response;rc=0;odd;found=FALSE;"), PG_WIRE_OK);
    CU_ASSERT(wire_has(&p.msg, "odd", NULL));
    CU_ASSERT(wire_has(&p.msg, "found", "FALSE"));
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-get;oddtoken;key=a-long-key;"), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI2_KVS_GET);
}

static void test_pmi2_malformed_bodies_are_rejected_with_a_reason(void)
{
    const char *bad[] = { "kvs-fence;", "cmd=;", "cmd=kvs-put;=v;key=a-long-key;", "cmd=x;;;key=1234567;",
                          "xcmd=kvs-fence;", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, bad[i]), PG_WIRE_ESYNTAX);
        CU_ASSERT_PTR_NOT_NULL(p.msg.err_reason);
    }
    wire_parse(&p, pg_parse_pmi2, "kvs-fence;");
    CU_ASSERT_STRING_EQUAL(p.msg.err_reason, "body does not start with cmd=");
}

/* "cmd=<cmd> <key>=<n x 'v'>" in PMI-1 or PMI-2 form. */
static int parse_with_long(pg_proto_t proto, const char *cmd, const char *key, size_t n)
{
    static char text[8192];
    int pmi1 = proto == PG_PROTO_PMI1;
    int at = snprintf(text, sizeof text, pmi1 ? "cmd=%s %s=" : "cmd=%s;%s=", cmd, key);
    memset(text + at, 'v', n);
    at += (int)n;
    at += snprintf(text + at, sizeof text - (size_t)at, pmi1 ? " last=1" : ";last=1;");
    return wire_parse_n(&p, pmi1 ? pg_parse_pmi1 : pg_parse_pmi2, text, (size_t)at);
}

static void test_each_limit_has_its_code_and_keeps_the_command(void)
{
    static const struct {
        pg_proto_t proto;
        const char *cmd, *key;
        size_t max;
        int err;
        pg_cmd_t want;
    } limits[] = {
        { PG_PROTO_PMI1, "put", "key", 64, PG_WIRE_EKEY_TOO_LONG, PG_CMD_PMI1_PUT },
        { PG_PROTO_PMI1, "put", "value", 1024, PG_WIRE_EVAL_TOO_LONG, PG_CMD_PMI1_PUT },
        { PG_PROTO_PMI1, "get", "kvsname", 256, PG_WIRE_EKVSNAME_TOO_LONG, PG_CMD_PMI1_GET },
        { PG_PROTO_PMI1, "publish_name", "service", 64, PG_WIRE_EKEY_TOO_LONG, PG_CMD_PMI1_PUBLISH_NAME },
        { PG_PROTO_PMI1, "publish_name", "port", 1024, PG_WIRE_EVAL_TOO_LONG, PG_CMD_PMI1_PUBLISH_NAME },
        { PG_PROTO_PMI2, "kvs-put", "key", 64, PG_WIRE_EKEY_TOO_LONG, PG_CMD_PMI2_KVS_PUT },
        { PG_PROTO_PMI2, "kvs-put", "value", 1024, PG_WIRE_EVAL_TOO_LONG, PG_CMD_PMI2_KVS_PUT },
        { PG_PROTO_PMI2, "info-putnodeattr", "anything", 1024, PG_WIRE_EVAL_TOO_LONG, PG_CMD_PMI2_INFO_PUTNODEATTR },
        { PG_PROTO_PMI2, "kvs-get", "jobid", 256, PG_WIRE_EKVSNAME_TOO_LONG, PG_CMD_PMI2_KVS_GET },
        { PG_PROTO_PMI2, "name-publish", "name", 64, PG_WIRE_EKEY_TOO_LONG, PG_CMD_PMI2_NAME_PUBLISH },
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        CU_ASSERT_EQUAL(parse_with_long(limits[i].proto, limits[i].cmd, limits[i].key, limits[i].max), PG_WIRE_OK);
        CU_ASSERT_EQUAL(parse_with_long(limits[i].proto, limits[i].cmd, limits[i].key, limits[i].max + 1),
                        limits[i].err);
        CU_ASSERT_EQUAL(p.msg.limit_err, limits[i].err);
        CU_ASSERT_EQUAL(p.msg.cmd, limits[i].want);
        CU_ASSERT_EQUAL(pg_msg_get(&p.msg, limits[i].key).len, limits[i].max + 1);
        CU_ASSERT(wire_has(&p.msg, "last", "1")); /* parsing went on */
        CU_ASSERT_PTR_NOT_NULL(p.msg.err_reason);
    }
    /* a token's own key name over 64 bytes */
    char longkey[80];
    memset(longkey, 'k', 65);
    longkey[65] = '\0';
    CU_ASSERT_EQUAL(parse_with_long(PG_PROTO_PMI2, "kvs-put", longkey, 1), PG_WIRE_EKEY_TOO_LONG);
    CU_ASSERT_EQUAL(parse_with_long(PG_PROTO_PMI1, "put", longkey, 1), PG_WIRE_EKEY_TOO_LONG);
    /* a value merged from several words is checked as a whole */
    static char merged[1100];
    memcpy(merged, "cmd=put key=k value=", 20);
    memset(merged + 20, 'v', 1020);
    memcpy(merged + 1040, " and more", 9);
    CU_ASSERT_EQUAL(wire_parse_n(&p, pg_parse_pmi1, merged, 1049), PG_WIRE_EVAL_TOO_LONG);
    CU_ASSERT_EQUAL(pg_msg_get(&p.msg, "value").len, 1029);
}

static void test_too_many_tokens_keeps_the_first_ones(void)
{
    static char body[70000];
    size_t at = (size_t)snprintf(body, sizeof body, "cmd=spawn;");
    for (int i = 0; i < PG_MSG_MAX_TOKENS + 10; i++)
        at += (size_t)snprintf(body + at, sizeof body - at, "a%d=;", i % 10);
    CU_ASSERT_EQUAL(wire_parse_n(&p, pg_parse_pmi2, body, at), PG_WIRE_ETOO_MANY_TOKENS);
    CU_ASSERT_EQUAL(p.msg.ntokens, PG_MSG_MAX_TOKENS);
    CU_ASSERT_EQUAL(p.msg.cmd, PG_CMD_PMI2_SPAWN);
    pg_msg_release(&p.msg);
}

static void test_msg_reuse_keeps_its_grown_array(void)
{
    static char body[4096];
    size_t at = (size_t)snprintf(body, sizeof body, "cmd=kvs-get-response;");
    for (int i = 0; i < 100; i++)
        at += (size_t)snprintf(body + at, sizeof body - at, "k%d=v%d;", i, i);
    pg_msg_t msg;
    pg_msg_init(&msg);
    CU_ASSERT_EQUAL(pg_parse_pmi2(body, at, &msg), PG_WIRE_OK);
    CU_ASSERT_EQUAL(msg.ntokens, 100);
    CU_ASSERT_PTR_NOT_EQUAL(msg.tokens, msg.inline_tokens);
    char small[] = "cmd=kvs-fence;";
    CU_ASSERT_EQUAL(pg_parse_pmi2(small, strlen(small), &msg), PG_WIRE_OK);
    CU_ASSERT_EQUAL(msg.ntokens, 0);
    CU_ASSERT_EQUAL(msg.limit_err, PG_WIRE_OK);
    pg_msg_release(&msg);
    CU_ASSERT_PTR_EQUAL(msg.tokens, msg.inline_tokens);
}

/* Found by fuzz_wire: a refused input used to return before the message
 * was reset, leaving tokens that pointed into the previous (freed) buffer. */
static void test_oversized_input_is_refused_and_leaves_no_stale_tokens(void)
{
    static char big[PG_PMI1_MCMD_MAX + 1];
    char earlier[] = "cmd=put kvsname=k key=x value=y";
    pg_msg_t msg;
    pg_msg_init(&msg);
    int (*parsers[])(char *, size_t, pg_msg_t *) = { pg_parse_pmi1, pg_parse_pmi1_mcmd, pg_parse_pmi2 };
    size_t too_long[] = { PG_PMI1_LINE_MAX, PG_PMI1_MCMD_MAX, PG_PMI2_BODY_MAX + 1 };
    int codes[] = { PG_WIRE_ELINE_TOO_LONG, PG_WIRE_EMCMD_TOO_LONG, PG_WIRE_ELENGTH_TOO_BIG };
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(pg_parse_pmi1(earlier, strlen(earlier), &msg), PG_WIRE_OK);
        CU_ASSERT_EQUAL(msg.ntokens, 3);
        memset(big, 'a', sizeof big);
        CU_ASSERT_EQUAL(parsers[i](big, too_long[i], &msg), codes[i]);
        CU_ASSERT_EQUAL(msg.ntokens, 0);
        CU_ASSERT_EQUAL(msg.cmd, PG_CMD_UNKNOWN);
        CU_ASSERT_PTR_NOT_NULL(msg.err_reason);
    }
    pg_frame_t none = { 0 };
    CU_ASSERT_EQUAL(pg_parse_pmi1(earlier, strlen(earlier), &msg), PG_WIRE_OK);
    CU_ASSERT_EQUAL(pg_parse_frame(big, &none, &msg), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(msg.ntokens, 0);
    pg_msg_release(&msg);
}

static const pg_cunit_test_t name_tests[] = {
    { "every pg_cmd.def name maps to its enum", test_every_def_name_maps_to_its_enum },
    { "unknown and prefix names are unknown but well formed", test_unknown_and_prefix_names_are_unknown_but_well_formed },
    { NULL, NULL },
};

static const pg_cunit_test_t pmi1_tests[] = {
    { "hydra found=TRUE after value= is its own token", test_pmi1_hydra_found_true_after_value_is_its_own_token },
    { "value= last runs to end of line", test_pmi1_value_last_runs_to_end_of_line },
    { "spaces and empty values are tolerated", test_pmi1_spaces_and_empty_values_are_tolerated },
    { "words without '=' only in responses", test_pmi1_words_without_equals_only_in_responses },
    { "malformed lines are rejected with a reason", test_pmi1_malformed_lines_are_rejected_with_a_reason },
    { "mcmd block values run to end of line", test_pmi1_mcmd_block_values_run_to_end_of_line },
    { NULL, NULL },
};

static const pg_cunit_test_t pmi2_tests[] = {
    { "final ';' optional, empty values ok", test_pmi2_final_semicolon_optional_empty_values_ok },
    { "';;' is unescaped in place", test_pmi2_double_semicolon_is_unescaped_in_place },
    { "M4.0 off-by-6 junk is ignored", test_pmi2_m40_off_by_6_junk_is_ignored },
    { "pairs without '=' only in responses", test_pmi2_pairs_without_equals_only_in_responses },
    { "malformed bodies are rejected with a reason", test_pmi2_malformed_bodies_are_rejected_with_a_reason },
    { NULL, NULL },
};

static const pg_cunit_test_t limit_tests[] = {
    { "each limit has its code and keeps the command", test_each_limit_has_its_code_and_keeps_the_command },
    { "too many tokens keeps the first ones", test_too_many_tokens_keeps_the_first_ones },
    { "a reused message keeps its grown array", test_msg_reuse_keeps_its_grown_array },
    { "oversized input is refused and leaves no stale tokens", test_oversized_input_is_refused_and_leaves_no_stale_tokens },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "parse: command names", name_tests, NULL, NULL },
    { "parse: PMI-1 quirks and errors", pmi1_tests, NULL, NULL },
    { "parse: PMI-2 quirks and errors", pmi2_tests, NULL, NULL },
    { "parse: limits", limit_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
