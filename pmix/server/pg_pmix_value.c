/*
 * pg_pmix_value: pmix_value_t <-> pg_value_t (see pg_pmix_value.h).
 */
#include "pmix/server/pg_pmix_value.h"

#include <stdlib.h>
#include <string.h>

#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"

/* Types whose value lives entirely in the union (no pointers inside), so
 * the engine can keep their native bytes. */
static bool type_is_flat(pmix_data_type_t t)
{
    switch (t) {
    case PMIX_BOOL: case PMIX_BYTE: case PMIX_SIZE: case PMIX_PID: case PMIX_INT:
    case PMIX_INT8: case PMIX_INT16: case PMIX_INT32: case PMIX_INT64: case PMIX_UINT:
    case PMIX_UINT8: case PMIX_UINT16: case PMIX_UINT32: case PMIX_UINT64: case PMIX_FLOAT:
    case PMIX_DOUBLE: case PMIX_TIMEVAL: case PMIX_TIME: case PMIX_STATUS:
    case PMIX_PROC_RANK: case PMIX_SCOPE: case PMIX_DATA_RANGE: case PMIX_PERSIST:
    case PMIX_DATA_TYPE: case PMIX_PROC_STATE: case PMIX_INFO_DIRECTIVES:
        return true;
    default:
        return false;
    }
}

pmix_status_t pg_pmix_value_to_engine(const pmix_value_t *v, pmix_data_buffer_t *scratch,
                                      pg_value_t *out)
{
    pmix_status_t rc;

    if (v->type == PMIX_STRING) {
        const char *s = v->data.string != NULL ? v->data.string : "";
        *out = pg_value_bytes(PMIX_STRING, s, strlen(s));
        return PMIX_SUCCESS;
    }
    if (v->type == PMIX_BYTE_OBJECT) {
        *out = pg_value_bytes(PMIX_BYTE_OBJECT, v->data.bo.bytes, v->data.bo.size);
        return PMIX_SUCCESS;
    }
    if (type_is_flat(v->type)) {
        *out = pg_value_bytes(v->type, &v->data, pg_type_elem_size(v->type));
        return PMIX_SUCCESS;
    }
    if (v->type == PMIX_PROC) {
        if (v->data.proc == NULL)
            return PMIX_ERR_BAD_PARAM;
        *out = pg_value_bytes(PMIX_PROC, v->data.proc, sizeof(pmix_proc_t));
        return PMIX_SUCCESS;
    }
    if (v->type == PMIX_UNDEF || v->type == PMIX_POINTER || !pg_type_is_supported(v->type))
        return PMIX_ERR_BAD_PARAM;
    rc = pg_pmix_pack_one(scratch, v, PMIX_VALUE);
    if (rc != PMIX_SUCCESS)
        return PMIX_ERR_BAD_PARAM;
    *out = pg_value_bytes(v->type, scratch->base_ptr, scratch->bytes_used);
    return PMIX_SUCCESS;
}

/* A pmix_proc_t holds no pointer, so the engine keeps its native bytes
 * (that is how the engine itself answers PMIX_PARENT_ID: it has no
 * packer); the nspace is cut at its last byte whatever the bytes say. */
static pmix_status_t proc_from_native(const pg_value_t *in, pmix_value_t *out)
{
    pmix_proc_t proc;

    if (in->size != sizeof(pmix_proc_t) || in->data == NULL)
        return PMIX_ERR_UNPACK_FAILURE;
    memcpy(&proc, in->data, sizeof(proc));
    proc.nspace[PMIX_MAX_NSLEN] = '\0';
    return pg_value_load(out, &proc, PMIX_PROC);
}

static pmix_status_t from_packed(const pg_value_t *in, pmix_value_t *out)
{
    if (in->data == NULL || pg_unpack_value_whole(in->data, in->size, out) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE;
    if (out->type != in->type) {
        pg_value_destruct(out);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    return PMIX_SUCCESS;
}

pmix_status_t pg_pmix_value_from_engine(const pg_value_t *in, pmix_value_t *out)
{
    memset(out, 0, sizeof(*out));
    if (in->type == PMIX_STRING) {
        char *s = malloc(in->size + 1);

        if (s == NULL)
            return PMIX_ERR_NOMEM;
        if (in->size > 0)
            memcpy(s, in->data, in->size);
        s[in->size] = '\0';
        out->type = PMIX_STRING;
        out->data.string = s;
        return PMIX_SUCCESS;
    }
    if (in->type == PMIX_BYTE_OBJECT) {
        pmix_byte_object_t bo = { (char *)in->data, in->size };

        return pg_value_load(out, &bo, PMIX_BYTE_OBJECT);
    }
    if (type_is_flat(in->type)) {
        if (in->size != pg_type_elem_size(in->type))
            return PMIX_ERR_UNPACK_FAILURE;
        return pg_value_load(out, in->data, in->type);
    }
    if (in->type == PMIX_PROC)
        return proc_from_native(in, out);
    return from_packed(in, out);
}
