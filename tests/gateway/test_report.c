/*
 * Unit tests for what `pmigate status` and the progress line say
 * (gateway/tools/pg_report.c, pg_status_cli.c's options) and how the progress
 * line reaches a terminal (pg_output.c's pg_sink_status, on a real pty):
 * rank lists with ranges that stay bounded, the fence line naming the
 * missing ranks with the fence's age, a proxy's fence waiting for the other
 * nodes, the waits, the job line, the progress text; on a terminal the
 * status line is erased before the next line and when cleared, and on a
 * pipe nothing of it is written.  The status endpoint (pg_statusd.c) with
 * more to gather (`pmigate proxy`'s other nodes): the answer waits for its
 * ticket and carries the gathered text after the report; a stale ticket
 * changes nothing.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "gateway/io/pg_output.h"
#include "gateway/tools/pg_report.h"
#include "gateway/tools/pg_status_cli.h"
#include "gateway/tools/pg_statusd.h"
#include "tests/pg_cunit.h"

#define SEC 1000000000ull

static void test_rank_lists(void)
{
    uint32_t r[] = { 1, 5, 6, 7, 9, 10, 12 };
    uint32_t many[600];
    char buf[64];

    CU_ASSERT_STRING_EQUAL(pg_report_ranks(buf, sizeof(buf), r, 7), "1, 5-7, 9, 10, 12");
    CU_ASSERT_STRING_EQUAL(pg_report_ranks(buf, sizeof(buf), r, 1), "1");
    CU_ASSERT_STRING_EQUAL(pg_report_ranks(buf, sizeof(buf), r, 0), "");
    /* every other rank of 1200: cut, with the count of what is left out */
    for (uint32_t i = 0; i < 600; i++)
        many[i] = 2 * i;
    pg_report_ranks(buf, sizeof(buf), many, 600);
    CU_ASSERT(strlen(buf) < sizeof(buf));
    CU_ASSERT_NSTRING_EQUAL(buf, "0, 2, 4, 6", 10);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, ", ... (+"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " more)"));
}

/* What one call printed, in a static buffer. */
static char printed[1024];

static FILE *capture(void)
{
    return fmemopen(printed, sizeof(printed), "w");
}

static void test_fence_line(void)
{
    pg_proc_t parts[] = { { "kvs_1_0", PMIX_RANK_WILDCARD } };
    pg_proc_t missing[] = { { "kvs_1_0", 1 }, { "kvs_1_0", 5 }, { "kvs_1_0", 6 },
                            { "kvs_1_0", 7 } };
    pg_fence_view_t f = { .seq = 1, .participants = parts, .nparticipants = 1,
                          .whole_job = true, .nmembers = 512, .nlocal = 512, .njoined = 508,
                          .started = 10 * SEC, .missing = missing, .nmissing = 4 };
    FILE *out = capture();

    pg_report_fence(out, &f, 22 * SEC + 300000000ull);
    fclose(out);
    CU_ASSERT_STRING_EQUAL(printed,
                           "  fence 1: waiting for ranks 1, 5-7 (of 512), started 12.3 s ago\n");
    f.nmissing = 1;
    out = capture();
    pg_report_fence(out, &f, 10 * SEC);
    fclose(out);
    CU_ASSERT_STRING_EQUAL(printed, "  fence 1: waiting for rank 1 (of 512), started 0.0 s ago\n");
}

static void test_proxy_fence_lines(void)
{
    pg_proc_t parts[] = { { "ns", PMIX_RANK_WILDCARD } };
    pg_proc_t missing[] = { { "ns", 3 } };
    pg_fence_view_t f = { .seq = 2, .participants = parts, .nparticipants = 1,
                          .whole_job = true, .nmembers = 4, .nlocal = 2, .njoined = 1,
                          .started = SEC, .missing = missing, .nmissing = 1 };
    FILE *out = capture();

    pg_report_fence(out, &f, 3 * SEC);
    fclose(out);
    CU_ASSERT_STRING_EQUAL(printed,
                           "  fence 2: waiting for rank 3 (of 4; 2 on this node), started 2.0 s "
                           "ago\n");
    f.njoined = 2;
    f.nmissing = 0;
    f.host_pending = true;
    out = capture();
    pg_report_fence(out, &f, 3 * SEC);
    fclose(out);
    CU_ASSERT_STRING_EQUAL(printed, "  fence 2: this node's 2 ranks joined, waiting for the "
                                    "other nodes, started 2.0 s ago\n");
}

