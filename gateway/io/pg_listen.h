/*
 * pg_listen: the unix socket clients reach by PMIGATE_PMI_PORT instead of
 * an inherited PMI_FD.  It lives in a private directory (mode 0700, under
 * $TMPDIR or /tmp), the socket itself is 0600, and every accepted peer is
 * checked with SO_PEERCRED: only processes of pmigate's own uid get in.
 * Nothing on the socket says which rank connects; the connection layer
 * learns it from the client's handshake (initack pmiid=, fullinit pmirank=)
 * and the job checks the claim against the peer's pid (pg_proc.h).
 * Out of descriptors, it stops accepting for a moment (peers wait in the
 * backlog) instead of spinning on the still-readable socket.
 *
 * Ownership: pg_listen_t owns the socket, its directory (both removed by
 * pg_listen_free) and its accept event.
 */
#ifndef PG_LISTEN_H
#define PG_LISTEN_H

#include <sys/types.h>

struct event_base;
typedef struct pg_listen pg_listen_t;

/* Called for every accepted, credential-checked socket (non-blocking,
 * close-on-exec); the callee owns fd.  pid is the process that connected
 * (SO_PEERCRED, as of connect()), 0 if the kernel could not name it (a
 * peer in another pid namespace). */
typedef void (*pg_listen_accept_fn)(void *arg, int fd, pid_t pid);
/* Called for a refused peer with a sentence saying why. */
typedef void (*pg_listen_refuse_fn)(void *arg, const char *why);

/* Returns NULL with *err set (errno) on failure. */
pg_listen_t *pg_listen_new(struct event_base *base, pg_listen_accept_fn on_accept,
                           pg_listen_refuse_fn on_refuse, void *arg, int *err);
void pg_listen_free(pg_listen_t *l);

/* The socket's path (what PMIGATE_PMI_PORT carries): <dir>/pmi, or
 * /proc/<pmigate's pid>/fd/<n>/pmi when that would not fit a socket
 * address (a long $TMPDIR). */
const char *pg_listen_path(const pg_listen_t *l);
/* The job's private directory holding the socket (removed with all its
 * contents by pg_listen_free). */
const char *pg_listen_dir(const pg_listen_t *l);
/* Stops accepting (job teardown); the socket stays until pg_listen_free. */
void pg_listen_stop(pg_listen_t *l);

/* The address of a socket <dir>/<name>, also the status endpoint's
 * (pg_statusd.h) and its client's: the path itself, or, when that is too
 * long for a unix socket, the same place through /proc/self/fd/N/<name>,
 * N a descriptor of dir opened here (O_PATH) into *dir_fd, which the
 * caller keeps while it uses the address and then closes (-1 when there
 * is none).  0, or an errno. */
struct sockaddr_un;
int pg_listen_address(const char *dir, const char *name, struct sockaddr_un *sa, int *dir_fd);

/* A listening unix socket (non-blocking, close-on-exec) bound at sa, born
 * mode 0600: no window with wider rights.  0 with *fd, or an errno (the
 * socket file is taken back if it was made). */
int pg_listen_unix(const struct sockaddr_un *sa, int backlog, int *fd);

#endif
