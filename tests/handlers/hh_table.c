/*
 * hh_table: runs the handlers' conversation rows (see hh_table.h) on the
 * harness of hh_harness.c.
 */
#include "tests/handlers/hh_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmix_common.h"

enum { TEXT_MAX = HH_MSG_MAX + 1 };

/* ---- the text of a row ---------------------------------------------------- */

/* "{N*c}" at s: appends N times c, returns the characters it took, or 0
 * when s holds no such repetition. */
static size_t expand_repeat(const char *s, char *out, size_t *used)
{
    char c, close;
    int n, took = 0;

    if (sscanf(s, "{%d*%c%c%n", &n, &c, &close, &took) != 3 || close != '}' || took == 0 ||
        n < 0 || *used + (size_t)n >= TEXT_MAX)
        return 0;
    memset(out + *used, c, (size_t)n);
    *used += (size_t)n;
    return (size_t)took;
}

/* "$NAME" at s: appends what it stands for, returns its length, or 0. */
static size_t expand_name(const hh_t *h, const char *s, char *out, size_t *used)
{
    char num[16];
    const struct { const char *name, *value; } names[] = {
        { "$KVS", hh_kvsname(h) },
        { "$ABORTED", num },
        { "$EXIT_CODE", PMIX_EXIT_CODE },
        { "$EVTEXT", PMIX_EVENT_TEXT_MESSAGE },
    };

    snprintf(num, sizeof(num), "%d", PMIX_ERR_PROC_ABORTED);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t len = strlen(names[i].name);

        if (strncmp(s, names[i].name, len) == 0) {
            *used += (size_t)snprintf(out + *used, TEXT_MAX - *used, "%s", names[i].value);
            return len;
        }
    }
    return 0;
}

/* A row's text with its names and repetitions expanded into out[TEXT_MAX]. */
static void expand(const hh_t *h, const char *s, char *out)
{
    size_t used = 0;

    while (*s != '\0' && used + 1 < TEXT_MAX) {
        size_t took = *s == '{' ? expand_repeat(s, out, &used)
                      : *s == '$' ? expand_name(h, s, out, &used)
                                  : 0;

        if (took == 0)
            out[used++] = *s++;
        else
            s += took;
        if (used >= TEXT_MAX)
            used = TEXT_MAX - 1;
    }
    out[used] = '\0';
}

/* Does `text` match `pattern`, where '*' is any run of characters? */
static int matches(const char *pattern, const char *text)
{
    if (*pattern == '\0')
        return *text == '\0';
    if (*pattern == '*')
        return matches(pattern + 1, text) || (*text != '\0' && matches(pattern, text + 1));
    return *pattern == *text && matches(pattern + 1, text + 1);
}

/* ---- checking ----------------------------------------------------------------- */

/* Records the row's verdict with CUnit; on a failure the message names
 * the case and row and says what was wanted and what came. */
static int verdict(int ok, const char *where, const hh_row_t *row, const char *want,
                   const char *got)
{
    char what[600];

    snprintf(what, sizeof(what), "%s: conn %d, request %.120s: want [%.180s] got [%.180s]", where,
             row->conn, row->request ? row->request : "(none)", want ? want : "(nothing)",
             got ? got : "(nothing)");
    if (!ok)
        fprintf(stderr, "\n  %s\n", what);
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, 0, what, __FILE__, "", CU_FALSE);
    return ok;
}

/* Compares the next message of the row's connection with its reply. */
static int check_reply(hh_t *h, const hh_row_t *row, const char *where)
{
    static hh_reply_t *r;
    char want[TEXT_MAX];
    const char *body;

    if (r == NULL && (r = hh_reply_new()) == NULL)
        return verdict(0, where, row, "memory for a reply", NULL);
    expand(h, row->reply, want);
    if (!hh_recv(h, row->conn, r))
        return verdict(0, where, row, want, NULL);
    /* a PMI-2 message: its length field is the codec's business */
    body = strncmp(r->raw, "cmd=", 4) == 0 || r->len < 6 ? r->raw : r->raw + 6;
    return verdict(matches(want, body), where, row, want, body);
}

