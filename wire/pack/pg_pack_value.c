/*
 * pg_pack_value.c: loading, comparing and rendering pmix_value_t.
 *
 * Why it exists: every PMIx datum travels as a packed pmix_value_t, PMIx
 * clients hand values in through PMIX_VALUE_LOAD/PMIX_INFO_LOAD, and
 * the PMI-1/PMI-2 side can only carry text, so a PMI get of, say, the
 * uint32 PMIX_JOB_SIZE needs a faithful string form.  Deep copies and
 * releases go through pg_pack.c's type table so every type is handled
 * the same way everywhere.
 */
#include "wire/pack/pg_pack.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

pmix_status_t pg_value_load(pmix_value_t *v, const void *data, pmix_data_type_t type)
{
    pmix_value_t shallow;

    if (NULL == v) {
        return PMIX_ERR_BAD_PARAM;
    }
    memset(v, 0, sizeof(*v));
    if (PMIX_UNDEF == type) {
        return PMIX_SUCCESS;
    }
    if (PMIX_BOOL == type && NULL == data) {
        /* a directive given without a value means "true" */
        v->type = PMIX_BOOL;
        v->data.flag = true;
        return PMIX_SUCCESS;
    }
    if (PMIX_POINTER == type) {
        v->type = PMIX_POINTER;
        v->data.ptr = (void *)data;
        return PMIX_SUCCESS;
    }
    if (!pg_type_is_supported(type) || PMIX_VALUE == type || PMIX_INFO == type ||
        PMIX_PDATA == type) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    /* build a value that borrows `data`, then deep-copy it */
    memset(&shallow, 0, sizeof(shallow));
    shallow.type = type;
    if (NULL == data) {
        /* zero value of the type (a NULL string, an empty object) */
    } else if (PMIX_STRING == type) {
        shallow.data.string = (char *)data;
    } else if (pg_value_holds_pointer(type)) {
        shallow.data.ptr = (void *)data;
    } else {
        memcpy(&shallow.data, data, pg_type_elem_size(type));
    }
    return pg_value_copy(v, &shallow);
}

pmix_status_t pg_value_copy(pmix_value_t *dst, const pmix_value_t *src)
{
    if (NULL == dst || NULL == src) {
        return PMIX_ERR_BAD_PARAM;
    }
    memset(dst, 0, sizeof(*dst));
    return pg_data_copy_into(dst, src, PMIX_VALUE);
}

void pg_value_destruct(pmix_value_t *v)
{
    if (NULL == v) {
        return;
    }
    /* a string straight away: PMIX_VALUE_RELEASE of every fetched business
     * card comes here, N^2 times in a wire-up */
    if (PMIX_STRING == v->type) {
        free(v->data.string);
        memset(v, 0, sizeof(*v)); /* as the generic destruct leaves it */
    } else {
        pg_data_destruct(v, PMIX_VALUE);
    }
    v->type = PMIX_UNDEF;
}

/* Reads any integer-like value as signed/unsigned 64-bit.  Returns false
 * for non-integer types. */
