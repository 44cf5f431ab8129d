/*
 * pg_proxy_end: how `pmigate proxy` ends its node's part of a job over
 * several nodes (docs/proxy.md, "The first failure decides,
 * job-wide").  It turns what happens to this node into failures for the
 * job (pg_jobend): the node's first verdict (an abort, a rank lost or
 * exiting non-zero, --timeout, a signal), the host runtime's loss (its
 * process on the node gone, or OpenPMIx's connection to it lost); and it
 * applies the job's end, whoever decided it, to the node's ranks.
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/proxy/pg_proxy_int.h"
#include "gateway/util/pg_status.h"

/* One line on a verdict's failure, for the other nodes. */
static void describe_verdict(const pg_verdict_t *v, char *text, size_t len)
{
    switch (v->cause) {
    case PG_CAUSE_ABORT:
        if (v->rank >= 0)
            snprintf(text, len, "rank %d aborted the job (code %d)", v->rank, v->code);
        else
            snprintf(text, len, "the job was aborted (code %d)", v->code);
        break;
    case PG_CAUSE_RANK:
        if (v->code > 128)
            snprintf(text, len, "rank %d was killed by signal %d", v->rank, v->code - 128);
        else
            snprintf(text, len, "rank %d exited with status %d", v->rank, v->code);
        break;
    case PG_CAUSE_LOST:
        snprintf(text, len, "rank %d was lost before PMI finalize", v->rank);
        break;
    case PG_CAUSE_TIMEOUT:
        snprintf(text, len, "the job timed out (--timeout)");
        break;
    case PG_CAUSE_SIGNAL:
        snprintf(text, len, "pmigate proxy got signal %d", v->code - 128);
        break;
    case PG_CAUSE_LAUNCH:
        snprintf(text, len, "rank %d could not be started", v->rank);
        break;
    case PG_CAUSE_SILENT:
        snprintf(text, len, "a rank never spoke PMI (--strict)");
        break;
    case PG_CAUSE_STALLED:
        snprintf(text, len, "rank %d showed no life (a heartbeat watch)", v->rank);
        break;
    default:
        snprintf(text, len, "its job failed (status %d)", v->code);
        break;
    }
}

void pg_proxy_on_verdict(void *ctx, const pg_verdict_t *v)
{
    proxy_t *p = ctx;
    char text[PG_JOBEND_TEXT_MAX];

    if (p->applying || p->jobend == NULL)
        return;
    describe_verdict(v, text, sizeof(text));
    pg_jobend_fail(p->jobend, v->code, v->cause == PG_CAUSE_ABORT, text);
}

/* From the loop: the job's end reaches this node's ranks.  Not from
 * inside the callbacks that decided it (pg_job may be in the middle of
 * judging a rank). */
static void on_apply_end(evutil_socket_t fd, short what, void *arg)
{
    proxy_t *p = arg;

    (void)fd;
    (void)what;
    if (p->run == NULL)
        return;
    p->applying = true;
    pg_job_abort(pg_run_root(p->run), -1, p->end_code, p->end_text);
    p->applying = false;
}

void pg_proxy_end_apply_soon(proxy_t *p)
{
    struct timeval now = { 0, 0 };

    evtimer_add(p->end_ev, &now);
}

bool pg_proxy_end_decided(const proxy_t *p)
{
    return p->jobend != NULL && pg_jobend_code(p->jobend) >= 0;
}

/* pg_jobend's decision: every node ends its ranks and exits with `code`
 * (a node whose run has not started yet applies it when it does). */
static void on_job_end(void *arg, int code, int origin, const char *text)
{
    proxy_t *p = arg;

    p->end_code = code;
    p->end_origin = origin;
    snprintf(p->end_text, sizeof(p->end_text), "%s", text);
    if (p->run != NULL)
        pg_proxy_end_apply_soon(p);
}

void pg_proxy_fail(proxy_t *p, int code, const char *text)
{
    if (p->jobend != NULL)
        pg_jobend_fail(p->jobend, code, false, text);
    if (p->run == NULL) {
        fprintf(stderr, "pmigate: node %d: %s\n", p->nodeid, text);
        return;
    }
    p->applying = true;
    pg_job_abort(pg_run_root(p->run), -1, code, text);
    p->applying = false;
}

/* The host runtime's process on this node is gone (pg_parent). */
static void on_parent_gone(void *arg, pid_t pid)
{
    proxy_t *p = arg;
    char text[160];

    if (p->host_lost)
        return;
    p->host_lost = true;
    snprintf(text, sizeof(text), "the host runtime is gone: its process %ld (%s) on this node "
                                 "ended",
             (long)pid, p->parent_name[0] != '\0' ? p->parent_name : "?");
    pg_proxy_fail(p, PG_EXIT_INTERNAL, text);
}

/* OpenPMIx lost its connection to the host's server (pg_hostpmix). */
static void on_host_lost(void *arg)
{
    proxy_t *p = arg;

    if (p->host_lost)
        return;
    p->host_lost = true;
    pg_proxy_fail(p, PG_EXIT_INTERNAL, "the host runtime is gone: the PMIx connection to it was lost");
}

/* The parent's command name, while it is there to ask. */
static void read_parent_name(proxy_t *p)
{
    char path[64];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/comm", (long)p->parent);
    f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(p->parent_name, sizeof(p->parent_name), f) != NULL)
        p->parent_name[strcspn(p->parent_name, "\n")] = '\0';
    fclose(f);
}

int pg_proxy_end_setup(proxy_t *p)
{
    p->end_ev = evtimer_new(p->base, on_apply_end, p);
    if (p->end_ev == NULL)
        return -1;
    if (p->mesh != NULL) {
        p->jobend = pg_jobend_new(p->mesh, (const char *const *)p->hostnames, on_job_end, p);
        if (p->jobend == NULL)
            return -1;
    }
    read_parent_name(p);
    p->parent_watch = pg_parent_watch(p->base, p->parent, on_parent_gone, p);
    pg_hostpmix_on_lost(p->host, on_host_lost, p);
    return p->parent_watch != NULL ? 0 : -1;
}

void pg_proxy_end_free(proxy_t *p)
{
    pg_jobend_free(p->jobend);
    p->jobend = NULL;
    pg_parent_free(p->parent_watch);
    p->parent_watch = NULL;
    if (p->end_ev != NULL)
        event_free(p->end_ev);
    p->end_ev = NULL;
}

int pg_proxy_end_finish(proxy_t *p, int status)
{
    int code;

    if (p->jobend == NULL)
        return status;
    code = pg_jobend_finish(p->jobend, status);
    if (code != status && p->end_origin != p->nodeid)
        fprintf(stderr, "pmigate: node %d: the job ends with status %d: %s\n", p->nodeid, code,
                p->end_text);
    return code;
}
