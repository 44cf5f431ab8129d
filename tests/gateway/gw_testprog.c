/*
 * gw_testprog: a rank for the launcher's integration tests that uses no PMI,
 * so exit codes, signals, output forwarding, stdin, binding and teardown can
 * be tested before (and independently of) the protocol handlers.
 *
 * Usage: gw_testprog MODE [args...]; the rank comes from PMI_RANK.
 *   exit CODE                  exit with CODE
 *   rank-exit R CODE [MARKER]  rank R exits CODE once every rank runs, others
 *                              sleep 60 s
 *   rank-signal R SIG [MARKER] rank R kills itself with SIG once every rank
 *                              runs, others sleep 60 s
 *   sleep SECONDS [MARKER]     sleep (MARKER only tags the command line for pgrep)
 *   grandchild MARKER          fork a child that sleeps 60 s, then sleep 60 s
 *   ignore-term MARKER         ignore SIGTERM, then sleep 60 s
 *   slow-lines N               write N lines, each in several pieces with pauses
 *   partial TEXT               write TEXT without a newline, then exit 0
 *   long-lines N LEN           write N lines of LEN letters ('a' + rank % 26)
 *                              each, every line in one write()
 *   cat                        copy stdin to stdout
 *   env VAR...                 print "rank R VAR=value" for each VAR
 *   args ARGS...               print "rank R args: ARGS"
 *   affinity                   print "rank R cpus: <list of allowed CPUs>"
 *   fds                        print "rank R on HOST fds: <open descriptors,
 *                              ascending> pmi_fd=<PMI_FD>", and on stderr
 *                              "rank R fd N -> <what /proc says>" for each
 *                              one but 0-2 and PMI_FD
 *   forge                      write a frame of garbage on every socket it
 *                              holds but 0-2 and PMI_FD (what it inherited
 *                              from its launcher), then print "rank R forged
 *                              on N sockets" and exit 0
 * PMI-1 over PMI_FD (raw lines, for tests/gateway/gw_fakegate):
 *   pmi R WHAT [MARKER]        every rank sends init; rank R then, once every
 *                              rank runs, does WHAT, the others sleep 60 s.
 *                              WHAT is one of
 *                              abort:N (cmd=abort exitcode=N, then exit 255),
 *                              eof (close the PMI fd, keep running),
 *                              exit0 (exit 0 without finalize),
 *                              kill9 (SIGKILL itself), badframe (send bytes
 *                              that cannot be framed), finalize (finalize
 *                              and exit 0; with R = -1 every rank does)
 *   spawn-fds N                rank 0 inits, spawns N ranks of this program
 *                              in fds mode (argv[0] as it was run), prints
 *                              the reply line and finalizes; the other
 *                              ranks only init and finalize
 * PMI-1 over PMIGATE_PMI_PORT:
 *   port-exit0 [MARKER]        init and say its rank, fork a child that keeps
 *                              the connection open (sleeps 60 s), exit 0
 *   port-finalize              init, say its rank, finalize, exit 0
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int my_rank(void)
{
    const char *r = getenv("PMI_RANK");

    return r ? atoi(r) : -1;
}

static void sleep_seconds(int s)
{
    struct timespec ts = { s, 0 };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* How many children of our parent (the gateway) run this program. */
static int siblings_running(const char *self)
{
    char path[64], exe[PATH_MAX];
    int ppid = (int)getppid(), pid, n = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", ppid, ppid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fscanf(f, "%d", &pid) == 1) {
        ssize_t len;

        snprintf(path, sizeof(path), "/proc/%d/exe", pid);
        len = readlink(path, exe, sizeof(exe) - 1);
        if (len > 0 && (exe[len] = '\0', strcmp(exe, self) == 0))
            n++;
    }
    fclose(f);
    return n;
}

/* Waits, up to 10 s, until every rank of the job (PMI_SIZE) runs this
 * program: a rank that fails on purpose does so once the others are there
 * to be torn down, whatever the scheduling. */
static void wait_for_every_rank(void)
{
    char self[PATH_MAX];
    const char *size = getenv("PMI_SIZE");
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (len <= 0 || size == NULL)
        return;
    self[len] = '\0';
    for (int waited_ms = 0; waited_ms < 10000; waited_ms++) {
        int n = siblings_running(self);

        if (n < 0 || n >= atoi(size))
            return;
        usleep(1000);
    }
}

static int mode_slow_lines(int n)
{
    for (int i = 0; i < n; i++) {
        char line[64];
        int len = snprintf(line, sizeof(line), "rank %d line %d end\n", my_rank(), i);

        /* three pieces, so an unbuffered forwarder would interleave them */
        for (int off = 0; off < len; off += (len + 2) / 3) {
            int piece = len - off < (len + 2) / 3 ? len - off : (len + 2) / 3;
            if (write(1, line + off, (size_t)piece) < 0)
                return 1;
            usleep(2000);
        }
    }
    return 0;
}

