/*
 * pmix_nodes: what a PMIx program (pmigate's libpmix) learns about nodes,
 * checked from inside a job: PMIX_NUM_NODES, its PMIX_NODEID,
 * PMIX_LOCAL_SIZE / PMIX_LOCAL_RANK / PMIX_NODE_RANK / PMIX_LOCAL_PEERS of
 * its node, the PMIX_HOSTNAME of every rank (equal for ranks of one node,
 * different across nodes), then a fence with collect and gets of every
 * rank's key, by rank and with PMIX_RANK_UNDEF; on several nodes rank
 * 0's get of the last rank's key before that fence is answered with its
 * value (direct modex across nodes: held, if need be, until the last
 * rank committed it); and a PMIx_Lookup with PMIX_WAIT on rank 0 is woken
 * by the last rank's later PMIx_Publish (on another node under the proxy; not tried
 * with PG_SKIP_NAMESERV=1).  With
 * PG_REAL_HOSTNAME=1 (one node per host) PMIX_HOSTNAME is gethostname()'s.
 * argv[1] is the rank count of every node, "3,2" (ranks numbered node after node, as `pmigate proxy`
 * spreads them; `pmigate run` is one node: "N").  Prints
 * "pmix_nodes rank R: ok" or names the broken rule and exits 1.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank = -1;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmix_nodes rank %d: ", rank);                     \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static pmix_value_t *get(const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = NULL;
    pmix_status_t st = PMIx_Get(p, key, NULL, 0, &v);

    CHECK(st == PMIX_SUCCESS && v != NULL, "get %s of rank %d: %s", key, (int)p->rank,
          PMIx_Error_string(st));
    return v;
}

static unsigned get_uint(const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = get(p, key);
    unsigned u = v->type == PMIX_UINT32 ? v->data.uint32
                 : v->type == PMIX_UINT16 ? v->data.uint16
                                          : 99999;
    PMIX_VALUE_RELEASE(v);
    return u;
}

/* A remote rank's key before any fence: its value (see the top). */
static void early_get_is_answered(const pmix_proc_t *me, int remote, int node)
{
    pmix_proc_t peer;
    pmix_value_t *got = NULL;
    pmix_info_t timeout;
    int secs = 30;
    char key[64], want[128];
    pmix_status_t st;

    snprintf(key, sizeof(key), "card-%d", remote);
    PMIX_LOAD_PROCID(&peer, me->nspace, (pmix_rank_t)remote);
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &secs, PMIX_INT);
    st = PMIx_Get(&peer, key, &timeout, 1, &got);
    PMIX_INFO_DESTRUCT(&timeout);
    CHECK(st == PMIX_SUCCESS && got != NULL, "get of remote %s before the fence: %s", key,
          PMIx_Error_string(st));
    snprintf(want, sizeof(want), "card of rank %d on node %d", remote, node);
    CHECK(got->type == PMIX_STRING && strcmp(got->data.string, want) == 0,
          "get of remote %s before the fence is not '%s'", key, want);
    PMIX_VALUE_RELEASE(got);
}

/* Rank 0 looks up with PMIX_WAIT a name that rank `last` publishes a
 * moment later (so the lookup is already held when it comes).  With
 * `local` (another node's name, under a host without a name service) the
 * name never reaches rank 0: its lookup must end at its PMIX_TIMEOUT. */
static void wait_for_late_name(const pmix_proc_t *me, int last)
{
    pmix_info_t info[2];
    pmix_pdata_t pd;
    pmix_status_t st;
    int all = 0, secs = 30;

    if (rank == last && last != 0) {
        usleep(300 * 1000);
        PMIX_INFO_LOAD(&info[0], "late-name", "from the last rank", PMIX_STRING);
        st = PMIx_Publish(info, 1);
        CHECK(st == PMIX_SUCCESS, "publish late-name: %s", PMIx_Error_string(st));
        PMIX_INFO_DESTRUCT(&info[0]);
        return;
    }
    if (rank != 0 || last == 0)
        return;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, "late-name");
    PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &all, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &secs, PMIX_INT);
    st = PMIx_Lookup(&pd, 1, info, 2);
    CHECK(st == PMIX_SUCCESS && pd.value.type == PMIX_STRING &&
              strcmp(pd.value.data.string, "from the last rank") == 0 &&
              pd.proc.rank == (pmix_rank_t)last && strcmp(pd.proc.nspace, me->nspace) == 0,
          "lookup with PMIX_WAIT of a name rank %d publishes later: %s", last,
          PMIx_Error_string(st));
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_PDATA_DESTRUCT(&pd);
}

