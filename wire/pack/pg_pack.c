/*
 * pg_pack.c: buffers, the wire primitives and the per-type table behind
 * pg_pack/pg_unpack/pg_data_copy_into/pg_data_destruct.
 *
 * Why it is built this way: every type is described once in a table (C
 * element size, smallest wire size, pack/unpack/copy/destruct), so the
 * top-level group code, values, infos and data arrays all share the same
 * bounds checks.  Decoding reads through a `pg_reader` that knows how many
 * bytes remain, so no decoder can read past the end, and every count is
 * checked against (remaining bytes / smallest element) before anything is
 * allocated.  The byte format is specified in docs/pack-format.md.
 */
#include "wire/pack/pg_pack.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Group header: type tag (u16) + element count (u32). */
#define PG_GROUP_HEADER_SIZE 6
/* String length that encodes a NULL char*. */
#define PG_NULL_STRING_LEN UINT32_MAX
/* Grow buffers by at least this much to keep small packs cheap. */
#define PG_BUFFER_MIN_GROW 256

/* ---- buffers ---------------------------------------------------------- */

void pg_buffer_construct(pmix_data_buffer_t *buf)
{
    memset(buf, 0, sizeof(*buf));
}

void pg_buffer_destruct(pmix_data_buffer_t *buf)
{
    if (NULL == buf) {
        return;
    }
    free(buf->base_ptr);
    pg_buffer_construct(buf);
}

pmix_data_buffer_t *pg_buffer_new(void)
{
    return calloc(1, sizeof(pmix_data_buffer_t));
}

void pg_buffer_free(pmix_data_buffer_t *buf)
{
    pg_buffer_destruct(buf);
    free(buf);
}

/* A buffer whose cursors lie outside its payload was corrupted by its user;
 * refuse it rather than read or write through wild pointers. */
static bool buffer_is_sane(const pmix_data_buffer_t *buf)
{
    if (NULL == buf->base_ptr) {
        return 0 == buf->bytes_used && (NULL == buf->unpack_ptr || buf->unpack_ptr == buf->base_ptr);
    }
    return buf->bytes_used <= buf->bytes_allocated && buf->unpack_ptr >= buf->base_ptr &&
           buf->unpack_ptr <= buf->base_ptr + buf->bytes_used;
}

void pg_buffer_view(pmix_data_buffer_t *view, const void *bytes, size_t len)
{
    memset(view, 0, sizeof(*view));
    view->base_ptr = (char *)bytes; /* read only: unpack never writes */
    view->unpack_ptr = view->base_ptr;
    view->pack_ptr = NULL == bytes ? NULL : view->base_ptr + len;
    view->bytes_used = len;
    view->bytes_allocated = len;
}

size_t pg_buffer_unread(const pmix_data_buffer_t *buf)
{
    if (NULL == buf || NULL == buf->base_ptr || !buffer_is_sane(buf)) {
        return 0;
    }
    return (size_t)(buf->base_ptr + buf->bytes_used - buf->unpack_ptr);
}

pmix_status_t pg_buffer_load(pmix_data_buffer_t *buf, char *bytes, size_t size)
{
    if (NULL == buf || (NULL == bytes && 0 != size)) {
        return PMIX_ERR_BAD_PARAM;
    }
    pg_buffer_destruct(buf);
    buf->base_ptr = bytes;
    buf->unpack_ptr = bytes;
    buf->pack_ptr = (NULL == bytes) ? NULL : bytes + size;
    buf->bytes_allocated = size;
    buf->bytes_used = size;
    return PMIX_SUCCESS;
}

pmix_status_t pg_buffer_unload(pmix_data_buffer_t *buf, char **bytes, size_t *size)
{
    size_t unread;
    char *copy = NULL;

    if (NULL == buf || NULL == bytes || NULL == size || !buffer_is_sane(buf)) {
        return PMIX_ERR_BAD_PARAM;
    }
    unread = pg_buffer_unread(buf);
    if (unread > 0 && buf->unpack_ptr == buf->base_ptr) {
        /* nothing consumed: hand over the allocation itself */
        copy = buf->base_ptr;
        buf->base_ptr = NULL;
    } else if (unread > 0) {
        copy = malloc(unread);
        if (NULL == copy) {
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, buf->unpack_ptr, unread);
    }
    pg_buffer_destruct(buf);
    *bytes = copy;
    *size = unread;
    return PMIX_SUCCESS;
}

/* Makes room for `extra` more bytes after bytes_used. */
static pmix_status_t buffer_reserve(pmix_data_buffer_t *buf, size_t extra)
{
    size_t want, cap;
    size_t unpack_off;
    char *grown;

    if (extra > SIZE_MAX - buf->bytes_used) {
        return PMIX_ERR_NOMEM;
    }
    want = buf->bytes_used + extra;
    if (want <= buf->bytes_allocated && NULL != buf->base_ptr) {
        return PMIX_SUCCESS;
    }
    cap = buf->bytes_allocated < PG_BUFFER_MIN_GROW ? PG_BUFFER_MIN_GROW : buf->bytes_allocated;
    while (cap < want) {
        cap = (cap > SIZE_MAX / 2) ? want : cap * 2;
    }
    unpack_off = (NULL == buf->unpack_ptr) ? 0 : (size_t)(buf->unpack_ptr - buf->base_ptr);
    grown = realloc(buf->base_ptr, cap);
    if (NULL == grown) {
        return PMIX_ERR_NOMEM;
    }
    buf->base_ptr = grown;
    buf->bytes_allocated = cap;
    buf->unpack_ptr = grown + unpack_off;
    buf->pack_ptr = grown + buf->bytes_used;
    return PMIX_SUCCESS;
}

