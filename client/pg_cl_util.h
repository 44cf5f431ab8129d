/*
 * pg_cl_util: small pieces both client libraries need to turn wire values
 * into API results: copying a token into a caller's buffer, integer lists
 * ("1,2,3" for the *IntArray calls) and PMI_process_mapping, the
 * "(vector,(start,nnodes,ppn),...)" string that says which ranks share a node
 * (docs/wire-protocol.md, "PMI_process_mapping", with the wrap-around rule).
 */
#ifndef PG_CL_UTIL_H
#define PG_CL_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/pg_wire.h"

/* Copies s into dst (NUL-terminated) when it fits in cap bytes: 0, or -1
 * (dst then holds the truncated prefix, still terminated if cap > 0). */
int pg_cl_copy(pg_str_t s, char *dst, size_t cap);

/* Parses up to max comma-separated integers; *count = how many were read.
 * 0, or -1 on a malformed list (nothing but digits, '-', ',' and blanks). */
int pg_cl_int_list(pg_str_t s, int *out, int max, int *count);

/* Fills node_of[0..size) with each rank's node index from a mapping
 * string.  0, or -1 when the string does not parse or assigns no rank. */
int pg_cl_mapping_nodes(const char *mapping, int size, int *node_of);

/* The ranks on rank's node (ascending) into ranks[0..max), *count of them
 * (which may exceed max: then only max are written).  A missing or
 * unparsable mapping makes the process its own clique.  0, or -1 on bad
 * arguments or out of memory. */
int pg_cl_mapping_clique(const char *mapping, int rank, int size, int *ranks, int max, int *count);

#endif
