/*
 * fuzz_mesh: libFuzzer target over the proxies' mesh as node 0 reads a
 * link (gateway/mesh/pg_mesh_link.c, docs/proxy.md "Frame authentication"):
 * node 0 (called the hub here: it decides the job's end) and node 1 (the
 * leaf) linked over loopback in a job of 3 whose node 2 never comes, their
 * handshake done, then the input written into the leaf's link to the hub
 * (frames for node 2 wait there, or are passed on: routing is read too).
 * The first byte says how:
 *   bit 0 clear  raw: the rest as it is, as a process that is no proxy would
 *                write it (the hub must close the link at the first tag
 *                that fails, never believe a frame);
 *   bit 0 set    sealed: the rest is records -- u8 type, u8 route (bits 0-1
 *                the source: the leaf, the hub, node 2, node 9; bits 2-4 the
 *                destination: 0, 1, 2, every node, 9), u16 body length
 *                (big-endian, cut to what is left), the body -- each made a
 *                frame and tagged with the leaf's key in its place, as the
 *                leaf's proxy would: what the frame says is read past the
 *                tag (the channel's own types, relaying, the handlers).
 * The hub's handlers read the bodies: a job's end (pg_jobend: FAIL and
 * END), a spawn request (pg_spawn_wire_unpack), and every other user type
 * with the frame-body codec (gateway/mesh/pg_mesh_msg.c) driven by the body
 * itself: each byte picks the next field to read, until the body runs out
 * or a read fails.  Nothing may crash, overread (ASan), leak or hang.
 * Built by tests/fuzz/run.sh.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <errno.h>
#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gateway/mesh/pg_mesh_int.h"
#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/proxy/pg_jobend.h"
#include "gateway/proxy/pg_spawn_wire.h"
#include "gateway/util/pg_be.h"
#include "wire/pg_clock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FZ_NODES = 3, FZ_HDR = 16, FZ_TAG = PG_MESH_TAG_LEN };

static const char *const fz_names[FZ_NODES] = { "hub", "leaf", "absent" };

/* The codec, each field picked by the body's next byte. */
static void fz_read_codec(void *arg, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    const unsigned char *op = body;
    char buf[16];
    size_t n;

    (void)arg;
    (void)src;
    for (size_t i = 0; i < len && !r.bad && !pg_mesh_rd_done(&r); i++) {
        switch (op[i] % 10) {
        case 0: (void)pg_mesh_rd_u8(&r); break;
        case 1: (void)pg_mesh_rd_u32(&r); break;
        case 2: (void)pg_mesh_rd_u64(&r); break;
        case 3: (void)pg_mesh_rd_i32(&r); break;
        case 4: (void)pg_mesh_rd_bytes(&r, &n); break;
        case 5: (void)pg_mesh_rd_str(&r, buf, sizeof(buf)); break;
        case 6: free(pg_mesh_rd_nstr(&r)); break;
        case 7: (void)pg_mesh_rd_count(&r, op[i] / 10); break;
        case 8: (void)pg_mesh_rd_raw(&r, op[i] / 10); break;
        default: (void)pg_mesh_rd_rest(&r, &n); break;
        }
    }
}

static void fz_read_spawn(void *arg, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    pg_spawn_wire_t w;

    (void)arg;
    (void)src;
    if (pg_spawn_wire_unpack(&r, &w) == 0)
        pg_spawn_wire_free(&w);
}

static void fz_ended(void *arg, int code, int origin, const char *text)
{
    (void)arg;
    (void)code;
    (void)origin;
    (void)text;
}

static pg_mesh_t *fz_mesh(struct event_base *base, int node)
{
    pg_mesh_opts_t o = { .nodeid = node, .nnodes = FZ_NODES, .addr = "127.0.0.1" };
    char err[256];
    pg_mesh_t *m = pg_mesh_new(base, &o, err, sizeof(err));

    if (m == NULL) {
        fprintf(stderr, "fuzz_mesh: %s\n", err);
        abort(); /* the harness cannot run: not a finding */
    }
    return m;
}

/* Nothing the leaf wrote waits unread in the hub's socket: the hub has
 * taken all of it in (a frame cut short stays in its buffer, waiting). */
static int fz_all_read(pg_mesh_t *hub)
{
    int unread = 0;

    if (hub->peers[1] == NULL)
        return 1;
    return ioctl((int)bufferevent_getfd(hub->peers[1]->bev), FIONREAD, &unread) == 0 && unread == 0;
}

/* Runs the loop until the leaf's link to the hub is up (up), or the hub
 * took in everything or closed the link (after the input); at most about
 * ms. */
static void fz_run(struct event_base *base, pg_mesh_t *hub, pg_mesh_t *leaf, int up, int ms)
{
    uint64_t end = pg_clock_now() + (uint64_t)ms * 1000000u;

    while (pg_clock_now() < end) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        if (up && hub->peers[1] != NULL && leaf->peers[0] != NULL)
            return;
        if (!up && fz_all_read(hub))
            return;
    }
}