pmix_status_t pg_buffer_append(pmix_data_buffer_t *buf, const void *bytes, size_t size)
{
    pmix_status_t rc;

    if (NULL == buf || (NULL == bytes && 0 != size) || !buffer_is_sane(buf)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (0 == size) {
        return PMIX_SUCCESS;
    }
    rc = buffer_reserve(buf, size);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    memcpy(buf->base_ptr + buf->bytes_used, bytes, size);
    buf->bytes_used += size;
    buf->pack_ptr = buf->base_ptr + buf->bytes_used;
    return PMIX_SUCCESS;
}

pmix_status_t pg_buffer_copy_payload(pmix_data_buffer_t *dst, const pmix_data_buffer_t *src)
{
    if (NULL == dst || NULL == src || dst == src || !buffer_is_sane(src)) {
        return PMIX_ERR_BAD_PARAM;
    }
    return pg_buffer_append(dst, src->unpack_ptr, pg_buffer_unread(src));
}

/* Rolls a failed pack back to `mark` bytes. */
static void buffer_truncate(pmix_data_buffer_t *buf, size_t mark)
{
    buf->bytes_used = mark;
    buf->pack_ptr = (NULL == buf->base_ptr) ? NULL : buf->base_ptr + mark;
}

/* ---- wire primitives -------------------------------------------------- */

/* Writes the low `width` bytes of v, most significant first. */
static pmix_status_t put_uint(pmix_data_buffer_t *buf, uint64_t v, size_t width)
{
    uint8_t bytes[8];
    size_t i;

    for (i = 0; i < width; i++) {
        bytes[i] = (uint8_t)(v >> (8 * (width - 1 - i)));
    }
    return pg_buffer_append(buf, bytes, width);
}

/* A bounded view of the bytes still to decode. */
typedef struct pg_reader {
    const uint8_t *pos;
    size_t left;
} pg_reader_t;

static pmix_status_t get_uint(pg_reader_t *r, size_t width, uint64_t *v)
{
    uint64_t acc = 0;
    size_t i;

    if (r->left < width) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    for (i = 0; i < width; i++) {
        acc = (acc << 8) | r->pos[i];
    }
    r->pos += width;
    r->left -= width;
    *v = acc;
    return PMIX_SUCCESS;
}

static pmix_status_t get_bytes(pg_reader_t *r, size_t n, const uint8_t **bytes)
{
    if (r->left < n) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    *bytes = r->pos;
    r->pos += n;
    r->left -= n;
    return PMIX_SUCCESS;
}

/* Sign-extends the low `width` bytes of v. */
static int64_t sign_extend(uint64_t v, size_t width)
{
    unsigned shift = (unsigned)(64 - 8 * width);

    if (0 == shift) {
        return (int64_t)v;
    }
    if (v & (UINT64_C(1) << (8 * width - 1))) {
        v |= ~UINT64_C(0) << (8 * width);
    }
    return (int64_t)v;
}

/* Strings: u32 length, then the bytes without terminator; NULL has length
 * 0xffffffff.  `limit` bounds the length (keys, nspaces). */
static pmix_status_t put_string(pmix_data_buffer_t *buf, const char *s, size_t limit)
{
    size_t len;
    pmix_status_t rc;

    if (NULL == s) {
        return put_uint(buf, PG_NULL_STRING_LEN, 4);
    }
    len = strnlen(s, limit + 1);
    if (len > limit) {
        return PMIX_ERR_PACK_FAILURE;
    }
    rc = put_uint(buf, len, 4);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    return pg_buffer_append(buf, s, len);
}

/* Decodes a string into a new allocation (*out NULL for a NULL string). */
static pmix_status_t get_string(pg_reader_t *r, size_t limit, char **out)
{
    uint64_t len;
    const uint8_t *bytes;
    pmix_status_t rc;
    char *s;

    *out = NULL;
    rc = get_uint(r, 4, &len);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (PG_NULL_STRING_LEN == len) {
        return PMIX_SUCCESS;
    }
    if (len > limit) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    rc = get_bytes(r, (size_t)len, &bytes);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    /* an embedded NUL would silently shorten the C string */
    if (NULL != memchr(bytes, '\0', (size_t)len)) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    s = malloc((size_t)len + 1);
    if (NULL == s) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(s, bytes, (size_t)len);
    s[len] = '\0';
    *out = s;
    return PMIX_SUCCESS;
}

/* Decodes a string into a fixed array of limit+1 chars (keys, nspaces);
 * a NULL string is malformed there. */
static pmix_status_t get_fixed_string(pg_reader_t *r, char *dst, size_t limit)
{
    char *s = NULL;
    pmix_status_t rc = get_string(r, limit, &s);

    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (NULL == s) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    memset(dst, 0, limit + 1);
    memcpy(dst, s, strlen(s));
    free(s);
    return PMIX_SUCCESS;
}

/* ---- the type table --------------------------------------------------- */

typedef struct pg_type_ops pg_type_ops_t;

typedef pmix_status_t (*pg_pack_fn)(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                    const void *elem, int depth);
/* Decodes into a zeroed element; may leave partial contents on error (the
 * caller destructs them). */
typedef pmix_status_t (*pg_unpack_fn)(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                      int depth);
/* Deep copy into a zeroed dst; may leave partial contents on error. */
typedef pmix_status_t (*pg_copy_fn)(const pg_type_ops_t *ops, void *dst, const void *src);
typedef void (*pg_destruct_fn)(void *elem);

struct pg_type_ops {
    pmix_data_type_t type;
    const char *name;
    size_t elem_size;   /* sizeof the C element */
    size_t min_wire;    /* fewest bytes one element occupies on the wire */
    size_t wire_width;  /* integers: encoded width */
    bool is_signed;     /* integers: two's complement */
    pg_pack_fn pack;
    pg_unpack_fn unpack;
    pg_copy_fn copy;         /* NULL: plain memcpy */
    pg_destruct_fn destruct; /* NULL: owns nothing */
};

static const pg_type_ops_t *ops_for(pmix_data_type_t type);
static pmix_status_t pack_elems(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                const void *src, size_t n, int depth);
static pmix_status_t unpack_elem(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                 int depth);
static pmix_status_t copy_elem(const pg_type_ops_t *ops, void *dst, const void *src);
static void destruct_elem(const pg_type_ops_t *ops, void *elem);

/* ---- integers (every fixed-width scalar, incl. enums and bool) -------- */

/* Reads a C integer of elem_size bytes as a 64-bit quantity. */
static uint64_t load_native_uint(const void *elem, size_t elem_size, bool is_signed)
{
    switch (elem_size) {
    case 1: return is_signed ? (uint64_t)(int64_t) * (const int8_t *)elem : *(const uint8_t *)elem;
    case 2: return is_signed ? (uint64_t)(int64_t) * (const int16_t *)elem : *(const uint16_t *)elem;
    case 4: return is_signed ? (uint64_t)(int64_t) * (const int32_t *)elem : *(const uint32_t *)elem;
    default: return *(const uint64_t *)elem;
    }
}

static void store_native_uint(void *elem, size_t elem_size, uint64_t v)
{
    switch (elem_size) {
    case 1: *(uint8_t *)elem = (uint8_t)v; break;
    case 2: *(uint16_t *)elem = (uint16_t)v; break;
    case 4: *(uint32_t *)elem = (uint32_t)v; break;
    default: *(uint64_t *)elem = v; break;
    }
}

/* Does the decoded value fit the receiver's C type?  (A peer with a wider
 * int may send what we cannot hold: that is an error, not a truncation.) */
static bool fits_native(uint64_t v, size_t wire_width, size_t elem_size, bool is_signed)
{
    if (elem_size >= wire_width) {
        return true;
    }
    if (is_signed) {
        int64_t s = (int64_t)v;
        int64_t max = (int64_t)((UINT64_C(1) << (8 * elem_size - 1)) - 1);
        return s >= -max - 1 && s <= max;
    }
    return v < (UINT64_C(1) << (8 * elem_size));
}

static pmix_status_t pack_int(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                              const void *elem, int depth)
{
    (void)depth;
    return put_uint(buf, load_native_uint(elem, ops->elem_size, ops->is_signed), ops->wire_width);
}

static pmix_status_t unpack_int(const pg_type_ops_t *ops, pg_reader_t *r, void *elem, int depth)
{
    uint64_t v;
    pmix_status_t rc;

    (void)depth;
    rc = get_uint(r, ops->wire_width, &v);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (ops->is_signed) {
        v = (uint64_t)sign_extend(v, ops->wire_width);
    }
    if (!fits_native(v, ops->wire_width, ops->elem_size, ops->is_signed)) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    store_native_uint(elem, ops->elem_size, v);
    return PMIX_SUCCESS;
}

/* bool: one byte, 0 or 1; anything else is corruption. */
static pmix_status_t pack_bool(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                               const void *elem, int depth)
{
    (void)ops;
    (void)depth;
    return put_uint(buf, *(const bool *)elem ? 1 : 0, 1);
}

static pmix_status_t unpack_bool(const pg_type_ops_t *ops, pg_reader_t *r, void *elem, int depth)
{
    uint64_t v;
    pmix_status_t rc;

    (void)ops;
    (void)depth;
    rc = get_uint(r, 1, &v);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (v > 1) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    *(bool *)elem = (1 == v);
    return PMIX_SUCCESS;
}

/* float/double: their IEEE-754 bit patterns as u32/u64 (lossless). */
static pmix_status_t pack_float(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                const void *elem, int depth)
{
    uint32_t bits32;
    uint64_t bits64;

    (void)depth;
    if (4 == ops->wire_width) {
        memcpy(&bits32, elem, 4);
        return put_uint(buf, bits32, 4);
    }
    memcpy(&bits64, elem, 8);
    return put_uint(buf, bits64, 8);
}

static pmix_status_t unpack_float(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                  int depth)
{
    uint64_t v;
    uint32_t bits32;
    pmix_status_t rc;

    (void)depth;
    rc = get_uint(r, ops->wire_width, &v);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (4 == ops->wire_width) {
        bits32 = (uint32_t)v;
        memcpy(elem, &bits32, 4);
    } else {
        memcpy(elem, &v, 8);
    }
    return PMIX_SUCCESS;
}

/* timeval: i64 seconds, i64 microseconds. */
static pmix_status_t pack_timeval(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                  const void *elem, int depth)
{
    const struct timeval *tv = elem;
    pmix_status_t rc;

    (void)ops;
    (void)depth;
    rc = put_uint(buf, (uint64_t)(int64_t)tv->tv_sec, 8);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    return put_uint(buf, (uint64_t)(int64_t)tv->tv_usec, 8);
}

static pmix_status_t unpack_timeval(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                    int depth)
{
    struct timeval *tv = elem;
    uint64_t sec, usec;
    pmix_status_t rc;

    (void)ops;
    (void)depth;
    rc = get_uint(r, 8, &sec);
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(r, 8, &usec);
    }
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (!fits_native(sec, 8, sizeof(tv->tv_sec), true) ||
        !fits_native(usec, 8, sizeof(tv->tv_usec), true)) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    tv->tv_sec = (time_t)(int64_t)sec;
    tv->tv_usec = (suseconds_t)(int64_t)usec;
    return PMIX_SUCCESS;
}