/* What the harness says for a "@" request, into out. */
static void harness_says(hh_t *h, const hh_row_t *row, char *out)
{
    const char *q = row->request + 1;
    int c = row->conn;

    out[0] = '\0';
    if (strcmp(q, "closed") == 0)
        snprintf(out, TEXT_MAX, "%s",
                 !hh_eof(h, c) ? "open" : hh_close_reason(h, c) ? hh_close_reason(h, c) : "clean");
    else if (strcmp(q, "abort") == 0 && hh_abort_code(h) < 0)
        snprintf(out, TEXT_MAX, "none");
    else if (strcmp(q, "abort") == 0)
        snprintf(out, TEXT_MAX, "code=%d rank=%d", hh_abort_code(h), hh_abort_rank(h));
    else if (strcmp(q, "log") == 0)
        snprintf(out, TEXT_MAX, "%s", hh_log(h));
    else if (strcmp(q, "events") == 0)
        snprintf(out, TEXT_MAX, "%s", hh_events(h));
    else if (strcmp(q, "segment") == 0)
        snprintf(out, TEXT_MAX, "%s", hh_reads_segment(h, c) ? "yes" : "no");
    else if (strcmp(q, "spawned") == 0)
        snprintf(out, TEXT_MAX, "%s", hh_spawned(h));
    else
        snprintf(out, TEXT_MAX, "unknown directive %s", row->request);
}

/* A "@" row: an action on the harness, or a question whose answer must
 * match the row's reply. */
static int run_directive(hh_t *h, const hh_row_t *row, const char *where)
{
    const char *q = row->request + 1;
    char want[TEXT_MAX], got[TEXT_MAX];

    if (strcmp(q, "quiet") == 0)
        return verdict(hh_quiet(h, row->conn), where, row, "nothing unread", "a message");
    if (strcmp(q, "watch") == 0)
        return verdict(hh_watch_events(h, row->conn) == 0, where, row, "subscribed", "refused");
    if (strcmp(q, "spawn") == 0) {
        hh_enable_spawn(h);
        return 1;
    }
    if (strcmp(q, "port") == 0)
        return verdict(hh_add_unidentified(h) == row->conn, where, row, "that connection",
                       "another");
    harness_says(h, row, got);
    expand(h, row->reply ? row->reply : "", want);
    return verdict(matches(want, got), where, row, want, got);
}

/* ---- running -------------------------------------------------------------- */

static void send_request(hh_t *h, const hh_row_t *row)
{
    char text[TEXT_MAX];

    expand(h, row->request, text);
    if (row->dialect == H2)
        hh_send2(h, row->conn, text);
    else if (row->dialect == H2_LEFT)
        hh_send2_left(h, row->conn, text);
    else
        hh_send(h, row->conn, text, strlen(text));
}

int hh_row_run(hh_t *h, unsigned dialect, const hh_row_t *row, const char *where)
{
    if ((row->dialect & dialect) == 0)
        return 1;
    if (row->request != NULL && row->request[0] == '@')
        return run_directive(h, row, where);
    if (row->request != NULL)
        send_request(h, row);
    return row->reply == NULL || check_reply(h, row, where);
}

int hh_rows_run(hh_t *h, unsigned dialect, const hh_row_t *rows, const char *where)
{
    for (const hh_row_t *row = rows; row->dialect != 0; row++)
        if (!hh_row_run(h, dialect, row, where))
            return 0;
    return 1;
}

/* One rank's handshake: PMI-1's init, or PMI-2's init then a fullinit
 * with a left-aligned length, as Slurm's libpmi2 sends it. */
static int handshake(hh_t *h, unsigned dialect, int rank, int size, const char *where)
{
    char fullinit[128], response[256];
    const hh_row_t rows[] = {
        { H1, rank, "cmd=init pmi_version=1 pmi_subversion=1\n",
          "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n" },
        { H2_RAW, rank, "cmd=init pmi_version=2 pmi_subversion=0\n",
          "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n" },
        { H2_LEFT, rank, fullinit, response },
        { 0, 0, NULL, NULL },
    };

    snprintf(fullinit, sizeof(fullinit), "cmd=fullinit;pmirank=%d;threaded=FALSE;", rank);
    snprintf(response, sizeof(response),
             "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=%d;size=%d;appnum=0;"
             "debugged=FALSE;pmiverbose=FALSE;",
             rank, size);
    return hh_rows_run(h, dialect, rows, where);
}

hh_t *hh_case_job(const hh_case_t *c, unsigned dialect)
{
    hh_t *h = hh_new(c->size, c->nnodes);

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    for (int rank = 0; c->start == HH_READY && rank < c->size; rank++)
        if (!handshake(h, dialect, rank, c->size, c->name)) {
            hh_free(h);
            return NULL;
        }
    return h;
}

void hh_case_run(const hh_case_t *c, unsigned dialect)
{
    hh_t *h = hh_case_job(c, dialect);

    if (h == NULL)
        return;
    (void)hh_rows_run(h, dialect, c->rows, c->name);
    hh_free(h);
}
