/*
 * pmi_tap: a byte-exact relay between a PMI client and its process manager,
 * used to record real traffic as test vectors (the .cap files here).
 *
 * Run it as the program mpiexec.hydra launches: `mpiexec.hydra -n 2 pmi_tap
 * OUT.cap ./client args`.  It takes over the PMI_FD the launcher passed,
 * gives the client one end of a socketpair instead, copies bytes both ways
 * unchanged and appends every complete message to OUT.<rank> in the capture
 * format:  <rank> <C|S> <1|2> <message with C escapes>.  Messages are cut
 * with the simplest rules the peers themselves use (a "cmd=" line, an
 * "mcmd=" block up to an "endcmd" line, else a 6-byte length), deliberately
 * independent of pmigate's framer, which these vectors test.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum { TAP_BUF = 1 << 20 };

/* Bytes seen in one direction that do not yet form a whole message. */
typedef struct tap_dir {
    char dir;          /* 'C' client -> server, 'S' server -> client */
    char *buf;
    size_t len;
} tap_dir_t;

static void tap_write_escaped(FILE *out, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\n')
            fputs("\\n", out);
        else if (c == '\\')
            fputs("\\\\", out);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(out, "\\x%02X", c);
        else
            fputc(c, out);
    }
}

/* Length of the first complete message in d, 0 if none yet; *proto is 1|2. */
static size_t tap_message_len(const tap_dir_t *d, int *proto)
{
    if (d->len >= 4 && memcmp(d->buf, "cmd=", 4) == 0) {
        const char *nl = memchr(d->buf, '\n', d->len);
        *proto = 1;
        return nl ? (size_t)(nl - d->buf) + 1 : 0;
    }
    if (d->len >= 5 && memcmp(d->buf, "mcmd=", 5) == 0) {
        const char *end = memmem(d->buf, d->len, "\nendcmd\n", 8);
        *proto = 1;
        return end ? (size_t)(end - d->buf) + 8 : 0;
    }
    if (d->len < 6)
        return 0;
    char field[7];
    memcpy(field, d->buf, 6);
    field[6] = '\0';
    size_t body = (size_t)atoi(field);
    *proto = 2;
    return d->len >= 6 + body ? 6 + body : 0;
}

static void tap_record(tap_dir_t *d, const char *p, size_t n, FILE *out, int rank)
{
    if (d->len + n > TAP_BUF)
        n = TAP_BUF - d->len; /* never happens with real peers */
    memcpy(d->buf + d->len, p, n);
    d->len += n;
    size_t m;
    int proto = 0;
    while ((m = tap_message_len(d, &proto)) > 0) {
        fprintf(out, "%d %c %d ", rank, d->dir, proto);
        tap_write_escaped(out, d->buf, m);
        fputc('\n', out);
        memmove(d->buf, d->buf + m, d->len - m);
        d->len -= m;
    }
    fflush(out);
}

/* Copies what is readable on from to to; returns bytes moved, 0 on EOF. */
static ssize_t tap_pump(int from, int to, tap_dir_t *d, FILE *out, int rank)
{
    char chunk[65536];
    ssize_t n = read(from, chunk, sizeof chunk);
    if (n <= 0)
        return n;
    tap_record(d, chunk, (size_t)n, out, rank);
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, chunk + off, (size_t)(n - off));
        if (w < 0 && errno != EINTR)
            return -1;
        off += w > 0 ? w : 0;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pmi_tap OUT.cap program [args...]\n");
        return 2;
    }
    const char *fd_env = getenv("PMI_FD"), *rank_env = getenv("PMI_RANK");
    if (!fd_env) {
        fprintf(stderr, "pmi_tap: PMI_FD is not set (run under mpiexec.hydra)\n");
        return 2;
    }
    int up = atoi(fd_env), rank = rank_env ? atoi(rank_env) : -1, sv[2];
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", argv[1], rank);
    FILE *out = fopen(path, "w");
    if (!out || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("pmi_tap");
        return 2;
    }
    pid_t child = fork();
    if (child == 0) {
        char fdbuf[16];
        close(sv[0]);
        close(up);
        snprintf(fdbuf, sizeof fdbuf, "%d", sv[1]);
        setenv("PMI_FD", fdbuf, 1);
        execvp(argv[2], argv + 2);
        perror("pmi_tap: exec");
        _exit(127);
    }
    close(sv[1]);
    tap_dir_t c2s = { 'C', malloc(TAP_BUF), 0 }, s2c = { 'S', malloc(TAP_BUF), 0 };
    struct pollfd pf[2] = { { sv[0], POLLIN, 0 }, { up, POLLIN, 0 } };
    while (pf[0].fd >= 0) {
        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            break;
        if (pf[0].revents && tap_pump(sv[0], up, &c2s, out, rank) <= 0)
            pf[0].fd = -1; /* the client closed its PMI connection */
        if (pf[1].fd >= 0 && pf[1].revents && tap_pump(up, sv[0], &s2c, out, rank) <= 0)
            pf[1].fd = -1;
    }
    close(up);
    close(sv[0]);
    int status = 0;
    waitpid(child, &status, 0);
    fclose(out);
    free(c2s.buf);
    free(s2c.buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