/* ---- strings ---------------------------------------------------------- */

static pmix_status_t pack_string(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                 const void *elem, int depth)
{
    (void)ops;
    (void)depth;
    /* UINT32_MAX - 1 is the longest representable length */
    return put_string(buf, *(char *const *)elem, (size_t)UINT32_MAX - 1);
}

static pmix_status_t unpack_string(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                   int depth)
{
    (void)ops;
    (void)depth;
    return get_string(r, (size_t)UINT32_MAX - 1, (char **)elem);
}

static pmix_status_t copy_string(const pg_type_ops_t *ops, void *dst, const void *src)
{
    const char *s = *(char *const *)src;

    (void)ops;
    if (NULL == s) {
        *(char **)dst = NULL;
        return PMIX_SUCCESS;
    }
    *(char **)dst = strdup(s);
    return (NULL == *(char **)dst) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

static void destruct_string(void *elem)
{
    free(*(char **)elem);
    *(char **)elem = NULL;
}

/* ---- byte objects: u64 size, then the bytes --------------------------- */

static pmix_status_t pack_bo(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                             const void *elem, int depth)
{
    const pmix_byte_object_t *bo = elem;
    pmix_status_t rc;

    (void)ops;
    (void)depth;
    if (NULL == bo->bytes && 0 != bo->size) {
        return PMIX_ERR_PACK_FAILURE;
    }
    rc = put_uint(buf, bo->size, 8);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    return pg_buffer_append(buf, bo->bytes, bo->size);
}

static pmix_status_t unpack_bo(const pg_type_ops_t *ops, pg_reader_t *r, void *elem, int depth)
{
    pmix_byte_object_t *bo = elem;
    const uint8_t *bytes;
    uint64_t size;
    pmix_status_t rc;

    (void)ops;
    (void)depth;
    rc = get_uint(r, 8, &size);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (size > r->left) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    rc = get_bytes(r, (size_t)size, &bytes);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (0 == size) {
        return PMIX_SUCCESS;
    }
    bo->bytes = malloc((size_t)size);
    if (NULL == bo->bytes) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(bo->bytes, bytes, (size_t)size);
    bo->size = (size_t)size;
    return PMIX_SUCCESS;
}

static pmix_status_t copy_bo(const pg_type_ops_t *ops, void *dst, const void *src)
{
    const pmix_byte_object_t *s = src;
    pmix_byte_object_t *d = dst;

    (void)ops;
    if (NULL == s->bytes || 0 == s->size) {
        return PMIX_SUCCESS;
    }
    d->bytes = malloc(s->size);
    if (NULL == d->bytes) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(d->bytes, s->bytes, s->size);
    d->size = s->size;
    return PMIX_SUCCESS;
}

static void destruct_bo(void *elem)
{
    pmix_byte_object_t *bo = elem;

    free(bo->bytes);
    bo->bytes = NULL;
    bo->size = 0;
}

/* ---- proc: nspace string, u32 rank ------------------------------------ */

static pmix_status_t pack_proc(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                               const void *elem, int depth)
{
    const pmix_proc_t *p = elem;
    pmix_status_t rc;

    (void)ops;
    (void)depth;
    rc = put_string(buf, p->nspace, PMIX_MAX_NSLEN);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    return put_uint(buf, p->rank, 4);
}

static pmix_status_t unpack_proc(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                 int depth)
{
    pmix_proc_t *p = elem;
    uint64_t rank;
    pmix_status_t rc;

    (void)ops;
    (void)depth;
    rc = get_fixed_string(r, p->nspace, PMIX_MAX_NSLEN);
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(r, 4, &rank);
    }
    if (PMIX_SUCCESS == rc) {
        p->rank = (pmix_rank_t)rank;
    }
    return rc;
}

