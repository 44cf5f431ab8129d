/*
 * pg_wire: the parts of the message model every speaker needs whatever the
 * protocol: the command tables built from pg_cmd.def, token lookup, error
 * texts and the small value readers (integers, booleans) handlers and client
 * libraries use on parsed tokens.
 */
#include "wire/pg_wire.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Row i describes enum value i; row 0 is PG_CMD_UNKNOWN. */
static const struct pg_cmd_info {
    const char *name;
    const char *enum_name;
    pg_proto_t proto;
    pg_dir_t dir;
} pg_cmd_table[PG_CMD_COUNT] = {
    [PG_CMD_UNKNOWN] = { "?", "UNKNOWN", PG_PROTO_NONE, PG_DIR_NONE },
#define PG_CMD(e, proto, dir, name) \
    [PG_CMD_##e] = { name, #e, PG_PROTO_##proto, PG_DIR_##dir },
#include "wire/pg_cmd.def"
#undef PG_CMD
};

void pg_msg_init(pg_msg_t *msg)
{
    memset(msg, 0, sizeof *msg);
    msg->tokens = msg->inline_tokens;
    msg->cap = PG_MSG_INLINE_TOKENS;
}

void pg_msg_release(pg_msg_t *msg)
{
    if (msg->tokens != msg->inline_tokens)
        free(msg->tokens);
    pg_msg_init(msg);
}

/* Whether token t's key is key[0..klen).  Most keys of a message differ
 * from the one sought in their first byte: comparing it inline spares a
 * memcmp call per token. */
static bool pg_token_key_is(const pg_token_t *t, const char *key, size_t klen)
{
    return t->key.len == klen &&
           (klen == 0 || (t->key.ptr[0] == key[0] && memcmp(t->key.ptr, key, klen) == 0));
}

const pg_token_t *pg_msg_find(const pg_msg_t *msg, const char *key)
{
    size_t klen = strlen(key);
    for (uint32_t i = 0; i < msg->ntokens; i++)
        if (pg_token_key_is(&msg->tokens[i], key, klen))
            return &msg->tokens[i];
    return NULL;
}

pg_str_t pg_msg_op_id(const pg_msg_t *msg)
{
    const pg_token_t *t = NULL;
    pg_str_t none = { NULL, 0 };

    /* one pass for both names (every PMI-2 reply asks): the first thrid=,
     * else the first opid= */
    for (uint32_t i = 0; i < msg->ntokens; i++) {
        if (pg_token_key_is(&msg->tokens[i], "thrid", 5)) {
            t = &msg->tokens[i];
            break;
        }
        if (t == NULL && pg_token_key_is(&msg->tokens[i], "opid", 4))
            t = &msg->tokens[i];
    }
    if (t == NULL || t->val.ptr == NULL)
        return none;
    /* the parser leaves key, '=' and value in place: one span */
    return (pg_str_t){ t->key.ptr, (uint32_t)(t->val.ptr + t->val.len - t->key.ptr) };
}

pg_str_t pg_msg_get(const pg_msg_t *msg, const char *key)
{
    const pg_token_t *t = pg_msg_find(msg, key);
    pg_str_t none = { NULL, 0 };
    return t ? t->val : none;
}

static const struct pg_cmd_info *pg_cmd_info(pg_cmd_t cmd)
{
    if ((unsigned)cmd >= PG_CMD_COUNT)
        cmd = PG_CMD_UNKNOWN;
    return &pg_cmd_table[cmd];
}

const char *pg_cmd_name(pg_cmd_t cmd)
{
    return pg_cmd_info(cmd)->name;
}

const char *pg_cmd_enum_name(pg_cmd_t cmd)
{
    return pg_cmd_info(cmd)->enum_name;
}

pg_proto_t pg_cmd_proto(pg_cmd_t cmd)
{
    return pg_cmd_info(cmd)->proto;
}

pg_dir_t pg_cmd_dir(pg_cmd_t cmd)
{
    return pg_cmd_info(cmd)->dir;
}

const char *pg_proto_name(pg_proto_t proto)
{
    switch (proto) {
    case PG_PROTO_PMI1: return "PMI-1";
    case PG_PROTO_PMI2: return "PMI-2";
    case PG_PROTO_PMIX: return "PMIx";
    case PG_PROTO_NONE: break;
    }
    return "none";
}

const char *pg_wire_strerror(int err)
{
    switch ((pg_wire_err_t)err) {
    case PG_WIRE_OK: return "success";
    case PG_WIRE_ENEED_MORE: return "message incomplete";
    case PG_WIRE_ENOMEM: return "out of memory";
    case PG_WIRE_ELINE_TOO_LONG: return "PMI-1 line too long";
    case PG_WIRE_EMCMD_TOO_LONG: return "PMI-1 mcmd block too long";
    case PG_WIRE_EBAD_LENGTH: return "bad PMI-2 length field";
    case PG_WIRE_ELENGTH_TOO_BIG: return "PMI-2 length too big";
    case PG_WIRE_EBAD_START: return "message starts with neither cmd=, mcmd= nor a length";
    case PG_WIRE_ESYNTAX: return "malformed message";
    case PG_WIRE_ETOO_MANY_TOKENS: return "too many tokens";
    case PG_WIRE_EKEY_TOO_LONG: return "key too long";
    case PG_WIRE_EVAL_TOO_LONG: return "value too long";
    case PG_WIRE_EKVSNAME_TOO_LONG: return "kvsname too long";
    case PG_WIRE_EOVERFLOW: return "buffer too small for the message";
    case PG_WIRE_EINVAL: return "value cannot be encoded";
    }
    return "unknown error";
}

int pg_str_eq(pg_str_t s, const char *cstr)
{
    size_t n = strlen(cstr);
    return s.ptr != NULL && s.len == n && memcmp(s.ptr, cstr, n) == 0;
}

int pg_str_to_long(pg_str_t s, long *out)
{
    if (s.ptr == NULL || s.len == 0)
        return PG_WIRE_ESYNTAX;
    size_t i = 0;
    bool negative = s.ptr[0] == '-';
    if (negative && ++i == s.len)
        return PG_WIRE_ESYNTAX;
    /* Accumulate as a negative number: its range includes LONG_MIN. */
    long v = 0;
    for (; i < s.len; i++) {
        int d = s.ptr[i] - '0';
        if (d < 0 || d > 9 || v < (LONG_MIN + d) / 10)
            return PG_WIRE_ESYNTAX;
        v = v * 10 - d;
    }
    if (!negative && v == LONG_MIN)
        return PG_WIRE_ESYNTAX;
    *out = negative ? v : -v;
    return PG_WIRE_OK;
}

int pg_str_to_bool(pg_str_t s, bool *out)
{
    if (pg_str_eq(s, "TRUE"))
        *out = true;
    else if (pg_str_eq(s, "FALSE"))
        *out = false;
    else
        return PG_WIRE_ESYNTAX;
    return PG_WIRE_OK;
}
