/*
 * fuzz_pmix: libFuzzer target over everything the gateway runs on bytes a
 * PMIx client sends (docs/pmix-transport.md, docs/pack-format.md):
 *   - the preamble and the frame cutter of wire/pg_pmix_frame.h (a prefix
 *     of a frame must only ever "need more");
 *   - pg_unpack of every packed group, walked by each group's own type tag,
 *     and the message layer of wire/pg_pmix_msg.c (header,
 *     unpack_one, unpack_array) on the argument layout of every request
 *     and reply.  A decode fails cleanly (nothing allocated, cursor still)
 *     or succeeds; a success must re-encode to exactly the bytes it read
 *     (the format is canonical), and decoded values must survive the
 *     engine's representation (pmix/server/pg_pmix_value.c);
 *   - the server handler (pmix/server/pg_pmix_server.c and the
 *     pg_pmix_srv_*.c of its commands) fed the input as a stream of
 *     frames from four ranks of one job in a real engine: no
 *     crash, leak or hang, and every reply it writes must decode.
 * The handler's host is the fake of tests/pmix/pmix_handler_stubs.h (the
 * ops table of server/pg_handler.h), so no socket or event loop is involved.
 * Built by tests/fuzz/run.sh.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"
#include "tests/pmix/pmix_handler_stubs.h"
#include "wire/pg_clock.h"
#include "wire/pg_pmix_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/* ASan's default 256 MB quarantine keeps every freed block out of reuse
 * that long, so the megabytes an input allocates (pmix_info_t arrays,
 * open_memstream's buffers in pg_print) land on fresh pages and page
 * faults took a third of the run; 64 MB still holds many inputs' worth
 * of frees, so a use after free within an input is still caught. */
const char *__asan_default_options(void)
{
    return "quarantine_size_mb=64";
}

#define FZ_ASSERT(c)                                                              \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "fuzz_pmix: %s:%d: %s\n", __FILE__, __LINE__, #c);    \
            abort();                                                              \
        }                                                                         \
    } while (0)

enum {
    FZ_NRANKS = 4,          /* a frame goes to rank (request id % FZ_NRANKS) */
    FZ_AUTO_INIT = 3,       /* ranks 0..2 start initialised, rank 3 must init */
    FZ_MEMO = 4,            /* replies remembered as already checked */
    FZ_MEMO_MIN = 512,      /* smaller replies are cheaper to check than to remember */
    FZ_MAX_ELEMS = 64,      /* elements decoded per group; more: the skip path */
    FZ_TICK_NS = 250000000, /* the clock advances a quarter second per frame */
};

/* ---- the handler's host ------------------------------------------------ */

/* Every reply the handler writes must be one whole frame whose payload
 * decodes as docs/pmix-transport.md says (reply_layout below). */
static void fz_check_reply(const char *bytes, size_t len);

/* The check is a function of the reply's bytes alone, so a reply equal to
 * one already checked needs no second decode.  Why: every input starts
 * three ranks with an init whose reply (~30 KB of pmix_info_t once
 * decoded) is the same each time, and decoding it again was most of the
 * target's time. */
static struct fz_memo {
    char *bytes;
    size_t len;
} fz_memo[FZ_MEMO];
static unsigned fz_memo_next;

static bool fz_memo_has(const char *bytes, size_t len)
{
    for (int i = 0; i < FZ_MEMO; i++)
        if (fz_memo[i].len == len && memcmp(fz_memo[i].bytes, bytes, len) == 0)
            return true;
    return false;
}

static void fz_memo_add(const char *bytes, size_t len)
{
    struct fz_memo *m = &fz_memo[fz_memo_next++ % FZ_MEMO];
    char *copy = malloc(len);

    FZ_ASSERT(copy != NULL);
    memcpy(copy, bytes, len);
    free(m->bytes);
    m->bytes = copy;
    m->len = len;
}

static void fz_on_reply(pmix_fake_peer_t *p, const char *bytes, size_t len)
{
    FZ_ASSERT(p->open);
    if (len >= FZ_MEMO_MIN && fz_memo_has(bytes, len))
        return;
    fz_check_reply(bytes, len);
    if (len >= FZ_MEMO_MIN)
        fz_memo_add(bytes, len);
}