/* ---- values: u16 type, then the payload of that type ------------------ */

/* Which types a pmix_value_t may carry, and whether its union holds the
 * element itself or a pointer to it. */
bool pg_value_holds_pointer(pmix_data_type_t type)
{
    return PMIX_PROC == type || PMIX_DATA_ARRAY == type || PMIX_PROC_INFO == type;
}

static bool value_can_hold(pmix_data_type_t type)
{
    switch (type) {
    case PMIX_VALUE:
    case PMIX_INFO:
    case PMIX_PDATA:
        return false; /* not union members: wrap them in a data array */
    default:
        return NULL != ops_for(type);
    }
}

/* The element a value carries (NULL for UNDEF or a NULL pointer member). */
static const void *value_payload(const pmix_value_t *v)
{
    if (pg_value_holds_pointer(v->type)) {
        return v->data.ptr;
    }
    return &v->data;
}

static pmix_status_t pack_value(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                const void *elem, int depth)
{
    const pmix_value_t *v = elem;
    const void *payload;
    pmix_status_t rc;

    (void)ops;
    if (PMIX_UNDEF != v->type && !value_can_hold(v->type)) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    rc = put_uint(buf, v->type, 2);
    if (PMIX_SUCCESS != rc || PMIX_UNDEF == v->type) {
        return rc;
    }
    payload = value_payload(v);
    if (NULL == payload) {
        return PMIX_ERR_PACK_FAILURE;
    }
    return pack_elems(ops_for(v->type), buf, payload, 1, depth + 1);
}

static pmix_status_t unpack_value(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                  int depth)
{
    pmix_value_t *v = elem;
    const pg_type_ops_t *inner;
    uint64_t type;
    void *target;
    pmix_status_t rc;

    (void)ops;
    rc = get_uint(r, 2, &type);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (PMIX_UNDEF == type) {
        return PMIX_SUCCESS;
    }
    if (!value_can_hold((pmix_data_type_t)type)) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    inner = ops_for((pmix_data_type_t)type);
    if (pg_value_holds_pointer((pmix_data_type_t)type)) {
        target = calloc(1, inner->elem_size);
        if (NULL == target) {
            return PMIX_ERR_NOMEM;
        }
        rc = unpack_elem(inner, r, target, depth + 1);
        if (PMIX_SUCCESS != rc) {
            free(target);
            return rc;
        }
        v->data.ptr = target;
    } else {
        rc = unpack_elem(inner, r, &v->data, depth + 1);
        if (PMIX_SUCCESS != rc) {
            return rc;
        }
    }
    v->type = (pmix_data_type_t)type;
    return PMIX_SUCCESS;
}

static pmix_status_t copy_value(const pg_type_ops_t *ops, void *dst, const void *src)
{
    const pmix_value_t *s = src;
    pmix_value_t *d = dst;
    const pg_type_ops_t *inner;
    void *target;
    pmix_status_t rc;

    (void)ops;
    if (PMIX_UNDEF == s->type) {
        return PMIX_SUCCESS;
    }
    inner = ops_for(s->type);
    if (NULL == inner || !value_can_hold(s->type)) {
        /* types pmigate cannot interpret travel by shallow copy only when
         * they own nothing; anything else is refused */
        if (PMIX_POINTER == s->type) {
            *d = *s;
            return PMIX_SUCCESS;
        }
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    if (!pg_value_holds_pointer(s->type)) {
        rc = copy_elem(inner, &d->data, &s->data);
    } else if (NULL == s->data.ptr) {
        rc = PMIX_SUCCESS;
    } else {
        target = calloc(1, inner->elem_size);
        if (NULL == target) {
            return PMIX_ERR_NOMEM;
        }
        rc = copy_elem(inner, target, s->data.ptr);
        if (PMIX_SUCCESS != rc) {
            free(target);
            return rc;
        }
        d->data.ptr = target;
    }
    if (PMIX_SUCCESS == rc) {
        d->type = s->type;
    }
    return rc;
}

static void destruct_value(void *elem)
{
    pmix_value_t *v = elem;
    const pg_type_ops_t *inner = ops_for(v->type);

    if (NULL != inner && value_can_hold(v->type)) {
        if (!pg_value_holds_pointer(v->type)) {
            destruct_elem(inner, &v->data);
        } else if (NULL != v->data.ptr) {
            destruct_elem(inner, v->data.ptr);
            free(v->data.ptr);
        }
    }
    memset(v, 0, sizeof(*v));
}

/* ---- info: key, u32 flags, value -------------------------------------- */

static pmix_status_t pack_info(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                               const void *elem, int depth)
{
    const pmix_info_t *info = elem;
    pmix_status_t rc;

    (void)ops;
    rc = put_string(buf, info->key, PMIX_MAX_KEYLEN);
    if (PMIX_SUCCESS == rc) {
        rc = put_uint(buf, info->flags, 4);
    }
    if (PMIX_SUCCESS == rc) {
        rc = pack_value(NULL, buf, &info->value, depth);
    }
    return rc;
}

static pmix_status_t unpack_info(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                 int depth)
{
    pmix_info_t *info = elem;
    uint64_t flags;
    pmix_status_t rc;

    (void)ops;
    rc = get_fixed_string(r, info->key, PMIX_MAX_KEYLEN);
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(r, 4, &flags);
    }
    if (PMIX_SUCCESS == rc) {
        info->flags = (pmix_info_directives_t)flags;
        rc = unpack_value(NULL, r, &info->value, depth);
    }
    return rc;
}

