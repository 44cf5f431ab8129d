/*
 * pmix_spawn: PMIx_Spawn, PMIx_Spawn_nb, PMIx_Connect and PMIx_Disconnect
 * of pmigate's libpmix, checked from inside a `pmigate run` job.
 *   pmix_spawn          rank 1 (not 0: the parent's rank must really
 *                       travel) spawns 2 children of this program (argv
 *                       "child <its nspace> <its rank>", env
 *                       PMIX_SPAWN_TEST=yes, PMIX_WDIR /tmp),
 *                       connects to their namespace and reads the key each
 *                       child put; then spawns 1 more with PMIx_Spawn_nb;
 *                       a connect to a namespace that does not exist and a
 *                       spawn of a missing program must fail.  Prints
 *                       "pmix_spawn parent: ok nspace=<ns>".
 *   pmix_spawn child NS R  (spawned) checks PMIX_SPAWNED, PMIX_PARENT_ID
 *                       (a PMIX_PROC equal to {NS, R}, read as job data
 *                       and from the child's own proc), the env and the
 *                       wdir, puts child-<rank>, commits, fences; prints
 *                       "pmix_spawn child R: ok".
 *   pmix_spawn xnodes N rank 1, in a job over several nodes (`pmigate
 *                       proxy`), registers for PMIX_EVENT_JOB_END,
 *                       spawns N children (argv "xchild <its nspace> 1")
 *                       with PMIX_NOTIFY_COMPLETION, connects to them,
 *                       waits for their job's end (status 0) and reads
 *                       each child's key; prints "pmix_spawn xnodes: ok
 *                       nspace=<ns> hosts=<host of child 0>,<...>".
 *   pmix_spawn xchild NS R (spawned) checks PMIX_SPAWNED and
 *                       PMIX_PARENT_ID, puts xchild-<rank> = its host
 *                       name, commits, fences with its siblings (across
 *                       nodes, collecting data); prints "pmix_spawn xchild R on HOST: ok".
 *   pmix_spawn xdirect N rank 0, in a job over several nodes, spawns N
 *                       children (argv "xdchild <its nspace> 0") and
 *                       prints "pmix_spawn xdirect: ok nspace=<ns>".
 *   pmix_spawn xdchild NS R (spawned) puts xdchild-<rank> = its host
 *                       name, commits, fences WITHOUT PMIX_COLLECT_DATA
 *                       and gets its next sibling's key (direct modex of
 *                       a spawned job across nodes: the key is on the
 *                       sibling's node only), within a PMIX_TIMEOUT of
 *                       20 s; prints "pmix_spawn xdchild R got S from HOST".
 * A broken rule is named on stderr and the process exits 1.
 */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank = -1;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmix_spawn rank %d: ", rank);                     \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* PMIX_PARENT_ID as `who` sees it: the spawner's {nspace, rank}. */
static void check_parent(const pmix_proc_t *who, const char *parent_ns, pmix_rank_t parent_rank)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(who, PMIX_PARENT_ID, NULL, 0, &v);

    CHECK(rc == PMIX_SUCCESS && v != NULL, "PMIx_Get(PMIX_PARENT_ID) on rank %u: %s", who->rank,
          PMIx_Error_string(rc));
    CHECK(v->type == PMIX_PROC && v->data.proc != NULL,
          "PMIX_PARENT_ID on rank %u has type %d, expected PMIX_PROC", who->rank, v->type);
    CHECK(strcmp(v->data.proc->nspace, parent_ns) == 0 && v->data.proc->rank == parent_rank,
          "PMIX_PARENT_ID is %s:%u, expected the spawner %s:%u", v->data.proc->nspace,
          v->data.proc->rank, parent_ns, parent_rank);
    PMIX_VALUE_RELEASE(v);
}

