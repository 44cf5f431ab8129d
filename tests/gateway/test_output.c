/*
 * Unit tests for output forwarding (gateway/io/pg_output.c) through real pipes
 * and a real event loop: what a rank sent is made visible before pmigate
 * prints it as its own words; a last line without '\n' gets one; a line over
 * 64 KiB is cut into tagged lines; a reader that does not read makes the
 * forwarder stop reading its rank (bounded memory) and lose nothing once the
 * reader reads; lines of two ranks never mix when the reader takes a few
 * bytes at a time; a reader that is gone drops output but the ranks go on.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gateway/io/pg_output.h"
#include "tests/pg_cunit.h"

static char sanitized[256];

static const char *clean(const char *in, size_t cap)
{
    pg_output_sanitize(in, sanitized, cap);
    return sanitized;
}

static void test_sanitize(void)
{
    CU_ASSERT_STRING_EQUAL(clean("plain text", 256), "plain text");
    CU_ASSERT_STRING_EQUAL(clean("a\nb", 256), "a\\nb");
    CU_ASSERT_STRING_EQUAL(clean("\x1b[31mred\x1b[0m", 256), "\\x1b[31mred\\x1b[0m");
    CU_ASSERT_STRING_EQUAL(clean("\r\t\x07\x7f", 256), "\\r\\t\\x07\\x7f");
    /* UTF-8 stays, a C1 control (CSI, U+009B) and bytes that are not
     * UTF-8 do not; neither do overlong forms or a cut sequence */
    CU_ASSERT_STRING_EQUAL(clean("caf\xc3\xa9 \xe2\x80\xa6", 256), "caf\xc3\xa9 \xe2\x80\xa6");
    CU_ASSERT_STRING_EQUAL(clean("\xc2\x9b" "2J", 256), "\\xc2\\x9b2J");
    CU_ASSERT_STRING_EQUAL(clean("\xff\xc0\xaf", 256), "\\xff\\xc0\\xaf");
    CU_ASSERT_STRING_EQUAL(clean("end\xe2\x82", 256), "end\\xe2\\x82");
    /* cut before an escape that does not fit, never inside it */
    CU_ASSERT_STRING_EQUAL(clean("ab\ncd", 4), "ab");
    CU_ASSERT_STRING_EQUAL(clean("ab\ncd", 5), "ab\\n");
    CU_ASSERT_EQUAL(pg_output_sanitize("x", sanitized, 1), 0);
    CU_ASSERT_STRING_EQUAL(sanitized, "");
}

/* ---- a rank's pipe -> forwarder -> sink -> the reader's pipe ---- */

typedef struct rig {
    struct event_base *base;
    int src[2];     /* the rank writes src[1] */
    int dst[2];     /* pmigate's "stdout" is dst[1]; the reader reads dst[0] */
    pg_sink_t *sink;
    char *got;      /* what the reader read */
    size_t got_len;
} rig_t;

static void rig_open(rig_t *r, int dst_pipe_size)
{
    memset(r, 0, sizeof(*r));
    r->base = event_base_new();
    CU_ASSERT_FATAL(r->base != NULL);
    CU_ASSERT_FATAL(pipe2(r->src, O_CLOEXEC) == 0 && pipe2(r->dst, O_CLOEXEC) == 0);
    (void)fcntl(r->src[1], F_SETPIPE_SZ, 1 << 20); /* the rank writes without blocking */
    (void)fcntl(r->dst[1], F_SETPIPE_SZ, dst_pipe_size);
    (void)fcntl(r->dst[0], F_SETFL, O_NONBLOCK);
    r->sink = pg_sink_new(r->base, r->dst[1]);
    CU_ASSERT_FATAL(r->sink != NULL);
}

static void rig_close(rig_t *r)
{
    pg_sink_free(r->sink);
    if (r->src[1] >= 0)
        close(r->src[1]);
    close(r->dst[0]);
    close(r->dst[1]);
    event_base_free(r->base);
    free(r->got);
}

