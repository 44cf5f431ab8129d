/*
 * pg_pmi_spawn: PMI-1 mcmd blocks and PMI-2 spawn messages -> one
 * pg_spawn_req_t.  See pg_pmi_spawn.h.
 */
#include "server/pg_pmi_spawn.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More than any launcher starts from one request. */
enum { SPAWN_COUNT_MAX = 1 << 20, SPAWN_LIST_MAX = 4096 };

struct pg_pmi_spawn {
    pg_spawn_cmd_t *cmds;
    int ncmds;
    pg_kv_t *preput;
    int npreput;
    bool have_preput;   /* PMI-1: taken from the first block that has them */
    int totspawns;      /* PMI-1: blocks announced */
    int nprocs;
    void **owned;       /* every allocation the request points into */
    int nowned;
    pg_spawn_req_t req;
};

pg_pmi_spawn_t *pg_pmi_spawn_new(void)
{
    return calloc(1, sizeof(pg_pmi_spawn_t));
}

void pg_pmi_spawn_free(pg_pmi_spawn_t *sp)
{
    if (sp == NULL)
        return;
    for (int i = 0; i < sp->nowned; i++)
        free(sp->owned[i]);
    free(sp->owned);
    free(sp->cmds);
    free(sp);
}

/* Registers p (NULL: out of memory) as the builder's; returns p. */
static void *own(pg_pmi_spawn_t *sp, void *p)
{
    void **grown;

    if (p == NULL)
        return NULL;
    grown = realloc(sp->owned, (size_t)(sp->nowned + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(p);
        return NULL;
    }
    sp->owned = grown;
    sp->owned[sp->nowned++] = p;
    return p;
}

static char *own_str(pg_pmi_spawn_t *sp, pg_str_t s)
{
    return own(sp, strndup(s.ptr != NULL ? s.ptr : "", s.len));
}

/* `key` is prefix followed by a decimal index only. */
static bool key_index(pg_str_t key, const char *prefix, long *idx)
{
    size_t plen = strlen(prefix);
    long v = 0;

    if (key.len <= plen || memcmp(key.ptr, prefix, plen) != 0 || key.len - plen > 7)
        return false;
    for (size_t i = plen; i < key.len; i++) {
        if (key.ptr[i] < '0' || key.ptr[i] > '9')
            return false;
        v = v * 10 + (key.ptr[i] - '0');
    }
    *idx = v;
    return true;
}

/* The value of `key` among tokens [from, to), first match. */
static pg_str_t find_in(const pg_msg_t *msg, uint32_t from, uint32_t to, const char *key)
{
    for (uint32_t i = from; i < to; i++)
        if (pg_str_eq(msg->tokens[i].key, key))
            return msg->tokens[i].val;
    return (pg_str_t){ NULL, 0 };
}

/* An optional count (absent: 0) within [0, max]; -1 when malformed. */
static int count_in(const pg_msg_t *msg, uint32_t from, uint32_t to, const char *key, int max,
                    bool required)
{
    pg_str_t v = find_in(msg, from, to, key);
    long n;

    if (v.ptr == NULL)
        return required ? -1 : 0;
    if (pg_str_to_long(v, &n) != 0 || n < 0 || n > max)
        return -1;
    return (int)n;
}

/* list[count] from the tokens prefix<base>..prefix<base+count-1> in
 * [from, to); every entry must be there.  0 or -1 (err set). */
static int fill_list(pg_pmi_spawn_t *sp, const pg_msg_t *msg, uint32_t from, uint32_t to,
                     const char *prefix, int base, int count, const char **list, char *err,
                     size_t errlen)
{
    long idx;

    for (uint32_t i = from; i < to; i++) {
        if (!key_index(msg->tokens[i].key, prefix, &idx))
            continue;
        if (idx < base || idx >= base + count) {
            snprintf(err, errlen, "%s%ld_is_beyond_its_count_%d", prefix, idx, count);
            return -1;
        }
        if (list[idx - base] == NULL &&
            (list[idx - base] = own_str(sp, msg->tokens[i].val)) == NULL) {
            snprintf(err, errlen, "out_of_memory");
            return -1;
        }
    }
    for (int k = 0; k < count; k++) {
        if (list[k] == NULL) {
            snprintf(err, errlen, "missing_%s%d", prefix, base + k);
            return -1;
        }
    }
    return 0;
}

/* count key/value pairs named kprefix<i>/vprefix<i>. */
static int fill_kvs(pg_pmi_spawn_t *sp, const pg_msg_t *msg, uint32_t from, uint32_t to,
                    const char *kprefix, const char *vprefix, int count, pg_kv_t **out, char *err,
                    size_t errlen)
{
    const char **keys = own(sp, calloc((size_t)count + 1, sizeof(char *)));
    const char **vals = own(sp, calloc((size_t)count + 1, sizeof(char *)));
    pg_kv_t *kv = own(sp, calloc((size_t)count + 1, sizeof(*kv)));

    if (keys == NULL || vals == NULL || kv == NULL) {
        snprintf(err, errlen, "out_of_memory");
        return -1;
    }
    if (fill_list(sp, msg, from, to, kprefix, 0, count, keys, err, errlen) != 0 ||
        fill_list(sp, msg, from, to, vprefix, 0, count, vals, err, errlen) != 0)
        return -1;
    for (int i = 0; i < count; i++)
        kv[i] = (pg_kv_t){ keys[i], vals[i] };
    *out = kv;
    return 0;
}

static pg_spawn_cmd_t *add_cmd(pg_pmi_spawn_t *sp)
{
    pg_spawn_cmd_t *grown = realloc(sp->cmds, (size_t)(sp->ncmds + 1) * sizeof(*grown));

    if (grown == NULL)
        return NULL;
    sp->cmds = grown;
    memset(&sp->cmds[sp->ncmds], 0, sizeof(*grown));
    return &sp->cmds[sp->ncmds++];
}

/* Names of one dialect's keys within a command. */
typedef struct cmd_keys {
    const char *command, *maxprocs, *argc, *argv;
    int argv_base;
    const char *ninfo, *infokey, *infoval;
} cmd_keys_t;

static const cmd_keys_t pmi2_keys = { "subcmd", "maxprocs", "argc", "argv", 0,
                                      "infokeycount", "infokey", "infoval" };
static const cmd_keys_t pmi1_keys = { "execname", "nprocs", "argcnt", "arg", 1,
                                      "info_num", "info_key_", "info_val_" };

static int parse_cmd(pg_pmi_spawn_t *sp, const pg_msg_t *msg, uint32_t from, uint32_t to,
                     const cmd_keys_t *k, char *err, size_t errlen)
{
    pg_str_t command = find_in(msg, from, to, k->command);
    pg_spawn_cmd_t *cmd = add_cmd(sp);
    pg_kv_t *info = NULL;
    const char **argv;
    int maxprocs, argc, ninfo;

    if (cmd == NULL)
        return snprintf(err, errlen, "out_of_memory"), -1;
    maxprocs = count_in(msg, from, to, k->maxprocs, SPAWN_COUNT_MAX, true);
    argc = count_in(msg, from, to, k->argc, SPAWN_LIST_MAX, false);
    ninfo = count_in(msg, from, to, k->ninfo, SPAWN_LIST_MAX, false);
    if (command.ptr == NULL || command.len == 0 || maxprocs < 1 || argc < 0 || ninfo < 0) {
        snprintf(err, errlen, "command_%d_needs_%s,_%s>0,_and_valid_%s/%s", sp->ncmds - 1,
                 k->command, k->maxprocs, k->argc, k->ninfo);
        return -1;
    }
    argv = own(sp, calloc((size_t)argc + 1, sizeof(char *)));
    if (argv == NULL || (cmd->command = own_str(sp, command)) == NULL)
        return snprintf(err, errlen, "out_of_memory"), -1;
    if (fill_list(sp, msg, from, to, k->argv, k->argv_base, argc, argv, err, errlen) != 0 ||
        fill_kvs(sp, msg, from, to, k->infokey, k->infoval, ninfo, &info, err, errlen) != 0)
        return -1;
    cmd->maxprocs = maxprocs;
    cmd->argc = argc;
    cmd->argv = argv;
    cmd->ninfo = ninfo;
    cmd->info = info;
    sp->nprocs += maxprocs;
    if (sp->nprocs > SPAWN_COUNT_MAX)
        return snprintf(err, errlen, "too_many_processes"), -1;
    return 0;
}

static void finish_req(pg_pmi_spawn_t *sp)
{
    sp->req = (pg_spawn_req_t){ .ncmds = sp->ncmds, .cmds = sp->cmds,
                                .npreput = sp->npreput, .preput = sp->preput };
}

int pg_pmi_spawn_parse_pmi2(pg_pmi_spawn_t *sp, const pg_msg_t *msg, char *err, size_t errlen)
{
    uint32_t first = msg->ntokens, at;
    int ncmds, seen = 0;

    for (uint32_t i = 0; i < msg->ntokens; i++)
        if (pg_str_eq(msg->tokens[i].key, "subcmd")) {
            if (first == msg->ntokens)
                first = i;
            seen++;
        }
    ncmds = count_in(msg, 0, first, "ncmds", SPAWN_LIST_MAX, true);
    if (ncmds < 1 || ncmds != seen) {
        snprintf(err, errlen, "ncmds_must_be_the_number_of_subcmd_segments_(%d)", seen);
        return -1;
    }
    sp->npreput = count_in(msg, 0, first, "preputcount", SPAWN_LIST_MAX, true);
    if (sp->npreput < 0) {
        sp->npreput = 0;
        snprintf(err, errlen, "missing_or_invalid_preputcount");
        return -1;
    }
    if (fill_kvs(sp, msg, 0, first, "ppkey", "ppval", sp->npreput, &sp->preput, err, errlen) != 0)
        return -1;
    for (at = first; at < msg->ntokens;) {
        uint32_t end = at + 1;

        while (end < msg->ntokens && !pg_str_eq(msg->tokens[end].key, "subcmd"))
            end++;
        if (parse_cmd(sp, msg, at, end, &pmi2_keys, err, errlen) != 0)
            return -1;
        at = end;
    }
    finish_req(sp);
    return 0;
}

int pg_pmi_spawn_add_pmi1_block(pg_pmi_spawn_t *sp, const pg_msg_t *msg, char *err, size_t errlen)
{
    uint32_t n = msg->ntokens;
    int tot = count_in(msg, 0, n, "totspawns", SPAWN_LIST_MAX, false);
    int sofar = count_in(msg, 0, n, "spawnssofar", SPAWN_LIST_MAX, false);
    int npre = count_in(msg, 0, n, "preput_num", SPAWN_LIST_MAX, false);

    if (tot < 1)
        tot = 1; /* a lone block without the counters is a spawn of one command */
    if (sofar < 1)
        sofar = sp->ncmds + 1;
    if (npre < 0 || (sp->totspawns != 0 && tot != sp->totspawns) || sofar != sp->ncmds + 1 ||
        sofar > tot) {
        snprintf(err, errlen, "block_%d_of_%d_out_of_order_or_bad_preput_num", sofar, tot);
        return -1;
    }
    sp->totspawns = tot;
    if (!sp->have_preput && npre > 0) { /* MPICH 4.0 repeats them in every block */
        if (fill_kvs(sp, msg, 0, n, "preput_key_", "preput_val_", npre, &sp->preput, err,
                     errlen) != 0)
            return -1;
        sp->npreput = npre;
        sp->have_preput = true;
    }
    if (parse_cmd(sp, msg, 0, n, &pmi1_keys, err, errlen) != 0)
        return -1;
    finish_req(sp);
    return sofar == tot ? 1 : 0;
}

const pg_spawn_req_t *pg_pmi_spawn_req(const pg_pmi_spawn_t *sp)
{
    return &sp->req;
}

int pg_pmi_spawn_nprocs(const pg_pmi_spawn_t *sp)
{
    return sp->nprocs;
}
