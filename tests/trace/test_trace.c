/*
 * Unit tests for the trace tool: the file format (escaping, writer, reader
 * and its errors), the analysis behind `pmigate trace stats` and the
 * timeline (pairing, fences, who held them), and the replay's message rules
 * (kvsname substitution, rank renaming, reply comparison).  Traces here are
 * synthetic, built with the writer, so each test states exactly the
 * conversation it is about.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/pg_cunit.h"
#include "trace/pg_replay_msg.h"
#include "trace/pg_trace.h"
#include "trace/pg_trace_analyze.h"
#include "trace/pg_trace_svg.h"
#include "trace/pg_trace_view.h"

/* ---------------------------------------------------------------- */
/* building synthetic traces                                          */
/* ---------------------------------------------------------------- */

typedef struct tbuild {
    char *text;
    size_t len;
    FILE *f;
    char *scratch;
    size_t scratch_cap;
} tbuild_t;

static void tb_begin(tbuild_t *b, const char *kvsname, int size)
{
    pg_trace_header_t h = { .size = size, .cmdline = "pmigate run -n 4 ./app" };

    memset(b, 0, sizeof(*b));
    snprintf(h.kvsname, sizeof(h.kvsname), "%s", kvsname);
    snprintf(h.start, sizeof(h.start), "2026-01-01T00:00:00.000000Z");
    b->f = open_memstream(&b->text, &b->len);
    CU_ASSERT_FATAL(b->f != NULL);
    CU_ASSERT_EQUAL(pg_trace_write_header(b->f, &h), 0);
}

/* One event; PMI-2 bodies get their length field here. */
static void tb_msg(tbuild_t *b, uint64_t t_us, int conn, int rank, pg_proto_t proto, char dir,
                   const char *msg)
{
    char framed[2048];

    if (proto == PG_PROTO_PMI2 && strncmp(msg, "cmd=init", 8) != 0)
        snprintf(framed, sizeof(framed), "%-6zu%s", strlen(msg), msg);
    else
        snprintf(framed, sizeof(framed), "%s\n", msg);
    CU_ASSERT_EQUAL(pg_trace_write_event(b->f, t_us * 1000, conn, rank, proto,
                                         dir == 'C' ? PG_TRACE_C2S : PG_TRACE_S2C, framed,
                                         strlen(framed), &b->scratch, &b->scratch_cap),
                    0);
}

/* PMI-1 request and reply of one rank on connection = rank. */
static void tb_pair(tbuild_t *b, uint64_t t_req, uint64_t t_rep, int rank, const char *req,
                    const char *rep)
{
    tb_msg(b, t_req, rank, rank, PG_PROTO_PMI1, 'C', req);
    if (rep != NULL)
        tb_msg(b, t_rep, rank, rank, PG_PROTO_PMI1, 'S', rep);
}

static pg_trace_t *load_text(const char *text, char *err, size_t errlen)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    pg_trace_t *t;

    CU_ASSERT_FATAL(f != NULL);
    t = pg_trace_load_stream(f, err, errlen);
    fclose(f);
    return t;
}

static pg_trace_t *tb_load(tbuild_t *b)
{
    char err[256] = "";
    pg_trace_t *t;

    fclose(b->f);
    t = load_text(b->text, err, sizeof(err));
    if (t == NULL)
        fprintf(stderr, "load failed: %s\n", err);
    free(b->text);
    free(b->scratch);
    return t;
}

/* ---------------------------------------------------------------- */
/* format                                                             */
/* ---------------------------------------------------------------- */

static void test_escape_round_trips_every_byte(void)
{
    char in[512], esc[2048], back[512];
    size_t n, blen;

    for (int i = 0; i < 512; i++)
        in[i] = (char)(i * 37 + 11);
    for (int i = 0; i < 256; i++)
        in[i] = (char)i;
    n = pg_escape(in, sizeof(in), esc);
    CU_ASSERT_TRUE(n < pg_escaped_max(sizeof(in)));
    CU_ASSERT_PTR_NULL(memchr(esc, '\n', n));
    CU_ASSERT_PTR_NULL(memchr(esc, '\r', n));
    CU_ASSERT_EQUAL(pg_unescape(esc, n, back, &blen), 0);
    CU_ASSERT_EQUAL(blen, sizeof(in));
    CU_ASSERT_EQUAL(memcmp(in, back, sizeof(in)), 0);
}

static void test_escape_keeps_messages_greppable(void)
{
    const char *m = "cmd=put kvsname=kvs_1_0 key=a\\b value=x y\n";
    char esc[256];

    pg_escape(m, strlen(m), esc);
    CU_ASSERT_STRING_EQUAL(esc, "cmd=put kvsname=kvs_1_0 key=a\\\\b value=x y\\n");
}

