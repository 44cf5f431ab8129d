/*
 * pg_shm_format: the layout of the node-shared key segment, the one
 * contract between its writer (gateway/io/pg_shm.c, run by pmigate after each
 * whole-job fence) and its reader (client/pg_cl_shm.c, in libpmi and
 * libpmi2).  Kept in one header so the two ends cannot drift apart; the
 * rules around it are in docs/shm-segment.md.
 *
 * A segment is one memfd, written whole, sealed against writes and
 * resizing, then put in place of the previous generation; nobody can change
 * it afterwards.  Beside it lives one small mutable memfd, the commit
 * table: per rank, the last segment generation after whose publication
 * that rank committed again -- libpmix must then ask the server, whose
 * answer may be newer than the segment's.  Readers find both through
 * PMIGATE_SHM ("SEGMENT:TABLE", paths under /proc/<pmigate>/fd/).  Native
 * byte order and alignment: the writer and its readers are on the same
 * host.  Layout:
 *
 *   pg_shm_header_t
 *   nspace bytes + NUL
 *   nslots x pg_shm_entry_t    open-addressing hash table, linear probing
 *   strings                    keys and values, each NUL-terminated
 *
 * Entries are (key, rank) -> value for every value the node may read, plus
 * one key-only entry (rank PG_SHM_ANY_RANK) per key, naming the lowest
 * posting rank's value: what the server answers for a get without a rank.
 * Each entry carries up to two encodings of its value: the text the PMI
 * servers would send (val_*), and the pmix_value_t the PMIx server would
 * send, in the Standard's pack encoding (pval_*, wire/pack/).
 */
#ifndef PG_SHM_FORMAT_H
#define PG_SHM_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire/pg_hash.h"

#define PG_SHM_MAGIC "PGSHMKV"     /* 8 bytes with its NUL */
#define PG_SHM_VERSION 2u
#define PG_SHM_ANY_RANK UINT32_MAX /* the key-only entry */
/* A reader says so in its handshake (PMI-1 init, PMI-2 fullinit:
 * PG_SHM_READER_ATTR=yes; every PMIx client is pmigate's libpmix, which
 * reads): the gateway writes a node's segment only while some process of
 * the job there reads it.  Other libraries (MPICH's built-in PMI-1, Slurm's
 * libpmi2) never look at it, and for them it would be pure fence latency. */
#define PG_SHM_READER_ATTR "pmigate_shm"

/* Entry flags: which dialect's server would send this value verbatim.  An
 * entry without the reader's flag means "ask the server" (its answer may be
 * a conversion, a refusal or a job attribute). */
enum {
    PG_SHM_PMI1_OK = 0x1u,
    PG_SHM_PMI2_OK = 0x2u,
    PG_SHM_PMIX_OK = 0x4u, /* pval_* holds the packed pmix_value_t */
};

typedef struct pg_shm_header {
    char magic[8];         /* PG_SHM_MAGIC */
    uint32_t version;      /* PG_SHM_VERSION */
    uint32_t header_size;  /* sizeof(pg_shm_header_t) */
    uint64_t generation;   /* whole-job fences completed when written: 1, 2, ... */
    uint64_t total_size;   /* bytes in the file */
    uint32_t job_size;     /* ranks of the job */
    uint32_t nslots;       /* a power of two */
    uint32_t nentries;     /* used slots */
    uint32_t nspace_len;   /* without the NUL */
    uint64_t nspace_off;
    uint64_t slots_off;    /* 8-byte aligned */
    uint64_t strings_off;
    uint64_t strings_size;
} pg_shm_header_t;

typedef struct pg_shm_entry {
    uint32_t hash;         /* pg_shm_hash(key, rank) */
    uint32_t rank;         /* poster, or PG_SHM_ANY_RANK */
    uint32_t key_len;      /* 0: empty slot */
    uint32_t key_off;      /* from strings_off; key_len bytes then NUL */
    uint32_t val_len;
    uint32_t val_off;      /* from strings_off; val_len bytes then NUL */
    uint32_t flags;        /* PG_SHM_*_OK */
    uint32_t pval_len;     /* the packed pmix_value_t (PG_SHM_PMIX_OK) */
    uint32_t pval_off;     /* from strings_off; pval_len bytes then NUL */
    uint32_t reserved;     /* 0 */
} pg_shm_entry_t;

/* The commit table: (1 + job_size) uint64_t words, zero at job start.
 * Word 0: the highest generation g such that some rank committed after
 * segment g was published; word 1 + r: the same for rank r.  The gateway
 * stores them before it answers the commit; a reader holding generation g
 * trusts a value of rank r only while word 1 + r < g (word 0 for a get
 * without a rank, which any rank's commit may change). */
static inline size_t pg_shm_commits_size(uint32_t job_size)
{
    return ((size_t)job_size + 1) * sizeof(uint64_t);
}

/* FNV-1a over the key and the rank, then a finaliser so the low bits (the
 * slot index) depend on every input bit. */
static inline uint32_t pg_shm_hash(const char *key, size_t len, uint32_t rank)
{
    unsigned char r[4] = { (unsigned char)rank, (unsigned char)(rank >> 8),
                           (unsigned char)(rank >> 16), (unsigned char)(rank >> 24) };
    uint32_t h = pg_fnv1a(pg_fnv1a(PG_FNV1A_START, key, len), r, sizeof(r));

    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

#endif
