/*
 * fake_server: the scripted PMI server thread of the client unit tests (see
 * fake_server.h).  It frames the client's bytes with the shared framer, like
 * every other pmigate reader.
 */
#include "tests/clients/fake_server.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/pg_cl_io.h"

struct pg_fake_server {
    pthread_t thread;
    pg_cl_conn_t conn;
    pg_fake_script_fn fn;
    void *arg;
    int failures;
};

static void *fake_main(void *p)
{
    pg_fake_server_t *srv = p;

    srv->fn(srv, srv->arg);
    return NULL;
}

pg_fake_server_t *pg_fake_server_new(pg_fake_script_fn fn, void *arg, int *client_fd)
{
    pg_fake_server_t *srv = calloc(1, sizeof(*srv));
    int sv[2];

    if (srv == NULL || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        free(srv);
        return NULL;
    }
    pg_cl_conn_init(&srv->conn, sv[1]);
    srv->fn = fn;
    srv->arg = arg;
    *client_fd = sv[0];
    return srv;
}

int pg_fake_server_go(pg_fake_server_t *srv)
{
    if (pthread_create(&srv->thread, NULL, fake_main, srv) != 0) {
        pg_fake_close(srv);
        pg_cl_conn_release(&srv->conn);
        free(srv);
        return -1;
    }
    return 0;
}

pid_t pg_fake_server_fork(pg_fake_server_t *srv)
{
    pid_t pid;

    fflush(NULL); /* nothing buffered is written twice */
    pid = fork();
    if (pid == 0)
        pg_fake_close(srv); /* the server's end is the parent's */
    return pid;
}

pg_fake_server_t *pg_fake_server_start(pg_fake_script_fn fn, void *arg, int *client_fd)
{
    pg_fake_server_t *srv = pg_fake_server_new(fn, arg, client_fd);

    if (srv == NULL)
        return NULL;
    if (pg_fake_server_go(srv) != 0) {
        close(*client_fd);
        return NULL;
    }
    return srv;
}

void pg_fake_close(pg_fake_server_t *srv)
{
    if (srv->conn.fd >= 0)
        close(srv->conn.fd);
    srv->conn.fd = -1;
}

int pg_fake_server_join(pg_fake_server_t *srv)
{
    int failures;

    pthread_join(srv->thread, NULL);
    pg_fake_close(srv);
    pg_cl_conn_release(&srv->conn);
    failures = srv->failures;
    free(srv);
    return failures;
}

void pg_fake_fail(pg_fake_server_t *srv, const char *what)
{
    fprintf(stderr, "fake server: %s\n", what);
    srv->failures++;
}

int pg_fake_recv(pg_fake_server_t *srv, char *buf, size_t cap)
{
    pg_frame_t f;

    if (srv->conn.fd < 0 || pg_cl_conn_next(&srv->conn, &f) != 0 || f.body_len >= cap)
        return -1;
    memcpy(buf, srv->conn.buf + f.body_off, f.body_len);
    buf[f.body_len] = '\0';
    return (int)f.body_len;
}

bool pg_fake_readable(pg_fake_server_t *srv, int ms)
{
    struct pollfd p = { .fd = srv->conn.fd, .events = POLLIN };

    if (srv->conn.len > srv->conn.last)
        return true; /* bytes already buffered after the last message */
    return srv->conn.fd >= 0 && poll(&p, 1, ms) > 0;
}

int pg_fake_expect(pg_fake_server_t *srv, const char *cmd, char *buf, size_t cap)
{
    char got[64], what[160];
    int n = pg_fake_recv(srv, buf, cap);

    if (n < 0) {
        snprintf(what, sizeof(what), "expected cmd=%s, got EOF", cmd);
        pg_fake_fail(srv, what);
        return -1;
    }
    if ((pg_fake_value(buf, "cmd", got, sizeof(got)) != 0 &&
         pg_fake_value(buf, "mcmd", got, sizeof(got)) != 0) || strcmp(got, cmd) != 0) {
        snprintf(what, sizeof(what), "expected cmd=%s, got '%.100s'", cmd, buf);
        pg_fake_fail(srv, what);
    }
    return n;
}

void pg_fake_send_raw(pg_fake_server_t *srv, const char *bytes)
{
    if (srv->conn.fd >= 0 && pg_cl_send(srv->conn.fd, bytes, strlen(bytes)) != 0)
        pg_fake_fail(srv, "write failed");
}

static void send_framed(pg_fake_server_t *srv, const char *fmt, const char *body)
{
    size_t len = strlen(body);
    char *msg = malloc(len + 7);

    if (msg == NULL)
        return;
    snprintf(msg, 7, fmt, (int)len);
    memcpy(msg + 6, body, len + 1);
    pg_fake_send_raw(srv, msg);
    free(msg);
}

void pg_fake_send_pmi2(pg_fake_server_t *srv, const char *body)
{
    send_framed(srv, "%6d", body);
}

void pg_fake_send_pmi2_left(pg_fake_server_t *srv, const char *body)
{
    send_framed(srv, "%-6d", body);
}

int pg_fake_value(const char *msg, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);

    for (const char *p = msg; *p; p++) {
        size_t n;

        if ((p != msg && p[-1] != ' ' && p[-1] != ';' && p[-1] != '\n') ||
            strncmp(p, key, klen) != 0 || p[klen] != '=')
            continue;
        p += klen + 1;
        n = strcspn(p, " ;\n");
        if (n >= cap)
            n = cap - 1;
        memcpy(out, p, n);
        out[n] = '\0';
        return 0;
    }
    return -1;
}