static pmix_status_t copy_info(const pg_type_ops_t *ops, void *dst, const void *src)
{
    const pmix_info_t *s = src;
    pmix_info_t *d = dst;

    (void)ops;
    memcpy(d->key, s->key, sizeof(d->key));
    d->key[PMIX_MAX_KEYLEN] = '\0';
    d->flags = s->flags;
    return copy_value(NULL, &d->value, &s->value);
}

static void destruct_info(void *elem)
{
    pmix_info_t *info = elem;

    destruct_value(&info->value);
    memset(info, 0, sizeof(*info));
}

/* ---- pdata: proc, key, value ------------------------------------------ */

static pmix_status_t pack_pdata(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                const void *elem, int depth)
{
    const pmix_pdata_t *pd = elem;
    pmix_status_t rc;

    (void)ops;
    rc = pack_proc(NULL, buf, &pd->proc, depth);
    if (PMIX_SUCCESS == rc) {
        rc = put_string(buf, pd->key, PMIX_MAX_KEYLEN);
    }
    if (PMIX_SUCCESS == rc) {
        rc = pack_value(NULL, buf, &pd->value, depth);
    }
    return rc;
}

static pmix_status_t unpack_pdata(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                  int depth)
{
    pmix_pdata_t *pd = elem;
    pmix_status_t rc;

    (void)ops;
    rc = unpack_proc(NULL, r, &pd->proc, depth);
    if (PMIX_SUCCESS == rc) {
        rc = get_fixed_string(r, pd->key, PMIX_MAX_KEYLEN);
    }
    if (PMIX_SUCCESS == rc) {
        rc = unpack_value(NULL, r, &pd->value, depth);
    }
    return rc;
}

static pmix_status_t copy_pdata(const pg_type_ops_t *ops, void *dst, const void *src)
{
    const pmix_pdata_t *s = src;
    pmix_pdata_t *d = dst;

    (void)ops;
    d->proc = s->proc;
    memcpy(d->key, s->key, sizeof(d->key));
    d->key[PMIX_MAX_KEYLEN] = '\0';
    return copy_value(NULL, &d->value, &s->value);
}

static void destruct_pdata(void *elem)
{
    pmix_pdata_t *pd = elem;

    destruct_value(&pd->value);
    memset(pd, 0, sizeof(*pd));
}

/* ---- data arrays: u16 element type, u64 count, the elements ----------- */

static pmix_status_t pack_darray(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                 const void *elem, int depth)
{
    const pmix_data_array_t *da = elem;
    const pg_type_ops_t *inner;
    pmix_status_t rc;

    (void)ops;
    if (PMIX_UNDEF == da->type && 0 == da->size) {
        inner = NULL; /* an empty, untyped array is legal */
    } else if (NULL == (inner = ops_for(da->type))) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    if (0 != da->size && NULL == da->array) {
        return PMIX_ERR_PACK_FAILURE;
    }
    rc = put_uint(buf, da->type, 2);
    if (PMIX_SUCCESS == rc) {
        rc = put_uint(buf, da->size, 8);
    }
    if (PMIX_SUCCESS == rc && 0 != da->size) {
        rc = pack_elems(inner, buf, da->array, da->size, depth + 1);
    }
    return rc;
}

