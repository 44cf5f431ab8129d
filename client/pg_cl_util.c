/*
 * pg_cl_util: buffer copies, integer lists and process-mapping arithmetic for
 * the client libraries (see pg_cl_util.h).
 */
#include "client/pg_cl_util.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int pg_cl_copy(pg_str_t s, char *dst, size_t cap)
{
    size_t n = s.len;

    if (cap == 0)
        return -1;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, s.ptr, n);
    dst[n] = '\0';
    return n == s.len ? 0 : -1;
}

int pg_cl_int_list(pg_str_t s, int *out, int max, int *count)
{
    size_t i = 0;

    *count = 0;
    while (i < s.len) {
        long v = 0;
        bool neg = false, digits = false;

        while (i < s.len && s.ptr[i] == ' ')
            i++;
        if (i < s.len && s.ptr[i] == '-') {
            neg = true;
            i++;
        }
        for (; i < s.len && isdigit((unsigned char)s.ptr[i]); i++) {
            digits = true;
            v = v * 10 + (s.ptr[i] - '0');
            if (v > INT_MAX)
                return -1;
        }
        while (i < s.len && s.ptr[i] == ' ')
            i++;
        if (!digits || (i < s.len && s.ptr[i] != ','))
            return -1;
        if (*count < max)
            out[*count] = (int)(neg ? -v : v);
        (*count)++;
        if (i < s.len && ++i == s.len)
            return -1; /* trailing comma */
    }
    return 0;
}

typedef struct map_block {
    long start, nnodes, ppn;
} map_block_t;

/* Reads "(a,b,c)" at *p into b; advances *p. */
static int read_block(const char **p, map_block_t *b)
{
    char *end;
    long v[3];

    if (**p != '(')
        return -1;
    (*p)++;
    for (int i = 0; i < 3; i++) {
        while (**p == ' ')
            (*p)++;
        v[i] = strtol(*p, &end, 10);
        if (end == *p || v[i] < 0 || v[i] > INT_MAX)
            return -1;
        *p = end;
        while (**p == ' ')
            (*p)++;
        if (**p != (i < 2 ? ',' : ')'))
            return -1;
        (*p)++;
    }
    b->start = v[0];
    b->nnodes = v[1];
    b->ppn = v[2];
    return 0;
}

/* Parses the legacy "(vector,(s,n,p),...)" form; *out is malloc'd. */
static int parse_blocks(const char *mapping, map_block_t **out, int *nblocks)
{
    const char *p = mapping;
    map_block_t *blocks = NULL;
    int n = 0, cap = 0;

    while (*p == ' ')
        p++;
    if (strncmp(p, "(vector", 7) != 0)
        return -1;
    p += 7;
    while (*p == ',') {
        p++;
        while (*p == ' ')
            p++;
        if (n == cap) {
            map_block_t *grown = realloc(blocks, (size_t)(cap = cap ? cap * 2 : 8) * sizeof(*grown));

            if (grown == NULL)
                goto fail;
            blocks = grown;
        }
        if (read_block(&p, &blocks[n]) != 0)
            goto fail;
        n++;
    }
    if (*p != ')' || n == 0)
        goto fail;
    *out = blocks;
    *nblocks = n;
    return 0;
fail:
    free(blocks);
    return -1;
}

int pg_cl_mapping_nodes(const char *mapping, int size, int *node_of)
{
    map_block_t *blocks;
    int nblocks, assigned = 0, restart = -1, first = 0;

    if (mapping == NULL || size <= 0 || parse_blocks(mapping, &blocks, &nblocks) != 0)
        return -1;
    /* later passes restart at the first block whose start node is 0; a
     * block without processes is skipped whole, however many nodes it
     * names (the string is the server's) */
    for (int b = 0; b < nblocks && restart < 0; b++)
        if (blocks[b].start == 0)
            restart = b;
    while (assigned < size) {
        int before = assigned;

        for (int b = first; b < nblocks && assigned < size; b++)
            for (long n = 0; blocks[b].ppn > 0 && n < blocks[b].nnodes && assigned < size; n++)
                for (long k = 0; k < blocks[b].ppn && assigned < size; k++)
                    node_of[assigned++] = (int)(blocks[b].start + n);
        if (assigned == before || restart < 0)
            break; /* no progress, or nothing to wrap to */
        first = restart;
    }
    free(blocks);
    return assigned == size ? 0 : -1;
}

int pg_cl_mapping_clique(const char *mapping, int rank, int size, int *ranks, int max, int *count)
{
    int *node_of;

    if (rank < 0 || rank >= size || max < 0)
        return -1;
    node_of = malloc((size_t)size * sizeof(int));
    if (node_of == NULL)
        return -1;
    *count = 0;
    if (pg_cl_mapping_nodes(mapping, size, node_of) != 0) {
        if (max > 0)
            ranks[0] = rank;
        *count = 1;
    } else {
        for (int r = 0; r < size; r++) {
            if (node_of[r] != node_of[rank])
                continue;
            if (*count < max)
                ranks[*count] = r;
            (*count)++;
        }
    }
    free(node_of);
    return 0;
}