static void test_escape_protects_a_final_space(void)
{
    char esc[64], back[64];
    size_t n;

    pg_escape("14    cmd=x; ", 13, esc);
    CU_ASSERT_STRING_EQUAL(esc, "14    cmd=x;\\x20");
    CU_ASSERT_EQUAL(pg_unescape(esc, strlen(esc), back, &n), 0);
    CU_ASSERT_EQUAL(n, 13);
}

static void test_unescape_rejects_malformed_escapes(void)
{
    char out[16];
    size_t n;

    CU_ASSERT_EQUAL(pg_unescape("a\\q", 3, out, &n), -1);
    CU_ASSERT_EQUAL(pg_unescape("a\\x4", 4, out, &n), -1);
    CU_ASSERT_EQUAL(pg_unescape("a\\xzz", 5, out, &n), -1);
    CU_ASSERT_EQUAL(pg_unescape("abc\\", 4, out, &n), -1);
}

static void test_writer_and_reader_agree(void)
{
    tbuild_t b;
    pg_trace_t *t;

    tb_begin(&b, "kvs_42_0", 2);
    tb_msg(&b, 10, 0, 0, PG_PROTO_PMI2, 'C', "cmd=init pmi_version=2 pmi_subversion=0");
    tb_msg(&b, 12, 0, 0, PG_PROTO_PMI2, 'S', "cmd=response_to_init pmi_version=2 rc=0");
    tb_msg(&b, 20, 0, 0, PG_PROTO_PMI2, 'C', "cmd=kvs-put;key=k;value=a;;b;");
    t = tb_load(&b);
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->header.version, PG_TRACE_VERSION);
    CU_ASSERT_STRING_EQUAL(t->header.kvsname, "kvs_42_0");
    CU_ASSERT_EQUAL(t->header.size, 2);
    CU_ASSERT_STRING_EQUAL(t->header.cmdline, "pmigate run -n 4 ./app");
    CU_ASSERT_EQUAL(t->nevents, 3);
    CU_ASSERT_EQUAL(t->events[2].t_ns, 20000);
    CU_ASSERT_EQUAL(t->events[2].dir, PG_TRACE_C2S);
    CU_ASSERT_EQUAL(t->events[2].proto, PG_PROTO_PMI2);
    CU_ASSERT_EQUAL(t->events[2].cmd, PG_CMD_PMI2_KVS_PUT);
    CU_ASSERT_EQUAL(t->events[0].cmd, PG_CMD_PMI1_INIT);
    CU_ASSERT_EQUAL(t->events[2].len, strlen("29    cmd=kvs-put;key=k;value=a;;b;"));
    CU_ASSERT_EQUAL(memcmp(t->events[2].bytes, "29    cmd=kvs-put;key=k;value=a;;b;", 35), 0);
    CU_ASSERT_EQUAL(t->events[2].line, 4);
    pg_trace_free(t);
}

static void test_reader_learns_a_port_connections_rank(void)
{
    tbuild_t b;
    pg_trace_t *t;

    tb_begin(&b, "kvs_1_0", 4);
    tb_msg(&b, 1, 0, -1, PG_PROTO_PMI1, 'C', "cmd=init pmi_version=1 pmi_subversion=1");
    tb_msg(&b, 2, 0, -1, PG_PROTO_PMI1, 'S', "cmd=response_to_init rc=0");
    tb_msg(&b, 3, 0, 3, PG_PROTO_PMI1, 'C', "cmd=initack pmiid=3");
    tb_msg(&b, 4, 1, 1, PG_PROTO_PMI1, 'C', "cmd=init pmi_version=1 pmi_subversion=1");
    t = tb_load(&b);
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->nconns, 2);
    CU_ASSERT_EQUAL(t->events[0].rank, 3);
    CU_ASSERT_EQUAL(t->events[0].rank_as_recorded, -1);
    CU_ASSERT_EQUAL(t->conns[0].via_port, 1);
    CU_ASSERT_EQUAL(t->conns[1].via_port, 0);
    CU_ASSERT_EQUAL(t->conns[1].rank, 1);
    pg_trace_free(t);
}

/* Connection ids as recorded may have gaps (connections that never spoke)
 * and may be large; the tables are as big as the connections present, the
 * ids survive for display, and the analysis pairs each connection's own
 * messages (a fuzzed one-line trace naming connection 5555241 took seconds). */
