/*
 * pg_proxy_fence: the fences of `pmigate proxy` whose members are on
 * several nodes -- the whole job's, or any subset of ranks -- and their
 * data (docs/proxy.md, "Fence data through the host" and "Fences
 * over a subset of ranks").
 *
 * Why the data crosses the proxies' mesh and not the host: OpenPMIx's
 * store keeps every key a proxy ever put and sends all of them again with
 * every commit and every collecting fence, and a key re-put with a value
 * of another size is corrupted, so no way of putting fence data to the
 * host keeps a fence's bytes to its own data.  A whole-job fence still is
 * the host's fence (without data): the host stays the job's
 * synchronisation.  A fence over a subset is the mesh's alone: the hosts
 * tell their fences apart only by the proxies in them and hold one fence
 * per set of proxies at a time, so two fences over different ranks of the
 * same nodes would be taken for one, or wait for each other (a fence
 * whose ranks wait for the other's to complete would never end).
 *
 * The job's engine glue hands this file every fence of the root job whose
 * members are not all on this node, through one hook (pg_proxy_on_xfence),
 * already decided: whether it is the whole job's, and this node's part
 * (pg_job_engine_xfence_t); nothing here asks that again.
 *
 * A fence is named alike on every node: SHA-256 of the engine's signature
 * (its sorted participants) and the signature's sequence number (each
 * engine counts a signature's instances, and every instance completes on
 * every member node).  When this node's members all joined, the proxy
 * hands its contribution -- the members' keys new since their last
 * whole-job fence when the fence collects, else nothing -- to the other
 * member nodes, in frames of at most CHUNK_MAX bytes.
 *
 * How the contributions spread (docs/proxy.md, "Fence data through the
 * host"): the member nodes in order, M of them, each at its place; a
 * contribution that came from d places back (its own: d = 0) goes on to
 * the node 2^j places ahead for every 2^j > d with d + 2^j < M.  So a
 * contribution reaches each member once, after at most ceil(log2 M)
 * steps, and each node sends M - 1 contributions in all (its own up to
 * log2 M times, the ones that came from close behind it once or more,
 * from far behind not at all): the fence's data once, not M - 1 times as
 * from a hub.  The steps are direct links: for the whole job they are the
 * mesh's own (node i's links to i + 2^j); a subset's are dialed when
 * first needed (pg_mesh_send_direct).  A chunk goes on as soon as it
 * comes, before the rest of its contribution.
 *
 * Every frame (pg_mesh_msg's format) opens with
 *   name (raw: 32-byte hash, u64 sequence), u32 try, u32 kind
 * and a PART then holds u32 origin (the node whose contribution it is),
 * u64 total, u64 offset, and the bytes [offset, offset + n) of
 * the contribution (raw, to the body's end).  Another node's frames may
 * come before this node's members joined: they wait in the fence's entry,
 * and go on once the members are known.  A whole-job fence completes
 * here once every member node's contribution is in and the host's fence
 * is over.
 *
 * A fence over a subset is timed (PMIX_TIMEOUT), and a timeout must end
 * the instance alike on every node, or one member gets SUCCESS from the
 * parts that came while another got PMIX_ERR_TIMEOUT, and the nodes count
 * the signature's instances differently from then on.  So one node
 * decides each instance: its decider, the lowest node with members.  It
 * completes the instance when every part is in and says DONE to the other
 * member nodes, which complete on DONE and their parts; a member's
 * timeout on the decider, or a CANCEL from another member node whose
 * member's deadline passed, ends the try unless it is DONE already: the
 * decider says TIMEOUT, and every node whose members joined it answers
 * them PMIX_ERR_TIMEOUT and gives the number back.  The entry stays, one
 * try further: the next fence over the same ranks takes the same name
 * and the next try, and a part of an older try, late, is dropped (each
 * node's frames reach another in the order sent, so a part of the next
 * try can come before the decider's TIMEOUT, never after a DONE).
 */
#include "gateway/proxy/pg_proxy_int.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/util/pg_be.h" /* the fence's name: what is hashed, the sequence */
#include "gateway/job/pg_job_engine.h"
#include "gateway/run/pg_run.h"
#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/tools/pg_trace_rec.h"
#include "engine/pg_engine.h"
#include "wire/pg_clock.h"

