/*
 * pg_mesh_topo: the mesh's shape as arithmetic.  See pg_mesh_topo.h.
 */
#include "gateway/mesh/pg_mesh_topo.h"

#include <stddef.h>

/* (a - b) mod k, in [0, k) */
static int dist(int k, int a, int b)
{
    int d = (a - b) % k;

    return d < 0 ? d + k : d;
}

static bool power_of_two(int d)
{
    return d > 0 && (d & (d - 1)) == 0;
}

/* The highest power of two <= d (d > 0). */
static int high_bit(int d)
{
    int h = 1;

    while (h <= d / 2)
        h *= 2;
    return h;
}

int pg_topo_levels(int k)
{
    int levels = 0;

    while (levels < PG_TOPO_LEVELS_MAX - 1 && (1 << levels) < k)
        levels++;
    return levels;
}

bool pg_topo_is_neighbour(int k, int a, int b)
{
    return a != b && (power_of_two(dist(k, b, a)) || power_of_two(dist(k, a, b)));
}

int pg_topo_neighbours(int k, int node, int *out)
{
    int n = 0;

    for (int step = 1; step < k; step *= 2) {
        int cand[2] = { (node + step) % k, dist(k, node, step) };

        for (int c = 0; c < 2; c++) {
            bool seen = cand[c] == node;

            for (int i = 0; i < n && !seen; i++)
                seen = out[i] == cand[c];
            if (!seen)
                out[n++] = cand[c];
        }
    }
    return n;
}

int pg_topo_next_hop(int k, int from, int to, bool (*skip)(void *arg, int node), void *arg)
{
    int d = dist(k, to, from);

    if (d == 0)
        return -1;
    for (int step = high_bit(d); step >= 1; step /= 2) {
        int hop = (from + step) % k;

        if (skip == NULL || !skip(arg, hop))
            return hop;
    }
    return -1;
}

int pg_topo_parent(int k, int root, int node)
{
    int r = dist(k, node, root);

    return r == 0 ? -1 : (root + (r - (r & -r))) % k;
}

int pg_topo_children(int k, int root, int node, int *out)
{
    int r = dist(k, node, root), n = 0;
    int below = r == 0 ? k : (r & -r); /* the root: every step */

    for (int step = 1; step < below && r + step < k; step *= 2)
        out[n++] = (node + step) % k;
    return n;
}