static void test_reader_numbers_sparse_connections_densely(void)
{
    tbuild_t b;
    pg_trace_t *t;
    pg_trace_analysis_t *a;

    tb_begin(&b, "kvs_1_0", 2);
    tb_msg(&b, 1, 16000000, 1, PG_PROTO_PMI1, 'C', "cmd=get_maxes");
    tb_msg(&b, 2, 7, 0, PG_PROTO_PMI1, 'C', "cmd=get_maxes");
    tb_msg(&b, 3, 16000000, 1, PG_PROTO_PMI1, 'S', "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024");
    tb_msg(&b, 4, 7, 0, PG_PROTO_PMI1, 'S', "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024");
    t = tb_load(&b);
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->nconns, 2);
    CU_ASSERT_EQUAL(t->conns[0].id, 7);
    CU_ASSERT_EQUAL(t->conns[1].id, 16000000);
    CU_ASSERT_EQUAL(t->conns[1].rank, 1);
    CU_ASSERT_EQUAL(t->events[0].conn, 1);
    CU_ASSERT_EQUAL(t->events[0].conn_id, 16000000);
    CU_ASSERT_EQUAL(t->events[1].conn, 0);
    a = pg_trace_analyze(t);
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_EQUAL(a->reply_to[2], 0); /* each reply pairs with its own connection's request */
    CU_ASSERT_EQUAL(a->reply_to[3], 1);
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

/* load_fails TEXT WANT: the reader refuses TEXT with a message containing WANT. */
static void assert_load_fails(const char *text, const char *want)
{
    char err[256] = "";
    pg_trace_t *t = load_text(text, err, sizeof(err));

    CU_ASSERT_PTR_NULL(t);
    if (strstr(err, want) == NULL)
        fprintf(stderr, "\n  error was '%s', wanted '%s'\n", err, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
    pg_trace_free(t);
}

#define HDR "#pmigate-trace 1 kvsname=kvs_1_0 size=2 start=x cmdline=x\n"

static void test_reader_rejects_bad_input_with_the_line(void)
{
    assert_load_fails("", "empty file");
    assert_load_fails("hello\n", "not a pmigate trace");
    assert_load_fails("#pmigate-trace 9 kvsname=k size=1 start=x\n", "version 9 is newer");
    assert_load_fails("#pmigate-trace 1 size=1 start=x\n", "needs kvsname=");
    assert_load_fails(HDR "12 0 0 pmi1 C\n", "line 2: expected a direction");
    assert_load_fails(HDR "x 0 0 pmi1 C cmd=init\\n\n", "line 2: expected a time");
    assert_load_fails(HDR "5 0 0 pmi9 C cmd=init\\n\n", "line 2: unknown protocol 'pmi9'");
    assert_load_fails(HDR "5 0 0 pmi1 X cmd=init\\n\n", "line 2: expected a direction");
    assert_load_fails(HDR "5 0 0 pmi1 C cmd=init\\q\n", "line 2: malformed escape");
    assert_load_fails(HDR "# note\n9 0 0 pmi1 C a\\n\n5 0 0 pmi1 S b\\n\n",
                      "line 4: time goes backwards");
}

/* A proxy's trace names its node (pmigate proxy --trace); a single-node
 * header has no node= and reads as nnodes 0. */
static void test_a_node_trace_names_its_node(void)
{
    pg_trace_header_t h = { .size = 8, .node = 1, .nnodes = 4, .cmdline = "pmigate proxy -n 8 a" };
    char buf[512] = "", err[256] = "";
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    pg_trace_t *t;

    CU_ASSERT_FATAL(f != NULL);
    snprintf(h.kvsname, sizeof(h.kvsname), "kvs_7_0");
    snprintf(h.host, sizeof(h.host), "vm-n1");
    CU_ASSERT_EQUAL(pg_trace_write_header(f, &h), 0);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " node=1 nnodes=4 host=vm-n1 cmdline="));
    t = load_text(buf, err, sizeof(err));
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->header.node, 1);
    CU_ASSERT_EQUAL(t->header.nnodes, 4);
    CU_ASSERT_STRING_EQUAL(t->header.host, "vm-n1");
    CU_ASSERT_STRING_EQUAL(t->header.cmdline, "pmigate proxy -n 8 a");
    pg_trace_free(t);
    t = load_text(HDR, err, sizeof(err));
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->header.nnodes, 0);
    pg_trace_free(t);
    assert_load_fails("#pmigate-trace 1 kvsname=k size=1 start=x node=4 nnodes=4 host=h\n",
                      "node= needs nnodes= above it");
    assert_load_fails("#pmigate-trace 1 kvsname=k size=1 start=x node=1 host=h\n",
                      "node= needs nnodes= above it");
}

static void test_reader_skips_comments_and_keeps_garbage_messages(void)
{
    char err[256];
    pg_trace_t *t = load_text(HDR "# a note\n\n5 0 0 pmi1 C \\x01\\x02garbage\n", err, sizeof(err));

    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->nevents, 1);
    CU_ASSERT_EQUAL(t->events[0].cmd, PG_CMD_UNKNOWN);
    CU_ASSERT_STRING_EQUAL(pg_trace_event_name(&t->events[0]), "?");
    pg_trace_free(t);
}

