/*
 * pg_replay_msg: what `pmigate replay` does to single messages — rewriting a
 * recorded request for the new job (its kvsname, and with --ranks the rank
 * numbers and per-rank key names), and deciding whether a reply matches the
 * recorded one modulo what legitimately changes between runs.
 *
 * Kept apart from the replay loop (pg_replay.c) so the rules are unit
 * tested without sockets.  Messages are parsed with the wire codec and, when
 * a request must be rebuilt, encoded with it.
 */
#ifndef PG_REPLAY_MSG_H
#define PG_REPLAY_MSG_H

#include <stddef.h>

/* How the replayed job differs from the recorded one. */
typedef struct pg_replay_map {
    const char *old_kvs;  /* the recorded kvsname (NULL: no substitution) */
    const char *new_kvs;  /* the replay gateway's kvsname */
    int nrec;             /* --ranks: ranks in the recording (0: ranks are not renamed) */
    int block_base;       /* --ranks: this copy's first rank (target rank - recorded rank) */
} pg_replay_map_t;

/* Keys whose values differ between runs and are not compared. */
int pg_replay_key_is_volatile(const char *key, size_t len);

/* Rewrites one recorded request: every occurrence of old_kvs becomes
 * new_kvs (a PMI-2 length field is recomputed, keeping its alignment), and
 * with nrec > 0 the rank-valued keys (pmirank, pmiid, srcid) and a numeric
 * suffix of key= that names a recorded rank move to block_base + that rank.
 * The head of an over-long message, as the gateway traces it, is sent
 * completed to an over-long message with the same head.
 * Returns 0 with *out (malloc'd, caller frees) and *outlen, or -1 when out
 * of memory. */
int pg_replay_rewrite(const pg_replay_map_t *m, const char *in, size_t len, char **out,
                      size_t *outlen);

/* Compares a received reply with the recorded one (after substituting the
 * kvsname in the recorded one).  Same command, same keys, same values except
 * volatile keys; `lenient` (the --ranks load generator) compares only the
 * command, rc= and found=.  Returns 0 on a match; 1 on a mismatch with a
 * one-line description of the first difference in why. */
int pg_replay_compare(const pg_replay_map_t *m, const char *expected, size_t elen,
                      const char *got, size_t glen, int lenient, char *why, size_t whylen);

#endif
