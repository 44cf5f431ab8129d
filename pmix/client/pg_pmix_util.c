/*
 * pg_pmix_util: the small helpers of <pmix.h> that need no gateway --
 * printable names of the remaining enumerations, attribute name <-> key
 * string, argv/environment helpers the header's macros call, and
 * PMIx_Progress.
 *
 * Why it exists: programs written for OpenPMIx print these names in their
 * diagnostics and build argv/env arrays with the macros; they must link
 * and behave.  The attribute table is generated at build time from
 * pmix_common.h (pmix/client.am), so it always lists exactly the keys the
 * header defines.
 */
#include "config/config.h"

#include <pmix.h>

#include <stdlib.h>
#include <string.h>

/* ---- printable names ------------------------------------------------------ */

const char *PMIx_Alloc_directive_string(pmix_alloc_directive_t directive)
{
    switch (directive) {
    case PMIX_ALLOC_NEW: return "NEW";
    case PMIX_ALLOC_EXTEND: return "EXTEND";
    case PMIX_ALLOC_RELEASE: return "RELEASE";
    case PMIX_ALLOC_REAQUIRE: return "REACQUIRE";
    case PMIX_ALLOC_EXTERNAL: return "EXTERNAL";
    default: return "UNSPECIFIED";
    }
}

/* Channel sets are bit masks: the name of the combination. */
const char *PMIx_IOF_channel_string(pmix_iof_channel_t channel)
{
    static const char *const names[16] = {
        "NONE", "STDIN", "STDOUT", "STDIN STDOUT", "STDERR", "STDIN STDERR",
        "STDOUT STDERR", "STDIN STDOUT STDERR", "STDDIAG", "STDIN STDDIAG",
        "STDOUT STDDIAG", "STDIN STDOUT STDDIAG", "STDERR STDDIAG", "STDIN STDERR STDDIAG",
        "STDOUT STDERR STDDIAG", "STDIN STDOUT STDERR STDDIAG",
    };

    if ((channel & PMIX_FWD_ALL_CHANNELS) == PMIX_FWD_ALL_CHANNELS)
        return "ALL";
    return names[channel & 0x0f];
}

const char *PMIx_Job_state_string(pmix_job_state_t state)
{
    switch (state) {
    case PMIX_JOB_STATE_UNDEF: return "UNDEFINED";
    case PMIX_JOB_STATE_AWAITING_ALLOC: return "AWAITING ALLOCATION";
    case PMIX_JOB_STATE_LAUNCH_UNDERWAY: return "LAUNCH UNDERWAY";
    case PMIX_JOB_STATE_RUNNING: return "RUNNING";
    case PMIX_JOB_STATE_SUSPENDED: return "SUSPENDED";
    case PMIX_JOB_STATE_CONNECTED: return "CONNECTED";
    case PMIX_JOB_STATE_UNTERMINATED: return "UNTERMINATED";
    case PMIX_JOB_STATE_TERMINATED: return "TERMINATED";
    case PMIX_JOB_STATE_TERMINATED_WITH_ERROR: return "TERMINATED WITH ERROR";
    default: return "UNKNOWN";
    }
}

const char *PMIx_Link_state_string(pmix_link_state_t state)
{
    switch (state) {
    case PMIX_LINK_UP: return "UP";
    case PMIX_LINK_DOWN: return "DOWN";
    default: return "UNKNOWN";
    }
}

const char *PMIx_Device_type_string(pmix_device_type_t type)
{
    switch (type) {
    case PMIX_DEVTYPE_BLOCK: return "BLOCK";
    case PMIX_DEVTYPE_GPU: return "GPU";
    case PMIX_DEVTYPE_NETWORK: return "NETWORK";
    case PMIX_DEVTYPE_OPENFABRICS: return "OPENFABRICS";
    case PMIX_DEVTYPE_DMA: return "DMA";
    case PMIX_DEVTYPE_COPROC: return "COPROCESSOR";
    default: return "UNKNOWN";
    }
}

/* ---- attribute names ------------------------------------------------------ */

typedef struct {
    const char *name;   /* "PMIX_JOB_SIZE" */
    const char *string; /* "pmix.job.size" */
} pg_attr_name_t;

static const pg_attr_name_t pg_attr_names[] = {
#include "pmix/client/pg_pmix_attrs.inc"
};

const char *PMIx_Get_attribute_string(const char *attribute)
{
    for (size_t i = 0; attribute != NULL && i < sizeof(pg_attr_names) / sizeof(pg_attr_names[0]);
         i++)
        if (strcmp(pg_attr_names[i].name, attribute) == 0)
            return pg_attr_names[i].string;
    return NULL;
}

const char *PMIx_Get_attribute_name(const char *attrstring)
{
    for (size_t i = 0; attrstring != NULL && i < sizeof(pg_attr_names) / sizeof(pg_attr_names[0]);
         i++)
        if (strcmp(pg_attr_names[i].string, attrstring) == 0)
            return pg_attr_names[i].name;
    return NULL;
}

/* ---- argv and environment ------------------------------------------------- */

pmix_status_t PMIx_Argv_prepend_nosize(char ***argv, const char *arg)
{
    int n;
    char **grown;
    char *copy;

    if (argv == NULL || arg == NULL)
        return PMIX_ERR_BAD_PARAM;
    n = PMIx_Argv_count(*argv);
    if ((copy = strdup(arg)) == NULL)
        return PMIX_ERR_NOMEM;
    if ((grown = realloc(*argv, (size_t)(n + 2) * sizeof(char *))) == NULL) {
        free(copy);
        return PMIX_ERR_NOMEM;
    }
    memmove(&grown[1], &grown[0], (size_t)n * sizeof(char *));
    grown[0] = copy;
    grown[n + 1] = NULL;
    *argv = grown;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Argv_append_unique_nosize(char ***argv, const char *arg)
{
    if (argv == NULL || arg == NULL)
        return PMIX_ERR_BAD_PARAM;
    for (char **p = *argv; p != NULL && *p != NULL; p++)
        if (strcmp(*p, arg) == 0)
            return PMIX_SUCCESS;
    return PMIx_Argv_append_nosize(argv, arg);
}

pmix_status_t PMIx_Setenv(const char *name, const char *value, bool overwrite, char ***env)
{
    size_t nlen;
    char *entry;

    if (name == NULL || env == NULL || name[0] == '\0' || strchr(name, '=') != NULL)
        return PMIX_ERR_BAD_PARAM;
    nlen = strlen(name);
    if (asprintf(&entry, "%s=%s", name, value != NULL ? value : "") < 0)
        return PMIX_ERR_NOMEM;
    for (char **p = *env; p != NULL && *p != NULL; p++) {
        if (strncmp(*p, name, nlen) != 0 || (*p)[nlen] != '=')
            continue;
        if (!overwrite) {
            free(entry);
            return PMIX_ERR_EXISTS;
        }
        free(*p);
        *p = entry;
        return PMIX_SUCCESS;
    }
    pmix_status_t rc = PMIx_Argv_append_nosize(env, entry);
    free(entry);
    return rc;
}

/* ---- progress ------------------------------------------------------------- */

/* libpmix's progress thread runs on its own: nothing to drive. */
void PMIx_Progress(void)
{
}
