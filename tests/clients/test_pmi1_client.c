/*
 * test_pmi1_client: the PMI-1 client session (libpmi's protocol logic)
 * against a scripted server: the handshakes, what it must accept from real
 * servers (docs/wire-protocol.md, "Client libraries": rc missing, rc=-1 or 1 for not found,
 * extra barrier_out, keyval_cache lines, the four-line initack, Slurm's
 * info=fail without rc), the key cache (own puts and pushed pairs answered
 * without a round trip), what it refuses to send, and singleton mode.  And
 * the PMI_* entry points around it: an abort while another thread waits,
 * an init after finalize.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmi1/client/pg_pmi1_cl.h"
#include "pmi1/pmi.h"
#include "tests/clients/fake_server.h"
#include "tests/pg_cunit.h"

enum { MSG = 2048 };

/* The usual hydra 4.0 answers to init, get_maxes and get_my_kvsname;
 * init must carry the keyval_cache opt-in and the segment reader's
 * attribute exactly as asked. */
static void serve_handshake_as(pg_fake_server_t *s, bool want_opt_in, bool want_shm)
{
    char m[MSG], v[16];

    pg_fake_expect(s, "init", m, sizeof(m));
    if ((pg_fake_value(m, "pmigate_keyval_cache", v, sizeof(v)) == 0) != want_opt_in)
        pg_fake_fail(s, "keyval_cache opt-in sent wrongly");
    if ((pg_fake_value(m, "pmigate_shm", v, sizeof(v)) == 0 && strcmp(v, "yes") == 0) != want_shm)
        pg_fake_fail(s, "segment reader attribute sent wrongly");
    pg_fake_send_raw(s, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    pg_fake_expect(s, "get_maxes", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    pg_fake_expect(s, "get_my_kvsname", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=my_kvsname kvsname=kvs_1_0\n");
}

static void serve_handshake(pg_fake_server_t *s, bool want_opt_in)
{
    serve_handshake_as(s, want_opt_in, false);
}

static void serve_finalize(pg_fake_server_t *s)
{
    char m[MSG];

    pg_fake_expect(s, "finalize", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=finalize_ack\n");
}

/* Runs script against a fresh session through its handshake. */
static pg_pmi1_cl_t *start_as(pg_fake_script_fn script, pg_fake_server_t **srv, bool ext,
                              bool shm)
{
    int fd;
    pg_pmi1_cl_t *cl;

    *srv = pg_fake_server_start(script, NULL, &fd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*srv);
    cl = pg_pmi1_cl_new(fd, ext, shm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cl);
    CU_ASSERT_EQUAL(pg_pmi1_cl_init(cl), PMI_SUCCESS);
    return cl;
}

static pg_pmi1_cl_t *start(pg_fake_script_fn script, pg_fake_server_t **srv, bool ext)
{
    return start_as(script, srv, ext, false);
}

static void finish(pg_pmi1_cl_t *cl, pg_fake_server_t *srv)
{
    CU_ASSERT_EQUAL(pg_pmi1_cl_finalize(cl), PMI_SUCCESS);
    pg_pmi1_cl_free(cl);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- replies every server sends ------------------------------------------------ */

static void script_gets(pg_fake_server_t *s, void *arg)
{
    char m[MSG], key[80];

    (void)arg;
    serve_handshake(s, false);
    for (int i = 0; i < 4; i++) {
        pg_fake_expect(s, "get", m, sizeof(m));
        pg_fake_value(m, "key", key, sizeof(key));
        if (strcmp(key, "hydra40") == 0)
            pg_fake_send_raw(s, "cmd=get_result rc=0 msg=success value=x=y\n");
        else if (strcmp(key, "missing40") == 0)
            pg_fake_send_raw(s, "cmd=get_result rc=-1 msg=key_missing40_not_found value=unknown\n");
        else if (strcmp(key, "missingS") == 0)
            pg_fake_send_raw(s, "cmd=get_result rc=1\n");
        else /* keys in another order, no rc, a trailing space */
            pg_fake_send_raw(s, "cmd=get_result value=abc found=TRUE \n");
    }
    serve_finalize(s);
}

static void test_get_accepts_every_server_dialect(void)
{
    pg_fake_server_t *srv;
    pg_pmi1_cl_t *cl = start(script_gets, &srv, false);
    char v[64];

    CU_ASSERT_STRING_EQUAL(pg_pmi1_cl_kvsname(cl), "kvs_1_0");
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, NULL, "hydra40", v, sizeof(v)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v, "x=y");
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, NULL, "missing40", v, sizeof(v)), PMI_FAIL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, NULL, "missingS", v, sizeof(v)), PMI_FAIL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, "kvs_1_0", "other", v, sizeof(v)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v, "abc");
    finish(cl, srv);
}

static void script_shm_reader(pg_fake_server_t *s, void *arg)
{
    (void)arg;
    serve_handshake_as(s, false, true);
    serve_finalize(s);
}

/* A process that reads the key segment says so in init: the gateway writes
 * a segment only for jobs with such a process (docs/shm-segment.md). */
static void test_segment_reader_says_so_in_init(void)
{
    pg_fake_server_t *srv;
    pg_pmi1_cl_t *cl = start_as(script_shm_reader, &srv, false, true);

    finish(cl, srv);
}

static void script_barrier_push(pg_fake_server_t *s, void *arg)
{
    char m[MSG];

    (void)arg;
    serve_handshake(s, true);
    pg_fake_expect(s, "barrier_in", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=keyval_cache k0=v0 k1=v1 \ncmd=keyval_cache k2=v2\ncmd=barrier_out\n");
    /* an extra barrier_out (PMI 1.2 tags) before the next answer */
    pg_fake_expect(s, "get_universe_size", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=barrier_out tag=0\ncmd=universe_size size=-1\n");
    serve_finalize(s); /* no get may reach the server */
}

static void test_barrier_push_fills_the_cache(void)
{
    pg_fake_server_t *srv;
    pg_pmi1_cl_t *cl = start(script_barrier_push, &srv, true);
    char v[16];
    int usize = 0;

    CU_ASSERT_EQUAL(pg_pmi1_cl_barrier(cl), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(pg_pmi1_cl_cached(cl, "k1"), "v1");
    CU_ASSERT_EQUAL(pg_pmi1_cl_universe_size(cl, &usize), PMI_SUCCESS);
    CU_ASSERT_EQUAL(usize, -1);
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, NULL, "k2", v, sizeof(v)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v, "v2");
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, NULL, "k0", v, 2), PMI_ERR_INVALID_LENGTH);
    finish(cl, srv);
}

static void script_own_put(pg_fake_server_t *s, void *arg)
{
    char m[MSG], v[64];

    (void)arg;
    serve_handshake(s, false);
    pg_fake_expect(s, "put", m, sizeof(m));
    if (pg_fake_value(m, "value", v, sizeof(v)) != 0 || strcmp(v, "mine") != 0)
        pg_fake_fail(s, "put value");
    pg_fake_send_raw(s, "cmd=put_result rc=0 msg=success\n");
    pg_fake_expect(s, "put", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=put_result rc=1 msg=refused\n");
    serve_finalize(s);
}

static void test_own_put_reads_back_without_round_trip(void)
{
    pg_fake_server_t *srv;
    pg_pmi1_cl_t *cl = start(script_own_put, &srv, false);
    char v[16];

    CU_ASSERT_EQUAL(pg_pmi1_cl_put(cl, "kvs_1_0", "own", "mine"), PMI_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, "kvs_1_0", "own", v, sizeof(v)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v, "mine");
    /* a refused put is reported and not cached */
    CU_ASSERT_EQUAL(pg_pmi1_cl_put(cl, NULL, "bad", "x"), PMI_FAIL);
    CU_ASSERT_PTR_NULL(pg_pmi1_cl_cached(cl, "bad"));
    /* what PMI-1 cannot carry is refused before it is sent */
    CU_ASSERT_EQUAL(pg_pmi1_cl_put(cl, NULL, "k", "a b"), PMI_ERR_INVALID_VAL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_put(cl, NULL, "a-key-longer-than-sixty-four-bytes-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                                   "v"), PMI_ERR_INVALID_KEY_LENGTH);
    finish(cl, srv);
}

static void script_initack(pg_fake_server_t *s, void *arg)
{
    char m[MSG], id[16];

    (void)arg;
    pg_fake_expect(s, "initack", m, sizeof(m));
    if (pg_fake_value(m, "pmiid", id, sizeof(id)) != 0 || strcmp(id, "3") != 0)
        pg_fake_fail(s, "pmiid");
    pg_fake_send_raw(s, "cmd=initack\ncmd=set size=4\ncmd=set rank=3\ncmd=set debug=0\n");
    serve_handshake(s, false);
    serve_finalize(s);
}

static void test_initack_four_lines(void)
{
    int fd, size = 0, rank = -1;
    pg_fake_server_t *srv = pg_fake_server_start(script_initack, NULL, &fd);
    pg_pmi1_cl_t *cl = pg_pmi1_cl_new(fd, false, false);

    CU_ASSERT_EQUAL(pg_pmi1_cl_initack(cl, 3, &size, &rank), PMI_SUCCESS);
    CU_ASSERT_EQUAL(size, 4);
    CU_ASSERT_EQUAL(rank, 3);
    CU_ASSERT_EQUAL(pg_pmi1_cl_init(cl), PMI_SUCCESS);
    finish(cl, srv);
}

static void script_names(pg_fake_server_t *s, void *arg)
{
    char m[MSG];

    (void)arg;
    serve_handshake(s, false);
    pg_fake_expect(s, "publish_name", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=publish_result info=ok rc=0 msg=success\n");
    pg_fake_expect(s, "publish_name", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=publish_result info=fail\n"); /* Slurm: no rc */
    pg_fake_expect(s, "lookup_name", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=lookup_result port=tag#0$port#1$ info=ok rc=0 msg=success\n");
    pg_fake_expect(s, "lookup_name", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=lookup_result rc=1 msg=service_not_found\n");
    pg_fake_expect(s, "unpublish_name", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=unpublish_result info=ok rc=0 msg=success\n");
    serve_finalize(s);
}

static void test_name_service_results(void)
{
    pg_fake_server_t *srv;
    pg_pmi1_cl_t *cl = start(script_names, &srv, false);
    char port[64];

    CU_ASSERT_EQUAL(pg_pmi1_cl_publish(cl, "svc", "tag#0$port#1$"), PMI_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmi1_cl_publish(cl, "svc", "again"), PMI_FAIL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_lookup(cl, "svc", port, sizeof(port)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(port, "tag#0$port#1$");
    CU_ASSERT_EQUAL(pg_pmi1_cl_lookup(cl, "nope", port, sizeof(port)), PMI_FAIL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_unpublish(cl, "svc"), PMI_SUCCESS);
    finish(cl, srv);
}

static void script_spawn(pg_fake_server_t *s, void *arg)
{
    char m[MSG], v[32];

    (void)arg;
    serve_handshake(s, false);
    for (int block = 1; block <= 2; block++) {
        pg_fake_expect(s, "spawn", m, sizeof(m));
        snprintf(v, sizeof(v), "spawnssofar=%d", block);
        if (strstr(m, v) == NULL || strstr(m, "totspawns=2") == NULL)
            pg_fake_fail(s, "spawn block numbering");
    }
    pg_fake_send_raw(s, "cmd=spawn_result rc=0 errcodes=0,5,0\n");
    pg_fake_expect(s, "spawn", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=spawn_result rc=-1 msg=spawn_is_not_supported_yet\n");
    serve_finalize(s);
}

static void test_spawn_blocks_and_refusal(void)
{
    pg_fake_server_t *srv;
    pg_pmi1_cl_t *cl = start(script_spawn, &srv, false);
    const char *args[] = { "a b", "c" };
    pg_spawn_cmd_t cmds[2] = { { "prog", 2, 2, args, 0, NULL }, { "other", 1, 0, NULL, 0, NULL } };
    int errors[3] = { -1, -1, -1 };

    CU_ASSERT_EQUAL(pg_pmi1_cl_spawn(cl, 2, cmds, 0, NULL, errors, 3), PMI_SUCCESS);
    CU_ASSERT_EQUAL(errors[0], 0);
    CU_ASSERT_EQUAL(errors[1], 5);
    CU_ASSERT_EQUAL(pg_pmi1_cl_spawn(cl, 1, cmds, 0, NULL, errors, 3), PMI_FAIL);
    finish(cl, srv);
}

static void script_dies(pg_fake_server_t *s, void *arg)
{
    char m[MSG];

    (void)arg;
    serve_handshake(s, false);
    pg_fake_expect(s, "barrier_in", m, sizeof(m));
    pg_fake_send_raw(s, "cmd=barr"); /* half a line, then EOF */
    pg_fake_close(s);
}

static void test_server_eof_fails_the_call(void)
{
    pg_fake_server_t *srv;
    pg_pmi1_cl_t *cl = start(script_dies, &srv, false);

    CU_ASSERT_EQUAL(pg_pmi1_cl_barrier(cl), PMI_FAIL);
    pg_pmi1_cl_free(cl);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- singleton ---------------------------------------------------------------- */

static void test_singleton_serves_locally(void)
{
    pg_pmi1_cl_t *cl = pg_pmi1_cl_new(-1, false, false);
    char v[32], name[64];
    int n;

    CU_ASSERT_EQUAL(pg_pmi1_cl_init(cl), PMI_SUCCESS);
    snprintf(name, sizeof(name), "singinit_kvs_%d_0", (int)getpid());
    CU_ASSERT_STRING_EQUAL(pg_pmi1_cl_kvsname(cl), name);
    CU_ASSERT_EQUAL(pg_pmi1_cl_put(cl, NULL, "a", "1"), PMI_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmi1_cl_put(cl, NULL, "b", "2"), PMI_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmi1_cl_barrier(cl), PMI_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, NULL, "b", v, sizeof(v)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v, "2");
    CU_ASSERT_EQUAL(pg_pmi1_cl_get(cl, NULL, "zz", v, sizeof(v)), PMI_FAIL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_universe_size(cl, &n), PMI_SUCCESS);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(pg_pmi1_cl_appnum(cl, &n), PMI_SUCCESS);
    CU_ASSERT_EQUAL(n, -1);
    CU_ASSERT_EQUAL(pg_pmi1_cl_publish(cl, "s", "p"), PMI_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmi1_cl_publish(cl, "s", "p"), PMI_FAIL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_lookup(cl, "s", v, sizeof(v)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v, "p");
    CU_ASSERT_EQUAL(pg_pmi1_cl_unpublish(cl, "s"), PMI_SUCCESS);
    CU_ASSERT_EQUAL(pg_pmi1_cl_lookup(cl, "s", v, sizeof(v)), PMI_FAIL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_spawn(cl, 0, NULL, 0, NULL, NULL, 0), PMI_FAIL);
    CU_ASSERT_EQUAL(pg_pmi1_cl_finalize(cl), PMI_SUCCESS);
    pg_pmi1_cl_free(cl);
}

static void test_value_length_max_fits_the_line(void)
{
    pg_pmi1_cl_t *cl = pg_pmi1_cl_new(-1, false, false);
    int kvs, key, val;

    CU_ASSERT_EQUAL(pg_pmi1_cl_init(cl), PMI_SUCCESS);
    pg_pmi1_cl_maxes(cl, &kvs, &key, &val);
    CU_ASSERT_EQUAL(kvs, 256);
    CU_ASSERT_EQUAL(key, 64);
    CU_ASSERT(29 + (int)strlen(pg_pmi1_cl_kvsname(cl)) + key + val <= 1024);
    pg_pmi1_cl_free(cl);
}

/* ---- the PMI_* API (pg_pmi1_api.c, its state global) on PMI_FD ----------------- */

static void set_pmi_fd(int fd)
{
    char num[16];

    snprintf(num, sizeof(num), "%d", fd);
    setenv("PMI_FD", num, 1);
    unsetenv("PMI_PORT");
    unsetenv("PMIGATE_PMI_EXT");
}

/* Holds the barrier, and says so on the pipe whose write end is *arg; the
 * abort must arrive while it is held. */
static void script_abort_during_barrier(pg_fake_server_t *s, void *arg)
{
    char m[MSG], code[16];

    serve_handshake(s, false);
    if (pg_fake_expect(s, "barrier_in", m, sizeof(m)) < 0)
        return;
    if (write(*(int *)arg, "b", 1) != 1)
        pg_fake_fail(s, "cannot tell the child its barrier is held");
    if (!pg_fake_readable(s, 2000))
        pg_fake_fail(s, "no abort while another thread's barrier waited");
    if (pg_fake_expect(s, "abort", m, sizeof(m)) >= 0 &&
        (pg_fake_value(m, "exitcode", code, sizeof(code)) != 0 || strcmp(code, "7") != 0))
        pg_fake_fail(s, "abort without exitcode=7");
}

static void *barrier_main(void *arg)
{
    (void)arg;
    (void)PMI_Barrier();
    return NULL;
}

/* The child: a barrier that never ends in one thread, PMI_Abort in another
 * once the server holds the barrier (a byte on `held`). */
static void abort_during_barrier_child(int fd, int held)
{
    pthread_t th;
    int spawned;
    char b;

    set_pmi_fd(fd);
    if (PMI_Init(&spawned) != PMI_SUCCESS || pthread_create(&th, NULL, barrier_main, NULL) != 0)
        _exit(1);
    if (read(held, &b, 1) != 1) /* the barrier is in flight */
        _exit(1);
    PMI_Abort(7, "stop");
    _exit(1);
}

/* Waits up to 5 s for pid; kills it when it is still running.  Its status. */
static int wait_or_kill(pid_t pid)
{
    int status = -1;

    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        usleep(10 * 1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return status;
}

/* PMI_Abort from one thread while another waits in PMI_Barrier (a stuck job,
 * which is when programs abort) must send the abort and exit, not wait for
 * the barrier's lock forever. */
static void test_api_abort_while_barrier_waits(void)
{
    int fd, status, held[2];
    pg_fake_server_t *srv;
    pid_t pid;

    CU_ASSERT_EQUAL_FATAL(pipe(held), 0);
    srv = pg_fake_server_new(script_abort_during_barrier, &held[1], &fd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
    pid = pg_fake_server_fork(srv); /* before the server's thread exists */
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        abort_during_barrier_child(fd, held[0]);
    close(fd); /* the child's end: its exit is the server's EOF */
    CU_ASSERT_EQUAL_FATAL(pg_fake_server_go(srv), 0);
    status = wait_or_kill(pid);
    /* it exited rather than being killed after 5 s; the server checked that
     * exitcode=7 was sent (valgrind may replace the status itself, as it
     * reports the barrier thread still running at the exit) */
    CU_ASSERT_TRUE(WIFEXITED(status));
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
    close(held[0]);
    close(held[1]);
}

static void script_handshake_finalize(pg_fake_server_t *s, void *arg)
{
    (void)arg;
    serve_handshake(s, false);
    serve_finalize(s);
}

/* PMI_Get_id, PMI_Get_kvs_domain_id and PMI_Get_id_length_max, which
 * Slurm's, Flux's and OpenPMIx's libpmi export (a program calling them
 * must link): both ids are the key-value space's name, the longest id is
 * the longest name, and they fail as PMI_KVS_Get_my_name does.  Run as a
 * singleton (no PMI_FD: a process takes its PMI_FD once only, and the
 * re-init test has). */
static void test_api_old_id_calls_give_the_kvs_name(void)
{
    char id[300], name[300], small[4], want[64];
    int spawned, max = 0, namemax = 0;

    unsetenv("PMI_FD");
    unsetenv("PMI_PORT");
    CU_ASSERT_EQUAL(PMI_Get_id(id, sizeof(id)), PMI_ERR_INIT);
    CU_ASSERT_EQUAL_FATAL(PMI_Init(&spawned), PMI_SUCCESS);
    CU_ASSERT_EQUAL(PMI_KVS_Get_my_name(name, sizeof(name)), PMI_SUCCESS);
    snprintf(want, sizeof(want), "singinit_kvs_%d_0", (int)getpid());
    CU_ASSERT_STRING_EQUAL(name, want);
    CU_ASSERT_EQUAL(PMI_Get_id(id, sizeof(id)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(id, name);
    memset(id, 0, sizeof(id));
    CU_ASSERT_EQUAL(PMI_Get_kvs_domain_id(id, sizeof(id)), PMI_SUCCESS);
    CU_ASSERT_STRING_EQUAL(id, name);
    CU_ASSERT_EQUAL(PMI_Get_id_length_max(&max), PMI_SUCCESS);
    CU_ASSERT_EQUAL(PMI_KVS_Get_name_length_max(&namemax), PMI_SUCCESS);
    CU_ASSERT_EQUAL(max, 256);
    CU_ASSERT_EQUAL(max, namemax);
    CU_ASSERT_EQUAL(PMI_Get_id(small, sizeof(small)), PMI_ERR_INVALID_LENGTH);
    CU_ASSERT_EQUAL(PMI_Get_kvs_domain_id(NULL, 64), PMI_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(PMI_Get_id_length_max(NULL), PMI_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(PMI_Finalize(), PMI_SUCCESS);
}

/* PMI_Finalize closed the PMI_FD socket, but the environment still names
 * its number, which the program's next file may get.  A second PMI_Init
 * must refuse rather than take that file for the server. */
static void test_api_reinit_does_not_reuse_closed_pmi_fd(void)
{
    char path[] = "/tmp/pg_pmi1_reinitXXXXXX";
    int fd, file, spawned;
    pg_fake_server_t *srv = pg_fake_server_start(script_handshake_finalize, NULL, &fd);

    CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
    set_pmi_fd(fd);
    CU_ASSERT_EQUAL(PMI_Init(&spawned), PMI_SUCCESS);
    CU_ASSERT_EQUAL(PMI_Finalize(), PMI_SUCCESS);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
    file = mkstemp(path);
    CU_ASSERT_FATAL(file >= 0);
    unlink(path);
    if (file != fd) { /* give the file the old PMI_FD number */
        CU_ASSERT_EQUAL_FATAL(dup2(file, fd), fd);
        close(file);
        file = fd;
    }
    CU_ASSERT_EQUAL(PMI_Init(&spawned), PMI_FAIL);
    CU_ASSERT_EQUAL(lseek(file, 0, SEEK_END), 0); /* nothing written */
    CU_ASSERT_TRUE(fcntl(file, F_GETFD) >= 0);     /* and still open */
    close(file);
    unsetenv("PMI_FD");
}

static const pg_cunit_test_t wire_tests[] = {
    { "get accepts every server dialect", test_get_accepts_every_server_dialect },
    { "a segment reader says so in init", test_segment_reader_says_so_in_init },
    { "barrier push fills the cache", test_barrier_push_fills_the_cache },
    { "own put reads back without round trip", test_own_put_reads_back_without_round_trip },
    { "initack four lines", test_initack_four_lines },
    { "name service results", test_name_service_results },
    { "spawn blocks and refusal", test_spawn_blocks_and_refusal },
    { "server EOF fails the call", test_server_eof_fails_the_call },
    { NULL, NULL },
};
static const pg_cunit_test_t local_tests[] = {
    { "singleton serves locally", test_singleton_serves_locally },
    { "value length max fits the line", test_value_length_max_fits_the_line },
    { NULL, NULL },
};
static const pg_cunit_test_t api_tests[] = {
    { "abort while another thread's barrier waits", test_api_abort_while_barrier_waits },
    { "re-init does not reuse the closed PMI_FD", test_api_reinit_does_not_reuse_closed_pmi_fd },
    { "PMI_Get_id, _kvs_domain_id, _id_length_max: the kvs name", test_api_old_id_calls_give_the_kvs_name },
    { NULL, NULL },
};
static const pg_cunit_suite_t suites[] = {
    { "pmi1 client wire", wire_tests, NULL, NULL },
    { "pmi1 client local", local_tests, NULL, NULL },
    { "pmi1 API", api_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
