/*
 * pg_replay_msg: request rewriting and reply comparison for `pmigate
 * replay`.  See pg_replay_msg.h.
 *
 * A plain replay sends the recorded bytes themselves (quirks such as a
 * left-aligned PMI-2 length are part of what is being replayed); only the
 * kvsname is substituted.  The --ranks load generator must change tokens, so
 * it rebuilds the request with the wire encoder instead.
 */
#include "trace/pg_replay_msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/pg_trace.h"
#include "wire/pg_enc.h"
#include "wire/pg_frame.h"

enum { SHOWN_VALUE_MAX = 72 };

int pg_replay_key_is_volatile(const char *key, size_t len)
{
    static const char *const keys[] = { "kvsname", "jobid", "thrid", NULL };

    for (int i = 0; keys[i] != NULL; i++)
        if (strlen(keys[i]) == len && memcmp(keys[i], key, len) == 0)
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- */
/* rewriting                                                          */
/* ---------------------------------------------------------------- */

/* Appends in[0..len) to out with every `from` replaced by `to`. */
static size_t subst_into(const char *in, size_t len, const char *from, const char *to, char *out)
{
    size_t flen = strlen(from), tlen = strlen(to), o = 0;
    const char *p = in, *end = in + len, *hit;

    while (flen > 0 && (hit = memmem(p, (size_t)(end - p), from, flen)) != NULL) {
        memcpy(out + o, p, (size_t)(hit - p));
        o += (size_t)(hit - p);
        memcpy(out + o, to, tlen);
        o += tlen;
        p = hit + flen;
    }
    memcpy(out + o, p, (size_t)(end - p));
    return o + (size_t)(end - p);
}

static size_t count_hits(const char *in, size_t len, const char *from)
{
    size_t flen = strlen(from), n = 0;
    const char *p = in, *end = in + len, *hit;

    while (flen > 0 && (hit = memmem(p, (size_t)(end - p), from, flen)) != NULL) {
        n++;
        p = hit + flen;
    }
    return n;
}

/* The kvsname substitution; a PMI-2 length field is recomputed and keeps
 * its alignment (Slurm pads on the right, hydra on the left). */
static int subst_kvs(const pg_replay_map_t *m, const char *in, size_t len, char **out,
                     size_t *outlen)
{
    const char *from = m->old_kvs && m->new_kvs ? m->old_kvs : "";
    const char *to = m->new_kvs ? m->new_kvs : "";
    size_t hits = count_hits(in, len, from), tlen = strlen(to);
    pg_frame_t frame;
    char *buf = malloc(len + hits * (tlen + 1) + 8);
    size_t body;

    if (buf == NULL)
        return -1;
    if (hits == 0 || pg_frame_next(in, len, &frame) != PG_WIRE_OK ||
        frame.kind != PG_FRAME_PMI2 || frame.body_off != PG_PMI2_LENGTH_FIELD) {
        *outlen = subst_into(in, len, from, to, buf);
        *out = buf;
        return 0;
    }
    body = subst_into(in + frame.body_off, frame.body_len, from, to, buf + PG_PMI2_LENGTH_FIELD);
    {
        char field[PG_PMI2_LENGTH_FIELD + 8];
        int left = in[0] >= '0' && in[0] <= '9';

        snprintf(field, sizeof(field), left ? "%-6zu" : "%6zu", body);
        memcpy(buf, field, PG_PMI2_LENGTH_FIELD);
    }
    /* bytes after the body (none in a traced message) are kept */
    memcpy(buf + PG_PMI2_LENGTH_FIELD + body, in + frame.body_off + frame.body_len,
           len - frame.body_off - frame.body_len);
    *outlen = PG_PMI2_LENGTH_FIELD + body + len - frame.body_off - frame.body_len;
    *out = buf;
    return 0;
}

static int is_rank_key(pg_str_t key)
{
    static const char *const keys[] = { "pmirank", "pmiid", "srcid", "rank", NULL };

    for (int i = 0; keys[i] != NULL; i++)
        if (pg_str_eq(key, keys[i]))
            return 1;
    return 0;
}

/* The token's value for rank r of the copy: rank numbers and the numeric
 * suffix of a per-rank key move by block_base. */
static void renamed_value(const pg_replay_map_t *m, const pg_token_t *t, char *buf, size_t cap,
                          pg_str_t *out)
{
    long v;
    size_t digits = 0;

    *out = t->val;
    if (is_rank_key(t->key) && pg_str_to_long(t->val, &v) == 0 && v >= 0 && v < m->nrec) {
        snprintf(buf, cap, "%ld", v + m->block_base);
        *out = (pg_str_t){ buf, (uint32_t)strlen(buf) };
        return;
    }
    if (!pg_str_eq(t->key, "key"))
        return;
    while (digits < t->val.len && t->val.ptr[t->val.len - 1 - digits] >= '0' &&
           t->val.ptr[t->val.len - 1 - digits] <= '9')
        digits++;
    if (digits == 0 || digits == t->val.len || digits > 7)
        return;
    if (pg_str_to_long((pg_str_t){ t->val.ptr + t->val.len - digits, (uint32_t)digits }, &v) != 0 ||
        v >= m->nrec)
        return;
    snprintf(buf, cap, "%.*s%ld", (int)(t->val.len - digits), t->val.ptr, v + m->block_base);
    *out = (pg_str_t){ buf, (uint32_t)strlen(buf) };
}

/* Rebuilds a parsed request with renamed tokens.  Returns 0, or -1 to fall
 * back to the bytes as they are (a message the encoder cannot rebuild). */
static int rebuild_renamed(const pg_replay_map_t *m, const pg_msg_t *msg, size_t len_hint,
                           char **out, size_t *outlen)
{
    size_t cap = len_hint + 32 * ((size_t)msg->ntokens + 1) + 64;
    char *buf = malloc(cap);
    pg_enc_t e;

    if (buf == NULL)
        return -1;
    pg_enc_init(&e, buf, cap);
    pg_enc_begin(&e, msg->cmd);
    for (uint32_t i = 0; i < msg->ntokens; i++) {
        const pg_token_t *t = &msg->tokens[i];
        char key[PG_PMI2_KEYLEN_MAX + 1], val[PG_PMI2_KEYLEN_MAX + 32];
        pg_str_t v;

        if (t->val.ptr == NULL || t->key.len >= sizeof(key))
            goto fail;
        snprintf(key, sizeof(key), "%.*s", (int)t->key.len, t->key.ptr);
        renamed_value(m, t, val, sizeof(val), &v);
        pg_enc_add_str(&e, key, v);
    }
    if (pg_enc_end(&e) != 0)
        goto fail;
    *out = buf;
    *outlen = e.len;
    return 0;
fail:
    free(buf);
    return -1;
}

/* The gateway traces an over-long message as its head (wire/pg_frame.h):
 * a PMI-2 message shorter than its length field, a PMI-1 line without its
 * '\n', an mcmd block without its endcmd line.  Sent as it is, the head
 * would leave the gateway waiting for the rest; so the rest is made up
 * ('x' bytes up to the length, or past the limit, and the terminator),
 * which the gateway drops unread, answering by the head as it did.
 * Returns 1 with *out (malloc'd) for a head, 0 for a whole message, -1
 * when out of memory. */
static int complete_oversized(const char *in, size_t len, char **out, size_t *outlen)
{
    static const char mcmd_end[] = "\nendcmd\n";
    pg_frame_t frame;
    int rc = pg_frame_next(in, len, &frame);
    size_t total, fill_to;
    const char *end = "";

    if (rc == PG_WIRE_ELENGTH_TOO_BIG) { /* the framer read the field: blanks and digits */
        char field[PG_PMI2_LENGTH_FIELD + 1];

        memcpy(field, in, PG_PMI2_LENGTH_FIELD);
        field[PG_PMI2_LENGTH_FIELD] = '\0';
        fill_to = PG_PMI2_LENGTH_FIELD + strtoul(field, NULL, 10);
    } else if (len >= 4 && memcmp(in, "cmd=", 4) == 0 && in[len - 1] != '\n') {
        fill_to = PG_PMI1_LINE_MAX;
        end = "\n";
    } else if (len >= 5 && memcmp(in, "mcmd=", 5) == 0 &&
               (len < sizeof(mcmd_end) - 1 ||
                memcmp(in + len - (sizeof(mcmd_end) - 1), mcmd_end, sizeof(mcmd_end) - 1) != 0)) {
        fill_to = PG_PMI1_MCMD_MAX;
        end = mcmd_end;
    } else {
        return 0;
    }
    if (fill_to < len)
        fill_to = len;
    total = fill_to + strlen(end);
    if ((*out = malloc(total)) == NULL)
        return -1;
    memcpy(*out, in, len);
    memset(*out + len, 'x', fill_to - len);
    memcpy(*out + fill_to, end, strlen(end));
    *outlen = total;
    return 1;
}

int pg_replay_rewrite(const pg_replay_map_t *m, const char *in, size_t len, char **out,
                      size_t *outlen)
{
    pg_trace_parsed_t p = { 0 };
    pg_frame_t frame;
    char *renamed;
    size_t rlen;
    int head = complete_oversized(in, len, out, outlen);

    if (head != 0)
        return head < 0 ? -1 : 0;
    if (subst_kvs(m, in, len, out, outlen) != 0)
        return -1;
    if (m->nrec <= 0 || pg_frame_next(*out, *outlen, &frame) != PG_WIRE_OK ||
        frame.kind == PG_FRAME_PMI1_MCMD)
        return 0;
    if (pg_trace_parse(&p, *out, *outlen) == PG_WIRE_OK && p.msg.cmd != PG_CMD_UNKNOWN &&
        rebuild_renamed(m, &p.msg, *outlen, &renamed, &rlen) == 0) {
        free(*out);
        *out = renamed;
        *outlen = rlen;
    }
    pg_trace_parsed_release(&p);
    return 0;
}

/* ---------------------------------------------------------------- */
/* comparison                                                         */
/* ---------------------------------------------------------------- */

static void shown(pg_str_t s, char *buf, size_t cap)
{
    if (s.ptr == NULL)
        snprintf(buf, cap, "(no value)");
    else if (s.len > SHOWN_VALUE_MAX)
        snprintf(buf, cap, "'%.*s...' (%u bytes)", SHOWN_VALUE_MAX, s.ptr, s.len);
    else
        snprintf(buf, cap, "'%.*s'", (int)s.len, s.ptr);
}

static int str_same(pg_str_t a, pg_str_t b)
{
    if (a.ptr == NULL || b.ptr == NULL)
        return a.ptr == b.ptr;
    return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

static int compared_key(pg_str_t key, int lenient)
{
    if (lenient)
        return pg_str_eq(key, "rc") || pg_str_eq(key, "found");
    return !pg_replay_key_is_volatile(key.ptr, key.len);
}

/* Finds the first unused token of `got` with the key `key`. */
static long find_key(const pg_msg_t *got, const char *used, pg_str_t key)
{
    for (uint32_t i = 0; i < got->ntokens; i++)
        if (!used[i] && str_same(got->tokens[i].key, key))
            return (long)i;
    return -1;
}

static int compare_tokens(const pg_msg_t *exp, const pg_msg_t *got, int lenient, char *why,
                          size_t whylen)
{
    char *used = calloc((size_t)got->ntokens + 1, 1);
    char a[SHOWN_VALUE_MAX + 32], b[SHOWN_VALUE_MAX + 32];
    int rc = 0;

    if (used == NULL) {
        snprintf(why, whylen, "out of memory comparing");
        return 1;
    }
    for (uint32_t i = 0; i < exp->ntokens && rc == 0; i++) {
        const pg_token_t *t = &exp->tokens[i];
        long j = find_key(got, used, t->key);

        if (j < 0) {
            if (!compared_key(t->key, lenient))
                continue;
            shown(t->val, a, sizeof(a));
            snprintf(why, whylen, "%.*s: expected %s, got nothing", (int)t->key.len, t->key.ptr, a);
            rc = 1;
            break;
        }
        used[j] = 1;
        if (compared_key(t->key, lenient) && !str_same(t->val, got->tokens[j].val)) {
            shown(t->val, a, sizeof(a));
            shown(got->tokens[j].val, b, sizeof(b));
            snprintf(why, whylen, "%.*s: expected %s, got %s", (int)t->key.len, t->key.ptr, a, b);
            rc = 1;
        }
    }
    for (uint32_t j = 0; j < got->ntokens && rc == 0; j++) {
        if (used[j] || !compared_key(got->tokens[j].key, lenient))
            continue;
        shown(got->tokens[j].val, b, sizeof(b));
        snprintf(why, whylen, "unexpected key %.*s = %s", (int)got->tokens[j].key.len,
                 got->tokens[j].key.ptr, b);
        rc = 1;
    }
    free(used);
    return rc;
}

static int compare_raw(const char *e, size_t elen, const char *g, size_t glen, char *why,
                       size_t whylen)
{
    size_t i = 0;

    if (elen == glen && memcmp(e, g, elen) == 0)
        return 0;
    while (i < elen && i < glen && e[i] == g[i])
        i++;
    snprintf(why, whylen, "the bytes differ from byte %zu on (%zu expected, %zu received)", i,
             elen, glen);
    return 1;
}

int pg_replay_compare(const pg_replay_map_t *m, const char *expected, size_t elen,
                      const char *got, size_t glen, int lenient, char *why, size_t whylen)
{
    pg_trace_parsed_t pe = { 0 }, pg = { 0 };
    char *exp = NULL;
    size_t xlen;
    int rce, rcg, rc;

    why[0] = '\0';
    if (subst_kvs(m, expected, elen, &exp, &xlen) != 0) {
        snprintf(why, whylen, "out of memory comparing");
        return 1;
    }
    rce = pg_trace_parse(&pe, exp, xlen);
    rcg = pg_trace_parse(&pg, got, glen);
    if (rce != PG_WIRE_OK || rcg != PG_WIRE_OK)
        rc = compare_raw(exp, xlen, got, glen, why, whylen);
    else if (pe.msg.cmd != pg.msg.cmd || !str_same(pe.msg.name, pg.msg.name)) {
        snprintf(why, whylen, "command: expected '%.*s', got '%.*s'", (int)pe.msg.name.len,
                 pe.msg.name.ptr, (int)pg.msg.name.len, pg.msg.name.ptr);
        rc = 1;
    } else
        rc = compare_tokens(&pe.msg, &pg.msg, lenient, why, whylen);
    pg_trace_parsed_release(&pe);
    pg_trace_parsed_release(&pg);
    free(exp);
    return rc;
}
