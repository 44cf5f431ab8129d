/*
 * pmi_script: a rank program for raw-wire conversation tests through a real
 * `pmigate run` connection.  It speaks scripted bytes on PMI_FD and checks
 * the replies, so the tests exercise exactly what a misbehaving or quirky
 * client puts on the socket (bad input, padded lengths, junk) without a PMI
 * library in between.
 *
 * Usage: pmi_script SCRIPT   (SCRIPT may contain %r, replaced by PMI_RANK)
 * Script lines (C escapes \n \t \\ \xHH are undone in the argument):
 *   send1 TEXT     sends TEXT + "\n" (a PMI-1 line)
 *   send2 BODY     sends BODY with a right-aligned 6-byte length
 *   send2l BODY    the same, left-aligned (Slurm's libpmi2, MPICH 4.0)
 *   raw BYTES      sends BYTES as they are
 *   long1 N TEXT   sends TEXT padded with 'x' to N bytes, then "\n" (an
 *                  over-long PMI-1 line when N >= 4096)
 *   long2 N BODY   sends a PMI-2 message of length N: BODY padded with 'x'
 *   expect S...    reads the next message; each word S must occur in it
 *   reject S...    no word S may occur in the message the last expect read
 *   eof            expects the gateway to close the connection
 *   segment yes|no whether the node's key segment ($PMIGATE_SHM) exists
 *   # ...          comment
 * Exits 0 when every expectation held, 1 (with the reason on stderr) if not.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { LINE_MAX_BYTES = 16384, WAIT_MS = 5000 };

static int fd = -1;
static char inbuf[LINE_MAX_BYTES];
static size_t inlen;
static int lineno;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "pmi_script rank %s line %d: %s%s%s\n", getenv("PMI_RANK") ? getenv("PMI_RANK") : "?",
            lineno, what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

/* Undoes \n, \t, \\ and \xHH in place; returns the new length. */
static size_t unescape(char *s)
{
    char *w = s;

    for (char *p = s; *p; p++) {
        if (*p != '\\' || p[1] == '\0') {
            *w++ = *p;
            continue;
        }
        p++;
        if (*p == 'n')
            *w++ = '\n';
        else if (*p == 't')
            *w++ = '\t';
        else if (*p == 'x' && p[1] && p[2]) {
            char hex[3] = { p[1], p[2], 0 };
            *w++ = (char)strtol(hex, NULL, 16);
            p += 2;
        } else
            *w++ = *p;
    }
    *w = '\0';
    return (size_t)(w - s);
}

static void send_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("write failed", strerror(errno));
        buf += n;
        len -= (size_t)n;
    }
}

/* 1 if more bytes arrived, 0 at EOF; dies on timeout. */
static int fill(void)
{
    struct pollfd pfd = { fd, POLLIN, 0 };
    ssize_t n;

    if (poll(&pfd, 1, WAIT_MS) <= 0)
        die("no reply within 5 s", NULL);
    n = read(fd, inbuf + inlen, sizeof(inbuf) - 1 - inlen);
    if (n < 0)
        die("read failed", strerror(errno));
    inlen += (size_t)n;
    return n > 0;
}

/* Length of one complete message at the start of inbuf, or 0. */
static size_t framed(void)
{
    if (inlen >= 4 && (memcmp(inbuf, "cmd=", 4) == 0)) {
        char *nl = memchr(inbuf, '\n', inlen);
        return nl ? (size_t)(nl - inbuf) + 1 : 0;
    }
    if (inlen >= 6) {
        char field[7];
        memcpy(field, inbuf, 6);
        field[6] = '\0';
        size_t len = (size_t)atoi(field);
        return inlen >= 6 + len ? 6 + len : 0;
    }
    return 0;
}

/* Reads the next message into msg (NUL-terminated). */
static void next_message(char *msg, size_t cap)
{
    size_t len;

    while ((len = framed()) == 0)
        if (!fill())
            die("connection closed while a reply was expected", NULL);
    if (len >= cap)
        die("reply too long", NULL);
    memcpy(msg, inbuf, len);
    msg[len] = '\0';
    memmove(inbuf, inbuf + len, inlen - len);
    inlen -= len;
}

static void check(char *words, int must)
{
    static char msg[LINE_MAX_BYTES];

    if (must)
        next_message(msg, sizeof(msg));
    for (char *w = strtok(words, " "); w != NULL; w = strtok(NULL, " ")) {
        unescape(w);
        if ((strstr(msg, w) != NULL) != must) {
            fprintf(stderr, "pmi_script: reply was: %s\n", msg);
            die(must ? "expected text missing" : "unwanted text present", w);
        }
    }
}

