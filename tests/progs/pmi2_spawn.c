/*
 * pmi2_spawn: what a Slurm-libpmi2 program relies on when it spawns (the
 * PMI level of MPI_Comm_spawn / MPI_Comm_spawn_multiple), checked from
 * inside a real job.
 *
 *   pmi2_spawn parent NCMDS MAXPROCS   rank 0 spawns NCMDS commands of
 *       MAXPROCS processes each (this program in child mode) with one
 *       preput key; checks rc, jobid and every errcode; connects to the new
 *       job and reads the key each child put; prints
 *       "pmi2_spawn parent: ok jobid=<id> procs=<n>".
 *   pmi2_spawn missing                 rank 0 spawns a program that does
 *       not exist: the call must fail (Slurm's libpmi2 reads no errcodes
 *       without a jobid; with pmigate's the errcode must be ENOENT); prints
 *       "pmi2_spawn missing: refused".
 *   pmi2_spawn fail abort|die CODE     rank 0 spawns one child that calls
 *       PMI2_Abort (Slurm's libpmi2 sends no code: the job ends with 1) or
 *       exits with CODE before finalize; the launcher must end every job.
 *   pmi2_spawn names                   rank 0 spawns job A, whose child
 *       publishes a name (and puts "published" after it); once the parent
 *       read that key (job-connect), it spawns job B, whose child looks the
 *       name up: a name published by one job is found from an unrelated
 *       one.  Prints "pmi2_spawn names: ok".
 *   pmi2_spawn loop                    a spawn loop: rank 0 spawns one child
 *       in loop mode, which spawns one more, and so on, each printing
 *       "pmi2_spawn loop: spawned" or, once the launcher refuses,
 *       "pmi2_spawn loop: refused" (the chain must end there).
 *   pmi2_spawn alone N DELAY_MS        every rank fences; the ranks but 0
 *       finalize and exit at once, while rank 0, DELAY_MS later, spawns N
 *       children (child mode): the spawn must start them all, on nodes
 *       whose ranks finished or not, and prints "pmi2_spawn alone: ok
 *       jobid=<id>"; a refusal is named as any failure.
 *   pmi2_spawn bench N                 rank 0 spawns N children (child
 *       mode, quiet) and prints "spawn_ns N <ns>": request to reply.
 *   pmi2_spawn child CMD [quiet|abort CODE|die CODE] (spawned): checks PMI2_Init's
 *       spawned flag and appnum = CMD, PMI_SPAWNED=1, the preput key read
 *       before the first fence; puts child-<rank>; fences; prints
 *       "pmi2_spawn child R of S appnum A: ok".
 * Any broken rule is named on stderr and the process exits 1.
 *
 * Built twice: against Slurm's libpmi2 (its PMI2_Job_Spawn takes MPID_Info
 * pointers) and, with PMI2_SPAWN_PMIGATE, against pmigate's libpmi2 (MPICH's
 * PMI2_keyval_t arrays) as tests/clients/pmi2_spawn_own.
 */
#ifdef PMI2_SPAWN_PMIGATE
#include "pmi2.h"
typedef PMI2_keyval_t spawn_kv_t;
#define KV(k, v) { .key = k, .val = v }
#else
#include <slurm/pmi2.h>
typedef MPID_Info spawn_kv_t;
#define KV(k, v) { .key = k, .value = v }
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PREPUT_KEY "PARENT_ROOT_PORT_NAME"
#define PREPUT_VAL "tag#0$description#host$port#4711$ifname#127.0.0.1$"

static int rank = -1;

static void fail(const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "pmi2_spawn rank %d: ", rank);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    if (write(2, line, strlen(line)) < 0)
        exit(1);
    exit(1);
}

static long long now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spawns ncmds commands of maxprocs processes of this program in child
 * mode (argv: child <cmd> [extra...]).  Returns PMI2_Job_Spawn's rc. */
static int spawn(const char *self, int ncmds, int maxprocs, const char *extra1, const char *extra2,
                 char *jobid, int *errors)
{
    const char *cmds[8], **argvs[8], *args[8][4];
    int argcs[8], procs[8], infosizes[8];
    char idx[8][8];
    spawn_kv_t wdir = KV("wdir", "/tmp");
    spawn_kv_t unknown = KV("pmi2_spawn_unknown_key", "ignored");
    spawn_kv_t infos[8][2];
    const spawn_kv_t *infovecs[8];
    spawn_kv_t pre = KV(PREPUT_KEY, PREPUT_VAL);
#ifdef PMI2_SPAWN_PMIGATE
    const spawn_kv_t *prevec = &pre;  /* MPICH: an array of pairs */
#else
    const spawn_kv_t *prevec[1] = { &pre }; /* Slurm: an array of pointers */
#endif

    for (int i = 0; i < ncmds; i++) {
        snprintf(idx[i], sizeof idx[i], "%d", i);
        cmds[i] = self;
        args[i][0] = "child";
        args[i][1] = idx[i];
        args[i][2] = extra1;
        args[i][3] = extra2;
        argcs[i] = extra1 == NULL ? 2 : extra2 == NULL ? 3 : 4;
        argvs[i] = args[i];
        procs[i] = maxprocs;
        infos[i][0] = wdir;
        infos[i][1] = unknown;
        infovecs[i] = infos[i];
        infosizes[i] = 2;
    }
    return PMI2_Job_Spawn(ncmds, cmds, argcs, argvs, procs, infosizes, infovecs, 1, prevec, jobid,
                          256, errors);
}