static void child(const pmix_proc_t *me, const char *parent_ns, pmix_rank_t parent_rank)
{
    pmix_proc_t job = *me;
    pmix_value_t *v = NULL, val;
    char key[32], text[64], cwd[256];
    const char *env = getenv("PMIX_SPAWN_TEST");

    job.rank = PMIX_RANK_WILDCARD;
    CHECK(PMIx_Get(&job, PMIX_SPAWNED, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
              v->type == PMIX_BOOL && v->data.flag,
          "PMIX_SPAWNED is not true in a spawned child");
    PMIX_VALUE_RELEASE(v);
    check_parent(&job, parent_ns, parent_rank);
    check_parent(me, parent_ns, parent_rank);
    CHECK(env != NULL && strcmp(env, "yes") == 0, "the app's env did not reach the child");
    CHECK(getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, "/tmp") == 0, "cwd %s, expected /tmp",
          cwd);
    snprintf(key, sizeof key, "child-%d", rank);
    snprintf(text, sizeof text, "from child %d", rank);
    PMIX_VALUE_LOAD(&val, text, PMIX_STRING);
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &val) == PMIX_SUCCESS && PMIx_Commit() == PMIX_SUCCESS,
          "put/commit");
    PMIX_VALUE_DESTRUCT(&val);
    CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence");
    printf("pmix_spawn child %d: ok\n", rank);
}

/* A whole-job fence with PMIX_COLLECT_DATA: across nodes, what makes
 * every node's keys readable everywhere, and a barrier under every host. */
static void fence_collecting(const char *what)
{
    pmix_info_t collect;

    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, &collect, 1) == PMIX_SUCCESS, "%s", what);
    PMIX_INFO_DESTRUCT(&collect);
}

static void xchild(const pmix_proc_t *me, const char *parent_ns, pmix_rank_t parent_rank)
{
    pmix_proc_t job = *me;
    pmix_value_t *v = NULL, val;
    char key[32], host[256] = "";

    job.rank = PMIX_RANK_WILDCARD;
    CHECK(PMIx_Get(&job, PMIX_SPAWNED, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
              v->type == PMIX_BOOL && v->data.flag,
          "PMIX_SPAWNED is not true in a spawned child");
    PMIX_VALUE_RELEASE(v);
    check_parent(me, parent_ns, parent_rank);
    CHECK(gethostname(host, sizeof host - 1) == 0, "gethostname");
    snprintf(key, sizeof key, "xchild-%d", rank);
    PMIX_VALUE_LOAD(&val, host, PMIX_STRING);
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &val) == PMIX_SUCCESS && PMIx_Commit() == PMIX_SUCCESS,
          "put/commit");
    PMIX_VALUE_DESTRUCT(&val);
    fence_collecting("fence with the siblings");
    printf("pmix_spawn xchild %d on %s: ok\n", rank, host);
}

/* A spawned child's get of its sibling's key after a fence that brought
 * no data: only the sibling's node has it, so the get must cross nodes. */
static void xdchild(const pmix_proc_t *me, const char *parent_ns, pmix_rank_t parent_rank)
{
    pmix_proc_t job = *me, sibling = *me;
    pmix_value_t *v = NULL, val;
    pmix_info_t timeout;
    int seconds = 20;
    uint32_t size;
    char key[32], host[256] = "";

    job.rank = PMIX_RANK_WILDCARD;
    check_parent(me, parent_ns, parent_rank);
    CHECK(PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
              v->type == PMIX_UINT32,
          "PMIX_JOB_SIZE of the spawned job");
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    CHECK(gethostname(host, sizeof host - 1) == 0, "gethostname");
    snprintf(key, sizeof key, "xdchild-%d", rank);
    PMIX_VALUE_LOAD(&val, host, PMIX_STRING);
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &val) == PMIX_SUCCESS && PMIx_Commit() == PMIX_SUCCESS,
          "put/commit");
    PMIX_VALUE_DESTRUCT(&val);
    CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence without PMIX_COLLECT_DATA");
    sibling.rank = (me->rank + 1) % size;
    snprintf(key, sizeof key, "xdchild-%u", sibling.rank);
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
    CHECK(PMIx_Get(&sibling, key, &timeout, 1, &v) == PMIX_SUCCESS && v != NULL &&
              v->type == PMIX_STRING,
          "PMIx_Get of %s from the sibling %u (direct modex)", key, sibling.rank);
    PMIX_INFO_DESTRUCT(&timeout);
    printf("pmix_spawn xdchild %d got %u from %s\n", rank, sibling.rank, v->data.string);
    PMIX_VALUE_RELEASE(v);
    /* the siblings stay until both got: a getter's owner must be there */
    CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "the last fence");
}