/* ---- decoding helpers --------------------------------------------------- */

static pmix_data_buffer_t fz_view(const char *p, size_t len)
{
    pmix_data_buffer_t v;

    pg_pmix_msg_view(&v, p, len);
    return v;
}

static size_t fz_consumed(const pmix_data_buffer_t *view, const char *start)
{
    return (size_t)(view->unpack_ptr - start);
}

/* The bytes `enc` holds must be exactly the `len` bytes at `read`. */
static void fz_assert_same_bytes(const pmix_data_buffer_t *enc, const char *read, size_t len)
{
    FZ_ASSERT(enc->bytes_used == len);
    FZ_ASSERT(len == 0 || memcmp(enc->base_ptr, read, len) == 0);
}

/* The encoding of one value, for comparisons that must treat NaN as
 * itself (an empty buffer when the value cannot be packed). */
static void fz_pack_value(pmix_data_buffer_t *out, const pmix_value_t *v)
{
    pg_buffer_construct(out);
    (void)pg_pack(out, v, 1, PMIX_VALUE);
}

/* A decoded value must cross the engine's representation unchanged, as a
 * commit followed by a get does in the gateway. */
static void fz_value_through_engine(const pmix_value_t *v)
{
    pmix_data_buffer_t scratch, before, after;
    pmix_value_t back;
    pg_value_t ev;

    if (v->type == PMIX_STRING && v->data.string == NULL)
        return; /* stored as "", on purpose: the engine keeps characters */
    pg_buffer_construct(&scratch);
    if (pg_pmix_value_to_engine(v, &scratch, &ev) == PMIX_SUCCESS) {
        FZ_ASSERT(pg_pmix_value_from_engine(&ev, &back) == PMIX_SUCCESS);
        fz_pack_value(&before, v);
        fz_pack_value(&after, &back);
        FZ_ASSERT(before.bytes_used == after.bytes_used);
        FZ_ASSERT(memcmp(before.base_ptr, after.base_ptr, before.bytes_used) == 0);
        pg_buffer_destruct(&before);
        pg_buffer_destruct(&after);
        pg_value_destruct(&back);
    }
    pg_buffer_destruct(&scratch);
}

/* What the gateway and PMIx_Data_* do with decoded data besides packing
 * it: copy, print, compare, truth, text form.  Only the absence of a
 * crash, overread or leak is checked, and that copies compare equal. */
static void fz_use_element(const void *elem, pmix_data_type_t type)
{
    void *copy = NULL;
    char *text = NULL;

    if (pg_copy(&copy, type == PMIX_STRING ? *(char *const *)elem : elem, type) == PMIX_SUCCESS) {
        if (type != PMIX_STRING)
            pg_data_destruct(copy, type);
        free(copy);
    }
    if (pg_print(&text, "> ", type == PMIX_STRING ? *(char *const *)elem : elem, type) ==
        PMIX_SUCCESS)
        free(text);
    if (type == PMIX_VALUE) {
        const pmix_value_t *v = elem;
        pmix_value_t dup;

        (void)pg_value_truth(v);
        text = NULL;
        if (pg_value_to_string(v, &text) == PMIX_SUCCESS)
            free(text);
        if (pg_value_copy(&dup, v) == PMIX_SUCCESS) {
            (void)pg_value_compare(v, &dup);
            pg_value_destruct(&dup);
        }
        fz_value_through_engine(v);
    } else if (type == PMIX_INFO) {
        fz_value_through_engine(&((const pmix_info_t *)elem)->value);
    }
}

/* ---- groups, by their own type tags ------------------------------------------ */

static uint32_t fz_be32(const char *p)
{
    return pg_pmix_get_u32((const unsigned char *)p);
}

/* Decodes the group at the view's cursor as the type its tag names.
 * Returns false when decoding stops there. */