static void test_other_fences_are_named_by_their_members(void)
{
    pg_proc_t parts[] = { { "ns", 0 }, { "ns", 3 }, { "other", 1 } };
    pg_proc_t missing[] = { { "other", 1 } };
    pg_fence_view_t f = { .seq = 1, .participants = parts, .nparticipants = 3, .group = true,
                          .nmembers = 3, .nlocal = 3, .njoined = 2, .missing = missing,
                          .nmissing = 1 };
    FILE *out = capture();

    pg_report_fence(out, &f, 0);
    fclose(out);
    CU_ASSERT_STRING_EQUAL(printed, "  group collective 1 of 0, 3, other:1: waiting for rank "
                                    "other:1 (of 3), started 0.0 s ago\n");
}

static void test_wait_lines(void)
{
    pg_wait_view_t get = { PG_WAIT_GET, { "ns", 1 }, { "ns", 3 }, "never-put", SEC };
    pg_wait_view_t any = { PG_WAIT_GET, { "ns", 1 }, { "ns", PMIX_RANK_UNDEF }, "k", SEC };
    pg_wait_view_t attr = { PG_WAIT_NODE_ATTR, { "ns", 2 }, { "", 0 }, "memPoolType", SEC };
    pg_wait_view_t name = { PG_WAIT_LOOKUP, { "ns", 0 }, { "", 0 }, "svc", SEC };
    char all[1024] = "";

    const pg_wait_view_t *w[] = { &get, &any, &attr, &name };
    for (int i = 0; i < 4; i++) {
        FILE *out = capture();

        pg_report_wait(out, w[i], 3 * SEC + 500000000ull);
        fclose(out);
        strcat(all, printed);
    }
    CU_ASSERT_STRING_EQUAL(all, "  rank 1 waits for key \"never-put\" of rank 3, 2.5 s\n"
                                "  rank 1 waits for key \"k\" of any rank, 2.5 s\n"
                                "  rank 2 waits for node attribute \"memPoolType\", 2.5 s\n"
                                "  rank 0 waits for the name \"svc\" to be published, 2.5 s\n");
}

static void test_job_lines(void)
{
    pg_report_job_t root = { 0, "kvs_7_0", 4, 0, 4, 4, 3, 0, 1, NULL, 0, 0 };
    pg_report_job_t spawned = { 1, "kvs_7_1", 1, 0, 1, 1, 0, 0, 0, "kvs_7_0", 2, 0 };
    pg_report_job_t node = { 0, "kvs_9_0", 5, 3, 2, 2, 2, 0, 0, NULL, 0, 0 };
    pg_report_job_t held = { 0, "kvs_8_0", 3, 0, 3, 3, 0, 0, 0, NULL, 0, 1 };
    FILE *out = capture();

    pg_report_job(out, &root);
    pg_report_job(out, &spawned);
    pg_report_job(out, &node);
    pg_report_job(out, &held);
    fclose(out);
    CU_ASSERT_STRING_EQUAL(printed,
                           "job 0 kvs_7_0: 4 ranks: 4 launched, 3 initialised, 0 finalized, "
                           "1 exited\n"
                           "job 1 kvs_7_1 (spawned by rank 2 of kvs_7_0): 1 rank: 1 launched, "
                           "0 initialised, 0 finalized, 0 exited\n"
                           "job 0 kvs_9_0: ranks 3-4 of 5 on this node: 2 launched, "
                           "2 initialised, 0 finalized, 0 exited\n"
                           "job 0 kvs_8_0: 3 ranks: 3 launched, 0 initialised, 0 finalized, "
                           "0 exited: held in init for a debugger\n");
}

static void test_progress_text(void)
{
    pg_fence_view_t f = { .seq = 1, .whole_job = true, .nmembers = 1024, .nlocal = 1024,
                          .njoined = 812, .started = SEC };
    char buf[128];

    CU_ASSERT_STRING_EQUAL(pg_report_progress(buf, sizeof(buf), &f, 0, 0, 0, 4200000000ull),
                           "wire-up: 812/1024 ranks in fence 1, 3.2 s");
    CU_ASSERT_STRING_EQUAL(pg_report_progress(buf, sizeof(buf), NULL, 300, 1024, SEC,
                                              3100000000ull),
                           "wire-up: 300/1024 ranks initialised, 2.1 s");
    f.nlocal = 512;
    f.host_pending = true;
    CU_ASSERT_STRING_EQUAL(pg_report_progress(buf, sizeof(buf), &f, 0, 0, 0, 2 * SEC),
                           "wire-up: 512/1024 ranks in fence 1 (the other nodes), 1.0 s");
}

