/*
 * pg_enc: the message builder and the typed PMI-1 / PMI-2 encoders on top of
 * it (see pg_enc.h).  Every typed encoder is begin + adds + end, so the
 * escaping, separators and size checks live in one place: the builder.
 */
#include "wire/pg_enc.h"

#include <stdio.h>
#include <string.h>

#include "wire/pg_shm_format.h"

void pg_enc_init(pg_enc_t *e, char *buf, size_t cap)
{
    memset(e, 0, sizeof *e);
    e->buf = buf;
    e->cap = cap;
}

void pg_enc_reset(pg_enc_t *e)
{
    pg_enc_init(e, e->buf, e->cap);
}

static void pg_enc_fail(pg_enc_t *e, int err)
{
    if (e->err == 0)
        e->err = err;
}

static void pg_enc_put(pg_enc_t *e, const char *p, size_t n)
{
    if (e->err != 0)
        return;
    if (e->cap - e->pos < n) {
        pg_enc_fail(e, PG_WIRE_EOVERFLOW);
        return;
    }
    memcpy(e->buf + e->pos, p, n);
    e->pos += n;
}

/* One separator byte: no memcpy call for the ';', '=', ' ' and '\n' every
 * token carries. */
static void pg_enc_putc(pg_enc_t *e, char c)
{
    if (e->err != 0)
        return;
    if (e->pos >= e->cap) {
        pg_enc_fail(e, PG_WIRE_EOVERFLOW);
        return;
    }
    e->buf[e->pos++] = c;
}

static void pg_enc_puts(pg_enc_t *e, const char *s)
{
    pg_enc_put(e, s, strlen(s));
}

static void pg_enc_start(pg_enc_t *e, pg_cmd_t cmd, bool mcmd)
{
    e->pos = e->len; /* an unfinished message before this one is dropped */
    e->err = 0;
    e->open = true;
    e->mcmd = mcmd;
    e->proto = pg_cmd_proto(cmd);
    if (e->proto == PG_PROTO_PMI2) {
        /* the length field, filled in by pg_enc_end(), then cmd= */
        static const char head[] = "      cmd=";
        pg_enc_put(e, head, sizeof head - 1);
        pg_enc_puts(e, pg_cmd_name(cmd));
        pg_enc_putc(e, ';');
        return;
    }
    if (e->proto != PG_PROTO_PMI1) {
        pg_enc_fail(e, PG_WIRE_EINVAL);
        return;
    }
    pg_enc_puts(e, mcmd ? "mcmd=" : "cmd=");
    pg_enc_puts(e, pg_cmd_name(cmd));
    if (mcmd)
        pg_enc_putc(e, '\n');
}

void pg_enc_begin(pg_enc_t *e, pg_cmd_t cmd)
{
    pg_enc_start(e, cmd, false);
}

void pg_enc_begin_mcmd(pg_enc_t *e, pg_cmd_t cmd)
{
    pg_enc_start(e, cmd, true);
    if (e->proto != PG_PROTO_PMI1)
        pg_enc_fail(e, PG_WIRE_EINVAL);
}

/* Which framing reserves a byte in a key: one bit per framing, and one
 * for the NUL that ends every key. */
enum {
    PG_ENC_NOT_IN_PMI2_KEY = 1 << 0, /* ';' '=' '\n' */
    PG_ENC_NOT_IN_LINE_KEY = 1 << 1, /* PMI-1 line: ' ' '=' '\n' */
    PG_ENC_NOT_IN_MCMD_KEY = 1 << 2, /* PMI-1 mcmd block: '=' '\n' */
    PG_ENC_KEY_END = 1 << 3,         /* '\0' */
};

/* Keys are short, so one table look-up per byte, in the pass that also
 * measures the key, is cheaper than strlen plus a memchr per reserved
 * byte; the loop stops at the first byte with a bit it looks for. */
static const unsigned char pg_enc_key_reserved[256] = {
    ['\0'] = PG_ENC_KEY_END,
    ['\n'] = PG_ENC_NOT_IN_PMI2_KEY | PG_ENC_NOT_IN_LINE_KEY | PG_ENC_NOT_IN_MCMD_KEY,
    ['='] = PG_ENC_NOT_IN_PMI2_KEY | PG_ENC_NOT_IN_LINE_KEY | PG_ENC_NOT_IN_MCMD_KEY,
    [' '] = PG_ENC_NOT_IN_LINE_KEY,
    [';'] = PG_ENC_NOT_IN_PMI2_KEY,
};

static unsigned char pg_enc_key_framing(const pg_enc_t *e)
{
    if (e->proto == PG_PROTO_PMI2)
        return PG_ENC_NOT_IN_PMI2_KEY;
    return e->mcmd ? PG_ENC_NOT_IN_MCMD_KEY : PG_ENC_NOT_IN_LINE_KEY;
}

