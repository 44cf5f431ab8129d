/*
 * fuzz_wire: libFuzzer target over everything that reads bytes from a peer:
 * the framer on an arbitrary stream (and on prefixes of it, which must say
 * "need more" and nothing else), every parser on the raw bytes whatever the
 * framer says, protocol detection, and an encode -> frame -> parse round
 * trip whose result must equal what went in.  Built by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/pg_parse.h"
#include "wire/pg_detect.h"
#include "wire/pg_enc.h"
#include "wire/pg_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PG_FUZZ_ASSERT(c) \
    do {                  \
        if (!(c))         \
            abort();      \
    } while (0)

/* Reads every token so ASan sees any pointer outside the buffer. */
static void pg_fuzz_touch(const pg_msg_t *msg)
{
    volatile unsigned sum = 0;
    for (uint32_t i = 0; i < msg->ntokens; i++) {
        const pg_token_t *t = &msg->tokens[i];
        for (uint32_t k = 0; k < t->key.len; k++)
            sum += (unsigned char)t->key.ptr[k];
        for (uint32_t k = 0; t->val.ptr && k < t->val.len; k++)
            sum += (unsigned char)t->val.ptr[k];
    }
    (void)sum;
    PG_FUZZ_ASSERT(msg->ntokens <= PG_MSG_MAX_TOKENS);
    PG_FUZZ_ASSERT(pg_cmd_name(msg->cmd) != NULL);
}

/* An over-long message as the gateway takes it: its head parsed, the rest
 * skipped in two pieces.  Returns the bytes it took, 0 when the head or
 * the rest has not all arrived. */
static size_t pg_fuzz_oversized(char *buf, size_t avail, int err, pg_msg_t *msg)
{
    pg_frame_t head;
    pg_frame_skip_t skip;
    size_t at, piece, took;

    if (pg_frame_oversized(buf, avail, err, &head) != PG_WIRE_OK)
        return 0;
    PG_FUZZ_ASSERT(head.consumed <= avail && head.body_off + head.body_len == head.consumed);
    PG_FUZZ_ASSERT(head.kind != PG_FRAME_PMI2 || head.total > head.consumed);
    (void)pg_parse_frame(buf, &head, msg);
    pg_fuzz_touch(msg);
    pg_frame_skip_start(&skip, &head);
    at = head.consumed;
    piece = (avail - at) / 3;
    took = pg_frame_skip(&skip, buf + at, piece);
    PG_FUZZ_ASSERT(took <= piece && (took == piece || skip.kind == PG_FRAME_NONE));
    at += took;
    if (skip.kind != PG_FRAME_NONE) {
        took = pg_frame_skip(&skip, buf + at, avail - at);
        PG_FUZZ_ASSERT(took <= avail - at);
        at += took;
    }
    PG_FUZZ_ASSERT(skip.skipped == at);
    return skip.kind == PG_FRAME_NONE ? at : 0;
}

/* Frames the whole stream; a prefix of a frame must always need more. */
static void pg_fuzz_stream(char *buf, size_t size, pg_msg_t *msg)
{
    size_t off = 0;
    while (off < size) {
        pg_frame_t f;
        int rc = pg_frame_next(buf + off, size - off, &f);
        if (pg_frame_is_oversized(rc)) {
            size_t took = pg_fuzz_oversized(buf + off, size - off, rc, msg);

            if (took == 0)
                return;
            off += took;
            continue;
        }
        if (rc != PG_WIRE_OK)
            return;
        PG_FUZZ_ASSERT(f.consumed > 0 && f.consumed <= size - off);
        PG_FUZZ_ASSERT(f.body_off + f.body_len <= f.consumed);
        pg_frame_t g;
        PG_FUZZ_ASSERT(pg_frame_next(buf + off, f.consumed - 1, &g) == PG_WIRE_ENEED_MORE);
        PG_FUZZ_ASSERT(pg_frame_next(buf + off, f.consumed / 2, &g) == PG_WIRE_ENEED_MORE);
        rc = pg_parse_frame(buf + off, &f, msg);
        pg_fuzz_touch(msg);
        pg_version_t v;
        (void)pg_detect(msg, &v);
        off += f.consumed;
    }
}

