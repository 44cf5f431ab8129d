/*
 * pg_pmix_msg: message header and array helpers of the PMIx transport
 * (see pg_pmix_msg.h).
 */
#include "wire/pg_pmix_msg.h"

#include <stdlib.h>
#include <string.h>

#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_frame.h"

static const char *const cmd_names[PG_PMIX_CMD_MAX] = {
    [PG_PMIX_CMD_INIT] = "init",         [PG_PMIX_CMD_COMMIT] = "commit",
    [PG_PMIX_CMD_FENCE] = "fence",       [PG_PMIX_CMD_GET] = "get",
    [PG_PMIX_CMD_PUBLISH] = "publish",   [PG_PMIX_CMD_LOOKUP] = "lookup",
    [PG_PMIX_CMD_UNPUBLISH] = "unpublish", [PG_PMIX_CMD_ABORT] = "abort",
    [PG_PMIX_CMD_FINALIZE] = "finalize", [PG_PMIX_CMD_NOTIFY] = "notify",
    [PG_PMIX_CMD_EVENT] = "event",       [PG_PMIX_CMD_QUERY] = "query",
    [PG_PMIX_CMD_LOG] = "log",
    [PG_PMIX_CMD_GROUP_CONSTRUCT] = "group-construct",
    [PG_PMIX_CMD_GROUP_DESTRUCT] = "group-destruct",
    [PG_PMIX_CMD_GROUP_INVITE] = "group-invite",
    [PG_PMIX_CMD_GROUP_JOIN] = "group-join",
    [PG_PMIX_CMD_GROUP_LEAVE] = "group-leave",
    [PG_PMIX_CMD_JOB_CONTROL] = "job-control",
    [PG_PMIX_CMD_MONITOR] = "monitor",
    [PG_PMIX_CMD_SPAWN] = "spawn", [PG_PMIX_CMD_CONNECT] = "connect",
    [PG_PMIX_CMD_DISCONNECT] = "disconnect",
};

bool pg_pmix_init_on_demand(const char *key)
{
    static const char *const lists[] = { PMIX_LOCAL_PEERS, PMIX_PROC_MAP, PMIX_NODE_LIST,
                                         PMIX_NODE_MAP };

    for (size_t i = 0; key != NULL && i < sizeof(lists) / sizeof(lists[0]); i++)
        if (strcmp(key, lists[i]) == 0)
            return true;
    return false;
}

const char *pg_pmix_cmd_name(int cmd)
{
    if (cmd <= 0 || cmd >= PG_PMIX_CMD_MAX || cmd_names[cmd] == NULL)
        return "?";
    return cmd_names[cmd];
}

pmix_status_t pg_pmix_pack_one(pmix_data_buffer_t *buf, const void *src, pmix_data_type_t type)
{
    return pg_pack(buf, src, 1, type);
}

pmix_status_t pg_pmix_unpack_one(pmix_data_buffer_t *buf, void *dst, pmix_data_type_t type)
{
    return pg_unpack_one(buf, dst, type);
}

pmix_status_t pg_pmix_msg_begin(pmix_data_buffer_t *buf, uint8_t cmd, uint32_t id)
{
    static const char no_length_yet[PG_PMIX_HEADER_LEN];
    pmix_status_t rc = pg_buffer_append(buf, no_length_yet, sizeof(no_length_yet));

    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(buf, &cmd, PMIX_UINT8);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(buf, &id, PMIX_UINT32);
    return rc;
}

pmix_status_t pg_pmix_msg_begin_reply(pmix_data_buffer_t *buf, uint8_t cmd, uint32_t id,
                                      pmix_status_t status)
{
    pmix_status_t rc = pg_pmix_msg_begin(buf, cmd, id);

    return rc == PMIX_SUCCESS ? pg_pmix_pack_one(buf, &status, PMIX_STATUS) : rc;
}

pmix_status_t pg_pmix_msg_seal(pmix_data_buffer_t *buf)
{
    size_t payload;

    if (buf->bytes_used < PG_PMIX_HEADER_LEN)
        return PMIX_ERR_BAD_PARAM;
    payload = buf->bytes_used - PG_PMIX_HEADER_LEN;
    if (payload == 0 || payload > PG_PMIX_FRAME_MAX)
        return PMIX_ERR_PACK_FAILURE;
    pg_pmix_put_u32((unsigned char *)buf->base_ptr, (uint32_t)payload);
    return PMIX_SUCCESS;
}

