/*
 * pg_pack_print.c: human-readable renderings (PMIx_Data_print) and the
 * names of types and status codes.
 *
 * Why it exists: debugging a PMIx exchange needs to see what was packed,
 * and logs and tests need "PMIX_ERR_NOT_FOUND" rather than -46.  Output is
 * for people, not a stable format; nothing parses it.
 */
#include "wire/pack/pg_pack.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Byte objects longer than this print only their first bytes. */
#define PG_PRINT_MAX_BYTES 32

static void print_body(FILE *out, const void *src, pmix_data_type_t type, int depth);

static void print_string(FILE *out, const char *s)
{
    if (NULL == s) {
        fputs("NULL", out);
    } else {
        fprintf(out, "\"%s\"", s);
    }
}

static void print_bytes(FILE *out, const pmix_byte_object_t *bo)
{
    size_t i, shown = bo->size < PG_PRINT_MAX_BYTES ? bo->size : PG_PRINT_MAX_BYTES;

    fprintf(out, "size=%zu bytes=", bo->size);
    for (i = 0; i < shown && NULL != bo->bytes; i++) {
        fprintf(out, "%02x", (unsigned char)bo->bytes[i]);
    }
    if (shown < bo->size) {
        fputs("...", out);
    }
}

static void print_value(FILE *out, const pmix_value_t *v, int depth)
{
    fputs(pg_type_name(v->type), out);
    if (PMIX_UNDEF == v->type) {
        return;
    }
    fputs(": ", out);
    if (PMIX_PROC == v->type || PMIX_DATA_ARRAY == v->type || PMIX_PROC_INFO == v->type) {
        if (NULL == v->data.ptr) {
            fputs("NULL", out);
        } else {
            print_body(out, v->data.ptr, v->type, depth + 1);
        }
    } else {
        print_body(out, &v->data, v->type, depth + 1);
    }
}

static void print_array(FILE *out, const pmix_data_array_t *da, int depth)
{
    size_t i, size = pg_type_elem_size(da->type);

    fprintf(out, "%s[%zu] {", pg_type_name(da->type), da->size);
    for (i = 0; i < da->size && NULL != da->array && 0 != size; i++) {
        fputs(0 == i ? " " : ", ", out);
        print_body(out, (const char *)da->array + i * size, da->type, depth + 1);
    }
    fputs(" }", out);
}

/* Renders one element of `type` without its type name. */
static void print_body(FILE *out, const void *src, pmix_data_type_t type, int depth)
{
    pmix_value_t tmp;
    char *text = NULL;

    if (depth > PG_PACK_MAX_DEPTH) {
        fputs("...", out);
        return;
    }
    switch (type) {
    case PMIX_STRING:
        print_string(out, *(char *const *)src);
        return;
    case PMIX_BYTE_OBJECT:
        print_bytes(out, src);
        return;
    case PMIX_TIMEVAL: {
        const struct timeval *tv = src;
        fprintf(out, "%lld.%06ld", (long long)tv->tv_sec, (long)tv->tv_usec);
        return;
    }
    case PMIX_PROC: {
        const pmix_proc_t *p = src;
        fprintf(out, "%.*s:%" PRIu32, PMIX_MAX_NSLEN, p->nspace, p->rank);
        return;
    }
    case PMIX_VALUE:
        print_value(out, src, depth);
        return;
    case PMIX_INFO: {
        const pmix_info_t *info = src;
        fprintf(out, "key=%.*s flags=0x%" PRIx32 " value=", PMIX_MAX_KEYLEN, info->key,
                info->flags);
        print_value(out, &info->value, depth);
        return;
    }
    case PMIX_PDATA: {
        const pmix_pdata_t *pd = src;
        fprintf(out, "proc=%.*s:%" PRIu32 " key=%.*s value=", PMIX_MAX_NSLEN, pd->proc.nspace,
                pd->proc.rank, PMIX_MAX_KEYLEN, pd->key);
        print_value(out, &pd->value, depth);
        return;
    }
    case PMIX_DATA_ARRAY:
        print_array(out, src, depth);
        return;
    case PMIX_ENVAR: {
        const pmix_envar_t *e = src;
        print_string(out, e->envar);
        fputc('=', out);
        print_string(out, e->value);
        fprintf(out, " sep='%c'", e->separator ? e->separator : ' ');
        return;
    }
    case PMIX_PROC_INFO: {
        const pmix_proc_info_t *pi = src;
        fprintf(out, "proc=%.*s:%" PRIu32 " host=", PMIX_MAX_NSLEN, pi->proc.nspace,
                pi->proc.rank);
        print_string(out, pi->hostname);
        fputs(" exe=", out);
        print_string(out, pi->executable_name);
        fprintf(out, " pid=%lld exit=%d state=%u", (long long)pi->pid, pi->exit_code,
                (unsigned)pi->state);
        return;
    }
    default:
        break;
    }
    /* scalars: reuse the value-to-text conversion */
    memset(&tmp, 0, sizeof(tmp));
    tmp.type = type;
    memcpy(&tmp.data, src, pg_type_elem_size(type));
    if (PMIX_BOOL == type) {
        fputs(tmp.data.flag ? "true" : "false", out);
    } else if (PMIX_SUCCESS == pg_value_to_string(&tmp, &text)) {
        fputs(text, out);
        free(text);
    } else {
        fputs("?", out);
    }
}

