/*
 * pg_detect: protocol detection from a connection's first message (see
 * pg_detect.h).  pmigate serves PMI 1.0/1.1 as 1.1 (hydra 4.0 does the same)
 * and PMI 2.0; anything else gets PG_PROTO_NONE so the server answers with a
 * non-zero rc: a client told rc=0 with a version it did not ask for carries
 * on in the wrong framing and hangs (flux-core#3909).
 */
#include "wire/pg_detect.h"

#include <string.h>

static int pg_detect_init(const pg_msg_t *init, pg_version_t *out)
{
    long version, subversion;
    if (pg_str_to_long(pg_msg_get(init, "pmi_version"), &version) != 0 ||
        pg_str_to_long(pg_msg_get(init, "pmi_subversion"), &subversion) != 0 ||
        version < 0 || subversion < 0 || version > 99 || subversion > 99)
        return PG_WIRE_ESYNTAX;
    out->version = (int)version;
    out->subversion = (int)subversion;
    if (version == 1 && subversion <= 1)
        out->proto = PG_PROTO_PMI1;
    else if (version == 2 && subversion == 0)
        out->proto = PG_PROTO_PMI2;
    return PG_WIRE_OK;
}

int pg_detect(const pg_msg_t *first, pg_version_t *out)
{
    memset(out, 0, sizeof *out);
    if (first->cmd == PG_CMD_PMI1_INIT)
        return pg_detect_init(first, out);
    if (first->proto == PG_PROTO_PMI2) {
        out->proto = PG_PROTO_PMI2;
        out->version = 2;
        return PG_WIRE_OK;
    }
    if (first->proto == PG_PROTO_PMI1) {
        out->proto = PG_PROTO_PMI1;
        out->version = 1;
        out->subversion = 1;
        return PG_WIRE_OK;
    }
    return PG_WIRE_ESYNTAX;
}
