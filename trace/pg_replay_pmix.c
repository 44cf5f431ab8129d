/*
 * pg_replay_pmix: PMIx request rewriting and reply comparison for `pmigate
 * replay`.  See pg_replay_pmix.h.
 *
 * The rewrite needs no knowledge of the commands: a payload is a sequence
 * of typed groups, and what must change has a type of its own — a
 * namespace lives in a PROC (also inside VALUEs, INFOs and PDATA), a
 * per-rank key name in a STRING group (keys of get, commit, lookup).  So
 * every group is unpacked, its elements fixed by type, and packed again.
 */
#include "trace/pg_replay_pmix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"
#include "trace/pg_trace_pmix.h"
#include "wire/pg_pmix_frame.h"

enum { GROUP_HEADER_LEN = 6 }; /* u16 type, u32 count (docs/pack-format.md) */

/* ---------------------------------------------------------------- */
/* rewriting                                                          */
/* ---------------------------------------------------------------- */

static int kvs_renamed(const pg_replay_map_t *m)
{
    return m->old_kvs != NULL && m->new_kvs != NULL && m->old_kvs[0] != '\0' &&
           strcmp(m->old_kvs, m->new_kvs) != 0;
}

/* Every occurrence of `from` in s replaced by `to`: malloc'd. */
static char *subst(const char *s, const char *from, const char *to)
{
    size_t flen = strlen(from), tlen = strlen(to), hits = 0, o = 0;
    const char *p = s, *hit;
    char *out;

    for (; flen > 0 && (hit = strstr(p, from)) != NULL; p = hit + flen)
        hits++;
    out = malloc(strlen(s) + hits * tlen + 1);
    if (out == NULL)
        return NULL;
    for (p = s; flen > 0 && (hit = strstr(p, from)) != NULL; p = hit + flen) {
        memcpy(out + o, p, (size_t)(hit - p));
        o += (size_t)(hit - p);
        memcpy(out + o, to, tlen);
        o += tlen;
    }
    strcpy(out + o, p);
    return out;
}

static void fix_proc(const pg_replay_map_t *m, pmix_proc_t *p, int *changed)
{
    if (kvs_renamed(m) && strcmp(p->nspace, m->old_kvs) == 0) {
        snprintf(p->nspace, sizeof(p->nspace), "%s", m->new_kvs);
        *changed = 1;
    }
    if (m->nrec > 0 && p->rank < (pmix_rank_t)m->nrec && m->block_base != 0) {
        p->rank += (pmix_rank_t)m->block_base;
        *changed = 1;
    }
}

/* --ranks: a key ending in the number of a recorded rank ("card-3") names
 * the copy's rank instead, as PMI keys do (pg_replay_msg.h). */
static char *renamed_key(const pg_replay_map_t *m, const char *s)
{
    size_t len = strlen(s), digits = 0;
    long v;
    char *out;

    while (digits < len && s[len - 1 - digits] >= '0' && s[len - 1 - digits] <= '9')
        digits++;
    if (m->nrec <= 0 || m->block_base == 0 || digits == 0 || digits == len || digits > 7)
        return NULL;
    v = strtol(s + len - digits, NULL, 10);
    if (v >= m->nrec || asprintf(&out, "%.*s%ld", (int)(len - digits), s, v + m->block_base) < 0)
        return NULL;
    return out;
}

static int fix_string(const pg_replay_map_t *m, char **s, int is_key, int *changed)
{
    char *fixed;

    if (*s == NULL)
        return 0;
    if (kvs_renamed(m) && strstr(*s, m->old_kvs) != NULL) {
        if ((fixed = subst(*s, m->old_kvs, m->new_kvs)) == NULL)
            return -1;
        free(*s);
        *s = fixed;
        *changed = 1;
    }
    if (is_key && (fixed = renamed_key(m, *s)) != NULL) {
        free(*s);
        *s = fixed;
        *changed = 1;
    }
    return 0;
}

static int fix_element(const pg_replay_map_t *m, pmix_data_type_t type, void *e, int *changed);