enum {
    HASH_LEN = 32,                /* SHA-256 */
    NAME_LEN = HASH_LEN + 8,      /* signature hash, sequence */
    CHUNK_MAX = 1 << 20, /* a node passes a chunk on once it has it whole */
};

/* What a fence frame says (after the name and the try). */
enum frame_kind {
    KIND_PART = 1, /* a chunk of a node's contribution */
    KIND_CANCEL,   /* to the decider: a member's PMIX_TIMEOUT passed here */
    KIND_DONE,     /* from the decider: the try completed */
    KIND_TIMEOUT,  /* from the decider: the try timed out */
};

/* One node's contribution to a fence. */
typedef struct part {
    unsigned char *data;
    uint64_t total, got;
    uint32_t try;         /* of the instance it belongs to */
    bool begun, done;
} part_t;

struct xfence {
    struct xfence *next;
    unsigned char name[NAME_LEN];
    pg_job_engine_t *je;
    uint64_t id;          /* the engine's; 0 until this node's members joined */
    unsigned number;      /* this node's cross-node fences, counted as they start */
    bool whole;           /* the whole job's: the host's fence too */
    bool exchange;        /* contributions cross (all but a whole-job fence
                             without data, which is the host's alone) */
    bool host_running, host_done;
    uint32_t try;         /* the instance's tries the decider timed out so far */
    bool done_said;       /* the decider said DONE for this try */
    bool cancel_sent;     /* this node asked the decider to end this try */
    bool *member;         /* [nnodes] nodes with members */
    bool members_known;   /* this node's members joined: member[] is whole */
    int *place;           /* [nnodes] a member node's place among them, or -1 */
    int *at;              /* [nmembers] the member node at each place */
    int nmembers;
    part_t *parts;        /* [nnodes] */
    size_t out, in;
    uint64_t started, sent, data_at;
};

/* ---- fences by name ---- */

static void xfence_free(proxy_t *p, xfence_t *x)
{
    for (int n = 0; x->parts != NULL && n < p->nnodes; n++)
        free(x->parts[n].data);
    free(x->parts);
    free(x->member);
    free(x->place);
    free(x->at);
    free(x);
}

static void xfence_unlink(proxy_t *p, xfence_t *x)
{
    for (xfence_t **at = &p->xfences; *at != NULL; at = &(*at)->next)
        if (*at == x) {
            *at = x->next;
            return;
        }
}

static xfence_t *xfence_find(proxy_t *p, const unsigned char *name, bool create)
{
    xfence_t *x;

    for (x = p->xfences; x != NULL; x = x->next)
        if (memcmp(x->name, name, NAME_LEN) == 0)
            return x;
    if (!create || (x = calloc(1, sizeof(*x))) == NULL)
        return NULL;
    x->member = calloc((size_t)p->nnodes, sizeof(*x->member));
    x->parts = calloc((size_t)p->nnodes, sizeof(*x->parts));
    x->place = calloc((size_t)p->nnodes, sizeof(*x->place));
    x->at = calloc((size_t)p->nnodes, sizeof(*x->at));
    if (x->member == NULL || x->parts == NULL || x->place == NULL || x->at == NULL) {
        xfence_free(p, x);
        return NULL;
    }
    memcpy(x->name, name, NAME_LEN);
    x->next = p->xfences;
    p->xfences = x;
    return x;
}

/* The fence's name: the hash of its participants, and its sequence.  0,
 * or -1 when libcrypto fails. */
static int fence_name(const pg_job_engine_xfence_t *f, unsigned char name[NAME_LEN])
{
    EVP_MD_CTX *s = EVP_MD_CTX_new();
    int rc = -1;

    if (s == NULL || EVP_DigestInit_ex(s, EVP_sha256(), NULL) != 1)
        goto out;
    for (size_t i = 0; i < f->nparticipants; i++) {
        unsigned char rank[4];

        pg_be32_put(rank, f->participants[i].rank);
        if (EVP_DigestUpdate(s, f->participants[i].nspace,
                             strlen(f->participants[i].nspace) + 1) != 1 ||
            EVP_DigestUpdate(s, rank, sizeof(rank)) != 1)
            goto out;
    }
    if (EVP_DigestFinal_ex(s, name, NULL) != 1)
        goto out;
    pg_be64_put(name + HASH_LEN, f->seq);
    rc = 0;
out:
    EVP_MD_CTX_free(s);
    return rc;
}

