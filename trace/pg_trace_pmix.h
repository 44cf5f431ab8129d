/*
 * pg_trace_pmix: what a traced PMIx message says (docs/pmix-transport.md),
 * for `pmigate trace show`, the analysis (pairing by request id, phases,
 * fences) and the replayer's comparison.
 *
 * Why it exists: a PMIx frame is binary (pg_pack groups), so the trace keeps
 * it as escaped bytes; people and tools need it decoded — the command, the
 * request id, the arguments with their names (keys, procs, info keys and
 * values), the reply status.  Decoding goes through the transport's own
 * codec (wire/pg_pmix_msg.h) and the pack library, so the trace
 * reads exactly what the gateway read.
 *
 * A message decodes into a flat list of fields (an argument, or one element
 * of an array argument), so a comparison can name the first field that
 * differs and a listing can print them in order.  Undecodable bytes never
 * crash: decoding stops with a reason in `error`.
 *
 * Ownership: a pg_trace_pmix_msg_t owns its fields (release with
 * pg_trace_pmix_msg_release); formatted strings are malloc'd for the caller.
 */
#ifndef PG_TRACE_PMIX_H
#define PG_TRACE_PMIX_H

#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

/* What kind of PMIx message a traced line holds. */
typedef enum pg_trace_pmix_kind {
    PG_TRACE_PMIX_BAD = 0,  /* neither a preamble nor a decodable frame header */
    PG_TRACE_PMIX_PREAMBLE, /* the 12-byte 0x89 "PGX" opening */
    PG_TRACE_PMIX_REQUEST,  /* client -> gateway frame */
    PG_TRACE_PMIX_REPLY,    /* gateway -> client frame */
} pg_trace_pmix_kind_t;

/* The header of a message: enough for pairing and phases. */
typedef struct pg_trace_pmix_head {
    pg_trace_pmix_kind_t kind;
    int cmd;               /* pg_pmix_cmd_t; 0 when unknown */
    uint32_t id;           /* request id (requests and replies) */
    pmix_status_t status;  /* replies only */
    uint32_t rank;         /* preamble only: PG_PMIX_RANK_FROM_FD or the rank */
} pg_trace_pmix_head_t;

/* One decoded argument, or one element of an array argument. */
typedef struct pg_trace_pmix_field {
    const char *arg;         /* the argument's name ("proc", "key", "job", ...): static */
    int index;               /* -1 a scalar; >= 0 the element's index; -2 an empty array */
    char *item;              /* an element's key (info, pdata, put), or NULL: owned */
    pmix_data_type_t type;   /* the value's type (PMIX_UNDEF for an empty array) */
    char *value;             /* the value as text (strings quoted): owned; NULL if empty */
} pg_trace_pmix_field_t;

typedef struct pg_trace_pmix_msg {
    pg_trace_pmix_head_t head;
    pg_trace_pmix_field_t *fields;
    size_t nfields, cap;
    char error[128];         /* "" when every byte was decoded */
} pg_trace_pmix_msg_t;

/* Length of the first whole preamble or frame in bytes[0..len), or 0 when
 * there is none (a batch of replies is split with this). */
size_t pg_trace_pmix_first(const char *bytes, size_t len);

/* Reads the header of one traced message (a preamble, or one frame with its
 * 4-byte length).  `from_client` says which way it went.  Returns 0, or -1
 * with h->kind = PG_TRACE_PMIX_BAD. */
int pg_trace_pmix_head(const char *bytes, size_t len, int from_client, pg_trace_pmix_head_t *h);

/* Decodes a whole message into m (zero it first).  Returns 0 when fully
 * decoded, -1 when decoding stopped (m->error says why; the fields decoded
 * so far stay) or memory ran out. */
int pg_trace_pmix_decode(const char *bytes, size_t len, int from_client, pg_trace_pmix_msg_t *m);
void pg_trace_pmix_msg_release(pg_trace_pmix_msg_t *m);

/* The message in one readable line, e.g.
 *   get #4 proc=kvs_1_0:0 key="mix1-0" info={} nonblocking=false
 *   get #4 SUCCESS value="pmi1-0-round1" poster=0
 * malloc'd, or NULL when out of memory. */
char *pg_trace_pmix_format(const pg_trace_pmix_msg_t *m);

/* A field's value with its type for messages: "UINT32 6". malloc'd. */
char *pg_trace_pmix_field_text(const pg_trace_pmix_field_t *f);

/* 1 when a traced PMIx fence request is over the whole namespace `kvsname`
 * (no procs, or that namespace's wildcard): a job-wide fence like a PMI-1
 * barrier.  0 for a fence over some ranks, or bytes that do not decode. */
int pg_trace_pmix_fence_is_whole(const char *bytes, size_t len, const char *kvsname);

/* Keys whose values depend on the machine the job ran on (host names, node
 * lists, cpusets, locality): a replay elsewhere legitimately differs. */
int pg_trace_pmix_key_is_volatile(const char *key);

#endif
