/*
 * test_captures: every message recorded from real peers (tests/captures/:
 * MPICH 4.0.2's PMI-1 client and Slurm's libpmi2 against hydra 4.0.2, plus
 * the transcripts of doc.cap) frames as one message,
 * parses cleanly to a known command, and together they cover every command
 * both protocols use in practice.  Spot checks pin what the bytes mean.
 */
#include <glob.h>

#include "tests/pg_cunit.h"
#include "tests/tools/pg_capture.h"
#include "tests/wire/wire_fixture.h"
#include "wire/pg_detect.h"

static pg_msg_t msg;
static bool seen[PG_CMD_COUNT];

/* Frames and parses m into msg; returns the parse result or a frame error. */
static int decode(pg_capture_msg_t *m)
{
    pg_frame_t f;
    int rc = pg_frame_next(m->bytes, m->len, &f);
    if (rc != PG_WIRE_OK)
        return rc;
    if (f.consumed != m->len || f.proto != (m->proto == 2 ? PG_PROTO_PMI2 : PG_PROTO_PMI1))
        return PG_WIRE_ESYNTAX;
    return pg_parse_frame(m->bytes, &f, &msg);
}

static void check_file(const char *path)
{
    pg_capture_t cap;
    char err[512];
    CU_ASSERT_EQUAL_FATAL(pg_capture_load(path, &cap, err, sizeof err), 0);
    CU_ASSERT(cap.n > 0);
    for (size_t i = 0; i < cap.n; i++) {
        pg_capture_msg_t *m = &cap.msgs[i];
        int rc = decode(m);
        if (rc != PG_WIRE_OK || msg.cmd == PG_CMD_UNKNOWN)
            fprintf(stderr, "\n  %s:%u: %s %s (%s)", path, m->line, pg_wire_strerror(rc),
                    pg_cmd_enum_name(msg.cmd), msg.err_reason ? msg.err_reason : "");
        CU_ASSERT_EQUAL(rc, PG_WIRE_OK);
        CU_ASSERT_NOT_EQUAL(msg.cmd, PG_CMD_UNKNOWN);
        /* a request from the client, a response from the server ("initack"
         * names both the request and the first line of its answer) */
        if (msg.cmd != PG_CMD_PMI1_INITACK)
            CU_ASSERT_EQUAL(pg_cmd_dir(msg.cmd), m->dir == 'C' ? PG_DIR_REQ : PG_DIR_RESP);
        seen[msg.cmd] = true;
    }
    pg_capture_free(&cap);
}