static void parent(const char *self, int ncmds, int maxprocs)
{
    char jobid[256] = "", value[PMI2_MAX_VALLEN], key[32];
    int errors[64], total = ncmds * maxprocs, len;

    if (total > 64)
        fail("at most 64 children");
    for (int i = 0; i < total; i++)
        errors[i] = -1;
    if (spawn(self, ncmds, maxprocs, NULL, NULL, jobid, errors) != PMI2_SUCCESS)
        fail("PMI2_Job_Spawn of %d x %d failed", ncmds, maxprocs);
    if (jobid[0] == '\0')
        fail("no jobid for the spawned job");
    for (int i = 0; i < total; i++)
        if (errors[i] != 0)
            fail("errcode of child %d is %d, expected 0", i, errors[i]);
    if (PMI2_Job_Connect(jobid, NULL) != PMI2_SUCCESS)
        fail("PMI2_Job_Connect(%s) failed", jobid);
    for (int i = 0; i < total; i++) {
        char want[64];

        snprintf(key, sizeof key, "child-%d", i);
        snprintf(want, sizeof want, "hello from %d", i);
        if (PMI2_KVS_Get(jobid, PMI2_ID_NULL, key, value, sizeof value, &len) != PMI2_SUCCESS)
            fail("PMI2_KVS_Get(%s, %s) failed after job-connect", jobid, key);
        if (strcmp(value, want) != 0)
            fail("%s of job %s is '%s', expected '%s'", key, jobid, value, want);
    }
    if (PMI2_Job_Disconnect(jobid) != PMI2_SUCCESS)
        fail("PMI2_Job_Disconnect(%s) failed", jobid);
    printf("pmi2_spawn parent: ok jobid=%s procs=%d\n", jobid, total);
}

/* Rank 0 spawns n children delay_ms after its fellow ranks were told to
 * leave: whether the spawn reaches their nodes before or after they end. */
static void alone(const char *self, int n, int delay_ms)
{
    char jobid[256] = "";
    int errors[64];

    if (n > 64)
        fail("at most 64 children");
    usleep((useconds_t)delay_ms * 1000);
    if (spawn(self, 1, n, NULL, NULL, jobid, errors) != PMI2_SUCCESS)
        fail("PMI2_Job_Spawn of %d beside finished ranks failed", n);
    for (int i = 0; i < n; i++)
        if (errors[i] != 0)
            fail("errcode of child %d is %d, expected 0", i, errors[i]);
    printf("pmi2_spawn alone: ok jobid=%s\n", jobid);
}

static void child(int argc, char **argv, int spawned, int size, int appnum)
{
    char value[PMI2_MAX_VALLEN], key[32], mine[64];
    const char *env = getenv("PMI_SPAWNED");
    int len, quiet = argc > 3 && strcmp(argv[3], "quiet") == 0;

    if (!spawned)
        fail("PMI2_Init says spawned = 0 in a spawned child");
    if (env == NULL || strcmp(env, "1") != 0)
        fail("PMI_SPAWNED is '%s', expected 1", env ? env : "(unset)");
    if (appnum != atoi(argv[2]))
        fail("appnum %d, expected %s (the command index)", appnum, argv[2]);
    /* before any fence: the preput key is already there */
    if (PMI2_KVS_Get(NULL, PMI2_ID_NULL, PREPUT_KEY, value, sizeof value, &len) != PMI2_SUCCESS ||
        strcmp(value, PREPUT_VAL) != 0)
        fail("preput %s is not readable before the first fence", PREPUT_KEY);
    if (argc > 4 && strcmp(argv[3], "abort") == 0 && rank == 0)
        PMI2_Abort(1, "pmi2_spawn child aborts on purpose");
    if (argc > 4 && strcmp(argv[3], "die") == 0 && rank == 0)
        exit(atoi(argv[4]));
    if (argc > 4 && strcmp(argv[3], "publish") == 0 &&
        (PMI2_Nameserv_publish(argv[4], NULL, "tag#9$sibling$") != PMI2_SUCCESS ||
         PMI2_KVS_Put("published", "yes") != PMI2_SUCCESS))
        fail("publishing %s failed", argv[4]);
    if (argc > 3 && strcmp(argv[3], "loop") == 0 && rank == 0) {
        char jobid[256];
        int errors[1];

        if (spawn(argv[0], 1, 1, "loop", NULL, jobid, errors) == PMI2_SUCCESS)
            printf("pmi2_spawn loop: spawned %s\n", jobid);
        else
            printf("pmi2_spawn loop: refused\n");
    }
    if (argc > 4 && strcmp(argv[3], "lookup") == 0) {
        char port[PMI2_MAX_VALLEN] = "";

        if (PMI2_Nameserv_lookup(argv[4], NULL, port, sizeof port) != PMI2_SUCCESS ||
            strcmp(port, "tag#9$sibling$") != 0)
            fail("the name %s published by another job was not found ('%s')", argv[4], port);
    }
    snprintf(key, sizeof key, "child-%d", rank);
    snprintf(mine, sizeof mine, "hello from %d", rank);
    if (PMI2_KVS_Put(key, mine) != PMI2_SUCCESS || PMI2_KVS_Fence() != PMI2_SUCCESS)
        fail("put/fence failed");
    if (!quiet)
        printf("pmi2_spawn child %d of %d appnum %d: ok\n", rank, size, appnum);
}

