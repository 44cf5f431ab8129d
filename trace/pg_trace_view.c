/*
 * pg_trace_view: `pmigate trace show` and `pmigate trace stats`.  See
 * pg_trace_view.h.
 */
#include "trace/pg_trace_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire/pg_frame.h"

const char *pg_trace_fmt_duration(uint64_t ns, char *buf, size_t len)
{
    if (ns < 1000)
        snprintf(buf, len, "%" PRIu64 " ns", ns);
    else if (ns < 1000000)
        snprintf(buf, len, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.2f s", (double)ns / 1e9);
    return buf;
}

int pg_trace_event_matches_cmd(const pg_trace_analysis_t *a, size_t ev, const char *name)
{
    const pg_trace_event_t *e = &a->trace->events[ev];

    if (strcasecmp(pg_trace_event_name(e), name) == 0)
        return 1;
    return a->reply_to[ev] != PG_TRACE_NONE &&
           strcasecmp(pg_trace_event_name(&a->trace->events[a->reply_to[ev]]), name) == 0;
}

/* The message without its framing: no PMI-2 length field, no final '\n'. */
static void message_body(const pg_trace_event_t *e, const char **body, size_t *len)
{
    pg_frame_t frame;

    *body = e->bytes;
    *len = e->len;
    if (e->proto == PG_PROTO_PMIX || pg_frame_next(e->bytes, e->len, &frame) != PG_WIRE_OK)
        return;
    *body = e->bytes + frame.body_off;
    *len = frame.body_len;
    if (*len > 0 && (*body)[*len - 1] == '\n')
        (*len)--;
}

/* A PMIx message decoded into words (pg_trace_pmix.h); malloc'd, or NULL
 * when it does not decode at all (then it is shown escaped). */
static char *pmix_text(const pg_trace_event_t *e)
{
    pg_trace_pmix_msg_t m = { 0 };
    char *text = NULL;

    if (e->pmix.kind != PG_TRACE_PMIX_BAD) {
        pg_trace_pmix_decode(e->bytes, e->len, e->dir == PG_TRACE_C2S, &m);
        text = pg_trace_pmix_format(&m);
    }
    pg_trace_pmix_msg_release(&m);
    return text;
}

static void show_event(const pg_trace_event_t *e, int full, char *esc, FILE *out)
{
    char *decoded = e->proto == PG_PROTO_PMIX ? pmix_text(e) : NULL;
    const char *body;
    size_t len, shown;

    fprintf(out, "%12.6f  %4d  %4d  %-5s %s  ", (double)e->t_ns / 1e6, e->rank, e->conn_id,
            pg_proto_name(e->proto), e->dir == PG_TRACE_C2S ? "->" : "<-");
    if (decoded != NULL) {
        len = strlen(decoded);
        shown = !full && len > PG_TRACE_SHOW_WIDTH ? PG_TRACE_SHOW_WIDTH : len;
        fprintf(out, "%.*s", (int)shown, decoded);
        free(decoded);
    } else {
        message_body(e, &body, &len);
        shown = !full && len > PG_TRACE_SHOW_WIDTH ? PG_TRACE_SHOW_WIDTH : len;
        pg_escape(body, shown, esc);
        fputs(esc, out);
    }
    if (shown < len)
        fprintf(out, " ...(%zu %s)", len, decoded != NULL ? "characters" : "bytes");
    fputc('\n', out);
}

/* A rank's exit or the job's end, among the messages (no command filter
 * shows them; a rank filter shows that rank's exit). */
static void show_record(const pg_trace_record_t *r, int rank, FILE *out)
{
    if (r->kind == PG_TRACE_REC_EXIT && (rank < 0 || rank == r->rank))
        fprintf(out, "%12.6f  %4d  %4s  %-5s %s  %s %d%s\n", (double)r->t_ns / 1e6, r->rank, "-",
                "-", "  ", r->signal ? "killed by signal" : "exited with status",
                r->signal ? r->signal : r->code, r->teardown ? " (pmigate ending the job)" : "");
    else if (r->kind == PG_TRACE_REC_END && rank < 0)
        fprintf(out, "%12.6f  %4s  %4s  %-5s %s  pmigate exits with status %d%s\n",
                (double)r->t_ns / 1e6, "-", "-", "-", "  ", r->status,
                r->stopped ? " (stopped from outside)" : "");
}

/* A trace of one node of a multi-node job (`pmigate proxy`). */
static void print_node(const pg_trace_header_t *h, FILE *out)
{
    fprintf(out, "node %d of %d (%s): this node's ranks only, numbered as in the whole job\n",
            h->node, h->nnodes, h->host);
}

size_t pg_trace_show(const pg_trace_analysis_t *a, const pg_trace_show_opts_t *o, FILE *out)
{
    const pg_trace_t *t = a->trace;
    size_t longest = 0, shown = 0;
    char *esc;

    for (size_t i = 0; i < t->nevents; i++)
        if (t->events[i].len > longest)
            longest = t->events[i].len;
    esc = malloc(pg_escaped_max(longest));
    if (esc == NULL)
        return 0;
    if (t->header.nnodes > 1)
        print_node(&t->header, out);
    fprintf(out, "%12s  %4s  %4s  %-5s %s  %s\n", "time (ms)", "rank", "conn", "proto", "  ",
            "message (-> to the gateway, <- from it)");
    for (size_t i = 0, k = 0; i <= t->nevents; i++) {
        for (; o->cmd == NULL && k < t->nrecords && t->records[k].before <= i; k++)
            show_record(&t->records[k], o->rank, out);
        if (i == t->nevents)
            break;
        if (o->rank >= 0 && t->events[i].rank != o->rank)
            continue;
        if (o->cmd != NULL && !pg_trace_event_matches_cmd(a, i, o->cmd))
            continue;
        show_event(&t->events[i], o->full, esc, out);
        shown++;
    }
    free(esc);
    return shown;
}

/* ---------------------------------------------------------------- */
/* stats                                                              */
/* ---------------------------------------------------------------- */

static void print_summary(const pg_trace_analysis_t *a, FILE *out)
{
    const pg_trace_t *t = a->trace;
    char d[32];

    fprintf(out, "job %s: %d rank%s, %zu messages on %d connection%s over %s (started %s)\n",
            t->header.kvsname, a->nranks, a->nranks == 1 ? "" : "s", t->nevents, t->nconns,
            t->nconns == 1 ? "" : "s", pg_trace_fmt_duration(a->t_last - a->t_first, d, sizeof(d)),
            t->header.start);
    if (t->header.nnodes > 1)
        print_node(&t->header, out);
    if (t->header.cmdline != NULL)
        fprintf(out, "command: %s\n", t->header.cmdline);
}

static void print_commands(const pg_trace_analysis_t *a, FILE *out)
{
    char mean[32], max[32];

    fprintf(out, "\n%-20s %-6s %8s %9s %12s %12s\n", "request", "proto", "count", "answered",
            "mean wait", "max wait");
    for (int c = 0; c < PG_CMD_COUNT; c++) {
        const pg_trace_cmd_stats_t *s = &a->cmds[c];

        if (s->requests == 0)
            continue;
        fprintf(out, "%-20s %-6s %8zu %9zu %12s %12s\n", pg_cmd_name((pg_cmd_t)c),
                pg_proto_name(pg_cmd_proto((pg_cmd_t)c)), s->requests, s->answered,
                s->answered ? pg_trace_fmt_duration(s->total_wait / s->answered, mean, sizeof(mean))
                            : "-",
                s->answered ? pg_trace_fmt_duration(s->max_wait, max, sizeof(max)) : "-");
    }
    for (int c = 1; c < PG_PMIX_CMD_MAX; c++) {
        const pg_trace_cmd_stats_t *s = &a->pmix_cmds[c];

        if (s->requests == 0)
            continue;
        fprintf(out, "%-20s %-6s %8zu %9zu %12s %12s\n", pg_pmix_cmd_name(c), "PMIx", s->requests,
                s->answered,
                s->answered ? pg_trace_fmt_duration(s->total_wait / s->answered, mean, sizeof(mean))
                            : "-",
                s->answered ? pg_trace_fmt_duration(s->max_wait, max, sizeof(max)) : "-");
    }
    if (a->unknown_requests > 0)
        fprintf(out, "%-20s %-6s %8zu\n", "(unnamed)", "-", a->unknown_requests);
}

/* Up to PG_TRACE_SLOWEST_SHOWN ranks that entered fence f last, latest
 * first, with how long after the first rank they came. */
static void print_slowest(const pg_trace_analysis_t *a, const pg_trace_fence_t *f, FILE *out)
{
    int picked[PG_TRACE_SLOWEST_SHOWN];
    int npicked = 0;
    char d[32];

    while (npicked < PG_TRACE_SLOWEST_SHOWN && npicked < f->entered) {
        int best = -1;

        for (int r = 0; r < a->nranks; r++) {
            int taken = 0;

            for (int k = 0; k < npicked; k++)
                taken |= picked[k] == r;
            if (!taken && f->entry[r] != UINT64_MAX &&
                (best < 0 || f->entry[r] > f->entry[best]))
                best = r;
        }
        if (best < 0)
            break;
        picked[npicked++] = best;
        fprintf(out, "%srank %d (+%s)", npicked > 1 ? ", " : "", best,
                pg_trace_fmt_duration(f->entry[best] - f->first_entry, d, sizeof(d)));
    }
}

/* Under a fence entered with several commands (a job of PMI-1, PMI-2 and
 * PMIx ranks): which ranks used which. */
static void print_fence_commands(const pg_trace_analysis_t *a, int k, FILE *out)
{
    const char *seen[8];
    int nseen = 0;

    for (size_t i = 0; i < a->nspans; i++) {
        const char *name;
        int known = 0;

        if (a->spans[i].fence != k)
            continue;
        name = pg_trace_event_name(&a->trace->events[a->spans[i].req]);
        for (int j = 0; j < nseen; j++)
            known |= strcmp(seen[j], name) == 0;
        if (known || nseen == (int)(sizeof(seen) / sizeof(seen[0])))
            continue;
        seen[nseen++] = name;
        fprintf(out, "%6s%s by rank", "", name);
        for (size_t j = i; j < a->nspans; j++)
            if (a->spans[j].fence == k &&
                strcmp(pg_trace_event_name(&a->trace->events[a->spans[j].req]), name) == 0)
                fprintf(out, " %d", a->spans[j].rank);
        fputc('\n', out);
    }
}

static void print_fences(const pg_trace_analysis_t *a, FILE *out)
{
    char dur[32];

    if (a->nfences == 0) {
        fprintf(out, "\nno fences or barriers\n");
        return;
    }
    fprintf(out, "\nfences and barriers (duration: first entry -> last release)\n");
    fprintf(out, "%4s  %-12s %9s %12s %12s  %s\n", "#", "command", "ranks", "at (ms)",
            "duration", "last to enter (after the first)");
    for (int k = 0; k < a->nfences; k++) {
        const pg_trace_fence_t *f = &a->fences[k];
        char ranks[32];

        snprintf(ranks, sizeof(ranks), "%d/%d", f->entered, a->nranks);
        if (f->released < f->entered)
            snprintf(dur, sizeof(dur), "unreleased");
        else
            pg_trace_fmt_duration(f->last_release - f->first_entry, dur, sizeof(dur));
        fprintf(out, "%4d  %-12s %9s %12.3f %12s  ", k, f->mixed ? "(mixed)" : f->name, ranks,
                (double)f->first_entry / 1e6, dur);
        print_slowest(a, f, out);
        fputc('\n', out);
        if (f->mixed)
            print_fence_commands(a, k, out);
    }
}

void pg_trace_print_stats(const pg_trace_analysis_t *a, FILE *out)
{
    print_summary(a, out);
    print_commands(a, out);
    print_fences(a, out);
}