int main(int argc, char **argv)
{
    int counts[64], nnodes = 0, node_of[1024], first[64], size = 0;
    pmix_proc_t me, wild, peer;
    char want[256], host[1024], key[64];
    pmix_value_t v, *got;
    pmix_info_t collect;
    bool yes = true;

    CHECK(argc == 2, "usage: pmix_nodes COUNTS (e.g. 3,2)");
    for (char *p = argv[1]; *p && nnodes < 64; p = strchr(p, ',') ? strchr(p, ',') + 1 : "") {
        counts[nnodes] = atoi(p);
        first[nnodes] = size;
        for (int k = 0; k < counts[nnodes] && size < 1024; k++)
            node_of[size++] = nnodes;
        nnodes++;
    }
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    rank = (int)me.rank;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(get_uint(&wild, PMIX_JOB_SIZE) == (unsigned)size, "job size is not %d", size);
    CHECK(get_uint(&wild, PMIX_NUM_NODES) == (unsigned)nnodes, "PMIX_NUM_NODES is not %d",
          nnodes);
    int n = node_of[rank];
    CHECK(get_uint(&me, PMIX_NODEID) == (unsigned)n, "PMIX_NODEID is not %d", n);
    CHECK(get_uint(&wild, PMIX_LOCAL_SIZE) == (unsigned)counts[n], "PMIX_LOCAL_SIZE is not %d",
          counts[n]);
    CHECK(get_uint(&me, PMIX_LOCAL_RANK) == (unsigned)(rank - first[n]),
          "PMIX_LOCAL_RANK is not %d", rank - first[n]);
    CHECK(get_uint(&me, PMIX_NODE_RANK) == (unsigned)(rank - first[n]),
          "PMIX_NODE_RANK is not %d", rank - first[n]);
    got = get(&wild, PMIX_LOCAL_PEERS);
    want[0] = '\0';
    for (int r = first[n]; r < first[n] + counts[n]; r++)
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%d",
                 r == first[n] ? "" : ",", r);
    CHECK(got->type == PMIX_STRING && strcmp(got->data.string, want) == 0,
          "PMIX_LOCAL_PEERS is '%s', expected '%s'",
          got->type == PMIX_STRING ? got->data.string : "?", want);
    PMIX_VALUE_RELEASE(got);

    /* host names: equal within a node, different across nodes */
    char names[64][256];
    for (int k = 0; k < nnodes; k++) {
        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)first[k]);
        got = get(&peer, PMIX_HOSTNAME);
        CHECK(got->type == PMIX_STRING, "PMIX_HOSTNAME is not a string");
        snprintf(names[k], sizeof(names[k]), "%s", got->data.string);
        PMIX_VALUE_RELEASE(got);
        for (int j = 0; j < k; j++)
            CHECK(strcmp(names[j], names[k]) != 0, "nodes %d and %d share host name %s", j, k,
                  names[k]);
    }
    got = get(&me, PMIX_HOSTNAME);
    snprintf(host, sizeof(host), "%s", got->data.string);
    PMIX_VALUE_RELEASE(got);
    CHECK(strcmp(host, names[n]) == 0, "my host name %s is not my node's %s", host, names[n]);
    if (getenv("PG_REAL_HOSTNAME") != NULL) { /* one node per host: its own name */
        char mine[256] = "";
        gethostname(mine, sizeof(mine) - 1);
        CHECK(strcmp(host, mine) == 0, "PMIX_HOSTNAME %s is not this host's name %s", host, mine);
    }

    /* every rank's key after a collecting fence, by rank and by RANK_UNDEF */
    snprintf(key, sizeof(key), "card-%d", rank);
    snprintf(want, sizeof(want), "card of rank %d on node %d", rank, n);
    PMIX_VALUE_LOAD(&v, want, PMIX_STRING);
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS, "put");
    PMIX_VALUE_DESTRUCT(&v);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    if (nnodes > 1 && node_of[0] != node_of[size - 1] && rank == 0)
        early_get_is_answered(&me, size - 1, node_of[size - 1]);
    if (getenv("PG_SKIP_NAMESERV") == NULL) /* names not tried at all */
        wait_for_late_name(&me, size - 1);
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, &collect, 1) == PMIX_SUCCESS, "fence");
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "card-%d", r);
        snprintf(want, sizeof(want), "card of rank %d on node %d", r, node_of[r]);
        for (int undef = 0; undef < 2; undef++) {
            PMIX_LOAD_PROCID(&peer, me.nspace, undef ? PMIX_RANK_UNDEF : (pmix_rank_t)r);
            got = get(&peer, key);
            CHECK(got->type == PMIX_STRING && strcmp(got->data.string, want) == 0,
                  "%s%s is not '%s'", key, undef ? " (RANK_UNDEF)" : "", want);
            PMIX_VALUE_RELEASE(got);
        }
    }
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "finalize");
    printf("pmix_nodes rank %d: ok\n", rank);
    return 0;
}
