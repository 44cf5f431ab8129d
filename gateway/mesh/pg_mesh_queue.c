/*
 * pg_mesh_queue: frames held in this process.  See pg_mesh_queue.h.
 */
#include "gateway/mesh/pg_mesh_queue.h"

#include <stdlib.h>
#include <string.h>

void pg_mesh_queue_init(pg_mesh_queue_t *q)
{
    q->head = NULL;
    q->tail = &q->head;
}

int pg_mesh_queue_push(pg_mesh_queue_t *q, unsigned type, int src, const void *body, size_t len)
{
    return pg_mesh_queue_push_to(q, type, src, 0, body, len);
}

int pg_mesh_queue_push_to(pg_mesh_queue_t *q, unsigned type, int src, uint32_t dst,
                          const void *body, size_t len)
{
    pg_mesh_frame_t *f = malloc(sizeof(*f) + len);

    if (f == NULL)
        return -1;
    *f = (pg_mesh_frame_t){ .type = type, .src = src, .dst = dst, .len = len };
    if (len > 0)
        memcpy(f->body, body, len);
    *q->tail = f;
    q->tail = &f->next;
    return 0;
}

pg_mesh_frame_t *pg_mesh_queue_pop(pg_mesh_queue_t *q)
{
    pg_mesh_frame_t *f = q->head;

    if (f == NULL)
        return NULL;
    q->head = f->next;
    if (q->head == NULL)
        q->tail = &q->head;
    f->next = NULL;
    return f;
}

void pg_mesh_queue_clear(pg_mesh_queue_t *q)
{
    pg_mesh_frame_t *f;

    while ((f = pg_mesh_queue_pop(q)) != NULL)
        free(f);
}