static bool fz_group(pmix_data_buffer_t *view)
{
    const char *start = view->unpack_ptr;
    size_t left = pg_buffer_unread(view);
    pmix_data_type_t type;
    uint32_t count;
    int32_t cap, n;
    size_t esize;
    void *arr;
    pmix_status_t rc;

    if (left < 6)
        return false;
    type = (pmix_data_type_t)((unsigned char)start[0] << 8 | (unsigned char)start[1]);
    count = fz_be32(start + 2);
    esize = pg_type_elem_size(type);
    if (esize == 0) {
        n = 1;
        FZ_ASSERT(pg_unpack(view, &(char[64]){ 0 }, &n, type) == PMIX_ERR_UNKNOWN_DATA_TYPE);
        return false;
    }
    cap = count == 0 ? 1 : count > FZ_MAX_ELEMS ? FZ_MAX_ELEMS : (int32_t)count;
    arr = calloc((size_t)cap, esize);
    FZ_ASSERT(arr != NULL);
    n = cap;
    rc = pg_unpack(view, arr, &n, type);
    if (rc != PMIX_SUCCESS && rc != PMIX_ERR_UNPACK_INADEQUATE_SPACE) {
        /* all or nothing */
        FZ_ASSERT(n == 0);
        FZ_ASSERT(view->unpack_ptr == start);
        free(arr);
        return false;
    }
    FZ_ASSERT(n >= 0 && n <= cap && (uint32_t)n <= count);
    FZ_ASSERT(view->unpack_ptr > start && fz_consumed(view, start) <= left);
    if (rc == PMIX_SUCCESS) {
        /* canonical: the same elements encode to the same bytes */
        pmix_data_buffer_t enc;

        FZ_ASSERT((uint32_t)n == count);
        pg_buffer_construct(&enc);
        FZ_ASSERT(pg_pack(&enc, arr, n, type) == PMIX_SUCCESS);
        fz_assert_same_bytes(&enc, start, fz_consumed(view, start));
        pg_buffer_destruct(&enc);
    } else {
        FZ_ASSERT(n == cap && count > (uint32_t)cap);
    }
    for (int32_t i = 0; i < n; i++) {
        fz_use_element((char *)arr + (size_t)i * esize, type);
        pg_data_destruct((char *)arr + (size_t)i * esize, type);
    }
    free(arr);
    return true;
}

static void fz_groups(const char *p, size_t len)
{
    pmix_data_buffer_t view = fz_view(p, len);

    while (fz_group(&view))
        ;
}

/* The whole input as one stored value (a node-segment entry, a packed
 * engine value): pg_unpack_value_whole, whose string fast path bypasses
 * pg_unpack, must agree with pg_unpack of one value that leaves nothing
 * over -- the same verdict and, on success, the same value. */
static void fz_whole_value(const char *p, size_t len)
{
    pmix_data_buffer_t view = fz_view(p, len);
    pmix_value_t fast, slow;
    int32_t n = 1;
    pmix_status_t frc = pg_unpack_value_whole(p, len, &fast);
    pmix_status_t src = pg_unpack(&view, &slow, &n, PMIX_VALUE);
    bool slow_ok = src == PMIX_SUCCESS && n == 1 && pg_buffer_unread(&view) == 0;

    if (src == PMIX_SUCCESS && n == 1 && !slow_ok)
        pg_value_destruct(&slow);
    else if (src == PMIX_ERR_UNPACK_INADEQUATE_SPACE && n == 1)
        pg_value_destruct(&slow); /* several values: the first was kept */
    FZ_ASSERT((frc == PMIX_SUCCESS) == slow_ok);
    if (!slow_ok)
        return;
    FZ_ASSERT(fast.type == slow.type);
    {
        char *a = NULL, *b = NULL;

        FZ_ASSERT(pg_print(&a, "", &fast, PMIX_VALUE) == PMIX_SUCCESS);
        FZ_ASSERT(pg_print(&b, "", &slow, PMIX_VALUE) == PMIX_SUCCESS);
        FZ_ASSERT(strcmp(a, b) == 0);
        free(a);
        free(b);
    }
    pg_value_destruct(&fast);
    pg_value_destruct(&slow);
}

/* ---- the message layer on every command's layout ------------------------------ */

/* Layout letters: one element of a type (p proc, s string, i info, b bool,
 * v value, r rank, t status, d pdata, o scope), or in upper case a
 * count-prefixed array of them; 'c' is commit's UINT32 n followed by n (scope, key, value). */
