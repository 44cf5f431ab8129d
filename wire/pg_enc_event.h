/*
 * pg_enc_event: the one place the codec meets libevent.  It lives in its own
 * convenience library (libpgwire_event.la) so the client libraries, which
 * link libpgwire.la only, never pull in libevent.
 */
#ifndef PG_ENC_EVENT_H
#define PG_ENC_EVENT_H

#include "wire/pg_enc.h"

struct evbuffer;

/* Appends every complete message in e to out (e is left as it was; call
 * pg_enc_reset() to reuse it).  Returns 0 or PG_WIRE_ENOMEM. */
int pg_enc_evbuffer_add(struct evbuffer *out, const pg_enc_t *e);

#endif