/* The length of a key this framing can carry, or 0 when it cannot (NULL,
 * empty, or holding a reserved byte). */
static size_t pg_enc_key_len(const pg_enc_t *e, const char *key)
{
    unsigned char stop = pg_enc_key_framing(e) | PG_ENC_KEY_END;
    size_t n = 0;

    if (key == NULL)
        return 0;
    while (!(pg_enc_key_reserved[(unsigned char)key[n]] & stop))
        n++;
    return key[n] == '\0' ? n : 0;
}

/* Values are long (a 220-byte card is the common case), so memchr, which
 * scans many bytes per step, beats a per-byte table here.  PMI-1 cannot
 * carry a space in a line value, nor '\n' anywhere; PMI-2 values carry
 * anything but NUL (clients keep them as C strings). */
static bool pg_enc_value_ok(const pg_enc_t *e, pg_str_t v)
{
    if (memchr(v.ptr, '\0', v.len) != NULL)
        return false;
    if (e->proto == PG_PROTO_PMI2)
        return true;
    if (memchr(v.ptr, '\n', v.len) != NULL)
        return false;
    return e->mcmd || memchr(v.ptr, ' ', v.len) == NULL;
}

/* Writes the decimal digits of v so they end just before `end`; returns
 * where they start.  snprintf costs ~1000 instructions per number. */
static char *pg_enc_digits(char *end, unsigned long v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return end;
}

/* PMI-2 values escape ';' as ";;" (what Slurm's libpmi2 and MPICH <= 4.0
 * decode); other bytes pass unchanged. */
static void pg_enc_put_pmi2_value(pg_enc_t *e, pg_str_t v)
{
    const char *from = v.ptr, *end = v.ptr + v.len, *semi;

    while ((semi = memchr(from, ';', (size_t)(end - from))) != NULL) {
        pg_enc_put(e, from, (size_t)(semi + 1 - from));
        pg_enc_putc(e, ';');
        from = semi + 1;
    }
    pg_enc_put(e, from, (size_t)(end - from));
}

/* "key=" with the separator the framing puts before it; fails for a key
 * the framing cannot carry. */
static void pg_enc_put_key(pg_enc_t *e, const char *key)
{
    size_t klen = pg_enc_key_len(e, key);

    if (!e->open || klen == 0) {
        pg_enc_fail(e, PG_WIRE_EINVAL);
        return;
    }
    if (e->proto == PG_PROTO_PMI1 && !e->mcmd)
        pg_enc_putc(e, ' ');
    pg_enc_put(e, key, klen);
    pg_enc_putc(e, '=');
}

/* What ends a token: ';' in PMI-2, '\n' in an mcmd block, nothing in a
 * PMI-1 line (the next token's space separates). */
static void pg_enc_end_token(pg_enc_t *e)
{
    if (e->proto == PG_PROTO_PMI2)
        pg_enc_putc(e, ';');
    else if (e->mcmd)
        pg_enc_putc(e, '\n');
}

/* key=value for a value made here (digits, TRUE/FALSE): no byte of it is
 * reserved or escaped in any framing, so it is written unchecked. */
static void pg_enc_add_plain(pg_enc_t *e, const char *key, const char *val, size_t len)
{
    pg_enc_put_key(e, key);
    pg_enc_put(e, val, len);
    pg_enc_end_token(e);
}

void pg_enc_add_str(pg_enc_t *e, const char *key, pg_str_t val)
{
    if (val.ptr == NULL || !pg_enc_value_ok(e, val)) {
        pg_enc_fail(e, PG_WIRE_EINVAL);
        return;
    }
    pg_enc_put_key(e, key);
    if (e->proto == PG_PROTO_PMI2)
        pg_enc_put_pmi2_value(e, val);
    else
        pg_enc_put(e, val.ptr, val.len);
    pg_enc_end_token(e);
}

void pg_enc_add(pg_enc_t *e, const char *key, const char *val)
{
    pg_str_t v = { val, val ? (uint32_t)strlen(val) : 0 };
    pg_enc_add_str(e, key, v);
}

void pg_enc_add_long(pg_enc_t *e, const char *key, long val)
{
    char num[24];
    char *end = num + sizeof num;
    char *p = pg_enc_digits(end, val < 0 ? 0UL - (unsigned long)val : (unsigned long)val);

    if (val < 0)
        *--p = '-';
    pg_enc_add_plain(e, key, p, (size_t)(end - p));
}

void pg_enc_add_bool(pg_enc_t *e, const char *key, bool val)
{
    if (val)
        pg_enc_add_plain(e, key, "TRUE", 4);
    else
        pg_enc_add_plain(e, key, "FALSE", 5);
}