typedef struct fz_arg {
    char letter;
    pmix_data_type_t type;
} fz_arg_t;

static const fz_arg_t fz_args[] = {
    { 'p', PMIX_PROC },  { 's', PMIX_STRING }, { 'i', PMIX_INFO },   { 'b', PMIX_BOOL },
    { 'v', PMIX_VALUE }, { 'r', PMIX_PROC_RANK }, { 't', PMIX_STATUS }, { 'd', PMIX_PDATA },
    { 'o', PMIX_SCOPE }, { 'g', PMIX_DATA_RANGE }, { 'u', PMIX_UINT32 },
};

static const char *const request_layout[PG_PMIX_CMD_MAX] = {
    [PG_PMIX_CMD_INIT] = "",      [PG_PMIX_CMD_COMMIT] = "c",  [PG_PMIX_CMD_FENCE] = "PI",
    [PG_PMIX_CMD_GET] = "psIb",   [PG_PMIX_CMD_PUBLISH] = "I", [PG_PMIX_CMD_LOOKUP] = "SI",
    [PG_PMIX_CMD_UNPUBLISH] = "SI", [PG_PMIX_CMD_ABORT] = "tsP", [PG_PMIX_CMD_FINALIZE] = "I",
    [PG_PMIX_CMD_NOTIFY] = "tpgPI", [PG_PMIX_CMD_QUERY] = "uSI", [PG_PMIX_CMD_LOG] = "II",
    [PG_PMIX_CMD_GROUP_CONSTRUCT] = "sPI", [PG_PMIX_CMD_GROUP_DESTRUCT] = "sI",
    [PG_PMIX_CMD_JOB_CONTROL] = "PI",
    [PG_PMIX_CMD_GROUP_INVITE] = "sPI", [PG_PMIX_CMD_GROUP_JOIN] = "spbI",
    [PG_PMIX_CMD_GROUP_LEAVE] = "sI", [PG_PMIX_CMD_MONITOR] = "itI",
};

/* after the status, on success */
static const char *const reply_layout[PG_PMIX_CMD_MAX] = {
    [PG_PMIX_CMD_INIT] = "srII", [PG_PMIX_CMD_GET] = "vr", [PG_PMIX_CMD_LOOKUP] = "D",
    [PG_PMIX_CMD_QUERY] = "I",
};

static pmix_data_type_t fz_type_of(char letter)
{
    for (size_t i = 0; i < sizeof(fz_args) / sizeof(fz_args[0]); i++)
        if (fz_args[i].letter == letter)
            return fz_args[i].type;
    return PMIX_UNDEF;
}

static bool fz_all_zero(const void *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (((const unsigned char *)p)[i] != 0)
            return false;
    return true;
}

/* One argument through pg_pmix_unpack_one / _array; on success re-encoded
 * with pg_pmix_pack_one / _array, which must give the bytes read. */
static pmix_status_t fz_arg(pmix_data_buffer_t *view, char letter, bool use)
{
    pmix_data_type_t type = fz_type_of((char)(letter | 0x20));
    const char *start = view->unpack_ptr;
    size_t esize = pg_type_elem_size(type), n = 1;
    pmix_data_buffer_t enc;
    void *arr = NULL;
    pmix_status_t rc;

    FZ_ASSERT(esize > 0);
    if (letter >= 'A' && letter <= 'Z') {
        rc = pg_pmix_unpack_array(view, &arr, &n, type);
        if (rc != PMIX_SUCCESS) {
            FZ_ASSERT(arr == NULL && n == 0);
            return rc;
        }
    } else {
        arr = calloc(1, esize);
        FZ_ASSERT(arr != NULL);
        rc = pg_pmix_unpack_one(view, arr, type);
        if (rc != PMIX_SUCCESS) {
            FZ_ASSERT(fz_all_zero(arr, esize)); /* nothing left allocated */
            free(arr);
            return rc;
        }
    }
    pg_buffer_construct(&enc);
    if (letter >= 'A' && letter <= 'Z')
        FZ_ASSERT(pg_pmix_pack_array(&enc, arr, n, type) == PMIX_SUCCESS);
    else
        FZ_ASSERT(pg_pmix_pack_one(&enc, arr, type) == PMIX_SUCCESS);
    fz_assert_same_bytes(&enc, start, fz_consumed(view, start));
    pg_buffer_destruct(&enc);
    for (size_t i = 0; use && i < n; i++)
        fz_use_element((char *)arr + i * esize, type);
    pg_pmix_array_free(arr, arr != NULL ? n : 0, type);
    return PMIX_SUCCESS;
}

