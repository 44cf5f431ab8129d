/*
 * pg_parse: the hand-written half of the parsers.  The ragel machines only
 * find where names, keys and values start and end; the rules that need
 * judgement live here: which quirks of real peers are tolerated, which
 * limits apply to which key, what is an error and how it is explained.
 */
#include "parser/pg_parse_internal.h"

#include <stdlib.h>
#include <string.h>

/* Limits on particular keys' values (docs/wire-protocol.md, "Limits"). */
typedef struct pg_limit {
    pg_proto_t proto;
    const char *key;
    uint32_t max;
    pg_wire_err_t err;
    const char *reason;
} pg_limit_t;

static const pg_limit_t pg_limits[] = {
    { PG_PROTO_PMI1, "key", PG_PMI1_KEYLEN_MAX, PG_WIRE_EKEY_TOO_LONG,
      "key= is longer than keylen_max (64)" },
    { PG_PROTO_PMI1, "service", PG_PMI1_KEYLEN_MAX, PG_WIRE_EKEY_TOO_LONG,
      "service= is longer than keylen_max (64)" },
    { PG_PROTO_PMI1, "value", PG_PMI1_VALLEN_MAX, PG_WIRE_EVAL_TOO_LONG,
      "value= is longer than vallen_max (1024)" },
    { PG_PROTO_PMI1, "port", PG_PMI1_VALLEN_MAX, PG_WIRE_EVAL_TOO_LONG,
      "port= is longer than vallen_max (1024)" },
    { PG_PROTO_PMI1, "kvsname", PG_PMI1_KVSNAME_MAX, PG_WIRE_EKVSNAME_TOO_LONG,
      "kvsname= is longer than kvsname_max (256)" },
    { PG_PROTO_PMI2, "key", PG_PMI2_KEYLEN_MAX, PG_WIRE_EKEY_TOO_LONG,
      "key= is longer than PMI2_MAX_KEYLEN (64)" },
    { PG_PROTO_PMI2, "name", PG_PMI2_KEYLEN_MAX, PG_WIRE_EKEY_TOO_LONG,
      "name= is longer than PMI2_MAX_KEYLEN (64)" },
    { PG_PROTO_PMI2, "jobid", PG_PMI1_KVSNAME_MAX, PG_WIRE_EKVSNAME_TOO_LONG,
      "jobid= is longer than a kvsname may be (256)" },
};

/* Records the first limit a message breaks; parsing goes on. */
static void pg_parse_limit(pg_parse_t *ps, pg_wire_err_t err, const char *reason)
{
    if (ps->msg->limit_err == PG_WIRE_OK) {
        ps->msg->limit_err = err;
        ps->msg->err_reason = reason;
    }
}

/* Records a hard error (malformed, no memory); the first one wins. */
static void pg_parse_fail(pg_parse_t *ps, pg_wire_err_t err, const char *reason)
{
    if (ps->err == 0) {
        ps->err = err;
        ps->msg->err_reason = reason;
    }
}

void pg_parse_check_limits(pg_parse_t *ps, const pg_token_t *t)
{
    pg_proto_t proto = ps->msg->proto;
    if (t->key.len > PG_PMI1_KEYLEN_MAX) {
        pg_parse_limit(ps, PG_WIRE_EKEY_TOO_LONG, "a token's key is longer than 64 bytes");
        return;
    }
    for (size_t i = 0; i < sizeof pg_limits / sizeof pg_limits[0]; i++) {
        const pg_limit_t *l = &pg_limits[i];
        if (l->proto == proto && t->val.len > l->max && pg_str_eq(t->key, l->key)) {
            pg_parse_limit(ps, l->err, l->reason);
            return;
        }
    }
    if (proto == PG_PROTO_PMI2 && t->val.len > PG_PMI2_VALLEN_MAX)
        pg_parse_limit(ps, PG_WIRE_EVAL_TOO_LONG, "a value is longer than PMI2_MAX_VALLEN (1024)");
}

