/*
 * test_frame: the framer cuts a byte stream into messages the way hydra
 * does, whatever pieces the bytes arrive in: every split point of every
 * recorded message, whole recorded sessions fed in chunks of every small
 * size, both paddings of the PMI-2 length, M4.0's off-by-6 junk, "endcmd"
 * inside a value, and each framing error with its own code.
 */
#include <glob.h>

#include "tests/pg_cunit.h"
#include "tests/tools/pg_capture.h"
#include "tests/wire/wire_fixture.h"

/* Every capture file, loaded once for the suite. */
static pg_capture_t caps[16];
static size_t ncaps;

static int load_captures(void)
{
    char pattern[4200];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/*.cap", wire_capture_dir());
    if (glob(pattern, 0, NULL, &g) != 0)
        return -1;
    for (size_t i = 0; i < g.gl_pathc && ncaps < 16; i++) {
        char err[256];
        if (pg_capture_load(g.gl_pathv[i], &caps[ncaps], err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            globfree(&g);
            return -1;
        }
        ncaps++;
    }
    globfree(&g);
    return ncaps > 0 ? 0 : -1;
}

static int free_captures(void)
{
    for (size_t i = 0; i < ncaps; i++)
        pg_capture_free(&caps[i]);
    ncaps = 0;
    return 0;
}

static void test_every_prefix_of_a_recorded_message_needs_more(void)
{
    size_t checked = 0;
    for (size_t c = 0; c < ncaps; c++) {
        for (size_t i = 0; i < caps[c].n; i++) {
            const pg_capture_msg_t *m = &caps[c].msgs[i];
            pg_frame_t f;
            /* initack's answer is recorded as one message per line; each is whole. */
            for (size_t k = 0; k < m->len; k++) {
                int rc = pg_frame_next(m->bytes, k, &f);
                if (rc != PG_WIRE_ENEED_MORE)
                    fprintf(stderr, "line %u split at %zu: %s\n", m->line, k, pg_wire_strerror(rc));
                CU_ASSERT_EQUAL_FATAL(rc, PG_WIRE_ENEED_MORE);
            }
            CU_ASSERT_EQUAL_FATAL(pg_frame_next(m->bytes, m->len, &f), PG_WIRE_OK);
            CU_ASSERT_EQUAL(f.consumed, m->len);
            CU_ASSERT_EQUAL(f.proto, m->proto == 2 ? PG_PROTO_PMI2 : PG_PROTO_PMI1);
            checked++;
        }
    }
    CU_ASSERT(checked > 200);
}

/* One rank's messages in one direction, back to back, as a socket sees them. */
static size_t session_stream(const pg_capture_t *cap, int rank, char dir, char *out, size_t cap_out,
                             size_t *nmsgs)
{
    size_t len = 0;
    *nmsgs = 0;
    for (size_t i = 0; i < cap->n; i++) {
        const pg_capture_msg_t *m = &cap->msgs[i];
        if (m->rank != rank || m->dir != dir || len + m->len > cap_out)
            continue;
        memcpy(out + len, m->bytes, m->len);
        len += m->len;
        (*nmsgs)++;
    }
    return len;
}

/* Feeds stream to a receive buffer chunk bytes at a time, framing after
 * each read like the gateway does; returns the number of messages framed
 * (each checked against the capture in order), or -1. */
static long frame_in_chunks(const pg_capture_t *cap, int rank, char dir, const char *stream,
                            size_t len, size_t chunk)
{
    static char rx[1 << 20];
    size_t have = 0, fed = 0, next = 0;
    long framed = 0;
    while (fed < len || have > 0) {
        size_t n = len - fed < chunk ? len - fed : chunk;
        memcpy(rx + have, stream + fed, n);
        have += n;
        fed += n;
        pg_frame_t f;
        int rc;
        while ((rc = pg_frame_next(rx, have, &f)) == PG_WIRE_OK) {
            while (next < cap->n && (cap->msgs[next].rank != rank || cap->msgs[next].dir != dir))
                next++;
            if (next == cap->n || f.consumed != cap->msgs[next].len ||
                memcmp(rx, cap->msgs[next].bytes, f.consumed) != 0)
                return -1;
            next++;
            framed++;
            memmove(rx, rx + f.consumed, have - f.consumed);
            have -= f.consumed;
        }
        if (rc != PG_WIRE_ENEED_MORE || (fed == len && have > 0))
            return -1;
    }
    return framed;
}