/* Closes the message: the terminator, or the PMI-2 length field. */
static void pg_enc_close(pg_enc_t *e)
{
    if (e->proto == PG_PROTO_PMI2) {
        size_t body = e->pos - e->len - PG_PMI2_LENGTH_FIELD;
        if (body > PG_PMI2_BODY_MAX) {
            pg_enc_fail(e, PG_WIRE_EINVAL);
            return;
        }
        /* "%6u": right-aligned, space-padded; body <= PG_PMI2_BODY_MAX fits */
        char *field = e->buf + e->len;
        memset(field, ' ', PG_PMI2_LENGTH_FIELD);
        (void)pg_enc_digits(field + PG_PMI2_LENGTH_FIELD, body);
        return;
    }
    pg_enc_puts(e, e->mcmd ? "endcmd\n" : "\n");
    size_t max = e->mcmd ? PG_PMI1_MCMD_MAX : PG_PMI1_LINE_MAX;
    if (e->err == 0 && e->pos - e->len > max)
        pg_enc_fail(e, PG_WIRE_EINVAL);
}

int pg_enc_end(pg_enc_t *e)
{
    if (!e->open)
        return PG_WIRE_EINVAL;
    if (e->err == 0)
        pg_enc_close(e);
    int err = e->err;
    if (err == 0)
        e->len = e->pos;
    e->pos = e->len;
    e->err = 0;
    e->open = false;
    return err;
}

/* ---- PMI-1 responses ------------------------------------------------------ */

int pg_enc_pmi1_response_to_init(pg_enc_t *e, int rc, int version, int subversion)
{
    pg_enc_begin(e, PG_CMD_PMI1_RESPONSE_TO_INIT);
    pg_enc_add_long(e, "pmi_version", version);
    pg_enc_add_long(e, "pmi_subversion", subversion);
    pg_enc_add_long(e, "rc", rc);
    return pg_enc_end(e);
}

/* Four lines, kept or dropped together. */
int pg_enc_pmi1_initack(pg_enc_t *e, int size, int rank, int debug)
{
    size_t before = e->len;
    static const char *const keys[] = { "size", "rank", "debug" };
    const int vals[] = { size, rank, debug };
    pg_enc_begin(e, PG_CMD_PMI1_INITACK);
    int rc = pg_enc_end(e);
    for (int i = 0; i < 3 && rc == 0; i++) {
        pg_enc_begin(e, PG_CMD_PMI1_SET);
        pg_enc_add_long(e, keys[i], vals[i]);
        rc = pg_enc_end(e);
    }
    if (rc != 0)
        e->len = e->pos = before;
    return rc;
}

int pg_enc_pmi1_maxes(pg_enc_t *e)
{
    pg_enc_begin(e, PG_CMD_PMI1_MAXES);
    pg_enc_add_long(e, "rc", 0);
    pg_enc_add_long(e, "kvsname_max", PG_PMI1_KVSNAME_MAX);
    pg_enc_add_long(e, "keylen_max", PG_PMI1_KEYLEN_MAX);
    pg_enc_add_long(e, "vallen_max", PG_PMI1_VALLEN_MAX);
    return pg_enc_end(e);
}

/* "cmd=<cmd> rc=0 <key>=<val>" */
static int pg_enc_pmi1_one(pg_enc_t *e, pg_cmd_t cmd, const char *key, const char *val)
{
    pg_enc_begin(e, cmd);
    pg_enc_add_long(e, "rc", 0);
    pg_enc_add(e, key, val);
    return pg_enc_end(e);
}

static int pg_enc_pmi1_one_long(pg_enc_t *e, pg_cmd_t cmd, const char *key, long val)
{
    pg_enc_begin(e, cmd);
    pg_enc_add_long(e, "rc", 0);
    pg_enc_add_long(e, key, val);
    return pg_enc_end(e);
}

int pg_enc_pmi1_appnum(pg_enc_t *e, int appnum)
{
    return pg_enc_pmi1_one_long(e, PG_CMD_PMI1_APPNUM, "appnum", appnum);
}

int pg_enc_pmi1_my_kvsname(pg_enc_t *e, const char *kvsname)
{
    return pg_enc_pmi1_one(e, PG_CMD_PMI1_MY_KVSNAME, "kvsname", kvsname);
}

int pg_enc_pmi1_universe_size(pg_enc_t *e, int size)
{
    return pg_enc_pmi1_one_long(e, PG_CMD_PMI1_UNIVERSE_SIZE, "size", size);
}

int pg_enc_pmi1_result(pg_enc_t *e, pg_cmd_t cmd, int rc, const char *msg)
{
    pg_enc_begin(e, cmd);
    pg_enc_add_long(e, "rc", rc);
    if (msg != NULL)
        pg_enc_add(e, "msg", msg);
    return pg_enc_end(e);
}

