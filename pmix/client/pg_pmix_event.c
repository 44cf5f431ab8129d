/*
 * pg_pmix_event: PMIx events in libpmix -- PMIx_Register_event_handler,
 * PMIx_Deregister_event_handler, PMIx_Notify_event, and the delivery of
 * events to handlers.
 *
 * Why it exists: programs register handlers to learn that a peer aborted
 * or died, that the gateway went away, or what their own peers announce;
 * the usual pattern (register, wait for the registration callback) must
 * complete, and an event must reach every matching handler in the
 * Standard's order.  Events come from three places: the gateway (an event
 * frame: a peer's PMIx_Notify_event, a peer's PMIx_Abort, a peer lost
 * before finalize), this process's own PMIx_Notify_event (its own
 * handlers are in most ranges), and the connection breaking
 * (PMIX_ERR_LOST_CONNECTION).
 *
 * Order (as OpenPMIx): the handler registered with PMIX_EVENT_HDLR_FIRST,
 * then the single-code handlers, the multi-code handlers, the default
 * handlers (no codes), then the one registered PMIX_EVENT_HDLR_LAST; in
 * each category the _FIRST_IN_CATEGORY one, the others in registration
 * order (PMIX_EVENT_HDLR_PREPEND puts one ahead of them; _BEFORE / _AFTER
 * place one next to a named handler), then the _LAST_IN_CATEGORY one.
 * A handler passes the event on by calling the completion callback it was
 * given; PMIX_EVENT_ACTION_COMPLETE ends the chain, any other status hands
 * the event, with the results gathered so far, to the next handler.
 *
 * Threads: handlers run on the progress thread, one chain step at a time;
 * a handler's completion queues the next step there (from any thread).
 * `ev.lock` guards the handler list; no handler runs with it held.
 */
#include "config/config.h"

#include <pmix.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmix/client/pg_pmix_client_int.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"

/* Where a handler sits: the categories in chain order. */
enum { CAT_FIRST, CAT_SINGLE, CAT_MULTI, CAT_DEFAULT, CAT_LAST, NCATS };

/* Place inside a category. */
enum { POS_HEAD = 0, POS_MIDDLE = 1, POS_TAIL = 2 };

typedef struct evh {
    struct evh *next;
    size_t id;
    int cat, pos;
    pmix_status_t *codes; /* NULL: default handler */
    size_t ncodes;
    pmix_proc_t *affected; /* NULL: any */
    size_t naffected;
    pmix_data_range_t range; /* sources it accepts; UNDEF: any */
    char *name;
    void *object; /* PMIX_EVENT_RETURN_OBJECT */
    bool oneshot;
    pmix_notification_fn_t fn;
} evh_t;

static struct {
    pthread_mutex_t lock;
    evh_t *cats[NCATS];
    size_t next_id;
    pg_mux_t *mux;   /* NULL outside Init..Finalize */
    bool quiet;      /* finalizing: a closing socket is expected */
} ev = { PTHREAD_MUTEX_INITIALIZER, { NULL }, 1, NULL, false };

/* ---- handlers ------------------------------------------------------------ */

static void evh_free(evh_t *h)
{
    if (h == NULL)
        return;
    free(h->codes);
    free(h->affected);
    free(h->name);
    free(h);
}

static evh_t *evh_find(size_t id, evh_t ***link)
{
    for (int c = 0; c < NCATS; c++)
        for (evh_t **p = &ev.cats[c]; *p != NULL; p = &(*p)->next)
            if ((*p)->id == id) {
                if (link != NULL)
                    *link = p;
                return *p;
            }
    return NULL;
}

static evh_t *evh_find_name(const char *name)
{
    for (int c = 0; c < NCATS; c++)
        for (evh_t *h = ev.cats[c]; h != NULL; h = h->next)
            if (h->name != NULL && strcmp(h->name, name) == 0)
                return h;
    return NULL;
}

/* Links h into its category: before the first handler of a later
 * position, so heads stay first and tails last. */
