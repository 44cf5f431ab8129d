/*
 * pg_pack: pmigate's typed, binary-safe encoding of PMIx data.
 *
 * Why it exists: values cross process and host boundaries (client library
 * <-> gateway, gateway <-> gateway in a fence, PMIx_Data_pack users), and a
 * reader must never be able to crash on what a writer, a bug or an attacker
 * put on the wire.  One encoding serves every path: type-tagged, integers
 * big-endian so heterogeneous peers agree, sizes as fixed 64-bit, every count
 * and length checked against the bytes that remain.  The byte format is
 * specified in docs/pack-format.md.
 *
 * The PMIx_Data_* / PMIx_Value_* / PMIx_Info_* functions of <pmix.h> are thin
 * wrappers over this module (pg_pack_api.c); the PMIx transport, the
 * gateway's PMIx handler and the trace reader call the pg_* functions
 * directly.  No I/O, no threads, no global state.
 *
 * Ownership rules, for every function below:
 *   - A pmix_data_buffer_t owns base_ptr (malloc'd); destruct frees it.
 *   - Unpacked strings, byte objects, data arrays and the pointer members of
 *     unpacked values are malloc'd and owned by the destination element; the
 *     caller releases them with pg_data_destruct() (or the PMIX_*_DESTRUCT
 *     macros).
 *   - Inputs (`src`) are never modified or retained.
 */
#ifndef PG_PACK_H
#define PG_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

/* Nesting limit for values inside data arrays inside values...: deeper input
 * is rejected so a hostile buffer cannot exhaust the stack. */
#define PG_PACK_MAX_DEPTH 32

/* ---- buffers ---------------------------------------------------------- */

/* An empty buffer (all fields zero). */
void pg_buffer_construct(pmix_data_buffer_t *buf);
/* Frees the payload; the buffer is empty and reusable afterwards. */
void pg_buffer_destruct(pmix_data_buffer_t *buf);
/* Heap-allocated empty buffer, or NULL when out of memory; free with
 * pg_buffer_free (which accepts NULL). */
pmix_data_buffer_t *pg_buffer_new(void);
void pg_buffer_free(pmix_data_buffer_t *buf);
/* Replaces the buffer's payload with `bytes` (malloc'd, `size` bytes) and
 * takes ownership of it; both cursors point at the start. */
pmix_status_t pg_buffer_load(pmix_data_buffer_t *buf, char *bytes, size_t size);
/* Hands the unread part of the payload to the caller (*bytes malloc'd, or
 * NULL when nothing is unread) and empties the buffer. */
pmix_status_t pg_buffer_unload(pmix_data_buffer_t *buf, char **bytes, size_t *size);
/* Appends a copy of `size` bytes of `bytes` (no type tag: raw payload). */
pmix_status_t pg_buffer_append(pmix_data_buffer_t *buf, const void *bytes, size_t size);
/* Bytes between the unpack cursor and the end of the packed data. */
size_t pg_buffer_unread(const pmix_data_buffer_t *buf);
/* Points `view` at `len` received bytes without copying or owning them
 * (unpack only reads; never destruct a view). */
void pg_buffer_view(pmix_data_buffer_t *view, const void *bytes, size_t len);
/* Appends the unread part of src to dst; src is not modified. */
pmix_status_t pg_buffer_copy_payload(pmix_data_buffer_t *dst, const pmix_data_buffer_t *src);

/* ---- pack / unpack ---------------------------------------------------- */

/* Appends `n` (>= 0) elements of `type` from the C array `src` (for
 * PMIX_STRING an array of char*; for structures an array of structures).
 * All or nothing: on error the buffer is unchanged.
 * Errors: PMIX_ERR_BAD_PARAM (NULL buffer/src, n < 0),
 * PMIX_ERR_UNKNOWN_DATA_TYPE, PMIX_ERR_PACK_FAILURE (a value that cannot be
 * encoded, e.g. an over-long key or nesting deeper than PG_PACK_MAX_DEPTH),
 * PMIX_ERR_NOMEM. */
pmix_status_t pg_pack(pmix_data_buffer_t *buf, const void *src, int32_t n,
                      pmix_data_type_t type);

/* Reads the next packed group, which must have type `type`, into the C
 * array `dst` with room for *n elements (*n in = capacity, out = count
 * stored).  A group holding fewer elements than *n fills only those; one
 * holding more fills *n, skips the rest and returns
 * PMIX_ERR_UNPACK_INADEQUATE_SPACE.  All or nothing otherwise: on any other
 * error nothing is left allocated in dst, *n is 0 and the unpack cursor is
 * unchanged.
 * Errors: PMIX_ERR_BAD_PARAM, PMIX_ERR_UNKNOWN_DATA_TYPE,
 * PMIX_ERR_UNPACK_INADEQUATE_SPACE (*n == 0 or too small),
 * PMIX_ERR_TYPE_MISMATCH (the next group has another type),
 * PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER (no more data, or truncated),
 * PMIX_ERR_UNPACK_FAILURE (malformed data), PMIX_ERR_NOMEM. */
