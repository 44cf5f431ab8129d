/*
 * pg_monitor.c: the watches of one job (see pg_monitor.h for what they
 * mean): a list of watches, each with its timer.  A heartbeat or file watch
 * ticks every period and counts misses; a --heartbeat watch keeps the time
 * of the rank's last sign of life and wakes when that is SECONDS old, so a
 * beat costs one store, not a timer change.
 */
#include "config/config.h"

#include "gateway/job/pg_monitor.h"

#include <event2/event.h>
#include <pmix_common.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wire/pg_clock.h"

enum { NS_PER_S = 1000000000 };

/* What a file watch compares from one check to the next. */
typedef struct file_seen {
    bool valid;
    off_t size;
    struct timespec atime, mtime;
} file_seen_t;

typedef struct watch {
    struct watch *next;
    pg_monitor_t *m;
    int rank;
    bool option;          /* --heartbeat: silence, not heartbeats */
    pg_monitor_req_t req; /* id and path owned */
    struct event *timer;
    uint32_t beats;       /* heartbeats since the last check */
    uint32_t misses;      /* checks in a row without life */
    bool alerted;         /* told; quiet until life shows again */
    file_seen_t seen;
    uint64_t last_life;   /* --heartbeat: pg_clock_now() of the last traffic */
} watch_t;

struct pg_monitor {
    struct event_base *base;
    pg_monitor_alert_fn alert;
    void *owner;
    watch_t *watches;   /* PMIx watches */
    watch_t **silence;  /* [nsilence] --heartbeat watches by rank: traffic is
                           every message, so it finds its watch at once */
    size_t nsilence;
};

static void watch_free(watch_t *w)
{
    if (w == NULL)
        return;
    if (w->timer != NULL)
        event_free(w->timer);
    free((char *)w->req.id);
    free((char *)w->req.path);
    free(w);
}

/* Unlinks and frees every watch of `rank` that `match` accepts. */
static size_t watches_drop(pg_monitor_t *m, int rank, bool (*match)(const watch_t *, const void *),
                           const void *arg)
{
    size_t n = 0;

    for (watch_t **p = &m->watches; *p != NULL;) {
        watch_t *w = *p;

        if (w->rank == rank && match(w, arg)) {
            *p = w->next;
            watch_free(w);
            n++;
        } else {
            p = &w->next;
        }
    }
    return n;
}

static bool any_watch(const watch_t *w, const void *arg)
{
    (void)w, (void)arg;
    return true;
}

/* A watch named `id` (NULL: every watch) */
static bool watch_named(const watch_t *w, const void *arg)
{
    const char *id = arg;

    return id == NULL || (w->req.id != NULL && strcmp(w->req.id, id) == 0);
}

static void tell(watch_t *w, uint32_t silent_s)
{
    pg_monitor_alert_t a = { w->rank, &w->req, w->option, silent_s };

    w->alerted = true;
    w->m->alert(w->m->owner, &a);
}

/* ---- heartbeat and file watches: a check every period --------------------- */

