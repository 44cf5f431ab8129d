/*
 * pg_pmi_handler: the frame of the PMI-1 and PMI-2 handlers.  See
 * pg_pmi_handler.h.
 */
#include "server/pg_pmi_handler.h"

#include <stdio.h>

/* A service name is a key: both dialects bound keys alike. */
_Static_assert(PG_PMI1_KEYLEN_MAX == PG_PMI2_KEYLEN_MAX, "PMI-1 and PMI-2 key lengths differ");

const pg_pmi_err_t pg_pmi_err_invalid_arg = { -1, PG_PMI2_RC_ERR_INVALID_ARG, "invalid_argument" };
const pg_pmi_err_t pg_pmi_err_other = { -1, PG_PMI2_RC_ERR_OTHER, "other_error" };

int pg_pmi_dispatch(const pg_pmi_dialect_t *d, pg_peer_t *peer, pg_msg_t *msg, int parse_rc)
{
    pg_pmi_session_t *s = peer->handler_data;
    const pg_pmi_cmd_t *c = NULL;
    char text[160];

    if (s == NULL)
        return PG_HANDLER_FAIL;
    if (msg->cmd > PG_CMD_UNKNOWN && msg->cmd < PG_CMD_COUNT && d->cmds[msg->cmd].fn != NULL &&
        msg->proto == pg_cmd_proto(msg->cmd))
        c = &d->cmds[msg->cmd];
    if (c == NULL)
        return pg_pmi_reply_unsupported(peer, msg), PG_HANDLER_OK;
    /* refused with the command's own reply, so the client's "expecting
     * cmd=X" check passes; an abort is honoured regardless */
    if (parse_rc != 0 && msg->cmd != d->abort)
        return d->refuse(peer, c->reply, pg_msg_op_id(msg),
                         pg_pmi_bad_input(msg, parse_rc, text, sizeof(text)), text),
               PG_HANDLER_OK;
    if (c->needs_engine && peer->job->engine == NULL)
        return d->refuse(peer, c->reply, pg_msg_op_id(msg), &pg_pmi_err_other,
                         "no_key_value_store_in_this_gateway"),
               PG_HANDLER_OK;
    return c->fn(s, peer, msg);
}

int pg_pmi_refuse_status(const pg_pmi_dialect_t *d, pg_peer_t *peer, pg_cmd_t reply,
                         pg_str_t thrid, pmix_status_t st)
{
    const pg_pmi_err_t *err = pg_pmi_status_err(st);

    return d->refuse(peer, reply, thrid, err, err->msg);
}

int pg_pmi_require(const pg_pmi_dialect_t *d, pg_peer_t *peer, const pg_msg_t *msg,
                   const char *key, char *buf, size_t cap, pg_cmd_t reply)
{
    char text[96];

    if (pg_pmi_cstr(pg_msg_get(msg, key), buf, cap) == 0)
        return 0;
    snprintf(text, sizeof(text), "missing_or_invalid_%s", key);
    d->refuse(peer, reply, pg_msg_op_id(msg), &pg_pmi_err_invalid_arg, text);
    return -1;
}

int pg_pmi_not_supported(const pg_pmi_dialect_t *d, pg_peer_t *peer, const pg_msg_t *msg)
{
    char text[96];

    snprintf(text, sizeof(text), "%s_is_not_supported_yet", pg_cmd_name(msg->cmd));
    return d->refuse(peer, d->cmds[msg->cmd].reply, pg_msg_op_id(msg), &pg_pmi_err_other, text),
           PG_HANDLER_OK;
}

int pg_pmi_finalize(pg_peer_t *peer)
{
    pg_engine_t *engine = peer->job->engine;
    pg_proc_t proc = pg_pmi_proc(peer);

    peer->ops->peer_finalize(peer);
    if (engine != NULL)
        (void)pg_proc_finalize(engine, &proc);
    return PG_HANDLER_CLOSE;
}

int pg_pmi_abort_args(const pg_msg_t *msg, pg_str_t message, char text[PG_PMI_ABORT_MSG_MAX + 1])
{
    long code = 1;

    if (message.ptr != NULL && message.len > PG_PMI_ABORT_MSG_MAX)
        message.len = PG_PMI_ABORT_MSG_MAX;
    if (pg_pmi_cstr(message, text, PG_PMI_ABORT_MSG_MAX + 1) != 0)
        text[0] = '\0';
    if (pg_str_to_long(pg_msg_get(msg, "exitcode"), &code) != 0)
        code = 1;
    return (int)code;
}

int pg_pmi_lookup(const pg_pmi_dialect_t *d, pg_pmi_session_t *s, pg_peer_t *peer,
                  const pg_msg_t *msg, const char *key, pg_cmd_t reply, pg_lookup_cb_t done)
{
    char service[PG_PMI2_KEYLEN_MAX + 1];
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_pmi_req_t *req;

    if (pg_pmi_require(d, peer, msg, key, service, sizeof(service), reply))
        return PG_HANDLER_OK;
    req = pg_pmi_req_new(s, msg->cmd, pg_msg_op_id(msg));
    if (req == NULL)
        return pg_pmi_refuse_status(d, peer, reply, pg_msg_op_id(msg), PMIX_ERR_NOMEM),
               PG_HANDLER_OK;
    (void)pg_lookup(peer->job->engine, &proc, service, false, 0, pg_peer_now(peer), done, req);
    return PG_HANDLER_OK;
}

int pg_pmi_lookup_port(pmix_status_t status, const pg_value_t *value, char *port, size_t cap)
{
    char scratch[64];
    pg_str_t text;

    if (status == PMIX_SUCCESS && value != NULL &&
        pg_pmi_value_text(value, scratch, sizeof(scratch), &text) == 0 &&
        pg_pmi_cstr(text, port, cap) == 0)
        return 0;
    return status == PMIX_SUCCESS || status == PMIX_ERR_NOT_FOUND ? 1 : -1;
}
