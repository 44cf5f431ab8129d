/*
 * test_pmi2_api: the PMI2_* entry points in-process — against a scripted
 * server on PMI_FD (what fullinit carries, the replies of hydra 4.0, newer
 * hydra and Slurm it must accept: pmi-version missing, pmiverbose as an
 * integer, rc missing or first, the lookup port in port= or value=; ";;"
 * escaping both ways; the fence made a barrier with
 * MPICH's get of a key nobody puts) and as a singleton (no PMI environment).
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmi2/pmi2.h"
#include "tests/clients/fake_server.h"
#include "tests/pg_cunit.h"

enum { MSG = 4096 };

/* The PMI_FD number the scripted-server test handed to PMI2_Init. */
static int served_fd = -1;

static void expect_value(pg_fake_server_t *s, const char *m, const char *key, const char *want)
{
    char got[256], what[400];

    if (pg_fake_value(m, key, got, sizeof(got)) != 0 || strcmp(got, want) != 0) {
        snprintf(what, sizeof(what), "%s: %s= is not '%s' in '%.200s'", __func__, key, want, m);
        pg_fake_fail(s, what);
    }
}

/* Takes the request cmd and answers it with the PMI-2 body reply. */
static void exchange(pg_fake_server_t *s, const char *cmd, const char *reply)
{
    char m[MSG];

    pg_fake_expect(s, cmd, m, sizeof(m));
    pg_fake_send_pmi2(s, reply);
}

