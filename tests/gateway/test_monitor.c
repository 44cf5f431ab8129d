/*
 * test_monitor: the gateway's watches of ranks (gateway/job/pg_monitor.c) on a
 * real libevent loop and real files: a heartbeat watch alerts once after
 * more than DROPS missed periods and again only after life came back, a
 * file watch alerts when the file stops changing the way it was asked to,
 * a --heartbeat watch when the rank has been silent that long; ids, cancel
 * and forget end watches.  Periods are whole seconds (as the Standard's
 * attributes), so these tests take a few seconds of wall time; each check
 * looks half a period away from the ticks, so a loaded machine's late
 * wakeups do not change what it sees.
 */
#include <CUnit/CUnit.h>
#include <event2/event.h>
#include <pmix_common.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/job/pg_monitor.h"
#include "tests/pg_cunit.h"

typedef struct heard {
    int alerts;
    int rank;
    bool option;
    uint32_t silent_s;
    int code;
    char id[32], path[256];
} heard_t;

static void on_alert(void *owner, const pg_monitor_alert_t *a)
{
    heard_t *h = owner;

    h->alerts++;
    h->rank = a->rank;
    h->option = a->option;
    h->silent_s = a->silent_s;
    h->code = a->req->code;
    snprintf(h->id, sizeof(h->id), "%s", a->req->id != NULL ? a->req->id : "");
    snprintf(h->path, sizeof(h->path), "%s", a->req->path != NULL ? a->req->path : "");
}

/* Runs the loop for `ms` milliseconds. */
static void run_for(struct event_base *base, int ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

static pg_monitor_req_t heartbeat_req(const char *id, uint32_t period, uint32_t drops)
{
    return (pg_monitor_req_t){ .kind = PG_MONITOR_HEARTBEAT,
                               .id = id,
                               .code = PMIX_MONITOR_HEARTBEAT_ALERT,
                               .range = PMIX_RANGE_NAMESPACE,
                               .period_s = period,
                               .drops = drops };
}

static void test_heartbeat_alerts_after_drops_and_once(void)
{
    struct event_base *base = event_base_new();
    heard_t h = { 0 };
    pg_monitor_t *m = pg_monitor_new(base, on_alert, &h);
    pg_monitor_req_t req = heartbeat_req("hb", 1, 1);
    pg_monitor_req_t beat = { .kind = PG_MONITOR_BEAT };

    CU_ASSERT_EQUAL_FATAL(pg_monitor_request(m, 3, &req), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 3, &beat), PMIX_SUCCESS);
    run_for(base, 1500); /* the first check (at 1 s) saw the beat */
    CU_ASSERT_EQUAL(h.alerts, 0);
    run_for(base, 1000); /* one miss: allowed */
    CU_ASSERT_EQUAL(h.alerts, 0);
    run_for(base, 1000); /* the second: more than DROPS */
    CU_ASSERT_EQUAL(h.alerts, 1);
    CU_ASSERT_EQUAL(h.rank, 3);
    CU_ASSERT_FALSE(h.option);
    CU_ASSERT_EQUAL(h.silent_s, 2);
    CU_ASSERT_STRING_EQUAL(h.id, "hb");
    CU_ASSERT_EQUAL(h.code, PMIX_MONITOR_HEARTBEAT_ALERT);
    run_for(base, 1000); /* still silent: not told again */
    CU_ASSERT_EQUAL(h.alerts, 1);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 3, &beat), PMIX_SUCCESS);
    run_for(base, 1000); /* life: cleared */
    run_for(base, 2000); /* silent again, long enough: told again */
    CU_ASSERT_EQUAL(h.alerts, 2);
    pg_monitor_free(m);
    event_base_free(base);
}

static void grow_file(const char *path)
{
    FILE *f = fopen(path, "a");

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("progress\n", f);
    fclose(f);
}