int pg_enc_pmi1_put_result(pg_enc_t *e, int rc, const char *msg)
{
    return pg_enc_pmi1_result(e, PG_CMD_PMI1_PUT_RESULT, rc, msg);
}

int pg_enc_pmi1_get_result(pg_enc_t *e, const char *value)
{
    pg_enc_begin(e, PG_CMD_PMI1_GET_RESULT);
    pg_enc_add_long(e, "rc", 0);
    pg_enc_add(e, "msg", "success");
    pg_enc_add(e, "value", value); /* last: Flux's client and old hydra's peers rely on it */
    return pg_enc_end(e);
}

bool pg_enc_pmi1_value_sendable(const char *value)
{
    char line[PG_PMI1_REPLY_LINE_MAX + 1];
    pg_enc_t e;

    pg_enc_init(&e, line, sizeof line);
    return pg_enc_pmi1_get_result(&e, value) == 0 && e.len <= PG_PMI1_REPLY_LINE_MAX;
}

int pg_enc_pmi1_get_result_missing(pg_enc_t *e, pg_str_t key)
{
    char msg[PG_PMI1_LINE_MAX];
    if (key.ptr == NULL || key.len > PG_PMI1_LINE_MAX - 32)
        return PG_WIRE_EINVAL;
    snprintf(msg, sizeof msg, "key_%.*s_not_found", (int)key.len, key.ptr);
    pg_enc_begin(e, PG_CMD_PMI1_GET_RESULT);
    pg_enc_add_long(e, "rc", -1);
    pg_enc_add(e, "msg", msg);
    pg_enc_add(e, "value", "unknown");
    return pg_enc_end(e);
}

int pg_enc_pmi1_barrier_out(pg_enc_t *e)
{
    return pg_enc_pmi1_result(e, PG_CMD_PMI1_BARRIER_OUT, 0, NULL);
}

int pg_enc_pmi1_finalize_ack(pg_enc_t *e)
{
    return pg_enc_pmi1_result(e, PG_CMD_PMI1_FINALIZE_ACK, 0, NULL);
}

/* Name-service results: info=ok|fail for Slurm-era clients, rc for MPICH. */
static void pg_enc_pmi1_ns_status(pg_enc_t *e, int rc, const char *msg)
{
    pg_enc_add(e, "info", rc == 0 ? "ok" : "fail");
    pg_enc_add_long(e, "rc", rc);
    pg_enc_add(e, "msg", msg != NULL ? msg : rc == 0 ? "success" : "failed");
}

static int pg_enc_pmi1_ns_result(pg_enc_t *e, pg_cmd_t cmd, int rc, const char *msg)
{
    pg_enc_begin(e, cmd);
    pg_enc_pmi1_ns_status(e, rc, msg);
    return pg_enc_end(e);
}

int pg_enc_pmi1_publish_result(pg_enc_t *e, int rc, const char *msg)
{
    return pg_enc_pmi1_ns_result(e, PG_CMD_PMI1_PUBLISH_RESULT, rc, msg);
}

int pg_enc_pmi1_unpublish_result(pg_enc_t *e, int rc, const char *msg)
{
    return pg_enc_pmi1_ns_result(e, PG_CMD_PMI1_UNPUBLISH_RESULT, rc, msg);
}

int pg_enc_pmi1_lookup_result(pg_enc_t *e, int rc, const char *msg, const char *port)
{
    pg_enc_begin(e, PG_CMD_PMI1_LOOKUP_RESULT);
    if (rc == 0)
        pg_enc_add(e, "port", port);
    pg_enc_pmi1_ns_status(e, rc, msg);
    return pg_enc_end(e);
}

/* "e0,e1,..." into buf; false if it does not fit. */
static bool pg_enc_int_list(char *buf, size_t cap, const int *v, int n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + used, cap - used, "%s%d", i ? "," : "", v[i]);
        if (w < 0 || (size_t)w >= cap - used)
            return false;
        used += (size_t)w;
    }
    return true;
}

static void pg_enc_add_errcodes(pg_enc_t *e, const int *errcodes, int nerr)
{
    char list[PG_PMI1_VALLEN_MAX + 1];
    if (errcodes == NULL || nerr <= 0)
        return;
    if (!pg_enc_int_list(list, sizeof list, errcodes, nerr)) {
        pg_enc_fail(e, PG_WIRE_EINVAL);
        return;
    }
    pg_enc_add(e, "errcodes", list);
}