/* commit's arguments: UINT32 n, then n x (SCOPE, STRING, VALUE) */
static pmix_status_t fz_commit_args(pmix_data_buffer_t *view, bool use)
{
    uint32_t n = 0;
    pmix_status_t rc = pg_pmix_unpack_one(view, &n, PMIX_UINT32);

    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < n; i++) {
        rc = fz_arg(view, 'o', use);
        if (rc == PMIX_SUCCESS)
            rc = fz_arg(view, 's', use);
        if (rc == PMIX_SUCCESS)
            rc = fz_arg(view, 'v', use);
    }
    return rc;
}

/* `use`: also copy, print and convert what decoded (not for the server's
 * own replies, which would repeat the same work for every input). */
static void fz_layout(pmix_data_buffer_t *view, const char *layout, bool use)
{
    pmix_status_t rc = PMIX_SUCCESS;

    for (const char *l = layout; l != NULL && *l != '\0' && rc == PMIX_SUCCESS; l++)
        rc = *l == 'c' ? fz_commit_args(view, use) : fz_arg(view, *l, use);
}

/* A payload read as a request and as a reply. */
static void fz_message(const char *p, size_t len)
{
    pmix_data_buffer_t view = fz_view(p, len);
    pmix_status_t status;
    uint8_t cmd = 0;
    uint32_t id = 0;

    (void)pg_pmix_cmd_name(p != NULL && len > 6 ? (unsigned char)p[6] : 0);
    if (pg_pmix_msg_read_header(&view, &cmd, &id) != PMIX_SUCCESS)
        return;
    FZ_ASSERT(pg_pmix_cmd_name(cmd) != NULL);
    if (cmd >= PG_PMIX_CMD_MAX)
        return;
    {
        pmix_data_buffer_t req = view;

        fz_layout(&req, request_layout[cmd], true);
    }
    if (pg_pmix_unpack_one(&view, &status, PMIX_STATUS) == PMIX_SUCCESS && status == PMIX_SUCCESS)
        fz_layout(&view, reply_layout[cmd], true);
}

static void fz_check_reply(const char *bytes, size_t len)
{
    size_t plen = 0;
    pmix_data_buffer_t view;
    pmix_status_t status;
    uint8_t cmd;
    uint32_t id;

    FZ_ASSERT(pg_pmix_frame_next(bytes, len, PG_PMIX_FRAME_MAX, &plen) == PG_PMIX_FRAME_OK);
    FZ_ASSERT(plen + PG_PMIX_HEADER_LEN == len);
    view = fz_view(bytes + PG_PMIX_HEADER_LEN, plen);
    FZ_ASSERT(pg_pmix_msg_read_header(&view, &cmd, &id) == PMIX_SUCCESS);
    FZ_ASSERT(pg_pmix_unpack_one(&view, &status, PMIX_STATUS) == PMIX_SUCCESS);
    if (cmd == PG_PMIX_CMD_EVENT) { /* unasked, id 0: the status is the event's code */
        FZ_ASSERT(id == 0);
        fz_layout(&view, "pgI", false);
        FZ_ASSERT(pg_buffer_unread(&view) == 0);
        return;
    }
    if (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) {
        if (cmd < PG_PMIX_CMD_MAX && reply_layout[cmd] != NULL) {
            fz_layout(&view, reply_layout[cmd], false);
            FZ_ASSERT(pg_buffer_unread(&view) == 0); /* every result decoded */
        }
    }
    FZ_ASSERT(pg_buffer_unread(&view) == 0 || status != PMIX_SUCCESS);
}

/* ---- framing ------------------------------------------------------------------ */