static int mode_long_lines(int n, size_t len)
{
    char *line = malloc(len + 1);
    int rc = 0;

    if (line == NULL)
        return 1;
    memset(line, 'a' + my_rank() % 26, len);
    line[len] = '\n';
    for (int i = 0; i < n && rc == 0; i++) {
        size_t off = 0;

        while (off < len + 1) {
            ssize_t w = write(1, line + off, len + 1 - off);

            if (w < 0) {
                rc = 1;
                break;
            }
            off += (size_t)w;
        }
    }
    free(line);
    return rc;
}

static int mode_cat(void)
{
    char buf[4096];
    ssize_t n;

    while ((n = read(0, buf, sizeof(buf))) > 0)
        if (write(1, buf, (size_t)n) != n)
            return 1;
    return n < 0 ? 1 : 0;
}

static int mode_affinity(void)
{
    cpu_set_t set;
    int first = 1;

    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 1;
    printf("rank %d cpus:", my_rank());
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            printf("%s%d", first ? " " : ",", c);
            first = 0;
        }
    printf("\n");
    return 0;
}

static int pmi_fd(void)
{
    const char *fd = getenv("PMI_FD");

    return fd ? atoi(fd) : -1;
}

static void pmi_send(const char *line)
{
    if (write(pmi_fd(), line, strlen(line)) < 0)
        _exit(3);
}

/* Reads one reply line (byte by byte: replies are short). */
static void pmi_read_line(void)
{
    char ch;

    while (read(pmi_fd(), &ch, 1) == 1 && ch != '\n')
        ;
}

static int pmi_finalize(void)
{
    pmi_send("cmd=finalize\n");
    pmi_read_line();
    return 0;
}

static int mode_pmi(int who, const char *what)
{
    pmi_send("cmd=init pmi_version=1 pmi_subversion=1\n");
    pmi_read_line();
    if (who == -1 && strcmp(what, "finalize") == 0)
        return pmi_finalize();
    if (my_rank() != who) {
        sleep_seconds(60);
        return 0;
    }
    wait_for_every_rank();
    if (strncmp(what, "abort:", 6) == 0) {
        char line[64];
        snprintf(line, sizeof(line), "cmd=abort exitcode=%s\n", what + 6);
        pmi_send(line);
        return 255; /* as MPICH's client exits after abort */
    }
    if (strcmp(what, "eof") == 0) {
        close(pmi_fd());
        sleep_seconds(60);
        return 0;
    }
    if (strcmp(what, "exit0") == 0)
        return 0;
    if (strcmp(what, "kill9") == 0)
        raise(SIGKILL);
    if (strcmp(what, "badframe") == 0) {
        pmi_send("  x12cmd=finalize;");
        sleep_seconds(60);
        return 0;
    }
    if (strcmp(what, "finalize") == 0)
        return pmi_finalize();
    return 2;
}

static int int_cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* The process's open descriptors, ascending, but the one reading them;
 * their count, at most max. */
static int open_fds(int *fds, int max)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL && n < max)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            fds[n++] = atoi(e->d_name);
    closedir(d);
    qsort(fds, (size_t)n, sizeof(*fds), int_cmp);
    return n;
}

static int not_own(int fd)
{
    return fd > 2 && fd != pmi_fd();
}

static int mode_fds(void)
{
    int fds[1024], n = open_fds(fds, 1024);
    char host[256] = "?", target[512];

    (void)gethostname(host, sizeof(host) - 1);
    printf("rank %d on %s fds:", my_rank(), host);
    for (int i = 0; i < n; i++)
        printf(" %d", fds[i]);
    printf(" pmi_fd=%d\n", pmi_fd());
    for (int i = 0; i < n; i++) {
        char link[64];
        ssize_t len;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fds[i]);
        if (!not_own(fds[i]) || (len = readlink(link, target, sizeof(target) - 1)) < 0)
            continue;
        target[len] = '\0';
        fprintf(stderr, "rank %d fd %d -> %s\n", my_rank(), fds[i], target);
    }
    return 0;
}

/* What a rank that never speaks PMI might write by mistake (or on
 * purpose) on the descriptors it was given: on its launcher's links it
 * would be taken for the launcher's own traffic. */