/* A string is passed as the string itself (char *), as PMIx_Data_copy
 * takes it and as OpenPMIx prints it; the Standard asks for "a pointer to
 * the data value" without saying more.  Only PMIx_Data_pack wants its
 * address (it packs arrays of strings).  NULL prints as NULL. */
pmix_status_t pg_print(char **out, const char *prefix, const void *src, pmix_data_type_t type)
{
    char *text = NULL;
    size_t len = 0;
    FILE *stream;
    const char *string = src;

    if (NULL == out) {
        return PMIX_ERR_BAD_PARAM;
    }
    *out = NULL;
    if (PMIX_STRING == type) {
        src = &string; /* print_body takes every element by its address */
    }
    if (NULL == src || !pg_type_is_supported(type)) {
        return PMIX_ERR_BAD_PARAM;
    }
    stream = open_memstream(&text, &len);
    if (NULL == stream) {
        return PMIX_ERR_NOMEM;
    }
    fprintf(stream, "%s%s: ", NULL == prefix ? "" : prefix, pg_type_name(type));
    print_body(stream, src, type, 0);
    if (0 != fclose(stream)) {
        free(text);
        return PMIX_ERR_NOMEM;
    }
    *out = text;
    return PMIX_SUCCESS;
}

/* ---- names ------------------------------------------------------------ */

#define PG_NAME(code) { code, #code }

/* One row of a code-to-name table; types and statuses share the row type
 * so that one lookup serves both tables. */
typedef struct {
    int code;
    const char *name;
} pg_code_name_t;

#define PG_TABLE_LEN(t) (sizeof(t) / sizeof((t)[0]))

static const char *code_name(const pg_code_name_t *table, size_t n, int code,
                             const char *unknown)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (table[i].code == code) {
            return table[i].name;
        }
    }
    return unknown;
}

