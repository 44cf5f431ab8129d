/*
 * pg_bench.h: the few helpers the benchmark's floor programs share — a clock,
 * whole-buffer socket I/O, and the exact PMI-2 bytes a Slurm-libpmi2 client
 * and a server exchange for one kvs-get.  The floor must move the same bytes
 * with the same system calls as the real workload, or its figure is not a
 * floor for that workload; keeping the bytes in one place guarantees it.
 *
 * Nothing here allocates: every buffer belongs to the caller.
 */
#ifndef PG_BENCH_H
#define PG_BENCH_H

#include <stddef.h>
#include <sys/types.h>

/* The business card each rank puts in the wire-up workload. */
#define PG_BENCH_CARD_LEN 220
/* Bytes of the length field that starts every PMI-2 frame. */
#define PG_BENCH_LENGTH_FIELD 6
/* Room for any frame the floor sends or receives (length field + body). */
#define PG_BENCH_FRAME_MAX 1024
/* A Slurm-style job id of the length Slurm's client and hydra really use
 * ("kvs_<pid>_0_<random>_<host>"), so request sizes match the workload. */
#define PG_BENCH_JOBID "kvs_18296_0_1205134934_vm"

/* Monotonic time in microseconds. */
double pg_bench_now_us(void);

/* Writes all len bytes, retrying short writes and EINTR.
 * Returns 0, or -1 with errno set. */
int pg_bench_write_all(int fd, const void *buf, size_t len);

/* Reads exactly len bytes.  Returns 0, or -1 on error or end of file (errno
 * is 0 on end of file). */
int pg_bench_read_exact(int fd, void *buf, size_t len);

/* Parses a 6-byte PMI-2 length field padded with blanks on either side.
 * Returns the body length, or -1 when the field is malformed. */
long pg_bench_frame_length(const char *field);

/* Receives one PMI-2 frame the way Slurm's libpmi2 does: one read of the
 * 6-byte length field, then one read of the body.  The body is stored
 * NUL-terminated in body (capacity cap).  Returns the body length, or -1 on
 * error, end of file or a malformed or oversized length field. */
ssize_t pg_bench_frame_recv(int fd, char *body, size_t cap);

/* Formats a whole frame (left-aligned length field, as Slurm's client
 * writes it, then body) into buf.  Returns the frame length, or -1 when it
 * does not fit in cap. */
ssize_t pg_bench_frame_format(char *buf, size_t cap, const char *body);

/* The request frame rank `rank`'s client sends to get card-<src>. */
ssize_t pg_bench_get_request(char *buf, size_t cap, int src);

/* The canned found=TRUE reply frame to a kvs-get, carrying a 220-byte card
 * (right-aligned length field, as hydra writes it). */
ssize_t pg_bench_get_reply(char *buf, size_t cap);

/* Median of n samples; sorts the array in place.  0 when n is 0. */
double pg_bench_median(double *samples, size_t n);

/* The floors' event loop: waits on epfd until *done reaches n, handing each
 * ready event's data.ptr to on_ready(ctx, ptr).  Returns 0, or -1 when
 * epoll_wait or a handler fails. */
int pg_bench_epoll_run(int epfd, const int *done, int n, int (*on_ready)(void *ctx, void *ptr),
                       void *ctx);

/* Raises the soft open-file limit to at least want (up to the hard limit).
 * Returns 0 when the limit is now >= want, -1 otherwise. */
int pg_bench_raise_nofile(long want);

#endif
