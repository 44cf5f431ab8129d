/*
 * pg_wire: the message model shared by every PMI-1 and PMI-2 speaker in
 * pmigate — the gateway's server handlers and the client libraries link the
 * same codec, so both ends agree on framing, limits and escaping.
 *
 * A parsed message never copies the bytes it came from: its tokens point into
 * the receive buffer, which the caller keeps alive (and unmodified by anyone
 * else) for as long as it uses the message.  The parser may rewrite the
 * buffer in place (PMI-2 ";;" unescaping shortens a value), which is why
 * parse functions take a mutable buffer.
 *
 * Error domain: functions here return 0 or a negative pg_wire_err_t; they
 * never abort and never print.
 */
#ifndef PG_WIRE_H
#define PG_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The protocol a message is framed and encoded in. */
typedef enum pg_proto {
    PG_PROTO_NONE = 0,
    PG_PROTO_PMI1,  /* "cmd=... k=v\n", or an "mcmd=spawn ... endcmd\n" block */
    PG_PROTO_PMI2,  /* 6-byte decimal length + "cmd=...;k=v;" */
    PG_PROTO_PMIX,  /* pmigate's own PMIx transport (not parsed here) */
} pg_proto_t;

/* Every command name both protocols use (wire/pg_cmd.def is the list). */
typedef enum pg_cmd {
    PG_CMD_UNKNOWN = 0, /* well-formed, but a name the codec does not know */
#define PG_CMD(e, proto, dir, name) PG_CMD_##e,
#include "wire/pg_cmd.def"
#undef PG_CMD
    PG_CMD_COUNT
} pg_cmd_t;

/* Which way a command travels. */
typedef enum pg_dir {
    PG_DIR_NONE = 0, /* PG_CMD_UNKNOWN */
    PG_DIR_REQ,      /* client -> server */
    PG_DIR_RESP,     /* server -> client */
} pg_dir_t;

/* Limits.  Keys/values/kvsnames beyond the PMI limits still parse (so the
 * server can answer "key too long" to the right command); the message then
 * carries a limit error.  Framing limits (line, block, length) cannot be
 * answered and are reported by the framer instead. */
enum {
    PG_PMI1_KEYLEN_MAX = 64,      /* get_maxes keylen_max */
    PG_PMI1_VALLEN_MAX = 1024,    /* get_maxes vallen_max */
    PG_PMI1_KVSNAME_MAX = 256,    /* get_maxes kvsname_max */
    PG_PMI1_LINE_MAX = 4096,      /* one PMI-1 line, '\n' included */
    PG_PMI1_REPLY_LINE_MAX = 1023, /* one PMI-1 reply line, '\n' included: MPICH's
                                    * PMIU_MAXLINE read buffer is 1024 bytes */
    PG_PMI1_MCMD_MAX = 256 * 1024, /* one mcmd=spawn ... endcmd block */
    PG_PMI2_KEYLEN_MAX = 64,      /* Slurm pmi2.h PMI2_MAX_KEYLEN */
    PG_PMI2_VALLEN_MAX = 1024,    /* Slurm pmi2.h PMI2_MAX_VALLEN */
    PG_PMI2_BODY_MAX = 64 * 1024 + 6, /* PMII_MAX_COMMAND_LEN, plus M4.0's off-by-6 */
    PG_MSG_INLINE_TOKENS = 16,    /* tokens held without a heap allocation */
    PG_MSG_MAX_TOKENS = 4096,     /* spawn with 1024+ args still fits */
    PG_PMI2_LENGTH_FIELD = 6,     /* bytes of the PMI-2 length prefix */
    PG_PMI2_JUNK_MAX = 6,         /* trailing junk tolerated (M4.0 off-by-6) */
};

