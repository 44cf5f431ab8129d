/*
 * pg_pmix_infolist: PMIx_Info_list_* -- a growable list of pmix_info_t.
 *
 * Why it exists: programs often do not know how many directives they will
 * pass (optional timeouts, per-app settings); the Standard lets them add
 * one at a time to an opaque list and convert it to a PMIX_INFO data array
 * at the end.  Every entry is a deep copy, so the caller's data may go
 * away right after add/xfer/insert; convert copies again, so the list and
 * the array are released independently.
 */
#include "config/config.h"

#include <pmix.h>

#include <stdlib.h>
#include <string.h>

typedef struct pg_info_list {
    pmix_info_t *items;
    size_t n, cap;
} pg_info_list_t;

void *PMIx_Info_list_start(void)
{
    return calloc(1, sizeof(pg_info_list_t));
}

/* A fresh, constructed slot at the end of the list, or NULL. */
static pmix_info_t *list_slot(pg_info_list_t *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        pmix_info_t *grown = realloc(l->items, cap * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        l->items = grown;
        l->cap = cap;
    }
    PMIX_INFO_CONSTRUCT(&l->items[l->n]);
    return &l->items[l->n];
}

pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                  pmix_data_type_t type)
{
    pg_info_list_t *l = ptr;
    pmix_info_t *slot;
    pmix_status_t rc;

    if (l == NULL || key == NULL || key[0] == '\0')
        return PMIX_ERR_BAD_PARAM;
    if ((slot = list_slot(l)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = PMIx_Info_load(slot, key, value, type);
    if (rc != PMIX_SUCCESS) {
        PMIx_Info_destruct(slot);
        return rc;
    }
    l->n++;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info)
{
    pg_info_list_t *l = ptr;
    pmix_info_t *slot;
    pmix_status_t rc;

    if (l == NULL || info == NULL)
        return PMIX_ERR_BAD_PARAM;
    if ((slot = list_slot(l)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = PMIx_Info_xfer(slot, info);
    if (rc != PMIX_SUCCESS) {
        PMIx_Info_destruct(slot);
        return rc;
    }
    slot->flags = info->flags & ~PMIX_INFO_ARRAY_END; /* the array end is convert's to mark */
    l->n++;
    return PMIX_SUCCESS;
}

/* The Standard's insert: like xfer (OpenPMIx takes the info's contents
 * over; a copy leaves the caller's info valid either way). */
pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info)
{
    return PMIx_Info_list_xfer(ptr, info);
}

pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par)
{
    pg_info_list_t *l = ptr;
    pmix_info_t *arr;

    if (l == NULL || par == NULL)
        return PMIX_ERR_BAD_PARAM;
    par->type = PMIX_INFO;
    par->size = 0;
    par->array = NULL;
    if (l->n == 0)
        return PMIX_ERR_EMPTY;
    if ((arr = PMIx_Info_create(l->n)) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < l->n; i++) {
        pmix_status_t rc = PMIx_Info_xfer(&arr[i], &l->items[i]);
        if (rc != PMIX_SUCCESS) {
            PMIx_Info_free(arr, l->n);
            return rc;
        }
        arr[i].flags = l->items[i].flags;
    }
    PMIX_INFO_SET_END(&arr[l->n - 1]);
    par->size = l->n;
    par->array = arr;
    return PMIX_SUCCESS;
}

void PMIx_Info_list_release(void *ptr)
{
    pg_info_list_t *l = ptr;

    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++)
        PMIx_Info_destruct(&l->items[i]);
    free(l->items);
    free(l);
}