static pmix_status_t unpack_darray(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                   int depth)
{
    pmix_data_array_t *da = elem;
    const pg_type_ops_t *inner;
    uint64_t type, count, i;
    pmix_status_t rc;
    char *array;

    (void)ops;
    rc = get_uint(r, 2, &type);
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(r, 8, &count);
    }
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (0 == count) {
        if (PMIX_UNDEF != type && NULL == ops_for((pmix_data_type_t)type)) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
        da->type = (pmix_data_type_t)type;
        return PMIX_SUCCESS;
    }
    inner = ops_for((pmix_data_type_t)type);
    if (NULL == inner) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    /* every element needs at least min_wire bytes: this bounds the
     * allocation by the input size before anything is allocated */
    if (count > r->left / inner->min_wire) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    array = calloc((size_t)count, inner->elem_size);
    if (NULL == array) {
        return PMIX_ERR_NOMEM;
    }
    /* publish the array first so a failure part-way is cleaned up by the
     * caller's destruct (zeroed elements own nothing) */
    da->type = (pmix_data_type_t)type;
    da->size = (size_t)count;
    da->array = array;
    for (i = 0; i < count; i++) {
        rc = unpack_elem(inner, r, array + i * inner->elem_size, depth + 1);
        if (PMIX_SUCCESS != rc) {
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t copy_darray(const pg_type_ops_t *ops, void *dst, const void *src)
{
    const pmix_data_array_t *s = src;
    pmix_data_array_t *d = dst;
    const pg_type_ops_t *inner;
    size_t i;
    pmix_status_t rc;

    (void)ops;
    d->type = s->type;
    if (0 == s->size || NULL == s->array) {
        return PMIX_SUCCESS;
    }
    inner = ops_for(s->type);
    if (NULL == inner) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    d->array = calloc(s->size, inner->elem_size);
    if (NULL == d->array) {
        return PMIX_ERR_NOMEM;
    }
    d->size = s->size;
    for (i = 0; i < s->size; i++) {
        rc = copy_elem(inner, (char *)d->array + i * inner->elem_size,
                       (const char *)s->array + i * inner->elem_size);
        if (PMIX_SUCCESS != rc) {
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

static void destruct_darray(void *elem)
{
    pmix_data_array_t *da = elem;
    const pg_type_ops_t *inner = ops_for(da->type);
    size_t i;

    if (NULL != da->array && NULL != inner) {
        for (i = 0; i < da->size; i++) {
            destruct_elem(inner, (char *)da->array + i * inner->elem_size);
        }
    }
    free(da->array);
    memset(da, 0, sizeof(*da));
}

/* ---- envar: name, value, separator byte ------------------------------- */

static pmix_status_t pack_envar(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                const void *elem, int depth)
{
    const pmix_envar_t *e = elem;
    pmix_status_t rc;

    rc = pack_string(ops, buf, &e->envar, depth);
    if (PMIX_SUCCESS == rc) {
        rc = pack_string(ops, buf, &e->value, depth);
    }
    if (PMIX_SUCCESS == rc) {
        rc = put_uint(buf, (uint8_t)e->separator, 1);
    }
    return rc;
}

static pmix_status_t unpack_envar(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                  int depth)
{
    pmix_envar_t *e = elem;
    uint64_t sep;
    pmix_status_t rc;

    rc = unpack_string(ops, r, &e->envar, depth);
    if (PMIX_SUCCESS == rc) {
        rc = unpack_string(ops, r, &e->value, depth);
    }
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(r, 1, &sep);
    }
    if (PMIX_SUCCESS == rc) {
        e->separator = (char)sep;
    }
    return rc;
}

static pmix_status_t copy_envar(const pg_type_ops_t *ops, void *dst, const void *src)
{
    const pmix_envar_t *s = src;
    pmix_envar_t *d = dst;
    pmix_status_t rc;

    rc = copy_string(ops, &d->envar, &s->envar);
    if (PMIX_SUCCESS == rc) {
        rc = copy_string(ops, &d->value, &s->value);
    }
    d->separator = s->separator;
    return rc;
}

static void destruct_envar(void *elem)
{
    pmix_envar_t *e = elem;

    free(e->envar);
    free(e->value);
    memset(e, 0, sizeof(*e));
}

/* ---- proc_info: proc, hostname, executable, i64 pid, i64 exit, u8 state */

static pmix_status_t pack_pinfo(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                const void *elem, int depth)
{
    const pmix_proc_info_t *pi = elem;
    pmix_status_t rc;

    rc = pack_proc(ops, buf, &pi->proc, depth);
    if (PMIX_SUCCESS == rc) {
        rc = pack_string(ops, buf, &pi->hostname, depth);
    }
    if (PMIX_SUCCESS == rc) {
        rc = pack_string(ops, buf, &pi->executable_name, depth);
    }
    if (PMIX_SUCCESS == rc) {
        rc = put_uint(buf, (uint64_t)(int64_t)pi->pid, 8);
    }
    if (PMIX_SUCCESS == rc) {
        rc = put_uint(buf, (uint64_t)(int64_t)pi->exit_code, 8);
    }
    if (PMIX_SUCCESS == rc) {
        rc = put_uint(buf, pi->state, 1);
    }
    return rc;
}

static pmix_status_t unpack_pinfo(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                  int depth)
{
    pmix_proc_info_t *pi = elem;
    uint64_t pid = 0, code = 0, state = 0;
    pmix_status_t rc;

    rc = unpack_proc(ops, r, &pi->proc, depth);
    if (PMIX_SUCCESS == rc) {
        rc = unpack_string(ops, r, &pi->hostname, depth);
    }
    if (PMIX_SUCCESS == rc) {
        rc = unpack_string(ops, r, &pi->executable_name, depth);
    }
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(r, 8, &pid);
    }
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(r, 8, &code);
    }
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(r, 1, &state);
    }
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (!fits_native(pid, 8, sizeof(pid_t), true) || !fits_native(code, 8, sizeof(int), true)) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    pi->pid = (pid_t)(int64_t)pid;
    pi->exit_code = (int)(int64_t)code;
    pi->state = (pmix_proc_state_t)state;
    return PMIX_SUCCESS;
}

static pmix_status_t copy_pinfo(const pg_type_ops_t *ops, void *dst, const void *src)
{
    const pmix_proc_info_t *s = src;
    pmix_proc_info_t *d = dst;
    pmix_status_t rc;

    *d = *s;
    d->hostname = NULL;
    d->executable_name = NULL;
    rc = copy_string(ops, &d->hostname, &s->hostname);
    if (PMIX_SUCCESS == rc) {
        rc = copy_string(ops, &d->executable_name, &s->executable_name);
    }
    return rc;
}

static void destruct_pinfo(void *elem)
{
    pmix_proc_info_t *pi = elem;

    free(pi->hostname);
    free(pi->executable_name);
    memset(pi, 0, sizeof(*pi));
}

/* ---- the table -------------------------------------------------------- */

/* The table is indexed by type code (designated initializers): a lookup is
 * one load, not a search -- every value packed, unpacked, copied or freed
 * looks its type up, often several times (a get's value: DATA_ARRAY,
 * VALUE, STRING). */
#define PG_INT(code, ctype, width, sgn) \
    [code] = { code, #code, sizeof(ctype), width, width, sgn, pack_int, unpack_int, NULL, NULL }
#define PG_COMPOUND(code, ctype, minw, stem) \
    [code] = { code, #code, sizeof(ctype), minw, 0, false, pack_##stem, unpack_##stem, copy_##stem, destruct_##stem }

static const pg_type_ops_t pg_types[] = {
    [PMIX_BOOL] = { PMIX_BOOL, "PMIX_BOOL", sizeof(bool), 1, 1, false, pack_bool, unpack_bool, NULL, NULL },
    PG_INT(PMIX_BYTE, uint8_t, 1, false),
    PG_COMPOUND(PMIX_STRING, char *, 4, string),
    /* platform-width integers travel as 64 bits; the receiver range-checks */
    PG_INT(PMIX_SIZE, size_t, 8, false),
    PG_INT(PMIX_PID, pid_t, 8, true),
    PG_INT(PMIX_INT, int, 8, true),
    PG_INT(PMIX_INT8, int8_t, 1, true),
    PG_INT(PMIX_INT16, int16_t, 2, true),
    PG_INT(PMIX_INT32, int32_t, 4, true),
    PG_INT(PMIX_INT64, int64_t, 8, true),
    PG_INT(PMIX_UINT, unsigned int, 8, false),
    PG_INT(PMIX_UINT8, uint8_t, 1, false),
    PG_INT(PMIX_UINT16, uint16_t, 2, false),
    PG_INT(PMIX_UINT32, uint32_t, 4, false),
    PG_INT(PMIX_UINT64, uint64_t, 8, false),
    [PMIX_FLOAT] = { PMIX_FLOAT, "PMIX_FLOAT", sizeof(float), 4, 4, false, pack_float, unpack_float, NULL, NULL },
    [PMIX_DOUBLE] = { PMIX_DOUBLE, "PMIX_DOUBLE", sizeof(double), 8, 8, false, pack_float, unpack_float, NULL, NULL },
    [PMIX_TIMEVAL] = { PMIX_TIMEVAL, "PMIX_TIMEVAL", sizeof(struct timeval), 16, 0, false, pack_timeval,
      unpack_timeval, NULL, NULL },
    PG_INT(PMIX_TIME, time_t, 8, true),
    PG_INT(PMIX_STATUS, pmix_status_t, 4, true),
    PG_COMPOUND(PMIX_VALUE, pmix_value_t, 2, value),
    [PMIX_PROC] = { PMIX_PROC, "PMIX_PROC", sizeof(pmix_proc_t), 8, 0, false, pack_proc, unpack_proc, NULL, NULL },
    PG_COMPOUND(PMIX_INFO, pmix_info_t, 10, info),
    PG_COMPOUND(PMIX_PDATA, pmix_pdata_t, 14, pdata),
    PG_COMPOUND(PMIX_BYTE_OBJECT, pmix_byte_object_t, 8, bo),
    PG_INT(PMIX_PERSIST, pmix_persistence_t, 1, false),
    PG_INT(PMIX_SCOPE, pmix_scope_t, 1, false),
    PG_INT(PMIX_DATA_RANGE, pmix_data_range_t, 1, false),
    PG_INT(PMIX_COMMAND, pmix_cmd_t, 1, false),
    PG_INT(PMIX_INFO_DIRECTIVES, pmix_info_directives_t, 4, false),
    PG_INT(PMIX_DATA_TYPE, pmix_data_type_t, 2, false),
    PG_INT(PMIX_PROC_STATE, pmix_proc_state_t, 1, false),
    PG_COMPOUND(PMIX_PROC_INFO, pmix_proc_info_t, 33, pinfo),
    PG_COMPOUND(PMIX_DATA_ARRAY, pmix_data_array_t, 10, darray),
    PG_INT(PMIX_PROC_RANK, pmix_rank_t, 4, false),
    PG_INT(PMIX_ALLOC_DIRECTIVE, pmix_alloc_directive_t, 1, false),
    PG_INT(PMIX_IOF_CHANNEL, pmix_iof_channel_t, 2, false),
    PG_COMPOUND(PMIX_ENVAR, pmix_envar_t, 9, envar),
    PG_INT(PMIX_JOB_STATE, pmix_job_state_t, 1, false),
    PG_INT(PMIX_LINK_STATE, pmix_link_state_t, 1, false),
    PG_INT(PMIX_DEVTYPE, pmix_device_type_t, 8, false),
    PG_INT(PMIX_LOCTYPE, pmix_locality_t, 2, false),
};

static const pg_type_ops_t *ops_for(pmix_data_type_t type)
{
    /* a gap in the table has no name (PMIX_UNDEF, types not carried) */
    if (type >= sizeof(pg_types) / sizeof(pg_types[0]) || NULL == pg_types[type].name) {
        return NULL;
    }
    return &pg_types[type];
}

bool pg_type_is_supported(pmix_data_type_t type)
{
    return NULL != ops_for(type);
}

size_t pg_type_elem_size(pmix_data_type_t type)
{
    const pg_type_ops_t *ops = ops_for(type);

    return (NULL == ops) ? 0 : ops->elem_size;
}

size_t pg_type_min_wire_size(pmix_data_type_t type)
{
    const pg_type_ops_t *ops = ops_for(type);

    return (NULL == ops) ? 0 : ops->min_wire;
}

/* ---- element-level drivers -------------------------------------------- */

static pmix_status_t pack_elems(const pg_type_ops_t *ops, pmix_data_buffer_t *buf,
                                const void *src, size_t n, int depth)
{
    size_t i;
    pmix_status_t rc;

    if (depth > PG_PACK_MAX_DEPTH) {
        return PMIX_ERR_PACK_FAILURE;
    }
    for (i = 0; i < n; i++) {
        rc = ops->pack(ops, buf, (const char *)src + i * ops->elem_size, depth);
        if (PMIX_SUCCESS != rc) {
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

/* Decodes one element into `elem`; on error the element is left zeroed
 * and owns nothing. */
static pmix_status_t unpack_elem(const pg_type_ops_t *ops, pg_reader_t *r, void *elem,
                                 int depth)
{
    pmix_status_t rc;

    memset(elem, 0, ops->elem_size);
    if (depth > PG_PACK_MAX_DEPTH) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    rc = ops->unpack(ops, r, elem, depth);
    if (PMIX_SUCCESS != rc) {
        destruct_elem(ops, elem);
    }
    return rc;
}

static pmix_status_t copy_elem(const pg_type_ops_t *ops, void *dst, const void *src)
{
    pmix_status_t rc;

    if (NULL == ops->copy) {
        memcpy(dst, src, ops->elem_size);
        return PMIX_SUCCESS;
    }
    memset(dst, 0, ops->elem_size);
    rc = ops->copy(ops, dst, src);
    if (PMIX_SUCCESS != rc) {
        destruct_elem(ops, dst);
    }
    return rc;
}

static void destruct_elem(const pg_type_ops_t *ops, void *elem)
{
    if (NULL != ops->destruct) {
        ops->destruct(elem);
    }
    memset(elem, 0, ops->elem_size);
}

void pg_data_destruct(void *elem, pmix_data_type_t type)
{
    const pg_type_ops_t *ops = ops_for(type);

    if (NULL != elem && NULL != ops) {
        destruct_elem(ops, elem);
    }
}

pmix_status_t pg_data_copy_into(void *dst, const void *src, pmix_data_type_t type)
{
    const pg_type_ops_t *ops = ops_for(type);

    if (NULL == dst || NULL == src) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (NULL == ops) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    return copy_elem(ops, dst, src);
}

pmix_status_t pg_copy(void **dest, const void *src, pmix_data_type_t type)
{
    const pg_type_ops_t *ops = ops_for(type);
    void *copy;
    pmix_status_t rc;

    if (NULL == dest || NULL == src) {
        return PMIX_ERR_BAD_PARAM;
    }
    *dest = NULL;
    if (NULL == ops) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    if (PMIX_STRING == type) {
        /* the Standard passes the string itself, not its address */
        *dest = strdup((const char *)src);
        return (NULL == *dest) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
    }
    copy = calloc(1, ops->elem_size);
    if (NULL == copy) {
        return PMIX_ERR_NOMEM;
    }
    rc = copy_elem(ops, copy, src);
    if (PMIX_SUCCESS != rc) {
        free(copy);
        return rc;
    }
    *dest = copy;
    return PMIX_SUCCESS;
}

/* ---- top level -------------------------------------------------------- */

pmix_status_t pg_pack(pmix_data_buffer_t *buf, const void *src, int32_t n,
                      pmix_data_type_t type)
{
    const pg_type_ops_t *ops;
    size_t mark;
    pmix_status_t rc;

    if (NULL == buf || n < 0 || (NULL == src && n > 0) || !buffer_is_sane(buf)) {
        return PMIX_ERR_BAD_PARAM;
    }
    ops = ops_for(type);
    if (NULL == ops) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    mark = buf->bytes_used;
    rc = put_uint(buf, type, 2);
    if (PMIX_SUCCESS == rc) {
        rc = put_uint(buf, (uint32_t)n, 4);
    }
    if (PMIX_SUCCESS == rc) {
        rc = pack_elems(ops, buf, src, (size_t)n, 0);
    }
    if (PMIX_SUCCESS != rc) {
        buffer_truncate(buf, mark);
    }
    return rc;
}

/* Decodes and drops `count` elements (the part of a group the caller had
 * no room for), so the next unpack starts at the next group. */
static pmix_status_t skip_elems(const pg_type_ops_t *ops, pg_reader_t *r, uint64_t count)
{
    void *scratch = calloc(1, ops->elem_size);
    pmix_status_t rc = PMIX_SUCCESS;
    uint64_t i;

    if (NULL == scratch) {
        return PMIX_ERR_NOMEM;
    }
    for (i = 0; i < count && PMIX_SUCCESS == rc; i++) {
        rc = unpack_elem(ops, r, scratch, 0);
        destruct_elem(ops, scratch);
    }
    free(scratch);
    return rc;
}

pmix_status_t pg_unpack(pmix_data_buffer_t *buf, void *dst, int32_t *n, pmix_data_type_t type)
{
    const pg_type_ops_t *ops;
    pg_reader_t r;
    uint64_t stored_type, count, i, want;
    pmix_status_t rc;

    if (NULL == buf || NULL == dst || NULL == n || !buffer_is_sane(buf)) {
        return PMIX_ERR_BAD_PARAM;
    }
    ops = ops_for(type);
    if (NULL == ops) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    if (*n <= 0) {
        *n = 0;
        return PMIX_ERR_UNPACK_INADEQUATE_SPACE;
    }
    want = (uint64_t)*n;
    *n = 0;
    r.pos = (const uint8_t *)buf->unpack_ptr;
    r.left = pg_buffer_unread(buf);
    rc = get_uint(&r, 2, &stored_type);
    if (PMIX_SUCCESS == rc) {
        rc = get_uint(&r, 4, &count);
    }
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    if (stored_type != type) {
        return PMIX_ERR_TYPE_MISMATCH;
    }
    if (count > r.left / ops->min_wire) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    for (i = 0; i < count && i < want; i++) {
        rc = unpack_elem(ops, &r, (char *)dst + i * ops->elem_size, 0);
        if (PMIX_SUCCESS != rc) {
            goto undo;
        }
    }
    if (count > want) {
        rc = skip_elems(ops, &r, count - want);
        if (PMIX_SUCCESS != rc) {
            goto undo;
        }
        rc = PMIX_ERR_UNPACK_INADEQUATE_SPACE;
    }
    buf->unpack_ptr = (char *)r.pos;
    *n = (int32_t)i;
    return rc;

undo:
    /* all or nothing: release what this call allocated */
    while (i-- > 0) {
        destruct_elem(ops, (char *)dst + i * ops->elem_size);
    }
    return rc;
}

/* pg_unpack_value_whole's fast path: true with *v filled when bytes hold
 * exactly one well-formed PMIX_VALUE of type PMIX_STRING; false for
 * anything else, which the generic unpack then decodes or judges (so errors
 * have one source).  Every PMIx_Get of a string -- a business card --
 * passes here: N^2 times in a wire-up. */
static bool unpack_string_value(const void *bytes, size_t len, pmix_value_t *v)
{
    pg_reader_t r = { .pos = bytes, .left = len };
    uint64_t group_type, count, value_type;
    char *s;

    if (PMIX_SUCCESS != get_uint(&r, 2, &group_type) || PMIX_SUCCESS != get_uint(&r, 4, &count) ||
        PMIX_SUCCESS != get_uint(&r, 2, &value_type) || PMIX_VALUE != group_type || 1 != count ||
        PMIX_STRING != value_type || PMIX_SUCCESS != get_string(&r, (size_t)UINT32_MAX - 1, &s)) {
        return false;
    }
    if (0 != r.left) {
        free(s);
        return false;
    }
    v->type = PMIX_STRING;
    v->data.string = s;
    return true;
}

pmix_status_t pg_unpack_one(pmix_data_buffer_t *buf, void *dst, pmix_data_type_t type)
{
    int32_t n = 1;
    pmix_status_t rc = pg_unpack(buf, dst, &n, type);

    if (PMIX_ERR_UNPACK_INADEQUATE_SPACE == rc && 1 == n) {
        /* a group of several where one belongs: pg_unpack kept the first,
         * which callers only release on success */
        pg_data_destruct(dst, type);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (PMIX_SUCCESS == rc && 1 != n) { /* an empty group where one element belongs */
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    return rc;
}

pmix_status_t pg_unpack_value_whole(const void *bytes, size_t len, pmix_value_t *v)
{
    pmix_data_buffer_t view;
    pmix_status_t rc;

    if (NULL == bytes || NULL == v) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (unpack_string_value(bytes, len, v)) {
        return PMIX_SUCCESS;
    }
    pg_buffer_view(&view, bytes, len);
    rc = pg_unpack_one(&view, v, PMIX_VALUE);
    if (PMIX_SUCCESS == rc && 0 != pg_buffer_unread(&view)) {
        pg_data_destruct(v, PMIX_VALUE);
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    return rc;
}