static void test_recorded_sessions_frame_identically_in_any_chunk_size(void)
{
    static char stream[1 << 20];
    for (size_t c = 0; c < ncaps; c++) {
        for (int rank = 0; rank <= 1; rank++) {
            for (const char *d = "CS"; *d; d++) {
                size_t nmsgs;
                size_t len = session_stream(&caps[c], rank, *d, stream, sizeof stream, &nmsgs);
                if (nmsgs == 0)
                    continue;
                for (size_t chunk = 1; chunk <= 17; chunk++)
                    CU_ASSERT_EQUAL(frame_in_chunks(&caps[c], rank, *d, stream, len, chunk), (long)nmsgs);
                CU_ASSERT_EQUAL(frame_in_chunks(&caps[c], rank, *d, stream, len, len), (long)nmsgs);
            }
        }
    }
}

static int frame(const char *s, pg_frame_t *f)
{
    return pg_frame_next(s, strlen(s), f);
}

static void test_pmi2_length_padded_on_either_side(void)
{
    pg_frame_t f;
    const char *forms[] = { "    14cmd=kvs-fence;", "14    cmd=kvs-fence;", "  14  cmd=kvs-fence;",
                            "000014cmd=kvs-fence;", "\t14\t  cmd=kvs-fence;" };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        CU_ASSERT_EQUAL(frame(forms[i], &f), PG_WIRE_OK);
        CU_ASSERT_EQUAL(f.kind, PG_FRAME_PMI2);
        CU_ASSERT_EQUAL(f.body_off, 6);
        CU_ASSERT_EQUAL(f.body_len, 14);
        CU_ASSERT_EQUAL(f.consumed, 20);
    }
}

static void test_pmi2_frame_is_exactly_length_bytes_so_m40_junk_stays_inside(void)
{
    /* MPICH <= 4.0: length claims n+6 and 6 stack bytes follow the body. */
    static const char wire[] = "    20cmd=kvs-fence;\0\x7f\0\0ab    13cmd=finalize;";
    pg_frame_t f;
    CU_ASSERT_EQUAL(pg_frame_next(wire, sizeof wire - 1, &f), PG_WIRE_OK);
    CU_ASSERT_EQUAL(f.body_len, 20);
    CU_ASSERT_EQUAL(f.consumed, 26);
    CU_ASSERT_EQUAL(pg_frame_next(wire + 26, sizeof wire - 1 - 26, &f), PG_WIRE_OK);
    CU_ASSERT_EQUAL(f.body_len, 13);
    CU_ASSERT_EQUAL(memcmp(wire + 26 + f.body_off, "cmd=finalize;", 13), 0);
}

static void test_pipelined_pmi1_lines_frame_one_by_one(void)
{
    const char *s = "cmd=barrier_in\ncmd=finalize\n";
    pg_frame_t f;
    CU_ASSERT_EQUAL(frame(s, &f), PG_WIRE_OK);
    CU_ASSERT_EQUAL(f.kind, PG_FRAME_PMI1_LINE);
    CU_ASSERT_EQUAL(f.body_len, 14);
    CU_ASSERT_EQUAL(f.consumed, 15);
    CU_ASSERT_EQUAL(frame(s + f.consumed, &f), PG_WIRE_OK);
    CU_ASSERT_EQUAL(f.body_len, 12);
}

static void test_mcmd_block_ends_only_at_an_endcmd_line(void)
{
    const char *s = "mcmd=spawn\narg1=endcmd\nendcmdx=1\nendcmd\ncmd=x\n";
    pg_frame_t f;
    CU_ASSERT_EQUAL(frame(s, &f), PG_WIRE_OK);
    CU_ASSERT_EQUAL(f.kind, PG_FRAME_PMI1_MCMD);
    CU_ASSERT_EQUAL(f.consumed, strlen("mcmd=spawn\narg1=endcmd\nendcmdx=1\nendcmd\n"));
    CU_ASSERT_EQUAL(f.body_len, strlen("mcmd=spawn\narg1=endcmd\nendcmdx=1\n"));
    CU_ASSERT_EQUAL(frame("mcmd=spawn\narg1=endcmd\n", &f), PG_WIRE_ENEED_MORE);
    CU_ASSERT_EQUAL(frame("mcmd=spawn\nendcmd", &f), PG_WIRE_ENEED_MORE);
}