static pmix_status_t evh_link(evh_t *h, const char *before, const char *after)
{
    evh_t **p = &ev.cats[h->cat];

    if (before != NULL || after != NULL) {
        evh_t *ref = evh_find_name(before != NULL ? before : after);

        if (ref == NULL || ref->cat != h->cat)
            return PMIX_ERR_NOT_FOUND; /* no such handler to sit next to */
        while (*p != ref)
            p = &(*p)->next;
        if (after != NULL)
            p = &ref->next;
        h->pos = ref->pos;
    } else {
        for (; *p != NULL; p = &(*p)->next) {
            if ((*p)->pos == h->pos && h->pos != POS_MIDDLE)
                return PMIX_ERR_EVENT_REGISTRATION; /* one first, one last per category */
            if ((*p)->pos > h->pos)
                break;
        }
    }
    h->next = *p;
    *p = h;
    return PMIX_SUCCESS;
}

/* Procs from a PMIX_PROC value or a PMIX_DATA_ARRAY of them. */
static pmix_status_t procs_of(const pmix_value_t *v, pmix_proc_t **out, size_t *n)
{
    const pmix_proc_t *src = NULL;
    size_t count = 0;

    if (v->type == PMIX_PROC && v->data.proc != NULL) {
        src = v->data.proc;
        count = 1;
    } else if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL &&
               v->data.darray->type == PMIX_PROC) {
        src = v->data.darray->array;
        count = v->data.darray->size;
    } else
        return PMIX_ERR_BAD_PARAM;
    if (count == 0 || src == NULL)
        return PMIX_ERR_BAD_PARAM;
    *out = calloc(count, sizeof(**out));
    if (*out == NULL)
        return PMIX_ERR_NOMEM;
    memcpy(*out, src, count * sizeof(**out));
    *n = count;
    return PMIX_SUCCESS;
}

typedef struct reg_opts {
    const char *before, *after;
    bool prepend;
} reg_opts_t;

