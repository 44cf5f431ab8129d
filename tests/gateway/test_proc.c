/*
 * Unit tests for what containment rests on: gateway/util/pg_proc.c (whose
 * process a pid is, by its parent chain; every descendant found and
 * signalled, setsid or not, but the one spared), gateway/util/pg_tmpdir.c (a
 * job directory is removed by a later sweep only once its owner is dead)
 * and gateway/util/pg_parent.c (a proxy hears of its host runtime's death).
 * Real processes, forked here.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "gateway/util/pg_parent.h"
#include "gateway/util/pg_proc.h"
#include "gateway/util/pg_tmpdir.h"
#include "tests/pg_cunit.h"

/* What a grandchild of fork_tree_with does before it sleeps; it calls
 * say_ready(ready) once it is set up. */
typedef void (*grandchild_fn)(void *arg, int ready);

/* The grandchild is set up: its pid to the test. */
static void say_ready(int ready)
{
    pid_t me = getpid();

    (void)write(ready, &me, sizeof(me));
}

/* Forks a child that forks a grandchild; the grandchild runs `body` (NULL:
 * says it is ready), then both sleep until killed.  Returns the child's
 * pid and puts the grandchild's in *grandchild, once it is ready (only the
 * grandchild writes to the pipe: two writers could interleave). */
static pid_t fork_tree_with(grandchild_fn body, void *arg, pid_t *grandchild)
{
    int p[2];
    pid_t child;

    if (pipe(p) != 0)
        return -1;
    child = fork();
    if (child == 0) {
        if (fork() == 0) {
            if (body != NULL)
                body(arg, p[1]);
            else
                say_ready(p[1]);
            for (;;)
                pause();
        }
        for (;;)
            pause();
    }
    close(p[1]);
    if (child < 0 || read(p[0], grandchild, sizeof(*grandchild)) != sizeof(*grandchild))
        *grandchild = -1;
    close(p[0]);
    return child;
}

static void become_session_leader(void *arg, int ready)
{
    (void)arg;
    (void)setsid();
    say_ready(ready);
}

/* fork_tree_with; the grandchild calls setsid when asked. */
static pid_t fork_tree(int setsid_grandchild, pid_t *grandchild)
{
    return fork_tree_with(setsid_grandchild ? become_session_leader : NULL, NULL, grandchild);
}

static void kill_tree(pid_t child, pid_t grandchild)
{
    if (grandchild > 0)
        kill(grandchild, SIGKILL);
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
}

static void test_parent_of_a_process(void)
{
    CU_ASSERT_EQUAL(pg_proc_parent(getpid()), getppid());
    CU_ASSERT_EQUAL(pg_proc_parent(0x7ffffff0), -1); /* no such process */
}

static void test_kinship_by_parent_chain(void)
{
    pid_t grandchild, child = fork_tree(0, &grandchild);
    pid_t ranks[3];

    CU_ASSERT_FATAL(child > 0 && grandchild > 0);
    /* the rank's process itself, and its descendant, belong to it */
    ranks[0] = 0;      /* a rank not started yet matches nothing */
    ranks[1] = 999999; /* another rank */
    ranks[2] = child;
    CU_ASSERT_EQUAL(pg_proc_ancestor_among(child, ranks, 3, getpid()), 2);
    CU_ASSERT_EQUAL(pg_proc_ancestor_among(grandchild, ranks, 3, getpid()), 2);
    /* the nearest ancestor counts: the grandchild is its own rank's */
    ranks[1] = grandchild;
    CU_ASSERT_EQUAL(pg_proc_ancestor_among(grandchild, ranks, 3, getpid()), 1);
    /* a process that is not below the rank (here: our own parent, and us)
     * belongs to no rank */
    CU_ASSERT_EQUAL(pg_proc_ancestor_among(getppid(), ranks, 3, getpid()), -1);
    CU_ASSERT_EQUAL(pg_proc_ancestor_among(getpid(), ranks, 3, getpid()), -1);
    /* the walk stops at `stop`: above it nothing is a rank's */
    ranks[0] = getppid();
    CU_ASSERT_EQUAL(pg_proc_ancestor_among(child, ranks, 1, getpid()), -1);
    kill_tree(child, grandchild);
    /* a process that is gone belongs to no one */
    CU_ASSERT_EQUAL(pg_proc_ancestor_among(child, &child, 1, getpid()), -1);
}

/* As pmigate: subreaper; a rank's child that called setsid and whose
 * parent died is still found and killed. */
static void test_orphaned_setsid_descendant_is_signalled(void)
{
    pid_t grandchild, child;
    int reaped = 0;

    CU_ASSERT_EQUAL_FATAL(pg_proc_become_subreaper(), 0);
    child = fork_tree(1, &grandchild);
    CU_ASSERT_FATAL(child > 0 && grandchild > 0);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0); /* the grandchild is now re-parented to us */
    for (int i = 0; i < 100 && pg_proc_parent(grandchild) != getpid(); i++)
        usleep(10000);
    CU_ASSERT_EQUAL(pg_proc_parent(grandchild), getpid());
    CU_ASSERT_EQUAL(pg_proc_signal_descendants(SIGKILL, 0), 1);
    reaped = waitpid(grandchild, NULL, 0) == grandchild;
    CU_ASSERT(reaped);
    if (!reaped)
        kill(grandchild, SIGKILL);
    CU_ASSERT_EQUAL(pg_proc_signal_descendants(SIGKILL, 0), 0); /* nobody left */
}