static void test_partial_prefixes_need_more(void)
{
    pg_frame_t f;
    const char *partial[] = { "", "c", "cm", "cmd", "m", "mc", "mcm", "mcmd", "cmd=get", "    ",
                              "  38", "38  ", "    14cmd=kvs" };
    for (size_t i = 0; i < sizeof partial / sizeof partial[0]; i++)
        CU_ASSERT_EQUAL(frame(partial[i], &f), PG_WIRE_ENEED_MORE);
}

static void test_each_framing_error_has_its_own_code(void)
{
    pg_frame_t f;
    CU_ASSERT_EQUAL(frame("xyz", &f), PG_WIRE_EBAD_START);
    CU_ASSERT_EQUAL(frame("ca", &f), PG_WIRE_EBAD_START);
    CU_ASSERT_EQUAL(frame("\n", &f), PG_WIRE_EBAD_START);
    CU_ASSERT_EQUAL(frame("12a   ", &f), PG_WIRE_EBAD_LENGTH);
    CU_ASSERT_EQUAL(frame("1 2", &f), PG_WIRE_EBAD_LENGTH); /* known before 6 bytes */
    CU_ASSERT_EQUAL(frame("-12   ", &f), PG_WIRE_EBAD_START);
    CU_ASSERT_EQUAL(frame("      cmd=x;", &f), PG_WIRE_EBAD_LENGTH);
    CU_ASSERT_EQUAL(frame("     0", &f), PG_WIRE_EBAD_LENGTH);
    CU_ASSERT_EQUAL(frame("999999", &f), PG_WIRE_ELENGTH_TOO_BIG);
    CU_ASSERT_EQUAL(frame(" 65543", &f), PG_WIRE_ELENGTH_TOO_BIG);
    CU_ASSERT_EQUAL(frame(" 65542", &f), PG_WIRE_ENEED_MORE); /* PG_PMI2_BODY_MAX */

    static char big[PG_PMI1_MCMD_MAX + 16];
    memset(big, 'a', sizeof big);
    memcpy(big, "cmd=put ", 8);
    CU_ASSERT_EQUAL(pg_frame_next(big, PG_PMI1_LINE_MAX - 1, &f), PG_WIRE_ENEED_MORE);
    CU_ASSERT_EQUAL(pg_frame_next(big, PG_PMI1_LINE_MAX, &f), PG_WIRE_ELINE_TOO_LONG);
    big[PG_PMI1_LINE_MAX - 1] = '\n'; /* exactly the limit, '\n' included */
    CU_ASSERT_EQUAL(pg_frame_next(big, PG_PMI1_LINE_MAX, &f), PG_WIRE_OK);
    memcpy(big, "mcmd=spawn\n", 11);
    big[PG_PMI1_LINE_MAX - 1] = 'a';
    CU_ASSERT_EQUAL(pg_frame_next(big, PG_PMI1_MCMD_MAX - 1, &f), PG_WIRE_ENEED_MORE);
    CU_ASSERT_EQUAL(pg_frame_next(big, PG_PMI1_MCMD_MAX, &f), PG_WIRE_EMCMD_TOO_LONG);
    CU_ASSERT_NOT_EQUAL(PG_WIRE_ELINE_TOO_LONG, PG_WIRE_EMCMD_TOO_LONG);
}

/* Skips the rest of an over-long message fed in pieces of `chunk` bytes;
 * returns the bytes of stream[0..len) it took (the head included). */
static size_t skip_in_chunks(const char *stream, size_t len, size_t chunk, int err)
{
    pg_frame_t head;
    pg_frame_skip_t s;
    size_t at;

    CU_ASSERT_EQUAL_FATAL(pg_frame_oversized(stream, len, err, &head), PG_WIRE_OK);
    CU_ASSERT_EQUAL(head.body_len, PG_FRAME_HEAD_MAX);
    pg_frame_skip_start(&s, &head);
    at = head.consumed;
    while (s.kind != PG_FRAME_NONE && at < len) {
        size_t piece = len - at < chunk ? len - at : chunk;
        size_t took = pg_frame_skip(&s, stream + at, piece);

        CU_ASSERT_TRUE(took == piece || s.kind == PG_FRAME_NONE);
        at += took;
    }
    CU_ASSERT_EQUAL(s.kind, PG_FRAME_NONE);
    CU_ASSERT_EQUAL(s.skipped, at);
    return at;
}

/* An over-long message is answered by its head and skipped exactly: the
 * next message frames as if nothing had happened, whatever the pieces. */