static bool value_as_integer(const pmix_value_t *v, int64_t *s, uint64_t *u, bool *is_signed)
{
    *is_signed = true;
    switch (v->type) {
    case PMIX_INT: *s = v->data.integer; return true;
    case PMIX_INT8: *s = v->data.int8; return true;
    case PMIX_INT16: *s = v->data.int16; return true;
    case PMIX_INT32: *s = v->data.int32; return true;
    case PMIX_INT64: *s = v->data.int64; return true;
    case PMIX_PID: *s = v->data.pid; return true;
    case PMIX_TIME: *s = (int64_t)v->data.time; return true;
    case PMIX_STATUS: *s = v->data.status; return true;
    default: break;
    }
    *is_signed = false;
    switch (v->type) {
    case PMIX_BOOL: *u = v->data.flag ? 1 : 0; return true;
    case PMIX_BYTE: *u = v->data.byte; return true;
    case PMIX_SIZE: *u = v->data.size; return true;
    case PMIX_UINT: *u = v->data.uint; return true;
    case PMIX_UINT8: *u = v->data.uint8; return true;
    case PMIX_UINT16: *u = v->data.uint16; return true;
    case PMIX_UINT32: *u = v->data.uint32; return true;
    case PMIX_UINT64: *u = v->data.uint64; return true;
    case PMIX_PROC_RANK: *u = v->data.rank; return true;
    case PMIX_PERSIST: *u = v->data.persist; return true;
    case PMIX_SCOPE: *u = v->data.scope; return true;
    case PMIX_DATA_RANGE: *u = v->data.range; return true;
    case PMIX_PROC_STATE: *u = v->data.state; return true;
    case PMIX_DATA_TYPE: *u = v->data.uint16; return true;
    case PMIX_INFO_DIRECTIVES: *u = v->data.uint32; return true;
    case PMIX_JOB_STATE: *u = v->data.jstate; return true;
    case PMIX_LINK_STATE: *u = v->data.linkstate; return true;
    case PMIX_ALLOC_DIRECTIVE: *u = v->data.adir; return true;
    case PMIX_COMMAND: *u = v->data.uint8; return true;
    case PMIX_IOF_CHANNEL: *u = v->data.uint16; return true;
    case PMIX_LOCTYPE: *u = v->data.locality; return true;
    case PMIX_DEVTYPE: *u = v->data.devtype; return true;
    default: return false;
    }
}

static pmix_value_cmp_t order_of(int c)
{
    return (0 == c) ? PMIX_EQUAL : (c > 0 ? PMIX_VALUE1_GREATER : PMIX_VALUE2_GREATER);
}

static int compare_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t common = alen < blen ? alen : blen;
    int c = (0 == common) ? 0 : memcmp(a, b, common);

    if (0 != c) {
        return c;
    }
    return (alen > blen) - (alen < blen);
}

