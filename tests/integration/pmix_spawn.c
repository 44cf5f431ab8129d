/*
 * pmix_spawn: PMIx_Spawn, PMIx_Spawn_nb, PMIx_Connect and PMIx_Disconnect
 * of pmigate's libpmix, checked from inside a `pmigate run` job.
 *   pmix_spawn          rank 0 spawns 2 children of this program (argv
 *                       "child", env PMIX_SPAWN_TEST=yes, PMIX_WDIR /tmp),
 *                       connects to their namespace and reads the key each
 *                       child put; then spawns 1 more with PMIx_Spawn_nb;
 *                       a connect to a namespace that does not exist and a
 *                       spawn of a missing program must fail.  Prints
 *                       "pmix_spawn parent: ok nspace=<ns>".
 *   pmix_spawn child    (spawned) checks PMIX_SPAWNED, the env and the wdir,
 *                       puts child-<rank>, commits, fences; prints
 *                       "pmix_spawn child R: ok".
 * A broken rule is named on stderr and the process exits 1.
 */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void child(const pmix_proc_t *me)
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

static void parent(const char *self)
{
    char *argv[] = { (char *)self, "child", NULL }, *env[] = { "PMIX_SPAWN_TEST=yes", NULL };
    pmix_info_t wdir;
    pmix_app_t app = { .cmd = (char *)self, .argv = argv, .env = env, .maxprocs = 2,
                       .info = &wdir, .ninfo = 1 };
    pmix_app_t missing = { .cmd = "/nonexistent/pmix_spawn_child", .maxprocs = 1 };
    pmix_nspace_t ns;
    pmix_proc_t peers, other;
    pmix_value_t *v = NULL;

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
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        child(&me);
    } else {
        if (rank == 0)
            parent(argv[0]);
        CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence");
    }
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "PMIx_Finalize");
    return 0;
}
