/*
 * pmi2_mux_cost: what the thread multiplexer costs a single-threaded
 * program.  One client thread makes N kvs-get calls against an in-process
 * server thread that answers each at once: first on the fast path (no
 * mutex, no thrid), then with the mux forced into threaded mode (mutex,
 * condition variable, thrid routing).  Prints the mean per call of each and
 * their difference; both include the same socketpair round trip.
 *   usage: pmi2_mux_cost [N]   (default 20000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmi2/client/pg_pmi2_mux.h"
#include "pmi2/pmi2.h"
#include "tests/clients/fake_server.h"

static int build_get(pg_enc_t *e, const char *thrid, const void *key)
{
    return pg_enc_pmi2_kvs_get(e, thrid, NULL, -1, key);
}

/* Answers every kvs-get (echoing thrid) until EOF. */
static void echo_server(pg_fake_server_t *s, void *arg)
{
    char m[512], thrid[32], body[128];

    (void)arg;
    while (pg_fake_recv(s, m, sizeof(m)) >= 0) {
        if (pg_fake_value(m, "thrid", thrid, sizeof(thrid)) == 0)
            snprintf(body, sizeof(body), "cmd=kvs-get-response;thrid=%s;found=TRUE;value=v;rc=0;", thrid);
        else
            snprintf(body, sizeof(body), "cmd=kvs-get-response;found=TRUE;value=v;rc=0;");
        pg_fake_send_pmi2(s, body);
    }
}

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double mean_call_ns(pg_pmi2_mux_t *m, long n)
{
    double t0 = now_ns();

    for (long i = 0; i < n; i++) {
        pg_pmi2_reply_t r;

        if (pg_pmi2_mux_call(m, build_get, "k", PG_CMD_PMI2_KVS_GET_RESPONSE, &r) != PMI2_SUCCESS) {
            fprintf(stderr, "pmi2_mux_cost: call failed\n");
            exit(1);
        }
        pg_pmi2_reply_release(&r);
    }
    return (now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    int fd;
    pg_fake_server_t *srv = pg_fake_server_start(echo_server, NULL, &fd);
    pg_pmi2_mux_t *m;
    double fast, threaded;

    if (srv == NULL || n <= 0 || (m = pg_pmi2_mux_new(fd)) == NULL)
        return 1;
    (void)mean_call_ns(m, n / 10); /* warm up */
    fast = mean_call_ns(m, n);
    pg_pmi2_mux_set_threaded(m);
    threaded = mean_call_ns(m, n);
    printf("pmi2 mux, 1 thread, %ld calls: fast path %.0f ns/call, threaded mode %.0f ns/call "
           "(difference %+.0f ns)\n", n, fast, threaded, threaded - fast);
    pg_pmi2_mux_free(m);
    return pg_fake_server_join(srv) == 0 ? 0 : 1;
}
