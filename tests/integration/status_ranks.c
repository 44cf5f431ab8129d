/*
 * status_ranks: a job that gets stuck on purpose, for `pmigate status`
 * (tests/integration/status.sh) to look at.  With pmigate's libpmix, every
 * rank initialises, then:
 *   rank 0  looks up with PMIX_WAIT a name nobody publishes;
 *   rank 1  gets a key rank 3 never puts (rank 3 keeps running, so the get
 *           stays held);
 *   rank 2  spawns one child (`sleep`) when STATUS_RANKS_SPAWN=1, then
 *           joins the job's fence, which waits for ranks 0, 1 and 3;
 *   rank 3  (and any other) just waits.
 * Each wait is bounded by STATUS_RANKS_WAIT seconds (default 120); then the
 * rank finalizes and exits 0.  Nothing here checks results: the test reads
 * what pmigate says about the job while it waits.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int wait_s = 120;

static void lookup_forever(void)
{
    pmix_info_t info[2];
    pmix_pdata_t pd;
    int all = 0;

    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, "nobody-publishes");
    PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &all, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &wait_s, PMIX_INT);
    (void)PMIx_Lookup(&pd, 1, info, 2);
}

static void get_forever(const pmix_proc_t *me)
{
    pmix_proc_t peer;
    pmix_value_t *v = NULL;
    pmix_info_t timeout;

    PMIX_LOAD_PROCID(&peer, me->nspace, 3);
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &wait_s, PMIX_INT);
    if (PMIx_Get(&peer, "never-put", &timeout, 1, &v) == PMIX_SUCCESS)
        PMIX_VALUE_RELEASE(v);
    /* a get the host answers at once (a remote rank under pmigate proxy):
     * wait here instead */
    sleep((unsigned)wait_s);
}

static void spawn_then_fence(void)
{
    pmix_app_t app;
    pmix_nspace_t child;
    char *argv[] = { "sleep", NULL, NULL };
    char secs[16];

    if (getenv("STATUS_RANKS_SPAWN") != NULL && strcmp(getenv("STATUS_RANKS_SPAWN"), "1") == 0) {
        snprintf(secs, sizeof(secs), "%d", wait_s);
        argv[1] = secs;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup("sleep");
        app.argv = argv;
        app.maxprocs = 1;
        if (PMIx_Spawn(NULL, 0, &app, 1, child) != PMIX_SUCCESS)
            fprintf(stderr, "status_ranks: spawn failed\n");
        app.argv = NULL; /* not ours to free */
        PMIX_APP_DESTRUCT(&app);
    }
    (void)PMIx_Fence(NULL, 0, NULL, 0);
}

int main(void)
{
    pmix_proc_t me;

    if (getenv("STATUS_RANKS_WAIT") != NULL)
        wait_s = atoi(getenv("STATUS_RANKS_WAIT"));
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "status_ranks: PMIx_Init failed\n");
        return 1;
    }
    switch (me.rank) {
    case 0:
        lookup_forever();
        break;
    case 1:
        get_forever(&me);
        break;
    case 2:
        spawn_then_fence();
        break;
    default:
        sleep((unsigned)wait_s);
        break;
    }
    PMIx_Finalize(NULL, 0);
    return 0;
}
