/*
 * pg_capture: the capture-file reader (format in pg_capture.h).
 */
#include "tests/tools/pg_capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pg_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Undoes \n \r \t \\ \xHH in place; returns the new length or -1. */
static long pg_capture_unescape(char *s, size_t len)
{
    size_t r = 0, w = 0;
    while (r < len) {
        char c = s[r++];
        if (c != '\\') {
            s[w++] = c;
            continue;
        }
        if (r == len)
            return -1;
        c = s[r++];
        switch (c) {
        case 'n': s[w++] = '\n'; break;
        case 'r': s[w++] = '\r'; break;
        case 't': s[w++] = '\t'; break;
        case '\\': s[w++] = '\\'; break;
        case 'x': {
            int hi = r < len ? pg_hex_digit(s[r]) : -1;
            int lo = r + 1 < len ? pg_hex_digit(s[r + 1]) : -1;
            if (hi < 0 || lo < 0)
                return -1;
            s[w++] = (char)(hi * 16 + lo);
            r += 2;
            break;
        }
        default:
            return -1;
        }
    }
    return (long)w;
}

int pg_capture_parse_line(char *line, pg_capture_msg_t *out, const char **why)
{
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    if (len == 0 || line[0] == '#')
        return 0;
    char *end;
    errno = 0;
    long rank = strtol(line, &end, 10);
    if (end == line || errno != 0 || rank < -1 || rank > 1000000 || *end != ' ') {
        *why = "expected a rank";
        return -1;
    }
    char *p = end + 1;
    if ((p[0] != 'C' && p[0] != 'S') || p[1] != ' ') {
        *why = "expected C or S";
        return -1;
    }
    out->dir = p[0];
    p += 2;
    if ((p[0] != '1' && p[0] != '2') || p[1] != ' ') {
        *why = "expected protocol 1 or 2";
        return -1;
    }
    out->proto = p[0] - '0';
    p += 2;
    long n = pg_capture_unescape(p, len - (size_t)(p - line));
    if (n <= 0) {
        *why = n < 0 ? "bad escape in message" : "empty message";
        return -1;
    }
    out->rank = (int)rank;
    out->bytes = p;
    out->len = (size_t)n;
    return 1;
}

static int pg_capture_push(pg_capture_t *cap, const pg_capture_msg_t *m)
{
    if (cap->n == cap->cap) {
        size_t ncap = cap->cap ? cap->cap * 2 : 64;
        pg_capture_msg_t *grown = realloc(cap->msgs, ncap * sizeof *grown);
        if (grown == NULL)
            return -1;
        cap->msgs = grown;
        cap->cap = ncap;
    }
    pg_capture_msg_t *copy = &cap->msgs[cap->n];
    *copy = *m;
    copy->bytes = malloc(m->len ? m->len : 1);
    if (copy->bytes == NULL)
        return -1;
    memcpy(copy->bytes, m->bytes, m->len);
    cap->n++;
    return 0;
}

int pg_capture_load(const char *path, pg_capture_t *cap, char *err, size_t errlen)
{
    int rc = -1;
    char *line = NULL;
    size_t linecap = 0;
    unsigned lineno = 0;
    memset(cap, 0, sizeof *cap);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (getline(&line, &linecap, f) >= 0) {
        pg_capture_msg_t m;
        const char *why = NULL;
        lineno++;
        int got = pg_capture_parse_line(line, &m, &why);
        if (got < 0) {
            snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
            goto out;
        }
        m.line = lineno;
        if (got > 0 && pg_capture_push(cap, &m) != 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto out;
        }
    }
    rc = 0;
out:
    free(line);
    fclose(f);
    if (rc != 0)
        pg_capture_free(cap);
    return rc;
}

void pg_capture_free(pg_capture_t *cap)
{
    for (size_t i = 0; i < cap->n; i++)
        free(cap->msgs[i].bytes);
    free(cap->msgs);
    memset(cap, 0, sizeof *cap);
}