static bool info_key_is(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

/* The registration directives into h (category and codes already set). */
static pmix_status_t evh_apply_info(evh_t *h, const pmix_info_t *info, size_t n, reg_opts_t *o)
{
    for (size_t i = 0; info != NULL && i < n; i++) {
        const pmix_info_t *x = &info[i];
        const pmix_value_t *v = &x->value;
        pmix_status_t rc = PMIX_SUCCESS;

        if (info_key_is(x, PMIX_EVENT_HDLR_NAME) && v->type == PMIX_STRING && v->data.string) {
            free(h->name);
            h->name = strdup(v->data.string);
            rc = h->name == NULL ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
        } else if (info_key_is(x, PMIX_EVENT_HDLR_FIRST) && PMIx_Info_true(x))
            h->cat = CAT_FIRST;
        else if (info_key_is(x, PMIX_EVENT_HDLR_LAST) && PMIx_Info_true(x))
            h->cat = CAT_LAST;
        else if (info_key_is(x, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY) && PMIx_Info_true(x))
            h->pos = POS_HEAD;
        else if (info_key_is(x, PMIX_EVENT_HDLR_LAST_IN_CATEGORY) && PMIx_Info_true(x))
            h->pos = POS_TAIL;
        else if (info_key_is(x, PMIX_EVENT_HDLR_PREPEND) && PMIx_Info_true(x))
            o->prepend = true;
        else if (info_key_is(x, PMIX_EVENT_HDLR_BEFORE) && v->type == PMIX_STRING)
            o->before = v->data.string;
        else if (info_key_is(x, PMIX_EVENT_HDLR_AFTER) && v->type == PMIX_STRING)
            o->after = v->data.string;
        else if (info_key_is(x, PMIX_EVENT_AFFECTED_PROC) ||
                 info_key_is(x, PMIX_EVENT_AFFECTED_PROCS)) {
            free(h->affected);
            h->affected = NULL;
            rc = procs_of(v, &h->affected, &h->naffected);
        } else if (info_key_is(x, PMIX_RANGE) && v->type == PMIX_DATA_RANGE)
            h->range = v->data.range;
        else if (info_key_is(x, PMIX_EVENT_RETURN_OBJECT) && v->type == PMIX_POINTER)
            h->object = v->data.ptr;
        else if (info_key_is(x, PMIX_EVENT_ONESHOT) && PMIx_Info_true(x))
            h->oneshot = true;
        if (rc != PMIX_SUCCESS)
            return rc;
    }
    if ((o->before != NULL && o->after != NULL) || (o->prepend && (o->before || o->after)))
        return PMIX_ERR_BAD_PARAM; /* contradictory placements */
    return PMIX_SUCCESS;
}

/* Prepending: ahead of every ordinary handler of the category (behind a
 * _FIRST_IN_CATEGORY one). */
static pmix_status_t evh_link_prepend(evh_t *h)
{
    evh_t **p = &ev.cats[h->cat];

    while (*p != NULL && (*p)->pos == POS_HEAD)
        p = &(*p)->next;
    h->next = *p;
    *p = h;
    return PMIX_SUCCESS;
}

static pmix_status_t evh_register(evh_t *h, const reg_opts_t *o)
{
    pmix_status_t rc;

    pthread_mutex_lock(&ev.lock);
    if (h->cat == CAT_FIRST || h->cat == CAT_LAST)
        rc = ev.cats[h->cat] != NULL ? PMIX_ERR_EVENT_REGISTRATION : PMIX_SUCCESS;
    else
        rc = PMIX_SUCCESS;
    if (rc == PMIX_SUCCESS && h->name != NULL && evh_find_name(h->name) != NULL)
        rc = PMIX_ERR_EVENT_REGISTRATION; /* names are how handlers are placed */
    if (rc == PMIX_SUCCESS) {
        h->id = ev.next_id++;
        rc = o->prepend && h->pos == POS_MIDDLE ? evh_link_prepend(h)
                                                : evh_link(h, o->before, o->after);
    }
    pthread_mutex_unlock(&ev.lock);
    return rc;
}

/* ---- registration's callbacks run later, on the progress thread -------- */

typedef struct reg_done {
    pmix_hdlr_reg_cbfunc_t reg;
    pmix_op_cbfunc_t op;
    pmix_status_t status;
    size_t id;
    void *cbdata;
} reg_done_t;

static void reg_done_run(void *arg)
{
    reg_done_t *d = arg;

    if (d->reg != NULL)
        d->reg(d->status, d->id, d->cbdata);
    if (d->op != NULL)
        d->op(d->status, d->cbdata);
    free(d);
}

static pmix_status_t defer_done(reg_done_t proto)
{
    pg_mux_t *m = pg_client_mux();
    reg_done_t *d;

    if (m == NULL)
        return PMIX_ERR_INIT;
    if ((d = malloc(sizeof(*d))) == NULL)
        return PMIX_ERR_NOMEM;
    *d = proto;
    if (pg_mux_defer(m, reg_done_run, d) != PMIX_SUCCESS) {
        free(d);
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                          pmix_info_t info[], size_t ninfo,
                                          pmix_notification_fn_t evhdlr,
                                          pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata)
{
    reg_opts_t opts = { NULL, NULL, false };
    evh_t *h;
    pmix_status_t rc;

    if (pg_client_mux() == NULL)
        return PMIX_ERR_INIT;
    if (evhdlr == NULL || (codes == NULL && ncodes > 0) || (info == NULL && ninfo > 0))
        return PMIX_ERR_BAD_PARAM;
    if ((h = calloc(1, sizeof(*h))) == NULL)
        return PMIX_ERR_NOMEM;
    h->fn = evhdlr;
    h->pos = POS_MIDDLE;
    h->range = PMIX_RANGE_UNDEF;
    h->cat = codes == NULL || ncodes == 0 ? CAT_DEFAULT : ncodes == 1 ? CAT_SINGLE : CAT_MULTI;
    if (ncodes > 0 && codes != NULL) {
        if ((h->codes = malloc(ncodes * sizeof(*codes))) == NULL) {
            evh_free(h);
            return PMIX_ERR_NOMEM;
        }
        memcpy(h->codes, codes, ncodes * sizeof(*codes));
        h->ncodes = ncodes;
    }
    rc = evh_apply_info(h, info, ninfo, &opts);
    if (rc == PMIX_SUCCESS)
        rc = evh_register(h, &opts);
    if (rc != PMIX_SUCCESS) {
        evh_free(h);
        return rc;
    }
    if (cbfunc == NULL)
        return (pmix_status_t)h->id; /* the blocking form answers with the reference */
    rc = defer_done((reg_done_t){ cbfunc, NULL, PMIX_SUCCESS, h->id, cbdata });
    if (rc != PMIX_SUCCESS) { /* no callback will come: the registration is undone */
        pthread_mutex_lock(&ev.lock);
        evh_t **link, *same = evh_find(h->id, &link);
        if (same != NULL)
            *link = same->next;
        pthread_mutex_unlock(&ev.lock);
        evh_free(same);
    }
    return rc;
}

/* Removes handler `id`; false when there is none. */
static bool evh_remove(size_t id)
{
    evh_t **link, *h;

    pthread_mutex_lock(&ev.lock);
    h = evh_find(id, &link);
    if (h != NULL)
        *link = h->next;
    pthread_mutex_unlock(&ev.lock);
    evh_free(h);
    return h != NULL;
}

/* A reference never registered (or already gone) is the Standard's
 * PMIX_ERR_BAD_PARAM, delivered like any other outcome: through the
 * callback when there is one.  Programs wait for that callback whatever
 * they deregister (OpenPMIx's examples deregister handler 1 blindly, and
 * OpenPMIx calls back with PMIX_SUCCESS): refusing inline left them
 * waiting forever. */
pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                            void *cbdata)
{
    pmix_status_t status;

    if (pg_client_mux() == NULL)
        return PMIX_ERR_INIT;
    status = evh_remove(evhdlr_ref) ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
    if (cbfunc == NULL)
        return status;
    return defer_done((reg_done_t){ NULL, cbfunc, status, evhdlr_ref, cbdata });
}

/* ---- matching ------------------------------------------------------------- */

static bool proc_matches(const pmix_proc_t *want, const pmix_proc_t *got)
{
    return PMIX_CHECK_NSPACE(want->nspace, got->nspace) &&
           (want->rank == PMIX_RANK_WILDCARD || got->rank == PMIX_RANK_WILDCARD ||
            want->rank == got->rank);
}

/* Does the event name (PMIX_EVENT_AFFECTED_PROC[S]) one of h's procs? */
static bool affected_matches(const evh_t *h, const pmix_info_t *info, size_t n)
{
    if (h->affected == NULL)
        return true;
    for (size_t i = 0; i < n; i++) {
        pmix_proc_t *procs = NULL;
        size_t np = 0;
        bool hit = false;

        if (!info_key_is(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
            !info_key_is(&info[i], PMIX_EVENT_AFFECTED_PROCS))
            continue;
        if (procs_of(&info[i].value, &procs, &np) != PMIX_SUCCESS)
            continue;
        for (size_t a = 0; a < h->naffected && !hit; a++)
            for (size_t p = 0; p < np && !hit; p++)
                hit = proc_matches(&h->affected[a], &procs[p]);
        free(procs);
        if (hit)
            return true;
    }
    return false;
}

/* Is the event's source inside the range h registered for? */
static bool range_matches(const evh_t *h, const pmix_proc_t *source)
{
    pmix_proc_t self;

    pg_client_self(&self);
    switch (h->range) {
    case PMIX_RANGE_PROC_LOCAL:
        return PMIX_CHECK_PROCID(source, &self);
    case PMIX_RANGE_NAMESPACE:
        return PMIX_CHECK_NSPACE(source->nspace, self.nspace);
    default: /* the gateway serves one node's session: every other range holds */
        return true;
    }
}

static bool evh_matches(const evh_t *h, pmix_status_t status, const pmix_proc_t *source,
                        const pmix_info_t *info, size_t n, bool non_default)
{
    bool code_ok = h->codes == NULL ? !non_default : false;

    for (size_t i = 0; i < h->ncodes && !code_ok; i++)
        code_ok = h->codes[i] == status;
    return code_ok && affected_matches(h, info, n) && range_matches(h, source);
}

/* ---- delivery: a chain of handlers ------------------------------------- */

typedef struct chain {
    pmix_status_t status;
    pmix_proc_t source;
    pmix_info_t *info; /* ninfo + 1: the spare slot carries a handler's return object */
    size_t ninfo;
    pmix_info_t *results; /* gathered from the handlers so far */
    size_t nresults;
    size_t *ids; /* the matching handlers, in order, when the event came */
    size_t nids, next;
} chain_t;

static void chain_free(chain_t *c)
{
    if (c == NULL)
        return;
    c->info[c->ninfo].value.type = PMIX_UNDEF; /* borrowed pointer, never freed */
    PMIx_Info_free(c->info, c->ninfo + 1);
    PMIx_Info_free(c->results, c->nresults);
    free(c->ids);
    free(c);
}

/* The matching handlers' ids, in chain order. */
static pmix_status_t chain_collect(chain_t *c)
{
    bool non_default = false;
    size_t cap = 0;

    for (size_t i = 0; i < c->ninfo; i++)
        if (info_key_is(&c->info[i], PMIX_EVENT_NON_DEFAULT) && PMIx_Info_true(&c->info[i]))
            non_default = true;
    pthread_mutex_lock(&ev.lock);
    for (int cat = 0; cat < NCATS; cat++)
        for (evh_t *h = ev.cats[cat]; h != NULL; h = h->next)
            cap++;
    c->ids = calloc(cap > 0 ? cap : 1, sizeof(*c->ids));
    for (int cat = 0; c->ids != NULL && cat < NCATS; cat++)
        for (evh_t *h = ev.cats[cat]; h != NULL; h = h->next)
            if (evh_matches(h, c->status, &c->source, c->info, c->ninfo, non_default))
                c->ids[c->nids++] = h->id;
    pthread_mutex_unlock(&ev.lock);
    return c->ids == NULL ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

static void chain_step(chain_t *c);

static void chain_step_deferred(void *arg)
{
    chain_step(arg);
}

/* Adds a handler's results to those the next handler sees. */
static void chain_gather(chain_t *c, const pmix_info_t *results, size_t n)
{
    pmix_info_t *all;

    if (results == NULL || n == 0)
        return;
    all = PMIx_Info_create(c->nresults + n);
    if (all == NULL)
        return; /* the next handler sees fewer results */
    for (size_t i = 0; i < c->nresults; i++)
        (void)PMIx_Info_xfer(&all[i], &c->results[i]);
    for (size_t i = 0; i < n; i++)
        (void)PMIx_Info_xfer(&all[c->nresults + i], &results[i]);
    PMIx_Info_free(c->results, c->nresults);
    c->results = all;
    c->nresults += n;
}

/* The completion callback every handler is given. */
static void chain_handler_done(pmix_status_t status, pmix_info_t *results, size_t nresults,
                               pmix_op_cbfunc_t cbfunc, void *thiscbdata,
                               void *notification_cbdata)
{
    chain_t *c = notification_cbdata;
    pg_mux_t *m;

    if (c == NULL)
        return;
    if (status != PMIX_EVENT_ACTION_COMPLETE)
        chain_gather(c, results, nresults);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, thiscbdata); /* we copied the results: the handler may free */
    pthread_mutex_lock(&ev.lock);
    m = ev.quiet ? NULL : ev.mux;
    pthread_mutex_unlock(&ev.lock);
    if (status == PMIX_EVENT_ACTION_COMPLETE || m == NULL) {
        chain_free(c);
        return;
    }
    /* queued even on the progress thread: a long chain never deepens the
     * stack, and the handler returns before the next one runs */
    if (pg_mux_defer(m, chain_step_deferred, c) != PMIX_SUCCESS)
        chain_free(c);
}

/* Runs the next handler still registered, or ends the chain. */
static void chain_step(chain_t *c)
{
    pmix_notification_fn_t fn = NULL;
    void *object = NULL;
    size_t id = 0;
    bool oneshot = false;

    pthread_mutex_lock(&ev.lock);
    while (fn == NULL && c->next < c->nids && !ev.quiet) {
        evh_t *h = evh_find(c->ids[c->next++], NULL);

        if (h != NULL) {
            fn = h->fn;
            object = h->object;
            id = h->id;
            oneshot = h->oneshot;
        }
    }
    pthread_mutex_unlock(&ev.lock);
    if (fn == NULL) {
        chain_free(c);
        return;
    }
    if (oneshot)
        (void)evh_remove(id);
    if (object != NULL) /* PMIX_EVENT_RETURN_OBJECT comes back as the last info */
        PMIX_INFO_LOAD(&c->info[c->ninfo], PMIX_EVENT_RETURN_OBJECT, object, PMIX_POINTER);
    fn(id, c->status, &c->source, c->info, c->ninfo + (object != NULL), c->results, c->nresults,
       chain_handler_done, c);
}

/* Starts delivering an event (on the progress thread).  Takes info. */
static void deliver(pmix_status_t status, const pmix_proc_t *source, pmix_info_t *info,
                    size_t ninfo)
{
    chain_t *c = calloc(1, sizeof(*c));
    pmix_info_t *all = PMIx_Info_create(ninfo + 1);

    if (c == NULL || all == NULL) {
        free(c);
        PMIx_Info_free(all, ninfo + 1);
        PMIx_Info_free(info, ninfo);
        return;
    }
    for (size_t i = 0; i < ninfo; i++)
        (void)PMIx_Info_xfer(&all[i], &info[i]);
    PMIx_Info_free(info, ninfo);
    c->status = status;
    c->source = *source;
    c->info = all;
    c->ninfo = ninfo;
    if (chain_collect(c) != PMIX_SUCCESS) {
        chain_free(c);
        return;
    }
    chain_step(c);
}

/* ---- events from the gateway and from the connection ------------------ */

/* An event frame: source, range, info[] after the status. */
static void on_gateway_event(pmix_status_t code, pmix_data_buffer_t *body, void *arg)
{
    pmix_proc_t source;
    pmix_data_range_t range = PMIX_RANGE_UNDEF;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;

    (void)arg;
    memset(&source, 0, sizeof(source));
    if (pg_pmix_unpack_one(body, &source, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(body, &range, PMIX_DATA_RANGE) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(body, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS)
        return; /* a frame not from our gateway: dropped */
    deliver(code, &source, info, ninfo);
}

static void on_lost(void *arg)
{
    pmix_proc_t self;
    bool quiet;

    (void)arg;
    pthread_mutex_lock(&ev.lock);
    quiet = ev.quiet;
    pthread_mutex_unlock(&ev.lock);
    if (quiet)
        return;
    pg_client_self(&self);
    deliver(PMIX_ERR_LOST_CONNECTION, &self, NULL, 0);
}

void pg_client_events_attach(pg_mux_t *m)
{
    pthread_mutex_lock(&ev.lock);
    ev.mux = m;
    ev.quiet = false;
    pthread_mutex_unlock(&ev.lock);
    pg_mux_set_hooks(m, on_gateway_event, on_lost, NULL);
}

void pg_client_events_quiet(void)
{
    pthread_mutex_lock(&ev.lock);
    ev.quiet = true;
    pthread_mutex_unlock(&ev.lock);
}

void pg_client_events_detach(void)
{
    evh_t *all[NCATS];

    pthread_mutex_lock(&ev.lock);
    ev.mux = NULL;
    ev.quiet = true;
    memcpy(all, ev.cats, sizeof(all));
    memset(ev.cats, 0, sizeof(ev.cats));
    pthread_mutex_unlock(&ev.lock);
    for (int c = 0; c < NCATS; c++)
        while (all[c] != NULL) {
            evh_t *next = all[c]->next;
            evh_free(all[c]);
            all[c] = next;
        }
}

/* ---- PMIx_Notify_event --------------------------------------------------- */

/* The targets of PMIX_RANGE_CUSTOM (PMIX_EVENT_CUSTOM_RANGE). */
static pmix_status_t custom_targets(const pmix_info_t *info, size_t n, pmix_proc_t **procs,
                                    size_t *np)
{
    for (size_t i = 0; info != NULL && i < n; i++)
        if (info_key_is(&info[i], PMIX_EVENT_CUSTOM_RANGE))
            return procs_of(&info[i].value, procs, np);
    return PMIX_ERR_BAD_PARAM; /* a custom range needs its members */
}

typedef struct local_event {
    pmix_status_t status;
    pmix_proc_t source;
    pmix_info_t *info;
    size_t ninfo;
} local_event_t;

static void local_event_run(void *arg)
{
    local_event_t *l = arg;

    deliver(l->status, &l->source, l->info, l->ninfo);
    free(l);
}

/* This process's own handlers, when it is in the event's range. */
static pmix_status_t notify_self(pmix_status_t status, const pmix_proc_t *source,
                                 const pmix_info_t *info, size_t ninfo)
{
    local_event_t *l = calloc(1, sizeof(*l));
    pg_mux_t *m = pg_client_mux();

    if (l == NULL || m == NULL) {
        free(l);
        return m == NULL ? PMIX_ERR_INIT : PMIX_ERR_NOMEM;
    }
    l->status = status;
    l->source = *source;
    l->ninfo = ninfo;
    if (ninfo > 0 && (l->info = PMIx_Info_create(ninfo)) == NULL) {
        free(l);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < ninfo; i++)
        (void)PMIx_Info_xfer(&l->info[i], &info[i]);
    if (pg_mux_defer(m, local_event_run, l) != PMIX_SUCCESS) {
        PMIx_Info_free(l->info, ninfo);
        free(l);
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

static bool self_in_range(pmix_data_range_t range, const pmix_proc_t *targets, size_t n)
{
    pmix_proc_t self;

    if (range == PMIX_RANGE_RM)
        return false;
    if (range != PMIX_RANGE_CUSTOM)
        return true;
    pg_client_self(&self);
    for (size_t i = 0; i < n; i++) {
        pmix_proc_t t = targets[i];

        if (t.nspace[0] == '\0')
            PMIX_LOAD_NSPACE(t.nspace, self.nspace);
        if (proc_matches(&t, &self))
            return true;
    }
    return false;
}

static pmix_status_t notify_request(pmix_status_t status, const pmix_proc_t *source,
                                    pmix_data_range_t range, const pmix_proc_t *targets,
                                    size_t ntargets, const pmix_info_t info[], size_t ninfo,
                                    pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc;

    pg_buffer_construct(req);
    rc = pg_mux_begin(pg_client_mux(), req, PG_PMIX_CMD_NOTIFY, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &status, PMIX_STATUS);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, source, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &range, PMIX_DATA_RANGE);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, targets, ntargets, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, info, info != NULL ? ninfo : 0, PMIX_INFO);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

static pmix_status_t notify_gateway(pmix_status_t status, const pmix_proc_t *source,
                                    pmix_data_range_t range, const pmix_proc_t *targets,
                                    size_t ntargets, const pmix_info_t info[], size_t ninfo,
                                    pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = notify_request(status, source, range, targets, ntargets, info, ninfo,
                                      &req, &id);

    if (rc != PMIX_SUCCESS)
        return rc;
    if (cbfunc != NULL || pg_mux_on_progress_thread(pg_client_mux()))
        return pg_client_send_op_nb(&req, id, cbfunc, cbdata);
    return pg_client_call_status(&req, id);
}

pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_proc_t self, *targets = NULL;
    size_t ntargets = 0;
    pmix_status_t rc = PMIX_SUCCESS;

    if (pg_client_mux() == NULL)
        return PMIX_ERR_INIT;
    if (range > PMIX_RANGE_PROC_LOCAL || (info == NULL && ninfo > 0))
        return PMIX_ERR_BAD_PARAM;
    if (range == PMIX_RANGE_CUSTOM &&
        (rc = custom_targets(info, ninfo, &targets, &ntargets)) != PMIX_SUCCESS)
        return rc;
    pg_client_self(&self);
    if (source == NULL)
        source = &self;
    if (self_in_range(range, targets, ntargets))
        rc = notify_self(status, source, info, ninfo);
    if (rc == PMIX_SUCCESS && range != PMIX_RANGE_PROC_LOCAL)
        rc = notify_gateway(status, source, range, targets, ntargets, info, ninfo, cbfunc,
                            cbdata);
    else if (rc == PMIX_SUCCESS && cbfunc != NULL) /* delivered here only */
        rc = defer_done((reg_done_t){ NULL, cbfunc, PMIX_SUCCESS, 0, cbdata });
    free(targets);
    return rc;
}