int pg_proxy_node_of(const proxy_t *p, uint32_t rank)
{
    uint32_t first = 0;

    for (int n = 0; n < p->nnodes; n++) {
        if (rank < first + (uint32_t)p->counts[n])
            return n;
        first += (uint32_t)p->counts[n];
    }
    return -1;
}

/* The nodes with members; ranks of another namespace (a job this node
 * started) are this node's. */
static void mark_members(proxy_t *p, xfence_t *x, const pg_job_engine_xfence_t *f)
{
    for (size_t i = 0; i < f->nparticipants; i++) {
        const pg_proc_t *m = &f->participants[i];
        int node = strcmp(m->nspace, p->kvsname) != 0 ? p->nodeid : pg_proxy_node_of(p, m->rank);

        if (m->rank == PMIX_RANK_WILDCARD && strcmp(m->nspace, p->kvsname) == 0)
            for (int n = 0; n < p->nnodes; n++)
                x->member[n] = true;
        else if (node >= 0)
            x->member[node] = true;
    }
}

/* The member nodes' places, once member[] is whole. */
static void number_members(proxy_t *p, xfence_t *x)
{
    x->nmembers = 0;
    for (int n = 0; n < p->nnodes; n++) {
        x->place[n] = x->member[n] ? x->nmembers : -1;
        if (x->member[n])
            x->at[x->nmembers++] = n;
    }
    x->members_known = true;
}

/* ---- completion ---- */

/* One line per cross-node fence: where its time went (µs).  out: this
 * node's contribution; in: the other nodes'.  put: handing it to the
 * mesh; fence: the host's fence (a whole-job fence; 0 for a subset);
 * get: from the start until the last contribution was in (0 when all
 * were in before); handoff: from the host's fence's end on OpenPMIx's
 * thread to the event loop taking over.  Ours after: merge (ingesting the
 * other nodes' keys), segment (writing the node's key segment), reply
 * (answering the local ranks).  total runs from the last local member's
 * join to the answers; ours_cpu is the proxy's CPU time in merge, segment
 * and reply. */
static void print_times(const proxy_t *p, const xfence_t *x, uint64_t done, uint64_t replied,
                        uint64_t cpu)
{
    pg_hostpmix_times_t t = { 0 };
    uint64_t ingest, segment;

    if (x->whole)
        pg_hostpmix_last_times(p->host, &t);
    pg_job_engine_xfence_times(x->je, &ingest, &segment);
    fprintf(stderr,
            "pmigate: node %d: cross-node fence %u: out=%zu in=%zu put_us=%llu fence_us=%llu "
            "get_us=%llu handoff_us=%llu merge_us=%llu segment_us=%llu reply_us=%llu "
            "total_us=%llu ours_cpu_us=%llu\n",
            p->nodeid, x->number, x->out, x->in,
            (unsigned long long)(x->sent - x->started) / 1000,
            (unsigned long long)t.fence_ns / 1000,
            (unsigned long long)(x->data_at > x->started ? x->data_at - x->started : 0) / 1000,
            (unsigned long long)t.handoff_ns / 1000, (unsigned long long)ingest / 1000,
            (unsigned long long)segment / 1000,
            (unsigned long long)(replied - done - ingest - segment) / 1000,
            (unsigned long long)(replied - x->started) / 1000, (unsigned long long)cpu / 1000);
}

/* Merging the contributions and writing the segment hold the loop for a
 * time that grows with the bytes: the mesh is told first, so a long merge
 * is not taken for a lost node (counted at 20 MB/s, on a loaded machine). */
static void announce_merge(const proxy_t *p, uint64_t bytes)
{
    if (bytes >= (1u << 20))
        pg_mesh_quiet(p->mesh, 2000000000ull + bytes * 50);
}

/* The fence is over here: status 0 hands the contributions to the engine
 * (which answers the local members), -1 fails it, and the job with it. */
