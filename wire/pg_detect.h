/*
 * pg_detect: which protocol a new connection speaks, decided from its first
 * message the way hydra and Slurm do (docs/wire-protocol.md, "Which framing,
 * and the init handshake"): the PMI-1 line
 * "cmd=init pmi_version=V pmi_subversion=S" for both PMI-1 and PMI-2
 * clients, a PMI-2 "fullinit" from a client that skipped init, or any other
 * PMI-1 command (hydra does not insist on init first).
 */
#ifndef PG_DETECT_H
#define PG_DETECT_H

#include "wire/pg_wire.h"

typedef struct pg_version {
    pg_proto_t proto;   /* what to speak from now on; PG_PROTO_NONE: a version
                         * pmigate cannot serve (answer init with rc != 0) */
    int version;        /* as requested (2 for a bare fullinit) */
    int subversion;
} pg_version_t;

/* Decides from the first parsed message of a connection.  Returns 0, or
 * PG_WIRE_ESYNTAX when it is an init without readable version numbers (the
 * server should answer rc != 0 rather than guess). */
int pg_detect(const pg_msg_t *first, pg_version_t *out);

#endif