int pg_parse_grow(pg_parse_t *ps)
{
    pg_msg_t *msg = ps->msg;
    if (msg->cap >= PG_MSG_MAX_TOKENS) {
        pg_parse_limit(ps, PG_WIRE_ETOO_MANY_TOKENS, "more than 4096 tokens");
        return -1;
    }
    uint32_t cap = msg->cap < PG_MSG_INLINE_TOKENS ? PG_MSG_INLINE_TOKENS : msg->cap * 4;
    if (cap > PG_MSG_MAX_TOKENS)
        cap = PG_MSG_MAX_TOKENS;
    pg_token_t *grown;
    if (msg->tokens == msg->inline_tokens) {
        grown = malloc(cap * sizeof *grown);
        if (grown != NULL)
            memcpy(grown, msg->inline_tokens, msg->ntokens * sizeof *grown);
    } else {
        grown = realloc(msg->tokens, cap * sizeof *grown);
    }
    if (grown == NULL) {
        pg_parse_fail(ps, PG_WIRE_ENOMEM, "out of memory for tokens");
        return -1;
    }
    msg->tokens = grown;
    msg->cap = cap;
    return 0;
}

void pg_parse_begin(pg_parse_t *ps, pg_msg_t *msg, pg_proto_t proto, char *buf, size_t len)
{
    memset(ps, 0, sizeof *ps);
    ps->msg = msg;
    ps->start = buf;
    ps->end = buf + len;
    msg->proto = proto;
    msg->cmd = PG_CMD_UNKNOWN;
    msg->name.ptr = buf;
    msg->name.len = 0;
    msg->limit_err = PG_WIRE_OK;
    msg->err_reason = NULL;
    msg->ntokens = 0;
}

int pg_parse_refuse(pg_parse_t *ps, int err, const char *reason)
{
    ps->msg->err_reason = reason;
    return err;
}

void pg_parse_name_end(pg_parse_t *ps, const char *p)
{
    ps->msg->name.ptr = ps->name;
    ps->msg->name.len = (uint32_t)(p - ps->name);
    /* PMI-2: the name's ';' is the first point junk may follow. */
    ps->safe_end = (char *)(p < ps->end ? p + 1 : p);
}

static int pg_parse_is_request(const pg_parse_t *ps)
{
    return pg_cmd_dir(ps->msg->cmd) == PG_DIR_REQ;
}

/* A PMI-1 word without '='.  Right after value= it is more of the value
 * ("value=a b c": the value runs to the end of the line, as clients that
 * put value= last expect).  Otherwise it is a valueless token, which hydra
 * and gforker replies contain ("msg=KVS x not found") and which requests
 * never need. */
static void pg_parse_bare_pmi1(pg_parse_t *ps, const char *p)
{
    pg_msg_t *msg = ps->msg;
    if (msg->ntokens > 0) {
        pg_token_t *last = &msg->tokens[msg->ntokens - 1];
        if (last->val.ptr != NULL && pg_str_eq(last->key, "value")) {
            last->val.len = (uint32_t)(p - last->val.ptr);
            if (last->val.len > PG_PARSE_LIMIT_FLOOR)
                pg_parse_check_limits(ps, last);
            return;
        }
    }
    if (pg_parse_is_request(ps)) {
        pg_parse_fail(ps, PG_WIRE_ESYNTAX, "token without '=' in a request");
        return;
    }
    pg_parse_push(ps, ps->key, (size_t)(p - ps->key), NULL, 0);
}

void pg_parse_token_pmi1(pg_parse_t *ps, const char *p)
{
    if (ps->val != NULL)
        pg_parse_push(ps, ps->key, ps->key_len, ps->val, (size_t)(p - ps->val));
    else
        pg_parse_bare_pmi1(ps, p);
}

void pg_parse_token_mcmd(pg_parse_t *ps, const char *p)
{
    pg_parse_push(ps, ps->key, ps->key_len, ps->val, (size_t)(p - ps->val));
}

/* Undoes ";;" -> ";" in place; returns the new length. */
static size_t pg_unescape_pmi2(char *v, size_t len)
{
    size_t r = 0, w = 0;
    while (r < len) {
        int pair = v[r] == ';' && r + 1 < len && v[r + 1] == ';';
        v[w++] = v[r];
        r += pair ? 2 : 1;
    }
    return w;
}

