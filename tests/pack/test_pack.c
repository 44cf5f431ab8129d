/*
 * test_pack: the rules of pmigate's pack/unpack encoding (wire/pack/pg_pack).
 *
 * Each test is named after a behaviour a user of PMIx_Data_pack/unpack, the
 * engine or the gateway relies on: every type survives a round trip (with
 * extreme values, NULL/empty strings, nested arrays), the wire is
 * big-endian and tagged, unpack honours the Standard's count rules, and a
 * truncated, corrupt or random buffer yields an error -- never a crash,
 * overread, leak or huge allocation (this binary also runs under ASan/UBSan
 * and valgrind).
 */
#include "wire/pack/pg_pack.h"
#include "tests/pg_cunit.h"

#include <pmix.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------- */

/* Packs n elements, then unpacks them from a fresh buffer holding only the
 * packed bytes, asserting success; returns the unpacked array (caller
 * destructs elements and frees). */
static void *round_trip(const void *src, int32_t n, pmix_data_type_t type)
{
    pmix_data_buffer_t buf;
    size_t size = pg_type_elem_size(type);
    void *dst = calloc((size_t)n + 1, size);
    int32_t got = n + 1;

    pg_buffer_construct(&buf);
    CU_ASSERT_EQUAL_FATAL(pg_pack(&buf, src, n, type), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(pg_unpack(&buf, dst, &got, type), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(got, n);
    CU_ASSERT_EQUAL(pg_buffer_unread(&buf), 0);
    pg_buffer_destruct(&buf);
    return dst;
}

static void destruct_all(void *elems, int32_t n, pmix_data_type_t type)
{
    size_t size = pg_type_elem_size(type);
    int32_t i;

    for (i = 0; i < n; i++) {
        pg_data_destruct((char *)elems + (size_t)i * size, type);
    }
    free(elems);
}

/* Two elements are equal when their printed forms are (print covers every
 * field of every supported type). */
static void assert_same_rendering(const void *a, const void *b, pmix_data_type_t type)
{
    char *pa = NULL, *pb = NULL;

    CU_ASSERT_EQUAL_FATAL(pg_print(&pa, "", a, type), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(pg_print(&pb, "", b, type), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(pa, pb);
    free(pa);
    free(pb);
}

/* ---- scalar round trips ----------------------------------------------- */

#define ROUND_TRIP_SCALARS(ctype, code, ...)                                   \
    do {                                                                       \
        ctype in_[] = { __VA_ARGS__ };                                         \
        int32_t n_ = (int32_t)(sizeof(in_) / sizeof(in_[0]));                 \
        ctype *out_ = round_trip(in_, n_, code);                               \
        CU_ASSERT_EQUAL(memcmp(in_, out_, sizeof(in_)), 0);                    \
        free(out_);                                                            \
    } while (0)

static void test_integers_round_trip_at_their_extremes(void)
{
    ROUND_TRIP_SCALARS(bool, PMIX_BOOL, true, false);
    ROUND_TRIP_SCALARS(uint8_t, PMIX_BYTE, 0, 0x7f, 0xff);
    ROUND_TRIP_SCALARS(int8_t, PMIX_INT8, INT8_MIN, -1, 0, INT8_MAX);
    ROUND_TRIP_SCALARS(int16_t, PMIX_INT16, INT16_MIN, -1, 0, INT16_MAX);
    ROUND_TRIP_SCALARS(int32_t, PMIX_INT32, INT32_MIN, -1, 0, INT32_MAX);
    ROUND_TRIP_SCALARS(int64_t, PMIX_INT64, INT64_MIN, -1, 0, INT64_MAX);
    ROUND_TRIP_SCALARS(int, PMIX_INT, INT_MIN, -1, 0, INT_MAX);
    ROUND_TRIP_SCALARS(uint8_t, PMIX_UINT8, 0, 1, UINT8_MAX);
    ROUND_TRIP_SCALARS(uint16_t, PMIX_UINT16, 0, 1, UINT16_MAX);
    ROUND_TRIP_SCALARS(uint32_t, PMIX_UINT32, 0, 1, UINT32_MAX);
    ROUND_TRIP_SCALARS(uint64_t, PMIX_UINT64, 0, 1, UINT64_MAX);
    ROUND_TRIP_SCALARS(unsigned int, PMIX_UINT, 0, 1, UINT_MAX);
    ROUND_TRIP_SCALARS(size_t, PMIX_SIZE, 0, 1, SIZE_MAX);
    ROUND_TRIP_SCALARS(pid_t, PMIX_PID, 0, 1, INT32_MAX, -1);
    ROUND_TRIP_SCALARS(time_t, PMIX_TIME, 0, 1700000000, -1);
    ROUND_TRIP_SCALARS(pmix_status_t, PMIX_STATUS, PMIX_SUCCESS, PMIX_ERR_NOT_FOUND,
                       PMIX_EXTERNAL_ERR_BASE, INT32_MIN);
    ROUND_TRIP_SCALARS(pmix_rank_t, PMIX_PROC_RANK, 0, PMIX_RANK_WILDCARD, PMIX_RANK_UNDEF);
    ROUND_TRIP_SCALARS(pmix_data_type_t, PMIX_DATA_TYPE, PMIX_UNDEF, PMIX_DATA_ARRAY, 0xffff);
    ROUND_TRIP_SCALARS(pmix_scope_t, PMIX_SCOPE, PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL,
                       PMIX_INTERNAL);
    ROUND_TRIP_SCALARS(pmix_data_range_t, PMIX_DATA_RANGE, PMIX_RANGE_SESSION, PMIX_RANGE_INVALID);
    ROUND_TRIP_SCALARS(pmix_persistence_t, PMIX_PERSIST, PMIX_PERSIST_APP, PMIX_PERSIST_INVALID);
    ROUND_TRIP_SCALARS(pmix_info_directives_t, PMIX_INFO_DIRECTIVES, PMIX_INFO_REQD,
                       0xffffffffU);
    ROUND_TRIP_SCALARS(pmix_proc_state_t, PMIX_PROC_STATE, PMIX_PROC_STATE_RUNNING, 255);
}

static void test_floats_round_trip_bit_exact(void)
{
    float f[] = { 0.0f, -0.0f, 1.5f, FLT_MAX, FLT_MIN, -FLT_TRUE_MIN, INFINITY, NAN };
    double d[] = { 0.0, -0.0, 0.1, DBL_MAX, DBL_MIN, -DBL_TRUE_MIN, -INFINITY, NAN };
    float *fo = round_trip(f, 8, PMIX_FLOAT);
    double *dout = round_trip(d, 8, PMIX_DOUBLE);

    /* bit-exact: memcmp also covers NaN and the sign of zero */
    CU_ASSERT_EQUAL(memcmp(f, fo, sizeof(f)), 0);
    CU_ASSERT_EQUAL(memcmp(d, dout, sizeof(d)), 0);
    free(fo);
    free(dout);
}

static void test_timeval_round_trips(void)
{
    struct timeval tv[] = { { 0, 0 }, { 1700000000, 999999 }, { -5, 3 } };
    struct timeval *out = round_trip(tv, 3, PMIX_TIMEVAL);
    int i;

    for (i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(out[i].tv_sec, tv[i].tv_sec);
        CU_ASSERT_EQUAL(out[i].tv_usec, tv[i].tv_usec);
    }
    free(out);
}

/* ---- strings, byte objects, procs ------------------------------------- */

static void test_strings_keep_null_empty_and_long_distinct(void)
{
    char *longs = malloc(100001);
    char *in[4];
    char **out;

    memset(longs, 'x', 100000);
    longs[100000] = '\0';
    in[0] = NULL;
    in[1] = "";
    in[2] = "pmix.job.size=4 with spaces";
    in[3] = longs;
    out = round_trip(in, 4, PMIX_STRING);
    CU_ASSERT_PTR_NULL(out[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out[1]);
    CU_ASSERT_STRING_EQUAL(out[1], "");
    CU_ASSERT_STRING_EQUAL(out[2], in[2]);
    CU_ASSERT_STRING_EQUAL(out[3], longs);
    destruct_all(out, 4, PMIX_STRING);
    free(longs);
}

static void test_byte_objects_carry_binary_and_empty_payloads(void)
{
    char bin[] = { 0, 1, (char)0xff, 0, 'a' };
    pmix_byte_object_t in[2] = { { NULL, 0 }, { bin, sizeof(bin) } };
    pmix_byte_object_t *out = round_trip(in, 2, PMIX_BYTE_OBJECT);

    CU_ASSERT_PTR_NULL(out[0].bytes);
    CU_ASSERT_EQUAL(out[0].size, 0);
    CU_ASSERT_EQUAL_FATAL(out[1].size, sizeof(bin));
    CU_ASSERT_EQUAL(memcmp(out[1].bytes, bin, sizeof(bin)), 0);
    destruct_all(out, 2, PMIX_BYTE_OBJECT);
}

static void test_procs_keep_max_length_nspace_and_special_ranks(void)
{
    pmix_proc_t in[2];
    pmix_proc_t *out;

    memset(in, 0, sizeof(in));
    memset(in[0].nspace, 'n', PMIX_MAX_NSLEN);
    in[0].rank = PMIX_RANK_WILDCARD;
    PMIX_LOAD_PROCID(&in[1], "job-1", 7);
    out = round_trip(in, 2, PMIX_PROC);
    CU_ASSERT_EQUAL(memcmp(in, out, sizeof(in)), 0);
    free(out);
}

/* ---- values, infos, pdata, arrays ------------------------------------- */

static void test_values_of_every_kind_round_trip(void)
{
    pmix_value_t in[12];
    pmix_value_t *out;
    uint32_t u32 = 4;
    uint16_t u16 = 65535;
    int64_t i64 = INT64_MIN;
    double dbl = -2.5;
    pmix_proc_t proc;
    pmix_byte_object_t bo = { "\0bin", 4 };
    pmix_data_array_t *da;
    int32_t ints[3] = { 1, -2, 3 };
    bool flag = false;
    pmix_envar_t env = { "PATH", "/bin", ':' };
    int i;

    PMIX_LOAD_PROCID(&proc, "ns", 3);
    PMIX_DATA_ARRAY_CREATE(da, 3, PMIX_INT32);
    memcpy(da->array, ints, sizeof(ints));
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[0], &u32, PMIX_UINT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[1], &u16, PMIX_UINT16), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[2], &i64, PMIX_INT64), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[3], &dbl, PMIX_DOUBLE), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[4], "host-a", PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[5], NULL, PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[6], &proc, PMIX_PROC), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[7], &bo, PMIX_BYTE_OBJECT), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[8], da, PMIX_DATA_ARRAY), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[9], &flag, PMIX_BOOL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_VALUE_LOAD(&in[10], &env, PMIX_ENVAR), PMIX_SUCCESS);
    PMIX_VALUE_CONSTRUCT(&in[11]); /* PMIX_UNDEF */
    PMIX_DATA_ARRAY_FREE(da);

    out = round_trip(in, 12, PMIX_VALUE);
    for (i = 0; i < 12; i++) {
        CU_ASSERT_EQUAL(out[i].type, in[i].type);
        assert_same_rendering(&in[i], &out[i], PMIX_VALUE);
    }
    CU_ASSERT_EQUAL(out[0].data.uint32, 4);
    CU_ASSERT_EQUAL(pg_value_compare(&in[4], &out[4]), PMIX_EQUAL);
    CU_ASSERT_PTR_NULL(out[5].data.string);
    CU_ASSERT_EQUAL(out[8].data.darray->size, 3);
    CU_ASSERT_EQUAL(((int32_t *)out[8].data.darray->array)[1], -2);
    destruct_all(out, 12, PMIX_VALUE);
    for (i = 0; i < 12; i++) {
        PMIX_VALUE_DESTRUCT(&in[i]);
    }
}

