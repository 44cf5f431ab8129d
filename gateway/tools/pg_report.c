/*
 * pg_report: the words of `pmigate status`.  See pg_report.h.
 */
#include "gateway/tools/pg_report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Appends at *at, never past len (keeps the NUL).  0, or -1 when it did
 * not fit (nothing of it is kept then). */
static int put(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len - *at) {
        buf[*at] = '\0';
        return -1;
    }
    *at += (size_t)n;
    return 0;
}

const char *pg_report_ranks(char *buf, size_t len, const uint32_t *ranks, size_t n)
{
    /* room kept for ", ... (+4294967295 more)" */
    size_t at = 0, keep = len > 28 ? len - 28 : 0;

    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < n;) {
        size_t j = i;
        size_t before = at;

        while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
            j++;
        if (j - i >= 2 ? put(buf, keep, &at, "%s%u-%u", i ? ", " : "", ranks[i], ranks[j]) != 0
                       : put(buf, keep, &at, "%s%u", i ? ", " : "", ranks[i]) != 0) {
            at = before;
            buf[at] = '\0';
            (void)put(buf, len, &at, "%s... (+%zu more)", i ? ", " : "", n - i);
            return buf;
        }
        i = j - i >= 2 ? j + 1 : i + 1;
    }
    return buf;
}

void pg_report_job(FILE *out, const pg_report_job_t *j)
{
    fprintf(out, "job %d %s", j->jobno, j->kvsname);
    if (j->parent_kvsname != NULL)
        fprintf(out, " (spawned by rank %d of %s)", j->parent_rank, j->parent_kvsname);
    if (j->nlocal < j->size)
        fprintf(out, ": ranks %d-%d of %d on this node", j->first, j->first + j->nlocal - 1,
                j->size);
    else
        fprintf(out, ": %d rank%s", j->size, j->size == 1 ? "" : "s");
    fprintf(out, ": %d launched, %d initialised, %d finalized, %d exited%s\n", j->launched,
            j->initialised, j->finalized, j->exited,
            j->held_in_init ? ": held in init for a debugger" : "");
}

static double seconds_since(pg_time_t then, pg_time_t now)
{
    return now > then ? (double)(now - then) / 1e9 : 0.0;
}

/* The ranks of procs[0..n), "nspace:rank" for those of another nspace
 * than `ns`.  Into buf. */
static const char *procs_text(char *buf, size_t len, const pg_proc_t *procs, size_t n,
                              const char *ns)
{
    uint32_t *ranks = calloc(n ? n : 1, sizeof(*ranks));
    size_t k = 0, at;

    if (ranks == NULL) {
        snprintf(buf, len, "%zu processes", n);
        return buf;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(procs[i].nspace, ns) == 0)
            ranks[k++] = procs[i].rank;
    pg_report_ranks(buf, len, ranks, k);
    free(ranks);
    at = strlen(buf);
    for (size_t i = 0; i < n; i++)
        if (strcmp(procs[i].nspace, ns) != 0 &&
            put(buf, len, &at, "%s%s:%u", at ? ", " : "", procs[i].nspace, procs[i].rank) != 0)
            break;
    return buf;
}

/* "fence 3" (whole job), "fence 2 of ranks 0, 3", "group collective 1 of
 * ranks 0-3". */
static void fence_name(FILE *out, const pg_fence_view_t *f)
{
    char who[256];

    if (f->whole_job) {
        fprintf(out, "fence %llu", (unsigned long long)f->seq);
        return;
    }
    for (size_t i = 0; i < f->nparticipants; i++)
        if (f->participants[i].rank == PMIX_RANK_WILDCARD) {
            snprintf(who, sizeof(who), "%zu processes", f->nmembers);
            goto named;
        }
    procs_text(who, sizeof(who), f->participants, f->nparticipants, f->participants[0].nspace);
named:
    fprintf(out, "%s %llu of %s", f->group ? "group collective" : "fence",
            (unsigned long long)f->seq, who);
}

void pg_report_fence(FILE *out, const pg_fence_view_t *f, pg_time_t now)
{
    char missing[512];
    const char *ns = f->nparticipants > 0 ? f->participants[0].nspace : "";

    fprintf(out, "  ");
    fence_name(out, f);
    if (f->host_pending)
        fprintf(out, ": this node's %zu rank%s joined, waiting for the other nodes", f->nlocal,
                f->nlocal == 1 ? "" : "s");
    else {
        procs_text(missing, sizeof(missing), f->missing, f->nmissing, ns);
        fprintf(out, ": waiting for rank%s %s (of %zu", f->nmissing == 1 ? "" : "s", missing,
                f->nmembers);
        if (f->nlocal < f->nmembers)
            fprintf(out, "; %zu on this node", f->nlocal);
        fprintf(out, ")");
    }
    fprintf(out, ", started %.1f s ago\n", seconds_since(f->started, now));
}

void pg_report_wait(FILE *out, const pg_wait_view_t *w, pg_time_t now)
{
    double age = seconds_since(w->since, now);

    fprintf(out, "  rank %u waits ", w->requester.rank);
    switch (w->kind) {
    case PG_WAIT_GET:
        fprintf(out, "for key \"%s\" of ", w->key);
        if (w->target.rank == PMIX_RANK_UNDEF || w->target.rank == PMIX_RANK_WILDCARD)
            fprintf(out, "any rank");
        else
            fprintf(out, "rank %u", w->target.rank);
        if (strcmp(w->target.nspace, w->requester.nspace) != 0)
            fprintf(out, " of %s", w->target.nspace);
        break;
    case PG_WAIT_NODE_ATTR:
        fprintf(out, "for node attribute \"%s\"", w->key);
        break;
    default:
        fprintf(out, "for the name \"%s\" to be published", w->key);
        break;
    }
    fprintf(out, ", %.1f s\n", age);
}

const char *pg_report_progress(char *buf, size_t len, const pg_fence_view_t *f, int initialised,
                               int size, pg_time_t since, pg_time_t now)
{
    if (f == NULL)
        snprintf(buf, len, "wire-up: %d/%d ranks initialised, %.1f s", initialised, size,
                 seconds_since(since, now));
    else if (f->host_pending)
        snprintf(buf, len, "wire-up: %zu/%zu ranks in fence %llu (the other nodes), %.1f s",
                 f->nlocal, f->nmembers, (unsigned long long)f->seq,
                 seconds_since(f->started, now));
    else
        snprintf(buf, len, "wire-up: %zu/%zu ranks in fence %llu, %.1f s", f->njoined,
                 f->nlocal, (unsigned long long)f->seq, seconds_since(f->started, now));
    return buf;
}
