/*
 * pg_mapping: rank placement over nodes and the PMI_process_mapping string
 * that describes it, `(vector,(start,nnodes,ppn),...)` (docs/wire-protocol.md,
 * "PMI_process_mapping").
 *
 * Pure functions, no I/O: the launcher feeds in the slots per node it decided
 * on (one node today, several when pmigate scales out), and the unit tests
 * check the strings against the ones hydra writes for the same layouts and
 * decode them back with MPICH's wrap-around rule.
 */
#ifndef PG_MAPPING_H
#define PG_MAPPING_H

#include <stddef.h>

/* Longest mapping we hand out: clients reject values over 1024 bytes. */
enum { PG_MAPPING_MAX = 1024 };

/* Fills node_of_rank[0..nranks) the way hydra places ranks: node 0 gets
 * slots[0] consecutive ranks, node 1 the next slots[1], ...; when every
 * slot is used, placement starts again at node 0.  Returns 0, or -1 when
 * nnodes < 1 or a slot count is < 1. */
int pg_layout_fill(const int *slots, int nnodes, int nranks, int *node_of_rank);

/* Writes the mapping for that layout into buf (NUL-terminated).  Runs of
 * nodes with equal slot counts share one block; a job smaller than the total
 * slots only names the nodes it reaches.  Returns the string length; 0 with
 * buf = "" when the mapping would not fit in min(buflen - 1, PG_MAPPING_MAX)
 * (clients then fall back to exchanging host names);
 * -1 for invalid arguments. */
int pg_mapping_format(const int *slots, int nnodes, int nranks, char *buf, size_t buflen);

/* Decodes a mapping with the wrap-around rule of MPICH (later passes start at
 * the first block whose start node is 0) into node_of_rank[0..nranks).
 * Returns 0, or -1 for a string that is not a legacy-syntax mapping. */
int pg_mapping_decode(const char *mapping, int nranks, int *node_of_rank);

#endif
