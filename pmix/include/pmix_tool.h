/*
 * pmix_tool.h: the PMIx Standard's tool API (chapter "Tools and Debuggers"),
 * declared as the Standard spells it.
 *
 * Why this file exists: like pmix_server.h, for programs that reference the
 * tool side of OpenPMIx (Open MPI 4.1's mca_pmix_ext3x.so references
 * PMIx_tool_init and PMIx_tool_finalize for its command-line tools) and must
 * load against pmigate's libpmix.so.2.  pmigate accepts no tool connections,
 * so each function returns PMIX_ERR_NOT_SUPPORTED (and, as the Standard has
 * it for an error return, calls no callback).  docs/pmix-vs-openpmix.md.
 */
#ifndef PMIx_TOOL_API_H
#define PMIx_TOOL_API_H

#include <pmix.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* Forwarded output delivered to a tool that pulled it. */
typedef void (*pmix_iof_cbfunc_t)(size_t iofhdlr, pmix_iof_channel_t channel,
                                  pmix_proc_t *source, pmix_byte_object_t *payload,
                                  pmix_info_t info[], size_t ninfo);

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void);
PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server);
PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers);
PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[],
                                               size_t ninfo);

PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata);
PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[],
                                              size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                              void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                                        pmix_byte_object_t *bo, const pmix_info_t directives[],
                                        size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_TOOL_API_H */
