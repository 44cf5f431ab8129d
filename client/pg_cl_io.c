/*
 * pg_cl_io: environment discovery, whole-request writes and framed reads for
 * the PMI client libraries (see pg_cl_io.h).
 */
#include "client/pg_cl_io.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { PG_CL_READ_CHUNK = 4096 };

/* An environment integer: *out = value, 1 if set and valid, 0 if unset, -1 if malformed. */
static int env_int(const char *name, int *out)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return 0;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 1;
}

/* Connects to "host:port", split at the first ':' as every PMI client does. */
static int connect_hostport(const char *hostport)
{
    const char *colon = strchr(hostport, ':');
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL, *ai;
    char host[256];
    int fd = -1, one = 1;

    if (colon == NULL || (size_t)(colon - hostport) >= sizeof(host))
        return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        return -1;
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

int pg_cl_env_read(pg_cl_env_t *env)
{
    const char *port = getenv("PMI_PORT"), *ext = getenv("PMIGATE_PMI_EXT");
    int spawned = 0, have_fd;

    memset(env, 0, sizeof(*env));
    env->fd = env->id = env->rank = env->size = -1;
    env->jobid = getenv("PMI_JOBID");
    env->pmigate_ext = ext != NULL && strcmp(ext, "1") == 0;
    env->shm = env->pmigate_ext ? getenv("PMIGATE_SHM") : NULL;
    if (env->shm != NULL && env->shm[0] == '\0')
        env->shm = NULL;
    if (env_int("PMI_ID", &env->id) < 0 || env_int("PMI_RANK", &env->rank) < 0 ||
        env_int("PMI_SIZE", &env->size) < 0 || env_int("PMI_SPAWNED", &spawned) < 0)
        return -1;
    env->spawned = spawned != 0;
    have_fd = env_int("PMI_FD", &env->fd);
    if (have_fd < 0 || (have_fd > 0 && env->fd < 0))
        return -1;
    if (have_fd > 0) {
        env->mode = PG_CL_FD;
        return 0;
    }
    if (port != NULL && *port != '\0') {
        env->mode = PG_CL_PORT;
        env->fd = connect_hostport(port);
        return env->fd < 0 ? -1 : 0;
    }
    env->mode = PG_CL_SINGLETON;
    return 0;
}

void pg_cl_conn_init(pg_cl_conn_t *c, int fd)
{
    memset(c, 0, sizeof(*c));
    c->fd = fd;
}

void pg_cl_conn_release(pg_cl_conn_t *c)
{
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = c->last = 0;
}

int pg_cl_send(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

        if (n < 0 && errno == ENOTSOCK)
            n = write(fd, data, len); /* a pipe in a test harness */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Drops the message handed out last, keeping what followed it. */
static void conn_drop_last(pg_cl_conn_t *c)
{
    if (c->last == 0)
        return;
    memmove(c->buf, c->buf + c->last, c->len - c->last);
    c->len -= c->last;
    c->last = 0;
}

static int conn_fill(pg_cl_conn_t *c)
{
    ssize_t n;

    if (c->cap - c->len < PG_CL_READ_CHUNK) {
        size_t cap = c->cap ? c->cap * 2 : 2 * PG_CL_READ_CHUNK;
        char *buf = realloc(c->buf, cap);

        if (buf == NULL)
            return -ENOMEM;
        c->buf = buf;
        c->cap = cap;
    }
    do
        n = read(c->fd, c->buf + c->len, c->cap - c->len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n == 0)
        return -EPIPE;
    c->len += (size_t)n;
    return 0;
}

int pg_cl_conn_next(pg_cl_conn_t *c, pg_frame_t *frame)
{
    conn_drop_last(c);
    for (;;) {
        int rc = c->len ? pg_frame_next(c->buf, c->len, frame) : PG_WIRE_ENEED_MORE;

        if (rc == PG_WIRE_OK) {
            c->last = frame->consumed;
            return 0;
        }
        if (rc != PG_WIRE_ENEED_MORE)
            return -EPROTO;
        if ((rc = conn_fill(c)) != 0)
            return rc;
    }
}