int pg_enc_pmi1_spawn_result(pg_enc_t *e, int rc, const char *jobid, const int *errcodes, int nerr)
{
    pg_enc_begin(e, PG_CMD_PMI1_SPAWN_RESULT);
    pg_enc_add_long(e, "rc", rc);
    if (jobid != NULL)
        pg_enc_add(e, "jobid", jobid);
    pg_enc_add_errcodes(e, errcodes, nerr);
    return pg_enc_end(e);
}

int pg_enc_pmi1_singinit(pg_enc_t *e)
{
    pg_enc_begin(e, PG_CMD_PMI1_SINGINIT);
    pg_enc_add_long(e, "pmi_version", 1);
    pg_enc_add_long(e, "pmi_subversion", 1);
    pg_enc_add(e, "stdio", "no");
    pg_enc_add(e, "authtype", "none");
    return pg_enc_end(e);
}

int pg_enc_pmi1_singinit_info(pg_enc_t *e, bool versionok, bool stdio, const char *kvsname)
{
    pg_enc_begin(e, PG_CMD_PMI1_SINGINIT_INFO);
    pg_enc_add(e, "versionok", versionok ? "yes" : "no");
    pg_enc_add(e, "stdio", stdio ? "yes" : "no");
    pg_enc_add(e, "kvsname", kvsname);
    return pg_enc_end(e);
}

/* ---- PMI-1 requests ------------------------------------------------------- */

int pg_enc_pmi1_init(pg_enc_t *e, int version, int subversion)
{
    pg_enc_begin(e, PG_CMD_PMI1_INIT);
    pg_enc_add_long(e, "pmi_version", version);
    pg_enc_add_long(e, "pmi_subversion", subversion);
    return pg_enc_end(e);
}

int pg_enc_pmi1_initack_request(pg_enc_t *e, int pmiid)
{
    pg_enc_begin(e, PG_CMD_PMI1_INITACK);
    pg_enc_add_long(e, "pmiid", pmiid);
    return pg_enc_end(e);
}

int pg_enc_pmi1_simple(pg_enc_t *e, pg_cmd_t cmd)
{
    pg_enc_begin(e, cmd);
    if (pg_cmd_proto(cmd) != PG_PROTO_PMI1)
        pg_enc_fail(e, PG_WIRE_EINVAL);
    return pg_enc_end(e);
}

int pg_enc_pmi1_put(pg_enc_t *e, const char *kvsname, const char *key, const char *value)
{
    pg_enc_begin(e, PG_CMD_PMI1_PUT);
    pg_enc_add(e, "kvsname", kvsname);
    pg_enc_add(e, "key", key);
    pg_enc_add(e, "value", value);
    return pg_enc_end(e);
}

int pg_enc_pmi1_get(pg_enc_t *e, const char *kvsname, const char *key)
{
    pg_enc_begin(e, PG_CMD_PMI1_GET);
    pg_enc_add(e, "kvsname", kvsname);
    pg_enc_add(e, "key", key);
    return pg_enc_end(e);
}

int pg_enc_pmi1_abort(pg_enc_t *e, int exitcode, const char *message)
{
    pg_enc_begin(e, PG_CMD_PMI1_ABORT);
    pg_enc_add_long(e, "exitcode", exitcode);
    if (message != NULL)
        pg_enc_add(e, "message", message);
    return pg_enc_end(e);
}

int pg_enc_pmi1_publish_name(pg_enc_t *e, const char *service, const char *port)
{
    pg_enc_begin(e, PG_CMD_PMI1_PUBLISH_NAME);
    pg_enc_add(e, "service", service);
    pg_enc_add(e, "port", port);
    return pg_enc_end(e);
}

int pg_enc_pmi1_unpublish_name(pg_enc_t *e, const char *service)
{
    pg_enc_begin(e, PG_CMD_PMI1_UNPUBLISH_NAME);
    pg_enc_add(e, "service", service);
    return pg_enc_end(e);
}

int pg_enc_pmi1_lookup_name(pg_enc_t *e, const char *service)
{
    pg_enc_begin(e, PG_CMD_PMI1_LOOKUP_NAME);
    pg_enc_add(e, "service", service);
    return pg_enc_end(e);
}

/* Adds <prefix><i>=<value>, e.g. arg1=..., preput_key_0=... */
static void pg_enc_add_indexed(pg_enc_t *e, const char *prefix, int i, const char *val)
{
    char key[PG_PMI1_KEYLEN_MAX + 1];
    snprintf(key, sizeof key, "%s%d", prefix, i);
    pg_enc_add(e, key, val);
}