static void xfence_finish(proxy_t *p, xfence_t *x, int status, const char *why)
{
    uint64_t done = pg_clock_now(), cpu0 = p->say_times ? pg_clock_thread_cpu() : 0;
    void **blobs = calloc((size_t)p->nnodes, sizeof(*blobs));
    size_t *lens = calloc((size_t)p->nnodes, sizeof(*lens));

    xfence_unlink(p, x);
    if (blobs == NULL || lens == NULL) {
        status = -1;
        why = "out of memory";
    }
    for (int n = 0; status == 0 && n < p->nnodes; n++) {
        blobs[n] = x->parts[n].data;
        lens[n] = (size_t)x->parts[n].total;
    }
    if (p->run != NULL) { /* else the run ended meanwhile: its engine too */
        pg_trace_recorder_xfence(pg_run_trace(p->run), x->number, status, p->nnodes, p->nodeid,
                                 blobs, lens);
        announce_merge(p, x->in);
        pg_job_engine_xfence_done(x->je, x->id, status, status == 0 ? blobs : NULL,
                                  status == 0 ? lens : NULL);
        if (status != 0)
            pg_proxy_fail(p, PG_EXIT_INTERNAL, why);
        else if (p->say_times)
            print_times(p, x, done, pg_clock_now(), pg_clock_thread_cpu() - cpu0);
    }
    free(blobs);
    free(lens);
    xfence_free(p, x);
}

/* The node that decides a subset fence's instance: its lowest member node
 * (-1 while this node does not know the members). */
static int decider(const proxy_t *p, const xfence_t *x)
{
    for (int n = 0; n < p->nnodes; n++)
        if (x->member[n])
            return n;
    return -1;
}

/* Every other member node's part of the current try is in. */
static bool parts_all_in(const proxy_t *p, const xfence_t *x)
{
    for (int n = 0; x->exchange && n < p->nnodes; n++)
        if (n != p->nodeid && x->member[n] &&
            (!x->parts[n].done || x->parts[n].try != x->try))
            return false;
    return true;
}

/* ---- frames ---- */

/* Every fence frame opens with the fence's name, the try and the kind. */
static void frame_head(pg_mesh_wr_t *w, const xfence_t *x, uint32_t try, enum frame_kind kind)
{
    pg_mesh_wr_init(w);
    pg_mesh_wr_raw(w, x->name, NAME_LEN);
    pg_mesh_wr_u32(w, try);
    pg_mesh_wr_u32(w, kind);
}

/* What w holds to every other member node, along the mesh (a verdict:
 * a few bytes). */
static int send_members(proxy_t *p, const xfence_t *x, const pg_mesh_wr_t *w)
{
    int rc = w->bad ? -1 : 0;

    for (int node = 0; node < p->nnodes && rc == 0; node++)
        if (node != p->nodeid && x->member[node])
            rc = pg_mesh_send(p->mesh, (uint32_t)node, PG_MESH_DATA_FENCE, w->buf, w->len);
    return rc;
}

/* Bytes [from, to) of node `origin`'s contribution to try `try` (`total`
 * bytes, at `data`) on to the member nodes 2^j places ahead, 2^j > its distance
 * (this file's head), in chunks.  An empty contribution is one frame.  0,
 * or -1 when a node of the fence cannot be reached. */
static int pass_on(proxy_t *p, xfence_t *x, uint32_t try, int origin, const unsigned char *data,
                   uint64_t total, uint64_t from, uint64_t to)
{
    int me = x->place[p->nodeid], m = x->nmembers;
    int d = (me - x->place[origin] + m) % m, first = 1;
    uint64_t off = from;
    int rc = 0;

    while (first <= d) /* the smallest step 2^j > d */
        first *= 2;
    if (d + first >= m) /* it leads past the members: this node passes it on to no one */
        return 0;
    do { /* each chunk written once, sent to each step's node */
        uint64_t n = to - off < CHUNK_MAX ? to - off : CHUNK_MAX;
        pg_mesh_wr_t w;

        frame_head(&w, x, try, KIND_PART);
        pg_mesh_wr_u32(&w, (uint32_t)origin);
        pg_mesh_wr_u64(&w, total);
        pg_mesh_wr_u64(&w, off);
        pg_mesh_wr_raw(&w, n > 0 ? data + off : NULL, (size_t)n);
        rc = w.bad ? -1 : 0;
        for (int step = first; d + step < m && rc == 0; step *= 2)
            rc = pg_mesh_send_direct(p->mesh, (uint32_t)x->at[(me + step) % m],
                                     PG_MESH_DATA_FENCE, w.buf, w.len);
        pg_mesh_wr_free(&w);
        off += n;
    } while (off < to && rc == 0);
    return rc;
}

