/*
 * pg_pack_api.c: the Standard's data-handling functions (PMIx_Data_*,
 * PMIx_Value_*, PMIx_Info_*, the create/free helpers behind the PMIX_*
 * macros, argv helpers, printable names) as thin wrappers over pg_pack.
 *
 * Why it exists: <pmix_common.h>'s macros and <pmix.h>'s data functions must
 * resolve in every pmigate library a PMIx program may link, and they must
 * behave exactly like the gateway's own encoding.  Keeping them here, in
 * libpgpack, gives libpmix and the gateway one implementation.
 */
#include "wire/pack/pg_pack.h"

#include <pmix.h>

#include <stdlib.h>
#include <string.h>

/* ---- pack / unpack and friends ---------------------------------------- */

/* The body of the PMIx_*_free calls for packable types: an array made by
 * the matching _create is a data array without its header, so the
 * data-array destructor releases its elements and then the array. */
static void typed_array_free(void *array, size_t n, pmix_data_type_t type)
{
    pmix_data_array_t da = {.type = type, .size = n, .array = array};

    pg_data_destruct(&da, PMIX_DATA_ARRAY);
}

pmix_status_t PMIx_Data_pack(const pmix_proc_t *target, pmix_data_buffer_t *buffer, void *src,
                             int32_t num_vals, pmix_data_type_t type)
{
    (void)target; /* one encoding for every peer */
    return pg_pack(buffer, src, num_vals, type);
}

pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source, pmix_data_buffer_t *buffer, void *dest,
                               int32_t *max_num_values, pmix_data_type_t type)
{
    (void)source;
    return pg_unpack(buffer, dest, max_num_values, type);
}

pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type)
{
    return pg_copy(dest, src, type);
}

pmix_status_t PMIx_Data_print(char **output, char *prefix, void *src, pmix_data_type_t type)
{
    return pg_print(output, prefix, src, type);
}

pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest, pmix_data_buffer_t *src)
{
    return pg_buffer_copy_payload(dest, src);
}

pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload)
{
    pmix_status_t rc;

    if (NULL == payload) {
        return PMIX_ERR_BAD_PARAM;
    }
    rc = pg_buffer_load(buffer, payload->bytes, payload->size);
    if (PMIX_SUCCESS == rc) {
        payload->bytes = NULL;
        payload->size = 0;
    }
    return rc;
}

pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload)
{
    if (NULL == payload) {
        return PMIX_ERR_BAD_PARAM;
    }
    return pg_buffer_unload(buffer, &payload->bytes, &payload->size);
}

pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer, const pmix_byte_object_t *payload)
{
    if (NULL == buffer || NULL == payload) {
        return PMIX_ERR_BAD_PARAM;
    }
    pg_buffer_destruct(buffer);
    return pg_buffer_append(buffer, payload->bytes, payload->size);
}

bool PMIx_Data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes)
{
    (void)inbytes;
    (void)size;
    if (NULL != outbytes) {
        *outbytes = NULL;
    }
    if (NULL != nbytes) {
        *nbytes = 0;
    }
    return false;
}

bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                          size_t *nbytes)
{
    return PMIx_Data_compress(inbytes, size, outbytes, nbytes);
}

/* ---- buffers ---------------------------------------------------------- */

pmix_data_buffer_t *PMIx_Data_buffer_create(void)
{
    return pg_buffer_new();
}

void PMIx_Data_buffer_release(pmix_data_buffer_t *b)
{
    pg_buffer_free(b);
}

void PMIx_Data_buffer_construct(pmix_data_buffer_t *b)
{
    if (NULL != b) {
        pg_buffer_construct(b);
    }
}

void PMIx_Data_buffer_destruct(pmix_data_buffer_t *b)
{
    pg_buffer_destruct(b);
}

/* ---- values ----------------------------------------------------------- */

pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data, pmix_data_type_t type)
{
    return pg_value_load(val, data, type);
}

pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data, size_t *sz)
{
    if (NULL == val || NULL == data || NULL == sz) {
        return PMIX_ERR_BAD_PARAM;
    }
    *data = NULL;
    *sz = 0;
    if (PMIX_UNDEF == val->type) {
        return PMIX_SUCCESS;
    }
    if (PMIX_STRING == val->type) {
        if (NULL != val->data.string) {
            *data = strdup(val->data.string);
            if (NULL == *data) {
                return PMIX_ERR_NOMEM;
            }
            *sz = strlen(val->data.string) + 1;
        }
        return PMIX_SUCCESS;
    }
    if (PMIX_BYTE_OBJECT == val->type) {
        /* the bytes themselves, as OpenPMIx hands them out */
        if (NULL != val->data.bo.bytes && 0 != val->data.bo.size) {
            *data = malloc(val->data.bo.size);
            if (NULL == *data) {
                return PMIX_ERR_NOMEM;
            }
            memcpy(*data, val->data.bo.bytes, val->data.bo.size);
            *sz = val->data.bo.size;
        }
        return PMIX_SUCCESS;
    }
    if (pg_value_holds_pointer(val->type)) {
        if (NULL == val->data.ptr) {
            return PMIX_SUCCESS;
        }
        *sz = pg_type_elem_size(val->type);
        return pg_copy(data, val->data.ptr, val->type);
    }
    if (!pg_type_is_supported(val->type)) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    *sz = pg_type_elem_size(val->type);
    return pg_copy(data, &val->data, val->type);
}

void PMIx_Value_destruct(pmix_value_t *val)
{
    pg_value_destruct(val);
}

pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src)
{
    return pg_value_copy(dest, src);
}

pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2)
{
    return pg_value_compare(v1, v2);
}

pmix_boolean_t PMIx_Value_true(const pmix_value_t *value)
{
    return pg_value_truth(value);
}

pmix_value_t *PMIx_Value_create(size_t n)
{
    return (0 == n) ? NULL : calloc(n, sizeof(pmix_value_t));
}

void PMIx_Value_free(pmix_value_t *v, size_t n)
{
    /* each value, then the array: what typed_array_free does, without the
     * data-array wrapper (PMIX_VALUE_RELEASE after every PMIx_Get, N^2
     * times in a wire-up) */
    if (NULL == v) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        pg_value_destruct(&v[i]);
    }
    free(v);
}

char *PMIx_Value_string(const pmix_value_t *value)
{
    char *out = NULL;

    if (NULL == value || PMIX_SUCCESS != pg_print(&out, "", value, PMIX_VALUE)) {
        return NULL;
    }
    return out;
}

/* ---- info ------------------------------------------------------------- */

pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                             pmix_data_type_t type)
{
    if (NULL == info || NULL == key) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* keep the flags a PMIX_INFO_CREATE'd array carries (ARRAY_END) */
    PMIX_LOAD_KEY(info->key, key);
    return pg_value_load(&info->value, data, type);
}

pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src)
{
    if (NULL == dest || NULL == src) {
        return PMIX_ERR_BAD_PARAM;
    }
    return pg_data_copy_into(dest, src, PMIX_INFO);
}

void PMIx_Info_destruct(pmix_info_t *info)
{
    if (NULL != info) {
        pg_value_destruct(&info->value);
    }
}

pmix_info_t *PMIx_Info_create(size_t n)
{
    pmix_info_t *info;

    if (0 == n) {
        return NULL;
    }
    info = calloc(n, sizeof(pmix_info_t));
    if (NULL != info) {
        info[n - 1].flags = PMIX_INFO_ARRAY_END;
    }
    return info;
}

void PMIx_Info_free(pmix_info_t *info, size_t n)
{
    typed_array_free(info, n, PMIX_INFO);
}

bool PMIx_Info_true(const pmix_info_t *info)
{
    return NULL != info && PMIX_BOOL_TRUE == pg_value_truth(&info->value);
}

char *PMIx_Info_string(const pmix_info_t *info)
{
    char *out = NULL;

    if (NULL == info || PMIX_SUCCESS != pg_print(&out, "", info, PMIX_INFO)) {
        return NULL;
    }
    return out;
}

char *PMIx_Info_directives_string(pmix_info_directives_t directives)
{
    char *out = NULL;

    if (PMIX_SUCCESS != pg_print(&out, "", &directives, PMIX_INFO_DIRECTIVES)) {
        return NULL;
    }
    return out;
}

/* ---- lookup results, apps, proc infos --------------------------------- */

pmix_pdata_t *PMIx_Pdata_create(size_t n)
{
    return (0 == n) ? NULL : calloc(n, sizeof(pmix_pdata_t));
}

void PMIx_Pdata_free(pmix_pdata_t *pd, size_t n)
{
    typed_array_free(pd, n, PMIX_PDATA);
}