/* Arrays nest procs too (an event's PMIX_EVENT_CUSTOM_RANGE, affected procs). */
static int fix_darray(const pg_replay_map_t *m, pmix_data_array_t *d, int *changed)
{
    size_t elem = pg_type_elem_size(d->type);
    int rc = 0;

    for (size_t i = 0; d->array != NULL && elem > 0 && i < d->size && rc == 0; i++)
        rc = fix_element(m, d->type, (char *)d->array + i * elem, changed);
    return rc;
}

static int fix_value(const pg_replay_map_t *m, pmix_value_t *v, int *changed)
{
    if (v->type == PMIX_STRING)
        return fix_string(m, &v->data.string, 0, changed);
    if (v->type == PMIX_PROC && v->data.proc != NULL)
        fix_proc(m, v->data.proc, changed);
    if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL)
        return fix_darray(m, v->data.darray, changed);
    return 0;
}

static int fix_element(const pg_replay_map_t *m, pmix_data_type_t type, void *e, int *changed)
{
    switch (type) {
    case PMIX_PROC:
        fix_proc(m, e, changed);
        return 0;
    case PMIX_STRING: /* in requests: keys (get, commit, lookup) and abort's message */
        return fix_string(m, e, 1, changed);
    case PMIX_VALUE:
        return fix_value(m, e, changed);
    case PMIX_INFO:
        return fix_value(m, &((pmix_info_t *)e)->value, changed);
    case PMIX_PDATA:
        fix_proc(m, &((pmix_pdata_t *)e)->proc, changed);
        return fix_value(m, &((pmix_pdata_t *)e)->value, changed);
    default:
        return 0;
    }
}

/* Moves the next group of `in` to `out`, fixed.  -1: it does not decode. */
static int rewrite_group(const pg_replay_map_t *m, pmix_data_buffer_t *in,
                         pmix_data_buffer_t *out, int *changed)
{
    const unsigned char *p = (const unsigned char *)in->unpack_ptr;
    pmix_data_type_t type;
    uint32_t count;
    int32_t n;
    size_t elem;
    void *arr;
    int rc = -1;

    if (pg_buffer_unread(in) < GROUP_HEADER_LEN)
        return -1;
    type = (pmix_data_type_t)(p[0] << 8 | p[1]);
    count = pg_pmix_get_u32(p + 2);
    elem = pg_type_elem_size(type);
    if (elem == 0 || count == 0 || count > pg_buffer_unread(in))
        return -1;
    arr = calloc(count, elem);
    if (arr == NULL)
        return -1;
    n = (int32_t)count;
    if (pg_unpack(in, arr, &n, type) != PMIX_SUCCESS || (uint32_t)n != count) {
        free(arr); /* all or nothing: nothing is left allocated */
        return -1;
    }
    rc = 0;
    for (int32_t i = 0; i < n && rc == 0; i++)
        rc = fix_element(m, type, (char *)arr + (size_t)i * elem, changed);
    if (rc == 0 && pg_pack(out, arr, n, type) != PMIX_SUCCESS)
        rc = -1;
    pg_pmix_array_free(arr, (size_t)n, type);
    return rc;
}

static int copy_out(const char *bytes, size_t len, char **out, size_t *outlen)
{
    *out = malloc(len ? len : 1);
    if (*out == NULL)
        return -1;
    memcpy(*out, bytes, len);
    *outlen = len;
    return 0;
}

static int rewrite_preamble(const pg_replay_map_t *m, const char *in, size_t len, char **out,
                            size_t *outlen)
{
    pg_pmix_preamble_t pre;

    if (copy_out(in, len, out, outlen) != 0)
        return -1;
    if (pg_pmix_preamble_parse(in, len, &pre) == PG_PMIX_FRAME_OK &&
        pre.rank != PG_PMIX_RANK_FROM_FD && m->nrec > 0 && pre.rank < (uint32_t)m->nrec)
        pg_pmix_put_u32((unsigned char *)*out + 8, pre.rank + (uint32_t)m->block_base);
    return 0;
}

