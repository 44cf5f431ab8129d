/*
 * pg_pmix_msg: what travels inside a PMIx transport frame
 * (wire/pg_pmix_frame.h): the command set and the message header, shared by
 * libpmix and the gateway's PMIx handler so the two ends cannot drift.
 *
 * Every payload is a pg_pack buffer (docs/pack-format.md) holding typed
 * groups:
 *   request:  UINT8 command, UINT32 request id, then the command's arguments
 *   reply:    UINT8 command, UINT32 request id, STATUS, then the results
 * The request id is chosen by the client and echoed by the server; replies
 * may come in any order (held gets, fences, lookups complete when they
 * complete).  The argument lists are in docs/pmix-transport.md.
 *
 * Arrays are sent as a UINT32 count followed, when the count is not zero,
 * by one group of that many elements (pg_pmix_pack_array), so a reader
 * knows how much to allocate before it unpacks.
 *
 * Ownership: buffers are the caller's; pg_pmix_unpack_array returns a
 * calloc'd array the caller releases with pg_pmix_array_free.
 */
#ifndef PG_PMIX_MSG_H
#define PG_PMIX_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

typedef enum pg_pmix_cmd {
    PG_PMIX_CMD_INIT = 1,   /* -> nspace, rank, job info[], own info[] */
    PG_PMIX_CMD_COMMIT,     /* puts[] (scope, key, value) -> status */
    PG_PMIX_CMD_FENCE,      /* procs[], info[] -> status */
    PG_PMIX_CMD_GET,        /* proc, key, info[], nonblocking -> status, value, poster */
    PG_PMIX_CMD_PUBLISH,    /* info[] -> status */
    PG_PMIX_CMD_LOOKUP,     /* keys[], info[] -> status, pdata[] */
    PG_PMIX_CMD_UNPUBLISH,  /* keys[] (0 = all mine), info[] -> status */
    PG_PMIX_CMD_ABORT,      /* status, message, procs[] -> status */
    PG_PMIX_CMD_FINALIZE,   /* info[] -> status */
    /* events, queries, logging (docs/pmix-transport.md) */
    PG_PMIX_CMD_NOTIFY = 16, /* status, source, range, targets[], info[] -> status */
    PG_PMIX_CMD_EVENT = 17,  /* gateway -> client, unasked, id 0: "reply" whose status is the
                                event code, then source, range, info[] */
    PG_PMIX_CMD_QUERY = 18,  /* nqueries, then per query keys[], qualifiers[]
                                -> status, results info[] */
    PG_PMIX_CMD_LOG = 19,    /* data info[], directives info[] -> status */
    /* groups and job control (explicit values: 32-47 are this family's) */
    PG_PMIX_CMD_GROUP_CONSTRUCT = 32, /* grp, procs[], info[] -> status, SIZE context id,
                                         UINT32 n, n x (PROC member, BYTE_OBJECT its shared
                                         info[] packed) */
    PG_PMIX_CMD_GROUP_DESTRUCT = 33,  /* grp, info[] -> status */
    PG_PMIX_CMD_JOB_CONTROL = 34,     /* targets[], directives[] -> status */
    /* the invite form of groups: explicit values 35-47 */
    PG_PMIX_CMD_GROUP_INVITE = 35, /* grp, invitees procs[], info[] -> status, and when the
                                      group was made (SUCCESS / PARTIAL_SUCCESS): SIZE
                                      context id, members procs[] */
    PG_PMIX_CMD_GROUP_JOIN = 36,   /* grp, leader proc (nspace "", rank UNDEF: any), BOOL
                                      accept, info[] -> status, and on success as invite
                                      (a decline: context id 0, no members) */
    PG_PMIX_CMD_GROUP_LEAVE = 37,  /* grp, info[] -> status */
    PG_PMIX_CMD_MONITOR = 38,      /* INFO monitor, STATUS code, directives info[] -> status */
    /* dynamic jobs (spawn, connect): explicit values, 48-63 kept for them */
    PG_PMIX_CMD_SPAWN = 48, /* job info[], UINT32 napps, per app: cmd, argv[], env[], cwd
                               ("" = none), INT32 maxprocs, info[] -> status, nspace */
    PG_PMIX_CMD_CONNECT = 49,    /* procs[], info[] -> status */
    PG_PMIX_CMD_DISCONNECT = 50, /* procs[], info[] -> status */
    PG_PMIX_CMD_MAX = 64
} pg_pmix_cmd_t;

