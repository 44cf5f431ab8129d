/*
 * pg_enc: writes PMI-1 and PMI-2 messages, for both ends: the gateway's
 * responses and the client libraries' requests.  The typed encoders hold the
 * protocol knowledge (key names and order, booleans as TRUE/FALSE, value=
 * last in get_result, both port= and value= in name-lookup-response, the
 * right-aligned PMI-2 length, ";;" escaping); the builder underneath can
 * write any message.
 *
 * Messages are appended to a caller-owned buffer.  A message that does not
 * fit, or whose key or value cannot be represented (a space in a PMI-1
 * value, a '\n' anywhere but inside a PMI-2 value, ...), is dropped whole:
 * e->len only ever covers complete messages, so several messages can be
 * batched into one buffer and written with one call.
 *
 *   char buf[256]; pg_enc_t e;
 *   pg_enc_init(&e, buf, sizeof buf);
 *   if (pg_enc_pmi2_kvs_get(&e, NULL, jobid, -1, "key") == 0)
 *       write(fd, e.buf, e.len);
 */
#ifndef PG_ENC_H
#define PG_ENC_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/pg_wire.h"

typedef struct pg_enc {
    char *buf;          /* caller's buffer (not owned) */
    size_t cap;
    size_t len;         /* bytes of complete messages in buf */
    size_t pos;         /* write position inside the message being built */
    pg_proto_t proto;   /* protocol of the message being built */
    bool mcmd;          /* it is a PMI-1 mcmd block */
    bool open;          /* a message is being built */
    int err;            /* first error of the message being built */
} pg_enc_t;

/* A key and value pair given to an encoder (spawn preputs and infos). */
typedef struct pg_kv {
    const char *key;
    const char *val;
} pg_kv_t;

/* One command of a spawn (PMI-1 block or PMI-2 subcmd segment). */
typedef struct pg_spawn_cmd {
    const char *command;        /* executable */
    int maxprocs;
    int argc;                   /* arguments after the executable */
    const char *const *argv;    /* argc of them (argv[0] is the first argument) */
    int ninfo;
    const pg_kv_t *info;
} pg_spawn_cmd_t;

/* What every PMI-2 response carries besides its own keys. */
typedef struct pg_reply {
    int rc;                     /* 0 = success */
    const char *errmsg;         /* NULL: none; sent only when rc != 0 */
    pg_str_t thrid;             /* the request's operation id, echoed: the whole
                                   token as received, "thrid=<v>" (what hydra,
                                   Slurm and the clients use) or "opid=<v>" (the
                                   PMI-2 design note's name); see pg_msg_op_id().
                                   ptr NULL: none */
} pg_reply_t;

void pg_enc_init(pg_enc_t *e, char *buf, size_t cap);
/* Forgets every message in the buffer (after the caller sent them). */
void pg_enc_reset(pg_enc_t *e);

/* ---- builder ----------------------------------------------------------
 * begin; add...; end.  The protocol comes from the command.  Errors are
 * sticky until pg_enc_end(), which returns the first one (PG_WIRE_EOVERFLOW
 * or PG_WIRE_EINVAL) and drops the message, or 0 and keeps it. */
void pg_enc_begin(pg_enc_t *e, pg_cmd_t cmd);
void pg_enc_begin_mcmd(pg_enc_t *e, pg_cmd_t cmd); /* PMI-1 "mcmd=" block */
void pg_enc_add(pg_enc_t *e, const char *key, const char *val);
void pg_enc_add_str(pg_enc_t *e, const char *key, pg_str_t val);
void pg_enc_add_long(pg_enc_t *e, const char *key, long val);
void pg_enc_add_bool(pg_enc_t *e, const char *key, bool val); /* TRUE/FALSE */
int pg_enc_end(pg_enc_t *e);