static void test_every_recorded_message_parses_to_a_known_command(void)
{
    char pattern[4200];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/*.cap", wire_capture_dir());
    CU_ASSERT_EQUAL_FATAL(glob(pattern, 0, NULL, &g), 0);
    CU_ASSERT(g.gl_pathc >= 5);
    for (size_t i = 0; i < g.gl_pathc; i++)
        check_file(g.gl_pathv[i]);
    globfree(&g);
}

/* Everything both protocols need against MPICH, Slurm's libpmi2 and hydra.
 * Left out: gforker-only legacy commands, singleton start-up, the Slurm-only
 * ring and job-connect/-disconnect, which no server answers. */
static const pg_cmd_t must_be_seen[] = {
    PG_CMD_PMI1_INIT, PG_CMD_PMI1_RESPONSE_TO_INIT, PG_CMD_PMI1_INITACK, PG_CMD_PMI1_SET,
    PG_CMD_PMI1_GET_MAXES, PG_CMD_PMI1_MAXES, PG_CMD_PMI1_GET_APPNUM, PG_CMD_PMI1_APPNUM,
    PG_CMD_PMI1_GET_MY_KVSNAME, PG_CMD_PMI1_MY_KVSNAME, PG_CMD_PMI1_GET_UNIVERSE_SIZE,
    PG_CMD_PMI1_UNIVERSE_SIZE, PG_CMD_PMI1_PUT, PG_CMD_PMI1_PUT_RESULT, PG_CMD_PMI1_GET,
    PG_CMD_PMI1_GET_RESULT, PG_CMD_PMI1_BARRIER_IN, PG_CMD_PMI1_BARRIER_OUT,
    PG_CMD_PMI1_FINALIZE, PG_CMD_PMI1_FINALIZE_ACK, PG_CMD_PMI1_ABORT,
    PG_CMD_PMI1_PUBLISH_NAME, PG_CMD_PMI1_PUBLISH_RESULT, PG_CMD_PMI1_UNPUBLISH_NAME,
    PG_CMD_PMI1_UNPUBLISH_RESULT, PG_CMD_PMI1_LOOKUP_NAME, PG_CMD_PMI1_LOOKUP_RESULT,
    PG_CMD_PMI1_SPAWN, PG_CMD_PMI1_SPAWN_RESULT, PG_CMD_PMI1_KEYVAL_CACHE,
    PG_CMD_PMI2_FULLINIT, PG_CMD_PMI2_FULLINIT_RESPONSE, PG_CMD_PMI2_FINALIZE,
    PG_CMD_PMI2_FINALIZE_RESPONSE, PG_CMD_PMI2_ABORT, PG_CMD_PMI2_JOB_GETID,
    PG_CMD_PMI2_JOB_GETID_RESPONSE, PG_CMD_PMI2_KVS_PUT, PG_CMD_PMI2_KVS_PUT_RESPONSE,
    PG_CMD_PMI2_KVS_GET, PG_CMD_PMI2_KVS_GET_RESPONSE, PG_CMD_PMI2_KVS_FENCE,
    PG_CMD_PMI2_KVS_FENCE_RESPONSE, PG_CMD_PMI2_INFO_PUTNODEATTR,
    PG_CMD_PMI2_INFO_PUTNODEATTR_RESPONSE, PG_CMD_PMI2_INFO_GETNODEATTR,
    PG_CMD_PMI2_INFO_GETNODEATTR_RESPONSE, PG_CMD_PMI2_INFO_GETJOBATTR,
    PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE, PG_CMD_PMI2_NAME_PUBLISH,
    PG_CMD_PMI2_NAME_PUBLISH_RESPONSE, PG_CMD_PMI2_NAME_UNPUBLISH,
    PG_CMD_PMI2_NAME_UNPUBLISH_RESPONSE, PG_CMD_PMI2_NAME_LOOKUP,
    PG_CMD_PMI2_NAME_LOOKUP_RESPONSE, PG_CMD_PMI2_SPAWN, PG_CMD_PMI2_SPAWN_RESPONSE,
};

static void test_captures_cover_every_command_peers_use(void)
{
    for (size_t i = 0; i < sizeof must_be_seen / sizeof must_be_seen[0]; i++) {
        if (!seen[must_be_seen[i]])
            fprintf(stderr, "\n  never recorded: %s", pg_cmd_enum_name(must_be_seen[i]));
        CU_ASSERT(seen[must_be_seen[i]]);
    }
}

/* Finds the first message of a file matching rank/dir/cmd and decodes it
 * into msg from a private copy, so msg stays valid after the file is freed. */
static bool find(const char *file, int rank, char dir, pg_cmd_t cmd, const char *key, const char *val)
{
    char path[4200], err[512];
    pg_capture_t cap;
    bool found = false;
    snprintf(path, sizeof path, "%s/%s", wire_capture_dir(), file);
    if (pg_capture_load(path, &cap, err, sizeof err) != 0)
        return false;
    for (size_t i = 0; i < cap.n && !found; i++) {
        static char keep[70000];
        pg_capture_msg_t copy = cap.msgs[i], *m = &copy;
        if (m->len > sizeof keep)
            continue;
        memcpy(keep, m->bytes, m->len);
        m->bytes = keep;
        found = m->rank == rank && m->dir == dir && decode(m) == PG_WIRE_OK && msg.cmd == cmd &&
                (key == NULL || wire_has(&msg, key, val));
    }
    pg_capture_free(&cap);
    return found;
}

static void test_recorded_bytes_mean_what_the_peers_meant(void)
{
    /* libpmi2 escaped "val;with;semis"; we read it back whole */
    CU_ASSERT(find("hydra_slurm_pmi2.cap", 0, 'C', PG_CMD_PMI2_KVS_PUT, "value", "val;with;semis"));
    CU_ASSERT(find("hydra_slurm_pmi2.cap", 1, 'C', PG_CMD_PMI2_KVS_PUT, "value", "val with spaces"));
    CU_ASSERT(find("hydra_slurm_pmi2.cap", 0, 'C', PG_CMD_PMI2_KVS_PUT, "value", ""));
    CU_ASSERT(find("hydra_slurm_pmi2.cap", 0, 'S', PG_CMD_PMI2_NAME_LOOKUP_RESPONSE, "port", "tag#0$port#7$"));
    CU_ASSERT(find("hydra_slurm_pmi2.cap", 0, 'C', PG_CMD_PMI2_FULLINIT, "threaded", "FALSE"));
    CU_ASSERT(find("hydra_slurm_pmi2_abort.cap", 0, 'C', PG_CMD_PMI2_ABORT, "msg",
                   "capture abort; with a semicolon"));
    CU_ASSERT(find("hydra_mpich_pmi1.cap", 0, 'S', PG_CMD_PMI1_GET_RESULT, "value", "(vector,(0,1,1))"));
    CU_ASSERT(find("hydra_mpich_pmi1.cap", 0, 'S', PG_CMD_PMI1_LOOKUP_RESULT, "port",
                   "tag#0$description#capture$port#1$"));
    CU_ASSERT(find("hydra_mpich_pmi1_abort.cap", 0, 'C', PG_CMD_PMI1_ABORT, "exitcode", "7"));
    CU_ASSERT(find("doc.cap", 0, 'C', PG_CMD_PMI1_SPAWN, "arg3", "a b c"));
    CU_ASSERT(find("doc.cap", 0, 'C', PG_CMD_PMI2_SPAWN, "argv2", "x y"));
    CU_ASSERT(find("doc.cap", 0, 'S', PG_CMD_PMI2_KVS_GET_RESPONSE, "thrid", "0xdeadbeef"));
}

static void test_detection_from_recorded_first_lines(void)
{
    pg_version_t v;
    CU_ASSERT(find("hydra_mpich_pmi1.cap", 0, 'C', PG_CMD_PMI1_INIT, NULL, NULL));
    CU_ASSERT_EQUAL(pg_detect(&msg, &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI1);
    CU_ASSERT(find("hydra_slurm_pmi2.cap", 0, 'C', PG_CMD_PMI1_INIT, NULL, NULL));
    CU_ASSERT_EQUAL(pg_detect(&msg, &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI2);
    CU_ASSERT(find("hydra_slurm_pmi2.cap", 0, 'C', PG_CMD_PMI2_FULLINIT, NULL, NULL));
    CU_ASSERT_EQUAL(pg_detect(&msg, &v), 0);
    CU_ASSERT_EQUAL(v.proto, PG_PROTO_PMI2);
}

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

static const pg_cunit_test_t tests[] = {
    { "every recorded message parses to a known command", test_every_recorded_message_parses_to_a_known_command },
    { "captures cover every command peers use", test_captures_cover_every_command_peers_use },
    { "recorded bytes mean what the peers meant", test_recorded_bytes_mean_what_the_peers_meant },
    { "detection from recorded first lines", test_detection_from_recorded_first_lines },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "captures: real traffic", tests, setup, teardown },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
