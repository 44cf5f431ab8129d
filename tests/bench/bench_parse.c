/*
 * bench_parse: how fast pmigate's codec turns real PMI bytes into commands.
 * Each workload is a stream of recorded messages (tests/captures/) repeated
 * to about 1 MiB; one pass frames and parses the whole stream like the
 * gateway's read path does.  Beside it, a plain memchr scan of the same
 * bytes for every '=' is the floor: the least any tokenizer does (visit
 * every byte, stop at every pair).  Prints the median of several runs:
 * commands/s, MB/s, and parse time over the floor.
 *
 * Usage: bench_parse [-r runs] [-t seconds-per-run] CAPTURE-DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parser/pg_parse.h"
#include "tests/tools/pg_capture.h"
#include "wire/pg_frame.h"

enum { STREAM_TARGET = 1 << 20, MAX_RUNS = 31 };

typedef struct workload {
    const char *name;
    char *pristine;        /* the stream as recorded ... */
    char *work;            /* ... and the copy a pass parses (it writes in place) */
    size_t len;
    size_t msgs;
} workload_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Appends m to w until the stream reaches STREAM_TARGET (called in rounds). */
static void workload_add(workload_t *w, const pg_capture_msg_t *m)
{
    if (w->len + m->len > STREAM_TARGET + 65536)
        return;
    memcpy(w->pristine + w->len, m->bytes, m->len);
    w->len += m->len;
    w->msgs++;
}

typedef int (*msg_filter_fn)(const pg_capture_msg_t *m);

static workload_t workload_build(const char *name, const pg_capture_t *caps, size_t ncaps,
                                 msg_filter_fn keep)
{
    workload_t w = { name, malloc(STREAM_TARGET + 65536), malloc(STREAM_TARGET + 65536), 0, 0 };
    if (w.pristine == NULL || w.work == NULL) {
        perror("bench_parse");
        exit(2);
    }
    size_t before;
    do {
        before = w.len;
        for (size_t c = 0; c < ncaps; c++)
            for (size_t i = 0; i < caps[c].n && w.len < STREAM_TARGET; i++)
                if (keep(&caps[c].msgs[i]))
                    workload_add(&w, &caps[c].msgs[i]);
    } while (w.len < STREAM_TARGET && w.len > before);
    return w;
}

/* One pass: frame and parse every message; returns the commands parsed. */
static size_t pass_parse(workload_t *w, pg_msg_t *msg)
{
    size_t off = 0, n = 0;
    memcpy(w->work, w->pristine, w->len);
    while (off < w->len) {
        pg_frame_t f;
        if (pg_frame_next(w->work + off, w->len - off, &f) != PG_WIRE_OK)
            break;
        if (pg_parse_frame(w->work + off, &f, msg) == PG_WIRE_OK && msg->cmd != PG_CMD_UNKNOWN)
            n++;
        off += f.consumed;
    }
    return n;
}

/* The floor: find every '=' in the same bytes. */
static size_t pass_memchr(workload_t *w)
{
    size_t n = 0;
    const char *p = w->pristine, *end = w->pristine + w->len;
    while ((p = memchr(p, '=', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds per pass over runs, each run lasting about `seconds`. */
static double median_pass(workload_t *w, pg_msg_t *msg, int use_parser, int runs, double seconds,
                          size_t *parsed)
{
    double per_pass[MAX_RUNS];
    volatile size_t sink = 0;
    for (int r = 0; r < runs; r++) {
        double busy = 0;
        long passes = 0;
        while (busy < seconds) {
            double t0 = now();
            if (use_parser)
                *parsed = pass_parse(w, msg);
            else
                sink += pass_memchr(w);
            busy += now() - t0;
            passes++;
        }
        /* the copy into the work buffer is part of a parse pass; take it out */
        if (use_parser) {
            double t0 = now();
            for (long i = 0; i < passes; i++)
                memcpy(w->work, w->pristine, w->len);
            busy -= now() - t0;
        }
        per_pass[r] = busy / (double)passes;
    }
    (void)sink;
    qsort(per_pass, (size_t)runs, sizeof per_pass[0], cmp_double);
    return per_pass[runs / 2];
}

static int keep_all(const pg_capture_msg_t *m) { (void)m; return 1; }
static int keep_pmi2_kvs_get(const pg_capture_msg_t *m)
{
    return m->proto == 2 && m->dir == 'C' && m->len > 16 && memmem(m->bytes, m->len, "cmd=kvs-get;", 12);
}
static int keep_pmi1_get(const pg_capture_msg_t *m)
{
    return m->proto == 1 && m->dir == 'C' && strncmp(m->bytes, "cmd=get ", 8) == 0;
}
static int keep_pmi1_get_result(const pg_capture_msg_t *m)
{
    return m->proto == 1 && m->dir == 'S' && strncmp(m->bytes, "cmd=get_result ", 15) == 0;
}

int main(int argc, char **argv)
{
    int runs = 7, opt;
    double seconds = 0.3;
    while ((opt = getopt(argc, argv, "r:t:")) != -1) {
        if (opt == 'r')
            runs = atoi(optarg);
        else if (opt == 't')
            seconds = atof(optarg);
        else
            goto usage;
    }
    if (optind != argc - 1 || runs < 1 || runs > MAX_RUNS || seconds <= 0)
        goto usage;

    static const char *files[] = { "hydra_mpich_pmi1.cap", "hydra_slurm_pmi2.cap", "doc.cap",
                                   "hydra_mpich_pmi1_abort.cap", "hydra_slurm_pmi2_abort.cap" };
    pg_capture_t caps[5];
    for (size_t i = 0; i < 5; i++) {
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s/%s", argv[optind], files[i]);
        if (pg_capture_load(path, &caps[i], err, sizeof err) != 0) {
            fprintf(stderr, "bench_parse: %s\n", err);
            return 2;
        }
    }
    workload_t loads[] = {
        workload_build("kvs-get (PMI-2, libpmi2 bytes)", caps, 5, keep_pmi2_kvs_get),
        workload_build("get (PMI-1, MPICH bytes)", caps, 5, keep_pmi1_get),
        workload_build("get_result (PMI-1, up to 1 KB hex)", caps, 5, keep_pmi1_get_result),
        workload_build("mix: every recorded message", caps, 5, keep_all),
    };
    pg_msg_t msg;
    pg_msg_init(&msg);
    printf("%-36s %8s %10s %9s %12s %7s\n", "workload (median of runs)", "bytes/cmd", "Mcmds/s",
           "MB/s", "memchr MB/s", "ratio");
    for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
        workload_t *w = &loads[i];
        size_t parsed = 0;
        double t_parse = median_pass(w, &msg, 1, runs, seconds, &parsed);
        double t_floor = median_pass(w, &msg, 0, runs, seconds, &parsed);
        if (parsed != w->msgs)
            fprintf(stderr, "bench_parse: %s: parsed %zu of %zu\n", w->name, parsed, w->msgs);
        printf("%-36s %8.0f %10.2f %9.0f %12.0f %6.1fx\n", w->name, (double)w->len / (double)w->msgs,
               (double)w->msgs / t_parse / 1e6, (double)w->len / t_parse / 1e6,
               (double)w->len / t_floor / 1e6, t_parse / t_floor);
        free(w->pristine);
        free(w->work);
    }
    pg_msg_release(&msg);
    for (size_t i = 0; i < 5; i++)
        pg_capture_free(&caps[i]);
    return 0;
usage:
    fprintf(stderr, "usage: %s [-r runs] [-t seconds] CAPTURE-DIR\n", argv[0]);
    return 2;
}