static char tmp_root[] = "/tmp/pg_test_proc.XXXXXX";

static int count_entries(const char *dir)
{
    char cmd[256];
    FILE *f;
    int n = -1;

    snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
    f = popen(cmd, "r");
    if (f != NULL && fscanf(f, "%d", &n) != 1)
        n = -1;
    if (f != NULL)
        pclose(f);
    return n;
}

/* A file outside every job directory that a rank's symlink points at. */
static char keep[600];

/* A chain of `depth` directories under dir, made through descriptors (the
 * path would pass PATH_MAX), the deepest holding a file and one of mode
 * 000 with a file inside. */
static int fill_deep(const char *dir, int depth)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY), rc = 0;

    for (int i = 0; fd >= 0 && i < depth; i++) {
        int next;

        if (mkdirat(fd, "a-rather-long-name-for-a-directory", 0700) != 0)
            rc = -1;
        next = openat(fd, "a-rather-long-name-for-a-directory", O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = next;
    }
    if (fd < 0 || mkdirat(fd, "locked", 0700) != 0)
        rc = -1;
    if (fd >= 0) {
        close(openat(fd, "file", O_CREAT | O_WRONLY, 0600));
        close(openat(fd, "locked/file", O_CREAT | O_WRONLY, 0600));
        if (fchmodat(fd, "locked", 0, 0) != 0)
            rc = -1;
        close(fd);
    }
    return fd < 0 ? -1 : rc;
}

/* What Open MPI's ranks leave in a job directory (its session tree, with
 * OMPI_MCA_orte_tmpdir_base pointing there) when one is killed: nested
 * directories and files, plus a symlink out that removal must not follow;
 * and what a hostile rank could leave: a tree deeper than PATH_MAX allows
 * to name, a directory of mode 000. */
