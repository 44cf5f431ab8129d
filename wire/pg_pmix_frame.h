/*
 * pg_pmix_frame: the framing of pmigate's PMIx transport (docs/pmix-transport.md).
 *
 * Why it exists: a PMIx client reaches the gateway through the same PMI_FD
 * socketpair (or PMIGATE_PMI_PORT socket) as PMI-1 and PMI-2 clients, so its
 * first bytes must tell the connection layer "this is PMIx" before anything
 * is parsed, and after that the stream must be cut into binary-safe
 * messages.  Both ends (libpmix and the gateway's connection layer) use
 * these functions, so they cannot disagree.
 *
 * The stream:
 *   client -> server, once: a 12-byte preamble
 *       u8 0x89, "PGX", u16 version, u16 flags, u32 rank
 *     flags is 0 for a rank, PG_PMIX_FLAG_TOOL for a tool (PMIx_tool_init,
 *     on the PMI_PORT socket only: the gateway gives it a namespace of its
 *     own and the rank field is not read);
 *     0x89 is not blank, digit, 'c' or 'm', so it can never start a PMI-1
 *     line ("cmd="/"mcmd=") nor a PMI-2 length field; rank is the client's
 *     rank (PMI_RANK) for a PMIGATE_PMI_PORT connection, 0xffffffff on a
 *     PMI_FD socketpair, whose rank the gateway already knows.
 *   then, both directions: frames
 *       u32 length (big-endian), then `length` payload bytes (a pg_pack
 *       buffer; see wire/pg_pmix_msg.h for what it holds).
 *
 * Header-only on purpose: the gateway's connection layer
 * (gateway/io/pg_conn.c) frames with wire/libpgwire.la alone, so the PMIx
 * framer must not need another library.  Stateless, like pg_frame:
 * call it on the bytes buffered so far; it never reads past `len`.
 */
#ifndef PG_PMIX_FRAME_H
#define PG_PMIX_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum {
    PG_PMIX_MAGIC0 = 0x89,           /* first byte of every PMIx connection */
    PG_PMIX_VERSION = 1,             /* transport version this code speaks */
    PG_PMIX_PREAMBLE_LEN = 12,
    PG_PMIX_HEADER_LEN = 4,          /* the u32 length before each payload */
    PG_PMIX_FRAME_MAX = 16 << 20,    /* largest payload either side accepts */
    /* the largest value a PMIx_Put takes, packed: a get reply or a commit
     * holding it alone (header, status, key, scope) must fit in a frame */
    PG_PMIX_VALUE_MAX = PG_PMIX_FRAME_MAX - (64 << 10),
};

#define PG_PMIX_RANK_FROM_FD UINT32_MAX /* preamble rank on a PMI_FD socketpair */

/* Preamble flags. */
enum {
    /* a tool (PMIx_tool_init), not a rank: docs/pmix-transport.md, "Tools" */
    PG_PMIX_FLAG_TOOL = 0x0001,
};

/* Results (PG_PMIX_FRAME_NEED_MORE has the value of PG_WIRE_ENEED_MORE). */
typedef enum pg_pmix_frame_err {
    PG_PMIX_FRAME_OK = 0,
    PG_PMIX_FRAME_NEED_MORE = -1,    /* valid so far, incomplete */
    PG_PMIX_FRAME_EBAD_MAGIC = -40,  /* not a PMIx preamble */
    PG_PMIX_FRAME_EVERSION = -41,    /* a transport version we do not speak */
    PG_PMIX_FRAME_ETOO_BIG = -42,    /* length over the limit */
    PG_PMIX_FRAME_EEMPTY = -43,      /* a zero-length frame (never sent) */
} pg_pmix_frame_err_t;

typedef struct pg_pmix_preamble {
    uint16_t version;
    uint16_t flags;
    uint32_t rank;  /* PG_PMIX_RANK_FROM_FD or the client's rank */
} pg_pmix_preamble_t;

static inline uint32_t pg_pmix_get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void pg_pmix_put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* 1 if a connection whose first bytes are buf[0..len) speaks PMIx (decided
 * by the first byte alone; 0 when len == 0). */
