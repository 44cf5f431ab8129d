/*
 * pg_group_xnode: the part of a group collective the host settles when
 * members are served by other engines (`pmigate proxy`; pg_host_ops_t's
 * group hooks, docs/proxy.md "Groups across nodes").
 *
 * Why a file of its own: what crosses servers is a blob per engine -- for
 * a construct what its members shared, for an invite their answers -- and
 * the host's verdict with the context id it chose; packing, reading back
 * and applying them is apart from the groups' own rules (pg_group.c).
 */
#include "engine/pg_group_int.h"

#include <stdlib.h>
#include <string.h>

/* What an engine gives the host with a collective, as one blob of entries
 * (u32 nspace length, the nspace, u32 rank, u32 size, the bytes;
 * big-endian): for a construct what its members shared, for an invite
 * their answers (one byte each). */
static void put_u32(unsigned char **w, uint32_t v)
{
    (*w)[0] = (unsigned char)(v >> 24);
    (*w)[1] = (unsigned char)(v >> 16);
    (*w)[2] = (unsigned char)(v >> 8);
    (*w)[3] = (unsigned char)v;
    *w += 4;
}

static bool get_u32(const unsigned char **r, size_t *left, uint32_t *v)
{
    if (*left < 4)
        return false;
    *v = (uint32_t)(*r)[0] << 24 | (uint32_t)(*r)[1] << 16 | (uint32_t)(*r)[2] << 8 | (*r)[3];
    *r += 4;
    *left -= 4;
    return true;
}

/* Appends one entry at *w (NULL: only counts its size into *size). */
static void entry_put(unsigned char **w, size_t *size, const pg_proc_t *who, const void *data,
                      size_t n)
{
    size_t len = strlen(who->nspace);

    *size += 12 + len + n;
    if (*w == NULL)
        return;
    put_u32(w, (uint32_t)len);
    memcpy(*w, who->nspace, len);
    *w += len;
    put_u32(w, who->rank);
    put_u32(w, (uint32_t)n);
    memcpy(*w, data, n);
    *w += n;
}

/* g's entries for the host: its shares (construct) or the answers of the
 * members served here (invite).  Two passes: sizes, then bytes. */
static void entries_walk(pg_engine_t *e, const pg_group_t *g, unsigned char **w, size_t *size)
{
    for (size_t i = 0; g->answers == NULL && i < g->nshares; i++)
        entry_put(w, size, &g->shares[i].proc, g->shares[i].data, g->shares[i].size);
    for (size_t i = 0; g->answers != NULL && i < g->nmembers; i++)
        if (g->answers[i] != ANSWER_NONE && pg_group_proc_served(e, &g->members[i]))
            entry_put(w, size, &g->members[i], &g->answers[i], 1);
}

static unsigned char *entries_pack(pg_engine_t *e, const pg_group_t *g, size_t *size)
{
    unsigned char *blob = NULL, *w = NULL;

    *size = 0;
    entries_walk(e, g, &w, size);
    if (*size == 0 || (blob = malloc(*size)) == NULL) {
        *size = 0;
        return NULL;
    }
    w = blob;
    *size = 0;
    entries_walk(e, g, &w, size);
    return blob;
}

/* Every server's entries into g: the shares it lacks (construct), the
 * answers (invite). */
static pmix_status_t entries_unpack(pg_engine_t *e, pg_group_t *g, const unsigned char *r,
                                    size_t left)
{
    char nspace[PMIX_MAX_NSLEN + 1];
    uint32_t n, rank, size;
    bool added;

    while (left > 0) {
        if (!get_u32(&r, &left, &n) || n > PMIX_MAX_NSLEN || n > left)
            return PMIX_ERR_BAD_PARAM;
        memcpy(nspace, r, n);
        nspace[n] = '\0';
        r += n;
        left -= n;
        if (!get_u32(&r, &left, &rank) || !get_u32(&r, &left, &size) || size > left)
            return PMIX_ERR_BAD_PARAM;
        pg_proc_t who = { nspace, rank };
        size_t at = pg_group_member_at(g, &who);
        pmix_status_t rc = PMIX_ERR_BAD_PARAM;
        if (g->answers == NULL && pg_group_is_member(g, &who))
            rc = pg_group_share_add(e, g, &who, r, size, &added);
        else if (g->answers != NULL && at != SIZE_MAX && size == 1 && r[0] != ANSWER_NONE) {
            g->answers[at] = r[0];
            rc = PMIX_SUCCESS;
        }
        if (rc != PMIX_SUCCESS)
            return rc;
        r += size;
        left -= size;
    }
    return PMIX_SUCCESS;
}

void pg_group_to_host(pg_engine_t *e, pg_host_group_t *hg)
{
    pg_group_t *g = hg->tag[0] != 'd' ? pg_group_find(e, hg->tag + 2) : NULL; /* "c:<group>" */
    unsigned char *blob = g != NULL ? entries_pack(e, g, &hg->size) : NULL;

    hg->shares = blob;
    e->ops.group(e->host_ctx, hg);
    free(blob);
}

pmix_status_t pg_group_host_done(pg_engine_t *e, uint64_t id, pmix_status_t status, uint64_t cid,
                                 const void *shares, size_t size)
{
    pg_fence_t *f = e != NULL ? pg_fence_host_pending(e, id) : NULL;
    const char *tag = f != NULL ? pg_fence_tag(f) : NULL;
    pg_group_t *g;

    if (tag == NULL)
        return PMIX_ERR_NOT_FOUND;
    g = pg_group_find(e, tag + 2);
    if (status == PMIX_SUCCESS && g != NULL &&
        ((tag[0] == 'c' && g->state == GROUP_PENDING) ||
         (tag[0] == 'i' && g->state == GROUP_INVITING))) {
        g->cid = cid;
        if (shares != NULL)
            status = entries_unpack(e, g, shares, size);
    }
    return pg_fence_host_done(e, id, status, NULL, 0);
}