int main(int argc, char **argv)
{
    int spawned, size, appnum;
    const char *mode = argc > 1 ? argv[1] : "";

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS)
        fail("PMI2_Init failed");
    if (strcmp(mode, "child") == 0 && argc > 2) {
        child(argc, argv, spawned, size, appnum);
    } else if (spawned) {
        fail("spawned = 1 in a job nobody spawned");
    } else if (rank == 0 && strcmp(mode, "parent") == 0 && argc > 3) {
        parent(argv[0], atoi(argv[2]), atoi(argv[3]));
    } else if (rank == 0 && strcmp(mode, "missing") == 0) {
        char jobid[256];
        int errors[1] = { -1 };
        const char *cmds[1] = { "/nonexistent/pmi2_spawn_missing" };
        int argcs[1] = { 0 }, procs[1] = { 1 };

        if (PMI2_Job_Spawn(1, cmds, argcs, NULL, procs, NULL, NULL, 0, NULL, jobid, sizeof jobid,
                           errors) == PMI2_SUCCESS)
            fail("spawning a program that does not exist succeeded");
#ifdef PMI2_SPAWN_PMIGATE
        if (errors[0] != 2) /* ENOENT: pmigate's libpmi2 reads a failed spawn's errcodes */
            fail("errcode %d for a program that does not exist, expected ENOENT", errors[0]);
#endif
        printf("pmi2_spawn missing: refused\n");
    } else if (rank == 0 && strcmp(mode, "fail") == 0 && argc > 3) {
        char jobid[256];
        int errors[1];

        if (spawn(argv[0], 1, 1, argv[2], argv[3], jobid, errors) != PMI2_SUCCESS)
            fail("PMI2_Job_Spawn failed");
        sleep(30); /* the child's abort ends this job too */
        fail("still running 30 s after the child aborted");
    } else if (rank == 0 && strcmp(mode, "loop") == 0) {
        char jobid[256];
        int errors[1];

        if (spawn(argv[0], 1, 1, "loop", NULL, jobid, errors) != PMI2_SUCCESS)
            fail("the first spawn of the loop failed");
    } else if (rank == 0 && strcmp(mode, "names") == 0) {
        char job_a[256], job_b[256], value[64];
        int errors[1], len;

        if (spawn(argv[0], 1, 1, "publish", "pmi2-spawn-sibling", job_a, errors) != PMI2_SUCCESS ||
            PMI2_Job_Connect(job_a, NULL) != PMI2_SUCCESS ||
            PMI2_KVS_Get(job_a, PMI2_ID_NULL, "published", value, sizeof value, &len) !=
                PMI2_SUCCESS)
            fail("job A did not publish");
        if (spawn(argv[0], 1, 1, "lookup", "pmi2-spawn-sibling", job_b, errors) != PMI2_SUCCESS)
            fail("spawning job B failed");
        printf("pmi2_spawn names: ok\n");
    } else if (strcmp(mode, "alone") == 0 && argc > 3) {
        if (PMI2_KVS_Fence() != PMI2_SUCCESS)
            fail("the first fence failed");
        if (rank == 0)
            alone(argv[0], atoi(argv[2]), atoi(argv[3]));
        PMI2_Finalize(); /* no last fence: the others are gone */
        return 0;
    } else if (rank == 0 && strcmp(mode, "bench") == 0 && argc > 2) {
        char jobid[256];
        int n = atoi(argv[2]), *errors = calloc((size_t)n, sizeof(int));
        long long t0 = now_ns();

        if (errors == NULL || spawn(argv[0], 1, n, "quiet", NULL, jobid, errors) != PMI2_SUCCESS)
            fail("PMI2_Job_Spawn of %d failed", n);
        printf("spawn_ns %d %lld\n", n, now_ns() - t0);
        free(errors);
    }
    if (PMI2_KVS_Fence() != PMI2_SUCCESS)
        fail("final fence failed");
    PMI2_Finalize();
    return 0;
}