/* Rank 0 spawns n children whose gets cross nodes (xdchild). */
static void xdirect(const char *self, const pmix_proc_t *me, int n)
{
    char myrank[16];
    char *argv[] = { (char *)self, "xdchild", (char *)me->nspace, myrank, NULL };
    pmix_app_t app = { .cmd = (char *)self, .argv = argv, .maxprocs = n };
    pmix_nspace_t ns;

    snprintf(myrank, sizeof myrank, "%u", me->rank);
    CHECK(PMIx_Spawn(NULL, 0, &app, 1, ns) == PMIX_SUCCESS && ns[0] != '\0', "PMIx_Spawn");
    printf("pmix_spawn xdirect: ok nspace=%s\n", ns);
}

static pthread_mutex_t end_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t end_cond = PTHREAD_COND_INITIALIZER;
static pmix_nspace_t ended_ns;
static pmix_status_t ended_status = PMIX_ERROR;

static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&end_lock);
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS) && info[i].value.type == PMIX_STATUS)
            ended_status = info[i].value.data.status;
    }
    if (status == PMIX_EVENT_JOB_END && source != NULL)
        PMIX_LOAD_NSPACE(ended_ns, source->nspace);
    pthread_cond_broadcast(&end_cond);
    pthread_mutex_unlock(&end_lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* Rank 1 spawns n children over the job's nodes, hears of their end, then
 * reads what each put (its host) across nodes. */
static void xparent(const char *self, const pmix_proc_t *me, int n)
{
    char myrank[16], hosts[1024] = "";
    char *argv[] = { (char *)self, "xchild", (char *)me->nspace, myrank, NULL };
    pmix_app_t app = { .cmd = (char *)self, .argv = argv, .maxprocs = n };
    pmix_status_t code = PMIX_EVENT_JOB_END;
    pmix_info_t notify;
    pmix_nspace_t ns;
    pmix_proc_t peers;
    struct timespec until;

    snprintf(myrank, sizeof myrank, "%u", me->rank);
    CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, on_job_end, NULL, NULL) > 0,
          "register for PMIX_EVENT_JOB_END");
    PMIX_INFO_LOAD(&notify, PMIX_NOTIFY_COMPLETION, NULL, PMIX_BOOL);
    CHECK(PMIx_Spawn(&notify, 1, &app, 1, ns) == PMIX_SUCCESS && ns[0] != '\0', "PMIx_Spawn");
    PMIX_INFO_DESTRUCT(&notify);
    PMIX_LOAD_PROCID(&peers, ns, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Connect(&peers, 1, NULL, 0) == PMIX_SUCCESS, "PMIx_Connect to %s", ns);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&end_lock);
    while (strcmp(ended_ns, ns) != 0 && pthread_cond_timedwait(&end_cond, &end_lock, &until) == 0)
        ;
    pthread_mutex_unlock(&end_lock);
    CHECK(strcmp(ended_ns, ns) == 0, "no PMIX_EVENT_JOB_END for %s", ns);
    CHECK(ended_status == PMIX_SUCCESS, "%s ended with status %d", ns, ended_status);
    for (int r = 0; r < n; r++) {
        char key[32];
        pmix_proc_t p;
        pmix_value_t *v = NULL;

        PMIX_LOAD_PROCID(&p, ns, (pmix_rank_t)r);
        snprintf(key, sizeof key, "xchild-%d", r);
        CHECK(PMIx_Get(&p, key, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
                  v->type == PMIX_STRING,
              "%s of %s after connect", key, ns);
        snprintf(hosts + strlen(hosts), sizeof hosts - strlen(hosts), "%s%s", r ? "," : "",
                 v->data.string);
        PMIX_VALUE_RELEASE(v);
    }
    CHECK(PMIx_Disconnect(&peers, 1, NULL, 0) == PMIX_SUCCESS, "PMIx_Disconnect");
    printf("pmix_spawn xnodes: ok nspace=%s hosts=%s\n", ns, hosts);
}

static pthread_mutex_t nb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nb_cond = PTHREAD_COND_INITIALIZER;
static int nb_done;
static pmix_status_t nb_status;
static pmix_nspace_t nb_nspace;

static void spawned_nb(pmix_status_t status, char nspace[], void *cbdata)
{
    (void)cbdata;
    pthread_mutex_lock(&nb_lock);
    nb_status = status;
    if (nspace != NULL)
        PMIX_LOAD_NSPACE(nb_nspace, nspace);
    nb_done = 1;
    pthread_cond_signal(&nb_cond);
    pthread_mutex_unlock(&nb_lock);
}