static inline int pg_pmix_is_start(const char *buf, size_t len)
{
    return len > 0 && (unsigned char)buf[0] == PG_PMIX_MAGIC0;
}

/* Writes the preamble for `rank` with `flags` into out[PG_PMIX_PREAMBLE_LEN]. */
static inline void pg_pmix_preamble_encode_flags(unsigned char *out, uint32_t rank,
                                                 uint16_t flags)
{
    out[0] = PG_PMIX_MAGIC0;
    out[1] = 'P';
    out[2] = 'G';
    out[3] = 'X';
    out[4] = 0;
    out[5] = PG_PMIX_VERSION;
    out[6] = (unsigned char)(flags >> 8);
    out[7] = (unsigned char)flags;
    pg_pmix_put_u32(out + 8, rank);
}

/* Writes a rank's preamble (no flags) into out[PG_PMIX_PREAMBLE_LEN]. */
static inline void pg_pmix_preamble_encode(unsigned char *out, uint32_t rank)
{
    pg_pmix_preamble_encode_flags(out, rank, 0);
}

/* Reads the preamble at the start of buf[0..len).  Wrong magic bytes are
 * reported as soon as they arrive, so garbage never waits for 12 bytes. */
static inline int pg_pmix_preamble_parse(const char *buf, size_t len, pg_pmix_preamble_t *out)
{
    static const unsigned char magic[4] = { PG_PMIX_MAGIC0, 'P', 'G', 'X' };
    const unsigned char *p = (const unsigned char *)buf;

    for (size_t i = 0; i < len && i < sizeof(magic); i++)
        if (p[i] != magic[i])
            return PG_PMIX_FRAME_EBAD_MAGIC;
    if (len < PG_PMIX_PREAMBLE_LEN)
        return PG_PMIX_FRAME_NEED_MORE;
    out->version = (uint16_t)(p[4] << 8 | p[5]);
    out->flags = (uint16_t)(p[6] << 8 | p[7]);
    out->rank = pg_pmix_get_u32(p + 8);
    if (out->version != PG_PMIX_VERSION)
        return PG_PMIX_FRAME_EVERSION;
    return PG_PMIX_FRAME_OK;
}

/* Looks for one complete frame at the start of buf[0..len) whose payload is
 * at most `max` bytes.  On PG_PMIX_FRAME_OK the payload is
 * buf[PG_PMIX_HEADER_LEN .. PG_PMIX_HEADER_LEN + *payload_len) and the frame
 * occupies PG_PMIX_HEADER_LEN + *payload_len bytes.  A length over `max` is
 * reported as soon as the header is there. */
static inline int pg_pmix_frame_next(const char *buf, size_t len, size_t max, size_t *payload_len)
{
    uint32_t n;

    *payload_len = 0;
    if (len < PG_PMIX_HEADER_LEN)
        return PG_PMIX_FRAME_NEED_MORE;
    n = pg_pmix_get_u32((const unsigned char *)buf);
    if (n == 0)
        return PG_PMIX_FRAME_EEMPTY;
    if (n > max)
        return PG_PMIX_FRAME_ETOO_BIG;
    if (len - PG_PMIX_HEADER_LEN < n)
        return PG_PMIX_FRAME_NEED_MORE;
    *payload_len = n;
    return PG_PMIX_FRAME_OK;
}

static inline const char *pg_pmix_frame_strerror(int err)
{
    switch (err) {
    case PG_PMIX_FRAME_OK: return "no error";
    case PG_PMIX_FRAME_NEED_MORE: return "incomplete PMIx frame";
    case PG_PMIX_FRAME_EBAD_MAGIC: return "not a pmigate PMIx preamble";
    case PG_PMIX_FRAME_EVERSION: return "unsupported pmigate PMIx transport version";
    case PG_PMIX_FRAME_ETOO_BIG: return "PMIx frame longer than 16 MiB";
    case PG_PMIX_FRAME_EEMPTY: return "empty PMIx frame";
    default: return "unknown PMIx framing error";
    }
}

#endif
