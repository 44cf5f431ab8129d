/*
 * test_model: the message model's small parts that handlers rely on:
 * command tables, distinct error texts, integer and boolean readers, token
 * lookup, and protocol detection from a first message.
 */
#include <limits.h>

#include "tests/pg_cunit.h"
#include "tests/wire/wire_fixture.h"
#include "wire/pg_detect.h"

static wire_parsed_t p;

static pg_str_t S(const char *s)
{
    pg_str_t r = { s, s ? (uint32_t)strlen(s) : 0 };
    return r;
}

static void test_command_tables_agree_with_the_def(void)
{
    for (int c = 1; c < PG_CMD_COUNT; c++) {
        CU_ASSERT(pg_cmd_proto(c) == PG_PROTO_PMI1 || pg_cmd_proto(c) == PG_PROTO_PMI2);
        CU_ASSERT(pg_cmd_dir(c) == PG_DIR_REQ || pg_cmd_dir(c) == PG_DIR_RESP);
        CU_ASSERT(strcmp(pg_cmd_name(c), "?") != 0);
    }
    CU_ASSERT_STRING_EQUAL(pg_cmd_name(PG_CMD_PMI2_KVS_GET), "kvs-get");
    CU_ASSERT_STRING_EQUAL(pg_cmd_enum_name(PG_CMD_PMI2_KVS_GET), "PMI2_KVS_GET");
    CU_ASSERT_EQUAL(pg_cmd_dir(PG_CMD_PMI1_GET_RESULT), PG_DIR_RESP);
    CU_ASSERT_STRING_EQUAL(pg_cmd_name(PG_CMD_COUNT), "?");
    CU_ASSERT_STRING_EQUAL(pg_cmd_name((pg_cmd_t)-5), "?");
    CU_ASSERT_EQUAL(pg_cmd_proto(PG_CMD_UNKNOWN), PG_PROTO_NONE);
}

static void test_every_error_code_has_its_own_text(void)
{
    static const int codes[] = {
        PG_WIRE_OK, PG_WIRE_ENEED_MORE, PG_WIRE_ENOMEM, PG_WIRE_ELINE_TOO_LONG,
        PG_WIRE_EMCMD_TOO_LONG, PG_WIRE_EBAD_LENGTH, PG_WIRE_ELENGTH_TOO_BIG, PG_WIRE_EBAD_START,
        PG_WIRE_ESYNTAX, PG_WIRE_ETOO_MANY_TOKENS, PG_WIRE_EKEY_TOO_LONG, PG_WIRE_EVAL_TOO_LONG,
        PG_WIRE_EKVSNAME_TOO_LONG, PG_WIRE_EOVERFLOW, PG_WIRE_EINVAL,
    };
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            CU_ASSERT_NOT_EQUAL(codes[i], codes[j]);
            CU_ASSERT_STRING_NOT_EQUAL(pg_wire_strerror(codes[i]), pg_wire_strerror(codes[j]));
        }
    CU_ASSERT_STRING_EQUAL(pg_wire_strerror(12345), "unknown error");
}

