/*
 * floor_pmi2: the same-client floor of the wire-up benchmark.
 *
 * floor_epoll measures the system calls of N x N gets with hand-written
 * clients that cost almost nothing.  The real workload's ranks are heavier:
 * Slurm's libpmi2 allocates and parses every reply, and on a 2-core machine
 * that user time competes with the server's.  This program keeps the
 * clients exactly as they are — N processes of tests/progs/pmi2_wireup,
 * linked with Slurm's libpmi2, each on its own socketpair — and replaces
 * the server with the least one that still lets them run: one epoll loop
 * that answers every request with bytes prepared in advance.  The all-get
 * phase the workload reports under it is the floor a real PMI server is
 * compared with: the same clients, the same bytes, no server logic.
 *
 * What it answers: the PMI-1 style init line, fullinit, job-getid, kvs-put
 * (card puts are acknowledged and dropped; only the report phase's
 * "times-R" values are kept), kvs-fence (a real barrier: released when all
 * N ranks fenced, as the workload needs), kvs-get (every card's reply
 * frame is built at start with pg_card_make, the workload's own card
 * function) and finalize.  Parsing is the least that works: the command
 * after "cmd=", the value after ";key=".  Anything else is an error.
 *
 * usage: floor_pmi2 [--batch] N program [args...]
 * --batch starts the ranks under SCHED_BATCH, as `pmigate run --sched batch`
 * does, so that variant is compared with the same floor.
 * The ranks inherit stdout and stderr: the workload's own line
 * (wireup n=N … getall=…) is the measurement.  Exit status 0 when every
 * rank exited 0 after finalize.
 */
#include "pg_bench.h"
#include "tests/progs/pmi2_card.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RANKS 65536
/* Room for one report value ("init put fence getall" in µs). */
#define TIMES_MAX 128

extern char **environ;

