/*
 * pg_trace_pmix: decoding traced PMIx messages.  See pg_trace_pmix.h.
 *
 * Every command's arguments and results are described by a small schema
 * table (the tables of docs/pmix-transport.md), read with the transport's
 * unpack helpers and rendered field by field.  The schema is the only place
 * the decoder knows the commands; a new command is a new table row.
 */
#include "trace/pg_trace_pmix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"
#include "wire/pg_escape.h"
#include "wire/pg_pmix_frame.h"

enum { SHOWN_BYTES_MAX = 32 };

/* How an argument is laid out. */
typedef enum arg_shape {
    ARG_ONE,    /* one group of one element */
    ARG_ARRAY,  /* UINT32 count, then one group of count elements */
    ARG_PUTS,   /* UINT32 n, then n x (SCOPE, STRING key, VALUE): commit's puts */
} arg_shape_t;

typedef struct arg_spec {
    const char *name;
    pmix_data_type_t type;
    arg_shape_t shape;
} arg_spec_t;

enum { ARGS_MAX = 5 };

typedef struct cmd_schema {
    arg_spec_t request[ARGS_MAX + 1];  /* ends at a NULL name */
    arg_spec_t results[ARGS_MAX + 1];
} cmd_schema_t;

static const cmd_schema_t schemas[PG_PMIX_CMD_MAX] = {
    [PG_PMIX_CMD_INIT] = { .results = { { "nspace", PMIX_STRING, ARG_ONE },
                                        { "rank", PMIX_PROC_RANK, ARG_ONE },
                                        { "job", PMIX_INFO, ARG_ARRAY },
                                        { "proc", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_COMMIT] = { .request = { { "puts", PMIX_VALUE, ARG_PUTS } } },
    [PG_PMIX_CMD_FENCE] = { .request = { { "procs", PMIX_PROC, ARG_ARRAY },
                                         { "info", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_GET] = { .request = { { "proc", PMIX_PROC, ARG_ONE },
                                       { "key", PMIX_STRING, ARG_ONE },
                                       { "info", PMIX_INFO, ARG_ARRAY },
                                       { "nonblocking", PMIX_BOOL, ARG_ONE } },
                          .results = { { "value", PMIX_VALUE, ARG_ONE },
                                       { "poster", PMIX_PROC_RANK, ARG_ONE } } },
    [PG_PMIX_CMD_PUBLISH] = { .request = { { "info", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_LOOKUP] = { .request = { { "keys", PMIX_STRING, ARG_ARRAY },
                                          { "info", PMIX_INFO, ARG_ARRAY } },
                             .results = { { "data", PMIX_PDATA, ARG_ARRAY } } },
    [PG_PMIX_CMD_UNPUBLISH] = { .request = { { "keys", PMIX_STRING, ARG_ARRAY },
                                             { "info", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_ABORT] = { .request = { { "status", PMIX_STATUS, ARG_ONE },
                                         { "message", PMIX_STRING, ARG_ONE },
                                         { "procs", PMIX_PROC, ARG_ARRAY } } },
    [PG_PMIX_CMD_FINALIZE] = { .request = { { "info", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_NOTIFY] = { .request = { { "status", PMIX_STATUS, ARG_ONE },
                                          { "source", PMIX_PROC, ARG_ONE },
                                          { "range", PMIX_DATA_RANGE, ARG_ONE },
                                          { "targets", PMIX_PROC, ARG_ARRAY },
                                          { "info", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_EVENT] = { .results = { { "source", PMIX_PROC, ARG_ONE },
                                         { "range", PMIX_DATA_RANGE, ARG_ONE },
                                         { "info", PMIX_INFO, ARG_ARRAY } } },
    /* a query's request is a count of (keys[], qualifiers[]) pairs: shown raw */
    [PG_PMIX_CMD_QUERY] = { .results = { { "results", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_LOG] = { .request = { { "data", PMIX_INFO, ARG_ARRAY },
                                       { "directives", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_GROUP_CONSTRUCT] = { .request = { { "group", PMIX_STRING, ARG_ONE },
                                                   { "procs", PMIX_PROC, ARG_ARRAY },
                                                   { "info", PMIX_INFO, ARG_ARRAY } },
                                      .results = { { "context_id", PMIX_SIZE, ARG_ONE },
                                                   { "nshared", PMIX_UINT32, ARG_ONE } } },
    [PG_PMIX_CMD_GROUP_DESTRUCT] = { .request = { { "group", PMIX_STRING, ARG_ONE },
                                                  { "info", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_GROUP_INVITE] = { .request = { { "group", PMIX_STRING, ARG_ONE },
                                                { "procs", PMIX_PROC, ARG_ARRAY },
                                                { "info", PMIX_INFO, ARG_ARRAY } },
                                   .results = { { "context_id", PMIX_SIZE, ARG_ONE },
                                                { "members", PMIX_PROC, ARG_ARRAY } } },
    [PG_PMIX_CMD_GROUP_JOIN] = { .request = { { "group", PMIX_STRING, ARG_ONE },
                                              { "leader", PMIX_PROC, ARG_ONE },
                                              { "accept", PMIX_BOOL, ARG_ONE },
                                              { "info", PMIX_INFO, ARG_ARRAY } },
                                 .results = { { "context_id", PMIX_SIZE, ARG_ONE },
                                              { "members", PMIX_PROC, ARG_ARRAY } } },
    [PG_PMIX_CMD_GROUP_LEAVE] = { .request = { { "group", PMIX_STRING, ARG_ONE },
                                               { "info", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_JOB_CONTROL] = { .request = { { "targets", PMIX_PROC, ARG_ARRAY },
                                               { "directives", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_MONITOR] = { .request = { { "monitor", PMIX_INFO, ARG_ONE },
                                           { "code", PMIX_STATUS, ARG_ONE },
                                           { "directives", PMIX_INFO, ARG_ARRAY } } },
    /* the apps after napps vary in number: shown as the bytes left */
    [PG_PMIX_CMD_SPAWN] = { .request = { { "jobinfo", PMIX_INFO, ARG_ARRAY },
                                         { "napps", PMIX_UINT32, ARG_ONE } },
                            .results = { { "nspace", PMIX_STRING, ARG_ONE } } },
    [PG_PMIX_CMD_CONNECT] = { .request = { { "procs", PMIX_PROC, ARG_ARRAY },
                                           { "info", PMIX_INFO, ARG_ARRAY } } },
    [PG_PMIX_CMD_DISCONNECT] = { .request = { { "procs", PMIX_PROC, ARG_ARRAY },
                                              { "info", PMIX_INFO, ARG_ARRAY } } },
};

int pg_trace_pmix_key_is_volatile(const char *key)
{
    /* the process tables hold pids and the replayer's executable */
    static const char *const keys[] = { PMIX_HOSTNAME,         PMIX_NODE_LIST,
                                        PMIX_NODE_MAP,         PMIX_CPUSET,
                                        PMIX_LOCALITY_STRING,  PMIX_QUERY_PROC_TABLE,
                                        PMIX_QUERY_LOCAL_PROC_TABLE, NULL };

    for (int i = 0; key != NULL && keys[i] != NULL; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- */
/* header                                                             */
/* ---------------------------------------------------------------- */

static int is_preamble(const char *bytes, size_t len)
{
    pg_pmix_preamble_t pre;

    return len >= PG_PMIX_PREAMBLE_LEN && pg_pmix_is_start(bytes, len) &&
           pg_pmix_preamble_parse(bytes, len, &pre) != PG_PMIX_FRAME_EBAD_MAGIC;
}

size_t pg_trace_pmix_first(const char *bytes, size_t len)
{
    size_t payload;

    if (is_preamble(bytes, len))
        return PG_PMIX_PREAMBLE_LEN;
    if (pg_pmix_frame_next(bytes, len, PG_PMIX_FRAME_MAX, &payload) != PG_PMIX_FRAME_OK)
        return 0;
    return PG_PMIX_HEADER_LEN + payload;
}

/* A view over the payload of the frame bytes[0..len), which must be whole. */
static int payload_view(const char *bytes, size_t len, pmix_data_buffer_t *view)
{
    size_t payload;

    if (pg_pmix_frame_next(bytes, len, PG_PMIX_FRAME_MAX, &payload) != PG_PMIX_FRAME_OK ||
        PG_PMIX_HEADER_LEN + payload != len)
        return -1;
    pg_pmix_msg_view(view, bytes + PG_PMIX_HEADER_LEN, payload);
    return 0;
}

static int read_head(pmix_data_buffer_t *view, int from_client, pg_trace_pmix_head_t *h)
{
    uint8_t cmd;

    if (pg_pmix_msg_read_header(view, &cmd, &h->id) != PMIX_SUCCESS)
        return -1;
    h->cmd = cmd < PG_PMIX_CMD_MAX ? cmd : 0;
    h->kind = from_client ? PG_TRACE_PMIX_REQUEST : PG_TRACE_PMIX_REPLY;
    if (!from_client && pg_pmix_unpack_one(view, &h->status, PMIX_STATUS) != PMIX_SUCCESS)
        return -1;
    return 0;
}

int pg_trace_pmix_head(const char *bytes, size_t len, int from_client, pg_trace_pmix_head_t *h)
{
    pmix_data_buffer_t view;
    pg_pmix_preamble_t pre;

    memset(h, 0, sizeof(*h));
    if (from_client && is_preamble(bytes, len) && len == PG_PMIX_PREAMBLE_LEN) {
        (void)pg_pmix_preamble_parse(bytes, len, &pre); /* a foreign version is still shown */
        h->kind = PG_TRACE_PMIX_PREAMBLE;
        h->rank = pre.rank;
        return 0;
    }
    if (payload_view(bytes, len, &view) != 0 || read_head(&view, from_client, h) != 0) {
        memset(h, 0, sizeof(*h));
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- */
/* rendering values                                                   */
/* ---------------------------------------------------------------- */

static char *quoted(const char *s, size_t len)
{
    char *out = malloc(pg_escaped_max(len) + 2);

    if (out == NULL)
        return NULL;
    out[0] = '"';
    len = pg_escape(s, len, out + 1);
    out[len + 1] = '"';
    out[len + 2] = '\0';
    return out;
}

static char *rank_text(pmix_rank_t r)
{
    char buf[16];

    if (r == PMIX_RANK_WILDCARD)
        return strdup("*");
    if (r == PMIX_RANK_UNDEF)
        return strdup("undef");
    snprintf(buf, sizeof(buf), "%u", (unsigned)r);
    return strdup(buf);
}

static char *proc_text(const pmix_proc_t *p)
{
    char *rank = rank_text(p->rank), *out = NULL;

    if (rank != NULL && asprintf(&out, "%s:%s", p->nspace, rank) < 0)
        out = NULL;
    free(rank);
    return out;
}

static char *status_text(pmix_status_t st)
{
    const char *name = pg_status_name(st);

    return strdup(strncmp(name, "PMIX_", 5) == 0 ? name + 5 : name);
}

static char *bytes_text(const char *b, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t shown = n < SHOWN_BYTES_MAX ? n : SHOWN_BYTES_MAX;
    char *out = malloc(shown * 2 + 48);
    size_t o;

    if (out == NULL)
        return NULL;
    o = (size_t)sprintf(out, "<%zu bytes: ", n);
    for (size_t i = 0; i < shown; i++) {
        out[o++] = hex[(unsigned char)b[i] >> 4];
        out[o++] = hex[(unsigned char)b[i] & 15];
    }
    strcpy(out + o, shown < n ? "...>" : ">");
    return out;
}

/* Anything without a short form: the pack library's printer, its type
 * prefix dropped. */
static char *printed_text(const pmix_value_t *v)
{
    char *text = NULL, *colon, *out;

    if (pg_print(&text, NULL, v, PMIX_VALUE) != PMIX_SUCCESS || text == NULL)
        return strdup("?");
    colon = strstr(text, ": ");
    out = strdup(colon != NULL ? colon + 2 : text);
    free(text);
    return out;
}

static const char *range_name(pmix_data_range_t r)
{
    static const char *const names[] = { "undef",   "rm",     "local",  "namespace",
                                         "session", "global", "custom", "proc_local" };

    return r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

static char *value_text(const pmix_value_t *v)
{
    char *text = NULL;

    switch (v->type) {
    case PMIX_UNDEF:
        return strdup("undef");
    case PMIX_STRING:
        return v->data.string ? quoted(v->data.string, strlen(v->data.string)) : strdup("null");
    case PMIX_BOOL:
        return strdup(v->data.flag ? "true" : "false");
    case PMIX_PROC:
        return v->data.proc ? proc_text(v->data.proc) : strdup("null");
    case PMIX_PROC_RANK:
        return rank_text(v->data.rank);
    case PMIX_STATUS:
        return status_text(v->data.status);
    case PMIX_DATA_RANGE:
        return strdup(range_name(v->data.range));
    case PMIX_BYTE_OBJECT:
        if (pg_value_to_string(v, &text) == PMIX_SUCCESS) {
            char *q = quoted(text, strlen(text));

            free(text);
            return q;
        }
        return bytes_text(v->data.bo.bytes, v->data.bo.size);
    default:
        if (pg_value_to_string(v, &text) == PMIX_SUCCESS)
            return text;
        return printed_text(v);
    }
}

static const char *scope_name(pmix_scope_t s)
{
    static const char *const names[] = { "undef", "local", "remote", "global", "internal" };

    return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

char *pg_trace_pmix_field_text(const pg_trace_pmix_field_t *f)
{
    const char *t = pg_type_name(f->type);
    char *out = NULL;

    if (strncmp(t, "PMIX_", 5) == 0)
        t += 5;
    if (asprintf(&out, "%s %s", t, f->value ? f->value : "(none)") < 0)
        return NULL;
    return out;
}

/* ---------------------------------------------------------------- */
/* decoding                                                           */
/* ---------------------------------------------------------------- */

static int push_field(pg_trace_pmix_msg_t *m, const char *arg, int index, char *item,
                      pmix_data_type_t type, char *value)
{
    pg_trace_pmix_field_t *f;

    if (m->nfields == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        pg_trace_pmix_field_t *grown = realloc(m->fields, cap * sizeof(*grown));

        if (grown == NULL)
            goto nomem;
        m->fields = grown;
        m->cap = cap;
    }
    f = &m->fields[m->nfields++];
    *f = (pg_trace_pmix_field_t){ .arg = arg, .index = index, .item = item, .type = type,
                                  .value = value };
    return 0;
nomem:
    free(item);
    free(value);
    return -1;
}

/* Renders element i of an unpacked array of `type` as a field. */
static int push_element(pg_trace_pmix_msg_t *m, const char *arg, int index,
                        pmix_data_type_t type, const void *elem)
{
    switch (type) {
    case PMIX_INFO: {
        const pmix_info_t *x = elem;

        return push_field(m, arg, index, strdup(x->key), x->value.type, value_text(&x->value));
    }
    case PMIX_PDATA: {
        const pmix_pdata_t *d = elem;
        char *v = value_text(&d->value), *who = proc_text(&d->proc), *both = NULL;

        if (v != NULL && who != NULL && asprintf(&both, "%s by %s", v, who) < 0)
            both = NULL;
        free(v);
        free(who);
        return push_field(m, arg, index, strdup(d->key), d->value.type, both);
    }
    case PMIX_VALUE:
        return push_field(m, arg, index, NULL, ((const pmix_value_t *)elem)->type,
                          value_text(elem));
    case PMIX_PROC:
        return push_field(m, arg, index, NULL, type, proc_text(elem));
    case PMIX_STRING: {
        const char *s = *(char *const *)elem;

        return push_field(m, arg, index, NULL, type, s ? quoted(s, strlen(s)) : strdup("null"));
    }
    case PMIX_BOOL:
        return push_field(m, arg, index, NULL, type, strdup(*(const bool *)elem ? "true" : "false"));
    case PMIX_PROC_RANK:
        return push_field(m, arg, index, NULL, type, rank_text(*(const pmix_rank_t *)elem));
    case PMIX_STATUS:
        return push_field(m, arg, index, NULL, type, status_text(*(const pmix_status_t *)elem));
    case PMIX_DATA_RANGE:
        return push_field(m, arg, index, NULL, type,
                          strdup(range_name(*(const pmix_data_range_t *)elem)));
    case PMIX_SIZE: { /* a group's context id */
        char *text = NULL;

        if (asprintf(&text, "%zu", *(const size_t *)elem) < 0)
            text = NULL;
        return push_field(m, arg, index, NULL, type, text);
    }
    case PMIX_UINT32: { /* a count: a spawn's apps, a construct's shares */
        char *text = NULL;

        if (asprintf(&text, "%u", (unsigned)*(const uint32_t *)elem) < 0)
            text = NULL;
        return push_field(m, arg, index, NULL, type, text);
    }
    default:
        return push_field(m, arg, index, NULL, type, strdup("?"));
    }
}

static int fail(pg_trace_pmix_msg_t *m, const char *arg, pmix_status_t rc)
{
    snprintf(m->error, sizeof(m->error), "%s: %s", arg, pg_status_name(rc));
    return -1;
}

static int decode_one(pmix_data_buffer_t *view, const arg_spec_t *a, pg_trace_pmix_msg_t *m)
{
    size_t elem = pg_type_elem_size(a->type);
    void *buf = calloc(1, elem ? elem : 1);
    pmix_status_t rc;
    int out;

    if (buf == NULL)
        return fail(m, a->name, PMIX_ERR_NOMEM);
    rc = pg_pmix_unpack_one(view, buf, a->type);
    if (rc != PMIX_SUCCESS) {
        free(buf);
        return fail(m, a->name, rc);
    }
    out = push_element(m, a->name, -1, a->type, buf);
    pg_pmix_array_free(buf, 1, a->type);
    return out;
}

static int decode_array(pmix_data_buffer_t *view, const arg_spec_t *a, pg_trace_pmix_msg_t *m)
{
    size_t elem = pg_type_elem_size(a->type), n;
    void *arr;
    pmix_status_t rc = pg_pmix_unpack_array(view, &arr, &n, a->type);
    int out = 0;

    if (rc != PMIX_SUCCESS)
        return fail(m, a->name, rc);
    if (n == 0)
        out = push_field(m, a->name, -2, NULL, PMIX_UNDEF, NULL);
    for (size_t i = 0; i < n && out == 0; i++)
        out = push_element(m, a->name, (int)i, a->type, (char *)arr + i * elem);
    pg_pmix_array_free(arr, n, a->type);
    return out;
}

/* commit: n x (scope, key, value), one field per put (item = key). */
static int decode_puts(pmix_data_buffer_t *view, const arg_spec_t *a, pg_trace_pmix_msg_t *m)
{
    uint32_t n;
    pmix_status_t rc = pg_pmix_unpack_one(view, &n, PMIX_UINT32);

    if (rc != PMIX_SUCCESS)
        return fail(m, a->name, rc);
    if (n == 0)
        return push_field(m, a->name, -2, NULL, PMIX_UNDEF, NULL);
    for (uint32_t i = 0; i < n; i++) {
        pmix_scope_t scope;
        char *key = NULL, *v, *text = NULL;
        pmix_value_t val = { 0 };

        if ((rc = pg_pmix_unpack_one(view, &scope, PMIX_SCOPE)) != PMIX_SUCCESS ||
            (rc = pg_pmix_unpack_one(view, &key, PMIX_STRING)) != PMIX_SUCCESS ||
            (rc = pg_pmix_unpack_one(view, &val, PMIX_VALUE)) != PMIX_SUCCESS) {
            free(key);
            return fail(m, a->name, rc);
        }
        v = value_text(&val);
        if (v != NULL && asprintf(&text, "%s (%s)", v, scope_name(scope)) < 0)
            text = NULL;
        free(v);
        if (push_field(m, a->name, (int)i, key, val.type, text) != 0) {
            pg_value_destruct(&val);
            return -1;
        }
        pg_value_destruct(&val);
    }
    return 0;
}

static const arg_spec_t *schema_of(const pg_trace_pmix_head_t *h)
{
    static const arg_spec_t none[1] = { { NULL, 0, ARG_ONE } };

    if (h->cmd <= 0 || h->cmd >= PG_PMIX_CMD_MAX)
        return NULL;
    if (h->kind == PG_TRACE_PMIX_REQUEST)
        return schemas[h->cmd].request;
    /* results only on success (lookup, query and a group invite also on
     * partial success); an event's status is its code, its body always
     * follows */
    if (h->status == PMIX_SUCCESS || h->cmd == PG_PMIX_CMD_EVENT ||
        ((h->cmd == PG_PMIX_CMD_LOOKUP || h->cmd == PG_PMIX_CMD_QUERY ||
          h->cmd == PG_PMIX_CMD_GROUP_INVITE) &&
         h->status == PMIX_ERR_PARTIAL_SUCCESS))
        return schemas[h->cmd].results;
    return none;
}

static int decode_preamble(const pg_trace_pmix_head_t *h, pg_trace_pmix_msg_t *m)
{
    char rank[16];

    if (h->rank == PG_PMIX_RANK_FROM_FD)
        snprintf(rank, sizeof(rank), "fd");
    else
        snprintf(rank, sizeof(rank), "%u", (unsigned)h->rank);
    return push_field(m, "rank", -1, NULL, PMIX_UINT32, strdup(rank));
}

int pg_trace_pmix_decode(const char *bytes, size_t len, int from_client, pg_trace_pmix_msg_t *m)
{
    pmix_data_buffer_t view;
    const arg_spec_t *args;

    if (pg_trace_pmix_head(bytes, len, from_client, &m->head) != 0) {
        snprintf(m->error, sizeof(m->error), "not a whole PMIx frame or preamble");
        return -1;
    }
    if (m->head.kind == PG_TRACE_PMIX_PREAMBLE)
        return decode_preamble(&m->head, m);
    payload_view(bytes, len, &view);
    read_head(&view, from_client, &m->head);
    args = schema_of(&m->head);
    if (args == NULL) {
        snprintf(m->error, sizeof(m->error), "unknown command");
        return -1;
    }
    for (; args->name != NULL; args++) {
        int rc = args->shape == ARG_ONE     ? decode_one(&view, args, m)
                 : args->shape == ARG_ARRAY ? decode_array(&view, args, m)
                                            : decode_puts(&view, args, m);

        if (rc != 0)
            return -1;
    }
    if (pg_buffer_unread(&view) > 0) {
        snprintf(m->error, sizeof(m->error), "%zu bytes after the last argument",
                 pg_buffer_unread(&view));
        return -1;
    }
    return 0;
}

void pg_trace_pmix_msg_release(pg_trace_pmix_msg_t *m)
{
    for (size_t i = 0; i < m->nfields; i++) {
        free(m->fields[i].item);
        free(m->fields[i].value);
    }
    free(m->fields);
    memset(m, 0, sizeof(*m));
}

static int is_wildcard_of(const char *proc, const char *kvsname)
{
    size_t n = strlen(proc);

    if (n < 2 || strcmp(proc + n - 2, ":*") != 0)
        return 0;
    return n == 2 || (strlen(kvsname) == n - 2 && strncmp(proc, kvsname, n - 2) == 0);
}

int pg_trace_pmix_fence_is_whole(const char *bytes, size_t len, const char *kvsname)
{
    pg_trace_pmix_msg_t m = { 0 };
    int whole = pg_trace_pmix_decode(bytes, len, 1, &m) == 0 && m.head.cmd == PG_PMIX_CMD_FENCE;

    for (size_t i = 0; whole && i < m.nfields; i++) {
        const pg_trace_pmix_field_t *f = &m.fields[i];

        if (strcmp(f->arg, "procs") == 0 && f->index >= 0)
            whole = f->value != NULL && is_wildcard_of(f->value, kvsname);
    }
    pg_trace_pmix_msg_release(&m);
    return whole;
}

/* ---------------------------------------------------------------- */
/* formatting                                                         */
/* ---------------------------------------------------------------- */

static void format_head(const pg_trace_pmix_head_t *h, FILE *s)
{
    char *st;

    if (h->kind == PG_TRACE_PMIX_PREAMBLE) {
        fputs("preamble", s);
        return;
    }
    fprintf(s, "%s #%u", pg_pmix_cmd_name(h->cmd), (unsigned)h->id);
    if (h->kind == PG_TRACE_PMIX_REPLY && (st = status_text(h->status)) != NULL) {
        fprintf(s, " %s", st);
        free(st);
    }
}

static void format_fields(const pg_trace_pmix_msg_t *m, FILE *s)
{
    for (size_t i = 0; i < m->nfields; i++) {
        const pg_trace_pmix_field_t *f = &m->fields[i];
        int first = i == 0 || m->fields[i - 1].arg != f->arg;
        int last = i + 1 == m->nfields || m->fields[i + 1].arg != f->arg;

        if (first)
            fprintf(s, " %s=%s", f->arg, f->index == -1 ? "" : "[");
        else
            fputs(", ", s);
        if (f->index != -2) {
            if (f->item != NULL)
                fprintf(s, "%s=", f->item);
            fputs(f->value ? f->value : "?", s);
        }
        if (last && f->index != -1)
            fputc(']', s);
    }
}

char *pg_trace_pmix_format(const pg_trace_pmix_msg_t *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&text, &len);

    if (s == NULL)
        return NULL;
    if (m->head.kind == PG_TRACE_PMIX_BAD)
        fputs("(not a PMIx frame)", s);
    else
        format_head(&m->head, s);
    format_fields(m, s);
    if (m->error[0] != '\0' && m->head.kind != PG_TRACE_PMIX_BAD)
        fprintf(s, " (undecoded: %s)", m->error);
    if (fclose(s) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
