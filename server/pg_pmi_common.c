/*
 * pg_pmi_common: status translation tables, sessions with detachable
 * deferred requests, and small helpers shared by the PMI-1 and PMI-2 server
 * handlers.  See pg_pmi_common.h.
 */
#include "server/pg_pmi_common.h"
#include "server/pg_pmi_spawn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- error tables ------------------------------------------------------- */

typedef struct status_row {
    pmix_status_t status;
    pg_pmi_err_t err;
} status_row_t;

/* Every engine status a PMI handler can see, in one place.  PMI-1 uses
 * hydra's -1, except the name-service refusals where hydra answers rc=1. */
static const status_row_t status_table[] = {
    { PMIX_SUCCESS, { 0, 0, "success" } },
    { PMIX_ERR_NOT_FOUND, { -1, PG_PMI2_RC_FAIL, "not_found" } },
    { PMIX_ERR_DUPLICATE_KEY, { 1, PG_PMI2_RC_FAIL, "key_already_present" } },
    { PMIX_ERR_BAD_PARAM, { -1, PG_PMI2_RC_ERR_INVALID_ARG, "invalid_argument" } },
    { PMIX_ERR_EXISTS, { -1, PG_PMI2_RC_FAIL, "already_waiting_in_this_barrier" } },
    { PMIX_ERR_EXISTS_OUTSIDE_SCOPE, { -1, PG_PMI2_RC_FAIL, "key_exists_outside_your_scope" } },
    { PMIX_ERR_INVALID_ARG, { -1, PG_PMI2_RC_ERR_INVALID_ARG, "barrier_participants_disagree" } },
    { PMIX_ERR_LOST_CONNECTION, { -1, PG_PMI2_RC_FAIL, "a_process_of_the_job_was_lost" } },
    { PMIX_ERR_TIMEOUT, { -1, PG_PMI2_RC_FAIL, "timed_out" } },
    { PMIX_ERR_JOB_TERMINATED, { -1, PG_PMI2_RC_FAIL, "job_terminated" } },
    { PMIX_ERR_NOMEM, { -1, PG_PMI2_RC_ERR_NOMEM, "out_of_memory" } },
    { PMIX_ERR_NOT_SUPPORTED, { -1, PG_PMI2_RC_ERR_OTHER, "not_supported" } },
    { PMIX_ERR_NO_PERMISSIONS, { 1, PG_PMI2_RC_FAIL, "published_by_another_job" } },
    { PMIX_ERR_INVALID_OPERATION, { -1, PG_PMI2_RC_FAIL, "invalid_operation" } },
    { PMIX_ERR_UNPACK_FAILURE, { -1, PG_PMI2_RC_FAIL, "corrupt_data" } },
};

static const pg_pmi_err_t status_unknown = { -1, PG_PMI2_RC_FAIL, "internal_error" };

const pg_pmi_err_t *pg_pmi_status_err(pmix_status_t status)
{
    for (size_t i = 0; i < sizeof(status_table) / sizeof(status_table[0]); i++)
        if (status_table[i].status == status)
            return &status_table[i].err;
    return &status_unknown;
}

typedef struct wire_row {
    int parse_rc;
    pg_pmi_err_t err;
} wire_row_t;

/* Parser results that still leave a message worth answering (pg_parse.h). */
static const wire_row_t wire_table[] = {
    { PG_WIRE_EKEY_TOO_LONG, { -1, PG_PMI2_RC_ERR_INVALID_KEY_LENGTH, "key_too_long_(max_64_bytes)" } },
    { PG_WIRE_EVAL_TOO_LONG,
      { -1, PG_PMI2_RC_ERR_INVALID_VAL_LENGTH, "value_too_long_(max_1024_bytes)" } },
    { PG_WIRE_EKVSNAME_TOO_LONG,
      { -1, PG_PMI2_RC_ERR_INVALID_LENGTH, "kvsname_too_long_(max_256_bytes)" } },
    { PG_WIRE_ETOO_MANY_TOKENS, { -1, PG_PMI2_RC_ERR_INVALID_NUM_ARGS, "too_many_keys" } },
    { PG_WIRE_ESYNTAX, { -1, PG_PMI2_RC_ERR_INVALID_KEYVALP, "malformed_message" } },
    { PG_WIRE_ENOMEM, { -1, PG_PMI2_RC_ERR_NOMEM, "out_of_memory" } },
    /* over-long messages, answered by their head (wire/pg_frame.h) */
    { PG_WIRE_ELINE_TOO_LONG,
      { -1, PG_PMI2_RC_ERR_INVALID_LENGTH, "line_too_long_(max_4096_bytes)" } },
    { PG_WIRE_EMCMD_TOO_LONG,
      { -1, PG_PMI2_RC_ERR_INVALID_LENGTH, "spawn_block_too_long_(max_262144_bytes)" } },
    { PG_WIRE_ELENGTH_TOO_BIG,
      { -1, PG_PMI2_RC_ERR_INVALID_LENGTH, "message_too_long_(max_65542_bytes)" } },
};

