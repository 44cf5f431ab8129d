/*
 * pg_capture: the capture-file reader (format in pg_capture.h).
 */
#include "tests/tools/pg_capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/pg_escape.h"

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
    size_t n = 0;
    int bad = pg_unescape(p, len - (size_t)(p - line), p, &n) != 0;
    if (bad || n == 0) {
        *why = bad ? "bad escape in message" : "empty message";
        return -1;
    }
    out->rank = (int)rank;
    out->bytes = p;
    out->len = n;
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
