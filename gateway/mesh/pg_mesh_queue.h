/*
 * pg_mesh_queue: frames held in this process, first in, first out -- a
 * node's frames to itself (pg_mesh.c's loopback) and the dynamic jobs'
 * messages that wait for the loop or for the node's run
 * (gateway/proxy/pg_proxy_dyn.c).
 *
 * The mesh also holds here the frames that wait for a link to come up.
 *
 * Why one queue for both: each keeps a frame's type, sender and a copy of
 * its body until its owner hands it on from the loop; one structure keeps
 * the order and the copying alike in both places.
 */
#ifndef PG_MESH_QUEUE_H
#define PG_MESH_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct pg_mesh_frame {
    struct pg_mesh_frame *next;
    unsigned type;
    int src;
    uint32_t dst;   /* pg_mesh_queue_push_to's; 0 otherwise */
    size_t len;
    unsigned char body[];
} pg_mesh_frame_t;

typedef struct pg_mesh_queue {
    pg_mesh_frame_t *head, **tail;
} pg_mesh_queue_t;

void pg_mesh_queue_init(pg_mesh_queue_t *q);
/* A copy of the frame at the end.  0, or -1 (out of memory). */
int pg_mesh_queue_push(pg_mesh_queue_t *q, unsigned type, int src, const void *body, size_t len);
/* The same, with its destination (a frame waiting for a link). */
int pg_mesh_queue_push_to(pg_mesh_queue_t *q, unsigned type, int src, uint32_t dst,
                          const void *body, size_t len);
/* The first frame, taken off (the caller frees it), or NULL. */
pg_mesh_frame_t *pg_mesh_queue_pop(pg_mesh_queue_t *q);
/* Frees every frame left. */
void pg_mesh_queue_clear(pg_mesh_queue_t *q);

#endif