/* Reserved keys INIT's reply leaves out: lists that grow with the job
 * (every rank, every node) -- at 4 096 ranks PMIX_LOCAL_PEERS and
 * PMIX_PROC_MAP are 19 KB each, and every rank's init carried them, read
 * them and cached them whether it asked or not.  The client asks for them
 * at the first get, PMIX_OPTIONAL or not, and caches the answer. */
bool pg_pmix_init_on_demand(const char *key);

/* "get" etc. for messages; "?" for unknown codes. */
const char *pg_pmix_cmd_name(int cmd);

/* Starts a message in an empty buffer: reserves the frame's length header
 * (filled in by pg_pmix_msg_seal) and packs command and id. */
pmix_status_t pg_pmix_msg_begin(pmix_data_buffer_t *buf, uint8_t cmd, uint32_t id);
/* Same for a reply: command, id and status. */
pmix_status_t pg_pmix_msg_begin_reply(pmix_data_buffer_t *buf, uint8_t cmd, uint32_t id,
                                      pmix_status_t status);
/* Writes the length header; the whole frame is then
 * buf->base_ptr[0 .. buf->bytes_used).  PMIX_ERR_PACK_FAILURE when the
 * payload exceeds PG_PMIX_FRAME_MAX. */
pmix_status_t pg_pmix_msg_seal(pmix_data_buffer_t *buf);

/* Points `view` at a received payload without copying or owning it (never
 * destruct a view): pg_buffer_view. */
void pg_pmix_msg_view(pmix_data_buffer_t *view, const char *payload, size_t len);
/* Reads command and id at the start of a payload. */
pmix_status_t pg_pmix_msg_read_header(pmix_data_buffer_t *buf, uint8_t *cmd, uint32_t *id);

/* Exactly one element of `type` into dst (strings: char **): pg_pack of
 * one, and pg_unpack_one (a group of zero or of several elements is
 * PMIX_ERR_UNPACK_FAILURE; on any error nothing is left allocated). */
pmix_status_t pg_pmix_pack_one(pmix_data_buffer_t *buf, const void *src, pmix_data_type_t type);
pmix_status_t pg_pmix_unpack_one(pmix_data_buffer_t *buf, void *dst, pmix_data_type_t type);

/* Count-prefixed arrays (see above).  `arr` may be NULL when n == 0. */
pmix_status_t pg_pmix_pack_array(pmix_data_buffer_t *buf, const void *arr, size_t n,
                                 pmix_data_type_t type);
/* *arr = calloc'd array of *n elements (NULL when 0).  A count larger than
 * the bytes left can encode (pg_type_min_wire_size) is refused with
 * PMIX_ERR_UNPACK_FAILURE before allocating. */
pmix_status_t pg_pmix_unpack_array(pmix_data_buffer_t *buf, void **arr, size_t *n,
                                   pmix_data_type_t type);
/* The value of a numeric directive (PMIX_TIMEOUT, PMIX_WAIT, PMIX_APPNUM,
 * ...) whatever integer type the caller loaded it with.  False for
 * non-integers and negative numbers. */
bool pg_pmix_value_uint(const pmix_value_t *v, uint64_t *out);

/* Destructs every element and frees the array.  NULL is ignored. */
void pg_pmix_array_free(void *arr, size_t n, pmix_data_type_t type);

#endif
