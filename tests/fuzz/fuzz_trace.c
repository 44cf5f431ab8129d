/*
 * fuzz_trace: libFuzzer target over the trace reader (docs/trace-format.md),
 * which runs on files a user may have been handed: `pmigate trace
 * show|stats|timeline FILE` and `pmigate replay FILE` all start with
 * pg_trace_load and the analysis.  The input is the whole file; it is
 * loaded, analysed, listed (short and full, filtered by rank and command),
 * summarised, drawn as SVG, and every event is decoded again the way the
 * viewers and the replayer do (the PMI codec, the PMIx decoder and its one
 * line form).  A file that does not load must say why; nothing may crash,
 * overread, leak or hang.  Output goes to /dev/null.  Built by
 * tests/fuzz/run.sh.
 *
 * The same file cut short (as a job killed while writing leaves it: at the
 * middle, and one byte before its end) must load as the whole one's
 * prefix: if the whole file loads and the cut is past its header line,
 * the cut one loads too, with the first events of the whole one, and
 * says where it was cut when the cut is inside a line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/pg_trace.h"
#include "trace/pg_trace_analyze.h"
#include "trace/pg_trace_svg.h"
#include "trace/pg_trace_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_ASSERT(c)                                                              \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "fuzz_trace: %s:%d: %s\n", __FILE__, __LINE__, #c);   \
            abort();                                                              \
        }                                                                         \
    } while (0)

/* Each event decoded as the listing and the replayer decode it. */
static void fz_decode_events(const pg_trace_t *t, const char *kvsname)
{
    pg_trace_parsed_t parsed = { 0 };

    for (size_t i = 0; i < t->nevents; i++) {
        const pg_trace_event_t *e = &t->events[i];

        FZ_ASSERT(pg_trace_event_name(e) != NULL);
        FZ_ASSERT(e->conn >= 0 && e->conn < t->nconns);
        if (e->proto == PG_PROTO_PMIX) {
            pg_trace_pmix_msg_t m;
            char *line;

            memset(&m, 0, sizeof(m));
            (void)pg_trace_pmix_decode(e->bytes, e->len, e->dir == PG_TRACE_C2S, &m);
            line = pg_trace_pmix_format(&m);
            free(line);
            for (size_t f = 0; f < m.nfields; f++)
                free(pg_trace_pmix_field_text(&m.fields[f]));
            pg_trace_pmix_msg_release(&m);
            (void)pg_trace_pmix_fence_is_whole(e->bytes, e->len, kvsname);
        } else {
            (void)pg_trace_parse(&parsed, e->bytes, e->len);
        }
        FZ_ASSERT(pg_trace_first_message(e->proto, e->bytes, e->len) <= e->len);
    }
    pg_trace_parsed_release(&parsed);
}

/* Every view of `pmigate trace` on one loaded trace. */
static void fz_views(const pg_trace_t *t, FILE *out)
{
    pg_trace_analysis_t *a = pg_trace_analyze(t);
    pg_trace_show_opts_t all = { -1, NULL, 0 }, full = { -1, NULL, 1 };
    pg_trace_show_opts_t rank1 = { 1, "get", 0 }, fences = { -1, "fence", 1 };

    if (a == NULL)
        return;
    (void)pg_trace_show(a, &all, out);
    (void)pg_trace_show(a, &full, out);
    (void)pg_trace_show(a, &rank1, out);
    (void)pg_trace_show(a, &fences, out);
    pg_trace_print_stats(a, out);
    (void)pg_trace_svg_write(a, out);
    pg_trace_analysis_free(a);
}

static pg_trace_t *fz_load(const uint8_t *data, size_t size, char *err, size_t errlen)
{
    FILE *in = fmemopen((void *)data, size, "r");
    pg_trace_t *t;

    FZ_ASSERT(in != NULL);
    t = pg_trace_load_stream(in, err, errlen);
    fclose(in);
    return t;
}

/* The file cut to `cut` bytes against the whole one, `whole` (loaded). */
static void fz_cut(const uint8_t *data, size_t size, size_t cut, const pg_trace_t *whole)
{
    const uint8_t *nl = memchr(data, '\n', size);
    char err[256] = "";
    pg_trace_t *t;

    if (cut == 0 || cut >= size)
        return;
    t = fz_load(data, cut, err, sizeof(err));
    if (whole != NULL && nl != NULL && (size_t)(nl - data) < cut)
        FZ_ASSERT(t != NULL); /* past the header: the prefix is a trace */
    if (t == NULL) {
        FZ_ASSERT(err[0] != '\0');
        return;
    }
    if (whole != NULL) {
        FZ_ASSERT(t->nevents <= whole->nevents && t->nrecords <= whole->nrecords);
        for (size_t i = 0; i < t->nevents; i++)
            FZ_ASSERT(t->events[i].len == whole->events[i].len &&
                      memcmp(t->events[i].bytes, whole->events[i].bytes, t->events[i].len) == 0);
        FZ_ASSERT((data[cut - 1] == '\n') == (t->cut_line == 0));
    }
    fz_decode_events(t, t->header.kvsname);
    pg_trace_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "";
    FILE *in, *out;
    pg_trace_t *t;

    if (size == 0)
        return 0; /* fmemopen refuses an empty buffer */
    in = fmemopen((void *)data, size, "r");
    out = fopen("/dev/null", "w");
    FZ_ASSERT(in != NULL && out != NULL);
    t = pg_trace_load_stream(in, err, sizeof(err));
    fclose(in);
    if (t == NULL) {
        FZ_ASSERT(err[0] != '\0'); /* a refusal names its reason */
    } else {
        FZ_ASSERT(t->header.version >= 1 && t->header.version <= PG_TRACE_VERSION);
        fz_decode_events(t, t->header.kvsname);
        fz_views(t, out);
    }
    fz_cut(data, size, size / 2, t);
    fz_cut(data, size, size - 1, t);
    pg_trace_free(t);
    fclose(out);
    return 0;
}
