/*
 * pg_pmix_host_api: the server and tool halves of the PMIx API
 * (<pmix_server.h>, <pmix_tool.h>) in pmigate's libpmix.so.2.
 *
 * Why it exists: Open MPI 4.1's mca_pmix_ext3x.so serves mpirun's daemons as
 * well as the ranks, so it references PMIx_server_* and PMIx_tool_*; unless
 * libpmix.so.2 resolves them, the component does not load and an Open MPI
 * rank under `pmigate run` falls back to being a singleton.  A process
 * pmigate starts is a client, and never calls them, so each answers
 * PMIX_ERR_NOT_SUPPORTED -- but PMIx_tool_init and PMIx_tool_finalize,
 * which attach a tool to a running job (pg_pmix_tool.c).  Status-returning functions call no callback on
 * that error (the Standard's rule); the void ones call theirs with it.
 */
#include <pmix_server.h>
#include <pmix_tool.h>

#include <stddef.h>

/* ---- server ---- */

pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[], size_t ninfo)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_finalize(void)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_generate_regex(const char *input, char **regex)
{
    if (regex != NULL)
        *regex = NULL;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_generate_ppn(const char *input, char **ppn)
{
    if (ppn != NULL)
        *ppn = NULL;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                          pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata)
{
    if (cbfunc != NULL)
        cbfunc(PMIX_ERR_NOT_SUPPORTED, cbdata);
}

pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                          void *server_object, pmix_op_cbfunc_t cbfunc,
                                          void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata)
{
    if (cbfunc != NULL)
        cbfunc(PMIX_ERR_NOT_SUPPORTED, cbdata);
}

pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                         pmix_dmodex_response_fn_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace, pmix_info_t info[],
                                            size_t ninfo,
                                            pmix_setup_application_cbfunc_t cbfunc,
                                            void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace, pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                              void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source, pmix_iof_channel_t channel,
                                      const pmix_byte_object_t *bo, const pmix_info_t info[],
                                      size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                            pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                            pmix_info_t directives[], size_t ndirs,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Register_attributes(char *function, char *attrs[])
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                   char **locality)
{
    if (locality != NULL)
        *locality = NULL;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                 char **cpuset_string)
{
    if (cpuset_string != NULL)
        *cpuset_string = NULL;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_define_process_set(const pmix_proc_t *members, size_t nmembers,
                                             const char *pset_name)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_delete_process_set(char *pset_name)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                               pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

/* ---- tool ---- */

/* PMIx_tool_init and PMIx_tool_finalize: pg_pmix_tool.c. */

pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                         pmix_info_t info[], size_t ninfo)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers)
{
    if (servers != NULL)
        *servers = NULL;
    if (nservers != NULL)
        *nservers = 0;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[], size_t ninfo)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                            const pmix_info_t directives[], size_t ndirs,
                            pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                            pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[], size_t ndirs,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                            pmix_byte_object_t *bo, const pmix_info_t directives[],
                            size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}