/* ---- PMI-1 responses (server) ----------------------------------------- */
int pg_enc_pmi1_response_to_init(pg_enc_t *e, int rc, int version, int subversion);
/* The four lines answering "cmd=initack": initack, set size, set rank, set debug. */
int pg_enc_pmi1_initack(pg_enc_t *e, int size, int rank, int debug);
int pg_enc_pmi1_maxes(pg_enc_t *e); /* 256/64/1024, the values every client expects */
int pg_enc_pmi1_appnum(pg_enc_t *e, int appnum);
int pg_enc_pmi1_my_kvsname(pg_enc_t *e, const char *kvsname);
int pg_enc_pmi1_universe_size(pg_enc_t *e, int size);
int pg_enc_pmi1_put_result(pg_enc_t *e, int rc, const char *msg);
/* rc=0 msg=success value=<v>, value= last. */
int pg_enc_pmi1_get_result(pg_enc_t *e, const char *value);
/* Whether a get_result carrying `value` reaches a PMI-1 client whole: the
 * encoder takes it and the line fits PG_PMI1_REPLY_LINE_MAX.  The one rule
 * a PMI-1 put is held to, so that every value accepted can be read back
 * (with the usual get_result prefix, values up to 984 bytes). */
bool pg_enc_pmi1_value_sendable(const char *value);
/* rc=-1 msg=key_<key>_not_found value=unknown: what every client accepts. */
int pg_enc_pmi1_get_result_missing(pg_enc_t *e, pg_str_t key);
int pg_enc_pmi1_barrier_out(pg_enc_t *e);
int pg_enc_pmi1_finalize_ack(pg_enc_t *e);
int pg_enc_pmi1_publish_result(pg_enc_t *e, int rc, const char *msg);
int pg_enc_pmi1_unpublish_result(pg_enc_t *e, int rc, const char *msg);
int pg_enc_pmi1_lookup_result(pg_enc_t *e, int rc, const char *msg, const char *port);
/* errcodes: nerr codes or NULL; jobid may be NULL. */
int pg_enc_pmi1_spawn_result(pg_enc_t *e, int rc, const char *jobid, const int *errcodes, int nerr);
/* Singleton start-up, server side: the server's hello and its final answer. */
int pg_enc_pmi1_singinit(pg_enc_t *e);
int pg_enc_pmi1_singinit_info(pg_enc_t *e, bool versionok, bool stdio, const char *kvsname);
/* Any response as "cmd=<name> rc=<rc> [msg=<msg>]", e.g. for failures. */
int pg_enc_pmi1_result(pg_enc_t *e, pg_cmd_t cmd, int rc, const char *msg);

/* ---- PMI-1 requests (client) ------------------------------------------ */
int pg_enc_pmi1_init(pg_enc_t *e, int version, int subversion);
int pg_enc_pmi1_initack_request(pg_enc_t *e, int pmiid);
/* Requests with no keys: get_maxes, get_appnum, get_my_kvsname,
 * get_universe_size, barrier_in, finalize. */
int pg_enc_pmi1_simple(pg_enc_t *e, pg_cmd_t cmd);
int pg_enc_pmi1_put(pg_enc_t *e, const char *kvsname, const char *key, const char *value);
int pg_enc_pmi1_get(pg_enc_t *e, const char *kvsname, const char *key);
int pg_enc_pmi1_abort(pg_enc_t *e, int exitcode, const char *message); /* message may be NULL */
int pg_enc_pmi1_publish_name(pg_enc_t *e, const char *service, const char *port);
int pg_enc_pmi1_unpublish_name(pg_enc_t *e, const char *service);
int pg_enc_pmi1_lookup_name(pg_enc_t *e, const char *service);
/* One mcmd block of a spawn-multiple; send totspawns of them. */
int pg_enc_pmi1_spawn(pg_enc_t *e, const pg_spawn_cmd_t *cmd, int totspawns, int spawnssofar,
                      int npreput, const pg_kv_t *preput);

