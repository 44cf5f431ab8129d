/*
 * pg_trace_svg: the timeline picture.  See pg_trace_svg.h.
 *
 * Layout, top to bottom: a title (job, ranks, duration, command), the rows
 * (one per rank, label on the left), the time axis, the legend.  Rows get
 * thinner as ranks grow so 128 ranks still fit a screen; below 10 px only
 * every k-th row is labelled.  A bar is at least one pixel wide so even a
 * 2 us get shows.
 */
#include "trace/pg_trace_svg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/pg_trace_view.h"

enum {
    MARGIN_LEFT = 90,
    MARGIN_RIGHT = 30,
    TITLE_H = 56,
    AXIS_H = 40,
    LEGEND_H = 50,
    ROW_H_MAX = 22,
    PLOT_H_TARGET = 640,
};

typedef struct layout {
    double x0, plot_w;     /* plot area, horizontally */
    double y0, row_h;      /* first row's top, row height */
    uint64_t t0, span_ns;  /* time shown */
    int height, width;
} layout_t;

static const char *const phase_colour[PG_TRACE_NPHASES] = {
    "#4e79a7", /* init: blue */
    "#59a14f", /* put: green */
    "#e15759", /* fence/barrier wait: red, the thing people look for */
    "#f28e2b", /* get: orange */
    "#76b7b2", /* finalize: teal */
    "#222222", /* abort: black */
    "#b07aa1", /* other: purple */
};

static double x_of(const layout_t *l, uint64_t t)
{
    return l->x0 + (double)(t - l->t0) * l->plot_w / (double)l->span_ns;
}

static double row_y(const layout_t *l, int rank)
{
    return l->y0 + rank * l->row_h;
}

/* Writes s with the XML specials escaped. */
static void xml_text(FILE *out, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '&')
            fputs("&amp;", out);
        else if (ch == '<')
            fputs("&lt;", out);
        else if (ch == '>')
            fputs("&gt;", out);
        else if (ch == '"')
            fputs("&quot;", out);
        else if (ch < 0x20 || ch == 0x7f)
            fputc(' ', out); /* not allowed in XML 1.0 */
        else
            fputc(ch, out);
    }
}

static layout_t make_layout(const pg_trace_analysis_t *a)
{
    layout_t l;
    int nranks = a->nranks > 0 ? a->nranks : 1;

    l.width = PG_TRACE_SVG_WIDTH;
    l.x0 = MARGIN_LEFT;
    l.plot_w = l.width - MARGIN_LEFT - MARGIN_RIGHT;
    l.row_h = (double)PLOT_H_TARGET / nranks;
    if (l.row_h > ROW_H_MAX)
        l.row_h = ROW_H_MAX;
    if (l.row_h < 2)
        l.row_h = 2;
    l.y0 = TITLE_H;
    l.t0 = a->t_first;
    l.span_ns = a->t_last > a->t_first ? a->t_last - a->t_first : 1;
    l.height = (int)ceil(l.y0 + nranks * l.row_h) + AXIS_H + LEGEND_H;
    return l;
}

static void write_title(const pg_trace_analysis_t *a, const layout_t *l, FILE *out)
{
    char dur[32];

    fprintf(out, "<text x=\"%d\" y=\"22\" font-size=\"16\" font-weight=\"bold\">pmigate trace: ",
            MARGIN_LEFT);
    xml_text(out, a->trace->header.kvsname);
    fprintf(out, ", %d rank%s, %s, %d fence%s/barrier%s</text>\n", a->nranks,
            a->nranks == 1 ? "" : "s", pg_trace_fmt_duration(l->span_ns, dur, sizeof(dur)),
            a->nfences, a->nfences == 1 ? "" : "s", a->nfences == 1 ? "" : "s");
    if (a->trace->header.cmdline != NULL) {
        char cmd[160];

        if (snprintf(cmd, sizeof(cmd), "%s", a->trace->header.cmdline) >= (int)sizeof(cmd))
            memcpy(cmd + sizeof(cmd) - 4, "...", 4); /* cut, and it shows */
        fprintf(out, "<text x=\"%d\" y=\"42\" font-size=\"12\" fill=\"#555\">", MARGIN_LEFT);
        xml_text(out, cmd);
        fputs("</text>\n", out);
    }
}

/* Tick spacing: 1, 2 or 5 times a power of ten, about 10 ticks. */
static uint64_t tick_step(uint64_t span_ns)
{
    double raw = (double)span_ns / 10.0, p = pow(10.0, floor(log10(raw > 1 ? raw : 1)));
    double m = raw / p;

    return (uint64_t)(p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10));
}