/* Where frames start: after a preamble, or at 0.  A prefix of the preamble
 * must need more, garbage must be refused. */
static size_t fz_preamble(const char *p, size_t len)
{
    pg_pmix_preamble_t pre;
    int rc = pg_pmix_preamble_parse(p, len, &pre);

    FZ_ASSERT(rc == PG_PMIX_FRAME_OK || rc == PG_PMIX_FRAME_NEED_MORE ||
              rc == PG_PMIX_FRAME_EBAD_MAGIC || rc == PG_PMIX_FRAME_EVERSION);
    FZ_ASSERT((rc == PG_PMIX_FRAME_NEED_MORE) ==
              (len < PG_PMIX_PREAMBLE_LEN && rc != PG_PMIX_FRAME_EBAD_MAGIC));
    FZ_ASSERT(pg_pmix_frame_strerror(rc) != NULL);
    return rc == PG_PMIX_FRAME_OK ? PG_PMIX_PREAMBLE_LEN : 0;
}

/* The next frame at p[0..len): its payload length, or -1 when the stream
 * ends or breaks there.  Every proper prefix of a frame needs more. */
static long fz_frame(const char *p, size_t len)
{
    size_t plen = 0, shorter;
    int rc = pg_pmix_frame_next(p, len, PG_PMIX_FRAME_MAX, &plen);

    if (rc != PG_PMIX_FRAME_OK) {
        FZ_ASSERT(plen == 0 && pg_pmix_frame_strerror(rc) != NULL);
        return -1;
    }
    FZ_ASSERT(plen > 0 && plen <= PG_PMIX_FRAME_MAX && PG_PMIX_HEADER_LEN + plen <= len);
    FZ_ASSERT(pg_pmix_frame_next(p, PG_PMIX_HEADER_LEN + plen - 1, PG_PMIX_FRAME_MAX, &shorter) ==
              PG_PMIX_FRAME_NEED_MORE);
    return (long)plen;
}

/* Copies a payload to its own allocation of exactly its size, so ASan
 * sees any read past it. */
static char *fz_copy(const char *p, size_t len)
{
    char *c = malloc(len > 0 ? len : 1);

    FZ_ASSERT(c != NULL);
    memcpy(c, p, len);
    return c;
}

/* ---- the server handler in a real engine ---------------------------------------- */

/* The clock (host.clock) is advanced by the frame loop, so held gets and
 * lookups with timeouts expire within one input. */
typedef struct fz_gateway {
    pmix_fake_host_t host;
    pmix_fake_peer_t conns[FZ_NRANKS];
    bool spoken[FZ_NRANKS]; /* a frame was delivered to the rank */
} fz_gateway_t;

static void fz_close(fz_gateway_t *gw, pmix_fake_peer_t *c, bool failed)
{
    pg_proc_t proc = { gw->host.kvsname, (pmix_rank_t)c->peer.rank };

    if (!c->open)
        return;
    pg_pmix_handler.on_close(&c->peer);
    c->open = false;
    FZ_ASSERT(c->peer.handler_data == NULL);
    if (failed || !c->finalized)
        (void)pg_proc_lost(gw->host.job.engine, &proc);
}

static void fz_init_rank(fz_gateway_t *gw, pmix_fake_peer_t *c);

static void fz_deliver(fz_gateway_t *gw, pmix_fake_peer_t *c, const char *payload, size_t len)
{
    int rc;

    if (!c->open)
        return;
    /* Ranks below FZ_AUTO_INIT are initialised before their first frame,
     * not at start: an init touches only its own session (the engine's
     * reserved gets are read-only), so a rank the input never speaks for
     * needs none, and the init that dominated each run is skipped. */
    if (!gw->spoken[c->peer.rank]) {
        gw->spoken[c->peer.rank] = true;
        if (c->peer.rank < FZ_AUTO_INIT) {
            fz_init_rank(gw, c);
            if (!c->open)
                return;
        }
    }
    rc = pg_pmix_handler.on_frame(&c->peer, payload, len);
    FZ_ASSERT(rc == PG_HANDLER_OK || rc == PG_HANDLER_CLOSE || rc == PG_HANDLER_FAIL);
    if (rc != PG_HANDLER_OK)
        fz_close(gw, c, rc == PG_HANDLER_FAIL);
}