static const char init_request[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
static const char init_reply[] = "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";

/* One rank as the server sees it. */
struct fp_rank {
    int fd;                         /* server end of the socketpair; owned */
    pid_t pid;
    int inited;                     /* the init line was answered: frames follow */
    int finalized;
    int closed;
    char buf[PG_BENCH_FRAME_MAX];   /* bytes received, not yet handled */
    size_t len;
    char times[TIMES_MAX];          /* the rank's "times-R" value, or "" */
};

struct fp_server {
    int n;
    int batch;                      /* start the ranks under SCHED_BATCH */
    int epfd;                       /* owned */
    struct fp_rank *ranks;          /* n of them; owned */
    int fenced, closed;             /* ranks in the current fence, ranks gone */
    char jobid[64];
    char *card_replies;             /* n whole kvs-get reply frames, back to back; owned */
    size_t card_reply_len;          /* each one's length (every card is PG_CARD_LEN bytes) */
    char canned_getid[128], canned_put[64], canned_fence[64], canned_final[64];
    size_t getid_len, put_len, fence_len, final_len;
};

/* ---- canned replies --------------------------------------------------- */

/* Formats a reply frame (right-aligned length field, as pmigate and hydra
 * write it) into buf.  Returns its length, or -1 when it does not fit. */
static ssize_t reply_format(char *buf, size_t cap, const char *body)
{
    size_t len = strlen(body);
    int n = snprintf(buf, cap, "%6zu%s", len, body);
    return (n < 0 || (size_t)n >= cap) ? -1 : n;
}

static int canned_prepare(struct fp_server *s)
{
    char body[PG_BENCH_FRAME_MAX], card[PG_CARD_LEN + 1];
    ssize_t len;

    snprintf(body, sizeof body, "cmd=job-getid-response;rc=0;jobid=%s;", s->jobid);
    if ((len = reply_format(s->canned_getid, sizeof s->canned_getid, body)) < 0)
        return -1;
    s->getid_len = (size_t)len;
    s->put_len = (size_t)reply_format(s->canned_put, sizeof s->canned_put, "cmd=kvs-put-response;rc=0;");
    s->fence_len = (size_t)reply_format(s->canned_fence, sizeof s->canned_fence, "cmd=kvs-fence-response;rc=0;");
    s->final_len = (size_t)reply_format(s->canned_final, sizeof s->canned_final, "cmd=finalize-response;rc=0;");

    for (int r = 0; r < s->n; r++) {
        char frame[PG_BENCH_FRAME_MAX];
        pg_card_make(r, card);
        snprintf(body, sizeof body, "cmd=kvs-get-response;rc=0;found=TRUE;value=%s;", card);
        if ((len = reply_format(frame, sizeof frame, body)) < 0)
            return -1;
        if (r == 0) {
            s->card_reply_len = (size_t)len;
            if ((s->card_replies = malloc((size_t)s->n * s->card_reply_len)) == NULL)
                return -1;
        }
        if ((size_t)len != s->card_reply_len)
            return -1;
        memcpy(s->card_replies + (size_t)r * s->card_reply_len, frame, s->card_reply_len);
    }
    return 0;
}

/* ---- answering one rank --------------------------------------------- */

static int rank_send(struct fp_server *s, struct fp_rank *rk, const char *frame, size_t len)
{
    if (pg_bench_write_all(rk->fd, frame, len) == 0)
        return 0;
    fprintf(stderr, "floor_pmi2: writing to rank %d: %s\n", (int)(rk - s->ranks), strerror(errno));
    return -1;
}

/* The value of `name` (";name=" … up to ';') in body, or NULL. */
static const char *body_value(const char *body, size_t len, const char *name, size_t *vlen)
{
    size_t nlen = strlen(name);
    for (const char *p = memchr(body, ';', len); p != NULL;
         p = memchr(p + 1, ';', len - (size_t)(p + 1 - body))) {
        size_t left = len - (size_t)(p + 1 - body);
        if (left > nlen && memcmp(p + 1, name, nlen) == 0 && p[1 + nlen] == '=') {
            const char *v = p + 2 + nlen, *end = memchr(v, ';', len - (size_t)(v - body));
            *vlen = end ? (size_t)(end - v) : len - (size_t)(v - body);
            return v;
        }
    }
    return NULL;
}

/* The rank number in a key "<prefix><number>", or -1. */
static int key_rank(const char *key, size_t klen, const char *prefix, int n)
{
    size_t plen = strlen(prefix);
    long r = 0;
    if (klen <= plen || klen > plen + 6 || memcmp(key, prefix, plen) != 0)
        return -1;
    for (size_t i = plen; i < klen; i++) {
        if (key[i] < '0' || key[i] > '9')
            return -1;
        r = r * 10 + (key[i] - '0');
    }
    return r < n ? (int)r : -1;
}

static int answer_fence(struct fp_server *s)
{
    if (++s->fenced < s->n)
        return 0;
    s->fenced = 0;
    for (int i = 0; i < s->n; i++)
        if (rank_send(s, &s->ranks[i], s->canned_fence, s->fence_len) < 0)
            return -1;
    return 0;
}

static int answer_put(struct fp_server *s, struct fp_rank *rk, const char *body, size_t len)
{
    size_t klen, vlen;
    const char *key = body_value(body, len, "key", &klen);
    const char *value = body_value(body, len, "value", &vlen);
    int r = key ? key_rank(key, klen, "times-", s->n) : -1;
    if (r >= 0 && value != NULL && vlen < TIMES_MAX) {
        memcpy(s->ranks[r].times, value, vlen);
        s->ranks[r].times[vlen] = '\0';
    }
    return rank_send(s, rk, s->canned_put, s->put_len);
}

static int answer_get(struct fp_server *s, struct fp_rank *rk, const char *body, size_t len)
{
    char frame[PG_BENCH_FRAME_MAX], reply[PG_BENCH_FRAME_MAX];
    size_t klen;
    const char *key = body_value(body, len, "key", &klen);
    int r;

    if (key != NULL && (r = key_rank(key, klen, "card-", s->n)) >= 0)
        return rank_send(s, rk, s->card_replies + (size_t)r * s->card_reply_len, s->card_reply_len);
    if (key != NULL && (r = key_rank(key, klen, "times-", s->n)) >= 0 && s->ranks[r].times[0])
        snprintf(reply, sizeof reply, "cmd=kvs-get-response;rc=0;found=TRUE;value=%s;", s->ranks[r].times);
    else
        snprintf(reply, sizeof reply, "cmd=kvs-get-response;rc=0;found=FALSE;");
    ssize_t flen = reply_format(frame, sizeof frame, reply);
    return flen < 0 ? -1 : rank_send(s, rk, frame, (size_t)flen);
}

static int answer_fullinit(struct fp_server *s, struct fp_rank *rk)
{
    char body[256], frame[PG_BENCH_FRAME_MAX];
    snprintf(body, sizeof body,
             "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=%d;size=%d;"
             "appnum=0;debugged=FALSE;pmiverbose=FALSE;",
             (int)(rk - s->ranks), s->n);
    ssize_t len = reply_format(frame, sizeof frame, body);
    return len < 0 ? -1 : rank_send(s, rk, frame, (size_t)len);
}

static int command_is(const char *body, size_t len, const char *cmd)
{
    size_t clen = strlen(cmd);
    return len >= 4 + clen + 1 && memcmp(body, "cmd=", 4) == 0 && memcmp(body + 4, cmd, clen) == 0 &&
           body[4 + clen] == ';';
}

/* Answers one whole PMI-2 request body. */
static int answer(struct fp_server *s, struct fp_rank *rk, const char *body, size_t len)
{
    if (command_is(body, len, "kvs-get"))
        return answer_get(s, rk, body, len);
    if (command_is(body, len, "kvs-put"))
        return answer_put(s, rk, body, len);
    if (command_is(body, len, "kvs-fence"))
        return answer_fence(s);
    if (command_is(body, len, "fullinit"))
        return answer_fullinit(s, rk);
    if (command_is(body, len, "job-getid"))
        return rank_send(s, rk, s->canned_getid, s->getid_len);
    if (command_is(body, len, "finalize")) {
        rk->finalized = 1;
        return rank_send(s, rk, s->canned_final, s->final_len);
    }
    fprintf(stderr, "floor_pmi2: rank %d sent what a canned server cannot answer: %.*s\n",
            (int)(rk - s->ranks), (int)len, body);
    return -1;
}

/* Handles every whole request in the rank's buffer: the init line first,
 * then length-prefixed frames.  Keeps an unfinished one for the next read. */
static int rank_drain(struct fp_server *s, struct fp_rank *rk)
{
    size_t used = 0;
    if (!rk->inited) {
        const char *nl = memchr(rk->buf, '\n', rk->len);
        if (nl == NULL)
            return 0;
        used = (size_t)(nl + 1 - rk->buf);
        if (used != sizeof init_request - 1 || memcmp(rk->buf, init_request, used) != 0) {
            fprintf(stderr, "floor_pmi2: rank %d: unexpected init line\n", (int)(rk - s->ranks));
            return -1;
        }
        if (rank_send(s, rk, init_reply, sizeof init_reply - 1) < 0)
            return -1;
        rk->inited = 1;
    }
    while (rk->len - used >= PG_BENCH_LENGTH_FIELD) {
        long body = pg_bench_frame_length(rk->buf + used);
        if (body < 0 || PG_BENCH_LENGTH_FIELD + (size_t)body > sizeof rk->buf) {
            fprintf(stderr, "floor_pmi2: rank %d: bad length field\n", (int)(rk - s->ranks));
            return -1;
        }
        if (rk->len - used < PG_BENCH_LENGTH_FIELD + (size_t)body)
            break;
        if (answer(s, rk, rk->buf + used + PG_BENCH_LENGTH_FIELD, (size_t)body) < 0)
            return -1;
        used += PG_BENCH_LENGTH_FIELD + (size_t)body;
    }
    memmove(rk->buf, rk->buf + used, rk->len - used);
    rk->len -= used;
    return 0;
}

static int rank_readable(struct fp_server *s, struct fp_rank *rk)
{
    ssize_t got = read(rk->fd, rk->buf + rk->len, sizeof rk->buf - rk->len);
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (got == 0 && rk->finalized && rk->len == 0) {
        rk->closed = 1;
        s->closed++;
        return epoll_ctl(s->epfd, EPOLL_CTL_DEL, rk->fd, NULL);
    }
    if (got <= 0) {
        fprintf(stderr, "floor_pmi2: rank %d %s before finalize\n", (int)(rk - s->ranks),
                got == 0 ? "closed its connection" : "failed");
        return -1;
    }
    rk->len += (size_t)got;
    return rank_drain(s, rk);
}

/* ---- launching and reaping ------------------------------------------- */

/* The environment of every rank: the floor's own, without any PMI_* of
 * its own, plus four slots filled per rank.  Returns a NULL-terminated
 * array whose last four entries before NULL are the PMI slots (strings
 * owned by the caller). */
static char **env_prepare(char *slots[4])
{
    size_t count = 0, k = 0;
    while (environ[count] != NULL)
        count++;
    char **env = calloc(count + 5, sizeof *env);
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < count; i++)
        if (strncmp(environ[i], "PMI_", 4) != 0)
            env[k++] = environ[i];
    for (int i = 0; i < 4; i++)
        env[k++] = slots[i];
    return env;
}

