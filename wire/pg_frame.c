/*
 * pg_frame: message boundaries for PMI-1 lines, PMI-1 mcmd blocks and PMI-2
 * length-prefixed bodies (see pg_frame.h for the rules).
 */
#include "wire/pg_frame.h"

#include <string.h>

static const char pg_mcmd_end[] = "\nendcmd\n"; /* an "endcmd" line */

/* 1 if buf[0..len) is a proper prefix of `word` (so more bytes may make it). */
static int pg_is_prefix_of(const char *buf, size_t len, const char *word)
{
    size_t wlen = strlen(word);
    return len < wlen && memcmp(buf, word, len) == 0;
}

static int pg_starts_with(const char *buf, size_t len, const char *word)
{
    size_t wlen = strlen(word);
    return len >= wlen && memcmp(buf, word, wlen) == 0;
}

static int pg_frame_pmi1_line(const char *buf, size_t len, pg_frame_t *out)
{
    size_t window = len < PG_PMI1_LINE_MAX ? len : PG_PMI1_LINE_MAX;
    const char *nl = memchr(buf, '\n', window);
    if (nl == NULL)
        return len >= PG_PMI1_LINE_MAX ? PG_WIRE_ELINE_TOO_LONG : PG_WIRE_ENEED_MORE;
    out->proto = PG_PROTO_PMI1;
    out->kind = PG_FRAME_PMI1_LINE;
    out->body_off = 0;
    out->body_len = (size_t)(nl - buf);
    out->consumed = out->body_len + 1;
    return PG_WIRE_OK;
}

/* The block ends at the first line that is exactly "endcmd"; a value such
 * as "arg1=endcmd" does not end it because "endcmd" must start a line. */
static int pg_frame_pmi1_mcmd(const char *buf, size_t len, pg_frame_t *out)
{
    size_t window = len < PG_PMI1_MCMD_MAX ? len : PG_PMI1_MCMD_MAX;
    size_t endlen = sizeof pg_mcmd_end - 1;
    const char *end = memmem(buf, window, pg_mcmd_end, endlen);
    if (end == NULL)
        return len >= PG_PMI1_MCMD_MAX ? PG_WIRE_EMCMD_TOO_LONG : PG_WIRE_ENEED_MORE;
    out->proto = PG_PROTO_PMI1;
    out->kind = PG_FRAME_PMI1_MCMD;
    out->body_off = 0;
    out->body_len = (size_t)(end - buf) + 1; /* keep the '\n' ending the last line */
    out->consumed = (size_t)(end - buf) + endlen;
    return PG_WIRE_OK;
}

static int pg_is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Reads the PMI-2 length field the way atoi() does in every peer, but
 * strictly: blanks, digits, blanks, nothing else.  Checks only the bytes
 * present, so a bad field is reported before all 6 bytes arrive. */
static int pg_frame_pmi2_length(const char *buf, size_t len, size_t *length)
{
    enum { LEADING, DIGITS, TRAILING } state = LEADING;
    size_t n = len < PG_PMI2_LENGTH_FIELD ? len : PG_PMI2_LENGTH_FIELD;
    size_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (c >= '0' && c <= '9' && state != TRAILING) {
            state = DIGITS;
            v = v * 10 + (size_t)(c - '0');
        } else if (pg_is_blank(c)) {
            if (state == DIGITS)
                state = TRAILING;
        } else {
            return i == 0 ? PG_WIRE_EBAD_START : PG_WIRE_EBAD_LENGTH;
        }
    }
    if (len < PG_PMI2_LENGTH_FIELD)
        return PG_WIRE_ENEED_MORE;
    if (state == LEADING || v == 0)
        return PG_WIRE_EBAD_LENGTH; /* no digits, or an empty body */
    if (v > PG_PMI2_BODY_MAX)
        return PG_WIRE_ELENGTH_TOO_BIG;
    *length = v;
    return PG_WIRE_OK;
}

static int pg_frame_pmi2(const char *buf, size_t len, pg_frame_t *out)
{
    size_t body_len = 0;
    int rc = pg_frame_pmi2_length(buf, len, &body_len);
    if (rc != PG_WIRE_OK)
        return rc;
    if (len - PG_PMI2_LENGTH_FIELD < body_len)
        return PG_WIRE_ENEED_MORE;
    out->proto = PG_PROTO_PMI2;
    out->kind = PG_FRAME_PMI2;
    out->body_off = PG_PMI2_LENGTH_FIELD;
    out->body_len = body_len;
    out->consumed = PG_PMI2_LENGTH_FIELD + body_len;
    return PG_WIRE_OK;
}