static void test_status_options(void)
{
    char *watch[] = { "--watch", "--interval", "0.5", "1234" };
    char *two[] = { "1", "2" };
    char *bad[] = { "--interval=0" };
    pg_status_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(pg_status_parse(0, NULL, &o, err, sizeof(err)), 0);
    CU_ASSERT_PTR_NULL(o.job);
    CU_ASSERT_FALSE(o.watch);
    CU_ASSERT_EQUAL_FATAL(pg_status_parse(4, watch, &o, err, sizeof(err)), 0);
    CU_ASSERT_TRUE(o.watch);
    CU_ASSERT_DOUBLE_EQUAL(o.interval, 0.5, 1e-9);
    CU_ASSERT_STRING_EQUAL(o.job, "1234");
    CU_ASSERT_EQUAL(pg_status_parse(2, two, &o, err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(pg_status_parse(1, bad, &o, err, sizeof(err)), -1);
}

/* ---- the status line on a terminal ---- */

/* What the master side of the pty holds now (the slave is raw). */
static size_t pty_read(int master, char *buf, size_t cap)
{
    size_t n = 0;
    struct pollfd p = { master, POLLIN, 0 };

    while (n + 1 < cap && poll(&p, 1, 200) > 0) {
        ssize_t got = read(master, buf + n, cap - 1 - n);

        if (got <= 0)
            break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    return n;
}

static void test_status_line_on_a_terminal(void)
{
    struct event_base *base = event_base_new();
    int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
    struct termios raw;
    pg_sink_t *sink;
    char got[512];

    CU_ASSERT_FATAL(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
    slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    CU_ASSERT_FATAL(slave >= 0);
    tcgetattr(slave, &raw);
    cfmakeraw(&raw);
    tcsetattr(slave, TCSANOW, &raw);
    sink = pg_sink_new(base, slave);
    CU_ASSERT_FATAL(sink != NULL);
    pg_sink_status(sink, "wire-up: 1/2 ranks in fence 1, 1.0 s");
    pty_read(master, got, sizeof(got));
    CU_ASSERT_STRING_EQUAL(got, "\rwire-up: 1/2 ranks in fence 1, 1.0 s\033[K");
    /* a line after it: the status line goes first */
    pg_sink_log(sink, "rank 1 exited");
    pty_read(master, got, sizeof(got));
    CU_ASSERT_STRING_EQUAL(got, "\r\033[Kpmigate: rank 1 exited\n");
    /* cleared when nothing is shown: nothing to write */
    pg_sink_status(sink, NULL);
    CU_ASSERT_EQUAL(pty_read(master, got, sizeof(got)), 0);
    pg_sink_status(sink, "x");
    pg_sink_status(sink, NULL);
    pty_read(master, got, sizeof(got));
    CU_ASSERT_STRING_EQUAL(got, "\rx\033[K\r\033[K");
    /* freed while shown: erased */
    pg_sink_status(sink, "y");
    pg_sink_free(sink);
    pty_read(master, got, sizeof(got));
    CU_ASSERT_STRING_EQUAL(got, "\ry\033[K\r\033[K");
    close(slave);
    close(master);
    event_base_free(base);
}

static void test_no_status_line_on_a_pipe(void)
{
    struct event_base *base = event_base_new();
    int p[2];
    pg_sink_t *sink;
    char got[128];
    ssize_t n;

    CU_ASSERT_FATAL(pipe(p) == 0);
    sink = pg_sink_new(base, p[1]);
    pg_sink_status(sink, "wire-up: 1/2 ranks in fence 1, 1.0 s");
    pg_sink_log(sink, "line");
    pg_sink_free(sink);
    close(p[1]);
    n = read(p[0], got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    CU_ASSERT_STRING_EQUAL(got, "pmigate: line\n");
    close(p[0]);
    event_base_free(base);
}

static void report_local(void *arg, FILE *out)
{
    (void)arg;
    fputs("this node\n", out);
}

static void more_note(void *arg, uint64_t ticket)
{
    *(uint64_t *)arg = ticket;
}

/* Runs the loop until fd is readable or `rounds` x 10 ms passed. */
static int loop_until_readable(struct event_base *base, int fd, int rounds)
{
    struct pollfd pfd = { fd, POLLIN, 0 };

    for (int i = 0; i < rounds; i++) {
        (void)event_base_loop(base, EVLOOP_NONBLOCK);
        if (poll(&pfd, 1, 10) > 0)
            return 1;
    }
    return 0;
}

static void test_statusd_gathers_more(void)
{
    char dir[] = "/tmp/pg-statusd.XXXXXX", got[256] = "", want[64];
    struct event_base *base = event_base_new();
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    uint64_t ticket = 0;
    pg_statusd_t *s;
    int err = 0, fd;
    size_t len = 0;
    ssize_t n;

    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    s = pg_statusd_new(base, dir, report_local, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    pg_statusd_set_more(s, more_note, &ticket);
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/" PG_STATUSD_SOCKET, dir);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
    CU_ASSERT(write(fd, PG_STATUSD_REQUEST "\n", strlen(PG_STATUSD_REQUEST) + 1) > 0);
    /* asked for more; no answer until it comes, nor for another ticket */
    for (int i = 0; i < 50 && ticket == 0; i++)
        (void)event_base_loop(base, EVLOOP_NONBLOCK | EVLOOP_ONCE);
    CU_ASSERT_FATAL(ticket != 0);
    pg_statusd_more_done(s, ticket + 1, "stale\n", 6);
    CU_ASSERT(!loop_until_readable(base, fd, 20));
    pg_statusd_more_done(s, ticket, "other node\n", 11);
    CU_ASSERT(loop_until_readable(base, fd, 200));
    while (len < sizeof(got) - 1) {
        (void)event_base_loop(base, EVLOOP_NONBLOCK);
        n = read(fd, got + len, sizeof(got) - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    got[len] = '\0';
    snprintf(want, sizeof(want), PG_STATUSD_HEADER " pid=%ld\nthis node\nother node\n",
             (long)getpid());
    CU_ASSERT_STRING_EQUAL(got, want);
    /* a ticket whose client is gone changes nothing */
    pg_statusd_more_done(s, ticket, "late\n", 5);
    close(fd);
    pg_statusd_free(s);
    rmdir(dir);
    event_base_free(base);
}

/* Connects to the status socket without waiting: 1 when connected (or on
 * its way), 0 when the backlog is full. */
static int connect_nowait(const struct sockaddr_un *addr, int *fd)
{
    *fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (*fd >= 0 && connect(*fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0)
        return 1;
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
    return 0;
}

/* A process of the same user holds every slot and the whole backlog with
 * connections that never send a request: the owner's `pmigate status`
 * still gets its answer (the oldest silent peer makes room). */
static void test_statusd_serves_through_a_flood(void)
{
    char dir[] = "/tmp/pg-statusd.XXXXXX", got[256] = "";
    struct event_base *base = event_base_new();
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    enum { FLOOD = 4 * PG_STATUSD_CLIENTS + 256 };
    int flood[FLOOD], nflood = 0, fd = -1, err = 0;
    pg_statusd_t *s;
    size_t len = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    s = pg_statusd_new(base, dir, report_local, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/" PG_STATUSD_SOCKET, dir);
    /* fill the slots, then the backlog, until the kernel refuses more */
    while (nflood < FLOOD && connect_nowait(&addr, &flood[nflood])) {
        nflood++;
        (void)event_base_loop(base, EVLOOP_NONBLOCK);
    }
    CU_ASSERT(nflood > PG_STATUSD_CLIENTS);
    /* the owner asks; its connection waits in the backlog while it is full */
    for (int i = 0; i < 200 && fd < 0; i++) {
        (void)event_base_loop(base, EVLOOP_NONBLOCK);
        if (!connect_nowait(&addr, &fd))
            usleep(10000);
    }
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT(write(fd, PG_STATUSD_REQUEST "\n", strlen(PG_STATUSD_REQUEST) + 1) > 0);
    for (int i = 0; i < 300 && len < sizeof(got) - 1; i++) {
        ssize_t n;

        (void)event_base_loop(base, EVLOOP_NONBLOCK);
        n = read(fd, got + len, sizeof(got) - 1 - len);
        if (n == 0)
            break; /* closed: the whole answer, or a refusal */
        if (n > 0)
            len += (size_t)n;
        else
            usleep(10000);
    }
    got[len] = '\0';
    CU_ASSERT_NSTRING_EQUAL(got, PG_STATUSD_HEADER, strlen(PG_STATUSD_HEADER));
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "this node\n"));
    close(fd);
    for (int i = 0; i < nflood; i++)
        close(flood[i]);
    pg_statusd_free(s);
    rmdir(dir);
    event_base_free(base);
}

static const pg_cunit_test_t report_tests[] = {
    { "rank lists: ranges, bounded", test_rank_lists },
    { "a fence: the ranks it waits for, its age", test_fence_line },
    { "a proxy's fence: its node's share, then the other nodes", test_proxy_fence_lines },
    { "fences of some processes are named by them", test_other_fences_are_named_by_their_members },
    { "held gets, node attributes, lookups", test_wait_lines },
    { "the job lines", test_job_lines },
    { "the progress text", test_progress_text },
    { "pmigate status options", test_status_options },
    { "the status endpoint waits for more, then adds it", test_statusd_gathers_more },
    { "the status endpoint serves its owner through a flood", test_statusd_serves_through_a_flood },
    { NULL, NULL },
};

static const pg_cunit_test_t line_tests[] = {
    { "on a terminal: shown, erased before a line, cleared", test_status_line_on_a_terminal },
    { "on a pipe: nothing of it", test_no_status_line_on_a_pipe },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "pmigate status: the words", report_tests, NULL, NULL },
    { "the progress line", line_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
