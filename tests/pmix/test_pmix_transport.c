/*
 * test_pmix_transport: CUnit tests of the PMIx transport codec both ends
 * share -- the preamble and frames of wire/pg_pmix_frame.h, the message
 * header and arrays of wire/pg_pmix_msg.c, and the handler's
 * pmix_value_t <-> engine value conversion, and the handler itself on
 * requests no honest client sends.  What a user relies on: the
 * gateway can tell a PMIx client from a PMI one by its first byte, bytes
 * may arrive in any pieces, and truncated or hostile input is an error,
 * never a crash or an allocation the input does not justify.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"
#include "tests/pg_cunit.h"
#include "tests/pmix/pmix_handler_stubs.h"
#include "wire/pg_frame.h"
#include "wire/pg_pmix_frame.h"

/* ---- preamble ------------------------------------------------------------- */

static void preamble_round_trip_carries_rank(void)
{
    unsigned char buf[PG_PMIX_PREAMBLE_LEN];
    pg_pmix_preamble_t pre;

    pg_pmix_preamble_encode(buf, 1234567);
    CU_ASSERT_EQUAL(pg_pmix_preamble_parse((char *)buf, sizeof(buf), &pre), PG_PMIX_FRAME_OK);
    CU_ASSERT_EQUAL(pre.rank, 1234567);
    CU_ASSERT_EQUAL(pre.version, PG_PMIX_VERSION);
    CU_ASSERT_TRUE(pg_pmix_is_start((char *)buf, 1));
}

static void preamble_any_prefix_needs_more(void)
{
    unsigned char buf[PG_PMIX_PREAMBLE_LEN];
    pg_pmix_preamble_t pre;

    pg_pmix_preamble_encode(buf, PG_PMIX_RANK_FROM_FD);
    for (size_t n = 0; n < sizeof(buf); n++)
        CU_ASSERT_EQUAL(pg_pmix_preamble_parse((char *)buf, n, &pre), PG_PMIX_FRAME_NEED_MORE);
}

static void preamble_wrong_magic_refused_at_first_bad_byte(void)
{
    pg_pmix_preamble_t pre;

    CU_ASSERT_EQUAL(pg_pmix_preamble_parse("\x89X", 2, &pre), PG_PMIX_FRAME_EBAD_MAGIC);
    CU_ASSERT_EQUAL(pg_pmix_preamble_parse("cmd=init", 8, &pre), PG_PMIX_FRAME_EBAD_MAGIC);
}

static void preamble_other_version_refused(void)
{
    unsigned char buf[PG_PMIX_PREAMBLE_LEN];
    pg_pmix_preamble_t pre;

    pg_pmix_preamble_encode(buf, 0);
    buf[5] = 9;
    CU_ASSERT_EQUAL(pg_pmix_preamble_parse((char *)buf, sizeof(buf), &pre),
                    PG_PMIX_FRAME_EVERSION);
}

/* The detection rule the connection layer depends on: PMI-1 lines, PMI-1
 * spawn blocks and PMI-2 length fields never look like PMIx, and the PMI
 * framer refuses the PMIx magic byte. */
static void pmi_starts_never_look_like_pmix(void)
{
    static const char *const pmi[] = { "cmd=init pmi_version=1\n", "mcmd=spawn\n", "    10",
                                       "10    ", " 3", "\t7" };
    pg_frame_t f;

    for (size_t i = 0; i < sizeof(pmi) / sizeof(pmi[0]); i++)
        CU_ASSERT_FALSE(pg_pmix_is_start(pmi[i], strlen(pmi[i])));
    CU_ASSERT_FALSE(pg_pmix_is_start("", 0));
    CU_ASSERT_EQUAL(pg_frame_next("\x89PGX", 4, &f), PG_WIRE_EBAD_START);
}

/* ---- frames ----------------------------------------------------------------- */

static size_t make_frame(unsigned char *out, const char *payload, uint32_t len)
{
    pg_pmix_put_u32(out, len);
    memcpy(out + PG_PMIX_HEADER_LEN, payload, len);
    return PG_PMIX_HEADER_LEN + len;
}

static void frame_split_at_every_byte(void)
{
    unsigned char buf[64];
    size_t total = make_frame(buf, "binary\0payload", 14), plen;

    for (size_t n = 0; n < total; n++)
        CU_ASSERT_EQUAL(pg_pmix_frame_next((char *)buf, n, 1024, &plen), PG_PMIX_FRAME_NEED_MORE);
    CU_ASSERT_EQUAL(pg_pmix_frame_next((char *)buf, total, 1024, &plen), PG_PMIX_FRAME_OK);
    CU_ASSERT_EQUAL(plen, 14);
    CU_ASSERT_EQUAL(memcmp(buf + PG_PMIX_HEADER_LEN, "binary\0payload", 14), 0);
}

static void frame_back_to_back_frames_cut_apart(void)
{
    unsigned char buf[64];
    size_t a = make_frame(buf, "one", 3), plen;

    make_frame(buf + a, "second", 6);
    CU_ASSERT_EQUAL(pg_pmix_frame_next((char *)buf, sizeof(buf), 1024, &plen), PG_PMIX_FRAME_OK);
    CU_ASSERT_EQUAL(plen, 3);
    CU_ASSERT_EQUAL(pg_pmix_frame_next((char *)buf + a, sizeof(buf) - a, 1024, &plen),
                    PG_PMIX_FRAME_OK);
    CU_ASSERT_EQUAL(plen, 6);
}

static void frame_too_long_refused_from_header(void)
{
    unsigned char hdr[PG_PMIX_HEADER_LEN];
    size_t plen;

    pg_pmix_put_u32(hdr, PG_PMIX_FRAME_MAX + 1u);
    CU_ASSERT_EQUAL(pg_pmix_frame_next((char *)hdr, sizeof(hdr), PG_PMIX_FRAME_MAX, &plen),
                    PG_PMIX_FRAME_ETOO_BIG);
    pg_pmix_put_u32(hdr, 0xffffffffu);
    CU_ASSERT_EQUAL(pg_pmix_frame_next((char *)hdr, sizeof(hdr), PG_PMIX_FRAME_MAX, &plen),
                    PG_PMIX_FRAME_ETOO_BIG);
}