static void script_server(pg_fake_server_t *s, void *arg)
{
    char m[MSG];

    (void)arg;
    pg_fake_expect(s, "init", m, sizeof(m));
    expect_value(s, m, "pmi_version", "2");
    pg_fake_send_raw(s, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
    pg_fake_expect(s, "fullinit", m, sizeof(m));
    expect_value(s, m, "pmijobid", "0");
    expect_value(s, m, "pmirank", "1");
    expect_value(s, m, "threaded", "FALSE");
    /* newer hydra: no pmi-version, integer pmiverbose, rc right after cmd */
    pg_fake_send_pmi2(s, "cmd=fullinit-response;rc=0;rank=1;size=2;appnum=0;pmiverbose=0;");
    exchange(s, "job-getid", "cmd=job-getid-response;jobid=kvs_42_0;rc=0;");
    exchange(s, "job-getid", "cmd=job-getid-response;jobid=kvs_42_0;rc=0;");
    pg_fake_expect(s, "kvs-put", m, sizeof(m));
    if (strstr(m, "value=a;;b c;") == NULL)
        pg_fake_fail(s, "';' not escaped as ';;' in kvs-put");
    pg_fake_send_pmi2_left(s, "cmd=kvs-put-response;rc=0;");
    exchange(s, "kvs-fence", "cmd=kvs-fence-response;rc=0;");
    pg_fake_expect(s, "kvs-get", m, sizeof(m));
    expect_value(s, m, "key", "-NONEXIST-KEY");
    pg_fake_send_pmi2(s, "cmd=kvs-get-response;found=FALSE;rc=0;");
    pg_fake_expect(s, "kvs-get", m, sizeof(m));
    expect_value(s, m, "jobid", "kvs_42_0");
    pg_fake_send_pmi2(s, "cmd=kvs-get-response;found=TRUE;value=x;;y;rc=0;");
    exchange(s, "kvs-get", "cmd=kvs-get-response;found=FALSE;rc=0;");
    exchange(s, "name-lookup", "cmd=name-lookup-response;port=p1;found=TRUE;rc=0;"); /* hydra */
    exchange(s, "name-lookup", "cmd=name-lookup-response;rc=0;value=p2;"); /* Slurm */
    exchange(s, "name-lookup", "cmd=name-lookup-response;found=FALSE;rc=1;");
    exchange(s, "name-publish", "cmd=name-publish-response;rc=1;errmsg=duplicate_service_s;");
    exchange(s, "info-getjobattr", "cmd=info-getjobattr-response;found=TRUE;value=4,5,6;rc=0;");
    pg_fake_expect(s, "info-getnodeattr", m, sizeof(m));
    expect_value(s, m, "wait", "FALSE");
    pg_fake_send_pmi2(s, "cmd=info-getnodeattr-response;found=FALSE;rc=0;");
    /* found, but no value: a broken reply, not an empty value */
    exchange(s, "kvs-get", "cmd=kvs-get-response;found=TRUE;rc=0;");
    exchange(s, "info-getjobattr", "cmd=info-getjobattr-response;found=TRUE;rc=0;");
    exchange(s, "ring", "cmd=ring-response;rc=0;ring-count=1;ring-right=r;");
    exchange(s, "finalize", "cmd=finalize-response;rc=0;");
}

static void test_api_against_scripted_server(void)
{
    int fd, spawned = -1, size = 0, rank = -1, appnum = -1, found = -1, arr[4], n = 0, len = 0;
    pg_fake_server_t *srv = pg_fake_server_start(script_server, NULL, &fd);
    char buf[64], id[64];

    CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
    served_fd = fd;
    snprintf(buf, sizeof(buf), "%d", fd);
    setenv("PMI_FD", buf, 1);
    setenv("PMI_RANK", "1", 1);
    unsetenv("PMI_JOBID");
    unsetenv("PMIGATE_PMI_EXT");
    CU_ASSERT_EQUAL(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    CU_ASSERT_TRUE(PMI2_Initialized());
    CU_ASSERT_EQUAL(spawned, 0);
    CU_ASSERT_EQUAL(size, 2);
    CU_ASSERT_EQUAL(rank, 1);
    CU_ASSERT_EQUAL(appnum, 0);
    CU_ASSERT_EQUAL(PMI2_Job_GetId(id, sizeof(id)), PMI2_SUCCESS);
    CU_ASSERT_STRING_EQUAL(id, "kvs_42_0");
    CU_ASSERT_EQUAL(PMI2_Job_GetId(id, 4), PMI2_ERR_INVALID_LENGTH);
    CU_ASSERT_EQUAL(PMI2_KVS_Put("k", "a;b c"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_KVS_Fence(), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_KVS_Get("kvs_42_0", 0, "k", buf, sizeof(buf), &len), PMI2_SUCCESS);
    CU_ASSERT_STRING_EQUAL(buf, "x;y");
    CU_ASSERT_EQUAL(len, 3);
    CU_ASSERT_NOT_EQUAL(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "nope", buf, sizeof(buf), &len),
                        PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_Nameserv_lookup("s", NULL, buf, sizeof(buf)), PMI2_SUCCESS);
    CU_ASSERT_STRING_EQUAL(buf, "p1");
    CU_ASSERT_EQUAL(PMI2_Nameserv_lookup("s", NULL, buf, sizeof(buf)), PMI2_SUCCESS);
    CU_ASSERT_STRING_EQUAL(buf, "p2");
    CU_ASSERT_NOT_EQUAL(PMI2_Nameserv_lookup("s", NULL, buf, sizeof(buf)), PMI2_SUCCESS);
    CU_ASSERT_NOT_EQUAL(PMI2_Nameserv_publish("s", NULL, "p"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_Info_GetJobAttrIntArray("arr", arr, 4, &n, &found), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(found, 1);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(arr[2], 6);
    CU_ASSERT_EQUAL(PMI2_Info_GetNodeAttrIntArray("none", arr, 4, &n, &found), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(found, 0);
    CU_ASSERT_EQUAL(PMI2_KVS_Put("k", NULL), PMI2_ERR_INVALID_VAL); /* refused locally */
    len = 99;
    CU_ASSERT_EQUAL(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "k", buf, sizeof(buf), &len), PMI2_FAIL);
    CU_ASSERT_EQUAL(len, 99);
    CU_ASSERT_EQUAL(PMI2_Info_GetJobAttr("a", buf, sizeof(buf), &found), PMI2_FAIL);
    CU_ASSERT_EQUAL(found, 0);
    CU_ASSERT_EQUAL(PMIX_Ring("me", &n, &size, id, buf, sizeof(buf)), PMI2_FAIL);
    CU_ASSERT_EQUAL(PMI2_Finalize(), PMI2_SUCCESS);
    CU_ASSERT_FALSE(PMI2_Initialized());
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
    unsetenv("PMI_FD");
    unsetenv("PMI_RANK");
}

/* Finalize closed the PMI_FD socket, but the environment still names its
 * number, which the program's next open file may get.  A second PMI2_Init
 * must refuse instead of taking that file for the server (writing the init
 * line into it, then closing it). */
static void test_reinit_does_not_reuse_closed_pmi_fd(void)
{
    char path[] = "/tmp/pg_pmi2_reinitXXXXXX", num[16];
    int file = mkstemp(path), size = 0;

    CU_ASSERT_FATAL(file >= 0 && served_fd >= 0);
    unlink(path);
    if (file != served_fd) { /* give the file the old PMI_FD number */
        CU_ASSERT_EQUAL_FATAL(dup2(file, served_fd), served_fd);
        close(file);
        file = served_fd;
    }
    snprintf(num, sizeof(num), "%d", served_fd);
    setenv("PMI_FD", num, 1);
    CU_ASSERT_EQUAL(PMI2_Init(NULL, &size, NULL, NULL), PMI2_ERR_INIT);
    CU_ASSERT_FALSE(PMI2_Initialized());
    CU_ASSERT_EQUAL(lseek(file, 0, SEEK_END), 0); /* nothing written */
    CU_ASSERT_TRUE(fcntl(file, F_GETFD) >= 0);     /* and still open */
    close(file);
    unsetenv("PMI_FD");
}

static void test_singleton_without_pmi_environment(void)
{
    int spawned = -1, size = 0, rank = -1, appnum = 0, found = -1, len = 0, r, rs;
    char v[64], left[8], right[8], small[2];

    unsetenv("PMI_FD");
    unsetenv("PMI_PORT");
    CU_ASSERT_EQUAL(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(size, 1);
    CU_ASSERT_EQUAL(rank, 0);
    CU_ASSERT_EQUAL(appnum, -1);
    CU_ASSERT_EQUAL(PMI2_KVS_Put("a", "1"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_KVS_Put("b", "2"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_KVS_Fence(), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "b", v, sizeof(v), &len), PMI2_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v, "2");
    CU_ASSERT_NOT_EQUAL(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "zz", v, sizeof(v), &len), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "-NONEXIST-KEY", v, sizeof(v), &len),
                    PMI2_SUCCESS); /* MPICH's barrier idiom */
    /* too small a buffer: as from a server, the prefix and -(length) */
    CU_ASSERT_EQUAL(PMI2_KVS_Put("long", "12345"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "long", small, sizeof(small), &len),
                    PMI2_SUCCESS);
    CU_ASSERT_STRING_EQUAL(small, "1");
    CU_ASSERT_EQUAL(len, -5);
    memset(small, 'x', sizeof(small)); /* not a string: nothing may read it as one */
    len = 99;
    CU_ASSERT_EQUAL(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "long", small, 0, &len),
                    PMI2_ERR_INVALID_LENGTH);
    CU_ASSERT_EQUAL(len, 99);
    CU_ASSERT_EQUAL(PMI2_Info_GetJobAttr("PMI_process_mapping", v, sizeof(v), &found), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(found, 1);
    CU_ASSERT_EQUAL(PMI2_Info_PutNodeAttr("n", "x"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_Info_GetNodeAttr("n", v, sizeof(v), &found, 1), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(found, 1);
    CU_ASSERT_EQUAL(PMI2_Info_GetNodeAttr("never", v, sizeof(v), &found, 1), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(found, 0); /* alone on the node: a wait could never end */
    CU_ASSERT_EQUAL(PMI2_Info_GetSize(&size), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(size, 1);
    CU_ASSERT_EQUAL(PMI2_Nameserv_publish("s", NULL, "p"), PMI2_SUCCESS);
    CU_ASSERT_NOT_EQUAL(PMI2_Nameserv_publish("s", NULL, "p"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_Nameserv_lookup("s", NULL, v, sizeof(v)), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_Nameserv_unpublish("s", NULL), PMI2_SUCCESS);
    CU_ASSERT_NOT_EQUAL(PMI2_Nameserv_lookup("s", NULL, v, sizeof(v)), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMIX_Ring("me", &r, &rs, left, right, sizeof(left)), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(rs, 1);
    CU_ASSERT_STRING_EQUAL(left, "me");
    CU_ASSERT_EQUAL(PMI2_Job_GetId(v, sizeof(v)), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(strncmp(v, "singinit_kvs_", 13), 0);
    CU_ASSERT_EQUAL(PMI2_Finalize(), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(PMI2_KVS_Put("a", "1"), PMI2_ERR_INIT);
}

/* ---- calls racing PMI2_Finalize ------------------------------------------ */

/* A process has one PMI_FD session, so each race runs in a child process
 * of its own, forked before this process ever initialised; the server
 * script tells the child, through a pipe, when the moment has come. */
typedef struct race {
    int signal_fd;     /* the script writes one byte here */
} race_t;

static void race_handshake(pg_fake_server_t *s)
{
    char m[MSG];

    pg_fake_expect(s, "init", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
    pg_fake_expect(s, "fullinit", m, sizeof(m));
    pg_fake_send_pmi2(s, "cmd=fullinit-response;rc=0;rank=0;size=1;appnum=0;");
}

/* Holds the finalize, says so, and watches whether a call started by then
 * reaches the server (answering it, so the old library does not hang). */
static void script_call_during_finalize(pg_fake_server_t *s, void *arg)
{
    const race_t *race = arg;
    char m[MSG];

    race_handshake(s);
    pg_fake_expect(s, "finalize", m, sizeof(m));
    (void)!write(race->signal_fd, "f", 1);
    if (pg_fake_readable(s, 500) && pg_fake_recv(s, m, sizeof(m)) >= 0) {
        pg_fake_fail(s, "a call that started during PMI2_Finalize reached the server");
        pg_fake_send_pmi2(s, "cmd=kvs-put-response;rc=0;");
    }
    pg_fake_send_pmi2(s, "cmd=finalize-response;rc=0;");
}

/* Holds a fence forever, says so once it has it, then answers the finalize. */
static void script_finalize_during_call(pg_fake_server_t *s, void *arg)
{
    const race_t *race = arg;
    char m[MSG];

    race_handshake(s);
    pg_fake_expect(s, "kvs-fence", m, sizeof(m));
    (void)!write(race->signal_fd, "w", 1);
    pg_fake_expect(s, "finalize", m, sizeof(m));
    pg_fake_send_pmi2(s, "cmd=finalize-response;rc=0;");
}

static bool signalled(int fd)
{
    struct pollfd p = { fd, POLLIN, 0 };
    char c;

    return poll(&p, 1, 5000) == 1 && read(fd, &c, 1) == 1;
}

static void *finalize_main(void *arg)
{
    *(int *)arg = PMI2_Finalize();
    return NULL;
}

static void *fence_main(void *arg)
{
    *(int *)arg = PMI2_KVS_Fence();
    return NULL;
}

static void child_init(int fd)
{
    char num[16];

    snprintf(num, sizeof(num), "%d", fd);
    setenv("PMI_FD", num, 1);
    setenv("PMI_RANK", "0", 1);
    unsetenv("PMIGATE_PMI_EXT");
    if (PMI2_Init(NULL, NULL, NULL, NULL) != PMI2_SUCCESS)
        _exit(10);
}

/* Exit status: 0 when a put made while another thread's finalize waits
 * for its reply was refused with PMI2_ERR_INIT and the finalize succeeded. */
static void child_call_during_finalize(int fd, int signal_fd)
{
    pthread_t t;
    int frc = -1, prc;

    child_init(fd);
    if (pthread_create(&t, NULL, finalize_main, &frc) != 0 || !signalled(signal_fd))
        _exit(11);
    prc = PMI2_KVS_Put("late", "v");
    pthread_join(t, NULL);
    _exit((prc == PMI2_ERR_INIT ? 0 : 1) | (frc == PMI2_SUCCESS ? 0 : 2));
}

/* Exit status: 0 when a fence held by the server fails (PMI2_FAIL) once
 * another thread finalizes, and the finalize succeeds and returns. */
static void child_finalize_during_call(int fd, int signal_fd)
{
    pthread_t t;
    int wrc = -1, frc;

    child_init(fd);
    if (pthread_create(&t, NULL, fence_main, &wrc) != 0 || !signalled(signal_fd))
        _exit(11);
    frc = PMI2_Finalize();
    pthread_join(t, NULL);
    _exit((wrc == PMI2_FAIL ? 0 : 1) | (frc == PMI2_SUCCESS ? 0 : 2));
}

/* Waits up to 10 s for pid (killed after that): its exit status, or -1. */
static int child_status(pid_t pid)
{
    int status = 0;

    for (int i = 0; i < 1000; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        usleep(10 * 1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* The parent's server, in a global so that the child (which inherits the
 * allocation and ends with _exit) still reaches it: no leak reported
 * (volatile: stores to a static nobody reads would be optimised away). */
static pg_fake_server_t *volatile race_srv;

static void run_race(pg_fake_script_fn script, void (*child)(int, int))
{
    int pipefd[2], fd;
    race_t race;
    pg_fake_server_t *srv;
    pid_t pid;

    CU_ASSERT_EQUAL_FATAL(pipe(pipefd), 0);
    race.signal_fd = pipefd[1];
    srv = race_srv = pg_fake_server_new(script, &race, &fd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
    pid = pg_fake_server_fork(srv); /* before the server's thread exists */
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        child(fd, pipefd[0]);
    close(fd); /* the child's end: its exit is the server's EOF */
    CU_ASSERT_EQUAL_FATAL(pg_fake_server_go(srv), 0);
    CU_ASSERT_EQUAL(child_status(pid), 0);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
    race_srv = NULL;
    close(pipefd[0]);
    close(pipefd[1]);
}

/* A call that starts while PMI2_Finalize runs in another thread gets
 * PMI2_ERR_INIT and sends nothing (it used to go out on the socket the
 * finalize was about to free, or use the freed mux). */
static void test_call_during_finalize_is_refused(void)
{
    run_race(script_call_during_finalize, child_call_during_finalize);
}

/* A call waiting for its reply when another thread finalizes fails, and
 * the finalize returns once that call has left (no hang, nothing freed
 * under it). */
static void test_finalize_fails_the_waiting_call(void)
{
    run_race(script_finalize_during_call, child_finalize_during_call);
}

static const pg_cunit_test_t tests[] = {
    /* first: the children must not inherit a process that used PMI_FD */
    { "a call during PMI2_Finalize is refused", test_call_during_finalize_is_refused },
    { "PMI2_Finalize fails a waiting call, then returns", test_finalize_fails_the_waiting_call },
    { "API against a scripted server", test_api_against_scripted_server },
    { "re-init does not reuse the closed PMI_FD", test_reinit_does_not_reuse_closed_pmi_fd },
    { "singleton without PMI environment", test_singleton_without_pmi_environment },
    { NULL, NULL },
};
static const pg_cunit_suite_t suites[] = {
    { "pmi2 API", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
