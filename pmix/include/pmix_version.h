/*
 * pmix_version.h: the PMIx interface level pmigate's headers provide.
 *
 * Programs written for OpenPMIx test these macros to choose code paths
 * (e.g. "#if PMIX_VERSION_MAJOR >= 4").  pmigate's constants, types and
 * structures match OpenPMIx 4.2.2 (the release Debian 12 ships), so we
 * announce that level; pmigate's own release number lives in config.h.
 */
#ifndef PMIx_VERSION_H
#define PMIx_VERSION_H

#define PMIX_VERSION_MAJOR   4L
#define PMIX_VERSION_MINOR   2L
#define PMIX_VERSION_RELEASE 2L

#define PMIX_NUMERIC_VERSION 0x00040202

#endif /* PMIx_VERSION_H */
