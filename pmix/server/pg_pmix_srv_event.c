/*
 * pg_pmix_srv_event: the events of the PMIx handler -- every PMIx process
 * is subscribed from init on and hears the engine's events as unasked
 * frames; PMIx_Notify_event raises one with the notifier's info[].
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"

/* ---- events ------------------------------------------------------------ */

/* The info[] an event carries on the wire: the notifier's, packed once for
 * all subscribers (ev->info), or for the events raised without a PMIx
 * packing (the engine's, a PMI-1/PMI-2 rank's abort, the host's) the
 * affected process (the source) and the event's typed details. */
static pmix_status_t event_pack_info(pmix_data_buffer_t *buf, const pg_event_t *ev)
{
    pmix_info_t *info;
    pmix_proc_t src;
    pmix_status_t rc = PMIX_SUCCESS;
    size_t n = 1;

    if (ev->info != NULL)
        return pg_buffer_append(buf, ev->info, ev->info_size);
    PMIX_INFO_CREATE(info, 1 + ev->ndetails);
    if (info == NULL)
        return PMIX_ERR_NOMEM;
    PMIX_LOAD_PROCID(&src, ev->source.nspace, ev->source.rank);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, &src, PMIX_PROC);
    for (size_t i = 0; i < ev->ndetails && rc == PMIX_SUCCESS; i++, n++) {
        PMIX_LOAD_KEY(info[n].key, ev->details[i].key);
        rc = pg_pmix_value_from_engine(&ev->details[i].value, &info[n].value);
    }
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(buf, info, n, PMIX_INFO);
    PMIX_INFO_FREE(info, 1 + ev->ndetails);
    return rc;
}

/* The engine delivers an event to this connection's process: one frame,
 * unasked (id 0), read by libpmix's progress thread. */
static void session_event(const pg_event_t *ev, void *cbdata)
{
    pg_pmix_session_t *s = cbdata;
    pmix_data_buffer_t buf;
    pmix_proc_t src;
    pmix_data_range_t range = ev->range;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&src, ev->source.nspace, ev->source.rank);
    pg_buffer_construct(&buf);
    rc = pg_pmix_msg_begin_reply(&buf, PG_PMIX_CMD_EVENT, 0, ev->status);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&buf, &src, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&buf, &range, PMIX_DATA_RANGE);
    if (rc == PMIX_SUCCESS)
        rc = event_pack_info(&buf, ev);
    if (rc == PMIX_SUCCESS)
        (void)pg_pmix_reply_send(s->peer, &buf); /* a dead peer is the host's to close */
    else
        pg_buffer_destruct(&buf);
}

/* Every PMIx process hears the events in its range from init on; libpmix
 * runs its handlers, or drops what no handler asked for. */
void pg_pmix_events_subscribe(pg_pmix_session_t *s, pg_engine_t *e, const pg_proc_t *self)
{
    if (e != NULL && s->event_sub == 0 &&
        pg_event_subscribe(e, self, session_event, s, &s->event_sub) != PMIX_SUCCESS)
        s->event_sub = 0; /* no events for this process, init still succeeds */
}

void pg_pmix_events_unsubscribe(pg_pmix_session_t *s)
{
    if (s->event_sub != 0)
        (void)pg_event_unsubscribe(s->peer->job->engine, s->event_sub);
    s->event_sub = 0;
}

/* Delivers `info` packed as the event's info[]. */
static pmix_status_t events_notify_with(pg_engine_t *e, pg_event_t *ev, const pmix_info_t *info,
                                        size_t ninfo)
{
    pmix_data_buffer_t packed;
    pmix_status_t rc;

    pg_buffer_construct(&packed);
    rc = pg_pmix_pack_array(&packed, info, ninfo, PMIX_INFO);
    if (rc == PMIX_SUCCESS) {
        ev->info = packed.base_ptr;
        ev->info_size = packed.bytes_used;
        rc = pg_event_notify(e, ev, NULL);
    }
    pg_buffer_destruct(&packed);
    return rc;
}

/* The jobs a PMIX_DEBUGGER_RELEASE names, each told to the host: the
 * processes of its custom range (the targets, or PMIX_EVENT_CUSTOM_RANGE
 * in its info, as OpenPMIx's debuggerd.c sends it with range LOCAL) and
 * PMIX_EVENT_AFFECTED_PROC(S).  Naming none releases every job the host
 * holds: the event then reaches them all. */
static size_t release_procs(pg_peer_t *peer, const pmix_proc_t *procs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        peer->ops->debugger_release(peer, procs[i].nspace);
    return n;
}

static size_t release_named(pg_peer_t *peer, const pmix_value_t *v)
{
    if (v->type == PMIX_PROC && v->data.proc != NULL)
        return release_procs(peer, v->data.proc, 1);
    if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL &&
        v->data.darray->type == PMIX_PROC && v->data.darray->array != NULL)
        return release_procs(peer, v->data.darray->array, v->data.darray->size);
    return 0;
}

static void debugger_release(pg_peer_t *peer, const pmix_proc_t *targets, size_t ntargets,
                             const pmix_info_t *info, size_t ninfo)
{
    size_t named;

    if (peer->ops->debugger_release == NULL)
        return;
    named = release_procs(peer, targets, ntargets);
    for (size_t i = 0; i < ninfo; i++)
        if (pg_pmix_info_is(&info[i], PMIX_EVENT_CUSTOM_RANGE) ||
            pg_pmix_info_is(&info[i], PMIX_EVENT_AFFECTED_PROC) ||
            pg_pmix_info_is(&info[i], PMIX_EVENT_AFFECTED_PROCS))
            named += release_named(peer, &info[i].value);
    if (named == 0)
        peer->ops->debugger_release(peer, NULL);
}

/* PMIx_Notify_event: status, source, range, custom targets[], info[]. */
int pg_pmix_serve_notify(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s), *targets = NULL;
    pmix_status_t code = PMIX_SUCCESS, rc;
    pmix_proc_t src, *procs = NULL;
    pmix_info_t *info = NULL;
    size_t nprocs = 0, ninfo = 0;
    pmix_data_range_t range = PMIX_RANGE_UNDEF;
    int ret = PG_HANDLER_OK;

    memset(&src, 0, sizeof(src));
    if (pg_pmix_unpack_one(in->args, &code, PMIX_STATUS) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &src, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &range, PMIX_DATA_RANGE) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&procs, &nprocs, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    /* the source is reported as given; the range is measured from the sender */
    pg_event_t ev = { code, { src.nspace[0] != '\0' ? src.nspace : self.nspace, src.rank },
                      self, range, NULL, 0, NULL, 0, NULL, 0 };
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_SUCCESS;
    if (rc == PMIX_SUCCESS && nprocs > 0) {
        if ((targets = pg_pmix_procs_to_engine(procs, nprocs, self.nspace)) == NULL)
            rc = PMIX_ERR_NOMEM;
        ev.targets = targets;
        ev.ntargets = nprocs;
    }
    if (rc == PMIX_SUCCESS)
        rc = events_notify_with(e, &ev, info, ninfo);
    if (rc == PMIX_SUCCESS && code == PMIX_DEBUGGER_RELEASE)
        debugger_release(in->peer, procs, nprocs, info, ninfo);
    (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, rc);
out:
    free(targets);
    pg_pmix_array_free(procs, nprocs, PMIX_PROC);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return ret;
}