/* Sets this process's policy (the ranks it spawns inherit it): with
 * --batch, SCHED_BATCH while spawning and back to SCHED_OTHER afterwards,
 * so only the ranks run under it.  glibc's posix_spawn takes only the POSIX
 * policies, not SCHED_BATCH. */
static int own_policy(int policy)
{
    struct sched_param normal_priority = { 0 };

    return sched_setscheduler(0, policy, &normal_priority);
}

/* Starts rank i on a fresh socketpair: the rank's end is the only
 * descriptor it inherits from the floor (every other is close-on-exec). */
static int rank_spawn(struct fp_server *s, int i, char **argv, char **env, char *slots[4])
{
    int sv[2], rc = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    if (fcntl(sv[1], F_SETFD, 0) < 0 || fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0)
        goto out;
    snprintf(slots[0], 32, "PMI_FD=%d", sv[1]);
    snprintf(slots[1], 32, "PMI_RANK=%d", i);
    snprintf(slots[2], 32, "PMI_SIZE=%d", s->n);
    snprintf(slots[3], 96, "PMI_JOBID=%s", s->jobid);
    if ((errno = posix_spawnp(&s->ranks[i].pid, argv[0], NULL, NULL, argv, env)) != 0) {
        s->ranks[i].pid = 0;
        goto out;
    }
    s->ranks[i].fd = sv[0];
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &s->ranks[i] };
    rc = epoll_ctl(s->epfd, EPOLL_CTL_ADD, sv[0], &ev);
    sv[0] = -1;