static void spin(rig_t *r, int turns)
{
    for (int i = 0; i < turns; i++)
        event_base_loop(r->base, EVLOOP_NONBLOCK);
}

/* The reader takes up to max bytes; returns how many it got. */
static size_t reader_take(rig_t *r, size_t max)
{
    char buf[65536];
    size_t want = max < sizeof(buf) ? max : sizeof(buf);
    ssize_t n = read(r->dst[0], buf, want);

    if (n <= 0)
        return 0;
    r->got = realloc(r->got, r->got_len + (size_t)n + 1);
    CU_ASSERT_FATAL(r->got != NULL);
    memcpy(r->got + r->got_len, buf, (size_t)n);
    r->got_len += (size_t)n;
    r->got[r->got_len] = '\0';
    return (size_t)n;
}

/* Reads, chunk bytes at a time, and runs the loop until nothing moves. */
static void reader_drain(rig_t *r, size_t chunk)
{
    int idle = 0;

    while (idle < 50) {
        size_t n = reader_take(r, chunk);

        spin(r, 2);
        idle = n == 0 ? idle + 1 : 0;
    }
}

static void rank_writes(rig_t *r, const char *bytes, size_t len)
{
    CU_ASSERT_FATAL(write(r->src[1], bytes, len) == (ssize_t)len);
}

static void rank_exits(rig_t *r)
{
    close(r->src[1]);
    r->src[1] = -1;
}

static void test_partial_line_gets_newline(void)
{
    rig_t r;
    pg_output_t *out;

    rig_open(&r, 65536);
    out = pg_output_new(r.base, r.src[0], r.sink, 3);
    CU_ASSERT_FATAL(out != NULL);
    rank_writes(&r, "one\ntwo", 7);
    rank_exits(&r);
    reader_drain(&r, 65536);
    CU_ASSERT_STRING_EQUAL(r.got, "[3] one\n[3] two\n");
    CU_ASSERT_TRUE(pg_output_finished(out));
    pg_output_free(out);
    rig_close(&r);
}

/* "[3] " + 65536 x + "\n" + "[3+] " + rest + "\n", and untagged the same
 * without tags. */
static void check_cut(int rank, const char *tag, const char *cont)
{
    enum { LEN = PG_OUTPUT_LINE_MAX + 5000 };
    char *line = malloc(LEN + 1), *want = malloc(2 * LEN);
    size_t w = 0;
    pg_output_t *out;
    rig_t r;

    CU_ASSERT_FATAL(line != NULL && want != NULL);
    memset(line, 'x', LEN);
    line[LEN] = '\n';
    w += (size_t)sprintf(want + w, "%s", tag);
    memset(want + w, 'x', PG_OUTPUT_LINE_MAX);
    w += PG_OUTPUT_LINE_MAX;
    w += (size_t)sprintf(want + w, "\n%s", cont);
    memset(want + w, 'x', LEN - PG_OUTPUT_LINE_MAX);
    w += LEN - PG_OUTPUT_LINE_MAX;
    want[w++] = '\n';
    rig_open(&r, 1 << 20);
    out = pg_output_new(r.base, r.src[0], r.sink, rank);
    CU_ASSERT_FATAL(out != NULL);
    rank_writes(&r, line, LEN + 1);
    rank_exits(&r);
    reader_drain(&r, 65536);
    CU_ASSERT_EQUAL(r.got_len, w);
    CU_ASSERT_TRUE(r.got_len == w && memcmp(r.got, want, w) == 0);
    pg_output_free(out);
    rig_close(&r);
    free(line);
    free(want);
}

static void test_long_line_is_cut_and_tagged(void)
{
    check_cut(3, "[3] ", "[3+] ");
    check_cut(-1, "", "");
}