static void test_oversized_messages_are_skipped_exactly(void)
{
    static char buf[PG_PMI1_MCMD_MAX + 4096];
    const char *next = "cmd=get_maxes\n";
    size_t chunks[] = { 1, 7, 4096, sizeof buf };
    pg_frame_t f;

    /* PMI-2: 70000 bytes announced; the head waits for PG_FRAME_HEAD_MAX */
    memset(buf, 'v', sizeof buf);
    memcpy(buf, " 70000cmd=kvs-put;thrid=7;key=k;value=", 38);
    strcpy(buf + 6 + 70000, next);
    CU_ASSERT_EQUAL(pg_frame_next(buf, 6, &f), PG_WIRE_ELENGTH_TOO_BIG);
    CU_ASSERT_EQUAL(pg_frame_oversized(buf, 6 + PG_FRAME_HEAD_MAX - 1, PG_WIRE_ELENGTH_TOO_BIG, &f),
                    PG_WIRE_ENEED_MORE);
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        CU_ASSERT_EQUAL(skip_in_chunks(buf, 6 + 70000 + strlen(next), chunks[i],
                                       PG_WIRE_ELENGTH_TOO_BIG),
                        6 + 70000);
    CU_ASSERT_EQUAL(pg_frame_next(buf + 6 + 70000, strlen(next), &f), PG_WIRE_OK);

    /* PMI-1: a 9000-byte line, then the next line */
    memset(buf, 'v', sizeof buf);
    memcpy(buf, "cmd=put kvsname=x key=k value=", 30);
    buf[8999] = '\n';
    strcpy(buf + 9000, next);
    CU_ASSERT_EQUAL(pg_frame_next(buf, sizeof buf, &f), PG_WIRE_ELINE_TOO_LONG);
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        CU_ASSERT_EQUAL(skip_in_chunks(buf, 9000 + strlen(next), chunks[i], PG_WIRE_ELINE_TOO_LONG),
                        9000);

    /* an mcmd block whose "endcmd" line straddles the framer's window, with
     * false starts ("\nendcm", "\n\nendcmd") before it */
    memset(buf, 'a', sizeof buf);
    memcpy(buf, "mcmd=spawn\n", 11);
    memcpy(buf + 5000, "\nendcmX\n\nendcmd", 15); /* no '\n' after: not an end */
    memcpy(buf + PG_PMI1_MCMD_MAX - 3, "\nendcmd\n", 8);
    strcpy(buf + PG_PMI1_MCMD_MAX + 5, next);
    CU_ASSERT_EQUAL(pg_frame_next(buf, PG_PMI1_MCMD_MAX, &f), PG_WIRE_EMCMD_TOO_LONG);
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        CU_ASSERT_EQUAL(skip_in_chunks(buf, PG_PMI1_MCMD_MAX + 5 + strlen(next), chunks[i],
                                       PG_WIRE_EMCMD_TOO_LONG),
                        PG_PMI1_MCMD_MAX + 5);

    /* only those three are survivable */
    CU_ASSERT_TRUE(pg_frame_is_oversized(PG_WIRE_ELINE_TOO_LONG));
    CU_ASSERT_FALSE(pg_frame_is_oversized(PG_WIRE_EBAD_LENGTH));
    CU_ASSERT_FALSE(pg_frame_is_oversized(PG_WIRE_EBAD_START));
    CU_ASSERT_EQUAL(pg_frame_oversized(buf, sizeof buf, PG_WIRE_EBAD_START, &f), PG_WIRE_EBAD_START);
}

static const pg_cunit_test_t recorded_tests[] = {
    { "every prefix of a recorded message needs more", test_every_prefix_of_a_recorded_message_needs_more },
    { "recorded sessions frame identically in any chunk size", test_recorded_sessions_frame_identically_in_any_chunk_size },
    { NULL, NULL },
};

static const pg_cunit_test_t rule_tests[] = {
    { "PMI-2 length padded on either side", test_pmi2_length_padded_on_either_side },
    { "PMI-2 frame is exactly length bytes (M4.0 junk inside)", test_pmi2_frame_is_exactly_length_bytes_so_m40_junk_stays_inside },
    { "pipelined PMI-1 lines frame one by one", test_pipelined_pmi1_lines_frame_one_by_one },
    { "mcmd block ends only at an endcmd line", test_mcmd_block_ends_only_at_an_endcmd_line },
    { "partial prefixes need more", test_partial_prefixes_need_more },
    { "each framing error has its own code", test_each_framing_error_has_its_own_code },
    { "over-long messages are skipped exactly", test_oversized_messages_are_skipped_exactly },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "frame: recorded traffic", recorded_tests, load_captures, free_captures },
    { "frame: rules", rule_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