pmix_status_t pg_unpack(pmix_data_buffer_t *buf, void *dst, int32_t *n,
                        pmix_data_type_t type);

/* Exactly one element of `type` into dst (strings: char **).  A group of
 * zero or of several elements is PMIX_ERR_UNPACK_FAILURE; on any error
 * nothing is left allocated in dst. */
pmix_status_t pg_unpack_one(pmix_data_buffer_t *buf, void *dst, pmix_data_type_t type);

/* Decodes the one PMIX_VALUE group that fills bytes[0, len) exactly (a
 * value as a get reply or the node segment stores it) into *v, which need
 * not be initialised.  Same result as pg_unpack_one of a PMIX_VALUE followed
 * by a check that nothing is left; a string value (most fenced data) is
 * decoded without the generic machinery.  On error *v owns nothing.
 * Errors: as pg_unpack's, and PMIX_ERR_UNPACK_FAILURE for a group of other
 * than one value or bytes left after it. */
pmix_status_t pg_unpack_value_whole(const void *bytes, size_t len, pmix_value_t *v);

/* ---- per-type helpers ------------------------------------------------- */

/* True when pg_pack/pg_unpack/pg_data_* support `type`. */
bool pg_type_is_supported(pmix_data_type_t type);
/* sizeof the C element of `type` in arrays, 0 when unsupported. */
size_t pg_type_elem_size(pmix_data_type_t type);
/* The fewest bytes one element of `type` takes on the wire (the table in
 * docs/pack-format.md), 0 when unsupported.  Readers that allocate before
 * unpacking bound a count with it, as pg_unpack does. */
size_t pg_type_min_wire_size(pmix_data_type_t type);
/* "PMIX_UINT32" etc.; "PMIX_UNKNOWN_TYPE" for codes it does not know. */
const char *pg_type_name(pmix_data_type_t type);

/* Frees what one element of `type` owns and zeroes it (not the element). */
void pg_data_destruct(void *elem, pmix_data_type_t type);
/* Deep copy of one element into `dst` (which is overwritten, not
 * destructed first).  On error dst is left zeroed. */
pmix_status_t pg_data_copy_into(void *dst, const void *src, pmix_data_type_t type);
/* PMIx_Data_copy semantics: *dest = malloc'd deep copy of one element; for
 * PMIX_STRING `src` is the char* itself and *dest a strdup of it. */
pmix_status_t pg_copy(void **dest, const void *src, pmix_data_type_t type);
/* PMIx_Data_print semantics: *out = malloc'd "<prefix>PMIX_TYPE: value"
 * rendering of one element (debug output, not a stable format); for
 * PMIX_STRING `src` is the char* itself, as for pg_copy. */
pmix_status_t pg_print(char **out, const char *prefix, const void *src,
                       pmix_data_type_t type);

/* ---- values ----------------------------------------------------------- */

/* True when a pmix_value_t of `type` keeps its element behind data.ptr
 * (PMIX_PROC, PMIX_DATA_ARRAY, PMIX_PROC_INFO) rather than in the union. */
bool pg_value_holds_pointer(pmix_data_type_t type);
/* Deep-copies `data` into `v` as type `type`.  `data` points at the C value
 * (for PMIX_STRING it is the char* itself; for PMIX_PROC a pmix_proc_t*;
 * for PMIX_DATA_ARRAY a pmix_data_array_t*).  A NULL `data` loads a zero
 * value, except that PMIX_BOOL with NULL loads true (presence = true). */
pmix_status_t pg_value_load(pmix_value_t *v, const void *data, pmix_data_type_t type);
/* Deep copy; dst is overwritten (not destructed first). */
pmix_status_t pg_value_copy(pmix_value_t *dst, const pmix_value_t *src);
/* Frees what the value owns; it becomes PMIX_UNDEF. */
void pg_value_destruct(pmix_value_t *v);
/* Equality and order of two values of the same type (numbers by value,
 * strings/bytes lexicographically); structures compare equal or
 * PMIX_VALUE_INCOMPATIBLE_OBJECTS. */
pmix_value_cmp_t pg_value_compare(const pmix_value_t *a, const pmix_value_t *b);
/* The Standard's truth test for directives (see PMIx_Value_true). */
pmix_boolean_t pg_value_truth(const pmix_value_t *v);
/* Text form for the PMI-1/PMI-2 side (*out malloc'd): strings as they are,
 * numbers in decimal, bool as "1"/"0", a proc as "nspace:rank", a byte
 * object only when it is printable text.  PMIX_ERR_TYPE_MISMATCH when the
 * value has no faithful text form (binary bytes, arrays, structures). */
pmix_status_t pg_value_to_string(const pmix_value_t *v, char **out);

/* ---- names ------------------------------------------------------------ */

/* "PMIX_ERR_NOT_FOUND" etc.; "PMIX_ERR_UNKNOWN" for codes it does not know. */
const char *pg_status_name(pmix_status_t status);

#endif /* PG_PACK_H */