int pg_enc_pmi1_spawn(pg_enc_t *e, const pg_spawn_cmd_t *cmd, int totspawns, int spawnssofar,
                      int npreput, const pg_kv_t *preput)
{
    pg_enc_begin_mcmd(e, PG_CMD_PMI1_SPAWN);
    pg_enc_add_long(e, "nprocs", cmd->maxprocs);
    pg_enc_add(e, "execname", cmd->command);
    pg_enc_add_long(e, "totspawns", totspawns);
    pg_enc_add_long(e, "spawnssofar", spawnssofar);
    pg_enc_add_long(e, "argcnt", cmd->argc);
    for (int i = 0; i < cmd->argc; i++)
        pg_enc_add_indexed(e, "arg", i + 1, cmd->argv[i]); /* PMI-1 counts from 1 */
    pg_enc_add_long(e, "preput_num", npreput);
    for (int i = 0; i < npreput; i++) {
        pg_enc_add_indexed(e, "preput_key_", i, preput[i].key);
        pg_enc_add_indexed(e, "preput_val_", i, preput[i].val);
    }
    pg_enc_add_long(e, "info_num", cmd->ninfo);
    for (int i = 0; i < cmd->ninfo; i++) {
        pg_enc_add_indexed(e, "info_key_", i, cmd->info[i].key);
        pg_enc_add_indexed(e, "info_val_", i, cmd->info[i].val);
    }
    return pg_enc_end(e);
}

/* ---- PMI-2 responses ------------------------------------------------------ */

/* Echoes an operation id token ("thrid=<v>" or "opid=<v>") under its own
 * key; the value is escaped like any other. */
static void pg_enc_add_op_id(pg_enc_t *e, pg_str_t token)
{
    const char *eq = memchr(token.ptr, '=', token.len);
    char key[8];
    size_t klen = eq != NULL ? (size_t)(eq - token.ptr) : 0;

    if (klen == 0 || klen >= sizeof(key)) {
        pg_enc_fail(e, PG_WIRE_EINVAL);
        return;
    }
    memcpy(key, token.ptr, klen);
    key[klen] = '\0';
    pg_enc_add_str(e, key, (pg_str_t){ eq + 1, (uint32_t)(token.len - klen - 1) });
}

/* cmd, the echoed thrid, rc, and errmsg on failure. */
static void pg_enc_pmi2_reply_begin(pg_enc_t *e, pg_cmd_t cmd, const pg_reply_t *r)
{
    pg_enc_begin(e, cmd);
    if (pg_cmd_proto(cmd) != PG_PROTO_PMI2)
        pg_enc_fail(e, PG_WIRE_EINVAL);
    if (r->thrid.ptr != NULL)
        pg_enc_add_op_id(e, r->thrid);
    pg_enc_add_long(e, "rc", r->rc);
    if (r->rc != 0 && r->errmsg != NULL)
        pg_enc_add(e, "errmsg", r->errmsg);
}

int pg_enc_pmi2_response(pg_enc_t *e, pg_cmd_t cmd, const pg_reply_t *r)
{
    pg_enc_pmi2_reply_begin(e, cmd, r);
    return pg_enc_end(e);
}

int pg_enc_pmi2_fullinit_response(pg_enc_t *e, const pg_reply_t *r, int rank, int size, int appnum,
                                  const char *spawner_jobid, bool debugged, bool verbose)
{
    pg_enc_pmi2_reply_begin(e, PG_CMD_PMI2_FULLINIT_RESPONSE, r);
    pg_enc_add_long(e, "pmi-version", 2);     /* libpmi2 and MPICH <= 4.0 require both */
    pg_enc_add_long(e, "pmi-subversion", 0);
    pg_enc_add_long(e, "rank", rank);
    pg_enc_add_long(e, "size", size);
    pg_enc_add_long(e, "appnum", appnum);
    if (spawner_jobid != NULL)
        pg_enc_add(e, "spawner-jobid", spawner_jobid);
    pg_enc_add_bool(e, "debugged", debugged);
    pg_enc_add_bool(e, "pmiverbose", verbose);
    return pg_enc_end(e);
}

int pg_enc_pmi2_job_getid_response(pg_enc_t *e, const pg_reply_t *r, const char *jobid)
{
    pg_enc_pmi2_reply_begin(e, PG_CMD_PMI2_JOB_GETID_RESPONSE, r);
    pg_enc_add(e, "jobid", jobid);
    return pg_enc_end(e);
}

int pg_enc_pmi2_job_connect_response(pg_enc_t *e, const pg_reply_t *r)
{
    pg_enc_pmi2_reply_begin(e, PG_CMD_PMI2_JOB_CONNECT_RESPONSE, r);
    pg_enc_add_bool(e, "kvscopy", false); /* clients fail without it, and on TRUE */
    return pg_enc_end(e);
}

int pg_enc_pmi2_found_response(pg_enc_t *e, pg_cmd_t cmd, const pg_reply_t *r, bool found,
                               pg_str_t value)
{
    pg_enc_pmi2_reply_begin(e, cmd, r);
    pg_enc_add_bool(e, "found", found);
    if (found)
        pg_enc_add_str(e, "value", value);
    return pg_enc_end(e);
}