/* ---------------------------------------------------------------- */
/* analysis                                                           */
/* ---------------------------------------------------------------- */

/* Three ranks, two barriers.  Barrier 0: ranks enter at 100, 110, 400 us
 * (rank 2 last), released at 405..410.  Barrier 1: rank 1 enters last. */
static pg_trace_t *three_rank_job(void)
{
    tbuild_t b;

    tb_begin(&b, "kvs_7_0", 3);
    for (int r = 0; r < 3; r++)
        tb_pair(&b, 10 + 3 * r, 11 + 3 * r, r, "cmd=init pmi_version=1 pmi_subversion=1",
                "cmd=response_to_init rc=0");
    tb_pair(&b, 50, 52, 0, "cmd=put kvsname=kvs_7_0 key=k0 value=v", "cmd=put_result rc=0");
    tb_msg(&b, 100, 0, 0, PG_PROTO_PMI1, 'C', "cmd=barrier_in");
    tb_msg(&b, 110, 1, 1, PG_PROTO_PMI1, 'C', "cmd=barrier_in");
    tb_msg(&b, 400, 2, 2, PG_PROTO_PMI1, 'C', "cmd=barrier_in");
    for (int r = 0; r < 3; r++)
        tb_msg(&b, 405 + r * 2, r, r, PG_PROTO_PMI1, 'S', "cmd=barrier_out rc=0");
    tb_pair(&b, 420, 423, 2, "cmd=get kvsname=kvs_7_0 key=k0", "cmd=get_result rc=0 value=v");
    tb_msg(&b, 430, 0, 0, PG_PROTO_PMI1, 'C', "cmd=barrier_in");
    tb_msg(&b, 440, 2, 2, PG_PROTO_PMI1, 'C', "cmd=barrier_in");
    tb_msg(&b, 900, 1, 1, PG_PROTO_PMI1, 'C', "cmd=barrier_in");
    for (int r = 0; r < 3; r++)
        tb_msg(&b, 950, r, r, PG_PROTO_PMI1, 'S', "cmd=barrier_out rc=0");
    for (int r = 0; r < 3; r++)
        tb_pair(&b, 960 + 2 * r, 961 + 2 * r, r, "cmd=finalize", "cmd=finalize_ack rc=0");
    return tb_load(&b);
}