static const pg_code_name_t pg_type_names[] = {
    PG_NAME(PMIX_UNDEF), PG_NAME(PMIX_BOOL), PG_NAME(PMIX_BYTE), PG_NAME(PMIX_STRING),
    PG_NAME(PMIX_SIZE), PG_NAME(PMIX_PID), PG_NAME(PMIX_INT), PG_NAME(PMIX_INT8),
    PG_NAME(PMIX_INT16), PG_NAME(PMIX_INT32), PG_NAME(PMIX_INT64), PG_NAME(PMIX_UINT),
    PG_NAME(PMIX_UINT8), PG_NAME(PMIX_UINT16), PG_NAME(PMIX_UINT32), PG_NAME(PMIX_UINT64),
    PG_NAME(PMIX_FLOAT), PG_NAME(PMIX_DOUBLE), PG_NAME(PMIX_TIMEVAL), PG_NAME(PMIX_TIME),
    PG_NAME(PMIX_STATUS), PG_NAME(PMIX_VALUE), PG_NAME(PMIX_PROC), PG_NAME(PMIX_APP),
    PG_NAME(PMIX_INFO), PG_NAME(PMIX_PDATA), PG_NAME(PMIX_BYTE_OBJECT), PG_NAME(PMIX_KVAL),
    PG_NAME(PMIX_PERSIST), PG_NAME(PMIX_POINTER), PG_NAME(PMIX_SCOPE),
    PG_NAME(PMIX_DATA_RANGE), PG_NAME(PMIX_COMMAND), PG_NAME(PMIX_INFO_DIRECTIVES),
    PG_NAME(PMIX_DATA_TYPE), PG_NAME(PMIX_PROC_STATE), PG_NAME(PMIX_PROC_INFO),
    PG_NAME(PMIX_DATA_ARRAY), PG_NAME(PMIX_PROC_RANK), PG_NAME(PMIX_QUERY),
    PG_NAME(PMIX_COMPRESSED_STRING), PG_NAME(PMIX_ALLOC_DIRECTIVE), PG_NAME(PMIX_IOF_CHANNEL),
    PG_NAME(PMIX_ENVAR), PG_NAME(PMIX_COORD), PG_NAME(PMIX_REGATTR), PG_NAME(PMIX_REGEX),
    PG_NAME(PMIX_JOB_STATE), PG_NAME(PMIX_LINK_STATE), PG_NAME(PMIX_PROC_CPUSET),
    PG_NAME(PMIX_GEOMETRY), PG_NAME(PMIX_DEVICE_DIST), PG_NAME(PMIX_ENDPOINT),
    PG_NAME(PMIX_TOPO), PG_NAME(PMIX_DEVTYPE), PG_NAME(PMIX_LOCTYPE),
    PG_NAME(PMIX_COMPRESSED_BYTE_OBJECT), PG_NAME(PMIX_PROC_NSPACE), PG_NAME(PMIX_PROC_STATS),
    PG_NAME(PMIX_DISK_STATS), PG_NAME(PMIX_NET_STATS), PG_NAME(PMIX_NODE_STATS),
    PG_NAME(PMIX_DATA_BUFFER),
};

const char *pg_type_name(pmix_data_type_t type)
{
    return code_name(pg_type_names, PG_TABLE_LEN(pg_type_names), type, "PMIX_UNKNOWN_TYPE");
}