static void frame_empty_refused(void)
{
    unsigned char hdr[PG_PMIX_HEADER_LEN] = { 0, 0, 0, 0 };
    size_t plen;

    CU_ASSERT_EQUAL(pg_pmix_frame_next((char *)hdr, sizeof(hdr), 1024, &plen),
                    PG_PMIX_FRAME_EEMPTY);
}

/* ---- messages ----------------------------------------------------------------- */

/* A sealed request: the frame's length matches, the header reads back. */
static void message_header_round_trip(void)
{
    pmix_data_buffer_t buf, view;
    uint8_t cmd = 0;
    uint32_t id = 0;
    size_t plen;

    pg_buffer_construct(&buf);
    CU_ASSERT_EQUAL(pg_pmix_msg_begin(&buf, PG_PMIX_CMD_GET, 77), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmix_msg_seal(&buf), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmix_frame_next(buf.base_ptr, buf.bytes_used, 1024, &plen),
                    PG_PMIX_FRAME_OK);
    CU_ASSERT_EQUAL(plen + PG_PMIX_HEADER_LEN, buf.bytes_used);
    pg_pmix_msg_view(&view, buf.base_ptr + PG_PMIX_HEADER_LEN, plen);
    CU_ASSERT_EQUAL(pg_pmix_msg_read_header(&view, &cmd, &id), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(cmd, PG_PMIX_CMD_GET);
    CU_ASSERT_EQUAL(id, 77);
    CU_ASSERT_STRING_EQUAL(pg_pmix_cmd_name(cmd), "get");
    CU_ASSERT_STRING_EQUAL(pg_pmix_cmd_name(200), "?");
    pg_buffer_destruct(&buf);
}

static void message_array_round_trip_including_empty(void)
{
    pmix_data_buffer_t buf, view;
    pmix_info_t in[2], *out = NULL;
    pmix_proc_t *none = NULL;
    size_t n = 99;

    PMIX_INFO_LOAD(&in[0], "a", "x", PMIX_STRING);
    PMIX_INFO_LOAD(&in[1], "b", NULL, PMIX_BOOL);
    pg_buffer_construct(&buf);
    CU_ASSERT_EQUAL(pg_pmix_pack_array(&buf, NULL, 0, PMIX_PROC), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmix_pack_array(&buf, in, 2, PMIX_INFO), PMIX_SUCCESS);
    pg_pmix_msg_view(&view, buf.base_ptr, buf.bytes_used);
    CU_ASSERT_EQUAL(pg_pmix_unpack_array(&view, (void **)&none, &n, PMIX_PROC), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(none);
    CU_ASSERT_EQUAL(pg_pmix_unpack_array(&view, (void **)&out, &n, PMIX_INFO), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(out[0].value.data.string, "x");
    CU_ASSERT_TRUE(out[1].value.data.flag);
    pg_pmix_array_free(out, n, PMIX_INFO);
    PMIX_INFO_DESTRUCT(&in[0]);
    PMIX_INFO_DESTRUCT(&in[1]);
    pg_buffer_destruct(&buf);
}

/* A count of 2^31-1 followed by nothing must be refused before anything
 * that size is allocated. */
static void message_lying_count_refused_without_allocating(void)
{
    pmix_data_buffer_t buf, view;
    uint32_t lie = 0x7fffffff;
    pmix_info_t *out = NULL;
    size_t n = 0;

    pg_buffer_construct(&buf);
    pg_pmix_pack_one(&buf, &lie, PMIX_UINT32);
    pg_pmix_msg_view(&view, buf.base_ptr, buf.bytes_used);
    CU_ASSERT_NOT_EQUAL(pg_pmix_unpack_array(&view, (void **)&out, &n, PMIX_INFO), PMIX_SUCCESS);
    CU_ASSERT_PTR_NULL(out);
    CU_ASSERT_EQUAL(n, 0);
    pg_buffer_destruct(&buf);
}

/* Found reading the allocation bounds, reproduced with fuzz_pmix on one
 * 16 MiB frame (libFuzzer: malloc of 9 GB): the count was only checked
 * against the bytes left, one per element, so a publish could make the
 * gateway calloc 16 M pmix_info_t before the group was found short.  An
 * info takes at least 10 bytes on the wire (docs/pack-format.md): 1000
 * infos cannot fit in 1000 bytes, and the count is refused as a lie before
 * allocating. */
static void message_count_bounded_by_smallest_encoding(void)
{
    pmix_data_buffer_t buf, view;
    uint32_t count = 1000;
    char padding[1000];
    pmix_info_t *out = NULL;
    size_t n = 0;

    memset(padding, 0, sizeof(padding));
    pg_buffer_construct(&buf);
    pg_pmix_pack_one(&buf, &count, PMIX_UINT32);
    pg_buffer_append(&buf, padding, sizeof(padding));
    pg_pmix_msg_view(&view, buf.base_ptr, buf.bytes_used);
    CU_ASSERT_EQUAL(pg_pmix_unpack_array(&view, (void **)&out, &n, PMIX_INFO),
                    PMIX_ERR_UNPACK_FAILURE);
    CU_ASSERT_PTR_NULL(out);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(pg_type_min_wire_size(PMIX_INFO), 10);
    CU_ASSERT_EQUAL(pg_type_min_wire_size(PMIX_UINT64), 8);
    CU_ASSERT_EQUAL(pg_type_min_wire_size(PMIX_POINTER), 0);
    pg_buffer_destruct(&buf);
}

/* A count smaller than the group that follows is a malformed message. */
static void message_count_smaller_than_group_refused(void)
{
    pmix_data_buffer_t buf, view;
    uint32_t one = 1;
    char *strs[] = { "a", "b", "c" }, **out = NULL;
    size_t n = 0;

    pg_buffer_construct(&buf);
    pg_pmix_pack_one(&buf, &one, PMIX_UINT32);
    pg_pack(&buf, strs, 3, PMIX_STRING);
    pg_pmix_msg_view(&view, buf.base_ptr, buf.bytes_used);
    CU_ASSERT_EQUAL(pg_pmix_unpack_array(&view, (void **)&out, &n, PMIX_STRING),
                    PMIX_ERR_UNPACK_FAILURE);
    CU_ASSERT_PTR_NULL(out);
    pg_buffer_destruct(&buf);
}

/* Found by tests/fuzz/fuzz_pmix.c (through the trace decoder): a group of
 * several elements where one argument belongs is malformed, and the one
 * element decoded before that was noticed must not stay allocated in the
 * caller's variable, which every caller of unpack_one only frees on
 * success. */
static void message_one_from_larger_group_refused_and_released(void)
{
    pmix_data_buffer_t buf, view;
    char *strs[] = { "first", "second" }, *one = NULL;
    pmix_value_t vals[2], v;

    PMIX_VALUE_LOAD(&vals[0], "x", PMIX_STRING);
    PMIX_VALUE_LOAD(&vals[1], "y", PMIX_STRING);
    pg_buffer_construct(&buf);
    pg_pack(&buf, strs, 2, PMIX_STRING);
    pg_pack(&buf, vals, 2, PMIX_VALUE);
    pg_pmix_msg_view(&view, buf.base_ptr, buf.bytes_used);
    CU_ASSERT_EQUAL(pg_pmix_unpack_one(&view, &one, PMIX_STRING), PMIX_ERR_UNPACK_FAILURE);
    CU_ASSERT_PTR_NULL(one);
    free(one);
    PMIX_VALUE_CONSTRUCT(&v);
    CU_ASSERT_EQUAL(pg_pmix_unpack_one(&view, &v, PMIX_VALUE), PMIX_ERR_UNPACK_FAILURE);
    CU_ASSERT_EQUAL(v.type, PMIX_UNDEF);
    CU_ASSERT_PTR_NULL(v.data.string);
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_DESTRUCT(&vals[0]);
    PMIX_VALUE_DESTRUCT(&vals[1]);
    pg_buffer_destruct(&buf);
}

/* Every truncation of a realistic get request reads as an error. */
static void message_every_truncation_is_an_error(void)
{
    pmix_data_buffer_t buf;
    pmix_proc_t p;
    pmix_info_t info;
    char *key = "some-key";
    bool nb = true;

    PMIX_LOAD_PROCID(&p, "ns", 3);
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &(int){ 2 }, PMIX_INT);
    pg_buffer_construct(&buf);
    pg_pmix_msg_begin(&buf, PG_PMIX_CMD_GET, 9);
    pg_pmix_pack_one(&buf, &p, PMIX_PROC);
    pg_pmix_pack_one(&buf, &key, PMIX_STRING);
    pg_pmix_pack_array(&buf, &info, 1, PMIX_INFO);
    pg_pmix_pack_one(&buf, &nb, PMIX_BOOL);
    for (size_t len = 0; len + PG_PMIX_HEADER_LEN < buf.bytes_used; len++) {
        pmix_data_buffer_t view;
        uint8_t cmd;
        uint32_t id;
        pmix_proc_t tp;
        char *tk = NULL;
        pmix_info_t *ti = NULL;
        size_t nti = 0;
        bool tnb;
        pmix_status_t rc;

        pg_pmix_msg_view(&view, buf.base_ptr + PG_PMIX_HEADER_LEN, len);
        rc = pg_pmix_msg_read_header(&view, &cmd, &id);
        if (rc == PMIX_SUCCESS)
            rc = pg_pmix_unpack_one(&view, &tp, PMIX_PROC);
        if (rc == PMIX_SUCCESS)
            rc = pg_pmix_unpack_one(&view, &tk, PMIX_STRING);
        if (rc == PMIX_SUCCESS)
            rc = pg_pmix_unpack_array(&view, (void **)&ti, &nti, PMIX_INFO);
        if (rc == PMIX_SUCCESS)
            rc = pg_pmix_unpack_one(&view, &tnb, PMIX_BOOL);
        CU_ASSERT_NOT_EQUAL(rc, PMIX_SUCCESS);
        free(tk);
        pg_pmix_array_free(ti, nti, PMIX_INFO);
    }
    PMIX_INFO_DESTRUCT(&info);
    pg_buffer_destruct(&buf);
}

/* One decode of `len` bytes at `bytes` as info[] (or, `as_value`, one
 * value), the way the commands read their arguments: either it fails and
 * leaves nothing behind (no array, a value still zeroed) or it reads within
 * the bytes and what it read re-encodes to exactly them (the format is
 * canonical).  Returns whether it decoded. */
static bool decode_refused_or_canonical(const char *bytes, size_t len, bool as_value)
{
    static const pmix_value_t zero_value;
    pmix_data_buffer_t view, enc;
    pmix_info_t *ti = NULL;
    pmix_value_t v;
    size_t n = 0, used;
    pmix_status_t rc;

    pg_pmix_msg_view(&view, bytes, len);
    memset(&v, 0, sizeof(v)); /* padding too: compared whole below */
    rc = as_value ? pg_pmix_unpack_one(&view, &v, PMIX_VALUE)
                  : pg_pmix_unpack_array(&view, (void **)&ti, &n, PMIX_INFO);
    if (rc != PMIX_SUCCESS) {
        CU_ASSERT(ti == NULL && n == 0);
        CU_ASSERT(memcmp(&v, &zero_value, sizeof(v)) == 0);
        return false;
    }
    used = (size_t)(view.unpack_ptr - bytes);
    CU_ASSERT(used <= len);
    pg_buffer_construct(&enc);
    CU_ASSERT_EQUAL(as_value ? pg_pmix_pack_one(&enc, &v, PMIX_VALUE)
                             : pg_pmix_pack_array(&enc, ti, n, PMIX_INFO),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(enc.bytes_used, used);
    CU_ASSERT(enc.bytes_used != used || used == 0 || memcmp(enc.base_ptr, bytes, used) == 0);
    pg_buffer_destruct(&enc);
    pg_pmix_array_free(ti, n, PMIX_INFO);
    PMIX_VALUE_DESTRUCT(&v);
    return true;
}

/* Bytes after a valid header that are random, or a valid info[] / value
 * with one byte changed and cut anywhere: every decode is refused cleanly
 * or canonical (decode_refused_or_canonical), and both happen. */
static void message_garbage_is_refused_or_read_canonically(void)
{
    char junk[256];
    unsigned seed = 12345;
    int decoded = 0, refused = 0;
    pmix_data_buffer_t valid[2];
    pmix_info_t info[2] = { { .flags = 0 }, { .flags = 0 } };
    pmix_value_t value;
    uint32_t number = 77;

    PMIX_VALUE_CONSTRUCT(&value);
    PMIX_INFO_LOAD(&info[0], "garbage.str", "some text", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], "garbage.num", &number, PMIX_UINT32);
    PMIX_VALUE_LOAD(&value, "a value", PMIX_STRING);
    pg_buffer_construct(&valid[0]);
    pg_buffer_construct(&valid[1]);
    CU_ASSERT_EQUAL(pg_pmix_pack_array(&valid[0], info, 2, PMIX_INFO), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmix_pack_one(&valid[1], &value, PMIX_VALUE), PMIX_SUCCESS);
    for (int round = 0; round < 4000; round++) {
        bool as_value = round % 2 == 1;
        const pmix_data_buffer_t *good = &valid[as_value ? 1 : 0];
        size_t len;

        if (round % 4 < 2) { /* random bytes */
            len = (size_t)(rand_r(&seed) % sizeof(junk));
            for (size_t i = 0; i < len; i++)
                junk[i] = (char)rand_r(&seed);
        } else { /* a valid encoding, one byte changed, cut anywhere */
            len = good->bytes_used <= sizeof(junk) ? good->bytes_used : sizeof(junk);
            memcpy(junk, good->base_ptr, len);
            if (rand_r(&seed) % 2 == 0)
                junk[rand_r(&seed) % len] = (char)rand_r(&seed);
            len = (size_t)rand_r(&seed) % (len + 1);
        }
        if (decode_refused_or_canonical(junk, len, as_value))
            decoded++;
        else
            refused++;
    }
    CU_ASSERT(decoded > 0);
    CU_ASSERT(refused > 0);
    pg_buffer_destruct(&valid[0]);
    pg_buffer_destruct(&valid[1]);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_VALUE_DESTRUCT(&value);
}

static void directive_numbers_of_any_integer_type(void)
{
    pmix_value_t v;
    uint64_t u = 0;

    PMIX_VALUE_LOAD(&v, &(int){ 5 }, PMIX_INT);
    CU_ASSERT_TRUE(pg_pmix_value_uint(&v, &u) && u == 5);
    PMIX_VALUE_LOAD(&v, &(uint16_t){ 7 }, PMIX_UINT16);
    CU_ASSERT_TRUE(pg_pmix_value_uint(&v, &u) && u == 7);
    PMIX_VALUE_LOAD(&v, &(int32_t){ -1 }, PMIX_INT32);
    CU_ASSERT_FALSE(pg_pmix_value_uint(&v, &u));
    PMIX_VALUE_LOAD(&v, "5", PMIX_STRING);
    CU_ASSERT_FALSE(pg_pmix_value_uint(&v, &u));
    PMIX_VALUE_DESTRUCT(&v);
}

/* ---- values through the engine's representation ----------------------------- */

static void value_survives_engine(const pmix_value_t *in)
{
    pmix_data_buffer_t scratch;
    pg_value_t ev;
    pmix_value_t out;

    pg_buffer_construct(&scratch);
    CU_ASSERT_EQUAL_FATAL(pg_pmix_value_to_engine(in, &scratch, &ev), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(ev.type, in->type);
    CU_ASSERT_EQUAL_FATAL(pg_pmix_value_from_engine(&ev, &out), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_value_compare(in, &out), PMIX_EQUAL);
    pg_value_destruct(&out);
    pg_buffer_destruct(&scratch);
}

static void value_engine_round_trips(void)
{
    pmix_byte_object_t bo = { (char *)"a\0b", 3 };
    pmix_proc_t p;
    pmix_value_t v;

    PMIX_LOAD_PROCID(&p, "job", 4);
    PMIX_VALUE_LOAD(&v, "text", PMIX_STRING);
    value_survives_engine(&v);
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, &bo, PMIX_BYTE_OBJECT);
    value_survives_engine(&v);
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, &(double){ -0.125 }, PMIX_DOUBLE);
    value_survives_engine(&v);
    PMIX_VALUE_LOAD(&v, &(uint16_t){ 65535 }, PMIX_UINT16);
    value_survives_engine(&v);
    PMIX_VALUE_LOAD(&v, &p, PMIX_PROC);
    value_survives_engine(&v);
    PMIX_VALUE_DESTRUCT(&v);
}

/* A PMI rank's string is what a PMIx reader gets: a PMIX_STRING. */
static void value_pmi_string_reads_as_pmix_string(void)
{
    pg_value_t ev = pg_value_string("from-pmi");
    pmix_value_t out;

    CU_ASSERT_EQUAL_FATAL(pg_pmix_value_from_engine(&ev, &out), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(out.type, PMIX_STRING);
    CU_ASSERT_STRING_EQUAL(out.data.string, "from-pmi");
    pg_value_destruct(&out);
}

/* The engine answers PMIX_PARENT_ID with a pmix_proc_t's native bytes (it
 * has no packer): the handler must hand it on as a PMIX_PROC. */
static void value_engine_proc_is_native(void)
{
    pmix_proc_t p;
    pg_value_t ev;
    pmix_value_t out;

    PMIX_LOAD_PROCID(&p, "kvs_1_0", 1);
    ev = pg_value_bytes(PMIX_PROC, &p, sizeof(p));
    CU_ASSERT_EQUAL_FATAL(pg_pmix_value_from_engine(&ev, &out), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(out.type, PMIX_PROC);
    CU_ASSERT_STRING_EQUAL(out.data.proc->nspace, "kvs_1_0");
    CU_ASSERT_EQUAL(out.data.proc->rank, 1);
    pg_value_destruct(&out);
}

static void value_corrupt_engine_bytes_refused(void)
{
    pg_value_t ev = pg_value_bytes(PMIX_PROC, "\x00\x16\xff", 3);
    pg_value_t short_int = pg_value_bytes(PMIX_UINT32, "\x01", 1);
    pmix_value_t out;

    CU_ASSERT_EQUAL(pg_pmix_value_from_engine(&ev, &out), PMIX_ERR_UNPACK_FAILURE);
    CU_ASSERT_EQUAL(pg_pmix_value_from_engine(&short_int, &out), PMIX_ERR_UNPACK_FAILURE);
}

static void value_pointer_cannot_be_stored(void)
{
    pmix_data_buffer_t scratch;
    pmix_value_t v;
    pg_value_t ev;

    pg_buffer_construct(&scratch);
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_POINTER;
    v.data.ptr = &v;
    CU_ASSERT_EQUAL(pg_pmix_value_to_engine(&v, &scratch, &ev), PMIX_ERR_BAD_PARAM);
    pg_buffer_destruct(&scratch);
}

/* ---- the gateway's handler on hostile requests -------------------------------- */

/* The handler (pmix/server/pg_pmix_server.c) runs here in the fake host of
 * tests/pmix/pmix_handler_stubs.h: one connection, rank 0 of a two-rank job
 * in a real engine.  Bugs the fuzzer (tests/fuzz/fuzz_pmix.c) finds in the
 * handler get their regression tests here. */
typedef struct handler_fixture {
    pmix_fake_host_t host;
    pmix_fake_peer_t conn;
} handler_fixture_t;

/* Rank 0 of "hjob" (two ranks on node0 and node1), opened and inited. */
static void handler_start(handler_fixture_t *f)
{
    static const char *const hosts[] = { "node0", "node1" };
    static const uint32_t rank_node[] = { 0, 1 };
    pg_ns_layout_t layout = { .size = 2, .nnodes = 2, .hostnames = hosts,
                               .rank_node = rank_node };
    pg_proc_t self = { "hjob", 0 };
    pmix_data_buffer_t init;

    pmix_fake_host_init(&f->host, "hjob", 2, pg_engine_new(&(pg_host_ops_t){ 0 }, NULL));
    f->host.clock = 1;
    pmix_fake_peer_init(&f->conn, &f->host, 0);
    CU_ASSERT_FATAL(f->host.job.engine != NULL);
    CU_ASSERT_EQUAL_FATAL(pg_ns_register(f->host.job.engine, "hjob", &layout), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(pg_proc_connect(f->host.job.engine, &self), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(pg_pmix_handler.on_open(&f->conn.peer), 0);
    pg_buffer_construct(&init);
    pg_pmix_msg_begin(&init, PG_PMIX_CMD_INIT, 1);
    CU_ASSERT_EQUAL(pg_pmix_handler.on_frame(&f->conn.peer, init.base_ptr + PG_PMIX_HEADER_LEN,
                                             init.bytes_used - PG_PMIX_HEADER_LEN),
                    PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f->conn.last_status, PMIX_SUCCESS);
    pg_buffer_destruct(&init);
}

static void handler_stop(handler_fixture_t *f)
{
    pg_pmix_handler.on_close(&f->conn.peer);
    pg_engine_free(f->host.job.engine);
}

/* The request in `req` (begun with pg_pmix_msg_begin) to the handler. */
static int handler_send(handler_fixture_t *f, pmix_data_buffer_t *req)
{
    int rc = pg_pmix_handler.on_frame(&f->conn.peer, req->base_ptr + PG_PMIX_HEADER_LEN,
                                      req->bytes_used - PG_PMIX_HEADER_LEN);

    pg_buffer_destruct(req);
    return rc;
}

/* The reply to the last frame rank 0 was sent, kept by the host's on_reply
 * hook: its command code and request id. */
static uint8_t rank0_reply_cmd;
static uint32_t rank0_reply_id;

static void keep_rank0_reply(pmix_fake_peer_t *p, const char *bytes, size_t len)
{
    pmix_data_buffer_t view;

    if (p->peer.rank != 0 || len < PG_PMIX_HEADER_LEN)
        return;
    pg_pmix_msg_view(&view, bytes + PG_PMIX_HEADER_LEN, len - PG_PMIX_HEADER_LEN);
    (void)pg_pmix_msg_read_header(&view, &rank0_reply_cmd, &rank0_reply_id);
}

/* Found by fuzz_pmix: a client that sends "event" (a command only the
 * gateway sends) was refused under the event's own code, so the reply was
 * an event frame -- with request id 0, one libpmix would hand to its
 * handlers as an event whose code is NOT_SUPPORTED.  The refusal now goes
 * under code 0 (unknown command), with the request's id. */
static void handler_event_from_a_client_refused_as_unknown(void)
{
    handler_fixture_t f;
    pmix_data_buffer_t req;

    handler_start(&f);
    f.host.on_reply = keep_rank0_reply;
    for (uint32_t id = 0; id < 2; id++) {
        rank0_reply_cmd = PG_PMIX_CMD_EVENT;
        rank0_reply_id = 99;
        pg_buffer_construct(&req);
        pg_pmix_msg_begin(&req, PG_PMIX_CMD_EVENT, id);
        CU_ASSERT_EQUAL(handler_send(&f, &req), PG_HANDLER_OK);
        CU_ASSERT_EQUAL(f.conn.last_status, PMIX_ERR_NOT_SUPPORTED);
        CU_ASSERT_EQUAL(rank0_reply_cmd, 0);
        CU_ASSERT_EQUAL(rank0_reply_id, id);
    }
    handler_stop(&f);
}

/* Found reading the handler while wiring it into fuzz_pmix, reproduced
 * there: a PMIX_HOSTNAME qualifier whose string is NULL (length 0xffffffff
 * on the wire) made the gateway compare node names with NULL and crash,
 * taking every rank of the job down.  It is a bad parameter. */
static void handler_get_with_null_hostname_refused(void)
{
    handler_fixture_t f;
    pmix_data_buffer_t req;
    pmix_proc_t target;
    pmix_info_t info;
    char *key = PMIX_NODEID;
    bool nonblocking = false;

    handler_start(&f);
    PMIX_LOAD_PROCID(&target, "", 0);
    PMIX_INFO_LOAD(&info, PMIX_HOSTNAME, NULL, PMIX_STRING);
    pg_buffer_construct(&req);
    pg_pmix_msg_begin(&req, PG_PMIX_CMD_GET, 2);
    pg_pmix_pack_one(&req, &target, PMIX_PROC);
    pg_pmix_pack_one(&req, &key, PMIX_STRING);
    pg_pmix_pack_array(&req, &info, 1, PMIX_INFO);
    pg_pmix_pack_one(&req, &nonblocking, PMIX_BOOL);
    CU_ASSERT_EQUAL(handler_send(&f, &req), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.replies, 2);
    CU_ASSERT_EQUAL(f.conn.last_status, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);
    handler_stop(&f);
}


/* ---- events, queries and logging in the handler ------------------------------ */

/* The last frame rank 1 was sent, kept by the host's on_reply hook. */
static char rank1_frame[1024];
static size_t rank1_len;

static void keep_rank1_frame(pmix_fake_peer_t *p, const char *bytes, size_t len)
{
    if (p->peer.rank == 1 && len <= sizeof(rank1_frame)) {
        memcpy(rank1_frame, bytes, len);
        rank1_len = len;
    }
}

/* Opens and inits rank 1 beside the fixture's rank 0. */
static void handler_second_rank(handler_fixture_t *f, pmix_fake_peer_t *p1)
{
    pg_proc_t one = { "hjob", 1 };
    pmix_data_buffer_t init;

    pmix_fake_peer_init(p1, &f->host, 1);
    CU_ASSERT_EQUAL(pg_proc_connect(f->host.job.engine, &one), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(pg_pmix_handler.on_open(&p1->peer), 0);
    pg_buffer_construct(&init);
    pg_pmix_msg_begin(&init, PG_PMIX_CMD_INIT, 1);
    CU_ASSERT_EQUAL(pg_pmix_handler.on_frame(&p1->peer, init.base_ptr + PG_PMIX_HEADER_LEN,
                                             init.bytes_used - PG_PMIX_HEADER_LEN),
                    PG_HANDLER_OK);
    pg_buffer_destruct(&init);
    f->host.on_reply = keep_rank1_frame;
    rank1_len = 0;
}

/* A PMIx_Abort of rank 0: rank 1 is sent PMIX_ERR_PROC_ABORTED (id 0)
 * from rank 0, naming it as affected and carrying the exit code, before
 * the host is asked to end the job. */
static void handler_abort_tells_the_other_ranks(void)
{
    handler_fixture_t f;
    pmix_fake_peer_t p1;
    pmix_data_buffer_t req, view;
    pmix_status_t code = 7, status = PMIX_SUCCESS;
    char *msg = "gone";
    pmix_proc_t src;
    pmix_data_range_t range = 0;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    uint8_t cmd = 0;
    uint32_t id = 1;
    int exit_code = -1;

    handler_start(&f);
    handler_second_rank(&f, &p1);
    pg_buffer_construct(&req);
    pg_pmix_msg_begin(&req, PG_PMIX_CMD_ABORT, 5);
    pg_pmix_pack_one(&req, &code, PMIX_STATUS);
    pg_pmix_pack_one(&req, &msg, PMIX_STRING);
    pg_pmix_pack_array(&req, NULL, 0, PMIX_PROC);
    CU_ASSERT_EQUAL(handler_send(&f, &req), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.aborts, 1);
    CU_ASSERT_FATAL(rank1_len > PG_PMIX_HEADER_LEN);
    pg_pmix_msg_view(&view, rank1_frame + PG_PMIX_HEADER_LEN, rank1_len - PG_PMIX_HEADER_LEN);
    CU_ASSERT_EQUAL(pg_pmix_msg_read_header(&view, &cmd, &id), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(cmd, PG_PMIX_CMD_EVENT);
    CU_ASSERT_EQUAL(id, 0);
    CU_ASSERT_EQUAL(pg_pmix_unpack_one(&view, &status, PMIX_STATUS), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(status, PMIX_ERR_PROC_ABORTED);
    CU_ASSERT_EQUAL(pg_pmix_unpack_one(&view, &src, PMIX_PROC), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(src.rank, 0);
    CU_ASSERT_EQUAL(pg_pmix_unpack_one(&view, &range, PMIX_DATA_RANGE), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(range, PMIX_RANGE_NAMESPACE);
    CU_ASSERT_EQUAL(pg_pmix_unpack_array(&view, (void **)&info, &ninfo, PMIX_INFO), PMIX_SUCCESS);
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE))
            exit_code = info[i].value.data.integer;
    CU_ASSERT_EQUAL(exit_code, 7);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    pg_pmix_handler.on_close(&p1.peer);
    handler_stop(&f);
}

/* A notify cut short is not what libpmix sends: the connection fails; a
 * custom range without members is a bad parameter. */
static void handler_notify_bad_requests(void)
{
    handler_fixture_t f;
    pmix_data_buffer_t req;
    pmix_status_t code = -3001;
    pmix_proc_t src;
    pmix_data_range_t range = PMIX_RANGE_CUSTOM;

    handler_start(&f);
    pg_buffer_construct(&req);
    pg_pmix_msg_begin(&req, PG_PMIX_CMD_NOTIFY, 2);
    pg_pmix_pack_one(&req, &code, PMIX_STATUS);
    CU_ASSERT_EQUAL(handler_send(&f, &req), PG_HANDLER_FAIL);
    PMIX_LOAD_PROCID(&src, "", 0);
    pg_buffer_construct(&req);
    pg_pmix_msg_begin(&req, PG_PMIX_CMD_NOTIFY, 3);
    pg_pmix_pack_one(&req, &code, PMIX_STATUS);
    pg_pmix_pack_one(&req, &src, PMIX_PROC);
    pg_pmix_pack_one(&req, &range, PMIX_DATA_RANGE);
    pg_pmix_pack_array(&req, NULL, 0, PMIX_PROC);
    pg_pmix_pack_array(&req, NULL, 0, PMIX_INFO);
    CU_ASSERT_EQUAL(handler_send(&f, &req), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.last_status, PMIX_ERR_BAD_PARAM);
    handler_stop(&f);
}

/* One query of one key, qualified by `nspace` when given. */
static pmix_status_t handler_query(handler_fixture_t *f, uint32_t count, const char *key,
                                   const char *nspace)
{
    pmix_data_buffer_t req;
    char *k = (char *)key;
    pmix_info_t q;

    pg_buffer_construct(&req);
    pg_pmix_msg_begin(&req, PG_PMIX_CMD_QUERY, 4);
    pg_pmix_pack_one(&req, &count, PMIX_UINT32);
    if (count > 0) {
        pg_pmix_pack_array(&req, &k, 1, PMIX_STRING);
        if (nspace != NULL)
            PMIX_INFO_LOAD(&q, PMIX_NSPACE, nspace, PMIX_STRING);
        pg_pmix_pack_array(&req, nspace != NULL ? &q : NULL, nspace != NULL, PMIX_INFO);
        if (nspace != NULL)
            PMIX_INFO_DESTRUCT(&q);
    }
    CU_ASSERT_EQUAL(handler_send(f, &req), PG_HANDLER_OK);
    return f->conn.last_status;
}

static void handler_query_answers(void)
{
    handler_fixture_t f;

    handler_start(&f);
    CU_ASSERT_EQUAL(handler_query(&f, 0, NULL, NULL), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(handler_query(&f, 1, PMIX_QUERY_PROC_TABLE, "hjob"), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(handler_query(&f, 1, PMIX_QUERY_PROC_TABLE, "nojob"), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(handler_query(&f, 1, PMIX_JOB_SIZE, "nojob"), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(handler_query(&f, 1, "user.key", NULL), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(handler_query(&f, 1, PMIX_QUERY_NAMESPACES, NULL), PMIX_SUCCESS);
    handler_stop(&f);
}

/* PMIx_Log's stderr channel is a line of the job's log naming the rank;
 * channels the gateway does not serve are refused. */
static pmix_status_t handler_log(handler_fixture_t *f, const char *channel, const void *data,
                                 pmix_data_type_t type)
{
    pmix_data_buffer_t req;
    pmix_info_t d;

    PMIX_INFO_LOAD(&d, channel, data, type);
    pg_buffer_construct(&req);
    pg_pmix_msg_begin(&req, PG_PMIX_CMD_LOG, 6);
    pg_pmix_pack_array(&req, &d, 1, PMIX_INFO);
    pg_pmix_pack_array(&req, NULL, 0, PMIX_INFO);
    PMIX_INFO_DESTRUCT(&d);
    CU_ASSERT_EQUAL(handler_send(f, &req), PG_HANDLER_OK);
    return f->conn.last_status;
}

static void handler_log_channels(void)
{
    handler_fixture_t f;
    int n = 5;

    handler_start(&f);
    CU_ASSERT_EQUAL(handler_log(&f, PMIX_LOG_STDERR, "disk full", PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(f.host.last_log, "rank 0 logged: disk full");
    f.host.last_log[0] = '\0';
    CU_ASSERT_EQUAL(handler_log(&f, PMIX_LOG_SYSLOG, "x", PMIX_STRING), PMIX_ERR_NOT_SUPPORTED);
    CU_ASSERT_EQUAL(handler_log(&f, PMIX_LOG_STDERR, &n, PMIX_INT), PMIX_ERR_NOT_SUPPORTED);
    CU_ASSERT_EQUAL(handler_log(&f, "user.key", "x", PMIX_STRING), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_STRING_EQUAL(f.host.last_log, "");
    handler_stop(&f);
}

/* What a host that serves every channel (the gateway) was asked to log. */
static char logged[256];
static int logged_channel = -1, logged_priority = -1, logged_count;

static int recording_log_to(pg_peer_t *peer, pg_log_channel_t channel, int priority,
                            const char *text)
{
    (void)peer;
    snprintf(logged, sizeof(logged), "%s", text);
    logged_channel = (int)channel;
    logged_priority = priority;
    logged_count++;
    return 0;
}

/* One PMIx_Log request: data[] and directives[], the status answered. */
static pmix_status_t handler_log_with(handler_fixture_t *f, const pmix_info_t *data, size_t n,
                                      const pmix_info_t *dirs, size_t ndirs)
{
    pmix_data_buffer_t req;

    pg_buffer_construct(&req);
    pg_pmix_msg_begin(&req, PG_PMIX_CMD_LOG, 7);
    pg_pmix_pack_array(&req, data, n, PMIX_INFO);
    pg_pmix_pack_array(&req, dirs, ndirs, PMIX_INFO);
    CU_ASSERT_EQUAL(handler_send(f, &req), PG_HANDLER_OK);
    return f->conn.last_status;
}

/* Through a host with log_to: stdout, stderr and (local) syslog are each
 * one call with the rank's raw text (the host escapes it); the syslog
 * priority and a caller's timestamp come from the directives; ONCE stops
 * at the first channel served. */
static void handler_log_directives(void)
{
    handler_fixture_t f;
    pg_peer_ops_t ops;
    pmix_info_t data[2], dirs[2];
    time_t when = 10;
    int prio = 3;

    handler_start(&f);
    ops = *f.conn.peer.ops;
    ops.log_to = recording_log_to;
    f.conn.peer.ops = &ops;
    logged_count = 0;
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDOUT, "a\nb", PMIX_STRING);
    CU_ASSERT_EQUAL(handler_log_with(&f, data, 1, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(logged_channel, PG_LOG_STDOUT);
    CU_ASSERT_STRING_EQUAL(logged, "a\nb");
    PMIX_INFO_DESTRUCT(&data[0]);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_LOCAL_SYSLOG, "disk full", PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[0], PMIX_LOG_SYSLOG_PRI, &prio, PMIX_INT);
    PMIX_INFO_LOAD(&dirs[1], PMIX_LOG_TIMESTAMP, &when, PMIX_TIME);
    CU_ASSERT_EQUAL(handler_log_with(&f, data, 1, dirs, 2), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(logged_channel, PG_LOG_SYSLOG);
    CU_ASSERT_EQUAL(logged_priority, 3);
    CU_ASSERT_STRING_EQUAL(logged, "[1970-01-01T00:00:10Z] disk full");
    PMIX_INFO_DESTRUCT(&data[0]);
    PMIX_INFO_DESTRUCT(&dirs[0]);
    PMIX_INFO_DESTRUCT(&dirs[1]);
    logged_count = 0;
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDERR, "first", PMIX_STRING);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDOUT, "second", PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[0], PMIX_LOG_ONCE, NULL, PMIX_BOOL);
    CU_ASSERT_EQUAL(handler_log_with(&f, data, 2, dirs, 1), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(logged_count, 1);
    CU_ASSERT_EQUAL(logged_channel, PG_LOG_STDERR);
    CU_ASSERT_EQUAL(handler_log_with(&f, data, 2, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(logged_count, 3);
    PMIX_INFO_DESTRUCT(&data[0]);
    PMIX_INFO_DESTRUCT(&data[1]);
    PMIX_INFO_DESTRUCT(&dirs[0]);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_EMAIL, "x", PMIX_STRING);
    CU_ASSERT_EQUAL(handler_log_with(&f, data, 1, NULL, 0), PMIX_ERR_NOT_SUPPORTED);
    PMIX_INFO_DESTRUCT(&data[0]);
    handler_stop(&f);
}

/* A job-control request with one directive for `targets`. */
static int handler_job_control(handler_fixture_t *f, const pmix_proc_t *targets, size_t n,
                               const pmix_info_t *dir)
{
    pmix_data_buffer_t req;

    pg_buffer_construct(&req);
    pg_pmix_msg_begin(&req, PG_PMIX_CMD_JOB_CONTROL, 3);
    pg_pmix_pack_array(&req, targets, n, PMIX_PROC);
    pg_pmix_pack_array(&req, dir, 1, PMIX_INFO);
    return handler_send(f, &req);
}

/* Job control reaches the host only for what it can do, in this job. */
static void handler_job_control_signals_only_what_it_can(void)
{
    handler_fixture_t f;
    pmix_proc_t target, stranger, beyond;
    pmix_info_t kill, pause, bad;
    bool yes = true;
    int zero = 0;

    handler_start(&f);
    PMIX_LOAD_PROCID(&target, "hjob", 1);
    PMIX_LOAD_PROCID(&stranger, "otherjob", 1);
    PMIX_LOAD_PROCID(&beyond, "hjob", 2);
    PMIX_INFO_LOAD(&kill, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&pause, PMIX_JOB_CTRL_PAUSE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&bad, PMIX_JOB_CTRL_SIGNAL, &zero, PMIX_INT);
    CU_ASSERT_EQUAL(handler_job_control(&f, &target, 1, &kill), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.last_status, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f.conn.signals, 1);
    CU_ASSERT_EQUAL(f.conn.last_signo, SIGKILL);
    CU_ASSERT_EQUAL(f.conn.last_nranks, 1);
    CU_ASSERT_EQUAL(handler_job_control(&f, NULL, 0, &kill), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.signals, 2);
    CU_ASSERT_EQUAL(f.conn.last_nranks, 0); /* no targets: the whole job */
    CU_ASSERT_EQUAL(handler_job_control(&f, &target, 1, &pause), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.last_status, PMIX_ERR_NOT_SUPPORTED);
    CU_ASSERT_EQUAL(handler_job_control(&f, &stranger, 1, &kill), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.last_status, PMIX_ERR_NOT_SUPPORTED);
    CU_ASSERT_EQUAL(handler_job_control(&f, &beyond, 1, &kill), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.last_status, PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(handler_job_control(&f, &target, 1, &bad), PG_HANDLER_OK);
    CU_ASSERT_EQUAL(f.conn.last_status, PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(f.conn.signals, 2); /* none of the refused ones signalled */
    PMIX_INFO_DESTRUCT(&kill);
    PMIX_INFO_DESTRUCT(&pause);
    PMIX_INFO_DESTRUCT(&bad);
    handler_stop(&f);
}

static const pg_cunit_test_t preamble_tests[] = {
    { "preamble_round_trip_carries_rank", preamble_round_trip_carries_rank },
    { "preamble_any_prefix_needs_more", preamble_any_prefix_needs_more },
    { "preamble_wrong_magic_refused_at_first_bad_byte",
      preamble_wrong_magic_refused_at_first_bad_byte },
    { "preamble_other_version_refused", preamble_other_version_refused },
    { "pmi_starts_never_look_like_pmix", pmi_starts_never_look_like_pmix },
    { NULL, NULL },
};

static const pg_cunit_test_t frame_tests[] = {
    { "frame_split_at_every_byte", frame_split_at_every_byte },
    { "frame_back_to_back_frames_cut_apart", frame_back_to_back_frames_cut_apart },
    { "frame_too_long_refused_from_header", frame_too_long_refused_from_header },
    { "frame_empty_refused", frame_empty_refused },
    { NULL, NULL },
};

static const pg_cunit_test_t message_tests[] = {
    { "message_header_round_trip", message_header_round_trip },
    { "message_array_round_trip_including_empty", message_array_round_trip_including_empty },
    { "message_lying_count_refused_without_allocating",
      message_lying_count_refused_without_allocating },
    { "message_count_bounded_by_smallest_encoding", message_count_bounded_by_smallest_encoding },
    { "message_count_smaller_than_group_refused", message_count_smaller_than_group_refused },
    { "message_one_from_larger_group_refused_and_released",
      message_one_from_larger_group_refused_and_released },
    { "message_every_truncation_is_an_error", message_every_truncation_is_an_error },
    { "message_garbage_is_refused_or_read_canonically",
      message_garbage_is_refused_or_read_canonically },
    { "directive_numbers_of_any_integer_type", directive_numbers_of_any_integer_type },
    { NULL, NULL },
};

static const pg_cunit_test_t value_tests[] = {
    { "value_engine_round_trips", value_engine_round_trips },
    { "value_pmi_string_reads_as_pmix_string", value_pmi_string_reads_as_pmix_string },
    { "value_engine_proc_is_native", value_engine_proc_is_native },
    { "value_corrupt_engine_bytes_refused", value_corrupt_engine_bytes_refused },
    { "value_pointer_cannot_be_stored", value_pointer_cannot_be_stored },
    { NULL, NULL },
};

static const pg_cunit_test_t handler_tests[] = {
    { "handler_get_with_null_hostname_refused", handler_get_with_null_hostname_refused },
    { "handler_abort_tells_the_other_ranks", handler_abort_tells_the_other_ranks },
    { "handler_event_from_a_client_refused_as_unknown",
      handler_event_from_a_client_refused_as_unknown },
    { "handler_notify_bad_requests", handler_notify_bad_requests },
    { "handler_query_answers", handler_query_answers },
    { "handler_log_channels", handler_log_channels },
    { "handler_log_directives", handler_log_directives },
    { "handler_job_control_signals_only_what_it_can",
      handler_job_control_signals_only_what_it_can },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "pmix_preamble", preamble_tests, NULL, NULL },
    { "pmix_frame", frame_tests, NULL, NULL },
    { "pmix_message", message_tests, NULL, NULL },
    { "pmix_value", value_tests, NULL, NULL },
    { "pmix_handler", handler_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
