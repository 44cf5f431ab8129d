/*
 * pg_parse_internal: what the ragel machines share with the hand-written C
 * in pg_parse.c: the scratch state the actions fill, and the token sink.
 * Only parser/ includes this.
 */
#ifndef PG_PARSE_INTERNAL_H
#define PG_PARSE_INTERNAL_H

#include <stdbool.h>

#include "parser/pg_parse.h"

/* Limits are all at least this long, so shorter tokens skip the check. */
#define PG_PARSE_LIMIT_FLOOR 64

/* State of one parse.  The actions in pg_common.rl refer to it as `ps`. */
typedef struct pg_parse {
    pg_msg_t *msg;
    char *start;            /* the buffer being parsed ... */
    char *end;              /* ... and one past its last byte */
    char *name;             /* first byte of the command name */
    char *key;              /* current token's key ... */
    size_t key_len;         /* ... and its length once known */
    char *val;              /* current token's value, NULL if no '=' yet */
    char *val_end;          /* PMI-2: where the pending value ends */
    bool pending;           /* PMI-2: a token ended at ';' that may still be
                             * the first half of a ";;" escape */
    bool escaped;           /* PMI-2: current value contains ";;" */
    char *safe_end;         /* PMI-2: just after the last accepted pair */
    char *first_bad;        /* first token without '=' in a request */
    int err;                /* first hard error an action met, else 0 */
} pg_parse_t;

/* Resets msg for a new parse; call it first, so even a refused input never
 * leaves tokens of an earlier message behind. */
void pg_parse_begin(pg_parse_t *ps, pg_msg_t *msg, pg_proto_t proto, char *buf, size_t len);
/* Refuses the whole input without parsing it; returns err. */
int pg_parse_refuse(pg_parse_t *ps, int err, const char *reason);
void pg_parse_name_end(pg_parse_t *ps, const char *p);
void pg_parse_token_pmi1(pg_parse_t *ps, const char *p);
void pg_parse_token_mcmd(pg_parse_t *ps, const char *p);
void pg_parse_commit_pmi2(pg_parse_t *ps);
void pg_parse_check_limits(pg_parse_t *ps, const pg_token_t *t);
int pg_parse_grow(pg_parse_t *ps);

/* Final verdicts once the machine stopped at p in an accepting state or not. */
int pg_parse_finish_pmi1(pg_parse_t *ps, bool accepted, const char *p);
int pg_parse_finish_mcmd(pg_parse_t *ps, bool accepted, const char *p);
int pg_parse_finish_pmi2(pg_parse_t *ps, bool accepted, const char *p);

/* Appends one token; the hot path, hence inline. */
static inline void pg_parse_push(pg_parse_t *ps, const char *key, size_t klen,
                                 const char *val, size_t vlen)
{
    pg_msg_t *msg = ps->msg;
    if (msg->ntokens == msg->cap && pg_parse_grow(ps) != 0)
        return;
    pg_token_t *t = &msg->tokens[msg->ntokens++];
    t->key.ptr = key;
    t->key.len = (uint32_t)klen;
    t->val.ptr = val;
    t->val.len = (uint32_t)vlen;
    if (klen > PG_PARSE_LIMIT_FLOOR || vlen > PG_PARSE_LIMIT_FLOOR)
        pg_parse_check_limits(ps, t);
}

#endif
