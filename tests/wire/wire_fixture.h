/*
 * wire_fixture: helpers the codec's unit tests share: parsing a string
 * literal through a private mutable copy (the parsers write into their
 * buffer), token checks with readable failures, and where the recorded
 * captures are.
 */
#ifndef WIRE_FIXTURE_H
#define WIRE_FIXTURE_H

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/pg_parse.h"
#include "wire/pg_frame.h"
#include "wire/pg_wire.h"

/* A parse result that owns the bytes its tokens point into. */
typedef struct wire_parsed {
    char buf[70000];
    pg_msg_t msg;
    int rc;
} wire_parsed_t;

typedef int (*wire_parser_fn)(char *, size_t, pg_msg_t *);

/* Parses len bytes of text with fn into *p (freshly initialised). */
static inline int wire_parse_n(wire_parsed_t *p, wire_parser_fn fn, const char *text, size_t len)
{
    pg_msg_init(&p->msg);
    if (len > sizeof p->buf)
        return p->rc = PG_WIRE_EINVAL;
    memcpy(p->buf, text, len);
    return p->rc = fn(p->buf, len, &p->msg);
}

static inline int wire_parse(wire_parsed_t *p, wire_parser_fn fn, const char *text)
{
    return wire_parse_n(p, fn, text, strlen(text));
}

/* 1 if token key is present with exactly value want (want NULL: no '='). */
static inline int wire_has(const pg_msg_t *msg, const char *key, const char *want)
{
    const pg_token_t *t = pg_msg_find(msg, key);
    if (t == NULL)
        return 0;
    if (want == NULL)
        return t->val.ptr == NULL;
    return pg_str_eq(t->val, want);
}

/* Directory of the recorded captures: $top_srcdir/tests/captures (set by
 * make check), else the source tree this binary was built from. */
static inline const char *wire_capture_dir(void)
{
    static char dir[4096];
    const char *top = getenv("top_srcdir");
    snprintf(dir, sizeof dir, "%s/tests/captures", top ? top : PG_TOP_SRCDIR);
    return dir;
}

#endif