static void test_fences_last_rank_and_duration(void)
{
    pg_trace_t *t = three_rank_job();
    pg_trace_analysis_t *a;

    CU_ASSERT_FATAL(t != NULL);
    a = pg_trace_analyze(t);
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_EQUAL(a->nranks, 3);
    CU_ASSERT_EQUAL_FATAL(a->nfences, 2);
    CU_ASSERT_EQUAL(a->fences[0].entered, 3);
    CU_ASSERT_EQUAL(a->fences[0].released, 3);
    CU_ASSERT_EQUAL(a->fences[0].last_rank, 2);
    CU_ASSERT_EQUAL(a->fences[0].first_entry, 100000);
    CU_ASSERT_EQUAL(a->fences[0].last_release, 409000);
    CU_ASSERT_EQUAL(a->fences[0].entry[1], 110000);
    CU_ASSERT_EQUAL(a->fences[1].last_rank, 1);
    CU_ASSERT_EQUAL(a->fences[1].cmd, PG_CMD_PMI1_BARRIER_IN);
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

static void test_requests_are_counted_with_their_waits(void)
{
    pg_trace_t *t = three_rank_job();
    pg_trace_analysis_t *a = pg_trace_analyze(t);

    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_EQUAL(a->cmds[PG_CMD_PMI1_BARRIER_IN].requests, 6);
    CU_ASSERT_EQUAL(a->cmds[PG_CMD_PMI1_BARRIER_IN].answered, 6);
    /* rank 0 waited 520 us in the second barrier: the longest */
    CU_ASSERT_EQUAL(a->cmds[PG_CMD_PMI1_BARRIER_IN].max_wait, 520000);
    CU_ASSERT_EQUAL(a->cmds[PG_CMD_PMI1_GET].requests, 1);
    CU_ASSERT_EQUAL(a->cmds[PG_CMD_PMI1_GET].total_wait, 3000);
    CU_ASSERT_EQUAL(a->cmds[PG_CMD_PMI1_INIT].requests, 3);
    CU_ASSERT_EQUAL(a->unknown_requests, 0);
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

static void test_stats_name_the_slowest_rank(void)
{
    pg_trace_t *t = three_rank_job();
    pg_trace_analysis_t *a = pg_trace_analyze(t);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);

    pg_trace_print_stats(a, f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "rank 2 (+300.0 us), rank 1 (+10.0 us), rank 0 (+0 ns)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "309.0 us")); /* barrier 0: 100 -> 409 us */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "barrier_in"));
    free(out);
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

static void test_initack_set_lines_and_abort_pair_correctly(void)
{
    tbuild_t b;
    pg_trace_t *t;
    pg_trace_analysis_t *a;

    tb_begin(&b, "kvs_1_0", 1);
    tb_msg(&b, 1, 0, -1, PG_PROTO_PMI1, 'C', "cmd=initack pmiid=0");
    tb_msg(&b, 2, 0, 0, PG_PROTO_PMI1, 'S', "cmd=initack rc=0");
    tb_msg(&b, 2, 0, 0, PG_PROTO_PMI1, 'S', "cmd=set size=1");
    tb_msg(&b, 2, 0, 0, PG_PROTO_PMI1, 'S', "cmd=set rank=0");
    tb_msg(&b, 5, 0, 0, PG_PROTO_PMI1, 'C', "cmd=get_maxes");
    tb_msg(&b, 7, 0, 0, PG_PROTO_PMI1, 'S', "cmd=maxes rc=0");
    tb_msg(&b, 9, 0, 0, PG_PROTO_PMI1, 'C', "cmd=abort exitcode=3");
    t = tb_load(&b);
    a = pg_trace_analyze(t);
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_EQUAL_FATAL(a->nspans, 3);
    CU_ASSERT_EQUAL(a->spans[0].rep, 1);
    CU_ASSERT_EQUAL(a->spans[1].rep, 5); /* get_maxes -> maxes, not a "set" line */
    CU_ASSERT_EQUAL(a->spans[2].rep, PG_TRACE_NONE);
    CU_ASSERT_EQUAL(a->spans[2].phase, PG_TRACE_PHASE_ABORT);
    CU_ASSERT_EQUAL(a->reply_to[2], PG_TRACE_NONE);
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

static void test_a_fence_nobody_released_shows_as_a_hang(void)
{
    tbuild_t b;
    pg_trace_t *t;
    pg_trace_analysis_t *a;

    tb_begin(&b, "kvs_1_0", 2);
    tb_msg(&b, 10, 0, 0, PG_PROTO_PMI2, 'C', "cmd=kvs-fence;");
    tb_msg(&b, 500, 1, 1, PG_PROTO_PMI2, 'C', "cmd=job-getid;");
    t = tb_load(&b);
    a = pg_trace_analyze(t);
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_EQUAL(a->nfences, 1);
    CU_ASSERT_EQUAL(a->fences[0].entered, 1);
    CU_ASSERT_EQUAL(a->fences[0].released, 0);
    CU_ASSERT_EQUAL(a->spans[0].end, 500000); /* waits to the end of the trace */
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

static void test_show_filters_by_rank_and_command(void)
{
    pg_trace_t *t = three_rank_job();
    pg_trace_analysis_t *a = pg_trace_analyze(t);
    pg_trace_show_opts_t o = { .rank = 2, .cmd = "barrier_in" };
    FILE *devnull = fopen("/dev/null", "w");

    CU_ASSERT_EQUAL(pg_trace_show(a, &o, devnull), 4); /* 2 barrier_in + 2 barrier_out */
    o.cmd = "GET";
    CU_ASSERT_EQUAL(pg_trace_show(a, &o, devnull), 2);
    o.rank = -1;
    o.cmd = NULL;
    CU_ASSERT_EQUAL(pg_trace_show(a, &o, devnull), t->nevents);
    fclose(devnull);
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_timeline_has_a_row_per_rank_and_marks_the_holder(void)
{
    pg_trace_t *t = three_rank_job();
    pg_trace_analysis_t *a = pg_trace_analyze(t);
    char *svg = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&svg, &len);

    CU_ASSERT_EQUAL(pg_trace_svg_write(a, f), 0);
    fclose(f);
    CU_ASSERT_EQUAL(count(svg, "\">rank "), 3);
    CU_ASSERT_EQUAL(count(svg, "<svg "), 1);
    CU_ASSERT_EQUAL(count(svg, "</svg>"), 1);
    CU_ASSERT_EQUAL(count(svg, "entered last</title>"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, "fence #0: rank 2 entered last"));
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, "fence #1: rank 1 entered last"));
    CU_ASSERT_PTR_NULL(strstr(svg, "http://www.w3.org/1999/xlink")); /* nothing external */
    free(svg);
    pg_trace_analysis_free(a);
    pg_trace_free(t);
}

/* ---------------------------------------------------------------- */
/* replay message rules                                               */
/* ---------------------------------------------------------------- */

static void test_rewrite_substitutes_kvsname_and_keeps_pmi2_alignment(void)
{
    pg_replay_map_t m = { .old_kvs = "kvs_12345_0", .new_kvs = "kvs_9_0" };
    const char *slurm = "59    cmd=fullinit;pmijobid=kvs_12345_0;pmirank=0;threaded=FALSE;";
    const char *hydra = "    44cmd=kvs-get;jobid=kvs_12345_0;srcid=1;key=a;";
    const char *pmi1 = "cmd=get kvsname=kvs_12345_0 key=k\n";
    char *out;
    size_t len;

    CU_ASSERT_EQUAL_FATAL(pg_replay_rewrite(&m, slurm, strlen(slurm), &out, &len), 0);
    CU_ASSERT_EQUAL(len, strlen(slurm) - 4);
    CU_ASSERT_EQUAL(memcmp(out, "55    cmd=fullinit;pmijobid=kvs_9_0;pmirank=0;", 46), 0);
    free(out);
    CU_ASSERT_EQUAL_FATAL(pg_replay_rewrite(&m, hydra, strlen(hydra), &out, &len), 0);
    CU_ASSERT_EQUAL(memcmp(out, "    40cmd=kvs-get;jobid=kvs_9_0;", 32), 0);
    free(out);
    CU_ASSERT_EQUAL_FATAL(pg_replay_rewrite(&m, pmi1, strlen(pmi1), &out, &len), 0);
    CU_ASSERT_EQUAL(len, strlen("cmd=get kvsname=kvs_9_0 key=k\n"));
    CU_ASSERT_EQUAL(memcmp(out, "cmd=get kvsname=kvs_9_0 key=k\n", len), 0);
    free(out);
}

static void test_rewrite_renames_ranks_for_a_copy(void)
{
    pg_replay_map_t m = { .old_kvs = "kvs_1_0", .new_kvs = "kvs_2_0", .nrec = 2,
                          .block_base = 6 };
    const char *put = "cmd=put kvsname=kvs_1_0 key=-bcast-1-1 value=abc\n";
    const char *get = "45    cmd=kvs-get;jobid=kvs_1_0;srcid=0;key=card-0;";
    const char *other = "cmd=get kvsname=kvs_1_0 key=PMI_process_mapping\n";
    char *out;
    size_t len;

    CU_ASSERT_EQUAL_FATAL(pg_replay_rewrite(&m, put, strlen(put), &out, &len), 0);
    CU_ASSERT_EQUAL(len, strlen("cmd=put kvsname=kvs_2_0 key=-bcast-1-7 value=abc\n"));
    CU_ASSERT_EQUAL(memcmp(out, "cmd=put kvsname=kvs_2_0 key=-bcast-1-7 value=abc\n", len), 0);
    free(out);
    CU_ASSERT_EQUAL_FATAL(pg_replay_rewrite(&m, get, strlen(get), &out, &len), 0);
    CU_ASSERT_PTR_NOT_NULL(memmem(out, len, "srcid=6;key=card-6;", 19));
    free(out);
    CU_ASSERT_EQUAL_FATAL(pg_replay_rewrite(&m, other, strlen(other), &out, &len), 0);
    CU_ASSERT_PTR_NOT_NULL(memmem(out, len, "key=PMI_process_mapping", 23));
    free(out);
}

static void test_compare_ignores_volatile_fields_only(void)
{
    pg_replay_map_t m = { .old_kvs = "kvs_1_0", .new_kvs = "kvs_22_0" };
    const char *exp = "cmd=my_kvsname rc=0 kvsname=kvs_1_0\n";
    const char *got = "cmd=my_kvsname rc=0 kvsname=kvs_22_0\n";
    const char *exp2 = "    52cmd=job-getid-response;rc=0;jobid=kvs_5_0;thrid=0x1;";
    const char *got2 = "    53cmd=job-getid-response;jobid=kvs_66_0;rc=0;thrid=0x2;";
    char why[256];

    CU_ASSERT_EQUAL(pg_replay_compare(&m, exp, strlen(exp), got, strlen(got), 0, why,
                                      sizeof(why)), 0);
    CU_ASSERT_EQUAL(pg_replay_compare(&m, exp2, strlen(exp2), got2, strlen(got2), 0, why,
                                      sizeof(why)), 0);
}

static void test_compare_names_the_first_difference(void)
{
    pg_replay_map_t m = { 0 };
    const char *exp = "cmd=get_result rc=0 msg=success value=abc\n";
    char why[256];

    CU_ASSERT_EQUAL(pg_replay_compare(&m, exp, strlen(exp), "cmd=get_result rc=0 msg=success value=abd\n",
                                      42, 0, why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "value: expected 'abc', got 'abd'");
    CU_ASSERT_EQUAL(pg_replay_compare(&m, exp, strlen(exp), "cmd=get_result rc=0 msg=success\n",
                                      32, 0, why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "value: expected 'abc', got nothing");
    CU_ASSERT_EQUAL(pg_replay_compare(&m, exp, strlen(exp), "cmd=barrier_out rc=0\n", 21, 0,
                                      why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "command: expected 'get_result', got 'barrier_out'");
    CU_ASSERT_EQUAL(pg_replay_compare(&m, exp, strlen(exp),
                                      "cmd=get_result rc=0 msg=success value=abc x=1\n", 46, 0,
                                      why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "unexpected key x = '1'");
}

static void test_lenient_compare_checks_rc_and_found(void)
{
    pg_replay_map_t m = { 0 };
    const char *exp = "cmd=get_result rc=0 value=abc\n";
    char why[256];

    CU_ASSERT_EQUAL(pg_replay_compare(&m, exp, strlen(exp), "cmd=get_result rc=0 value=xyz\n",
                                      30, 1, why, sizeof(why)), 0);
    CU_ASSERT_EQUAL(pg_replay_compare(&m, exp, strlen(exp), "cmd=get_result rc=-1 value=abc\n",
                                      31, 1, why, sizeof(why)), 1);
    CU_ASSERT_STRING_EQUAL(why, "rc: expected '0', got '-1'");
}

/* Records: what the writer says, the reader reads back, in place among
 * the messages; an unknown kind is a comment; a bad known one an error. */
static void test_records_round_trip_among_the_messages(void)
{
    char buf[1024] = "", err[256] = "", *scratch = NULL;
    size_t cap = 0;
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    pg_trace_t *t;

    CU_ASSERT_FATAL(f != NULL);
    fputs(HDR "5 0 0 pmi1 C cmd=init\\n\n", f);
    CU_ASSERT_EQUAL(pg_trace_write_exit(f, 6, 1, 11, 0), 0);       /* killed by SIGSEGV */
    CU_ASSERT_EQUAL(pg_trace_write_exit(f, 7, 0, 3 << 8, 1), 0);    /* exit 3, in teardown */
    CU_ASSERT_EQUAL(pg_trace_write_xfence(f, 8, 2, 1, "a b\n\x01", 5, &scratch, &cap), 0);
    CU_ASSERT_EQUAL(pg_trace_write_xfence(f, 8, 3, -1, NULL, 0, &scratch, &cap), 0);
    fputs("#! 9 future-kind x=1\n", f);
    CU_ASSERT_EQUAL(pg_trace_write_end(f, 10, 139, 0), 0);
    fclose(f);
    free(scratch);
    t = load_text(buf, err, sizeof(err));
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->nevents, 1);
    CU_ASSERT_EQUAL_FATAL(t->nrecords, 5);
    CU_ASSERT_EQUAL(t->records[0].kind, PG_TRACE_REC_EXIT);
    CU_ASSERT_EQUAL(t->records[0].rank, 1);
    CU_ASSERT_EQUAL(t->records[0].signal, 11);
    CU_ASSERT_EQUAL(t->records[0].before, 1);
    CU_ASSERT_EQUAL(t->records[1].code, 3);
    CU_ASSERT_EQUAL(t->records[1].teardown, 1);
    CU_ASSERT_EQUAL(t->records[2].kind, PG_TRACE_REC_XFENCE);
    CU_ASSERT_EQUAL(t->records[2].fence, 2);
    CU_ASSERT_EQUAL(t->records[2].node, 1);
    CU_ASSERT_EQUAL_FATAL(t->records[2].len, 5);
    CU_ASSERT_EQUAL(memcmp(t->records[2].blob, "a b\n\x01", 5), 0);
    CU_ASSERT_EQUAL(t->records[3].node, -1);
    CU_ASSERT_EQUAL(t->records[4].kind, PG_TRACE_REC_END);
    CU_ASSERT_EQUAL(t->records[4].status, 139);
    CU_ASSERT_EQUAL(t->records[4].line, 8);
    CU_ASSERT_EQUAL(t->cut_line, 0);
    pg_trace_free(t);
    assert_load_fails(HDR "#! 5 exit rank=1\n", "line 2: an exit record needs code= or signal=");
    assert_load_fails(HDR "#! 5 end status=1 maybe\n", "line 2: an end record ends in 'maybe'");
    assert_load_fails(HDR "9 0 0 pmi1 C a\\n\n#! 5 end status=0\n", "line 3: time goes backwards");
}

/* A file cut in the middle of a line (the writer died) is read up to its
 * last whole line, and says where it was cut; cut inside the header it is
 * nothing. */
static void test_a_cut_trace_keeps_its_whole_lines(void)
{
    char err[256] = "";
    pg_trace_t *t = load_text(HDR "5 0 0 pmi1 C cmd=init\\n\n6 1 1 pmi1 C cmd=in", err, sizeof(err));

    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->nevents, 1);
    CU_ASSERT_EQUAL(t->cut_line, 3);
    pg_trace_free(t);
    /* a cut that breaks an escape or a field is no error either */
    t = load_text(HDR "5 0 0 pmi1 C cmd=init\\n\n6 1 1 pmi1 C \\x4", err, sizeof(err));
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->cut_line, 3);
    pg_trace_free(t);
    t = load_text(HDR "5 0 0 pmi1 C cmd=init\\n\n#! 6 exit ra", err, sizeof(err));
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_EQUAL(t->nrecords, 0);
    pg_trace_free(t);
    assert_load_fails("#pmigate-trace 1 kvsname=kv", "cut inside its header");
}

static const pg_cunit_test_t format_tests[] = {
    { "escaping round-trips every byte and leaves no line break", test_escape_round_trips_every_byte },
    { "printable messages stay greppable", test_escape_keeps_messages_greppable },
    { "a final space is escaped", test_escape_protects_a_final_space },
    { "malformed escapes are refused", test_unescape_rejects_malformed_escapes },
    { "the writer and the reader agree", test_writer_and_reader_agree },
    { "a PMI_PORT connection's rank is learned", test_reader_learns_a_port_connections_rank },
    { "sparse connection ids are numbered densely", test_reader_numbers_sparse_connections_densely },
    { "bad input is refused naming the line", test_reader_rejects_bad_input_with_the_line },
    { "comments skipped, unparseable messages kept", test_reader_skips_comments_and_keeps_garbage_messages },
    { "a proxy's trace names its node", test_a_node_trace_names_its_node },
    { "records round-trip among the messages", test_records_round_trip_among_the_messages },
    { "a cut trace keeps its whole lines", test_a_cut_trace_keeps_its_whole_lines },
    { NULL, NULL },
};

static const pg_cunit_test_t analysis_tests[] = {
    { "fences: who entered last, first entry to last release", test_fences_last_rank_and_duration },
    { "requests counted with their waits", test_requests_are_counted_with_their_waits },
    { "stats name the slowest ranks into a fence", test_stats_name_the_slowest_rank },
    { "initack set lines and abort do not shift pairing", test_initack_set_lines_and_abort_pair_correctly },
    { "an unreleased fence waits to the end of the trace", test_a_fence_nobody_released_shows_as_a_hang },
    { "show filters by rank and by command with its replies", test_show_filters_by_rank_and_command },
    { "timeline: one row per rank, the holder marked", test_timeline_has_a_row_per_rank_and_marks_the_holder },
    { NULL, NULL },
};

/* The gateway traces an over-long message as its head; the replay sends
 * it whole again, with the head it had. */
static void test_rewrite_completes_an_oversized_head(void)
{
    pg_replay_map_t m = { .old_kvs = "kvs_1_0", .new_kvs = "kvs_99_0" };
    char head[64];
    char *out = NULL;
    size_t len = 0;

    snprintf(head, sizeof(head), " 70000cmd=kvs-put;key=k;value=vvvv");
    CU_ASSERT_EQUAL(pg_replay_rewrite(&m, head, strlen(head), &out, &len), 0);
    CU_ASSERT_EQUAL(len, 70006);
    CU_ASSERT_EQUAL(memcmp(out, head, strlen(head)), 0);
    free(out);
    CU_ASSERT_EQUAL(pg_replay_rewrite(&m, "cmd=put key=k value=vv", 22, &out, &len), 0);
    CU_ASSERT_TRUE(len > PG_PMI1_LINE_MAX && out[len - 1] == '\n' &&
                   memchr(out, '\n', len) == out + len - 1);
    free(out);
    CU_ASSERT_EQUAL(pg_replay_rewrite(&m, "mcmd=spawn\nnprocs=1\n", 20, &out, &len), 0);
    CU_ASSERT_TRUE(len > PG_PMI1_MCMD_MAX && memcmp(out + len - 8, "\nendcmd\n", 8) == 0);
    free(out);
    /* a whole message is not touched */
    CU_ASSERT_EQUAL(pg_replay_rewrite(&m, "cmd=put key=k value=vv\n", 23, &out, &len), 0);
    CU_ASSERT_EQUAL(len, 23);
    free(out);
}

static const pg_cunit_test_t replay_tests[] = {
    { "an over-long message's head is sent whole again", test_rewrite_completes_an_oversized_head },
    { "kvsname substituted, PMI-2 length alignment kept", test_rewrite_substitutes_kvsname_and_keeps_pmi2_alignment },
    { "--ranks copies rename ranks and key suffixes", test_rewrite_renames_ranks_for_a_copy },
    { "kvsname, jobid, thrid are not compared", test_compare_ignores_volatile_fields_only },
    { "the first difference is named", test_compare_names_the_first_difference },
    { "load mode compares rc and found only", test_lenient_compare_checks_rc_and_found },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "trace format", format_tests, NULL, NULL },
    { "trace analysis", analysis_tests, NULL, NULL },
    { "replay message rules", replay_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