/* The members are known here: this node's contribution goes out, and
 * what came of the others' before goes on. */
static int start_spreading(proxy_t *p, xfence_t *x, const void *part, size_t size)
{
    int rc;

    number_members(p, x);
    rc = pass_on(p, x, x->try, p->nodeid, part, size, 0, size);
    for (int n = 0; n < p->nnodes && rc == 0; n++) {
        part_t *pt = &x->parts[n];

        /* a later try's part too: its decider's TIMEOUT may not be here yet */
        if (n != p->nodeid && pt->begun && pt->try >= x->try && x->member[n])
            rc = pass_on(p, x, pt->try, n, pt->data, pt->total, 0, pt->got);
    }
    return rc;
}

/* The decider's word on the current try to every other member node. */
static int send_verdict(proxy_t *p, const xfence_t *x, enum frame_kind kind)
{
    pg_mesh_wr_t w;
    int rc;

    frame_head(&w, x, x->try, kind);
    rc = send_members(p, x, &w);
    pg_mesh_wr_free(&w);
    return rc;
}

/* To the decider: this node's member's deadline passed.  The member nodes
 * go with it: the decider's own members may not have joined yet, and its
 * TIMEOUT must reach every member node. */
static int send_cancel(proxy_t *p, const xfence_t *x, int to)
{
    pg_mesh_wr_t w;
    int rc;

    frame_head(&w, x, x->try, KIND_CANCEL);
    for (int n = 0; n < p->nnodes; n++)
        pg_mesh_wr_u8(&w, x->member[n] ? 1 : 0);
    rc = w.bad ? -1 : pg_mesh_send(p->mesh, (uint32_t)to, PG_MESH_DATA_FENCE, w.buf, w.len);
    pg_mesh_wr_free(&w);
    return rc;
}

/* A node's part, as if none of it had come. */
static void part_forget(xfence_t *x, part_t *pt)
{
    if (pt->done)
        x->in -= (size_t)pt->total;
    free(pt->data);
    *pt = (part_t){ 0 };
}

/* Complete when this node's members joined, every other member node's
 * contribution is in, and the host's fence (a whole-job one) is over; a
 * subset fence when its decider says so too (this node's, or DONE). */
static void xfence_check(proxy_t *p, xfence_t *x)
{
    if (x->id == 0 || (x->whole && !x->host_done) || !parts_all_in(p, x))
        return;
    if (!x->whole && decider(p, x) == p->nodeid) {
        if (send_verdict(p, x, KIND_DONE) != 0) {
            xfence_finish(p, x, -1, "a node of the fence cannot be reached");
            return;
        }
    } else if (!x->whole && !x->done_said) {
        return;
    }
    xfence_finish(p, x, 0, NULL);
}

/* The decider timed the current try out: the next one starts, without the
 * parts of this one.  The members that joined it here, if the engine did
 * not end them itself (x->id still set), get PMIX_ERR_TIMEOUT. */
static void try_timed_out(proxy_t *p, xfence_t *x)
{
    uint64_t id = x->id;

    x->try++;
    x->done_said = false;
    x->cancel_sent = false;
    x->id = 0;
    for (int n = 0; n < p->nnodes; n++)
        if (x->parts[n].begun && x->parts[n].try < x->try)
            part_forget(x, &x->parts[n]);
    if (id != 0 && p->run != NULL)
        pg_job_engine_xfence_done(x->je, id, PG_JOB_XFENCE_TIMED_OUT, NULL, NULL);
}

/* The decider ends the current try: TIMEOUT to the other member nodes.
 * 0, or -1 when a member node cannot be told (the try ends here all the
 * same: a node the mesh lost ends the job). */
static int decide_timeout(proxy_t *p, xfence_t *x)
{
    int rc = send_verdict(p, x, KIND_TIMEOUT);

    try_timed_out(p, x);
    return rc;
}

/* Does a chunk of `total` bytes at `off` fit the part?  A part of a later
 * try replaces the one of an earlier try (its decider's TIMEOUT may still
 * be on its way here). */