int pg_replay_pmix_rewrite(const pg_replay_map_t *m, const char *in, size_t len, char **out,
                           size_t *outlen)
{
    static const char no_length_yet[PG_PMIX_HEADER_LEN];
    pmix_data_buffer_t view, fixed;
    size_t payload;
    int changed = 0, ok = 1;

    if (pg_pmix_is_start(in, len))
        return rewrite_preamble(m, in, len, out, outlen);
    if (pg_pmix_frame_next(in, len, PG_PMIX_FRAME_MAX, &payload) != PG_PMIX_FRAME_OK ||
        PG_PMIX_HEADER_LEN + payload != len)
        return copy_out(in, len, out, outlen);
    pg_pmix_msg_view(&view, in + PG_PMIX_HEADER_LEN, payload);
    pg_buffer_construct(&fixed);
    ok = pg_buffer_append(&fixed, no_length_yet, sizeof(no_length_yet)) == PMIX_SUCCESS;
    while (ok && pg_buffer_unread(&view) > 0)
        ok = rewrite_group(m, &view, &fixed, &changed) == 0;
    if (ok && changed && pg_pmix_msg_seal(&fixed) == PMIX_SUCCESS) {
        int rc = copy_out(fixed.base_ptr, fixed.bytes_used, out, outlen);

        pg_buffer_destruct(&fixed);
        return rc;
    }
    pg_buffer_destruct(&fixed);
    return copy_out(in, len, out, outlen);
}

/* ---------------------------------------------------------------- */
/* comparison                                                         */
/* ---------------------------------------------------------------- */

int pg_replay_pmix_reply_id(const char *bytes, size_t len, unsigned *id)
{
    pg_trace_pmix_head_t h;

    if (pg_trace_pmix_head(bytes, len, 0, &h) != 0 || h.kind != PG_TRACE_PMIX_REPLY)
        return -1;
    *id = h.id;
    return 0;
}

/* Whether the recorded request is a get of a machine-dependent key. */
static int gets_volatile_key(const char *req, size_t rlen)
{
    pg_trace_pmix_msg_t m = { 0 };
    int vol = 0;

    if (req != NULL && pg_trace_pmix_decode(req, rlen, 1, &m) == 0 &&
        m.head.cmd == PG_PMIX_CMD_GET) {
        for (size_t i = 0; i < m.nfields; i++) {
            const char *v = m.fields[i].value;

            if (strcmp(m.fields[i].arg, "key") == 0 && v != NULL && v[0] == '"') {
                char key[PMIX_MAX_KEYLEN + 1];

                snprintf(key, sizeof(key), "%.*s", (int)strlen(v + 1) - 1, v + 1);
                vol = pg_trace_pmix_key_is_volatile(key);
            }
        }
    }
    pg_trace_pmix_msg_release(&m);
    return vol;
}

static const char *short_status(pmix_status_t st)
{
    const char *n = pg_status_name(st);

    return strncmp(n, "PMIX_", 5) == 0 ? n + 5 : n;
}

static int compare_heads(const pg_trace_pmix_head_t *e, const pg_trace_pmix_head_t *g,
                         char *why, size_t whylen)
{
    if (e->cmd != g->cmd)
        snprintf(why, whylen, "command: expected '%s', got '%s'", pg_pmix_cmd_name(e->cmd),
                 pg_pmix_cmd_name(g->cmd));
    else if (e->id != g->id)
        snprintf(why, whylen, "request id: expected %u, got %u", (unsigned)e->id,
                 (unsigned)g->id);
    else if (e->status != g->status)
        snprintf(why, whylen, "status: expected %s, got %s", short_status(e->status),
                 short_status(g->status));
    else
        return 0;
    return 1;
}

static void field_name(const pg_trace_pmix_field_t *f, char *buf, size_t len)
{
    if (f->item != NULL)
        snprintf(buf, len, "%s[%s]", f->arg, f->item);
    else if (f->index >= 0)
        snprintf(buf, len, "%s[%d]", f->arg, f->index);
    else
        snprintf(buf, len, "%s", f->arg);
}

