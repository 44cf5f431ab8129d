/*
 * pg_replay_pmix: what `pmigate replay` does to single PMIx messages — the
 * PMIx counterpart of pg_replay_msg.h.
 *
 * Why apart: PMIx payloads are pg_pack groups with length-prefixed strings,
 * so the kvsname cannot be substituted in the bytes as in a PMI line; a
 * request is unpacked group by group with the pack library, its namespaces
 * (and, for --ranks, its ranks and per-rank key names) changed, and packed
 * again.  Replies are compared decoded (pg_trace_pmix.h), field by field, so
 * a mismatch names the argument that differs.
 *
 * Volatile, not compared: the recorded namespace (replaced by the new one
 * wherever it appears: procs, strings, values), and the values of keys that
 * depend on the machine (pg_trace_pmix_key_is_volatile: host names, node
 * lists, cpusets, locality), also when they are the answer to a get.
 * Request ids are compared: a replay sends the recorded ones.
 */
#ifndef PG_REPLAY_PMIX_H
#define PG_REPLAY_PMIX_H

#include <stddef.h>

#include "trace/pg_replay_msg.h"

/* Rewrites one recorded PMIx request (a preamble, or a frame with its
 * length) for the replayed job.  Returns 0 with *out (malloc'd, caller
 * frees) and *outlen — the recorded bytes themselves when nothing needed to
 * change or the request does not decode (it is then replayed as it was) —
 * or -1 when out of memory. */
int pg_replay_pmix_rewrite(const pg_replay_map_t *m, const char *in, size_t len, char **out,
                           size_t *outlen);

/* Compares a received reply with the recorded one.  `request` (may be NULL)
 * is the recorded request it answers: a get of a volatile key is compared
 * without its value.  `lenient` (--ranks): command, request id and status
 * only.  Returns 0 on a match; 1 with the first difference in why. */
int pg_replay_pmix_compare(const pg_replay_map_t *m, const char *request, size_t rlen,
                           const char *expected, size_t elen, const char *got, size_t glen,
                           int lenient, char *why, size_t whylen);

/* A request id and whether the bytes are a reply header at all: 0 and *id,
 * or -1. */
int pg_replay_pmix_reply_id(const char *bytes, size_t len, unsigned *id);

#endif
