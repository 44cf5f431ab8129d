/*
 * pg_pmix_value: converts between the PMIx API's pmix_value_t and the
 * engine's pg_value_t (type tag + bytes), following the engine's
 * conventions (engine/pg_engine.h): strings as their characters, byte
 * objects as their bytes, fixed-size scalars and pmix_proc_t (no pointer
 * inside) in native representation, everything else as the pg_pack encoding of the whole value.
 *
 * Why a separate module: the PMIx handler needs both directions for put,
 * get, publish and lookup, and the conversion rules are what makes a value
 * posted by a PMIx client readable as text by a PMI-1/PMI-2 rank (strings
 * and integers) and vice versa.
 */
#ifndef PG_PMIX_VALUE_H
#define PG_PMIX_VALUE_H

#include <pmix_common.h>

#include "engine/pg_engine.h"

/* *out describes `v` for an engine call.  It borrows v's storage, or
 * `scratch` (an empty buffer the caller destructs after the call) for
 * structured types.  PMIX_ERR_BAD_PARAM for a value that cannot be stored
 * (PMIX_POINTER, unknown types). */
pmix_status_t pg_pmix_value_to_engine(const pmix_value_t *v, pmix_data_buffer_t *scratch,
                                      pg_value_t *out);

/* Deep copy of an engine value into *out (which the caller destructs with
 * PMIX_VALUE_DESTRUCT).  PMIX_ERR_UNPACK_FAILURE for bytes that do not
 * decode as their type. */
pmix_status_t pg_pmix_value_from_engine(const pg_value_t *in, pmix_value_t *out);

#endif