void pg_pmix_msg_view(pmix_data_buffer_t *view, const char *payload, size_t len)
{
    pg_buffer_view(view, payload, len);
}

pmix_status_t pg_pmix_msg_read_header(pmix_data_buffer_t *buf, uint8_t *cmd, uint32_t *id)
{
    pmix_status_t rc = pg_pmix_unpack_one(buf, cmd, PMIX_UINT8);

    return rc == PMIX_SUCCESS ? pg_pmix_unpack_one(buf, id, PMIX_UINT32) : rc;
}

pmix_status_t pg_pmix_pack_array(pmix_data_buffer_t *buf, const void *arr, size_t n,
                                 pmix_data_type_t type)
{
    uint32_t count = (uint32_t)n;
    pmix_status_t rc;

    if (n > INT32_MAX || (n > 0 && arr == NULL))
        return PMIX_ERR_BAD_PARAM;
    rc = pg_pmix_pack_one(buf, &count, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && n > 0)
        rc = pg_pack(buf, arr, (int32_t)n, type);
    return rc;
}

pmix_status_t pg_pmix_unpack_array(pmix_data_buffer_t *buf, void **arr, size_t *n,
                                   pmix_data_type_t type)
{
    size_t elem = pg_type_elem_size(type), min_wire = pg_type_min_wire_size(type);
    uint32_t count = 0;
    int32_t got;
    void *a;
    pmix_status_t rc;

    *arr = NULL;
    *n = 0;
    if (elem == 0 || min_wire == 0)
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    rc = pg_pmix_unpack_one(buf, &count, PMIX_UINT32);
    if (rc != PMIX_SUCCESS || count == 0)
        return rc;
    /* a count the bytes left cannot hold is a lie: refused before the
     * allocation, which is up to ~50 times the wire size (pmix_info_t) */
    if (count > INT32_MAX || count > pg_buffer_unread(buf) / min_wire)
        return PMIX_ERR_UNPACK_FAILURE;
    a = calloc(count, elem);
    if (a == NULL)
        return PMIX_ERR_NOMEM;
    got = (int32_t)count;
    rc = pg_unpack(buf, a, &got, type);
    if (rc == PMIX_SUCCESS && (uint32_t)got != count) {
        pg_pmix_array_free(a, (size_t)got, type);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc == PMIX_ERR_UNPACK_INADEQUATE_SPACE) { /* the group holds more than announced */
        pg_pmix_array_free(a, count, type);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc != PMIX_SUCCESS) {
        free(a); /* on other errors pg_unpack leaves nothing allocated */
        return rc;
    }
    *arr = a;
    *n = count;
    return PMIX_SUCCESS;
}

void pg_pmix_array_free(void *arr, size_t n, pmix_data_type_t type)
{
    size_t elem = pg_type_elem_size(type);

    if (arr == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        pg_data_destruct((char *)arr + i * elem, type);
    free(arr);
}

static bool uint_of_signed(int64_t x, uint64_t *out)
{
    if (x < 0)
        return false;
    *out = (uint64_t)x;
    return true;
}

bool pg_pmix_value_uint(const pmix_value_t *v, uint64_t *out)
{
    switch (v->type) {
    case PMIX_INT: return uint_of_signed(v->data.integer, out);
    case PMIX_INT8: return uint_of_signed(v->data.int8, out);
    case PMIX_INT16: return uint_of_signed(v->data.int16, out);
    case PMIX_INT32: return uint_of_signed(v->data.int32, out);
    case PMIX_INT64: return uint_of_signed(v->data.int64, out);
    case PMIX_UINT: *out = v->data.uint; return true;
    case PMIX_UINT8: *out = v->data.uint8; return true;
    case PMIX_UINT16: *out = v->data.uint16; return true;
    case PMIX_UINT32: *out = v->data.uint32; return true;
    case PMIX_UINT64: *out = v->data.uint64; return true;
    case PMIX_SIZE: *out = v->data.size; return true;
    case PMIX_PROC_RANK: *out = v->data.rank; return true;
    default: return false;
    }
}
