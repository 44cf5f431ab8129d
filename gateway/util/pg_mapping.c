/*
 * pg_mapping: placement and PMI_process_mapping strings.  See pg_mapping.h.
 */
#include "gateway/util/pg_mapping.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int slots_valid(const int *slots, int nnodes)
{
    if (slots == NULL || nnodes < 1)
        return 0;
    for (int i = 0; i < nnodes; i++)
        if (slots[i] < 1)
            return 0;
    return 1;
}

int pg_layout_fill(const int *slots, int nnodes, int nranks, int *node_of_rank)
{
    int rank = 0;

    if (!slots_valid(slots, nnodes) || nranks < 0)
        return -1;
    while (rank < nranks) {
        for (int node = 0; node < nnodes && rank < nranks; node++)
            for (int k = 0; k < slots[node] && rank < nranks; k++)
                node_of_rank[rank++] = node;
    }
    return 0;
}

/* Ranks node i receives in the first pass over the nodes. */
static int first_pass_count(const int *slots, int node, int *remaining)
{
    int n = slots[node] < *remaining ? slots[node] : *remaining;

    *remaining -= n;
    return n;
}

int pg_mapping_format(const int *slots, int nnodes, int nranks, char *buf, size_t buflen)
{
    int remaining = nranks;
    size_t cap, len;
    int node = 0;

    if (!slots_valid(slots, nnodes) || nranks < 1 || buf == NULL || buflen < 1)
        return -1;
    cap = buflen - 1 < PG_MAPPING_MAX ? buflen - 1 : PG_MAPPING_MAX;
    len = (size_t)snprintf(buf, buflen, "(vector");
    if (len >= cap)
        goto too_long;
    while (node < nnodes && remaining > 0) {
        int start = node;
        int ppn = first_pass_count(slots, node, &remaining);
        int n;

        node++;
        /* extend the block while the next node receives the same count */
        while (node < nnodes && remaining > 0 &&
               (slots[node] < remaining ? slots[node] : remaining) == ppn) {
            first_pass_count(slots, node, &remaining);
            node++;
        }
        n = snprintf(buf + len, buflen - len, ",(%d,%d,%d)", start, node - start, ppn);
        if (n < 0 || len + (size_t)n >= cap)
            goto too_long;
        len += (size_t)n;
    }
    if (len + 1 > cap)
        goto too_long;
    buf[len++] = ')';
    buf[len] = '\0';
    return (int)len;
too_long:
    buf[0] = '\0';
    return 0;
}

typedef struct map_block {
    long start, nnodes, ppn;
} map_block_t;

/* Parses "(a,b,c)" at *p; advances *p past it. */
static int parse_block(const char **p, map_block_t *b)
{
    long v[3];
    const char *s = *p;
    char *end;

    if (*s++ != '(')
        return -1;
    for (int i = 0; i < 3; i++) {
        while (*s == ' ')
            s++;
        if (*s < '0' || *s > '9')
            return -1;
        errno = 0;
        v[i] = strtol(s, &end, 10);
        if (errno != 0 || v[i] > 1 << 24)
            return -1;
        s = end;
        while (*s == ' ')
            s++;
        if (*s++ != (i < 2 ? ',' : ')'))
            return -1;
    }
    b->start = v[0];
    b->nnodes = v[1];
    b->ppn = v[2];
    *p = s;
    return 0;
}

/* Assigns ranks for blocks[from..n); returns how many ranks it placed. */
static int decode_pass(const map_block_t *blocks, int from, int n, int *rank, int nranks,
                       int *node_of_rank)
{
    int placed = 0;

    for (int b = from; b < n && *rank < nranks; b++)
        for (long node = 0; node < blocks[b].nnodes && *rank < nranks; node++)
            for (long k = 0; k < blocks[b].ppn && *rank < nranks; k++) {
                node_of_rank[(*rank)++] = (int)(blocks[b].start + node);
                placed++;
            }
    return placed;
}

int pg_mapping_decode(const char *mapping, int nranks, int *node_of_rank)
{
    map_block_t blocks[PG_MAPPING_MAX / 6]; /* a block takes at least 6 bytes */
    const char *p = mapping;
    int nblocks = 0, rank = 0, restart = -1;

    if (mapping == NULL || strncmp(p, "(vector", 7) != 0)
        return -1;
    p += 7;
    while (*p == ',') {
        p++;
        if (nblocks == (int)(sizeof(blocks) / sizeof(blocks[0])) ||
            parse_block(&p, &blocks[nblocks]) != 0)
            return -1;
        if (restart < 0 && blocks[nblocks].start == 0)
            restart = nblocks;
        nblocks++;
    }
    if (p[0] != ')' || p[1] != '\0' || nblocks == 0)
        return -1;
    if (decode_pass(blocks, 0, nblocks, &rank, nranks, node_of_rank) == 0 && rank < nranks)
        return -1;
    while (rank < nranks) {
        if (restart < 0 || decode_pass(blocks, restart, nblocks, &rank, nranks, node_of_rank) == 0)
            return -1;
    }
    return 0;
}