static void test_cut_never_splits_utf8(void)
{
    enum { LEN = PG_OUTPUT_LINE_MAX + 10 };
    char *line = malloc(LEN);
    pg_output_t *out;
    rig_t r;

    CU_ASSERT_FATAL(line != NULL);
    memset(line, 'x', LEN);
    memcpy(line + PG_OUTPUT_LINE_MAX - 1, "\xe2\x80\xa6", 3); /* … across the 64 KiB mark */
    line[LEN - 1] = '\n';
    rig_open(&r, 1 << 20);
    out = pg_output_new(r.base, r.src[0], r.sink, -1);
    CU_ASSERT_FATAL(out != NULL);
    rank_writes(&r, line, LEN);
    rank_exits(&r);
    reader_drain(&r, 65536);
    CU_ASSERT_EQUAL(r.got_len, LEN + 1);
    /* the first piece ends before the character, the second starts with it */
    CU_ASSERT_TRUE(r.got_len == LEN + 1 && r.got[PG_OUTPUT_LINE_MAX - 1] == '\n' &&
                   memcmp(r.got + PG_OUTPUT_LINE_MAX, "\xe2\x80\xa6", 3) == 0);
    pg_output_free(out);
    rig_close(&r);
    free(line);
}

static int pipe_holds(int fd)
{
    int n = 0;

    return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

/* 1 MiB of numbered lines, reader asleep: the forwarder stops reading once
 * its share is queued, the rest waits in the rank's pipe; once the reader
 * reads, every line arrives in order. */
static void test_stalled_reader_back_pressure(void)
{
    enum { LINES = 100000 };
    char *text = malloc(LINES * 12), *p = text;
    pg_output_t *out;
    rig_t r;

    CU_ASSERT_FATAL(text != NULL);
    for (int i = 0; i < LINES; i++)
        p += sprintf(p, "%d\n", i);
    rig_open(&r, 4096);
    out = pg_output_new(r.base, r.src[0], r.sink, -1);
    CU_ASSERT_FATAL(out != NULL);
    rank_writes(&r, text, (size_t)(p - text));
    spin(&r, 200);
    CU_ASSERT(pg_sink_queued(r.sink) > 0);
    CU_ASSERT(pg_sink_queued(r.sink) < PG_OUTPUT_RANK_QUEUE + PG_OUTPUT_LINE_MAX);
    /* not read: pushed back on the rank */
    CU_ASSERT(pipe_holds(r.src[0]) > (int)(p - text) - 3 * PG_OUTPUT_LINE_MAX);
    CU_ASSERT(pg_sink_stalled_ns(r.sink, (uint64_t)-1 / 2) > 0);
    rank_exits(&r);
    reader_drain(&r, 65536);
    CU_ASSERT_EQUAL(r.got_len, (size_t)(p - text));
    CU_ASSERT_TRUE(r.got_len == (size_t)(p - text) && memcmp(r.got, text, r.got_len) == 0);
    CU_ASSERT_EQUAL(pg_sink_queued(r.sink), 0);
    pg_output_free(out);
    rig_close(&r);
    free(text);
}

/* Many ranks flooding a stalled reader: together they stop at the sink's
 * bound, not at their own bounds added up; all arrives once read. */
static void test_sink_bound_holds_every_rank(void)
{
    enum { RANKS = 160, BYTES = 100000 };
    static char text[BYTES];
    pg_output_t *outs[RANKS];
    int src[RANKS][2];
    rig_t r;
    size_t bound = PG_OUTPUT_SINK_QUEUE + 2 * PG_OUTPUT_LINE_MAX;

    memset(text, 'q', sizeof(text));
    for (size_t i = 99; i < sizeof(text); i += 100)
        text[i] = '\n';
    rig_open(&r, 1 << 20); /* a stalled reader all the same: fewer rounds to drain */
    for (int i = 0; i < RANKS; i++) {
        CU_ASSERT_FATAL(pipe2(src[i], O_CLOEXEC) == 0);
        (void)fcntl(src[i][1], F_SETPIPE_SZ, 1 << 17);
        outs[i] = pg_output_new(r.base, src[i][0], r.sink, -1);
        CU_ASSERT_FATAL(outs[i] != NULL);
        CU_ASSERT_FATAL(write(src[i][1], text, sizeof(text)) == (ssize_t)sizeof(text));
        close(src[i][1]);
    }
    spin(&r, 50);
    CU_ASSERT(pg_sink_queued(r.sink) >= PG_OUTPUT_SINK_QUEUE);
    CU_ASSERT(pg_sink_queued(r.sink) <= bound);
    reader_drain(&r, 65536);
    CU_ASSERT_EQUAL(r.got_len, (size_t)RANKS * BYTES);
    for (int i = 0; i < RANKS; i++) {
        CU_ASSERT_TRUE(pg_output_finished(outs[i]));
        pg_output_free(outs[i]);
    }
    rig_close(&r);
}

/* Two ranks' 3000-byte lines through a reader taking 700 bytes at a time:
 * the sink's writes end mid-line, and no other line starts before it ends. */
static void test_short_writes_never_mix_lines(void)
{
    enum { LEN = 3000, LINES = 40 };
    int src2[2];
    char line[LEN + 1];
    pg_output_t *a, *b;
    rig_t r;

    rig_open(&r, 4096);
    CU_ASSERT_FATAL(pipe2(src2, O_CLOEXEC) == 0);
    (void)fcntl(src2[1], F_SETPIPE_SZ, 1 << 20);
    a = pg_output_new(r.base, r.src[0], r.sink, 0);
    b = pg_output_new(r.base, src2[0], r.sink, 1);
    CU_ASSERT_FATAL(a != NULL && b != NULL);
    for (int i = 0; i < LINES; i++) {
        memset(line, 'a', LEN);
        line[LEN] = '\n';
        rank_writes(&r, line, LEN + 1);
        memset(line, 'b', LEN);
        CU_ASSERT_FATAL(write(src2[1], line, LEN + 1) == LEN + 1);
    }
    rank_exits(&r);
    close(src2[1]);
    reader_drain(&r, 700);
    CU_ASSERT_EQUAL(r.got_len, 2 * LINES * (LEN + 5));
    for (char *l = r.got, *nl; l < r.got + r.got_len; l = nl + 1) {
        nl = memchr(l, '\n', r.got_len - (size_t)(l - r.got));
        CU_ASSERT_FATAL(nl != NULL && nl - l == LEN + 4);
        CU_ASSERT_TRUE((memcmp(l, "[0] ", 4) == 0 && strspn(l + 4, "a") == LEN) ||
                       (memcmp(l, "[1] ", 4) == 0 && strspn(l + 4, "b") == LEN));
    }
    pg_output_free(a);
    pg_output_free(b);
    rig_close(&r);
}

/* Nobody will ever read (the read end is closed): the output is dropped,
 * and the rank is read on, so it never blocks. */
static void test_gone_reader_drops_output(void)
{
    static char text[512 * 1024];
    pg_output_t *out;
    rig_t r;

    memset(text, 'z', sizeof(text));
    text[sizeof(text) - 1] = '\n';
    rig_open(&r, 4096);
    out = pg_output_new(r.base, r.src[0], r.sink, -1);
    CU_ASSERT_FATAL(out != NULL);
    close(r.dst[0]);
    r.dst[0] = open("/dev/null", O_RDONLY); /* for rig_close */
    rank_writes(&r, text, sizeof(text));
    rank_exits(&r);
    spin(&r, 200);
    CU_ASSERT_TRUE(pg_output_finished(out));
    CU_ASSERT_EQUAL(pg_sink_queued(r.sink), 0);
    pg_output_free(out);
    rig_close(&r);
}

/* pg_output_finish forwards what the pipe holds now and stops, even while
 * a descendant keeps the pipe open; the unfinished line gets its '\n'. */
static void test_finish_does_not_wait_for_writers(void)
{
    pg_output_t *out;
    rig_t r;

    rig_open(&r, 65536);
    out = pg_output_new(r.base, r.src[0], r.sink, -1);
    CU_ASSERT_FATAL(out != NULL);
    rank_writes(&r, "last\nwords", 10); /* src[1] stays open */
    pg_output_finish(out);
    spin(&r, 20);
    CU_ASSERT_TRUE(pg_output_finished(out));
    reader_drain(&r, 65536);
    CU_ASSERT_STRING_EQUAL(r.got, "last\nwords\n");
    CU_ASSERT_EQUAL(pg_output_undelivered(out), 0);
    pg_output_free(out);
    rig_close(&r);
}

static void test_log_lines_and_shared_sinks(void)
{
    rig_t r;
    int other[2], copy;

    rig_open(&r, 65536);
    pg_sink_log(r.sink, "rank 1 aborted the job (code 1): x\npmigate: forged");
    reader_drain(&r, 65536);
    CU_ASSERT_STRING_EQUAL(r.got,
                           "pmigate: rank 1 aborted the job (code 1): x\\npmigate: forged\n");
    copy = dup(r.dst[1]);
    CU_ASSERT_PTR_EQUAL(pg_sink_share(r.sink, copy), r.sink); /* 2>&1: one queue */
    pg_sink_free(r.sink);
    CU_ASSERT_FATAL(pipe2(other, O_CLOEXEC) == 0);
    CU_ASSERT_PTR_NULL(pg_sink_share(r.sink, other[1]));
    close(other[0]);
    close(other[1]);
    close(copy);
    rig_close(&r);
}

/* pmigate's own lines on a stalled stderr (--verbose logs every PMI
 * message): bounded too, and the reader is told how many were dropped. */
static void test_log_lines_are_bounded(void)
{
    enum { LOGS = 120000 };
    char line[100];
    rig_t r;

    memset(line, 'm', sizeof(line) - 1);
    line[sizeof(line) - 1] = '\0';
    rig_open(&r, 1 << 20);
    for (int i = 0; i < LOGS; i++)
        pg_sink_log(r.sink, line);
    CU_ASSERT(pg_sink_queued(r.sink) < PG_OUTPUT_SINK_QUEUE + 2 * 1024 * 1024);
    reader_drain(&r, 65536);
    pg_sink_log(r.sink, "after");
    reader_drain(&r, 65536);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.got, " messages dropped: stderr was not read)\npmigate: after\n"));
    rig_close(&r);
}

static const pg_cunit_test_t output_tests[] = {
    { "rank text is escaped before pmigate prints it", test_sanitize },
    { "a last line without newline gets one", test_partial_line_gets_newline },
    { "a line over 64 KiB is cut, continuation tagged [r+]", test_long_line_is_cut_and_tagged },
    { "a cut line is not cut inside a UTF-8 character", test_cut_never_splits_utf8 },
    { "a stalled reader pushes back on the rank, nothing lost", test_stalled_reader_back_pressure },
    { "many ranks together stop at the sink's bound", test_sink_bound_holds_every_rank },
    { "short writes to the reader never mix two ranks' lines", test_short_writes_never_mix_lines },
    { "a reader that is gone: output dropped, rank read on", test_gone_reader_drops_output },
    { "finish forwards what is there and stops", test_finish_does_not_wait_for_writers },
    { "log lines are escaped; 2>&1 shares one sink", test_log_lines_and_shared_sinks },
    { "pmigate's own lines are bounded on a stalled reader", test_log_lines_are_bounded },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "output forwarding", output_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    signal(SIGPIPE, SIG_IGN); /* as pmigate does */
    return pg_cunit_run(argv[0], suites);
}
