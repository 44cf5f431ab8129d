/*
 * pg_enc_event: appends encoded messages to a libevent output buffer.
 */
#include "wire/pg_enc_event.h"

#include <event2/buffer.h>

int pg_enc_evbuffer_add(struct evbuffer *out, const pg_enc_t *e)
{
    if (e->len == 0)
        return PG_WIRE_OK;
    return evbuffer_add(out, e->buf, e->len) == 0 ? PG_WIRE_OK : PG_WIRE_ENOMEM;
}