out:
    if (sv[0] >= 0)
        close(sv[0]);
    close(sv[1]);
    return rc;
}

static int server_on_ready(void *s, void *rank)
{
    return rank_readable(s, rank);
}

static int server_loop(struct fp_server *s)
{
    return pg_bench_epoll_run(s->epfd, &s->closed, s->n, server_on_ready, s);
}

/* Reaps every rank; on failure the survivors are killed first so nothing
 * is left behind.  Returns the number of ranks that did not exit 0. */
static int server_reap(struct fp_server *s, int failed)
{
    int bad = 0;
    for (int i = 0; i < s->n; i++) {
        int status;
        if (s->ranks[i].pid <= 0)
            continue;
        if (failed)
            kill(s->ranks[i].pid, SIGKILL);
        if (waitpid(s->ranks[i].pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            bad++;
    }
    return bad;
}

static int server_run(struct fp_server *s, char **argv)
{
    char fd_slot[32], rank_slot[32], size_slot[32], jobid_slot[96];
    char *slots[4] = { fd_slot, rank_slot, size_slot, jobid_slot };
    char **env = env_prepare(slots);
    int rc = -1, spawned = 0;

    if (env == NULL)
        goto out;
    if (s->batch && own_policy(SCHED_BATCH) < 0) {
        perror("floor_pmi2: SCHED_BATCH");
        goto out;
    }
    for (; spawned < s->n; spawned++)
        if (rank_spawn(s, spawned, argv, env, slots) < 0) {
            fprintf(stderr, "floor_pmi2: starting rank %d (%s): %s\n", spawned, argv[0], strerror(errno));
            goto out;
        }
    if (s->batch && own_policy(SCHED_OTHER) < 0) {
        perror("floor_pmi2: SCHED_OTHER");
        goto out;
    }
    rc = server_loop(s);
out:
    for (int i = 0; i < spawned; i++)
        if (!s->ranks[i].closed)
            close(s->ranks[i].fd);
    int bad = server_reap(s, rc < 0);
    if (bad > 0) {
        fprintf(stderr, "floor_pmi2: %d of %d ranks failed\n", bad, s->n);
        rc = -1;
    }
    free(env);
    return rc;
}

static void server_free(struct fp_server *s)
{
    if (s->epfd >= 0)
        close(s->epfd);
    free(s->card_replies);
    free(s->ranks);
}

int main(int argc, char **argv)
{
    struct fp_server s = { .epfd = -1 };
    char *end;
    int rc = 1;

    if (argc >= 2 && strcmp(argv[1], "--batch") == 0) {
        s.batch = 1;
        argc--;
        argv++;
    }
    long n = argc >= 3 ? strtol(argv[1], &end, 10) : 0;
    if (argc < 3 || *argv[1] == '\0' || *end != '\0' || n < 1 || n > MAX_RANKS) {
        fprintf(stderr, "usage: floor_pmi2 [--batch] N program [args...]  (1 <= N <= %d)\n",
                MAX_RANKS);
        return 2;
    }
    s.n = (int)n;
    /* A rank that dies must show up as an error, not kill the server. */
    signal(SIGPIPE, SIG_IGN);
    if (pg_bench_raise_nofile(s.n + 64L) < 0) {
        fprintf(stderr, "floor_pmi2: cannot open %d descriptors (ulimit -n)\n", s.n + 64);
        return 1;
    }
    /* A job id of the form and length pmigate gives its ranks. */
    snprintf(s.jobid, sizeof s.jobid, "kvs_%d_0", (int)getpid());
    s.ranks = calloc((size_t)s.n, sizeof *s.ranks);
    s.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s.ranks == NULL || s.epfd < 0 || canned_prepare(&s) < 0) {
        perror("floor_pmi2: setup");
        goto out;
    }
    if (server_run(&s, argv + 2) == 0)
        rc = 0;
out:
    server_free(&s);
    return rc;
}