static const pg_pmi_err_t wire_unknown = { -1, PG_PMI2_RC_ERR_OTHER, "message_cannot_be_parsed" };

const pg_pmi_err_t *pg_pmi_wire_err(int parse_rc)
{
    for (size_t i = 0; i < sizeof(wire_table) / sizeof(wire_table[0]); i++)
        if (wire_table[i].parse_rc == parse_rc)
            return &wire_table[i].err;
    return &wire_unknown;
}

const pg_pmi_err_t *pg_pmi_bad_input(const pg_msg_t *msg, int parse_rc, char *text, size_t size)
{
    const pg_pmi_err_t *err = pg_pmi_wire_err(parse_rc);

    if (parse_rc == PG_WIRE_ESYNTAX && msg->err_reason != NULL)
        snprintf(text, size, "%s:_%s", err->msg, msg->err_reason);
    else
        snprintf(text, size, "%s", err->msg);
    pg_pmi_sanitize(text);
    return err;
}

/* ---- sessions ------------------------------------------------------------ */

static pg_pmi_session_t *session_new(pg_peer_t *peer)
{
    pg_pmi_session_t *s = calloc(1, sizeof(*s));

    if (s != NULL)
        s->peer = peer;
    return s;
}

static void session_free(pg_pmi_session_t *s)
{
    if (s == NULL)
        return;
    /* The engine still owes these a completion: leave the records alive and
     * orphaned so the completion frees them without replying. */
    for (pg_pmi_req_t *r = s->pending, *next; r != NULL; r = next) {
        next = r->next;
        r->session = NULL;
        r->prev = r->next = NULL;
    }
    pg_pmi_spawn_free(s->spawn);
    for (int i = 0; i < s->nconnected; i++)
        free(s->connected[i]);
    free(s->connected);
    free(s);
}

int pg_pmi_on_open(pg_peer_t *peer)
{
    pg_pmi_session_t *s = session_new(peer);

    if (s == NULL)
        return -1;
    peer->handler_data = s;
    return 0;
}

void pg_pmi_on_close(pg_peer_t *peer)
{
    session_free(peer->handler_data);
    peer->handler_data = NULL;
}

pg_pmi_req_t *pg_pmi_req_new(pg_pmi_session_t *s, pg_cmd_t cmd, pg_str_t thrid)
{
    size_t tlen = thrid.ptr != NULL ? thrid.len : 0;
    pg_pmi_req_t *r = malloc(sizeof(*r) + tlen + 1);

    if (r == NULL)
        return NULL;
    r->session = s;
    r->cmd = cmd;
    r->has_thrid = thrid.ptr != NULL;
    memcpy(r->text, tlen ? thrid.ptr : "", tlen);
    r->text[tlen] = '\0';
    r->thrid.ptr = r->has_thrid ? r->text : NULL;
    r->thrid.len = (uint32_t)tlen;
    r->prev = NULL;
    r->next = s->pending;
    if (s->pending != NULL)
        s->pending->prev = r;
    s->pending = r;
    return r;
}

pg_peer_t *pg_pmi_req_peer(const pg_pmi_req_t *r)
{
    return r->session != NULL ? r->session->peer : NULL;
}

void pg_pmi_req_free(pg_pmi_req_t *r)
{
    if (r == NULL)
        return;
    if (r->session != NULL) {
        if (r->prev != NULL)
            r->prev->next = r->next;
        else
            r->session->pending = r->next;
        if (r->next != NULL)
            r->next->prev = r->prev;
    }
    free(r);
}

/* ---- helpers ------------------------------------------------------------- */

pg_proc_t pg_pmi_proc(const pg_peer_t *peer)
{
    pg_proc_t proc = { peer->job->kvsname, (pmix_rank_t)peer->rank };

    return proc;
}