static void fz_init_rank(fz_gateway_t *gw, pmix_fake_peer_t *c)
{
    pmix_data_buffer_t buf;

    pg_buffer_construct(&buf);
    FZ_ASSERT(pg_pmix_msg_begin(&buf, PG_PMIX_CMD_INIT, 0) == PMIX_SUCCESS);
    fz_deliver(gw, c, buf.base_ptr + PG_PMIX_HEADER_LEN, buf.bytes_used - PG_PMIX_HEADER_LEN);
    pg_buffer_destruct(&buf);
}

static void fz_gateway_start(fz_gateway_t *gw)
{
    static const char *const hosts[] = { "node0", "node1" };
    static const uint32_t rank_node[FZ_NRANKS] = { 0, 0, 1, 1 };
    pg_ns_layout_t layout = { 0 };

    memset(gw, 0, sizeof *gw); /* spoken[] starts false for every input */
    pmix_fake_host_init(&gw->host, "fuzzjob", FZ_NRANKS, pg_engine_new(&(pg_host_ops_t){ 0 }, gw));
    gw->host.clock = 1000000000ull;
    gw->host.on_reply = fz_on_reply;
    layout.size = FZ_NRANKS;
    layout.nnodes = 2;
    layout.hostnames = hosts;
    layout.rank_node = rank_node;
    FZ_ASSERT(gw->host.job.engine != NULL);
    FZ_ASSERT(pg_ns_register(gw->host.job.engine, gw->host.kvsname, &layout) == PMIX_SUCCESS);
    for (int r = 0; r < FZ_NRANKS; r++) {
        pmix_fake_peer_t *c = &gw->conns[r];
        pg_proc_t proc = { gw->host.kvsname, (pmix_rank_t)r };

        pmix_fake_peer_init(c, &gw->host, r);
        FZ_ASSERT(pg_proc_connect(gw->host.job.engine, &proc) == PMIX_SUCCESS);
        FZ_ASSERT(pg_pmix_handler.on_open(&c->peer) == 0);
        c->open = true;
    }
}

static void fz_gateway_stop(fz_gateway_t *gw)
{
    gw->host.clock += 3600ull * 1000000000ull;
    (void)pg_engine_expire(gw->host.job.engine, gw->host.clock);
    for (int r = 0; r < FZ_NRANKS; r++)
        fz_close(gw, &gw->conns[r], false);
    FZ_ASSERT(pg_ns_deregister(gw->host.job.engine, gw->host.kvsname) == PMIX_SUCCESS);
    pg_engine_free(gw->host.job.engine);
}

/* The rank a payload is delivered to: its request id picks one, so one
 * input can interleave the requests of several ranks. */
static int fz_rank_of(const char *payload, size_t len)
{
    pmix_data_buffer_t view = fz_view(payload, len);
    uint8_t cmd;
    uint32_t id = 0;

    (void)pg_pmix_msg_read_header(&view, &cmd, &id);
    return (int)(id % FZ_NRANKS);
}

/* ---- the target ----------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    size_t off = fz_preamble(in, size);
    fz_gateway_t gw;
    char *whole = fz_copy(in, size);

    /* the whole input as one payload, whatever its framing */
    fz_groups(whole, size);
    fz_whole_value(whole, size);
    fz_message(whole, size);
    free(whole);

    fz_gateway_start(&gw);
    while (off < size) {
        long plen = fz_frame(in + off, size - off);
        char *payload;

        if (plen < 0)
            break;
        payload = fz_copy(in + off + PG_PMIX_HEADER_LEN, (size_t)plen);
        fz_groups(payload, (size_t)plen);
        fz_message(payload, (size_t)plen);
        fz_deliver(&gw, &gw.conns[fz_rank_of(payload, (size_t)plen)], payload, (size_t)plen);
        free(payload);
        off += PG_PMIX_HEADER_LEN + (size_t)plen;
        gw.host.clock += FZ_TICK_NS;
        (void)pg_engine_expire(gw.host.job.engine, gw.host.clock);
    }
    fz_gateway_stop(&gw);
    return 0;
}
