/*
 * pg_io: blocking "send all of it" for the clients that write whole
 * messages to a stream socket from a plain thread (no event loop): libpmix's
 * multiplexer (pmix/client/pg_mux.c) and `pmigate replay`
 * (trace/pg_replay.c), and the gateway's attack test (tests/gateway/
 * gw_attack.c).  One definition, so all handle EINTR, short writes and a
 * vanished peer (MSG_NOSIGNAL: an error, never SIGPIPE) the same way.
 *
 * Header-only on purpose, like wire/pg_pmix_frame.h: six lines are not
 * worth a library to every program that writes whole messages (the attack
 * test links none).
 */
#ifndef PG_IO_H
#define PG_IO_H

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Writes all len bytes of bytes to the stream socket fd, retrying short
 * writes and EINTR.  Returns 0, or -1 (errno set) when the peer is gone or
 * the socket fails; on -1 an unknown prefix may have been written. */
static inline int pg_io_send_all(int fd, const void *bytes, size_t len)
{
    const char *p = bytes;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

#endif