static bool ts_equal(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* Did the file change in a way the watch looks at since the last check?
 * The first look only records; a file not there (yet) is no change and no
 * miss either. */
static int file_check(watch_t *w)
{
    unsigned what = w->req.file_checks;
    file_seen_t now = { .valid = true };
    struct stat st;
    bool changed;

    if (stat(w->req.path, &st) != 0)
        return -1;
    now.size = st.st_size;
    now.atime = st.st_atim;
    now.mtime = st.st_mtim;
    changed = !w->seen.valid || ((what & PG_MONITOR_SIZE) && now.size != w->seen.size) ||
              ((what & PG_MONITOR_ACCESS) && !ts_equal(&now.atime, &w->seen.atime)) ||
              ((what & PG_MONITOR_MODIFY) && !ts_equal(&now.mtime, &w->seen.mtime));
    w->seen = now;
    return changed ? 1 : 0;
}

static void on_period(evutil_socket_t fd, short what, void *arg)
{
    watch_t *w = arg;
    int life;

    (void)fd, (void)what;
    if (w->req.kind == PG_MONITOR_FILE) {
        life = file_check(w);
        if (life < 0)
            return;
    } else {
        life = w->beats > 0;
        w->beats = 0;
    }
    if (life) {
        w->misses = 0;
        w->alerted = false;
        return;
    }
    if (++w->misses > w->req.drops && !w->alerted)
        tell(w, w->misses * w->req.period_s);
}

/* ---- --heartbeat: silence --------------------------------------------------- */

static void arm_at(watch_t *w, uint64_t deadline)
{
    uint64_t now = pg_clock_now(), wait = deadline > now ? deadline - now : 0;
    struct timeval tv = { (time_t)(wait / NS_PER_S), (suseconds_t)(wait % NS_PER_S / 1000) };

    evtimer_add(w->timer, &tv);
}

static void on_silence(evutil_socket_t fd, short what, void *arg)
{
    watch_t *w = arg;
    uint64_t limit = (uint64_t)w->req.period_s * NS_PER_S, now = pg_clock_now();

    (void)fd, (void)what;
    if (now - w->last_life < limit) { /* it spoke meanwhile */
        w->alerted = false;
        arm_at(w, w->last_life + limit);
        return;
    }
    arm_at(w, now + limit); /* looks again: life clears the alert */
    if (!w->alerted)
        tell(w, (uint32_t)((now - w->last_life) / NS_PER_S));
}

/* ---- public ------------------------------------------------------------------- */

pg_monitor_t *pg_monitor_new(struct event_base *base, pg_monitor_alert_fn alert, void *owner)
{
    pg_monitor_t *m = calloc(1, sizeof(*m));

    if (m != NULL)
        *m = (pg_monitor_t){ .base = base, .alert = alert, .owner = owner };
    return m;
}

void pg_monitor_free(pg_monitor_t *m)
{
    if (m == NULL)
        return;
    while (m->watches != NULL) {
        watch_t *w = m->watches;

        m->watches = w->next;
        watch_free(w);
    }
    for (size_t r = 0; r < m->nsilence; r++)
        watch_free(m->silence[r]);
    free(m->silence);
    free(m);
}

static watch_t *watch_new(pg_monitor_t *m, int rank, const pg_monitor_req_t *req, bool option)
{
    watch_t *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return NULL;
    w->m = m;
    w->rank = rank;
    w->option = option;
    w->req = *req;
    w->req.id = req->id != NULL ? strdup(req->id) : NULL;
    w->req.path = req->path != NULL ? strdup(req->path) : NULL;
    w->timer = option ? evtimer_new(m->base, on_silence, w)
                      : event_new(m->base, -1, EV_PERSIST, on_period, w);
    if ((req->id != NULL && w->req.id == NULL) || (req->path != NULL && w->req.path == NULL) ||
        w->timer == NULL) {
        watch_free(w);
        return NULL;
    }
    if (!option) {
        w->next = m->watches;
        m->watches = w;
    }
    return w;
}

static int watch_start(pg_monitor_t *m, int rank, const pg_monitor_req_t *req)
{
    struct timeval period = { (time_t)req->period_s, 0 };
    watch_t *w;

    if (req->id != NULL)
        for (w = m->watches; w != NULL; w = w->next)
            if (w->rank == rank && watch_named(w, req->id))
                return PMIX_ERR_EXISTS;
    if ((w = watch_new(m, rank, req, false)) == NULL)
        return PMIX_ERR_NOMEM;
    if (req->kind == PG_MONITOR_FILE)
        (void)file_check(w); /* what the file is like now */
    evtimer_add(w->timer, &period);
    return PMIX_SUCCESS;
}

int pg_monitor_request(pg_monitor_t *m, int rank, const pg_monitor_req_t *req)
{
    switch (req->kind) {
    case PG_MONITOR_BEAT:
        for (watch_t *w = m->watches; w != NULL; w = w->next)
            if (w->rank == rank && w->req.kind == PG_MONITOR_HEARTBEAT)
                w->beats++;
        return PMIX_SUCCESS; /* a beat nobody watches is harmless */
    case PG_MONITOR_CANCEL:
        return watches_drop(m, rank, watch_named, req->id) > 0 ? PMIX_SUCCESS
                                                                    : PMIX_ERR_NOT_FOUND;
    case PG_MONITOR_HEARTBEAT:
    case PG_MONITOR_FILE:
        return watch_start(m, rank, req);
    }
    return PMIX_ERR_BAD_PARAM;
}

int pg_monitor_watch_silence(pg_monitor_t *m, int rank, uint32_t seconds)
{
    pg_monitor_req_t req = { .kind = PG_MONITOR_HEARTBEAT,
                             .code = PMIX_MONITOR_HEARTBEAT_ALERT,
                             .range = PMIX_RANGE_NAMESPACE,
                             .period_s = seconds };
    watch_t *w;

    if (rank < 0 || seconds == 0)
        return -1;
    if ((size_t)rank >= m->nsilence) {
        size_t n = (size_t)rank + 1 > 2 * m->nsilence ? (size_t)rank + 1 : 2 * m->nsilence;
        watch_t **grown = realloc(m->silence, n * sizeof(*grown));

        if (grown == NULL)
            return -1;
        memset(grown + m->nsilence, 0, (n - m->nsilence) * sizeof(*grown));
        m->silence = grown;
        m->nsilence = n;
    }
    if ((w = watch_new(m, rank, &req, true)) == NULL)
        return -1;
    watch_free(m->silence[rank]);
    m->silence[rank] = w;
    w->last_life = pg_clock_now();
    arm_at(w, w->last_life + (uint64_t)seconds * NS_PER_S);
    return 0;
}

void pg_monitor_traffic(pg_monitor_t *m, int rank)
{
    if (m != NULL && rank >= 0 && (size_t)rank < m->nsilence && m->silence[rank] != NULL)
        m->silence[rank]->last_life = pg_clock_now();
}

void pg_monitor_forget(pg_monitor_t *m, int rank)
{
    if (m == NULL)
        return;
    (void)watches_drop(m, rank, any_watch, NULL);
    if (rank >= 0 && (size_t)rank < m->nsilence) {
        watch_free(m->silence[rank]);
        m->silence[rank] = NULL;
    }
}
