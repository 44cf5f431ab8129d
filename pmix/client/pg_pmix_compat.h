/*
 * pg_pmix_compat: what clients built for OpenPMIx - Open MPI 4.1's PMIx
 * component first - rely on beyond the Standard's letter, kept apart from
 * the client core so each rule is named once (docs/pmix-vs-openpmix.md,
 * "Open MPI").
 */
#ifndef PG_PMIX_COMPAT_H
#define PG_PMIX_COMPAT_H

#include <pmix.h>

#include <stdbool.h>

/* The Standard's cleanup attributes (the full v4 pmix_common.h has them). */
#ifndef PMIX_REGISTER_CLEANUP
#define PMIX_REGISTER_CLEANUP "pmix.reg.cleanup"
#endif
#ifndef PMIX_REGISTER_CLEANUP_DIR
#define PMIX_REGISTER_CLEANUP_DIR "pmix.reg.cleanupdir"
#endif
#ifndef PMIX_CLEANUP_RECURSIVE
#define PMIX_CLEANUP_RECURSIVE "pmix.clnup.recurse"
#endif
#ifndef PMIX_CLEANUP_EMPTY
#define PMIX_CLEANUP_EMPTY "pmix.clnup.empty"
#endif
#ifndef PMIX_CLEANUP_IGNORE
#define PMIX_CLEANUP_IGNORE "pmix.clnup.ignore"
#endif
#ifndef PMIX_CLEANUP_LEAVE_TOPDIR
#define PMIX_CLEANUP_LEAVE_TOPDIR "pmix.clnup.lvtop"
#endif

/* The answer to a PMIx_Put of a reserved key: PMIX_SUCCESS (the value is
 * dropped, the host's value of the key stands) for the keys the host
 * supplies for every process - Open MPI puts its hostname and cpuset
 * before it reads the host's - and PMIX_ERR_BAD_PARAM for every other
 * reserved key, as the Standard says. */
pmix_status_t pg_pmix_reserved_put(const char *key);

/* Whether PMIx_Store_internal keeps a reserved key: true for the keys the
 * Standard lets the client compute itself (PMIX_LOCALITY: Open MPI 4.1
 * stores each local peer's locality and reads it back); otherwise false,
 * with *rc PMIX_SUCCESS (a host-supplied key: dropped, the host's value
 * stands) or PMIX_ERR_BAD_PARAM (any other reserved key). */
bool pg_pmix_reserved_store(const char *key, pmix_status_t *rc);

/* Job-control cleanup directives (PMIX_REGISTER_CLEANUP,
 * PMIX_REGISTER_CLEANUP_DIR with PMIX_CLEANUP_RECURSIVE /
 * PMIX_CLEANUP_EMPTY / PMIX_CLEANUP_LEAVE_TOPDIR, PMIX_CLEANUP_IGNORE)
 * for the calling process itself: the paths are removed when it exits.
 * PMIX_ERR_NOT_FOUND: no cleanup directive (the request is something
 * else); PMIX_ERR_NOT_SUPPORTED: targets other than the caller alone. */
pmix_status_t pg_pmix_cleanup_request(const pmix_proc_t targets[], size_t ntargets,
                                      const pmix_info_t directives[], size_t ndirs);

#endif