typedef enum pg_wire_err {
    PG_WIRE_OK = 0,
    PG_WIRE_ENEED_MORE = -1,     /* framer: the message is not complete yet */
    PG_WIRE_ENOMEM = -2,
    /* framing errors: the byte stream cannot be resynchronised */
    PG_WIRE_ELINE_TOO_LONG = -10, /* PMI-1 line over PG_PMI1_LINE_MAX */
    PG_WIRE_EMCMD_TOO_LONG = -11, /* mcmd block over PG_PMI1_MCMD_MAX */
    PG_WIRE_EBAD_LENGTH = -12,    /* PMI-2 length field not a padded decimal */
    PG_WIRE_ELENGTH_TOO_BIG = -13, /* PMI-2 length over PG_PMI2_BODY_MAX */
    PG_WIRE_EBAD_START = -14,     /* neither "cmd=", "mcmd=" nor a length */
    /* message errors: the message was framed; the peer can be answered */
    PG_WIRE_ESYNTAX = -20,        /* not cmd=... / bad key=value structure */
    PG_WIRE_ETOO_MANY_TOKENS = -21,
    PG_WIRE_EKEY_TOO_LONG = -22,  /* value of key= (or name=, service=) too long */
    PG_WIRE_EVAL_TOO_LONG = -23,  /* value of value= (or port=) too long */
    PG_WIRE_EKVSNAME_TOO_LONG = -24, /* value of kvsname= / jobid= too long */
    PG_WIRE_EOVERFLOW = -30,      /* encoder: caller buffer too small */
    PG_WIRE_EINVAL = -31,         /* encoder: value cannot be represented */
} pg_wire_err_t;

/* A byte string that is NOT NUL-terminated; ptr points into the receive buffer. */
typedef struct pg_str {
    const char *ptr;
    uint32_t len;
} pg_str_t;

typedef struct pg_token {
    pg_str_t key;
    pg_str_t val;   /* val.ptr == NULL: the token had no '=' (tolerated in replies) */
} pg_token_t;

/* One parsed message.  Initialise with pg_msg_init(), release with
 * pg_msg_release() (frees the token array only if it outgrew the inline one).
 * A pg_msg_t may be parsed into again and again (the heap array is reused);
 * never copy one by value: `tokens` may point at its own inline array. */
typedef struct pg_msg {
    pg_proto_t proto;
    pg_cmd_t cmd;
    pg_str_t name;           /* the command name as sent (for unknown commands) */
    pg_wire_err_t limit_err; /* first limit violated, PG_WIRE_OK if none */
    const char *err_reason;  /* static text for a parse or limit error, else NULL */
    uint32_t ntokens;        /* tokens after cmd= (cmd= itself is not a token) */
    uint32_t cap;
    pg_token_t *tokens;      /* inline_tokens or a heap array */
    pg_token_t inline_tokens[PG_MSG_INLINE_TOKENS];
} pg_msg_t;

void pg_msg_init(pg_msg_t *msg);
void pg_msg_release(pg_msg_t *msg);

/* Returns the token whose key is `key`, or NULL.  Linear over a handful of
 * tokens; the first match wins. */
const pg_token_t *pg_msg_find(const pg_msg_t *msg, const char *key);

/* The value of token `key`; {NULL, 0} when absent (or present without '='). */
pg_str_t pg_msg_get(const pg_msg_t *msg, const char *key);

/* A PMI-2 request's operation id as one token text, "thrid=<v>" or
 * "opid=<v>" (key, '=', value: contiguous in the receive buffer), for the
 * reply to echo; {NULL, 0} when the request has neither. */
pg_str_t pg_msg_op_id(const pg_msg_t *msg);

const char *pg_cmd_name(pg_cmd_t cmd);     /* "kvs-get", or "?" */
const char *pg_cmd_enum_name(pg_cmd_t cmd); /* "PMI2_KVS_GET", or "UNKNOWN" */
pg_proto_t pg_cmd_proto(pg_cmd_t cmd);
pg_dir_t pg_cmd_dir(pg_cmd_t cmd);
const char *pg_proto_name(pg_proto_t proto); /* "PMI-1", "PMI-2", ... */
const char *pg_wire_strerror(int err);     /* text for a pg_wire_err_t */

/* Compares a token value with a C string (1 if equal, else 0).  A NULL
 * s.ptr (token without '=') equals nothing. */
int pg_str_eq(pg_str_t s, const char *cstr);

/* Reads a decimal integer (optional '-', digits, nothing else) that fits a
 * long: 0 and *out set, or PG_WIRE_ESYNTAX.  For rc=, rank=, size=, ... */
int pg_str_to_long(pg_str_t s, long *out);

/* Reads a PMI boolean: exactly "TRUE" or "FALSE" (case-sensitive, as hydra
 * and the MPICH/Slurm clients compare): 0 and *out set, or PG_WIRE_ESYNTAX. */
int pg_str_to_bool(pg_str_t s, bool *out);

#endif
