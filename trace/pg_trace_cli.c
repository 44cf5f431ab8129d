/*
 * pg_trace_cli: `pmigate trace show|stats|timeline`.  See pg_trace_cli.h.
 */
#include "trace/pg_trace_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/pg_trace.h"
#include "trace/pg_trace_analyze.h"
#include "trace/pg_trace_svg.h"
#include "trace/pg_trace_view.h"
#include "wire/pg_decimal.h"

/* Ranks above this are refused by --rank (no recorded job is that big). */
enum { TRACE_EXIT_USAGE = 2, TRACE_RANK_MAX = 1 << 20 };

const char pg_trace_usage[] =
    "Usage: pmigate trace show FILE [--rank R] [--cmd C] [--full]\n"
    "       pmigate trace stats FILE\n"
    "       pmigate trace timeline FILE -o OUT.svg\n"
    "\n"
    "Read a trace written by `pmigate run --trace FILE`:\n"
    "  show      every message, one per line (-> to the gateway, <- from it);\n"
    "            --rank R keeps one rank, --cmd C one command and its replies,\n"
    "            --full prints long messages whole\n"
    "  stats     requests per command with their waits; every fence and\n"
    "            barrier with its duration and the ranks that entered it last\n"
    "  timeline  an SVG picture: one row per rank, a bar per request\n"
    "(the format is described in docs/trace-format.md)\n";

typedef struct trace_args {
    const char *file;
    const char *out;
    pg_trace_show_opts_t show;
} trace_args_t;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "pmigate trace: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", pg_trace_usage);
    return TRACE_EXIT_USAGE;
}

/* Options after the subcommand; `allowed` names the ones it takes. */
static int parse_args(int argc, char **argv, const char *allowed, trace_args_t *ta)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--rank") == 0 && strchr(allowed, 'r')) {
            if (pg_decimal_parse(val, 0, TRACE_RANK_MAX, &ta->show.rank) != 0)
                return usage_error("--rank needs a rank number, got '%s'", val ? val : "");
            i++;
        } else if (strcmp(a, "--cmd") == 0 && strchr(allowed, 'c')) {
            if (val == NULL)
                return usage_error("%s needs a command name", a);
            ta->show.cmd = val;
            i++;
        } else if (strcmp(a, "--full") == 0 && strchr(allowed, 'f')) {
            ta->show.full = 1;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && strchr(allowed, 'o')) {
            if (val == NULL)
                return usage_error("%s needs a file name", a);
            ta->out = val;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else if (ta->file == NULL) {
            ta->file = a;
        } else {
            return usage_error("one trace file at a time ('%s')", a);
        }
    }
    if (ta->file == NULL)
        return usage_error("%s", "missing the trace file");
    return 0;
}

static pg_trace_analysis_t *load_and_analyze(const char *file, pg_trace_t **trace)
{
    char err[256];
    pg_trace_analysis_t *a;

    *trace = pg_trace_load(file, err, sizeof(err));
    if (*trace == NULL) {
        fprintf(stderr, "pmigate trace: %s: %s\n", file, err);
        return NULL;
    }
    pg_trace_say_cut(*trace, "pmigate trace", file);
    a = pg_trace_analyze(*trace);
    if (a == NULL)
        fprintf(stderr, "pmigate trace: out of memory analysing %s\n", file);
    return a;
}

static int write_timeline(const pg_trace_analysis_t *a, const char *path)
{
    FILE *f = fopen(path, "w");
    int rc;

    if (f == NULL) {
        fprintf(stderr, "pmigate trace: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    rc = pg_trace_svg_write(a, f);
    if (fclose(f) != 0 || rc != 0) {
        fprintf(stderr, "pmigate trace: writing %s failed\n", path);
        return 1;
    }
    return 0;
}

int pg_trace_main(int argc, char **argv)
{
    trace_args_t ta = { .show = { .rank = -1 } };
    const char *sub = argc > 0 ? argv[0] : NULL;
    const char *allowed;
    pg_trace_t *trace = NULL;
    pg_trace_analysis_t *a;
    int rc = 0;

    if (sub == NULL || strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        fputs(pg_trace_usage, sub ? stdout : stderr);
        return sub ? 0 : TRACE_EXIT_USAGE;
    }
    if (strcmp(sub, "show") == 0)
        allowed = "rcf";
    else if (strcmp(sub, "stats") == 0)
        allowed = "";
    else if (strcmp(sub, "timeline") == 0)
        allowed = "o";
    else
        return usage_error("unknown view '%s'", sub);
    if ((rc = parse_args(argc, argv, allowed, &ta)) != 0)
        return rc;
    if (strcmp(sub, "timeline") == 0 && ta.out == NULL)
        return usage_error("%s", "timeline needs -o OUT.svg");
    a = load_and_analyze(ta.file, &trace);
    if (a == NULL) {
        pg_trace_free(trace);
        return 1;
    }
    if (strcmp(sub, "show") == 0)
        pg_trace_show(a, &ta.show, stdout);
    else if (strcmp(sub, "stats") == 0)
        pg_trace_print_stats(a, stdout);
    else
        rc = write_timeline(a, ta.out);
    pg_trace_analysis_free(a);
    pg_trace_free(trace);
    return rc;
}