static const uint32_t fz_src[4] = { 1, 0, 2, 9 };
static const uint32_t fz_dst[8] = { 0, 1, 2, PG_MESH_ALL, 9, 0, 0, 0 };

/* The records of a sealed input, as frames tagged by the leaf's key, into
 * out (room for all of them); their length. */
static size_t fz_seal(link_t *l, const uint8_t *p, size_t n, unsigned char *out)
{
    size_t at = 0;

    while (n >= 4) {
        size_t len = (size_t)p[2] << 8 | p[3];
        unsigned char *f = out + at;

        if (len > n - 4)
            len = n - 4;
        pg_be32_put(f, (uint32_t)len);
        f[4] = 0;
        f[5] = p[0];
        f[6] = f[7] = 0;
        pg_be32_put(f + 8, fz_src[p[1] & 3]);
        pg_be32_put(f + 12, fz_dst[(p[1] >> 2) & 7]);
        memcpy(f + FZ_HDR, p + 4, len);
        (void)pg_mesh_mac_next(l->tx, f, FZ_HDR, f + FZ_HDR, len, f + FZ_HDR + len);
        at += FZ_HDR + len + FZ_TAG;
        p += 4 + len;
        n -= 4 + len;
    }
    return at;
}

/* Writes all of b into the leaf's link, the loop running between writes (a
 * large input fills the socket before the hub reads it), through a
 * descriptor of its own: the leaf may close the link meanwhile, and its
 * number be another socket's. */
static void fz_write(struct event_base *base, pg_mesh_t *leaf, const unsigned char *b, size_t n)
{
    int fd = dup((int)bufferevent_getfd(leaf->peers[0]->bev));

    while (fd >= 0 && n > 0) {
        ssize_t w = send(fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return; /* the hub closed the link */
        if (w > 0) {
            b += w;
            n -= (size_t)w;
        }
        event_base_loop(base, EVLOOP_NONBLOCK);
    }
    if (fd >= 0)
        close(fd);
}

/* A link closed with a reset, not a FIN: hundreds of links a second would
 * otherwise use up the loopback's ports in TIME_WAIT. */
static void fz_reset(pg_mesh_t *m, int node)
{
    struct linger off = { 1, 0 };

    if (m->peers[node] != NULL)
        (void)setsockopt((int)bufferevent_getfd(m->peers[node]->bev), SOL_SOCKET, SO_LINGER, &off,
                         sizeof(off));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct event_base *base;
    static pg_mesh_t *absent; /* node 2's card only: it never links */
    const char *cards[FZ_NODES];
    pg_mesh_t *hub, *leaf;
    pg_jobend_t *end;
    unsigned char *frames = NULL;
    size_t nframes;
    char err[256];

    if (size < 1)
        return 0;
    if (base == NULL) {
        base = event_base_new();
        absent = fz_mesh(base, 2);
    }
    hub = fz_mesh(base, 0);
    leaf = fz_mesh(base, 1);
    cards[0] = pg_mesh_card(hub);
    cards[1] = pg_mesh_card(leaf);
    cards[2] = pg_mesh_card(absent);
    if (pg_mesh_start(hub, cards, err, sizeof(err)) != 0 ||
        pg_mesh_start(leaf, cards, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_mesh: %s\n", err);
        abort();
    }
    end = pg_jobend_new(hub, fz_names, fz_ended, NULL);
    for (unsigned t = PG_MESH_TYPE_USER; t < PG_MESH_TYPE_MAX; t++)
        if (t != PG_MESH_JOBEND_FAIL && t != PG_MESH_JOBEND_END)
            pg_mesh_on(hub, t, t == PG_MESH_SPAWN_REQ ? fz_read_spawn : fz_read_codec, NULL);
    fz_run(base, hub, leaf, 1, 2000);
    if (hub->peers[1] == NULL || leaf->peers[0] == NULL) {
        fprintf(stderr, "fuzz_mesh: the leaf did not link with the hub\n");
        abort();
    }
    if (data[0] & 1) {
        /* each record grows by at most a header and a tag */
        frames = malloc((size / 4 + 1) * (FZ_HDR + FZ_TAG) + size);
        nframes = frames != NULL ? fz_seal(leaf->peers[0], data + 1, size - 1, frames) : 0;
        fz_write(base, leaf, frames, nframes);
    } else {
        fz_write(base, leaf, data + 1, size - 1);
    }
    fz_run(base, hub, leaf, 0, 200);
    fz_reset(hub, 1);
    fz_reset(leaf, 0);
    free(frames);
    pg_jobend_free(end);
    pg_mesh_free(leaf);
    pg_mesh_free(hub);
    /* what the meshes' links left on the loop (their sockets' events) */
    event_base_loop(base, EVLOOP_NONBLOCK);
    return 0;
}