void PMIx_App_destruct(pmix_app_t *app)
{
    if (NULL == app) {
        return;
    }
    free(app->cmd);
    PMIx_Argv_free(app->argv);
    PMIx_Argv_free(app->env);
    free(app->cwd);
    PMIx_Info_free(app->info, app->ninfo);
    memset(app, 0, sizeof(*app));
}

pmix_app_t *PMIx_App_create(size_t n)
{
    return (0 == n) ? NULL : calloc(n, sizeof(pmix_app_t));
}

void PMIx_App_free(pmix_app_t *app, size_t n)
{
    size_t i;

    if (NULL == app) {
        return;
    }
    for (i = 0; i < n; i++) {
        PMIx_App_destruct(&app[i]);
    }
    free(app);
}

void PMIx_Proc_info_destruct(pmix_proc_info_t *p)
{
    pg_data_destruct(p, PMIX_PROC_INFO);
}

void PMIx_Proc_info_free(pmix_proc_info_t *p, size_t n)
{
    typed_array_free(p, n, PMIX_PROC_INFO);
}

/* ---- data arrays ------------------------------------------------------ */

void PMIx_Data_array_init(pmix_data_array_t *p, pmix_data_type_t type)
{
    if (NULL != p) {
        p->type = type;
        p->size = 0;
        p->array = NULL;
    }
}

void PMIx_Data_array_construct(pmix_data_array_t *p, size_t num, pmix_data_type_t type)
{
    size_t size = pg_type_elem_size(type);

    if (NULL == p) {
        return;
    }
    PMIx_Data_array_init(p, type);
    if (0 == num || 0 == size) {
        return;
    }
    p->array = calloc(num, size);
    if (NULL != p->array) {
        p->size = num;
        if (PMIX_INFO == type) {
            ((pmix_info_t *)p->array)[num - 1].flags = PMIX_INFO_ARRAY_END;
        }
    }
}

void PMIx_Data_array_destruct(pmix_data_array_t *d)
{
    pg_data_destruct(d, PMIX_DATA_ARRAY);
}

pmix_data_array_t *PMIx_Data_array_create(size_t n, pmix_data_type_t type)
{
    pmix_data_array_t *p = calloc(1, sizeof(*p));

    if (NULL != p) {
        PMIx_Data_array_construct(p, n, type);
    }
    return p;
}

void PMIx_Data_array_free(pmix_data_array_t *p)
{
    if (NULL != p) {
        PMIx_Data_array_destruct(p);
        free(p);
    }
}

/* ---- argv ------------------------------------------------------------- */

int PMIx_Argv_count(char **argv)
{
    int n = 0;

    while (NULL != argv && NULL != argv[n]) {
        n++;
    }
    return n;
}

pmix_status_t PMIx_Argv_append_nosize(char ***argv, const char *arg)
{
    int n;
    char **grown;
    char *copy;

    if (NULL == argv || NULL == arg) {
        return PMIX_ERR_BAD_PARAM;
    }
    n = PMIx_Argv_count(*argv);
    copy = strdup(arg);
    grown = realloc(*argv, ((size_t)n + 2) * sizeof(char *));
    if (NULL == copy || NULL == grown) {
        free(copy);
        if (NULL != grown) {
            *argv = grown;
        }
        return PMIX_ERR_NOMEM;
    }
    grown[n] = copy;
    grown[n + 1] = NULL;
    *argv = grown;
    return PMIX_SUCCESS;
}

void PMIx_Argv_free(char **argv)
{
    int i;

    for (i = 0; NULL != argv && NULL != argv[i]; i++) {
        free(argv[i]);
    }
    free(argv);
}

char **PMIx_Argv_split(const char *src, int delimiter)
{
    char **argv = NULL;
    const char *start = src, *end;
    char *part;

    if (NULL == src) {
        return NULL;
    }
    while ('\0' != *start) {
        end = strchr(start, delimiter);
        if (NULL == end) {
            end = start + strlen(start);
        }
        if (end > start) { /* empty fields are dropped */
            part = strndup(start, (size_t)(end - start));
            if (NULL == part || PMIX_SUCCESS != PMIx_Argv_append_nosize(&argv, part)) {
                free(part);
                PMIx_Argv_free(argv);
                return NULL;
            }
            free(part);
        }
        start = ('\0' == *end) ? end : end + 1;
    }
    return argv;
}