static void test_info_keeps_key_flags_and_value(void)
{
    pmix_info_t *in;
    pmix_info_t *out;
    uint32_t size = 1024;

    PMIX_INFO_CREATE(in, 2);
    PMIX_INFO_LOAD(&in[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&in[1], PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    PMIX_INFO_REQUIRED(&in[1]);
    out = round_trip(in, 2, PMIX_INFO);
    CU_ASSERT_TRUE(PMIX_CHECK_KEY(&out[0], PMIX_JOB_SIZE));
    CU_ASSERT_EQUAL(out[0].value.data.uint32, 1024);
    CU_ASSERT_TRUE(PMIX_INFO_TRUE(&out[1]));
    CU_ASSERT_TRUE(PMIX_INFO_IS_REQUIRED(&out[1]));
    CU_ASSERT_TRUE(PMIX_INFO_IS_END(&out[1]));
    destruct_all(out, 2, PMIX_INFO);
    PMIX_INFO_FREE(in, 2);
}

static void test_pdata_keeps_publisher_key_and_value(void)
{
    pmix_pdata_t in;
    pmix_pdata_t *out;
    pmix_proc_t who;

    PMIX_LOAD_PROCID(&who, "svc", 0);
    PMIX_PDATA_LOAD(&in, &who, "port-name", "tcp://10.0.0.1:5000", PMIX_STRING);
    out = round_trip(&in, 1, PMIX_PDATA);
    assert_same_rendering(&in, out, PMIX_PDATA);
    CU_ASSERT_STRING_EQUAL(out->value.data.string, "tcp://10.0.0.1:5000");
    destruct_all(out, 1, PMIX_PDATA);
    PMIX_PDATA_DESTRUCT(&in);
}

/* An info array holding a value that holds a data array of data arrays. */
static pmix_data_array_t *make_nested_array(void)
{
    pmix_data_array_t *outer, *inner;
    pmix_info_t *infos;
    char *strs[2] = { NULL, "two" };
    uint64_t big = UINT64_MAX;

    PMIX_DATA_ARRAY_CREATE(outer, 2, PMIX_DATA_ARRAY);
    inner = outer->array;
    PMIx_Data_array_construct(&inner[0], 2, PMIX_STRING);
    ((char **)inner[0].array)[0] = strs[0];
    ((char **)inner[0].array)[1] = strdup(strs[1]);
    PMIx_Data_array_construct(&inner[1], 0, PMIX_UINT8); /* empty */

    infos = PMIx_Info_create(2);
    PMIX_INFO_LOAD(&infos[0], "nested", outer, PMIX_DATA_ARRAY);
    PMIX_INFO_LOAD(&infos[1], "big", &big, PMIX_UINT64);
    PMIX_DATA_ARRAY_FREE(outer);

    PMIX_DATA_ARRAY_CREATE(outer, 0, PMIX_INFO);
    outer->array = infos;
    outer->size = 2;
    return outer;
}

static void test_nested_data_arrays_round_trip(void)
{
    pmix_data_array_t *da = make_nested_array();
    pmix_data_array_t *out = round_trip(da, 1, PMIX_DATA_ARRAY);
    pmix_info_t *infos;
    pmix_data_array_t *lvl2;

    assert_same_rendering(da, out, PMIX_DATA_ARRAY);
    CU_ASSERT_EQUAL_FATAL(out->type, PMIX_INFO);
    infos = out->array;
    CU_ASSERT_EQUAL_FATAL(infos[0].value.type, PMIX_DATA_ARRAY);
    lvl2 = infos[0].value.data.darray->array;
    CU_ASSERT_PTR_NULL(((char **)lvl2[0].array)[0]);
    CU_ASSERT_STRING_EQUAL(((char **)lvl2[0].array)[1], "two");
    CU_ASSERT_EQUAL(lvl2[1].size, 0);
    CU_ASSERT_EQUAL(infos[1].value.data.uint64, UINT64_MAX);
    destruct_all(out, 1, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(da);
}

static void test_envar_and_proc_info_round_trip(void)
{
    pmix_envar_t env;
    pmix_envar_t *eout;
    pmix_proc_info_t pi;
    pmix_proc_info_t *pout;

    PMIX_ENVAR_LOAD(&env, "LD_LIBRARY_PATH", "/opt/lib", ':');
    eout = round_trip(&env, 1, PMIX_ENVAR);
    assert_same_rendering(&env, eout, PMIX_ENVAR);
    destruct_all(eout, 1, PMIX_ENVAR);
    PMIX_ENVAR_DESTRUCT(&env);

    PMIX_PROC_INFO_CONSTRUCT(&pi);
    PMIX_LOAD_PROCID(&pi.proc, "ns", 2);
    pi.hostname = strdup("node7");
    pi.pid = 4242;
    pi.exit_code = -3;
    pi.state = PMIX_PROC_STATE_RUNNING;
    pout = round_trip(&pi, 1, PMIX_PROC_INFO);
    assert_same_rendering(&pi, pout, PMIX_PROC_INFO);
    CU_ASSERT_PTR_NULL(pout->executable_name);
    destruct_all(pout, 1, PMIX_PROC_INFO);
    PMIX_PROC_INFO_DESTRUCT(&pi);
}

/* ---- the wire is big-endian and tagged -------------------------------- */

static void test_wire_is_big_endian_with_type_and_count(void)
{
    pmix_data_buffer_t buf;
    uint32_t v = 0x01020304;
    char *s = NULL;
    const unsigned char want_u32[] = { 0, PMIX_UINT32, 0, 0, 0, 1, 1, 2, 3, 4 };
    const unsigned char want_null[] = { 0, PMIX_STRING, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff };

    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    CU_ASSERT_EQUAL(PMIx_Data_pack(NULL, &buf, &v, 1, PMIX_UINT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(buf.bytes_used, sizeof(want_u32));
    CU_ASSERT_EQUAL(memcmp(buf.base_ptr, want_u32, sizeof(want_u32)), 0);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);

    CU_ASSERT_EQUAL(PMIx_Data_pack(NULL, &buf, &s, 1, PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(buf.bytes_used, sizeof(want_null));
    CU_ASSERT_EQUAL(memcmp(buf.base_ptr, want_null, sizeof(want_null)), 0);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

/* ---- unpack count semantics ------------------------------------------- */

static void test_unpack_returns_fewer_when_fewer_are_stored(void)
{
    pmix_data_buffer_t *buf;
    int32_t in[3] = { 7, 8, 9 }, out[5] = { 0 };
    int32_t n = 5;

    PMIX_DATA_BUFFER_CREATE(buf);
    CU_ASSERT_EQUAL(PMIx_Data_pack(NULL, buf, in, 3, PMIX_INT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIx_Data_unpack(NULL, buf, out, &n, PMIX_INT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(memcmp(in, out, sizeof(in)), 0);
    n = 1;
    CU_ASSERT_EQUAL(PMIx_Data_unpack(NULL, buf, out, &n, PMIX_INT32),
                    PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    CU_ASSERT_EQUAL(n, 0);
    PMIX_DATA_BUFFER_RELEASE(buf);
    CU_ASSERT_PTR_NULL(buf);
}

static void test_unpack_with_too_little_room_reports_inadequate_space(void)
{
    pmix_data_buffer_t buf;
    char *in[3] = { "a", "b", "c" }, *out[2] = { NULL, NULL };
    int32_t tail = 99, got = 0, n = 2;

    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    CU_ASSERT_EQUAL(pg_pack(&buf, in, 3, PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_pack(&buf, &tail, 1, PMIX_INT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_unpack(&buf, out, &n, PMIX_STRING), PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_STRING_EQUAL(out[0], "a");
    CU_ASSERT_STRING_EQUAL(out[1], "b");
    free(out[0]);
    free(out[1]);
    /* the rest of the short group is skipped: the next group is intact */
    n = 1;
    CU_ASSERT_EQUAL(pg_unpack(&buf, &got, &n, PMIX_INT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(got, 99);
    n = 0;
    CU_ASSERT_EQUAL(pg_unpack(&buf, &got, &n, PMIX_INT32), PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

static void test_unpack_of_wrong_type_fails_without_consuming(void)
{
    pmix_data_buffer_t buf;
    uint16_t v = 5, got = 0;
    uint32_t wrong = 0;
    int32_t n = 1;

    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    CU_ASSERT_EQUAL(pg_pack(&buf, &v, 1, PMIX_UINT16), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_unpack(&buf, &wrong, &n, PMIX_UINT32), PMIX_ERR_TYPE_MISMATCH);
    CU_ASSERT_EQUAL(n, 0);
    n = 1;
    CU_ASSERT_EQUAL(pg_unpack(&buf, &got, &n, PMIX_UINT16), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(got, 5);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

static void test_bad_arguments_and_unknown_types_are_rejected(void)
{
    pmix_data_buffer_t buf;
    int32_t v = 1, n = 1;
    void *ptr = &v;
    pmix_value_t val;

    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    CU_ASSERT_EQUAL(pg_pack(NULL, &v, 1, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_pack(&buf, NULL, 1, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_pack(&buf, &v, -1, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_pack(&buf, &ptr, 1, PMIX_POINTER), PMIX_ERR_UNKNOWN_DATA_TYPE);
    CU_ASSERT_EQUAL(pg_pack(&buf, &v, 1, 4000), PMIX_ERR_UNKNOWN_DATA_TYPE);
    CU_ASSERT_EQUAL(pg_unpack(&buf, &v, &n, 4000), PMIX_ERR_UNKNOWN_DATA_TYPE);
    CU_ASSERT_EQUAL(pg_unpack(&buf, NULL, &n, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    /* a value carrying a raw pointer cannot travel; the buffer is unchanged */
    PMIX_VALUE_LOAD(&val, ptr, PMIX_POINTER);
    CU_ASSERT_EQUAL(pg_pack(&buf, &val, 1, PMIX_VALUE), PMIX_ERR_UNKNOWN_DATA_TYPE);
    CU_ASSERT_EQUAL(buf.bytes_used, 0);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

static void test_nesting_deeper_than_the_limit_is_refused(void)
{
    pmix_data_buffer_t buf;
    pmix_value_t *chain = calloc(PG_PACK_MAX_DEPTH + 2, sizeof(pmix_value_t));
    pmix_data_array_t *arrays = calloc(PG_PACK_MAX_DEPTH + 2, sizeof(pmix_data_array_t));
    int i;

    /* value -> array of one value -> array of one value -> ... */
    for (i = 0; i < PG_PACK_MAX_DEPTH + 1; i++) {
        chain[i].type = PMIX_DATA_ARRAY;
        chain[i].data.darray = &arrays[i];
        arrays[i].type = PMIX_VALUE;
        arrays[i].size = 1;
        arrays[i].array = &chain[i + 1];
    }
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    CU_ASSERT_EQUAL(pg_pack(&buf, chain, 1, PMIX_VALUE), PMIX_ERR_PACK_FAILURE);
    CU_ASSERT_EQUAL(buf.bytes_used, 0);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
    free(chain);
    free(arrays);
}

/* ---- hostile input ---------------------------------------------------- */

/* Unpacks one group of `type` from raw bytes; returns the status. */
static pmix_status_t unpack_raw(const unsigned char *bytes, size_t len, pmix_data_type_t type)
{
    pmix_data_buffer_t buf;
    size_t size = pg_type_elem_size(type);
    char *copy = malloc(len ? len : 1);
    void *dst = calloc(4, size);
    int32_t n = 4, i;
    pmix_status_t rc;

    memcpy(copy, bytes, len);
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    pg_buffer_load(&buf, copy, len);
    rc = pg_unpack(&buf, dst, &n, type);
    for (i = 0; i < n; i++) {
        pg_data_destruct((char *)dst + (size_t)i * size, type);
    }
    free(dst);
    pg_buffer_destruct(&buf);
    return rc;
}

static void test_huge_counts_fail_before_allocating(void)
{
    /* 4 billion infos announced, none present */
    const unsigned char group[] = { 0, PMIX_INFO, 0xff, 0xff, 0xff, 0xff, 0, 0 };
    /* a value holding a data array of 2^63 uint64 */
    const unsigned char darray[] = { 0, PMIX_VALUE, 0, 0, 0, 1, 0, PMIX_DATA_ARRAY,
                                     0, PMIX_UINT64, 0x80, 0, 0, 0, 0, 0, 0, 0 };
    /* a byte object claiming 2^64-1 bytes */
    const unsigned char bo[] = { 0, PMIX_BYTE_OBJECT, 0, 0, 0, 1,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1 };

    CU_ASSERT_EQUAL(unpack_raw(group, sizeof(group), PMIX_INFO),
                    PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    CU_ASSERT_EQUAL(unpack_raw(darray, sizeof(darray), PMIX_VALUE),
                    PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    CU_ASSERT_EQUAL(unpack_raw(bo, sizeof(bo), PMIX_BYTE_OBJECT),
                    PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
}

static void test_malformed_fields_are_unpack_failures(void)
{
    const unsigned char bad_bool[] = { 0, PMIX_BOOL, 0, 0, 0, 1, 2 };
    const unsigned char nul_in_string[] = { 0, PMIX_STRING, 0, 0, 0, 1, 0, 0, 0, 2, 'a', 0 };
    /* a 512-byte key (one more than PMIX_MAX_KEYLEN), padded past the
     * minimum size of an info so the length check is what trips */
    const unsigned char long_key[] = { 0, PMIX_INFO, 0, 0, 0, 1, 0, 0, 0x02, 0x00,
                                       'k', 'k', 'k', 'k', 'k', 'k', 'k', 'k' };
    const unsigned char null_nspace[] = { 0, PMIX_PROC, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff,
                                          0, 0, 0, 0 };
    const unsigned char int_too_big[] = { 0, PMIX_INT, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0 };
    const unsigned char value_of_info[] = { 0, PMIX_VALUE, 0, 0, 0, 1, 0, PMIX_INFO, 0 };

    CU_ASSERT_EQUAL(unpack_raw(bad_bool, sizeof(bad_bool), PMIX_BOOL), PMIX_ERR_UNPACK_FAILURE);
    CU_ASSERT_EQUAL(unpack_raw(nul_in_string, sizeof(nul_in_string), PMIX_STRING),
                    PMIX_ERR_UNPACK_FAILURE);
    CU_ASSERT_EQUAL(unpack_raw(long_key, sizeof(long_key), PMIX_INFO), PMIX_ERR_UNPACK_FAILURE);
    CU_ASSERT_EQUAL(unpack_raw(null_nspace, sizeof(null_nspace), PMIX_PROC),
                    PMIX_ERR_UNPACK_FAILURE);
    if (sizeof(int) < 8) {
        CU_ASSERT_EQUAL(unpack_raw(int_too_big, sizeof(int_too_big), PMIX_INT),
                        PMIX_ERR_UNPACK_FAILURE);
    }
    CU_ASSERT_EQUAL(unpack_raw(value_of_info, sizeof(value_of_info), PMIX_VALUE),
                    PMIX_ERR_UNPACK_FAILURE);
}

/* One group of every supported type, packed in this order. */
typedef struct sample {
    pmix_data_type_t type;
    const void *src;
    int32_t n;
} sample_t;

static pmix_data_buffer_t *pack_all_types(sample_t *samples, size_t *nsamples,
                                          pmix_data_array_t **keep)
{
    static const bool b[] = { true, false };
    static const uint8_t u8[] = { 0, 255 };
    static char *strs[] = { NULL, "", "abc" };
    static const size_t sz[] = { SIZE_MAX };
    static const pid_t pid[] = { 123 };
    static const int ints[] = { INT_MIN, INT_MAX };
    static const int8_t i8[] = { -128 };
    static const int16_t i16[] = { -300 };
    static const int32_t i32[] = { -70000 };
    static const int64_t i64[] = { INT64_MIN };
    static const unsigned int ui[] = { UINT_MAX };
    static const uint16_t u16[] = { 65535 };
    static const uint32_t u32[] = { 0xdeadbeef };
    static const uint64_t u64[] = { UINT64_MAX };
    static const float f[] = { 1.25f };
    static const double d[] = { -1e300 };
    static const struct timeval tv[] = { { 12, 34 } };
    static const time_t t[] = { 1700000000 };
    static const pmix_status_t st[] = { PMIX_ERR_TIMEOUT };
    static const pmix_rank_t rk[] = { PMIX_RANK_UNDEF };
    static const pmix_data_type_t dt[] = { PMIX_INFO };
    static const pmix_scope_t sc[] = { PMIX_GLOBAL };
    static const pmix_data_range_t rg[] = { PMIX_RANGE_NAMESPACE };
    static const pmix_persistence_t ps[] = { PMIX_PERSIST_PROC };
    static pmix_byte_object_t bo[] = { { "\0\1\2", 3 } };
    static pmix_proc_t proc[1];
    static pmix_pdata_t pd[1];
    static pmix_info_t info[2];
    static pmix_value_t val[2];
    uint32_t jobsize = 8;
    pmix_data_buffer_t *buf;
    size_t i = 0;

    PMIX_LOAD_PROCID(&proc[0], "all-types", 5);
    PMIX_PDATA_LOAD(&pd[0], &proc[0], "pub", "lookup-me", PMIX_STRING);
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &jobsize, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_HOSTNAME, "node-0", PMIX_STRING);
    *keep = make_nested_array();
    PMIX_VALUE_LOAD(&val[0], *keep, PMIX_DATA_ARRAY);
    PMIX_VALUE_LOAD(&val[1], &proc[0], PMIX_PROC);

#define ADD(code, arr) samples[i++] = (sample_t){ code, arr, (int32_t)(sizeof(arr) / sizeof(arr[0])) }
    ADD(PMIX_BOOL, b);
    ADD(PMIX_BYTE, u8);
    ADD(PMIX_STRING, strs);
    ADD(PMIX_SIZE, sz);
    ADD(PMIX_PID, pid);
    ADD(PMIX_INT, ints);
    ADD(PMIX_INT8, i8);
    ADD(PMIX_INT16, i16);
    ADD(PMIX_INT32, i32);
    ADD(PMIX_INT64, i64);
    ADD(PMIX_UINT, ui);
    ADD(PMIX_UINT8, u8);
    ADD(PMIX_UINT16, u16);
    ADD(PMIX_UINT32, u32);
    ADD(PMIX_UINT64, u64);
    ADD(PMIX_FLOAT, f);
    ADD(PMIX_DOUBLE, d);
    ADD(PMIX_TIMEVAL, tv);
    ADD(PMIX_TIME, t);
    ADD(PMIX_STATUS, st);
    ADD(PMIX_PROC_RANK, rk);
    ADD(PMIX_DATA_TYPE, dt);
    ADD(PMIX_SCOPE, sc);
    ADD(PMIX_DATA_RANGE, rg);
    ADD(PMIX_PERSIST, ps);
    ADD(PMIX_BYTE_OBJECT, bo);
    ADD(PMIX_PROC, proc);
    ADD(PMIX_VALUE, val);
    ADD(PMIX_INFO, info);
    ADD(PMIX_PDATA, pd);
    samples[i++] = (sample_t){ PMIX_DATA_ARRAY, *keep, 1 };
#undef ADD
    *nsamples = i;

    PMIX_DATA_BUFFER_CREATE(buf);
    for (i = 0; i < *nsamples; i++) {
        CU_ASSERT_EQUAL(pg_pack(buf, samples[i].src, samples[i].n, samples[i].type), PMIX_SUCCESS);
    }
    return buf;
}

static void release_all_types(pmix_data_buffer_t *buf, sample_t *samples, size_t nsamples,
                              pmix_data_array_t *keep)
{
    size_t i;

    for (i = 0; i < nsamples; i++) {
        if (PMIX_VALUE == samples[i].type || PMIX_INFO == samples[i].type ||
            PMIX_PDATA == samples[i].type) {
            size_t size = pg_type_elem_size(samples[i].type);
            int32_t k;
            for (k = 0; k < samples[i].n; k++) {
                pg_data_destruct((char *)samples[i].src + (size_t)k * size, samples[i].type);
            }
        }
    }
    PMIX_DATA_ARRAY_FREE(keep);
    PMIX_DATA_BUFFER_RELEASE(buf);
}

/* pg_unpack's statuses for what a buffer holds (pg_pack.h); anything else
 * from bytes alone would be a status no caller was told to expect. */
static bool is_unpack_status(pmix_status_t rc)
{
    return PMIX_SUCCESS == rc || PMIX_ERR_UNPACK_INADEQUATE_SPACE == rc ||
           PMIX_ERR_TYPE_MISMATCH == rc || PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER == rc ||
           PMIX_ERR_UNPACK_FAILURE == rc;
}

static bool all_zero(const unsigned char *p, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++) {
        if (0 != p[i]) {
            return false;
        }
    }
    return true;
}

/* Unpacks one group of `type` with room for `room` elements and holds
 * pg_unpack to its contract (pg_pack.h) whatever the bytes were: a status
 * it documents, and after a failure (but INADEQUATE_SPACE) nothing stored
 * -- *n 0, dst as zeroed as before -- and the cursor where it was, so a
 * reader can give up without leaks or half-read values.  What decoded is
 * packed again into `repack` (when not NULL), then released. */
static pmix_status_t unpack_checked(pmix_data_buffer_t *buf, pmix_data_type_t type, int32_t room,
                                    pmix_data_buffer_t *repack)
{
    size_t size = pg_type_elem_size(type);
    unsigned char *dst = calloc((size_t)room, size);
    const char *before = buf->unpack_ptr;
    int32_t n = room, k;
    pmix_status_t rc = pg_unpack(buf, dst, &n, type);

    CU_ASSERT_TRUE(is_unpack_status(rc));
    if (PMIX_SUCCESS != rc && PMIX_ERR_UNPACK_INADEQUATE_SPACE != rc) {
        CU_ASSERT_EQUAL(n, 0);
        CU_ASSERT_PTR_EQUAL(buf->unpack_ptr, before);
        CU_ASSERT_TRUE(all_zero(dst, (size_t)room * size));
    } else {
        CU_ASSERT_TRUE(n >= 0 && n <= room);
        if (NULL != repack) { /* an empty group too: its header was read */
            CU_ASSERT_EQUAL(pg_pack(repack, dst, n, type), PMIX_SUCCESS);
        }
    }
    for (k = 0; k < n; k++) {
        pg_data_destruct(dst + (size_t)k * size, type);
    }
    free(dst);
    return rc;
}

/* Unpacks every sample group from bytes[0..len) (each checked by
 * unpack_checked, what decoded packed again into `repack` when not NULL);
 * returns how many groups came out whole, the first error (PMIX_SUCCESS
 * when all did) and how many bytes they took. */
static size_t unpack_all_types(const char *bytes, size_t len, const sample_t *samples,
                               size_t nsamples, pmix_status_t *first_error,
                               pmix_data_buffer_t *repack, size_t *consumed)
{
    pmix_data_buffer_t buf;
    char *copy = malloc(len ? len : 1);
    size_t i;

    memcpy(copy, bytes, len);
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    pg_buffer_load(&buf, copy, len);
    *first_error = PMIX_SUCCESS;
    for (i = 0; i < nsamples; i++) {
        pmix_status_t rc = unpack_checked(&buf, samples[i].type, samples[i].n, repack);

        if (PMIX_SUCCESS != rc) {
            *first_error = rc;
            break;
        }
    }
    if (NULL != consumed) {
        *consumed = len - pg_buffer_unread(&buf);
    }
    pg_buffer_destruct(&buf);
    return i;
}

static void test_every_truncation_point_fails_cleanly(void)
{
    sample_t samples[40];
    size_t nsamples, len, whole, prev = 0;
    pmix_data_array_t *keep;
    pmix_data_buffer_t *buf = pack_all_types(samples, &nsamples, &keep);
    pmix_status_t rc;

    whole = unpack_all_types(buf->base_ptr, buf->bytes_used, samples, nsamples, &rc, NULL, NULL);
    CU_ASSERT_EQUAL(whole, nsamples);
    CU_ASSERT_EQUAL(rc, PMIX_SUCCESS);
    for (len = 0; len < buf->bytes_used; len++) {
        whole = unpack_all_types(buf->base_ptr, len, samples, nsamples, &rc, NULL, NULL);
        /* a prefix never yields every group, fails with a read error, and
         * the number of whole groups only grows with the prefix */
        CU_ASSERT_TRUE(whole < nsamples);
        CU_ASSERT_TRUE(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER == rc ||
                       PMIX_ERR_UNPACK_FAILURE == rc);
        CU_ASSERT_TRUE(whole >= prev);
        prev = whole;
    }
    release_all_types(buf, samples, nsamples, keep);
}

/* Where each sample group starts in the intact buffer; starts[nsamples]
 * is its end. */
static void group_starts(const pmix_data_buffer_t *packed, const sample_t *samples,
                         size_t nsamples, size_t *starts)
{
    pmix_data_buffer_t buf;
    char *copy = malloc(packed->bytes_used);
    size_t i;

    memcpy(copy, packed->base_ptr, packed->bytes_used);
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    pg_buffer_load(&buf, copy, packed->bytes_used);
    for (i = 0; i < nsamples; i++) {
        starts[i] = packed->bytes_used - pg_buffer_unread(&buf);
        CU_ASSERT_EQUAL(unpack_checked(&buf, samples[i].type, samples[i].n, NULL), PMIX_SUCCESS);
    }
    starts[nsamples] = packed->bytes_used;
    pg_buffer_destruct(&buf);
}

/* The group that byte `at` belongs to. */
static size_t group_of(const size_t *starts, size_t nsamples, size_t at)
{
    size_t g = 0;

    while (g + 1 < nsamples && starts[g + 1] <= at) {
        g++;
    }
    return g;
}

/* True when what decoded from bytes[0..consumed) packs back to exactly
 * those bytes. */
static bool repacks_to(const pmix_data_buffer_t *repack, const char *bytes, size_t consumed)
{
    return repack->bytes_used == consumed &&
           (0 == consumed || 0 == memcmp(repack->base_ptr, bytes, consumed));
}

/* Every single-bit flip of a buffer holding one group of every type (the
 * codec has no checksum: a flip may decode, but never silently):
 *   - the groups before the flipped byte still come out whole: damage
 *     does not reach back;
 *   - a flip in a group's type tag is PMIX_ERR_TYPE_MISMATCH at that group;
 *   - every unpack keeps pg_unpack's contract (unpack_checked);
 *   - what decoded packs back to exactly the bytes it was read from, so a
 *     damaged buffer never decodes to the intact values: no bit of the
 *     encoding is ignored.
 * (Short of room, INADEQUATE_SPACE skips elements: nothing to compare.) */
static void test_every_bit_flip_fails_cleanly_or_decodes_what_it_says(void)
{
    sample_t samples[40];
    size_t nsamples, starts[41], bit, whole, consumed, decoded = 0;
    pmix_data_array_t *keep;
    pmix_data_buffer_t *buf = pack_all_types(samples, &nsamples, &keep);
    char *mutant = malloc(buf->bytes_used);
    pmix_data_buffer_t repack;
    pmix_status_t rc;

    group_starts(buf, samples, nsamples, starts);
    for (bit = 0; bit < buf->bytes_used * 8; bit++) {
        size_t at = bit / 8, g = group_of(starts, nsamples, at);

        memcpy(mutant, buf->base_ptr, buf->bytes_used);
        mutant[at] ^= (char)(1u << (bit % 8));
        PMIX_DATA_BUFFER_CONSTRUCT(&repack);
        whole = unpack_all_types(mutant, buf->bytes_used, samples, nsamples, &rc, &repack,
                                 &consumed);
        CU_ASSERT_TRUE(whole >= g);
        if (at - starts[g] < 2) {
            CU_ASSERT_EQUAL(whole, g);
            CU_ASSERT_EQUAL(rc, PMIX_ERR_TYPE_MISMATCH);
        }
        if (PMIX_ERR_UNPACK_INADEQUATE_SPACE != rc && !repacks_to(&repack, mutant, consumed)) {
            CU_FAIL("a flipped buffer decoded to values that do not pack back to its bytes");
            printf("\n  bit %zu (byte %zu, group %zu: %s)\n", bit, at, g,
                   pg_type_name(samples[g].type));
        }
        decoded += PMIX_SUCCESS == rc;
        PMIX_DATA_BUFFER_DESTRUCT(&repack);
    }
    printf("\n  %zu of %zu single-bit flips decode whole\n", decoded, buf->bytes_used * 8);
    free(mutant);
    release_all_types(buf, samples, nsamples, keep);
}

/* A small deterministic generator so failures reproduce. */
static uint32_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*state >> 33);
}

/* Noise behind a plausible group header of a complex type: pg_unpack keeps
 * its contract (unpack_checked), and when the noise happens to decode, it
 * packs back to exactly the bytes read. */
static void test_garbage_fails_cleanly_or_decodes_what_it_says(void)
{
    static const pmix_data_type_t types[] = { PMIX_VALUE, PMIX_INFO, PMIX_PDATA,
                                              PMIX_DATA_ARRAY, PMIX_STRING, PMIX_PROC,
                                              PMIX_BYTE_OBJECT, PMIX_INT };
    uint64_t seed = 20240601;
    unsigned char garbage[512];
    size_t round, i, len;

    printf("\n  garbage seed %llu\n", (unsigned long long)seed);
    for (round = 0; round < 3000; round++) {
        pmix_data_buffer_t buf, repack;
        pmix_data_type_t type = types[round % (sizeof(types) / sizeof(types[0]))];
        char *copy;

        for (i = 0; i < sizeof(garbage); i++) {
            garbage[i] = (unsigned char)next_random(&seed);
        }
        garbage[0] = 0;
        garbage[1] = (unsigned char)type;
        len = 1 + next_random(&seed) % sizeof(garbage);
        copy = malloc(len);
        memcpy(copy, garbage, len);
        PMIX_DATA_BUFFER_CONSTRUCT(&buf);
        PMIX_DATA_BUFFER_CONSTRUCT(&repack);
        pg_buffer_load(&buf, copy, len);
        if (PMIX_SUCCESS == unpack_checked(&buf, type, 4, &repack) &&
            !repacks_to(&repack, (const char *)garbage, len - pg_buffer_unread(&buf))) {
            CU_FAIL("garbage decoded to values that do not pack back to its bytes");
            printf("\n  round %zu (%s, %zu bytes)\n", round, pg_type_name(type), len);
        }
        pg_buffer_destruct(&buf);
        PMIX_DATA_BUFFER_DESTRUCT(&repack);
    }
}

/* ---- copy, copy_payload, print, load/unload --------------------------- */

static void test_data_copy_is_deep(void)
{
    pmix_data_array_t *da = make_nested_array();
    void *copy = NULL;
    char *scopy = NULL;

    CU_ASSERT_EQUAL(PMIx_Data_copy(&copy, da, PMIX_DATA_ARRAY), PMIX_SUCCESS);
    assert_same_rendering(da, copy, PMIX_DATA_ARRAY);
    CU_ASSERT_PTR_NOT_EQUAL(((pmix_data_array_t *)copy)->array, da->array);
    PMIX_DATA_ARRAY_FREE(da); /* the copy must not depend on the original */
    PMIx_Data_array_free(copy);

    CU_ASSERT_EQUAL(PMIx_Data_copy((void **)&scopy, "text", PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(scopy, "text");
    free(scopy);
    CU_ASSERT_EQUAL(PMIx_Data_copy(&copy, &scopy, 4000), PMIX_ERR_UNKNOWN_DATA_TYPE);
    CU_ASSERT_PTR_NULL(copy);
}

static void test_copy_payload_appends_only_the_unread_part(void)
{
    pmix_data_buffer_t src, dst;
    int32_t a = 1, b = 2, c = 3, got = 0, n = 1;

    PMIX_DATA_BUFFER_CONSTRUCT(&src);
    PMIX_DATA_BUFFER_CONSTRUCT(&dst);
    pg_pack(&src, &a, 1, PMIX_INT32);
    pg_pack(&src, &b, 1, PMIX_INT32);
    pg_pack(&dst, &c, 1, PMIX_INT32);
    CU_ASSERT_EQUAL(pg_unpack(&src, &got, &n, PMIX_INT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIx_Data_copy_payload(&dst, &src), PMIX_SUCCESS);
    /* src is untouched: its unread item is still there */
    CU_ASSERT_EQUAL(pg_unpack(&src, &got, &n, PMIX_INT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(got, 2);
    /* dst: its own item, then the copied one, then nothing */
    CU_ASSERT_EQUAL(pg_unpack(&dst, &got, &n, PMIX_INT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(got, 3);
    CU_ASSERT_EQUAL(pg_unpack(&dst, &got, &n, PMIX_INT32), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(got, 2);
    CU_ASSERT_EQUAL(pg_unpack(&dst, &got, &n, PMIX_INT32),
                    PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    CU_ASSERT_EQUAL(PMIx_Data_copy_payload(&dst, &dst), PMIX_ERR_BAD_PARAM);
    PMIX_DATA_BUFFER_DESTRUCT(&src);
    PMIX_DATA_BUFFER_DESTRUCT(&dst);
}

static void test_unload_then_load_moves_the_payload(void)
{
    pmix_data_buffer_t *buf;
    char *bytes = NULL;
    size_t size = 0;
    char *s = "moved", *out = NULL;
    int32_t n = 1;

    PMIX_DATA_BUFFER_CREATE(buf);
    pg_pack(buf, &s, 1, PMIX_STRING);
    PMIX_DATA_BUFFER_UNLOAD(buf, bytes, size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
    CU_ASSERT_EQUAL(buf->bytes_used, 0);
    CU_ASSERT_PTR_NULL(buf->base_ptr);
    PMIX_DATA_BUFFER_LOAD(buf, bytes, size);
    CU_ASSERT_EQUAL(PMIx_Data_unpack(NULL, buf, &out, &n, PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "moved");
    free(out);
    PMIX_DATA_BUFFER_RELEASE(buf);
}

static void test_print_renders_type_and_value(void)
{
    char *out = NULL;
    uint32_t u = 42;
    char *s = "hi";
    pmix_info_t info;

    CU_ASSERT_EQUAL(PMIx_Data_print(&out, "> ", &u, PMIX_UINT32), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "> PMIX_UINT32: 42");
    free(out);
    CU_ASSERT_EQUAL(PMIx_Data_print(&out, NULL, s, PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "PMIX_STRING: \"hi\"");
    free(out);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_LOCAL_RANK, &(uint16_t){ 3 }, PMIX_UINT16);
    CU_ASSERT_EQUAL(PMIx_Data_print(&out, "", &info, PMIX_INFO), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "PMIX_INFO: key=pmix.lrank flags=0x0 value=PMIX_UINT16: 3");
    free(out);
    PMIX_INFO_DESTRUCT(&info);
    CU_ASSERT_EQUAL(PMIx_Data_print(&out, "", &u, 4000), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_PTR_NULL(out);
}

/* The forms programs written for OpenPMIx pass: a string as the char *
 * itself (as PMIx_Data_copy takes it), NULL, and -- what OpenPMIx's own
 * examples do with every query result -- a pmix_value_t's address with the
 * value's type.  That last one is a caller's mistake, but it must print
 * something and return, never crash. */
static void test_print_takes_openpmix_argument_forms(void)
{
    char *out = NULL;
    pmix_value_t v;
    pmix_info_t info;

    CU_ASSERT_EQUAL(PMIx_Data_print(&out, "> ", "hello", PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "> PMIX_STRING: \"hello\"");
    free(out);
    CU_ASSERT_EQUAL(PMIx_Data_print(&out, NULL, NULL, PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "PMIX_STRING: NULL");
    free(out);
    /* hello.c: PMIx_Data_print(&tmp, NULL, &info[n].value, info[n].value.type) */
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_QUERY_PSET_NAMES, "a,b", PMIX_STRING);
    CU_ASSERT_EQUAL(PMIx_Data_print(&out, NULL, &info.value, info.value.type), PMIX_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(out);
    free(out);
    PMIX_INFO_DESTRUCT(&info);
    PMIX_VALUE_LOAD(&v, &(size_t){ 0 }, PMIX_SIZE);
    CU_ASSERT_EQUAL(PMIx_Data_print(&out, NULL, &v, v.type), PMIX_SUCCESS);
    free(out);
    /* the Standard's way to print a value: type PMIX_VALUE */
    PMIX_VALUE_LOAD(&v, "text", PMIX_STRING);
    CU_ASSERT_EQUAL(PMIx_Data_print(&out, NULL, &v, PMIX_VALUE), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "PMIX_VALUE: PMIX_STRING: \"text\"");
    free(out);
    PMIX_VALUE_DESTRUCT(&v);
}

/* ---- values for the PMI side ------------------------------------------ */

static void test_value_to_string_gives_pmi_text(void)
{
    pmix_value_t v;
    char *out = NULL;
    uint32_t size = 1024;
    int64_t neg = -5;
    pmix_byte_object_t bin = { "\x01\x02", 2 };

    PMIX_VALUE_LOAD(&v, &size, PMIX_UINT32);
    CU_ASSERT_EQUAL(pg_value_to_string(&v, &out), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "1024");
    free(out);
    PMIX_VALUE_LOAD(&v, &neg, PMIX_INT64);
    CU_ASSERT_EQUAL(pg_value_to_string(&v, &out), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "-5");
    free(out);
    PMIX_VALUE_LOAD(&v, "(vector,(0,2,1))", PMIX_STRING);
    CU_ASSERT_EQUAL(pg_value_to_string(&v, &out), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(out, "(vector,(0,2,1))");
    free(out);
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, &bin, PMIX_BYTE_OBJECT);
    CU_ASSERT_EQUAL(pg_value_to_string(&v, &out), PMIX_ERR_TYPE_MISMATCH);
    CU_ASSERT_PTR_NULL(out);
    PMIX_VALUE_DESTRUCT(&v);
    CU_ASSERT_EQUAL(v.type, PMIX_UNDEF);
}

static void test_value_truth_follows_presence_and_words(void)
{
    pmix_value_t v;
    bool no = false;

    PMIX_VALUE_CONSTRUCT(&v);
    CU_ASSERT_TRUE(PMIX_CHECK_TRUE(&v)); /* UNDEF: present means true */
    PMIX_VALUE_LOAD(&v, &no, PMIX_BOOL);
    CU_ASSERT_FALSE(PMIX_CHECK_TRUE(&v));
    PMIX_VALUE_LOAD(&v, "yes", PMIX_STRING);
    CU_ASSERT_TRUE(PMIX_CHECK_TRUE(&v));
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, "0", PMIX_STRING);
    CU_ASSERT_FALSE(PMIX_CHECK_TRUE(&v));
    CU_ASSERT_TRUE(PMIX_CHECK_BOOL(&v));
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, "maybe", PMIX_STRING);
    CU_ASSERT_FALSE(PMIX_CHECK_BOOL(&v));
    PMIX_VALUE_DESTRUCT(&v);
}

static void test_value_compare_orders_numbers_and_strings(void)
{
    pmix_value_t a, b;
    uint32_t one = 1, two = 2;
    int32_t minus = -1;

    PMIX_VALUE_LOAD(&a, &one, PMIX_UINT32);
    PMIX_VALUE_LOAD(&b, &two, PMIX_UINT32);
    CU_ASSERT_EQUAL(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    CU_ASSERT_EQUAL(PMIx_Value_compare(&b, &a), PMIX_VALUE1_GREATER);
    PMIX_VALUE_LOAD(&b, &minus, PMIX_INT32);
    CU_ASSERT_EQUAL(PMIx_Value_compare(&a, &b), PMIX_VALUE_TYPE_DIFFERENT);
    PMIX_VALUE_LOAD(&a, "abc", PMIX_STRING);
    PMIX_VALUE_LOAD(&b, "abd", PMIX_STRING);
    CU_ASSERT_EQUAL(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    PMIX_VALUE_DESTRUCT(&a);
    PMIX_VALUE_DESTRUCT(&b);
}

/* Packs values[0..n) as one PMIX_VALUE group each into a fresh buffer. */
static void pack_values(pmix_data_buffer_t *buf, const pmix_value_t *values, int32_t n)
{
    pg_buffer_construct(buf);
    CU_ASSERT_EQUAL_FATAL(pg_pack(buf, values, n, PMIX_VALUE), PMIX_SUCCESS);
}

/* The node segment and get replies hold one packed value each; the client
 * decodes it with pg_unpack_value_whole, whose string fast path must give
 * what the generic unpack gives, for strings and everything else. */
static void test_whole_value_unpack_gives_what_the_generic_unpack_gives(void)
{
    pmix_value_t in[6], out;
    uint32_t u = 4096;
    pmix_byte_object_t bo = { "\0bin", 4 };
    pmix_info_t *infos;
    pmix_data_array_t *arr;
    size_t i;

    PMIX_VALUE_LOAD(&in[0], "card-7-0123456789ABCDEF", PMIX_STRING);
    PMIX_VALUE_LOAD(&in[1], "", PMIX_STRING);
    PMIX_VALUE_CONSTRUCT(&in[2]);
    in[2].type = PMIX_STRING; /* a NULL string */
    PMIX_VALUE_LOAD(&in[3], &u, PMIX_UINT32);
    PMIX_VALUE_LOAD(&in[4], &bo, PMIX_BYTE_OBJECT);
    PMIX_INFO_CREATE(infos, 2);
    PMIX_INFO_LOAD(&infos[0], "k1", "v1", PMIX_STRING);
    PMIX_INFO_LOAD(&infos[1], "k2", &u, PMIX_UINT32);
    PMIX_DATA_ARRAY_CREATE(arr, 0, PMIX_INFO);
    arr->array = infos;
    arr->size = 2;
    in[5].type = PMIX_DATA_ARRAY;
    in[5].data.darray = arr;
    for (i = 0; i < 6; i++) {
        pmix_data_buffer_t buf;

        pack_values(&buf, &in[i], 1);
        memset(&out, 0xA5, sizeof(out)); /* need not be initialised */
        CU_ASSERT_EQUAL_FATAL(pg_unpack_value_whole(buf.base_ptr, buf.bytes_used, &out),
                              PMIX_SUCCESS);
        CU_ASSERT_EQUAL(out.type, in[i].type);
        assert_same_rendering(&in[i], &out, PMIX_VALUE);
        if (2 == i) {
            CU_ASSERT_PTR_NULL(out.data.string);
        }
        pg_value_destruct(&out);
        CU_ASSERT_EQUAL(out.type, PMIX_UNDEF);
        pg_buffer_destruct(&buf);
    }
    for (i = 0; i < 6; i++) {
        pg_value_destruct(&in[i]);
    }
}

/* A segment entry or reply that is not exactly one well-formed value is an
 * error that leaves nothing allocated (ASan and valgrind run this binary):
 * cut anywhere, one byte too many, two values, none, a string group instead
 * of a value group, a string with a NUL inside. */
static void test_whole_value_unpack_refuses_all_but_one_exact_value(void)
{
    pmix_data_buffer_t buf, two, none;
    pmix_value_t v[2], out;
    char *plain = "card";
    size_t cut;

    PMIX_VALUE_LOAD(&v[0], "card-1-0123", PMIX_STRING);
    PMIX_VALUE_LOAD(&v[1], "card-2-4567", PMIX_STRING);
    pack_values(&buf, v, 1);
    for (cut = 0; cut < buf.bytes_used; cut++) {
        CU_ASSERT_NOT_EQUAL(pg_unpack_value_whole(buf.base_ptr, cut, &out), PMIX_SUCCESS);
    }
    {
        char *longer = malloc(buf.bytes_used + 1);

        memcpy(longer, buf.base_ptr, buf.bytes_used);
        longer[buf.bytes_used] = 'x';
        CU_ASSERT_EQUAL(pg_unpack_value_whole(longer, buf.bytes_used + 1, &out),
                        PMIX_ERR_UNPACK_FAILURE);
        /* "card-1-0123" with its '-' turned into a NUL */
        memcpy(longer, buf.base_ptr, buf.bytes_used);
        longer[buf.bytes_used - 7] = '\0';
        CU_ASSERT_EQUAL(pg_unpack_value_whole(longer, buf.bytes_used, &out),
                        PMIX_ERR_UNPACK_FAILURE);
        free(longer);
    }
    pack_values(&two, v, 2);
    CU_ASSERT_EQUAL(pg_unpack_value_whole(two.base_ptr, two.bytes_used, &out),
                    PMIX_ERR_UNPACK_FAILURE);
    pack_values(&none, v, 0);
    CU_ASSERT_EQUAL(pg_unpack_value_whole(none.base_ptr, none.bytes_used, &out),
                    PMIX_ERR_UNPACK_FAILURE);
    pg_buffer_destruct(&buf);
    pg_buffer_construct(&buf);
    CU_ASSERT_EQUAL_FATAL(pg_pack(&buf, &plain, 1, PMIX_STRING), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_unpack_value_whole(buf.base_ptr, buf.bytes_used, &out),
                    PMIX_ERR_TYPE_MISMATCH);
    CU_ASSERT_EQUAL(pg_unpack_value_whole(NULL, 0, &out), PMIX_ERR_BAD_PARAM);
    pg_buffer_destruct(&buf);
    pg_buffer_destruct(&two);
    pg_buffer_destruct(&none);
    pg_value_destruct(&v[0]);
    pg_value_destruct(&v[1]);
}

static void test_error_and_type_names(void)
{
    CU_ASSERT_STRING_EQUAL(PMIx_Error_string(PMIX_ERR_EXISTS_OUTSIDE_SCOPE),
                           "PMIX_ERR_EXISTS_OUTSIDE_SCOPE");
    CU_ASSERT_STRING_EQUAL(PMIx_Error_string(-12345), "PMIX_ERR_UNKNOWN");
    /* what a failed invite returns is named, not "unknown" */
    CU_ASSERT_STRING_EQUAL(PMIx_Error_string(PMIX_GROUP_INVITE_FAILED),
                           "PMIX_GROUP_INVITE_FAILED");
    CU_ASSERT_STRING_EQUAL(PMIx_Data_type_string(PMIX_PROC_RANK), "PMIX_PROC_RANK");
}

/* ---- registry --------------------------------------------------------- */

static const pg_cunit_test_t round_trip_tests[] = {
    { "integers round-trip at their extremes", test_integers_round_trip_at_their_extremes },
    { "floats round-trip bit-exact", test_floats_round_trip_bit_exact },
    { "timeval round-trips", test_timeval_round_trips },
    { "strings keep NULL, empty and long distinct", test_strings_keep_null_empty_and_long_distinct },
    { "byte objects carry binary and empty payloads", test_byte_objects_carry_binary_and_empty_payloads },
    { "procs keep max-length nspace and special ranks", test_procs_keep_max_length_nspace_and_special_ranks },
    { "values of every kind round-trip", test_values_of_every_kind_round_trip },
    { "info keeps key, flags and value", test_info_keeps_key_flags_and_value },
    { "pdata keeps publisher, key and value", test_pdata_keeps_publisher_key_and_value },
    { "nested data arrays round-trip", test_nested_data_arrays_round_trip },
    { "envar and proc_info round-trip", test_envar_and_proc_info_round_trip },
    { "wire is big-endian with type and count", test_wire_is_big_endian_with_type_and_count },
    { NULL, NULL },
};

static const pg_cunit_test_t semantics_tests[] = {
    { "unpack returns fewer when fewer are stored", test_unpack_returns_fewer_when_fewer_are_stored },
    { "unpack with too little room reports inadequate space", test_unpack_with_too_little_room_reports_inadequate_space },
    { "unpack of wrong type fails without consuming", test_unpack_of_wrong_type_fails_without_consuming },
    { "bad arguments and unknown types are rejected", test_bad_arguments_and_unknown_types_are_rejected },
    { "nesting deeper than the limit is refused", test_nesting_deeper_than_the_limit_is_refused },
    { "data copy is deep", test_data_copy_is_deep },
    { "copy_payload appends only the unread part", test_copy_payload_appends_only_the_unread_part },
    { "unload then load moves the payload", test_unload_then_load_moves_the_payload },
    { "print renders type and value", test_print_renders_type_and_value },
    { "print takes the argument forms OpenPMIx accepts", test_print_takes_openpmix_argument_forms },
    { NULL, NULL },
};

static const pg_cunit_test_t hostile_tests[] = {
    { "huge counts fail before allocating", test_huge_counts_fail_before_allocating },
    { "malformed fields are unpack failures", test_malformed_fields_are_unpack_failures },
    { "whole-value unpack gives what the generic unpack gives", test_whole_value_unpack_gives_what_the_generic_unpack_gives },
    { "whole-value unpack refuses all but one exact value", test_whole_value_unpack_refuses_all_but_one_exact_value },
    { "every truncation point fails cleanly", test_every_truncation_point_fails_cleanly },
    { "every bit flip fails cleanly or decodes what it says",
      test_every_bit_flip_fails_cleanly_or_decodes_what_it_says },
    { "garbage fails cleanly or decodes what it says",
      test_garbage_fails_cleanly_or_decodes_what_it_says },
    { NULL, NULL },
};

static const pg_cunit_test_t value_tests[] = {
    { "value to string gives PMI text", test_value_to_string_gives_pmi_text },
    { "value truth follows presence and words", test_value_truth_follows_presence_and_words },
    { "value compare orders numbers and strings", test_value_compare_orders_numbers_and_strings },
    { "error and type names", test_error_and_type_names },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "pack: round trips", round_trip_tests, NULL, NULL },
    { "pack: unpack semantics, copy, print", semantics_tests, NULL, NULL },
    { "pack: hostile input", hostile_tests, NULL, NULL },
    { "pack: values", value_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