static void expect_eof(void)
{
    inlen = 0;
    while (fill())
        inlen = 0;
}

/* Has the gateway published a key segment (as wanted)?  PMIGATE_SHM names
 * it first ("SEGMENT:TABLE"); before the first generation it is empty. */
static void expect_segment(int want)
{
    const char *spec = getenv("PMIGATE_SHM");
    char path[4096];
    struct stat st;

    if (spec == NULL)
        die("PMIGATE_SHM is not set", NULL);
    snprintf(path, sizeof(path), "%.*s", (int)strcspn(spec, ":"), spec);
    if ((stat(path, &st) == 0 && st.st_size > 0) != want)
        die(want ? "no key segment" : "a key segment nobody reads was written", path);
}

static void send2(char *body, const char *fmt)
{
    size_t len = unescape(body);
    char *buf = malloc(len + 8);

    if (buf == NULL)
        die("out of memory", NULL);
    snprintf(buf, 8, fmt, (int)len);
    memcpy(buf + 6, body, len);
    send_all(buf, len + 6);
    free(buf);
}

/* long1 / long2: "N TEXT", TEXT padded with 'x' to N bytes, framed as a
 * PMI-1 line (pmi2 0) or a PMI-2 message (pmi2 1) of any length. */
static void send_long(char *arg, int pmi2)
{
    char *text = strchr(arg, ' ');
    long n = atol(arg);
    size_t len, head = pmi2 ? 6 : 0;
    char *buf;

    if (text == NULL || n <= 0 || n > 8 * 1024 * 1024)
        die("long1/long2 need a length and a text", arg);
    len = unescape(++text);
    buf = malloc((size_t)n + head + 1);
    if (buf == NULL || len > (size_t)n)
        die("long1/long2: bad length", arg);
    memset(buf, 'x', (size_t)n + head + 1);
    if (pmi2) {
        char field[8];

        snprintf(field, sizeof(field), "%6ld", n);
        memcpy(buf, field, 6);
    }
    memcpy(buf + head, text, len);
    buf[head + (size_t)n] = '\n';
    send_all(buf, (size_t)n + head + (pmi2 ? 0 : 1));
    free(buf);
}

static void run_line(char *line)
{
    char *arg = strchr(line, ' ');
    size_t len;

    line[strcspn(line, "\n")] = '\0';
    arg = strchr(line, ' ');
    if (arg != NULL)
        *arg++ = '\0';
    else
        arg = line + strlen(line);
    if (line[0] == '#' || line[0] == '\0')
        return;
    if (strcmp(line, "send1") == 0) {
        len = unescape(arg);
        arg[len++] = '\n';
        send_all(arg, len);
    } else if (strcmp(line, "send2") == 0) {
        send2(arg, "%6d");
    } else if (strcmp(line, "send2l") == 0) {
        send2(arg, "%-6d");
    } else if (strcmp(line, "raw") == 0) {
        send_all(arg, unescape(arg));
    } else if (strcmp(line, "long1") == 0 || strcmp(line, "long2") == 0) {
        send_long(arg, line[4] == '2');
    } else if (strcmp(line, "expect") == 0) {
        check(arg, 1);
    } else if (strcmp(line, "reject") == 0) {
        check(arg, 0);
    } else if (strcmp(line, "eof") == 0) {
        expect_eof();
    } else if (strcmp(line, "segment") == 0) {
        expect_segment(strcmp(arg, "yes") == 0);
    } else {
        die("unknown script command", line);
    }
}

int main(int argc, char **argv)
{
    static char line[LINE_MAX_BYTES];
    char path[4096];
    const char *rank = getenv("PMI_RANK") ? getenv("PMI_RANK") : "0";
    char *pct;
    FILE *f;

    if (argc != 2 || getenv("PMI_FD") == NULL) {
        fprintf(stderr, "usage: PMI_FD=<fd> pmi_script SCRIPT (run it under pmigate run)\n");
        return 2;
    }
    fd = atoi(getenv("PMI_FD"));
    snprintf(path, sizeof(path), "%s", argv[1]);
    if ((pct = strstr(path, "%r")) != NULL) {
        char rest[4096];
        snprintf(rest, sizeof(rest), "%s", pct + 2);
        snprintf(pct, sizeof(path) - (size_t)(pct - path), "%s%s", rank, rest);
    }
    f = fopen(path, "r");
    if (f == NULL)
        die("cannot open script", path);
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        run_line(line);
    }
    fclose(f);
    return 0;
}