static int fill_like_open_mpi(const char *dir)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof(path), "%s/ompi.host.0", dir);
    if (mkdir(path, 0700) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/ompi.host.0/jf.4242", dir);
    if (mkdir(path, 0700) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/ompi.host.0/jf.4242/0", dir);
    if (mkdir(path, 0700) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/ompi.host.0/jf.4242/0/vader_segment.1", dir);
    if ((f = fopen(path, "w")) == NULL)
        return -1;
    fclose(f);
    snprintf(path, sizeof(path), "%s/ompi.host.0/jf.4242/out", dir);
    if (symlink(keep, path) != 0)
        return -1;
    return fill_deep(dir, 200);
}

static void test_sweep_removes_only_dead_owners(void)
{
    char live[256], dead[256], other[512], link[512];
    int live_lock = -1, dead_lock, st;
    pid_t owner;
    struct stat sb;
    FILE *kf;

    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp_root));
    setenv("TMPDIR", tmp_root, 1);
    snprintf(keep, sizeof(keep), "%s.keep", tmp_root);
    kf = fopen(keep, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(kf);
    fclose(kf);
    /* a live owner: this process */
    CU_ASSERT_EQUAL_FATAL(pg_tmpdir_new(PG_TMPDIR_PREFIX, live, sizeof(live), &live_lock), 0);
    /* a dead owner: a child that makes its directory and dies */
    owner = fork();
    if (owner == 0)
        _exit(pg_tmpdir_new(PG_TMPDIR_PREFIX "-shm", dead, sizeof(dead), &dead_lock) == 0 &&
                      fill_like_open_mpi(dead) == 0
                  ? 0
                  : 1);
    CU_ASSERT_FATAL(owner > 0 && waitpid(owner, &st, 0) == owner && WIFEXITED(st) &&
                    WEXITSTATUS(st) == 0);
    /* not a job directory of ours: no lock, or a symlink */
    snprintf(other, sizeof(other), "%s/pmigate.nolock", tmp_root);
    CU_ASSERT_EQUAL(mkdir(other, 0700), 0);
    snprintf(link, sizeof(link), "%s/pmigate.link", tmp_root);
    CU_ASSERT_EQUAL(symlink(tmp_root, link), 0);
    CU_ASSERT_EQUAL(count_entries(tmp_root), 4);

    CU_ASSERT_EQUAL(pg_tmpdir_sweep(), 1); /* tree and all; the symlink's target stays */
    CU_ASSERT_EQUAL(count_entries(tmp_root), 3);
    CU_ASSERT_EQUAL(stat(keep, &sb), 0);
    CU_ASSERT_EQUAL(stat(live, &sb), 0); /* the live one stays */
    CU_ASSERT_EQUAL(pg_tmpdir_sweep(), 0);

    CU_ASSERT_EQUAL(fill_like_open_mpi(live), 0);
    pg_tmpdir_remove(live, live_lock);
    CU_ASSERT_NOT_EQUAL(stat(live, &sb), 0);
    CU_ASSERT_EQUAL(stat(keep, &sb), 0);
    CU_ASSERT_EQUAL(unlink(keep), 0);
    unlink(link);
    rmdir(other);
    CU_ASSERT_EQUAL(rmdir(tmp_root), 0);
}

/* pg_parent_watch in a grandchild: "gone <pid>" on the pipe once its
 * parent (the child) dies, or at once when `parent` is not its parent. */
static void on_parent_gone(void *arg, pid_t pid)
{
    char line[32];
    int n = snprintf(line, sizeof(line), "gone %ld\n", (long)pid);

    (void)write(*(int *)arg, line, (size_t)n);
    _exit(0);
}

/* A grandchild's body: watches its parent (or one that is not it), then
 * runs its loop until on_parent_gone ends it. */
typedef struct watch_arg {
    int out;
    int wrong_parent;
} watch_arg_t;

static void watch_parent(void *arg, int ready)
{
    watch_arg_t *w = arg;
    struct event_base *base = event_base_new();
    pid_t parent = w->wrong_parent ? getppid() + 100000 : getppid();

    if (base == NULL || pg_parent_watch(base, parent, on_parent_gone, &w->out) == NULL)
        _exit(1);
    say_ready(ready);
    event_base_dispatch(base);
    _exit(2);
}

static pid_t watching_grandchild(int out, int wrong_parent, pid_t *grandchild)
{
    watch_arg_t w = { out, wrong_parent };

    return fork_tree_with(watch_parent, &w, grandchild);
}

/* The line the watcher writes, within 5 s. */
static int read_line(int fd, char *buf, size_t len)
{
    struct timespec pause = { 0, 10 * 1000 * 1000 };
    size_t got = 0;

    fcntl(fd, F_SETFL, O_NONBLOCK);
    for (int i = 0; i < 500 && got < len - 1; i++) {
        ssize_t n = read(fd, buf + got, len - 1 - got);

        if (n > 0) {
            got += (size_t)n;
            if (buf[got - 1] == '\n')
                break;
            continue;
        }
        nanosleep(&pause, NULL);
    }
    buf[got] = '\0';
    return (int)got;
}

static void test_parent_death_is_heard(void)
{
    int p[2];
    pid_t grandchild, child;
    char line[64], want[64];

    CU_ASSERT_FATAL(pipe(p) == 0);
    child = watching_grandchild(p[1], 0, &grandchild);
    CU_ASSERT_FATAL(child > 0 && grandchild > 0);
    /* the parent lives: nothing is said */
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    CU_ASSERT_EQUAL(read(p[0], line, sizeof(line)), -1);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    snprintf(want, sizeof(want), "gone %ld\n", (long)child);
    CU_ASSERT_TRUE(read_line(p[0], line, sizeof(line)) > 0);
    CU_ASSERT_STRING_EQUAL(line, want);
    kill(grandchild, SIGKILL); /* re-parented to init or a subreaper: not ours to reap */
    close(p[0]);
    close(p[1]);
}

static void test_parent_already_gone(void)
{
    int p[2];
    pid_t grandchild, child;
    char line[64];

    CU_ASSERT_FATAL(pipe(p) == 0);
    child = watching_grandchild(p[1], 1, &grandchild);
    CU_ASSERT_FATAL(child > 0);
    CU_ASSERT_TRUE(read_line(p[0], line, sizeof(line)) > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "gone "));
    kill_tree(child, grandchild);
    close(p[0]);
    close(p[1]);
}

/* The spared process is neither signalled nor counted. */
static void test_descendants_but_one(void)
{
    pid_t a = fork(), b;

    if (a == 0) {
        for (;;)
            pause();
    }
    b = fork();
    if (b == 0) {
        for (;;)
            pause();
    }
    CU_ASSERT_EQUAL(pg_proc_signal_descendants(0, a), 1); /* signal 0 counts */
    CU_ASSERT_EQUAL(pg_proc_signal_descendants(SIGKILL, a), 1);
    waitpid(b, NULL, 0);
    CU_ASSERT_EQUAL(kill(a, 0), 0); /* spared */
    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    CU_ASSERT_EQUAL(pg_proc_signal_descendants(0, 0), 0);
}

static const pg_cunit_test_t proc_tests[] = {
    { "a process's parent, from /proc", test_parent_of_a_process },
    { "a pid belongs to the rank it descends from, nearest first", test_kinship_by_parent_chain },
    { "an orphaned setsid descendant is found and signalled",
      test_orphaned_setsid_descendant_is_signalled },
    { "every descendant but the one spared", test_descendants_but_one },
    { "a parent's death is heard", test_parent_death_is_heard },
    { "a parent gone before the watch is heard at once", test_parent_already_gone },
    { NULL, NULL },
};

static const pg_cunit_test_t tmpdir_tests[] = {
    { "a sweep removes a dead owner's directory tree, never a live one's; no symlink followed",
      test_sweep_removes_only_dead_owners },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "process tree", proc_tests, NULL, NULL },
    { "job directories", tmpdir_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
