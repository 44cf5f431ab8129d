/*
 * pg_status_cli: `pmigate status`.  See pg_status_cli.h.
 */
#include "gateway/tools/pg_status_cli.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gateway/util/pg_cli.h"
#include "gateway/io/pg_listen.h"
#include "gateway/tools/pg_statusd.h"
#include "gateway/util/pg_tmpdir.h"
#include "wire/pg_clock.h"
#include "wire/pg_jobdir.h"

enum { STATUS_REPORT_MAX = 16 * 1024 * 1024 };

const char pg_status_usage[] =
    "Usage: pmigate status [--watch [--interval S]] [JOB]\n"
    "\n"
    "Shows your pmigate jobs running on this node (or JOB: a job directory\n"
    "$TMPDIR/pmigate.XXXXXX, or the pid of its pmigate): per job, the ranks\n"
    "launched, initialised, finalized and exited; each fence in progress with\n"
    "its age and the ranks it waits for; the gets and name-service lookups\n"
    "that wait; the jobs its ranks spawned.  Only your own jobs answer.\n"
    "\n"
    "  -w, --watch      show it again every interval until interrupted (or\n"
    "                   until JOB ends)\n"
    "  --interval S     --watch's interval in seconds (default 1)\n"
    "  -h, --help       this text\n";

int pg_status_parse(int argc, char **argv, pg_status_opts_t *opts, char *err, size_t errlen)
{
    memset(opts, 0, sizeof(*opts));
    opts->interval = 1.0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "-w") == 0 || strcmp(a, "--watch") == 0)
            opts->watch = 1;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            opts->help = 1;
        else if (strcmp(a, "--interval") == 0 || strncmp(a, "--interval=", 11) == 0) {
            const char *v = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);

            if (pg_cli_parse_seconds(v, 0, &opts->interval) != 0 || opts->interval < 0.1 ||
                opts->interval > 3600) {
                snprintf(err, errlen, "--interval wants seconds from 0.1 to 3600, not '%s'",
                         v != NULL ? v : "");
                return -1;
            }
        } else if (a[0] == '-') {
            snprintf(err, errlen, "unknown option '%s' (see pmigate status --help)", a);
            return -1;
        } else if (opts->job != NULL) {
            snprintf(err, errlen, "one JOB at a time ('%s' and '%s')", opts->job, a);
            return -1;
        } else
            opts->job = a;
    }
    return 0;
}

/* ---- asking one job ---------------------------------------------------- */

/* Reads to EOF within the answer time.  0, or -1 with err. */
static int read_all(int fd, char **text, size_t *len, char *err, size_t errlen)
{
    uint64_t deadline = pg_clock_now() + (uint64_t)PG_STATUS_ANSWER_S * 1000000000u;
    size_t cap = 0;
    char *buf = NULL;

    *len = 0;
    for (;;) {
        struct pollfd p = { fd, POLLIN, 0 };
        uint64_t now = pg_clock_now();
        ssize_t n;

        if (now >= deadline || poll(&p, 1, (int)((deadline - now) / 1000000u) + 1) == 0) {
            snprintf(err, errlen, "no answer within %d s", PG_STATUS_ANSWER_S);
            break;
        }
        if (*len + 4096 + 1 > cap) {
            char *grown;

            cap = cap == 0 ? 16384 : cap * 2;
            if (cap > STATUS_REPORT_MAX || (grown = realloc(buf, cap)) == NULL) {
                snprintf(err, errlen, "the report is too large");
                break;
            }
            buf = grown;
        }
        n = read(fd, buf + *len, cap - *len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "reading the answer: %s", strerror(errno));
            break;
        }
        if (n == 0) {
            buf[*len] = '\0';
            *text = buf;
            return 0;
        }
        *len += (size_t)n;
    }
    free(buf);
    return -1;
}