int pg_enc_pmi2_name_lookup_response(pg_enc_t *e, const pg_reply_t *r, bool found, const char *port)
{
    pg_enc_pmi2_reply_begin(e, PG_CMD_PMI2_NAME_LOOKUP_RESPONSE, r);
    pg_enc_add_bool(e, "found", found);
    if (found) {
        pg_enc_add(e, "port", port);
        pg_enc_add(e, "value", port);
    }
    return pg_enc_end(e);
}

int pg_enc_pmi2_spawn_response(pg_enc_t *e, const pg_reply_t *r, const char *jobid,
                               const int *errcodes, int nerr)
{
    pg_enc_pmi2_reply_begin(e, PG_CMD_PMI2_SPAWN_RESPONSE, r);
    if (jobid != NULL)
        pg_enc_add(e, "jobid", jobid);
    pg_enc_add_long(e, "nerrs", errcodes != NULL && nerr > 0 ? nerr : 0);
    pg_enc_add_errcodes(e, errcodes, nerr);
    return pg_enc_end(e);
}

int pg_enc_pmi2_ring_response(pg_enc_t *e, const pg_reply_t *r, int count, const char *left,
                              const char *right)
{
    pg_enc_pmi2_reply_begin(e, PG_CMD_PMI2_RING_RESPONSE, r);
    pg_enc_add_long(e, "ring-count", count);
    pg_enc_add(e, "ring-left", left);
    pg_enc_add(e, "ring-right", right);
    return pg_enc_end(e);
}

/* ---- PMI-2 requests ------------------------------------------------------- */

static void pg_enc_pmi2_request_begin(pg_enc_t *e, pg_cmd_t cmd, const char *thrid)
{
    pg_enc_begin(e, cmd);
    if (pg_cmd_proto(cmd) != PG_PROTO_PMI2)
        pg_enc_fail(e, PG_WIRE_EINVAL);
    if (thrid != NULL)
        pg_enc_add(e, "thrid", thrid);
}

int pg_enc_pmi2_request(pg_enc_t *e, pg_cmd_t cmd, const char *thrid)
{
    pg_enc_pmi2_request_begin(e, cmd, thrid);
    return pg_enc_end(e);
}

int pg_enc_pmi2_fullinit(pg_enc_t *e, const char *pmijobid, int rank, bool threaded,
                         bool shm_reader)
{
    pg_enc_begin(e, PG_CMD_PMI2_FULLINIT);
    if (pmijobid != NULL)
        pg_enc_add(e, "pmijobid", pmijobid);
    pg_enc_add_long(e, "pmirank", rank);
    pg_enc_add_bool(e, "threaded", threaded);
    if (shm_reader)
        pg_enc_add(e, PG_SHM_READER_ATTR, "yes");
    return pg_enc_end(e);
}

int pg_enc_pmi2_abort(pg_enc_t *e, bool isworld, const char *msg)
{
    pg_enc_begin(e, PG_CMD_PMI2_ABORT);
    pg_enc_add_bool(e, "isworld", isworld);
    if (msg != NULL)
        pg_enc_add(e, "msg", msg);
    return pg_enc_end(e);
}

static int pg_enc_pmi2_one(pg_enc_t *e, pg_cmd_t cmd, const char *thrid, const char *key,
                           const char *val)
{
    pg_enc_pmi2_request_begin(e, cmd, thrid);
    pg_enc_add(e, key, val);
    return pg_enc_end(e);
}

int pg_enc_pmi2_job_connect(pg_enc_t *e, const char *thrid, const char *jobid)
{
    return pg_enc_pmi2_one(e, PG_CMD_PMI2_JOB_CONNECT, thrid, "jobid", jobid);
}

int pg_enc_pmi2_job_disconnect(pg_enc_t *e, const char *thrid, const char *jobid)
{
    return pg_enc_pmi2_one(e, PG_CMD_PMI2_JOB_DISCONNECT, thrid, "jobid", jobid);
}

/* kvs-put and info-putnodeattr: key= then value=. */
static int pg_enc_pmi2_put(pg_enc_t *e, pg_cmd_t cmd, const char *thrid, const char *key,
                           const char *value)
{
    pg_enc_pmi2_request_begin(e, cmd, thrid);
    pg_enc_add(e, "key", key);
    pg_enc_add(e, "value", value);
    return pg_enc_end(e);
}

int pg_enc_pmi2_kvs_put(pg_enc_t *e, const char *thrid, const char *key, const char *value)
{
    return pg_enc_pmi2_put(e, PG_CMD_PMI2_KVS_PUT, thrid, key, value);
}