static void test_file_alerts_when_it_stops_growing(void)
{
    struct event_base *base = event_base_new();
    heard_t h = { 0 };
    pg_monitor_t *m = pg_monitor_new(base, on_alert, &h);
    char path[] = "/tmp/pg_test_monitor.XXXXXX";
    int fd = mkstemp(path);
    pg_monitor_req_t req = { .kind = PG_MONITOR_FILE,
                             .code = PMIX_MONITOR_FILE_ALERT,
                             .range = PMIX_RANGE_NAMESPACE,
                             .period_s = 1,
                             .path = path,
                             .file_checks = PG_MONITOR_SIZE };

    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_EQUAL_FATAL(pg_monitor_request(m, 0, &req), PMIX_SUCCESS);
    run_for(base, 500);
    grow_file(path);
    run_for(base, 1000); /* the check at 1 s saw it grow */
    CU_ASSERT_EQUAL(h.alerts, 0);
    run_for(base, 1000); /* no growth since: alert (no drops allowed) */
    CU_ASSERT_EQUAL(h.alerts, 1);
    CU_ASSERT_STRING_EQUAL(h.path, path);
    CU_ASSERT_EQUAL(h.code, PMIX_MONITOR_FILE_ALERT);
    /* a file that does not exist is neither life nor a miss */
    unlink(path);
    pg_monitor_forget(m, 0);
    h.alerts = 0;
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &req), PMIX_SUCCESS);
    run_for(base, 2200);
    CU_ASSERT_EQUAL(h.alerts, 0);
    pg_monitor_free(m);
    event_base_free(base);
}

static void test_silence_counts_any_traffic(void)
{
    struct event_base *base = event_base_new();
    heard_t h = { 0 };
    pg_monitor_t *m = pg_monitor_new(base, on_alert, &h);

    CU_ASSERT_EQUAL_FATAL(pg_monitor_watch_silence(m, 2, 1), 0);
    run_for(base, 600);
    pg_monitor_traffic(m, 2); /* a PMI message, a line of output */
    pg_monitor_traffic(m, 1); /* another rank's: nothing to do with it */
    run_for(base, 700);       /* 1.3 s from the start, 0.7 s of silence */
    CU_ASSERT_EQUAL(h.alerts, 0);
    run_for(base, 1000); /* 1.7 s of silence */
    CU_ASSERT_EQUAL(h.alerts, 1);
    CU_ASSERT_EQUAL(h.rank, 2);
    CU_ASSERT_TRUE(h.option);
    CU_ASSERT(h.silent_s >= 1);
    CU_ASSERT_EQUAL(h.code, PMIX_MONITOR_HEARTBEAT_ALERT);
    /* a rank that finalized is not watched any more */
    CU_ASSERT_EQUAL(pg_monitor_watch_silence(m, 2, 1), 0);
    pg_monitor_forget(m, 2);
    run_for(base, 1300);
    CU_ASSERT_EQUAL(h.alerts, 1);
    pg_monitor_free(m);
    event_base_free(base);
}

static void test_ids_cancel_and_forget(void)
{
    struct event_base *base = event_base_new();
    heard_t h = { 0 };
    pg_monitor_t *m = pg_monitor_new(base, on_alert, &h);
    pg_monitor_req_t a = heartbeat_req("a", 1, 0), b = heartbeat_req("b", 1, 0);
    pg_monitor_req_t anon = heartbeat_req(NULL, 1, 0);
    pg_monitor_req_t cancel_a = { .kind = PG_MONITOR_CANCEL, .id = "a" };
    pg_monitor_req_t cancel_all = { .kind = PG_MONITOR_CANCEL };

    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &a), PMIX_ERR_EXISTS);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 1, &a), PMIX_SUCCESS); /* ids are per rank */
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &b), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &anon), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &anon), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &cancel_a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &cancel_a), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &cancel_all), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_monitor_request(m, 0, &cancel_all), PMIX_ERR_NOT_FOUND);
    pg_monitor_forget(m, 1);
    run_for(base, 1300); /* nothing left to miss a beat */
    CU_ASSERT_EQUAL(h.alerts, 0);
    pg_monitor_free(m);
    pg_monitor_free(NULL);
    event_base_free(base);
}

static const pg_cunit_test_t tests[] = {
    { "heartbeat alerts after drops and once", test_heartbeat_alerts_after_drops_and_once },
    { "file alerts when it stops growing", test_file_alerts_when_it_stops_growing },
    { "silence counts any traffic", test_silence_counts_any_traffic },
    { "ids, cancel and forget", test_ids_cancel_and_forget },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "gateway: monitor", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