/* PMI-2: the length its field announces (called on a field pg_frame_next
 * already read whole). */
static size_t pg_frame_pmi2_announced(const char *buf)
{
    size_t v = 0;

    for (size_t i = 0; i < PG_PMI2_LENGTH_FIELD; i++)
        if (buf[i] >= '0' && buf[i] <= '9')
            v = v * 10 + (size_t)(buf[i] - '0');
    return v;
}

int pg_frame_is_oversized(int err)
{
    return err == PG_WIRE_ELINE_TOO_LONG || err == PG_WIRE_EMCMD_TOO_LONG ||
           err == PG_WIRE_ELENGTH_TOO_BIG;
}

int pg_frame_oversized(const char *buf, size_t len, int err, pg_frame_t *head)
{
    memset(head, 0, sizeof *head);
    if (err == PG_WIRE_ELENGTH_TOO_BIG) {
        if (len < PG_PMI2_LENGTH_FIELD + PG_FRAME_HEAD_MAX)
            return PG_WIRE_ENEED_MORE; /* the body is longer than that: it will come */
        head->proto = PG_PROTO_PMI2;
        head->kind = PG_FRAME_PMI2;
        head->body_off = PG_PMI2_LENGTH_FIELD;
        head->total = PG_PMI2_LENGTH_FIELD + pg_frame_pmi2_announced(buf);
    } else if (err == PG_WIRE_ELINE_TOO_LONG || err == PG_WIRE_EMCMD_TOO_LONG) {
        if (len < PG_FRAME_HEAD_MAX) /* cannot be: the error took more */
            return PG_WIRE_ENEED_MORE;
        head->proto = PG_PROTO_PMI1;
        head->kind = err == PG_WIRE_ELINE_TOO_LONG ? PG_FRAME_PMI1_LINE : PG_FRAME_PMI1_MCMD;
    } else {
        return err;
    }
    head->body_len = PG_FRAME_HEAD_MAX;
    head->consumed = head->body_off + PG_FRAME_HEAD_MAX;
    return PG_WIRE_OK;
}

void pg_frame_skip_start(pg_frame_skip_t *s, const pg_frame_t *head)
{
    memset(s, 0, sizeof *s);
    s->kind = head->kind;
    s->skipped = head->consumed;
    if (head->kind == PG_FRAME_PMI2)
        s->left = head->total - head->consumed;
}

/* A block's end, the "endcmd" line, found across reads: its only border is
 * "\n", so after a mismatch the match starts again at a '\n' or at
 * nothing. */
static size_t pg_frame_skip_block(pg_frame_skip_t *s, const char *buf, size_t len)
{
    const char *end = pg_mcmd_end;
    size_t endlen = sizeof pg_mcmd_end - 1;

    for (size_t i = 0; i < len; i++) {
        if (buf[i] == end[s->matched])
            s->matched++;
        else
            s->matched = buf[i] == end[0] ? 1 : 0;
        if (s->matched == endlen) {
            s->kind = PG_FRAME_NONE;
            return i + 1;
        }
    }
    return len;
}

size_t pg_frame_skip(pg_frame_skip_t *s, const char *buf, size_t len)
{
    size_t n;

    switch (s->kind) {
    case PG_FRAME_PMI2:
        n = len < s->left ? len : s->left;
        s->left -= n;
        if (s->left == 0)
            s->kind = PG_FRAME_NONE;
        break;
    case PG_FRAME_PMI1_LINE: {
        const char *nl = memchr(buf, '\n', len);

        n = nl != NULL ? (size_t)(nl - buf) + 1 : len;
        if (nl != NULL)
            s->kind = PG_FRAME_NONE;
        break;
    }
    case PG_FRAME_PMI1_MCMD:
        n = pg_frame_skip_block(s, buf, len);
        break;
    default:
        return 0;
    }
    s->skipped += n;
    return n;
}

int pg_frame_next(const char *buf, size_t len, pg_frame_t *out)
{
    memset(out, 0, sizeof *out);
    if (len == 0)
        return PG_WIRE_ENEED_MORE;
    if (pg_starts_with(buf, len, "cmd="))
        return pg_frame_pmi1_line(buf, len, out);
    if (pg_starts_with(buf, len, "mcmd="))
        return pg_frame_pmi1_mcmd(buf, len, out);
    if (pg_is_prefix_of(buf, len, "cmd=") || pg_is_prefix_of(buf, len, "mcmd="))
        return PG_WIRE_ENEED_MORE;
    return pg_frame_pmi2(buf, len, out);
}
