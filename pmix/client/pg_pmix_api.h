/*
 * pg_pmix_api: what the API files of libpmix beyond pg_pmix_client.c
 * (groups, job control, info lists, topology, ...) need from the client
 * core: is it initialised, its connection to the gateway, who we are, and
 * a way to answer a *_nb call through its callback.
 *
 * Why it exists: the client state is process-wide and private to
 * pg_pmix_client.c; these accessors are the only way in, so the other
 * files cannot bypass its locking.  Not exported (libpmix exports PMIx_*).
 */
#ifndef PG_PMIX_API_H
#define PG_PMIX_API_H

#include <pmix_common.h>

#include "pmix/client/pg_mux.h"

/* PMIx_Init succeeded and Finalize has not run. */
bool pg_pmix_ready(void);
/* The connection to the gateway (valid while pg_pmix_ready()). */
pg_mux_t *pg_pmix_mux(void);
/* This process's name. */
const pmix_proc_t *pg_pmix_self(void);

/* Runs cbfunc(status, ...) on the progress thread soon: the callback
 * contract of a *_nb call the library answers itself (never inline, so a
 * caller that waits on a lock it holds cannot deadlock).  Returns
 * PMIX_SUCCESS (the callback will run) or an error (it will not). */
pmix_status_t pg_pmix_defer_op(pmix_op_cbfunc_t cbfunc, void *cbdata, pmix_status_t status);
pmix_status_t pg_pmix_defer_info(pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_status_t status);

/* Sends a request whose reply is only a status, for a *_nb call: the
 * status goes to `op` or (with no results) to `info`, whichever is set.
 * req is consumed; on an error return no callback runs. */
pmix_status_t pg_pmix_send_status_nb(pmix_data_buffer_t *req, uint32_t id, pmix_op_cbfunc_t op,
                                     pmix_info_cbfunc_t info, void *cbdata);

/* ---- pg_pmix_group.c ---- */

/* The value `key` that group member `proc` (rank PMIX_RANK_UNDEF: any
 * member of its nspace) shared at the construct of the group with context
 * id `cid` -- of the newest group it shared `key` in when !by_cid -- copied
 * into *val (PMIX_VALUE_RELEASE): PMIX_SUCCESS, or PMIX_ERR_NOT_FOUND. */
pmix_status_t pg_pmix_group_shared_get(const pmix_proc_t *proc, const char *key, bool by_cid,
                                       size_t cid, pmix_value_t **val);
/* Forgets everything shared (PMIx_Finalize). */
void pg_pmix_group_shared_clear(void);

#endif