static int connect_status(const char *dir, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    int fd = -1, dir_fd, rc = pg_listen_address(dir, PG_STATUSD_SOCKET, &sa, &dir_fd);

    if (rc == 0 && (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0 &&
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
        if (dir_fd >= 0)
            close(dir_fd);
        return fd;
    }
    rc = rc != 0 ? rc : errno;
    snprintf(err, errlen, "%s",
             rc == EACCES || rc == EPERM ? "permission denied: not your job"
             : rc == ENOENT || rc == ECONNREFUSED
                 ? "no pmigate answers there (the job has ended, or its pmigate has no "
                   "status endpoint)"
                 : strerror(rc));
    if (fd >= 0)
        close(fd);
    if (dir_fd >= 0)
        close(dir_fd);
    return -1;
}

int pg_status_query(const char *dir, char **report, long *pid, char *err, size_t errlen)
{
    static const char request[] = PG_STATUSD_REQUEST "\n";
    char *text = NULL, *body;
    size_t len;
    int fd = connect_status(dir, err, errlen), rc;

    if (fd < 0)
        return -1;
    rc = send(fd, request, sizeof(request) - 1, MSG_NOSIGNAL) == (ssize_t)sizeof(request) - 1
             ? read_all(fd, &text, &len, err, errlen)
             : (snprintf(err, errlen, "the job went away"), -1);
    close(fd);
    if (rc != 0)
        return -1;
    if (sscanf(text, PG_STATUSD_HEADER " pid=%ld", pid) != 1 ||
        (body = strchr(text, '\n')) == NULL) {
        /* a refusal ("refused: ...") or something that is not pmigate */
        snprintf(err, errlen, "%.*s", (int)strcspn(text, "\n"), text[0] ? text : "empty answer");
        free(text);
        return -1;
    }
    memmove(text, body + 1, strlen(body + 1) + 1);
    *report = text;
    return 0;
}

/* ---- the command -------------------------------------------------------- */

/* A JOB that is all digits is a pid. */
static long job_pid(const char *job)
{
    char *end;
    long pid;

    if (job == NULL || job[0] < '0' || job[0] > '9')
        return -1;
    pid = strtol(job, &end, 10);
    return *end == '\0' && pid > 0 ? pid : -1;
}

/* One round: prints the report of every job asked for into out, what went
 * wrong into errs.  Returns how many answered; *named_gone is set when JOB
 * was given and did not. */
static int show_once(const pg_status_opts_t *opts, FILE *out, FILE *errs, int *named_gone)
{
    long want = job_pid(opts->job), pid;
    char **dirs = NULL, *report, err[512];
    size_t n = 0;
    int shown = 0;

    *named_gone = 0;
    if (opts->job != NULL && want < 0) {
        if (pg_status_query(opts->job, &report, &pid, err, sizeof(err)) != 0) {
            fprintf(errs, "pmigate status: %s: %s\n", opts->job, err);
            *named_gone = 1;
            return 0;
        }
        fputs(report, out);
        free(report);
        return 1;
    }
    if (pg_jobdir_live(&dirs, &n) != 0)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        if (pg_status_query(dirs[i], &report, &pid, err, sizeof(err)) != 0) {
            if (want < 0)
                fprintf(errs, "pmigate status: %s: %s\n", dirs[i], err);
            continue;
        }
        if (want < 0 || pid == want) {
            fprintf(out, "%s%s", shown > 0 ? "\n" : "", report);
            shown++;
        }
        free(report);
    }
    pg_jobdir_list_free(dirs, n);
    if (shown == 0) {
        if (want > 0)
            fprintf(errs, "pmigate status: no pmigate job of yours with pid %ld on this node\n",
                    want);
        else
            fprintf(errs, "pmigate status: no pmigate job of yours is running on this node\n");
        *named_gone = want > 0;
    }
    return shown;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* --watch: the reports again every interval, the screen cleared on a
 * terminal, until interrupted or the named job ends. */
static int watch(const pg_status_opts_t *opts)
{
    int tty = isatty(STDOUT_FILENO), gone = 0;

    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    while (!interrupted) {
        char *text = NULL;
        size_t len = 0;
        FILE *page = open_memstream(&text, &len);
        struct timespec pause = { (time_t)opts->interval,
                                  (long)((opts->interval - (double)(time_t)opts->interval) *
                                         1e9) };

        if (page == NULL)
            return 1;
        (void)show_once(opts, page, page, &gone);
        fclose(page);
        /* the page is built first, so the screen is cleared and redrawn at once */
        printf("%s%s%s", tty ? "\033[H\033[2J" : "", text, tty ? "" : "\n");
        fflush(stdout);
        free(text);
        if (gone)
            return 0; /* the job it watched has ended */
        (void)nanosleep(&pause, NULL);
    }
    return 0;
}

int pg_status_main(int argc, char **argv)
{
    pg_status_opts_t opts;
    char err[256];
    int gone;

    if (pg_status_parse(argc, argv, &opts, err, sizeof(err)) != 0) {
        fprintf(stderr, "pmigate status: %s\n", err);
        return PG_EXIT_USAGE;
    }
    if (opts.help) {
        fputs(pg_status_usage, stdout);
        return 0;
    }
    if (opts.watch)
        return watch(&opts);
    return show_once(&opts, stdout, stderr, &gone) > 0 ? 0 : 1;
}