static void tick_label(uint64_t ns, uint64_t step, char *buf, size_t len)
{
    if (step >= 1000000)
        snprintf(buf, len, "%g ms", (double)ns / 1e6);
    else if (step >= 1000)
        snprintf(buf, len, "%g us", (double)ns / 1e3);
    else
        snprintf(buf, len, "%g ns", (double)ns);
}

static void write_axis(const pg_trace_analysis_t *a, const layout_t *l, FILE *out)
{
    double top = l->y0, bottom = l->y0 + a->nranks * l->row_h;
    uint64_t step = tick_step(l->span_ns);

    fprintf(out, "<g font-size=\"11\" fill=\"#333\">\n");
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
            l->x0, bottom, l->x0 + l->plot_w, bottom);
    for (uint64_t t = 0; t <= l->span_ns; t += step) {
        double x = x_of(l, l->t0 + t);
        char label[32];

        tick_label(t, step, label, sizeof(label));
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, top, x, bottom, x, bottom, x, bottom + 5, x, bottom + 18, label);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since the first "
                 "message</text>\n</g>\n",
            l->x0 + l->plot_w / 2, bottom + 34);
}

/* What rank r spoke ("PMI-1", "PMI-2", "PMIx"), from its connections;
 * NULL if it never said. */
static const char *rank_proto(const pg_trace_analysis_t *a, int r)
{
    for (int c = 0; c < a->trace->nconns; c++)
        if (a->trace->conns[c].rank == r && a->trace->conns[c].proto != PG_PROTO_NONE)
            return pg_proto_name(a->trace->conns[c].proto);
    return NULL;
}

static void write_rank_labels(const pg_trace_analysis_t *a, const layout_t *l, FILE *out)
{
    int every = l->row_h >= 10 ? 1 : (int)ceil(10.0 / l->row_h);
    double fs = l->row_h >= 12 ? 11 : 9;

    /* the protocol left of the rank, so a mixed job shows who speaks what */
    fprintf(out, "<g font-size=\"%.0f\" fill=\"#888\" text-anchor=\"start\">\n", fs);
    for (int r = 0; r < a->nranks; r += every) {
        const char *proto = rank_proto(a, r);

        if (proto != NULL)
            fprintf(out, "<text x=\"4\" y=\"%.2f\">%s</text>\n",
                    row_y(l, r) + l->row_h / 2 + fs / 3, proto);
    }
    fputs("</g>\n", out);

    fprintf(out, "<g font-size=\"%.0f\" fill=\"#333\" text-anchor=\"end\">\n", fs);
    for (int r = 0; r < a->nranks; r++) {
        if (r % 2 == 1) /* zebra rows help the eye follow a rank */
            fprintf(out, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" "
                         "fill=\"#f4f4f4\"/>\n",
                    l->x0, row_y(l, r), l->plot_w, l->row_h);
        if (r % every == 0)
            fprintf(out, "<text x=\"%.1f\" y=\"%.2f\">rank %d</text>\n", l->x0 - 6,
                    row_y(l, r) + l->row_h / 2 + fs / 3, r);
    }
    fputs("</g>\n", out);
}

/* The rank's life line: first to last message. */
static void write_life_lines(const pg_trace_analysis_t *a, const layout_t *l, FILE *out)
{
    const pg_trace_t *t = a->trace;
    uint64_t *first = malloc((size_t)a->nranks * 2 * sizeof(*first) + 1), *last;

    if (first == NULL)
        return; /* the picture is still right without them */
    last = first + a->nranks;
    for (int r = 0; r < a->nranks; r++) {
        first[r] = UINT64_MAX;
        last[r] = 0;
    }
    for (size_t i = 0; i < t->nevents; i++) {
        int r = t->events[i].rank;

        if (r < 0)
            continue;
        if (first[r] == UINT64_MAX)
            first[r] = t->events[i].t_ns;
        last[r] = t->events[i].t_ns;
    }
    for (int r = 0; r < a->nranks; r++)
        if (first[r] != UINT64_MAX)
            fprintf(out,
                    "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"#999\"/>\n",
                    x_of(l, first[r]), row_y(l, r) + l->row_h / 2, x_of(l, last[r]) + 1,
                    row_y(l, r) + l->row_h / 2);
    free(first);
}

static int held_fence(const pg_trace_analysis_t *a, const pg_trace_span_t *s)
{
    return s->fence != PG_TRACE_NONE && a->fences[s->fence].last_rank == s->rank &&
           a->fences[s->fence].entered > 1;
}

