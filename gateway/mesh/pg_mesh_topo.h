/*
 * pg_mesh_topo: who links with whom in a job of k nodes, and which way a
 * frame goes (docs/proxy.md, "The mesh").  Pure arithmetic on node
 * numbers: no state, no I/O.
 *
 * Why this shape: a hub that relays every frame holds k - 1 links and
 * sends k - 1 copies of every node's fence data, which stops a job near a
 * thousand nodes.  Here node i links with i + 2^j and i - 2^j (mod k) for
 * every 2^j < k: at most 2 * ceil(log2 k) links a node (20 at 1 000 nodes,
 * 28 at 10 000), and every node reaches every other in at most
 * ceil(log2 k) hops:
 *   - a frame for node d leaves node i for i + 2^floor(log2((d - i) mod k)),
 *     the largest step that does not pass d;
 *   - a frame for every node spreads from its origin o down a binomial
 *     tree over the same links: the node at distance r = (i - o) mod k
 *     hands it to r + 2^m for every 2^m below r's lowest set bit (every
 *     2^m < k at the origin).
 * Both walk the bits of the distance from the highest down, so a frame
 * from o to d takes the same path whether it was sent to d or to all:
 * the frames between two nodes stay in the order they were sent.
 * The tree rooted at node 0 is also how the start-up and the end are
 * agreed: each node reports its subtree to its parent, r - lowbit(r).
 */
#ifndef PG_MESH_TOPO_H
#define PG_MESH_TOPO_H

#include <stdbool.h>

enum { PG_TOPO_LEVELS_MAX = 32 }; /* ceil(log2 k) for any int k */

/* ceil(log2 k): the hops a frame takes at most (0 for k <= 1). */
int pg_topo_levels(int k);

/* Do nodes a and b keep a link (a != b)? */
bool pg_topo_is_neighbour(int k, int a, int b);

/* The neighbours of `node`, each once, into out[2 * PG_TOPO_LEVELS_MAX];
 * returns how many. */
int pg_topo_neighbours(int k, int node, int *out);

/* The hop after `from` on the way to `to` (from != to): the largest step
 * 2^j <= the distance.  `skip` (may be NULL) says a node is not to be
 * used as a hop (it is gone from here; `to` itself too, when its link
 * from here is lost but others may still reach it): the next smaller
 * step is taken; -1 when every step is skipped. */
int pg_topo_next_hop(int k, int from, int to, bool (*skip)(void *arg, int node), void *arg);

/* In the tree spread from `root`: the node's parent (-1 for the root), and
 * its children into out[PG_TOPO_LEVELS_MAX] (returns how many). */
int pg_topo_parent(int k, int root, int node);
int pg_topo_children(int k, int root, int node, int *out);

#endif