char *PMIx_Argv_join(char **argv, int delimiter)
{
    size_t len = 1;
    int i;
    char *out, *pos;

    for (i = 0; NULL != argv && NULL != argv[i]; i++) {
        len += strlen(argv[i]) + 1;
    }
    out = calloc(1, len);
    if (NULL == out) {
        return NULL;
    }
    pos = out;
    for (i = 0; NULL != argv && NULL != argv[i]; i++) {
        if (0 != i) {
            *pos++ = (char)delimiter;
        }
        len = strlen(argv[i]);
        memcpy(pos, argv[i], len);
        pos += len;
    }
    *pos = '\0';
    return out;
}

char **PMIx_Argv_copy(char **argv)
{
    char **copy = NULL;
    int i;

    for (i = 0; NULL != argv && NULL != argv[i]; i++) {
        if (PMIX_SUCCESS != PMIx_Argv_append_nosize(&copy, argv[i])) {
            PMIx_Argv_free(copy);
            return NULL;
        }
    }
    return copy;
}

/* ---- printable names -------------------------------------------------- */

const char *PMIx_Error_string(pmix_status_t status)
{
    return pg_status_name(status);
}

const char *PMIx_Data_type_string(pmix_data_type_t type)
{
    return pg_type_name(type);
}

const char *PMIx_Scope_string(pmix_scope_t scope)
{
    static const char *const names[] = { "UNDEFINED", "SHARE ON LOCAL NODE ONLY",
                                         "SHARE ON REMOTE NODES ONLY", "SHARE ACROSS ALL NODES",
                                         "STORE INTERNALLY" };

    return scope < sizeof(names) / sizeof(names[0]) ? names[scope] : "UNKNOWN SCOPE";
}

const char *PMIx_Persistence_string(pmix_persistence_t persist)
{
    static const char *const names[] = { "INDEFINITE", "DELETE ON FIRST ACCESS",
                                         "RETAIN UNTIL PUBLISHING PROCESS TERMINATES",
                                         "RETAIN UNTIL APPLICATION OF PUBLISHING PROCESS TERMINATES",
                                         "RETAIN UNTIL ALLOCATION OF PUBLISHING PROCESS TERMINATES" };

    return persist < sizeof(names) / sizeof(names[0]) ? names[persist] : "UNKNOWN PERSISTENCE";
}

const char *PMIx_Data_range_string(pmix_data_range_t range)
{
    static const char *const names[] = { "UNDEFINED", "PROVIDED BY HOST RM",
                                         "AVAILABLE ON LOCAL NODE ONLY",
                                         "AVAILABLE TO PROCESSES IN SAME NAMESPACE ONLY",
                                         "AVAILABLE TO PROCESSES IN SAME SESSION ONLY",
                                         "AVAILABLE TO ANYONE", "AVAILABLE AS SPECIFIED IN DIRECTIVES",
                                         "AVAILABLE ONLY TO THE PUBLISHING PROCESS" };

    return range < sizeof(names) / sizeof(names[0]) ? names[range] : "UNKNOWN RANGE";
}

const char *PMIx_Proc_state_string(pmix_proc_state_t state)
{
    switch (state) {
    case PMIX_PROC_STATE_UNDEF: return "UNDEFINED";
    case PMIX_PROC_STATE_PREPPED: return "PREPPED FOR LAUNCH";
    case PMIX_PROC_STATE_LAUNCH_UNDERWAY: return "LAUNCH UNDERWAY";
    case PMIX_PROC_STATE_RUNNING: return "RUNNING";
    case PMIX_PROC_STATE_CONNECTED: return "CONNECTED";
    case PMIX_PROC_STATE_TERMINATED: return "TERMINATED";
    case PMIX_PROC_STATE_ABORTED: return "ABORTED";
    case PMIX_PROC_STATE_FAILED_TO_START: return "FAILED TO START";
    case PMIX_PROC_STATE_TERM_NON_ZERO: return "EXITED WITH NON-ZERO STATUS";
    default: return state >= PMIX_PROC_STATE_ERROR ? "ERROR" : "UNKNOWN STATE";
    }
}

const char *PMIx_Value_comparison_string(pmix_value_cmp_t cmp)
{
    switch (cmp) {
    case PMIX_EQUAL: return "EQUAL";
    case PMIX_VALUE1_GREATER: return "VALUE1 GREATER";
    case PMIX_VALUE2_GREATER: return "VALUE2 GREATER";
    case PMIX_VALUE_TYPE_DIFFERENT: return "DIFFERENT TYPES";
    case PMIX_VALUE_INCOMPATIBLE_OBJECTS: return "INCOMPATIBLE OBJECTS";
    default: return "COMPARISON NOT AVAILABLE";
    }
}