static void test_integers_are_read_strictly(void)
{
    long v = 99;
    CU_ASSERT_EQUAL(pg_str_to_long(S("0"), &v), 0);
    CU_ASSERT_EQUAL(v, 0);
    CU_ASSERT_EQUAL(pg_str_to_long(S("-1"), &v), 0);
    CU_ASSERT_EQUAL(v, -1);
    CU_ASSERT_EQUAL(pg_str_to_long(S("123456"), &v), 0);
    CU_ASSERT_EQUAL(v, 123456);
    char text[32];
    snprintf(text, sizeof text, "%ld", LONG_MAX);
    CU_ASSERT_EQUAL(pg_str_to_long(S(text), &v), 0);
    CU_ASSERT_EQUAL(v, LONG_MAX);
    snprintf(text, sizeof text, "%ld", LONG_MIN);
    CU_ASSERT_EQUAL(pg_str_to_long(S(text), &v), 0);
    CU_ASSERT_EQUAL(v, LONG_MIN);
    const char *bad[] = { "", "-", "+1", "1a", " 1", "1 ", "99999999999999999999", "--1", "0x10" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_EQUAL(pg_str_to_long(S(bad[i]), &v), PG_WIRE_ESYNTAX);
    snprintf(text, sizeof text, "%lu", (unsigned long)LONG_MAX + 1);
    CU_ASSERT_EQUAL(pg_str_to_long(S(text), &v), PG_WIRE_ESYNTAX);
    pg_str_t none = { NULL, 0 };
    CU_ASSERT_EQUAL(pg_str_to_long(none, &v), PG_WIRE_ESYNTAX);
}

static void test_booleans_are_case_sensitive_true_false(void)
{
    bool b = false;
    CU_ASSERT_EQUAL(pg_str_to_bool(S("TRUE"), &b), 0);
    CU_ASSERT_TRUE(b);
    CU_ASSERT_EQUAL(pg_str_to_bool(S("FALSE"), &b), 0);
    CU_ASSERT_FALSE(b);
    CU_ASSERT_EQUAL(pg_str_to_bool(S("true"), &b), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(pg_str_to_bool(S("1"), &b), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(pg_str_to_bool(S("TRUEX"), &b), PG_WIRE_ESYNTAX);
}

static void test_token_lookup_takes_the_first_match(void)
{
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-get-response;rc=0;found=TRUE;rc=1;"), 0);
    CU_ASSERT(pg_str_eq(pg_msg_get(&p.msg, "rc"), "0"));
    CU_ASSERT_PTR_NULL(pg_msg_find(&p.msg, "r"));
    CU_ASSERT_PTR_NULL(pg_msg_find(&p.msg, "rcx"));
    CU_ASSERT_PTR_NULL(pg_msg_get(&p.msg, "value").ptr);
    CU_ASSERT_FALSE(pg_str_eq(pg_msg_get(&p.msg, "value"), ""));
}

static void test_lookup_compares_whole_keys_of_equal_length(void)
{
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=kvs-get;jobid=j;srcid=0;key=k;"), 0);
    CU_ASSERT(pg_str_eq(pg_msg_get(&p.msg, "srcid"), "0"));
    CU_ASSERT(pg_str_eq(pg_msg_get(&p.msg, "jobid"), "j"));
    CU_ASSERT_PTR_NULL(pg_msg_find(&p.msg, "srcix")); /* same length and first byte */
    CU_ASSERT_PTR_NULL(pg_msg_find(&p.msg, "xrcid")); /* same tail */
    CU_ASSERT_PTR_NULL(pg_msg_find(&p.msg, ""));
}

/* The span to echo: "thrid=<v>" wherever it stands, else "opid=<v>". */
static int op_id_is(const char *text, const char *want)
{
    if (wire_parse(&p, pg_parse_pmi2, text) != 0)
        return 0;
    pg_str_t op = pg_msg_op_id(&p.msg);
    if (want == NULL)
        return op.ptr == NULL && op.len == 0;
    return pg_str_eq(op, want);
}

static void test_operation_id_prefers_thrid_then_opid(void)
{
    CU_ASSERT(op_id_is("cmd=kvs-get;thrid=0x1;key=k;", "thrid=0x1"));
    CU_ASSERT(op_id_is("cmd=kvs-get;key=k;opid=7;", "opid=7"));
    CU_ASSERT(op_id_is("cmd=kvs-get;opid=7;key=k;thrid=0x2;", "thrid=0x2"));
    CU_ASSERT(op_id_is("cmd=kvs-get;opid=7;opid=8;", "opid=7"));
    CU_ASSERT(op_id_is("cmd=kvs-get;thrid=;key=k;", "thrid="));
    CU_ASSERT(op_id_is("cmd=kvs-get;thris=1;opie=2;srcid=0;", NULL));
    CU_ASSERT(op_id_is("cmd=kvs-get;key=k;", NULL));
}

static int detect(const char *line, pg_version_t *v)
{
    int rc = wire_parse(&p, pg_parse_pmi1, line);
    return rc != 0 ? rc : pg_detect(&p.msg, v);
}

static void test_detection_serves_1_0_1_1_and_2_0_only(void)
{
    pg_version_t v;
    CU_ASSERT_EQUAL(detect("cmd=init pmi_version=1 pmi_subversion=1", &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI1);
    CU_ASSERT_EQUAL(detect("cmd=init pmi_version=1 pmi_subversion=0", &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI1);
    CU_ASSERT_EQUAL(detect("cmd=init pmi_version=2 pmi_subversion=0", &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI2);
    CU_ASSERT_EQUAL(detect("cmd=init pmi_subversion=0 pmi_version=2", &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI2);
    /* versions we cannot serve must be refused (rc != 0), not guessed */
    CU_ASSERT_EQUAL(detect("cmd=init pmi_version=1 pmi_subversion=2", &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_NONE);
    CU_ASSERT_EQUAL(v.subversion, 2);
    CU_ASSERT_EQUAL(detect("cmd=init pmi_version=3 pmi_subversion=0", &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_NONE);
    /* hydra 4.0 crashes on these; we report them */
    CU_ASSERT_EQUAL(detect("cmd=init", &v), PG_WIRE_ESYNTAX);
    CU_ASSERT_EQUAL(detect("cmd=init pmi_version=x pmi_subversion=0", &v), PG_WIRE_ESYNTAX);
    /* no init first: hydra answers anyway, so do we */
    CU_ASSERT_EQUAL(detect("cmd=get_maxes", &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI1);
    CU_ASSERT_EQUAL(wire_parse(&p, pg_parse_pmi2, "cmd=fullinit;pmirank=0;threaded=FALSE;"), 0);
    CU_ASSERT_EQUAL(pg_detect(&p.msg, &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI2);
}

static const pg_cunit_test_t tests[] = {
    { "command tables agree with pg_cmd.def", test_command_tables_agree_with_the_def },
    { "every error code has its own text", test_every_error_code_has_its_own_text },
    { "integers are read strictly", test_integers_are_read_strictly },
    { "booleans are case-sensitive TRUE/FALSE", test_booleans_are_case_sensitive_true_false },
    { "token lookup takes the first match", test_token_lookup_takes_the_first_match },
    { "lookup compares whole keys of equal length", test_lookup_compares_whole_keys_of_equal_length },
    { "operation id prefers thrid, then opid", test_operation_id_prefers_thrid_then_opid },
    { "detection serves 1.0, 1.1 and 2.0 only", test_detection_serves_1_0_1_1_and_2_0_only },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "model", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