static void write_span(const pg_trace_analysis_t *a, const layout_t *l, const pg_trace_span_t *s,
                       FILE *out)
{
    double x = x_of(l, s->start), w = x_of(l, s->end) - x;
    double pad = l->row_h >= 6 ? l->row_h * 0.15 : 0, y = row_y(l, s->rank) + pad;
    int held = held_fence(a, s), unanswered = s->rep == PG_TRACE_NONE &&
                                              s->phase != PG_TRACE_PHASE_ABORT;
    char dur[32];

    if (w < 1)
        w = 1;
    fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"%s>", x, y,
            w, l->row_h - 2 * pad, phase_colour[s->phase],
            unanswered ? " fill-opacity=\"0.45\" stroke=\"#000\" stroke-dasharray=\"3,2\"" : "");
    fprintf(out, "<title>rank %d %s: %s%s", s->rank,
            pg_trace_event_name(&a->trace->events[s->req]),
            pg_trace_fmt_duration(s->end - s->start, dur, sizeof(dur)),
            unanswered ? ", no reply" : "");
    if (s->fence != PG_TRACE_NONE)
        fprintf(out, " (fence #%d%s)", s->fence, held ? ", entered last" : "");
    fputs("</title></rect>\n", out);
}

/* A black triangle above the entry of the rank every other rank waited for. */
static void write_held_marks(const pg_trace_analysis_t *a, const layout_t *l, FILE *out)
{
    /* never smaller than 8 px: with 128 thin rows it must still catch the eye */
    double size = l->row_h * 0.6 > 8 ? l->row_h * 0.6 : 8;

    for (int k = 0; k < a->nfences; k++) {
        const pg_trace_fence_t *f = &a->fences[k];
        double x, y;

        if (f->entered < 2 || f->last_rank < 0)
            continue;
        x = x_of(l, f->last_entry);
        y = row_y(l, f->last_rank) + l->row_h / 2;
        fprintf(out, "<path d=\"M%.2f %.2f l%.2f %.2f l%.2f 0 z\" fill=\"#000\" "
                     "stroke=\"#fff\" stroke-width=\"0.8\">"
                     "<title>fence #%d: rank %d entered last</title></path>\n",
                x, y, -size / 2, -size, size, k, f->last_rank);
    }
}

static void legend_item(FILE *out, double *x, double y, const char *swatch, const char *label)
{
    fprintf(out, "%s<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", swatch, *x + 18, y + 10, label);
    *x += 26 + 7.0 * (double)strlen(label);
}

static void write_legend(const pg_trace_analysis_t *a, const layout_t *l, FILE *out)
{
    double x = l->x0, y = l->y0 + a->nranks * l->row_h + AXIS_H + 14;
    char sw[256];

    fputs("<g font-size=\"12\" fill=\"#333\">\n", out);
    for (int p = 0; p < PG_TRACE_NPHASES; p++) {
        snprintf(sw, sizeof(sw),
                 "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"%s\"/>", x, y,
                 phase_colour[p]);
        legend_item(out, &x, y, sw, p == PG_TRACE_PHASE_FENCE ? "fence/barrier wait"
                                                               : pg_trace_phase_name(p));
    }
    snprintf(sw, sizeof(sw), "<path d=\"M%.1f %.1f l-6 -10 l12 0 z\" fill=\"#000\"/>", x + 7,
             y + 11);
    legend_item(out, &x, y, sw, "entered the fence last");
    snprintf(sw, sizeof(sw),
             "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"#e15759\" "
             "fill-opacity=\"0.45\" stroke=\"#000\" stroke-dasharray=\"3,2\"/>",
             x, y);
    legend_item(out, &x, y, sw, "no reply");
    fputs("</g>\n", out);
}

int pg_trace_svg_write(const pg_trace_analysis_t *a, FILE *out)
{
    layout_t l = make_layout(a);

    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
            l.width, l.height, l.width, l.height);
    write_title(a, &l, out);
    write_rank_labels(a, &l, out);
    write_axis(a, &l, out);
    fprintf(out, "<g class=\"rows\">\n");
    write_life_lines(a, &l, out);
    for (size_t i = 0; i < a->nspans; i++)
        if (a->spans[i].rank >= 0)
            write_span(a, &l, &a->spans[i], out);
    write_held_marks(a, &l, out);
    fputs("</g>\n", out);
    write_legend(a, &l, out);
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}