int pg_pmi_cstr(pg_str_t s, char *buf, size_t cap)
{
    if (s.ptr == NULL || cap == 0 || s.len >= cap || memchr(s.ptr, '\0', s.len) != NULL)
        return -1;
    memcpy(buf, s.ptr, s.len);
    buf[s.len] = '\0';
    return 0;
}

int pg_pmi_value_text(const pg_value_t *v, char *scratch, size_t cap, pg_str_t *out)
{
    int n;

    switch (v->type) {
    case PMIX_STRING:
    case PMIX_BYTE_OBJECT:
        out->ptr = v->data != NULL ? v->data : "";
        out->len = (uint32_t)v->size;
        return 0;
    case PMIX_INT32:
        n = snprintf(scratch, cap, "%" PRId32, *(const int32_t *)v->data);
        break;
    case PMIX_UINT32:
    case PMIX_PROC_RANK:
        n = snprintf(scratch, cap, "%" PRIu32, *(const uint32_t *)v->data);
        break;
    case PMIX_INT:
        n = snprintf(scratch, cap, "%d", *(const int *)v->data);
        break;
    case PMIX_SIZE:
        n = snprintf(scratch, cap, "%zu", *(const size_t *)v->data);
        break;
    default:
        return -1;
    }
    if (n < 0 || (size_t)n >= cap)
        return -1;
    out->ptr = scratch;
    out->len = (uint32_t)n;
    return 0;
}

int pg_pmi_send(pg_peer_t *peer, const pg_enc_t *e)
{
    /* the gateway writes it straight to the socket when it can: no copy */
    return e->len == 0 ? 0 : peer->ops->reply_send(peer, e->buf, e->len);
}

void pg_pmi_sanitize(char *text)
{
    for (unsigned char *p = (unsigned char *)text; *p != '\0'; p++)
        if (*p <= ' ' || *p == '=' || *p == ';' || *p >= 0x7f)
            *p = '_';
}

pg_enc_t *pg_pmi_reply_init(pg_pmi_reply_t *r)
{
    pg_enc_init(&r->enc, r->buf, sizeof(r->buf));
    return &r->enc;
}

/* The command name as sent, made safe to echo, at most 64 bytes. */
static void unsupported_name(const pg_msg_t *msg, char *name, size_t cap)
{
    size_t len = msg->name.ptr != NULL ? msg->name.len : 0;

    if (len == 0) {
        snprintf(name, cap, "unknown");
        return;
    }
    if (len > 64)
        len = 64;
    if (len >= cap)
        len = cap - 1;
    memcpy(name, msg->name.ptr, len);
    name[len] = '\0';
    pg_pmi_sanitize(name);
}

/* An operation id token ("thrid=<v>" or "opid=<v>") that can be echoed
 * without escaping; {NULL, 0} if none. */
static pg_str_t echoable_op_id(const pg_msg_t *msg)
{
    pg_str_t t = pg_msg_op_id(msg);
    pg_str_t none = { NULL, 0 };

    if (t.ptr == NULL || t.len > 256 || memchr(t.ptr, ';', t.len) != NULL)
        return none;
    return t;
}

int pg_pmi_reply_unsupported(pg_peer_t *peer, const pg_msg_t *msg)
{
    char name[80], body[512];
    int n;

    unsupported_name(msg, name, sizeof(name));
    if (msg->proto == PG_PROTO_PMI2) {
        pg_str_t op_id = echoable_op_id(msg);
        char line[PG_PMI2_LENGTH_FIELD + sizeof(body) + 1];

        n = snprintf(body, sizeof(body),
                     "cmd=%s-response;%.*s%src=%d;errmsg=unsupported_command_%s;", name,
                     (int)op_id.len, op_id.ptr ? op_id.ptr : "", op_id.ptr ? ";" : "",
                     PG_PMI2_RC_ERR_OTHER, name);
        if (n < 0 || (size_t)n >= sizeof(body))
            return -1;
        n = snprintf(line, sizeof(line), "%6d%s", n, body);
        return peer->ops->reply_send(peer, line, (size_t)n);
    }
    n = snprintf(body, sizeof(body), "cmd=%s_result rc=-1 msg=unsupported_command_%s\n", name,
                 name);
    if (n < 0 || (size_t)n >= sizeof(body))
        return -1;
    return peer->ops->reply_send(peer, body, (size_t)n);
}