int pg_enc_pmi2_kvs_get(pg_enc_t *e, const char *thrid, const char *jobid, int srcid, const char *key)
{
    pg_enc_pmi2_request_begin(e, PG_CMD_PMI2_KVS_GET, thrid);
    if (jobid != NULL)
        pg_enc_add(e, "jobid", jobid);
    pg_enc_add_long(e, "srcid", srcid < 0 ? -1 : srcid);
    pg_enc_add(e, "key", key);
    return pg_enc_end(e);
}

int pg_enc_pmi2_info_putnodeattr(pg_enc_t *e, const char *thrid, const char *key, const char *value)
{
    return pg_enc_pmi2_put(e, PG_CMD_PMI2_INFO_PUTNODEATTR, thrid, key, value);
}

int pg_enc_pmi2_info_getnodeattr(pg_enc_t *e, const char *thrid, const char *key, bool wait)
{
    pg_enc_pmi2_request_begin(e, PG_CMD_PMI2_INFO_GETNODEATTR, thrid);
    pg_enc_add(e, "key", key);
    pg_enc_add_bool(e, "wait", wait);
    return pg_enc_end(e);
}

int pg_enc_pmi2_info_getjobattr(pg_enc_t *e, const char *thrid, const char *key)
{
    return pg_enc_pmi2_one(e, PG_CMD_PMI2_INFO_GETJOBATTR, thrid, "key", key);
}

int pg_enc_pmi2_name_publish(pg_enc_t *e, const char *thrid, const char *name, const char *port)
{
    pg_enc_pmi2_request_begin(e, PG_CMD_PMI2_NAME_PUBLISH, thrid);
    pg_enc_add(e, "name", name);
    pg_enc_add(e, "port", port);
    pg_enc_add_long(e, "infokeycount", 0);
    return pg_enc_end(e);
}

/* name-unpublish and name-lookup: the name and no infos. */
static int pg_enc_pmi2_name(pg_enc_t *e, pg_cmd_t cmd, const char *thrid, const char *name)
{
    pg_enc_pmi2_request_begin(e, cmd, thrid);
    pg_enc_add(e, "name", name);
    pg_enc_add_long(e, "infokeycount", 0);
    return pg_enc_end(e);
}

int pg_enc_pmi2_name_unpublish(pg_enc_t *e, const char *thrid, const char *name)
{
    return pg_enc_pmi2_name(e, PG_CMD_PMI2_NAME_UNPUBLISH, thrid, name);
}

int pg_enc_pmi2_name_lookup(pg_enc_t *e, const char *thrid, const char *name)
{
    return pg_enc_pmi2_name(e, PG_CMD_PMI2_NAME_LOOKUP, thrid, name);
}

/* In Slurm's strict order: ncmds, preputcount, ppkey/ppval pairs, then per
 * command subcmd, maxprocs, argc, argvN, infokeycount, infokey/infoval. */
int pg_enc_pmi2_spawn(pg_enc_t *e, const char *thrid, int ncmds, const pg_spawn_cmd_t *cmds,
                      int npreput, const pg_kv_t *preput)
{
    pg_enc_pmi2_request_begin(e, PG_CMD_PMI2_SPAWN, thrid);
    pg_enc_add_long(e, "ncmds", ncmds);
    pg_enc_add_long(e, "preputcount", npreput);
    for (int i = 0; i < npreput; i++) {
        pg_enc_add_indexed(e, "ppkey", i, preput[i].key);
        pg_enc_add_indexed(e, "ppval", i, preput[i].val);
    }
    for (int c = 0; c < ncmds; c++) {
        const pg_spawn_cmd_t *cmd = &cmds[c];
        pg_enc_add(e, "subcmd", cmd->command);
        pg_enc_add_long(e, "maxprocs", cmd->maxprocs);
        pg_enc_add_long(e, "argc", cmd->argc);
        for (int i = 0; i < cmd->argc; i++)
            pg_enc_add_indexed(e, "argv", i, cmd->argv[i]); /* PMI-2 counts from 0 */
        pg_enc_add_long(e, "infokeycount", cmd->ninfo);
        for (int i = 0; i < cmd->ninfo; i++) {
            pg_enc_add_indexed(e, "infokey", i, cmd->info[i].key);
            pg_enc_add_indexed(e, "infoval", i, cmd->info[i].val);
        }
    }
    return pg_enc_end(e);
}

int pg_enc_pmi2_ring(pg_enc_t *e, const char *thrid, int count, const char *left, const char *right)
{
    pg_enc_pmi2_request_begin(e, PG_CMD_PMI2_RING, thrid);
    pg_enc_add_long(e, "ring-count", count);
    pg_enc_add(e, "ring-left", left);
    pg_enc_add(e, "ring-right", right);
    return pg_enc_end(e);
}