void pg_parse_commit_pmi2(pg_parse_t *ps)
{
    ps->pending = false;
    if (ps->val != NULL) {
        size_t vlen = (size_t)(ps->val_end - ps->val);
        if (ps->escaped)
            vlen = pg_unescape_pmi2(ps->val, vlen);
        pg_parse_push(ps, ps->key, ps->key_len, ps->val, vlen);
    } else if (pg_parse_is_request(ps)) {
        /* Decided at the end: it may be the off-by-6 junk. */
        if (ps->first_bad == NULL)
            ps->first_bad = ps->key;
    } else {
        pg_parse_push(ps, ps->key, ps->key_len, NULL, 0);
    }
    ps->escaped = false;
    ps->safe_end = ps->val_end < ps->end ? ps->val_end + 1 : ps->val_end;
}

/* Why a machine stopped short, for the start of the message. */
static const char *pg_parse_head_reason(const pg_parse_t *ps, const char *p, const char *head)
{
    size_t n = strlen(head), have = (size_t)(ps->end - ps->start);
    if (have < n || memcmp(ps->start, head, n) != 0)
        return NULL;
    if (p == ps->start + n)
        return "empty command name";
    return "";
}

static const char *pg_parse_reason(const pg_parse_t *ps, const char *p, const char *head,
                                   const char *missing_head)
{
    const char *r = pg_parse_head_reason(ps, p, head);
    if (r == NULL)
        return missing_head;
    if (*r)
        return r;
    if (p < ps->end && *p == '\0')
        return "NUL byte in the message";
    if (p < ps->end && *p == '\n')
        return "newline inside a PMI-1 line";
    if (p < ps->end && *p == '=')
        return "token with an empty key";
    return NULL;
}

/* The end of a PMI-1 line or mcmd block: both refuse what their machine
 * did not accept with the most specific reason pg_parse_reason finds,
 * else with `fallback`, and differ only in the head and the wording. */
static int pg_parse_finish_text(pg_parse_t *ps, bool accepted, const char *p, const char *head,
                                const char *missing_head, const char *fallback)
{
    if (ps->err != 0)
        return ps->err;
    if (!accepted) {
        const char *r = pg_parse_reason(ps, p, head, missing_head);
        ps->msg->err_reason = r ? r : fallback;
        return PG_WIRE_ESYNTAX;
    }
    return ps->msg->limit_err;
}

int pg_parse_finish_pmi1(pg_parse_t *ps, bool accepted, const char *p)
{
    return pg_parse_finish_text(ps, accepted, p, "cmd=", "line does not start with cmd=",
                                "malformed PMI-1 line");
}

int pg_parse_finish_mcmd(pg_parse_t *ps, bool accepted, const char *p)
{
    return pg_parse_finish_text(ps, accepted, p, "mcmd=", "block does not start with mcmd=",
                                "line without '=' in an mcmd block");
}

int pg_parse_finish_pmi2(pg_parse_t *ps, bool accepted, const char *p)
{
    if (ps->pending)
        pg_parse_commit_pmi2(ps);
    if (ps->err != 0)
        return ps->err;
    if (ps->first_bad != NULL && ps->end - ps->first_bad > PG_PMI2_JUNK_MAX) {
        ps->msg->err_reason = "pair without '=' in a request";
        return PG_WIRE_ESYNTAX;
    }
    if (!accepted) {
        const char *r = pg_parse_reason(ps, p, "cmd=", "body does not start with cmd=");
        if (ps->safe_end == NULL) {
            ps->msg->err_reason = r ? r : "malformed command name";
            return PG_WIRE_ESYNTAX;
        }
        /* After the last complete pair: MPICH <= 4.0's 6 junk bytes pass. */
        if (ps->end - ps->safe_end > PG_PMI2_JUNK_MAX) {
            ps->msg->err_reason = r ? r : "malformed key=value pair";
            return PG_WIRE_ESYNTAX;
        }
    }
    return ps->msg->limit_err;
}

int pg_parse_frame(char *buf, const pg_frame_t *frame, pg_msg_t *msg)
{
    char *body = buf + frame->body_off;
    switch (frame->kind) {
    case PG_FRAME_PMI1_LINE: return pg_parse_pmi1(body, frame->body_len, msg);
    case PG_FRAME_PMI1_MCMD: return pg_parse_pmi1_mcmd(body, frame->body_len, msg);
    case PG_FRAME_PMI2: return pg_parse_pmi2(body, frame->body_len, msg);
    case PG_FRAME_NONE: break;
    }
    pg_parse_t ps;
    pg_parse_begin(&ps, msg, PG_PROTO_NONE, body, 0);
    return pg_parse_refuse(&ps, PG_WIRE_ESYNTAX, "no frame");
}