pmix_value_cmp_t pg_value_compare(const pmix_value_t *a, const pmix_value_t *b)
{
    int64_t sa = 0, sb = 0;
    uint64_t ua = 0, ub = 0;
    bool signed_a, signed_b;

    if (NULL == a || NULL == b) {
        return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
    if (a->type != b->type) {
        return PMIX_VALUE_TYPE_DIFFERENT;
    }
    if (value_as_integer(a, &sa, &ua, &signed_a) && value_as_integer(b, &sb, &ub, &signed_b)) {
        return signed_a ? order_of((sa > sb) - (sa < sb)) : order_of((ua > ub) - (ua < ub));
    }
    switch (a->type) {
    case PMIX_UNDEF:
        return PMIX_EQUAL;
    case PMIX_STRING:
        if (NULL == a->data.string || NULL == b->data.string) {
            return order_of((NULL != a->data.string) - (NULL != b->data.string));
        }
        return order_of(strcmp(a->data.string, b->data.string));
    case PMIX_BYTE_OBJECT:
        return order_of(compare_bytes(a->data.bo.bytes, a->data.bo.size, b->data.bo.bytes,
                                      b->data.bo.size));
    case PMIX_FLOAT:
        return order_of((a->data.fval > b->data.fval) - (a->data.fval < b->data.fval));
    case PMIX_DOUBLE:
        return order_of((a->data.dval > b->data.dval) - (a->data.dval < b->data.dval));
    case PMIX_TIMEVAL:
        if (a->data.tv.tv_sec != b->data.tv.tv_sec) {
            return order_of(a->data.tv.tv_sec > b->data.tv.tv_sec ? 1 : -1);
        }
        return order_of((a->data.tv.tv_usec > b->data.tv.tv_usec) -
                        (a->data.tv.tv_usec < b->data.tv.tv_usec));
    case PMIX_PROC:
        if (NULL == a->data.proc || NULL == b->data.proc) {
            return PMIX_VALUE_INCOMPATIBLE_OBJECTS;
        }
        if (0 != strncmp(a->data.proc->nspace, b->data.proc->nspace, PMIX_MAX_NSLEN)) {
            return order_of(strncmp(a->data.proc->nspace, b->data.proc->nspace, PMIX_MAX_NSLEN));
        }
        return order_of((a->data.proc->rank > b->data.proc->rank) -
                        (a->data.proc->rank < b->data.proc->rank));
    default:
        return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
}

pmix_boolean_t pg_value_truth(const pmix_value_t *v)
{
    const char *s;
    char *end;
    long n;

    if (NULL == v || PMIX_UNDEF == v->type) {
        return PMIX_BOOL_TRUE; /* presence of the key means true */
    }
    if (PMIX_BOOL == v->type) {
        return v->data.flag ? PMIX_BOOL_TRUE : PMIX_BOOL_FALSE;
    }
    if (PMIX_STRING != v->type) {
        return PMIX_NON_BOOL;
    }
    s = v->data.string;
    if (NULL == s || '\0' == s[0]) {
        return PMIX_BOOL_TRUE;
    }
    n = strtol(s, &end, 10);
    if (end != s && '\0' == *end) {
        return (0 != n) ? PMIX_BOOL_TRUE : PMIX_BOOL_FALSE;
    }
    if (0 == strcasecmp(s, "true") || 0 == strcasecmp(s, "yes") || 0 == strcasecmp(s, "t") ||
        0 == strcasecmp(s, "y")) {
        return PMIX_BOOL_TRUE;
    }
    if (0 == strcasecmp(s, "false") || 0 == strcasecmp(s, "no") || 0 == strcasecmp(s, "f") ||
        0 == strcasecmp(s, "n")) {
        return PMIX_BOOL_FALSE;
    }
    return PMIX_NON_BOOL;
}

/* Bytes that a PMI text value can carry unchanged. */
static bool is_plain_text(const char *bytes, size_t size)
{
    size_t i;

    for (i = 0; i < size; i++) {
        unsigned char c = (unsigned char)bytes[i];
        if (c < 0x20 || 0x7f == c) {
            return false;
        }
    }
    return true;
}

static pmix_status_t dup_or_nomem(const char *s, char **out)
{
    *out = strdup(s);
    return (NULL == *out) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

pmix_status_t pg_value_to_string(const pmix_value_t *v, char **out)
{
    char text[PMIX_MAX_NSLEN + 32];
    int64_t s;
    uint64_t u;
    bool is_signed;

    if (NULL == v || NULL == out) {
        return PMIX_ERR_BAD_PARAM;
    }
    *out = NULL;
    if (PMIX_BOOL == v->type) {
        return dup_or_nomem(v->data.flag ? "1" : "0", out);
    }
    if (value_as_integer(v, &s, &u, &is_signed)) {
        if (is_signed) {
            snprintf(text, sizeof(text), "%" PRId64, s);
        } else {
            snprintf(text, sizeof(text), "%" PRIu64, u);
        }
        return dup_or_nomem(text, out);
    }
    switch (v->type) {
    case PMIX_STRING:
        return dup_or_nomem(NULL == v->data.string ? "" : v->data.string, out);
    case PMIX_FLOAT:
        snprintf(text, sizeof(text), "%.9g", (double)v->data.fval);
        return dup_or_nomem(text, out);
    case PMIX_DOUBLE:
        snprintf(text, sizeof(text), "%.17g", v->data.dval);
        return dup_or_nomem(text, out);
    case PMIX_PROC:
        if (NULL == v->data.proc) {
            return PMIX_ERR_TYPE_MISMATCH;
        }
        snprintf(text, sizeof(text), "%.*s:%" PRIu32, PMIX_MAX_NSLEN, v->data.proc->nspace,
                 v->data.proc->rank);
        return dup_or_nomem(text, out);
    case PMIX_BYTE_OBJECT:
        if (!is_plain_text(v->data.bo.bytes, v->data.bo.size)) {
            return PMIX_ERR_TYPE_MISMATCH;
        }
        *out = strndup(NULL == v->data.bo.bytes ? "" : v->data.bo.bytes, v->data.bo.size);
        return (NULL == *out) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
    default:
        return PMIX_ERR_TYPE_MISMATCH;
    }
}