/* Each parser on its own copy, exactly `size` bytes long (no slack). */
static void pg_fuzz_parsers(const uint8_t *data, size_t size, pg_msg_t *msg)
{
    int (*parsers[])(char *, size_t, pg_msg_t *) = { pg_parse_pmi1, pg_parse_pmi1_mcmd,
                                                     pg_parse_pmi2 };
    for (size_t i = 0; i < sizeof parsers / sizeof parsers[0]; i++) {
        char *copy = malloc(size ? size : 1);
        if (copy == NULL)
            return;
        memcpy(copy, data, size);
        (void)parsers[i](copy, size, msg);
        pg_fuzz_touch(msg);
        free(copy);
    }
}

/* A value made of the input (NULs dropped) must come back unchanged
 * through the PMI-2 encoder (which escapes ';') and the PMI-2 parser. */
static void pg_fuzz_roundtrip_pmi2(const uint8_t *data, size_t size, pg_msg_t *msg)
{
    char value[PG_PMI2_VALLEN_MAX + 1], out[4 * PG_PMI2_VALLEN_MAX];
    size_t n = 0;
    for (size_t i = 0; i < size && n < PG_PMI2_VALLEN_MAX / 2; i++)
        if (data[i] != '\0')
            value[n++] = (char)data[i];
    value[n] = '\0';
    pg_enc_t e;
    pg_enc_init(&e, out, sizeof out);
    PG_FUZZ_ASSERT(pg_enc_pmi2_kvs_put(&e, NULL, "k", value) == PG_WIRE_OK);
    pg_frame_t f;
    PG_FUZZ_ASSERT(pg_frame_next(out, e.len, &f) == PG_WIRE_OK && f.consumed == e.len);
    PG_FUZZ_ASSERT(pg_parse_frame(out, &f, msg) == PG_WIRE_OK);
    PG_FUZZ_ASSERT(msg->cmd == PG_CMD_PMI2_KVS_PUT);
    pg_str_t got = pg_msg_get(msg, "value");
    PG_FUZZ_ASSERT(got.ptr != NULL && got.len == n && memcmp(got.ptr, value, n) == 0);
}

/* The same through PMI-1, for values PMI-1 can carry (no space, '\n'). */
static void pg_fuzz_roundtrip_pmi1(const uint8_t *data, size_t size, pg_msg_t *msg)
{
    char value[PG_PMI1_VALLEN_MAX + 1], out[2 * PG_PMI1_VALLEN_MAX];
    size_t n = 0;
    for (size_t i = 0; i < size && n < PG_PMI1_VALLEN_MAX / 2; i++)
        if (data[i] != '\0' && data[i] != ' ' && data[i] != '\n')
            value[n++] = (char)data[i];
    value[n] = '\0';
    pg_enc_t e;
    pg_enc_init(&e, out, sizeof out);
    PG_FUZZ_ASSERT(pg_enc_pmi1_get_result(&e, value) == PG_WIRE_OK);
    pg_frame_t f;
    PG_FUZZ_ASSERT(pg_frame_next(out, e.len, &f) == PG_WIRE_OK && f.consumed == e.len);
    PG_FUZZ_ASSERT(pg_parse_frame(out, &f, msg) == PG_WIRE_OK);
    pg_str_t got = pg_msg_get(msg, "value");
    PG_FUZZ_ASSERT(got.ptr != NULL && got.len == n && memcmp(got.ptr, value, n) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pg_msg_t msg;
    pg_msg_init(&msg);
    char *stream = malloc(size ? size : 1);
    if (stream != NULL) {
        memcpy(stream, data, size);
        pg_fuzz_stream(stream, size, &msg);
        free(stream);
    }
    pg_fuzz_parsers(data, size, &msg);
    pg_fuzz_roundtrip_pmi2(data, size, &msg);
    pg_fuzz_roundtrip_pmi1(data, size, &msg);
    pg_msg_release(&msg);
    return 0;
}
