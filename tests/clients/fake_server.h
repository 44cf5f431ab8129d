/*
 * fake_server: a scripted PMI server for the client unit tests.  A thread
 * owns one end of a socketpair and runs a script function that reads the
 * client's requests and writes whatever replies the test wants — in any
 * order, with any framing quirk, or never — so the client code is tested
 * against exactly the server behaviours of docs/wire-protocol.md, "Client
 * libraries: what they accept" and "thrid".
 */
#ifndef PG_FAKE_SERVER_H
#define PG_FAKE_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/types.h>

typedef struct pg_fake_server pg_fake_server_t;
typedef void (*pg_fake_script_fn)(pg_fake_server_t *srv, void *arg);

/* Starts the script on a new thread; *client_fd is the client's end (the
 * caller owns it).  NULL on failure. */
pg_fake_server_t *pg_fake_server_start(pg_fake_script_fn fn, void *arg, int *client_fd);

/* The same in two steps, for a test that forks the client: _new makes the
 * socket pair, _go starts the script's thread (on failure it frees the
 * server; the caller still owns *client_fd).  Forking between the two
 * keeps the child free of a thread that was starting up at fork time: a
 * sanitizer's runtime locks held by it stay locked in the child, whose
 * own threads then hang. */
pg_fake_server_t *pg_fake_server_new(pg_fake_script_fn fn, void *arg, int *client_fd);
int pg_fake_server_go(pg_fake_server_t *srv);
/* Forks the client process between _new and _go: in the child (0 is
 * returned) the server's end is closed; -1 on failure. */
pid_t pg_fake_server_fork(pg_fake_server_t *srv);

/* Waits for the script to end and frees the server.  Returns the number of
 * failed expectations recorded by the script. */
int pg_fake_server_join(pg_fake_server_t *srv);

/* Reads the client's next message (PMI-1 line or PMI-2 body) into buf,
 * NUL-terminated.  Returns its length, or -1 on EOF or a framing error. */
int pg_fake_recv(pg_fake_server_t *srv, char *buf, size_t cap);

/* Whether the client's next message (or EOF) can be read within ms
 * milliseconds: true, or false after waiting that long.  For scripts that
 * must tell "sent while another request waits" from "sent only after". */
bool pg_fake_readable(pg_fake_server_t *srv, int ms);

/* Like pg_fake_recv, and records a failure unless the message's command is
 * cmd (the "cmd=" value up to ' ', ';' or the end). */
int pg_fake_expect(pg_fake_server_t *srv, const char *cmd, char *buf, size_t cap);

/* Writes bytes as they are. */
void pg_fake_send_raw(pg_fake_server_t *srv, const char *bytes);
/* Writes a PMI-2 body with its 6-byte length, right- or left-aligned. */
void pg_fake_send_pmi2(pg_fake_server_t *srv, const char *body);
void pg_fake_send_pmi2_left(pg_fake_server_t *srv, const char *body);

/* Copies the value of key from a PMI-1 line or PMI-2 body (values end at
 * ' ' or ';').  0, or -1 if absent. */
int pg_fake_value(const char *msg, const char *key, char *out, size_t cap);

/* Records a failed expectation (printed, counted by pg_fake_server_join). */
void pg_fake_fail(pg_fake_server_t *srv, const char *what);

/* Closes the server's end early (the client then sees EOF). */
void pg_fake_close(pg_fake_server_t *srv);

#endif