static const pg_code_name_t pg_status_names[] = {
    PG_NAME(PMIX_SUCCESS), PG_NAME(PMIX_ERROR), PG_NAME(PMIX_ERR_SILENT),
    PG_NAME(PMIX_ERR_PROC_ABORTED), PG_NAME(PMIX_ERR_PROC_REQUESTED_ABORT),
    PG_NAME(PMIX_ERR_EXISTS), PG_NAME(PMIX_ERR_INVALID_CRED), PG_NAME(PMIX_ERR_WOULD_BLOCK),
    PG_NAME(PMIX_ERR_UNKNOWN_DATA_TYPE), PG_NAME(PMIX_ERR_PROC_ENTRY_NOT_FOUND),
    PG_NAME(PMIX_ERR_TYPE_MISMATCH), PG_NAME(PMIX_ERR_UNPACK_INADEQUATE_SPACE),
    PG_NAME(PMIX_ERR_UNPACK_FAILURE), PG_NAME(PMIX_ERR_PACK_FAILURE),
    PG_NAME(PMIX_ERR_PACK_MISMATCH), PG_NAME(PMIX_ERR_NO_PERMISSIONS),
    PG_NAME(PMIX_ERR_TIMEOUT), PG_NAME(PMIX_ERR_UNREACH), PG_NAME(PMIX_ERR_BAD_PARAM),
    PG_NAME(PMIX_ERR_RESOURCE_BUSY), PG_NAME(PMIX_ERR_OUT_OF_RESOURCE),
    PG_NAME(PMIX_ERR_DATA_VALUE_NOT_FOUND), PG_NAME(PMIX_ERR_INIT), PG_NAME(PMIX_ERR_NOMEM),
    PG_NAME(PMIX_ERR_INVALID_ARG), PG_NAME(PMIX_ERR_INVALID_KEY),
    PG_NAME(PMIX_ERR_INVALID_KEY_LENGTH), PG_NAME(PMIX_ERR_INVALID_VAL),
    PG_NAME(PMIX_ERR_INVALID_VAL_LENGTH), PG_NAME(PMIX_ERR_INVALID_LENGTH),
    PG_NAME(PMIX_ERR_INVALID_NUM_ARGS), PG_NAME(PMIX_ERR_INVALID_ARGS),
    PG_NAME(PMIX_ERR_INVALID_NUM_PARSED), PG_NAME(PMIX_ERR_INVALID_KEYVALP),
    PG_NAME(PMIX_ERR_INVALID_SIZE), PG_NAME(PMIX_ERR_INVALID_NAMESPACE),
    PG_NAME(PMIX_ERR_SERVER_NOT_AVAIL), PG_NAME(PMIX_ERR_NOT_FOUND),
    PG_NAME(PMIX_ERR_NOT_SUPPORTED), PG_NAME(PMIX_ERR_NOT_IMPLEMENTED),
    PG_NAME(PMIX_ERR_COMM_FAILURE), PG_NAME(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER),
    PG_NAME(PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES), PG_NAME(PMIX_ERR_PARTIAL_SUCCESS),
    PG_NAME(PMIX_ERR_DUPLICATE_KEY), PG_NAME(PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED),
    PG_NAME(PMIX_ERR_EMPTY), PG_NAME(PMIX_ERR_LOST_CONNECTION),
    PG_NAME(PMIX_ERR_EXISTS_OUTSIDE_SCOPE), PG_NAME(PMIX_ERR_FATAL),
    PG_NAME(PMIX_ERR_NOT_AVAILABLE), PG_NAME(PMIX_ERR_VALUE_OUT_OF_BOUNDS),
    PG_NAME(PMIX_ERR_LOST_CONNECTION_TO_SERVER), PG_NAME(PMIX_ERR_LOST_PEER_CONNECTION),
    PG_NAME(PMIX_ERR_LOST_CONNECTION_TO_CLIENT), PG_NAME(PMIX_PROC_TERMINATED),
    PG_NAME(PMIX_EVENT_JOB_END), PG_NAME(PMIX_OPERATION_IN_PROGRESS),
    PG_NAME(PMIX_OPERATION_SUCCEEDED), PG_NAME(PMIX_ERR_INVALID_OPERATION),
    PG_NAME(PMIX_EVENT_PROC_TERMINATED), PG_NAME(PMIX_ERR_PROC_TERM_WO_SYNC),
    /* the group events (engine/pg_group.c raises them, libpmix returns
     * PMIX_GROUP_INVITE_FAILED from an invite) */
    PG_NAME(PMIX_GROUP_INVITED), PG_NAME(PMIX_GROUP_LEFT), PG_NAME(PMIX_GROUP_INVITE_ACCEPTED),
    PG_NAME(PMIX_GROUP_INVITE_DECLINED), PG_NAME(PMIX_GROUP_INVITE_FAILED),
    PG_NAME(PMIX_GROUP_MEMBERSHIP_UPDATE), PG_NAME(PMIX_GROUP_CONSTRUCT_ABORT),
    PG_NAME(PMIX_GROUP_CONSTRUCT_COMPLETE), PG_NAME(PMIX_GROUP_LEADER_SELECTED),
    PG_NAME(PMIX_GROUP_LEADER_FAILED), PG_NAME(PMIX_GROUP_CONTEXT_ID_ASSIGNED),
    PG_NAME(PMIX_GROUP_MEMBER_FAILED),
};

const char *pg_status_name(pmix_status_t status)
{
    return code_name(pg_status_names, PG_TABLE_LEN(pg_status_names), status, "PMIX_ERR_UNKNOWN");
}