static int mode_forge(void)
{
    static const char garbage[] = "\x2a\x00\x00\x00forged by a rank\xff\xff\xff\xff";
    int fds[1024], n = open_fds(fds, 1024), sockets = 0;

    for (int i = 0; i < n; i++)
        if (not_own(fds[i]) &&
            send(fds[i], garbage, sizeof(garbage), MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
            sockets++;
    printf("rank %d forged on %d sockets\n", my_rank(), sockets);
    return 0;
}

/* Reads one reply line into buf (byte by byte: replies are short). */
static void pmi_read_reply(char *buf, size_t size)
{
    size_t n = 0;
    char ch;

    while (read(pmi_fd(), &ch, 1) == 1 && ch != '\n')
        if (n + 1 < size)
            buf[n++] = ch;
    buf[n] = '\0';
}

static int mode_spawn_fds(const char *self, int n)
{
    char block[PATH_MAX + 256], reply[256];

    pmi_send("cmd=init pmi_version=1 pmi_subversion=1\n");
    pmi_read_line();
    if (my_rank() == 0) {
        snprintf(block, sizeof(block),
                 "mcmd=spawn\nnprocs=%d\nexecname=%s\ntotspawns=1\nspawnssofar=1\n"
                 "arg1=fds\nargcnt=1\npreput_num=0\ninfo_num=0\nendcmd\n",
                 n, self);
        pmi_send(block);
        pmi_read_reply(reply, sizeof(reply));
        printf("rank 0 spawn: %s\n", reply);
    }
    return pmi_finalize();
}

/* Connects to PMIGATE_PMI_PORT, inits and says its rank there (PMI_FD
 * then names that connection).  0, or -1 when it cannot. */
static int port_hello(void)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    const char *port = getenv("PMIGATE_PMI_PORT");
    char line[64];
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    if (port == NULL || fd < 0 || strlen(port) >= sizeof(sa.sun_path))
        return -1;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        return -1;
    snprintf(line, sizeof(line), "%d", fd);
    setenv("PMI_FD", line, 1); /* pmi_send and pmi_read_line use it */
    pmi_send("cmd=init pmi_version=1 pmi_subversion=1\n");
    pmi_read_line();
    snprintf(line, sizeof(line), "cmd=initack pmiid=%d\n", my_rank());
    pmi_send(line);
    pmi_read_line();
    return 0;
}

/* A rank whose PMI_PORT connection outlives it: the reaped rank's connection
 * is still open when the job ends. */
static int mode_port_exit0(void)
{
    if (port_hello() != 0)
        return 2;
    if (fork() == 0)
        sleep_seconds(60);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "exit") == 0 && argc > 2)
        return atoi(argv[2]);
    if ((strcmp(mode, "rank-exit") == 0 || strcmp(mode, "rank-signal") == 0) && argc > 3) {
        if (my_rank() == atoi(argv[2])) {
            wait_for_every_rank();
            if (mode[5] == 'e')
                return atoi(argv[3]);
            raise(atoi(argv[3]));
        }
        sleep_seconds(60);
        return 0;
    }
    if (strcmp(mode, "sleep") == 0 && argc > 2) {
        sleep_seconds(atoi(argv[2]));
        return 0;
    }
    if (strcmp(mode, "grandchild") == 0) {
        if (fork() == 0)
            sleep_seconds(60);
        else
            sleep_seconds(60);
        return 0;
    }
    if (strcmp(mode, "ignore-term") == 0) {
        signal(SIGTERM, SIG_IGN);
        sleep_seconds(60);
        return 0;
    }
    if (strcmp(mode, "slow-lines") == 0 && argc > 2)
        return mode_slow_lines(atoi(argv[2]));
    if (strcmp(mode, "partial") == 0 && argc > 2)
        return write(1, argv[2], strlen(argv[2])) < 0;
    if (strcmp(mode, "long-lines") == 0 && argc > 3)
        return mode_long_lines(atoi(argv[2]), (size_t)atol(argv[3]));
    if (strcmp(mode, "cat") == 0)
        return mode_cat();
    if (strcmp(mode, "env") == 0) {
        for (int i = 2; i < argc; i++) {
            const char *v = getenv(argv[i]);
            printf("rank %d %s=%s\n", my_rank(), argv[i], v ? v : "(unset)");
        }
        return 0;
    }
    if (strcmp(mode, "args") == 0) {
        printf("rank %d args:", my_rank());
        for (int i = 2; i < argc; i++)
            printf(" %s", argv[i]);
        printf("\n");
        return 0;
    }
    if (strcmp(mode, "affinity") == 0)
        return mode_affinity();
    if (strcmp(mode, "fds") == 0)
        return mode_fds();
    if (strcmp(mode, "spawn-fds") == 0 && argc > 2)
        return mode_spawn_fds(argv[0], atoi(argv[2]));
    if (strcmp(mode, "forge") == 0)
        return mode_forge();
    if (strcmp(mode, "port-finalize") == 0)
        return port_hello() == 0 ? pmi_finalize() : 2;
    if (strcmp(mode, "port-exit0") == 0)
        return mode_port_exit0();
    if (strcmp(mode, "pmi") == 0 && argc > 3)
        return mode_pmi(atoi(argv[2]), argv[3]);
    fprintf(stderr, "gw_testprog: unknown mode '%s'\n", mode);
    return 2;
}