static void parent(const char *self, const pmix_proc_t *me)
{
    char myrank[16];
    char *argv[] = { (char *)self, "child", (char *)me->nspace, myrank, NULL };
    char *env[] = { "PMIX_SPAWN_TEST=yes", NULL };
    pmix_info_t wdir;
    pmix_app_t app = { .cmd = (char *)self, .argv = argv, .env = env, .maxprocs = 2,
                       .info = &wdir, .ninfo = 1 };
    pmix_app_t missing = { .cmd = "/nonexistent/pmix_spawn_child", .maxprocs = 1 };
    pmix_nspace_t ns;
    pmix_proc_t peers, other;
    pmix_value_t *v = NULL;

    snprintf(myrank, sizeof myrank, "%u", me->rank);
    PMIX_INFO_LOAD(&wdir, PMIX_WDIR, "/tmp", PMIX_STRING);
    CHECK(PMIx_Spawn(NULL, 0, &app, 1, ns) == PMIX_SUCCESS && ns[0] != '\0', "PMIx_Spawn");
    PMIX_LOAD_PROCID(&peers, ns, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Connect(&peers, 1, NULL, 0) == PMIX_SUCCESS, "PMIx_Connect to %s", ns);
    for (int r = 0; r < 2; r++) {
        char key[32], want[64];
        pmix_proc_t p;

        PMIX_LOAD_PROCID(&p, ns, (pmix_rank_t)r);
        snprintf(key, sizeof key, "child-%d", r);
        snprintf(want, sizeof want, "from child %d", r);
        CHECK(PMIx_Get(&p, key, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
                  v->type == PMIX_STRING && strcmp(v->data.string, want) == 0,
              "%s of %s after connect", key, ns);
        PMIX_VALUE_RELEASE(v);
    }
    CHECK(PMIx_Disconnect(&peers, 1, NULL, 0) == PMIX_SUCCESS, "PMIx_Disconnect");
    PMIX_LOAD_PROCID(&other, "no-such-namespace", PMIX_RANK_WILDCARD);
    CHECK(PMIx_Connect(&other, 1, NULL, 0) != PMIX_SUCCESS, "connect to a missing namespace");
    CHECK(PMIx_Spawn(NULL, 0, &missing, 1, NULL) != PMIX_SUCCESS, "spawn of a missing program");
    app.maxprocs = 1;
    CHECK(PMIx_Spawn_nb(NULL, 0, &app, 1, spawned_nb, NULL) == PMIX_SUCCESS, "PMIx_Spawn_nb");
    pthread_mutex_lock(&nb_lock);
    while (!nb_done)
        pthread_cond_wait(&nb_cond, &nb_lock);
    pthread_mutex_unlock(&nb_lock);
    CHECK(nb_status == PMIX_SUCCESS && strcmp(nb_nspace, ns) != 0,
          "PMIx_Spawn_nb: %s, namespace %s", PMIx_Error_string(nb_status), nb_nspace);
    PMIX_INFO_DESTRUCT(&wdir);
    printf("pmix_spawn parent: ok nspace=%s\n", ns);
}

int main(int argc, char **argv)
{
    pmix_proc_t me;

    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    rank = (int)me.rank;
    if (argc > 3 && strcmp(argv[1], "child") == 0) {
        child(&me, argv[2], (pmix_rank_t)strtoul(argv[3], NULL, 10));
    } else if (argc > 3 && strcmp(argv[1], "xchild") == 0) {
        xchild(&me, argv[2], (pmix_rank_t)strtoul(argv[3], NULL, 10));
    } else if (argc > 3 && strcmp(argv[1], "xdchild") == 0) {
        xdchild(&me, argv[2], (pmix_rank_t)strtoul(argv[3], NULL, 10));
    } else if (argc > 2 && strcmp(argv[1], "xdirect") == 0) {
        if (rank == 0)
            xdirect(argv[0], &me, atoi(argv[2]));
        fence_collecting("fence"); /* the other ranks stay until rank 0 is done */
    } else if (argc > 2 && strcmp(argv[1], "xnodes") == 0) {
        if (rank == 1)
            xparent(argv[0], &me, atoi(argv[2]));
        fence_collecting("fence"); /* the other ranks stay until rank 1 is done */
    } else {
        if (rank == 1)
            parent(argv[0], &me);
        CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence");
    }
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "PMIx_Finalize");
    return 0;
}