static int str_eq(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The first difference between two fields, the recorded one with the new
 * namespace in its value.  0: same. */
static int compare_field(const pg_replay_map_t *m, const pg_trace_pmix_field_t *e,
                         const pg_trace_pmix_field_t *g, int skip_value, char *why,
                         size_t whylen)
{
    char name[160], *et, *gt, *want = NULL;
    pg_trace_pmix_field_t renamed = *e;
    int differ;

    field_name(e, name, sizeof(name));
    if (strcmp(e->arg, g->arg) != 0 || e->index != g->index || !str_eq(e->item, g->item)) {
        char other[160];

        field_name(g, other, sizeof(other));
        snprintf(why, whylen, "expected %s, got %s", name, other);
        return 1;
    }
    if (skip_value || (e->item != NULL && pg_trace_pmix_key_is_volatile(e->item)))
        return 0;
    if (e->value != NULL && kvs_renamed(m) && (want = subst(e->value, m->old_kvs, m->new_kvs)))
        renamed.value = want;
    differ = renamed.type != g->type || !str_eq(renamed.value, g->value);
    if (differ) {
        et = pg_trace_pmix_field_text(&renamed);
        gt = pg_trace_pmix_field_text(g);
        snprintf(why, whylen, "%s: expected %s, got %s", name, et ? et : "?", gt ? gt : "?");
        free(et);
        free(gt);
    }
    free(want);
    return differ;
}

static int compare_fields(const pg_replay_map_t *m, const pg_trace_pmix_msg_t *e,
                          const pg_trace_pmix_msg_t *g, int skip_value, char *why, size_t whylen)
{
    char name[160];
    size_t i;

    for (i = 0; i < e->nfields && i < g->nfields; i++)
        if (compare_field(m, &e->fields[i], &g->fields[i],
                          skip_value && strcmp(e->fields[i].arg, "value") == 0, why, whylen))
            return 1;
    if (i < e->nfields) {
        field_name(&e->fields[i], name, sizeof(name));
        snprintf(why, whylen, "%s: expected %s, got nothing", name,
                 e->fields[i].value ? e->fields[i].value : "an empty array");
        return 1;
    }
    if (i < g->nfields) {
        field_name(&g->fields[i], name, sizeof(name));
        snprintf(why, whylen, "unexpected %s = %s", name,
                 g->fields[i].value ? g->fields[i].value : "an empty array");
        return 1;
    }
    return 0;
}

int pg_replay_pmix_compare(const pg_replay_map_t *m, const char *request, size_t rlen,
                           const char *expected, size_t elen, const char *got, size_t glen,
                           int lenient, char *why, size_t whylen)
{
    pg_trace_pmix_msg_t e = { 0 }, g = { 0 };
    int rc;

    why[0] = '\0';
    if (pg_trace_pmix_decode(expected, elen, 0, &e) != 0) {
        /* a recording this pmigate cannot decode: the bytes must be equal */
        rc = elen != glen || memcmp(expected, got, elen) != 0;
        if (rc)
            snprintf(why, whylen, "the recorded reply does not decode (%s) and the bytes differ",
                     e.error);
    } else if (pg_trace_pmix_decode(got, glen, 0, &g) != 0 && g.head.kind == PG_TRACE_PMIX_BAD) {
        snprintf(why, whylen, "the reply does not decode: %s", g.error);
        rc = 1;
    } else if ((rc = compare_heads(&e.head, &g.head, why, whylen)) == 0 && !lenient) {
        rc = g.error[0] != '\0'
                 ? (snprintf(why, whylen, "the reply does not decode: %s", g.error), 1)
                 : compare_fields(m, &e, &g, gets_volatile_key(request, rlen), why, whylen);
    }
    pg_trace_pmix_msg_release(&e);
    pg_trace_pmix_msg_release(&g);
    return rc;
}
