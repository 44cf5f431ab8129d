/*
 * pg_cl_io: the socket end of a PMI client library — finding the server from
 * the environment (PMI_FD, else PMI_PORT, else singleton: docs/wire-protocol.md,
 * "Connections"), sending whole requests, and reading replies one framed
 * message at a time with the shared codec (wire/pg_frame.h), whatever size
 * the pieces arrive in.  Shared by libpmi and libpmi2.
 */
#ifndef PG_CL_IO_H
#define PG_CL_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/pg_frame.h"

/* How this process reaches its process manager. */
typedef enum pg_cl_mode {
    PG_CL_SINGLETON = 0, /* no PMI environment: serve everything locally */
    PG_CL_FD,            /* PMI_FD: a pre-connected socket */
    PG_CL_PORT,          /* PMI_PORT=host:port (and PMI_ID) */
} pg_cl_mode_t;

/* What the launcher told us.  Strings point into the environment. */
typedef struct pg_cl_env {
    pg_cl_mode_t mode;
    int fd;              /* PMI_FD, or the socket connected to PMI_PORT */
    int id;              /* PMI_ID, -1 if unset */
    int rank;            /* PMI_RANK, -1 if unset */
    int size;            /* PMI_SIZE, -1 if unset */
    bool spawned;        /* PMI_SPAWNED is a non-zero integer */
    const char *jobid;   /* PMI_JOBID or NULL */
    bool pmigate_ext;    /* PMIGATE_PMI_EXT=1: the server is pmigate and
                          * understands its client extensions */
    const char *shm;     /* PMIGATE_SHM (with PMIGATE_PMI_EXT): the node's shared
                          * key segment; NULL when unset or empty */
} pg_cl_env_t;

/* Reads the environment and, in PMI_PORT mode, connects (TCP_NODELAY).
 * Returns 0, or -1 when a variable is malformed or the connect fails (the
 * caller must not fall back to singleton then: a launcher is present). */
int pg_cl_env_read(pg_cl_env_t *env);

/* One connection's receive side.  buf is owned; fd is not closed by
 * pg_cl_conn_release (the owner of the fd closes it). */
typedef struct pg_cl_conn {
    int fd;
    char *buf;
    size_t len;          /* bytes buffered */
    size_t cap;
    size_t last;         /* bytes of the message last returned, dropped on the next read */
} pg_cl_conn_t;

void pg_cl_conn_init(pg_cl_conn_t *c, int fd);
void pg_cl_conn_release(pg_cl_conn_t *c);

/* Writes all of data (EINTR-safe, no SIGPIPE).  0, or -errno. */
int pg_cl_send(int fd, const char *data, size_t len);

/* Makes the next whole message available at c->buf (described by *frame);
 * it stays valid (and may be modified by the parser) until the next call.
 * Returns 0; -EPIPE on EOF; -EPROTO when the stream cannot be framed;
 * -ENOMEM; or another -errno from read(). */
int pg_cl_conn_next(pg_cl_conn_t *c, pg_frame_t *frame);

#endif
