/*
 * pg_capture: reads the recorded-traffic files in tests/captures/ (one
 * message a line: "<rank> <C|S> <1|2> <message with C escapes>", '#'
 * comments).  Shared by the unit tests, the decoder tool, the fuzz seeding
 * and the parse benchmark, so they all see the same bytes.
 */
#ifndef PG_CAPTURE_H
#define PG_CAPTURE_H

#include <stddef.h>

typedef struct pg_capture_msg {
    int rank;
    char dir;           /* 'C' client -> server, 'S' server -> client */
    int proto;          /* 1 or 2 */
    char *bytes;        /* the raw message (owned by the capture) */
    size_t len;
    unsigned line;      /* line number in the file */
} pg_capture_msg_t;

typedef struct pg_capture {
    pg_capture_msg_t *msgs;
    size_t n;
    size_t cap;
} pg_capture_t;

/* Parses one line (without '\n') in place.  Returns 1 with *out filled
 * (out->bytes points into line), 0 for a comment or blank line, or -1 with
 * *why set to a static reason. */
int pg_capture_parse_line(char *line, pg_capture_msg_t *out, const char **why);

/* Loads every message of a file; copies the bytes.  Returns 0, or -1 with a
 * message in err (file unreadable, or the first malformed line). */
int pg_capture_load(const char *path, pg_capture_t *cap, char *err, size_t errlen);
void pg_capture_free(pg_capture_t *cap);

#endif