/* ---- PMI-2 responses (server) ----------------------------------------- */
/* Any response with no keys of its own: finalize, kvs-put, kvs-fence,
 * info-putnodeattr, name-publish, name-unpublish, job-disconnect. */
int pg_enc_pmi2_response(pg_enc_t *e, pg_cmd_t cmd, const pg_reply_t *r);
int pg_enc_pmi2_fullinit_response(pg_enc_t *e, const pg_reply_t *r, int rank, int size, int appnum,
                                  const char *spawner_jobid, bool debugged, bool verbose);
int pg_enc_pmi2_job_getid_response(pg_enc_t *e, const pg_reply_t *r, const char *jobid);
int pg_enc_pmi2_job_connect_response(pg_enc_t *e, const pg_reply_t *r); /* kvscopy=FALSE */
/* kvs-get, info-getnodeattr, info-getjobattr: found=TRUE value=v / found=FALSE. */
int pg_enc_pmi2_found_response(pg_enc_t *e, pg_cmd_t cmd, const pg_reply_t *r, bool found,
                               pg_str_t value);
/* Sends the port as both port= (hydra, MPICH >= 4.0.2) and value= (Slurm). */
int pg_enc_pmi2_name_lookup_response(pg_enc_t *e, const pg_reply_t *r, bool found, const char *port);
int pg_enc_pmi2_spawn_response(pg_enc_t *e, const pg_reply_t *r, const char *jobid,
                               const int *errcodes, int nerr);
int pg_enc_pmi2_ring_response(pg_enc_t *e, const pg_reply_t *r, int count, const char *left,
                              const char *right);

/* ---- PMI-2 requests (client); thrid may be NULL ----------------------- */
/* pmijobid may be NULL (left out); Slurm needs all three keys.  shm_reader:
 * pmigate's libpmi2 reads the node's key segment (wire/pg_shm_format.h
 * PG_SHM_READER_ATTR; only ever sent to pmigate). */
int pg_enc_pmi2_fullinit(pg_enc_t *e, const char *pmijobid, int rank, bool threaded,
                         bool shm_reader);
/* Requests with no keys: finalize, job-getid, kvs-fence. */
int pg_enc_pmi2_request(pg_enc_t *e, pg_cmd_t cmd, const char *thrid);
int pg_enc_pmi2_abort(pg_enc_t *e, bool isworld, const char *msg);
int pg_enc_pmi2_job_connect(pg_enc_t *e, const char *thrid, const char *jobid);
int pg_enc_pmi2_job_disconnect(pg_enc_t *e, const char *thrid, const char *jobid);
int pg_enc_pmi2_kvs_put(pg_enc_t *e, const char *thrid, const char *key, const char *value);
/* jobid may be NULL; srcid < 0 is sent as -1 (unknown source). */
int pg_enc_pmi2_kvs_get(pg_enc_t *e, const char *thrid, const char *jobid, int srcid, const char *key);
int pg_enc_pmi2_info_putnodeattr(pg_enc_t *e, const char *thrid, const char *key, const char *value);
int pg_enc_pmi2_info_getnodeattr(pg_enc_t *e, const char *thrid, const char *key, bool wait);
int pg_enc_pmi2_info_getjobattr(pg_enc_t *e, const char *thrid, const char *key);
int pg_enc_pmi2_name_publish(pg_enc_t *e, const char *thrid, const char *name, const char *port);
int pg_enc_pmi2_name_unpublish(pg_enc_t *e, const char *thrid, const char *name);
int pg_enc_pmi2_name_lookup(pg_enc_t *e, const char *thrid, const char *name);
int pg_enc_pmi2_spawn(pg_enc_t *e, const char *thrid, int ncmds, const pg_spawn_cmd_t *cmds,
                      int npreput, const pg_kv_t *preput);
int pg_enc_pmi2_ring(pg_enc_t *e, const char *thrid, int count, const char *left, const char *right);

#endif
