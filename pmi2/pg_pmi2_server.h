/*
 * pg_pmi2_server: the PMI-2 protocol handler of the gateway.  It serves
 * Slurm's libpmi2 and MPICH's PMI-2 clients (docs/wire-protocol.md, "PMI-2
 * commands"): each request becomes engine calls, each reply is written with
 * the wire encoders, and every reply carries rc= and echoes the request's
 * thrid=.
 *
 * Semantics (docs/wire-protocol.md, "Semantics"; the engine calls:
 * docs/engine.md, "What each protocol handler calls"):
 *  - the PMI-1 framed "cmd=init pmi_version=2" is answered here (2.0, rc=0;
 *    any other version rc=-1, because an rc=0 makes clients hang);
 *  - fullinit accepts any subset of pmijobid/pmirank/threaded (and srcid);
 *    the rank is the connection's, the reply has pmi-version/pmi-subversion;
 *  - kvs-put stays invisible, even to its owner, until the owner's fence;
 *  - kvs-fence commits and is a real barrier over the whole job;
 *  - kvs-get: srcid is a hint; once the requester completed a fence a
 *    missing key is found=FALSE at once; before any fence the get is held
 *    until the key is committed or hang detection proves it never will be
 *    (answered, where hydra's mpiexec dies);
 *  - info-getnodeattr wait=TRUE holds until a process of the node puts the
 *    key; a wait that can never be satisfied ends found=FALSE;
 *  - name-lookup replies carry the port as port= and value=;
 *  - abort kills the job unless isworld=FALSE;
 *  - job-connect lets kvs-get name another job of the gateway (jobid=;
 *    kvscopy=FALSE: nothing is copied), job-disconnect undoes it;
 *  - spawn goes to the host through the seam's spawn op and is answered
 *    with jobid and errcodes once every child started or failed;
 *  - ring and unknown or malformed messages get rc!=0 with errmsg, and
 *    the connection stays usable.
 */
#ifndef PG_PMI2_SERVER_H
#define PG_PMI2_SERVER_H

#include "server/pg_handler.h"

/* Stateless table; the per-connection state is the handler data. */
extern const pg_proto_handler_t pg_pmi2_handler;

#endif