static bool part_takes(xfence_t *x, part_t *pt, uint32_t try, uint64_t total, uint64_t off,
                       size_t n)
{
    if (pt->begun && pt->try < try)
        part_forget(x, pt);
    return !pt->done && !(pt->begun && total != pt->total) && off <= total &&
           n <= total - off && total <= SIZE_MAX / 2;
}

/* A chunk of another node's contribution (from `src`, which passed it
 * on: see this file's head); it goes on at once when the members are
 * known here. */
static void on_part(proxy_t *p, int src, xfence_t *x, uint32_t try, pg_mesh_rd_t *r)
{
    uint32_t origin = pg_mesh_rd_u32(r);
    uint64_t total = pg_mesh_rd_u64(r);
    uint64_t off = pg_mesh_rd_u64(r);
    size_t n;
    const unsigned char *chunk = pg_mesh_rd_rest(r, &n);
    part_t *pt;

    if (!pg_mesh_rd_done(r) || origin >= (uint32_t)p->nnodes || (int)origin == p->nodeid ||
        (x->members_known && !x->member[origin]) ||
        !part_takes(x, pt = &x->parts[origin], try, total, off, n) || off != pt->got) {
        fprintf(stderr, "pmigate: node %d: node %d sent fence data that does not fit: dropped\n",
                p->nodeid, src);
        return;
    }
    if (!pt->begun) {
        pt->begun = true;
        pt->try = try;
        pt->total = total;
        pt->data = total > 0 ? malloc((size_t)total) : NULL;
        if (total > 0 && pt->data == NULL) {
            pg_proxy_fail(p, PG_EXIT_INTERNAL, "out of memory for another node's fence data");
            return;
        }
    }
    if (n > 0)
        memcpy(pt->data + off, chunk, n);
    pt->got += n;
    if (x->members_known && pass_on(p, x, try, (int)origin, pt->data, total, off, off + n) != 0) {
        pg_proxy_fail(p, PG_EXIT_INTERNAL, "a node of the fence cannot be reached");
        return;
    }
    if (pt->got < pt->total)
        return;
    pt->done = true;
    x->in += (size_t)pt->total;
    x->data_at = pg_clock_now();
    xfence_check(p, x);
}

/* At the decider: another member node's member timed out.  The try ends
 * unless it completed already (then DONE is on its way there). */
static void on_cancel(proxy_t *p, xfence_t *x, pg_mesh_rd_t *r)
{
    const unsigned char *members = pg_mesh_rd_raw(r, (size_t)p->nnodes);

    if (members == NULL || !pg_mesh_rd_done(r))
        return;
    for (int n = 0; n < p->nnodes; n++)
        x->member[n] = x->member[n] || members[n] != 0;
    if (decide_timeout(p, x) != 0)
        pg_proxy_fail(p, PG_EXIT_INTERNAL, "a node of the fence cannot be reached");
}

/* Which entry a frame is for: the parts and the decider's TIMEOUT may be
 * the first this node hears of a fence (its members have not joined);
 * a CANCEL or DONE for a fence that is over here is late, and dropped. */
static xfence_t *frame_fence(proxy_t *p, const unsigned char *name, enum frame_kind kind)
{
    xfence_t *x = xfence_find(p, name, kind == KIND_PART || kind == KIND_TIMEOUT);

    if (x == NULL && (kind == KIND_PART || kind == KIND_TIMEOUT))
        pg_proxy_fail(p, PG_EXIT_INTERNAL, "out of memory for another node's fence");
    return x;
}

/* A fence frame from another node. */
static void on_fence_frame(void *arg, int src, const void *body, size_t len)
{
    proxy_t *p = arg;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    const unsigned char *name = pg_mesh_rd_raw(&r, NAME_LEN);
    uint32_t try = pg_mesh_rd_u32(&r);
    uint32_t kind = pg_mesh_rd_u32(&r);
    xfence_t *x;

    if (r.bad || src < 0 || src >= p->nnodes || src == p->nodeid ||
        (x = frame_fence(p, name, (enum frame_kind)kind)) == NULL)
        return;
    if (try < x->try) /* a try the decider timed out: it is over */
        return;
    if (kind == KIND_PART)
        on_part(p, src, x, try, &r);
    else if (kind == KIND_CANCEL && try == x->try)
        on_cancel(p, x, &r);
    else if (kind == KIND_DONE && try == x->try) {
        x->done_said = true;
        xfence_check(p, x);
    } else if (kind == KIND_TIMEOUT) {
        x->try = try; /* the first this node hears of the fence may be a later try's end */
        try_timed_out(p, x);
    }
}

/* ---- the host's fence (whole-job fences) ---- */

static void on_host_fence(void *arg, int status, const char *msg)
{
    proxy_t *p = arg;
    xfence_t *x;

    for (x = p->xfences; x != NULL && !x->host_running; x = x->next)
        ;
    if (x == NULL)
        return;
    x->host_running = false;
    x->host_done = true;
    if (status != 0) /* the host cannot carry the job on: it ends */
        xfence_finish(p, x, -1, msg);
    else
        xfence_check(p, x);
}

/* The root job's cross-node fence hook (pg_job_engine_xfence_fn): every
 * local member joined; whether it is the whole job's the glue decided. */
void pg_proxy_on_xfence(void *ctx, const pg_job_engine_xfence_t *f)
{
    proxy_t *p = ctx;
    unsigned char name[NAME_LEN];
    char err[400];
    xfence_t *x;

    x = fence_name(f, name) == 0 ? xfence_find(p, name, true) : NULL;
    if (x == NULL || x->id != 0) { /* out of memory, or a name twice: never */
        pg_job_engine_xfence_done(f->je, f->id, -1, NULL, NULL);
        pg_proxy_fail(p, PG_EXIT_INTERNAL, "a fence across nodes could not start");
        return;
    }
    x->je = f->je;
    x->id = f->id;
    x->number = ++p->fences;
    x->started = pg_clock_now();
    x->whole = f->whole_job;
    x->out = f->part_size;
    x->exchange = !x->whole || f->collect;
    x->done_said = false;
    x->cancel_sent = false;
    mark_members(p, x, f);
    if (x->exchange && start_spreading(p, x, f->part, x->out) != 0) {
        xfence_finish(p, x, -1, "a node of the fence cannot be reached");
        return;
    }
    x->sent = pg_clock_now();
    if (x->whole) {
        if (pg_hostpmix_fence(p->host, on_host_fence, p, err, sizeof(err)) != 0) {
            xfence_finish(p, x, -1, err);
            return;
        }
        x->host_running = true;
    } else {
        x->host_done = true;
    }
    if (!x->whole) /* the contributions may all be in already */
        xfence_check(p, x);
}

/* The engine's fence_cancel hook: a member's PMIX_TIMEOUT passed while
 * fence `id` waited for other nodes.  A whole-job fence is the host's
 * too, and a host's fence cannot be left: it runs on.  A fence over a
 * subset ends as its decider says: on the decider it ends now (TIMEOUT to
 * the others, and the engine answers its members); elsewhere the decider
 * is asked, and the engine waits for its TIMEOUT -- or its DONE, when the
 * try completed there first.  Called while the engine completes
 * requests: nothing here calls into it. */
bool pg_proxy_fence_cancel(void *ctx, uint64_t id)
{
    proxy_t *p = ctx;

    for (xfence_t *x = p->xfences; x != NULL; x = x->next) {
        int to;

        if (x->id != id)
            continue;
        if (x->whole)
            return false;
        to = decider(p, x);
        if (to != p->nodeid && (x->cancel_sent || send_cancel(p, x, to) == 0)) {
            x->cancel_sent = true;
            return false;
        }
        /* This node decides -- also when the decider cannot be asked: its
         * members must not wait untimed for a node the mesh lost (that
         * ends the job).  The engine ends the members here, so not
         * through try_timed_out; failing the job would call into it. */
        x->id = 0;
        if (to == p->nodeid && decide_timeout(p, x) == 0)
            return true;
        if (to != p->nodeid)
            try_timed_out(p, x);
        fprintf(stderr, "pmigate: node %d: a fence across nodes timed out, and not every node "
                        "of it can be told\n", p->nodeid);
        return true;
    }
    return false;
}

int pg_proxy_fence_setup(proxy_t *p)
{
    return p->mesh != NULL ? pg_mesh_on(p->mesh, PG_MESH_DATA_FENCE, on_fence_frame, p) : 0;
}

void pg_proxy_fence_free(proxy_t *p)
{
    while (p->xfences != NULL) {
        xfence_t *x = p->xfences;

        p->xfences = x->next;
        xfence_free(p, x);
    }
}
