/*
 * Unit tests for the connection layer (gateway/io/pg_conn.c) through a real
 * socketpair and a real libevent loop: protocol detection from the first
 * message, messages split into pieces, framing errors that close the
 * connection with a clear reason, PMI_PORT rank identification, finalize and
 * EOF, and freeing a connection from inside its own callbacks.
 */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gateway/io/pg_conn.h"
#include "tests/pg_cunit.h"

/* What the fake handlers and owner saw. */
typedef struct seen {
    int opens[PG_PROTO_PMIX + 1];
    int messages[PG_PROTO_PMIX + 1];
    pg_cmd_t last_cmd;
    int last_parse_rc;
    int owner_opened;
    int finalized;
    int closed;
    char reason[256];
    int identified_rank;
    int refuse_identify;
    int free_in_message; /* free the connection from inside on_message */
    int reply_close;     /* on_message returns PG_HANDLER_CLOSE */
    size_t traced_in, traced_out;
    int abort_code, abort_rank;   /* what the owner's job_abort got */
    char log[256];                /* the last line the owner's log_write got */
    int served;                   /* owner's served calls */
    const char *job_seen;         /* the kvsname the handler read through its peer */
    int hold;                     /* the owner's hold_init answer */
    int hold_asked;               /* ...and how often it was asked */
} seen_t;

static seen_t seen;
static struct event_base *base;
static pg_conn_t *conn;
static int peer = -1;

/* The fake handlers see the connection through the seam only, as the real
 * ones do (server/pg_handler.h). */
static int h_open(pg_peer_t *p)
{
    seen.opens[pg_conn_proto(pg_conn_of(p))]++;
    return 0;
}

static int h_message(pg_peer_t *p, pg_msg_t *msg, int parse_rc)
{
    seen.messages[pg_conn_proto(pg_conn_of(p))]++;
    seen.last_cmd = msg->cmd;
    seen.last_parse_rc = parse_rc;
    seen.job_seen = p->job != NULL ? p->job->kvsname : NULL;
    p->ops->reply_send(p, "ok\n", 3);
    if (msg->cmd == PG_CMD_PMI1_FINALIZE)
        p->ops->peer_finalize(p);
    if (msg->cmd == PG_CMD_PMI1_ABORT) {
        pg_peer_log(p, "rank %d leaves", p->rank);
        p->ops->job_abort(p, 7, "bye");
    }
    if (seen.free_in_message) {
        pg_conn_free(pg_conn_of(p));
        conn = NULL;
        return PG_HANDLER_OK;
    }
    return seen.reply_close ? PG_HANDLER_CLOSE : PG_HANDLER_OK;
}

static const pg_proto_handler_t pmi1_handler = { .name = "PMI-1", .on_open = h_open,
                                                  .on_message = h_message };
static const pg_proto_handler_t pmi2_handler = { .name = "PMI-2", .on_open = h_open,
                                                  .on_message = h_message };
static const pg_handler_table_t both = { { [PG_PROTO_PMI1] = &pmi1_handler,
                                           [PG_PROTO_PMI2] = &pmi2_handler } };
static const pg_handler_table_t pmi1_only = { { [PG_PROTO_PMI1] = &pmi1_handler } };

static int o_identify(void *owner, pg_conn_t *c, int rank, const char **why)
{
    (void)owner;
    (void)c;
    seen.identified_rank = rank;
    if (seen.refuse_identify) {
        *why = "no such rank";
        return -1;
    }
    return 0;
}

static void o_opened(void *owner, pg_conn_t *c)
{
    (void)owner;
    (void)c;
    seen.owner_opened++;
}

static void o_finalized(void *owner, pg_conn_t *c)
{
    (void)owner;
    (void)c;
    seen.finalized++;
}

static void o_closed(void *owner, pg_conn_t *c, const char *reason)
{
    (void)owner;
    seen.closed++;
    snprintf(seen.reason, sizeof(seen.reason), "%s", reason ? reason : "(clean)");
    pg_conn_free(c); /* freeing from inside the callback must be safe */
    conn = NULL;
}

static void o_job_abort(void *owner, pg_conn_t *c, int code, const char *msg)
{
    (void)owner;
    (void)msg;
    seen.abort_code = code;
    seen.abort_rank = pg_conn_rank(c);
}

static void o_log_write(void *owner, pg_conn_t *c, const char *line)
{
    (void)owner;
    (void)c;
    snprintf(seen.log, sizeof(seen.log), "%s", line);
}

static void o_served(void *owner, pg_conn_t *c)
{
    (void)owner;
    (void)c;
    seen.served++;
}

static int o_hold_init(void *owner, pg_conn_t *c)
{
    (void)owner;
    (void)c;
    seen.hold_asked++;
    return seen.hold;
}

static const pg_conn_owner_ops_t owner_ops = {
    .identify = o_identify, .opened = o_opened, .finalized = o_finalized,
    .job_abort = o_job_abort, .log_write = o_log_write, .served = o_served, .closed = o_closed,
    .hold_init = o_hold_init,
};

/* What the handlers may read of the job. */
static const pg_peer_job_t job = { .kvsname = "kvs_test", .size = 8, .universe_size = 8 };

static void trace(void *arg, const pg_conn_t *c, pg_conn_dir_t dir, const char *b, size_t len)
{
    (void)arg;
    (void)c;
    (void)b;
    if (dir == PG_CONN_IN)
        seen.traced_in += len;
    else
        seen.traced_out += len;
}

static void open_conn(int rank, const pg_handler_table_t *handlers)
{
    int sv[2];

    memset(&seen, 0, sizeof(seen));
    seen.identified_rank = -1;
    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    base = event_base_new();
    conn = pg_conn_new(base, sv[0], rank, &job, handlers, &owner_ops, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(conn);
    pg_conn_set_trace(conn, trace, NULL);
    peer = sv[1];
}

static void close_conn(void)
{
    pg_conn_free(conn);
    conn = NULL;
    if (peer >= 0)
        close(peer);
    peer = -1;
    event_base_free(base);
}

/* Runs the loop until nothing is pending right now. */
static void spin(void)
{
    for (int i = 0; i < 20; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
}

static void send_peer(const char *bytes, size_t len)
{
    CU_ASSERT_EQUAL((size_t)write(peer, bytes, len), len);
    spin();
}

static void send_str(const char *s)
{
    send_peer(s, strlen(s));
}

/* Reads what the connection wrote to the peer (non-blocking). */
static ssize_t read_peer(char *buf, size_t len)
{
    ssize_t n;

    fcntl(peer, F_SETFL, O_NONBLOCK);
    n = read(peer, buf, len - 1);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

static void test_pmi1_init_picks_pmi1(void)
{
    char buf[64];

    open_conn(0, &both);
    send_str("cmd=init pmi_version=1 pmi_subversion=1\n");
    CU_ASSERT_EQUAL(seen.opens[PG_PROTO_PMI1], 1);
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 1);
    CU_ASSERT_EQUAL(seen.last_cmd, PG_CMD_PMI1_INIT);
    CU_ASSERT_EQUAL(seen.owner_opened, 1);
    CU_ASSERT_TRUE(read_peer(buf, sizeof(buf)) == 3 && strcmp(buf, "ok\n") == 0);
    CU_ASSERT_EQUAL(seen.traced_out, 3);
    close_conn();
}

/* --stop-in-init: the init is taken only once the owner releases it, and
 * the owner is asked once. */
static void test_held_init_waits_for_release(void)
{
    char buf[64];

    open_conn(0, &both);
    seen.hold = 1;
    send_str("cmd=init pmi_version=1 pmi_subversion=1\n");
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 0);
    CU_ASSERT_TRUE(pg_conn_held(conn));
    CU_ASSERT_TRUE(read_peer(buf, sizeof(buf)) < 0 && errno == EAGAIN);
    send_str("cmd=get_maxes\n");
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 0);
    pg_conn_release_hold(conn);
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 2);
    CU_ASSERT_EQUAL(seen.last_cmd, PG_CMD_PMI1_GET_MAXES);
    CU_ASSERT_TRUE(read_peer(buf, sizeof(buf)) == 6 && strcmp(buf, "ok\nok\n") == 0);
    CU_ASSERT_EQUAL(seen.hold_asked, 1);
    CU_ASSERT_FALSE(pg_conn_held(conn));
    close_conn();
}

/* A held rank that goes away is named as such. */
static void test_eof_while_held_is_reported(void)
{
    open_conn(2, &both);
    seen.hold = 1;
    send_str("cmd=init pmi_version=1 pmi_subversion=1\n");
    close(peer);
    peer = -1;
    spin();
    CU_ASSERT_EQUAL(seen.closed, 1);
    CU_ASSERT_STRING_EQUAL(seen.reason,
                           "closed its PMI connection while held in init for a debugger");
    close_conn();
}

static void test_pmi2_init_picks_pmi2_for_the_rest(void)
{
    const char *fullinit = "    38cmd=fullinit;pmirank=0;threaded=FALSE;";

    open_conn(0, &both);
    send_str("cmd=init pmi_version=2 pmi_subversion=0\n");
    CU_ASSERT_EQUAL(seen.opens[PG_PROTO_PMI2], 1);
    CU_ASSERT_EQUAL(seen.opens[PG_PROTO_PMI1], 0);
    send_str(fullinit);
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI2], 2);
    CU_ASSERT_EQUAL(seen.last_cmd, PG_CMD_PMI2_FULLINIT);
    CU_ASSERT_EQUAL(seen.closed, 0);
    close_conn();
}

static void test_message_split_in_single_bytes(void)
{
    const char *line = "cmd=get_maxes\ncmd=get_appnum\n";

    open_conn(0, &both);
    for (size_t i = 0; i < strlen(line); i++) {
        send_peer(line + i, 1);
        if (i < 13)
            CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 0);
    }
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 2);
    CU_ASSERT_EQUAL(seen.last_cmd, PG_CMD_PMI1_GET_APPNUM);
    CU_ASSERT_EQUAL(seen.traced_in, strlen(line));
    close_conn();
}

static void test_bad_pmi2_length_closes_with_reason(void)
{
    open_conn(3, &both);
    send_str("cmd=init pmi_version=2 pmi_subversion=0\n");
    send_str("  x12cmd=finalize;");
    CU_ASSERT_EQUAL(seen.closed, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen.reason, "cannot be framed"));
    CU_ASSERT_PTR_NULL(conn);
    close_conn();
}

/* A line over the limit goes to the handler as soon as its head is
 * there, flagged too long (the handler answers it), before its end
 * arrives; the rest is dropped up to its '\n', and the connection goes on
 * with the next message. */
static void test_overlong_line_is_answered_and_skipped(void)
{
    char line[3 * PG_PMI1_LINE_MAX];

    open_conn(0, &both);
    send_str("cmd=init pmi_version=1 pmi_subversion=1\n");
    memcpy(line, "cmd=put kvsname=k key=a value=", 30);
    memset(line + 30, 'x', sizeof(line) - 30);
    send_peer(line, sizeof(line)); /* no '\n' yet */
    CU_ASSERT_EQUAL(seen.closed, 0);
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 2);
    CU_ASSERT_EQUAL(seen.last_cmd, PG_CMD_PMI1_PUT);
    CU_ASSERT_EQUAL(seen.last_parse_rc, PG_WIRE_ELINE_TOO_LONG);
    send_peer(line, 100);
    send_str("xx\ncmd=get_maxes\n");
    CU_ASSERT_EQUAL(seen.closed, 0);
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 3);
    CU_ASSERT_EQUAL(seen.last_cmd, PG_CMD_PMI1_GET_MAXES);
    CU_ASSERT_EQUAL(seen.last_parse_rc, PG_WIRE_OK);
    close_conn();
}

static void test_malformed_message_reaches_the_handler(void)
{
    open_conn(0, &both);
    send_str("cmd=init pmi_version=1 pmi_subversion=1\n");
    send_str(
        "cmd=put kvsname=k "
        "key=0123456789012345678901234567890123456789012345678901234567890123456789 value=1\n");
    CU_ASSERT_EQUAL(seen.closed, 0);
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 2);
    CU_ASSERT_EQUAL(seen.last_parse_rc, PG_WIRE_EKEY_TOO_LONG);
    close_conn();
}

static void test_port_connection_identifies_by_initack(void)
{
    open_conn(-1, &both);
    send_str("cmd=initack pmiid=2\n");
    CU_ASSERT_EQUAL(seen.identified_rank, 2);
    CU_ASSERT_EQUAL_FATAL(seen.closed, 0);
    CU_ASSERT_EQUAL(pg_conn_rank(conn), 2);
    CU_ASSERT_EQUAL(seen.owner_opened, 1);
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 1); /* the handler answers initack */
    close_conn();
}

static void test_port_connection_identifies_by_fullinit(void)
{
    open_conn(-1, &both);
    send_str("cmd=init pmi_version=2 pmi_subversion=0\n");
    CU_ASSERT_EQUAL(seen.owner_opened, 0); /* no rank yet */
    send_str("    38cmd=fullinit;pmirank=1;threaded=FALSE;");
    CU_ASSERT_EQUAL(seen.identified_rank, 1);
    CU_ASSERT_EQUAL(seen.owner_opened, 1);
    close_conn();
}

static void test_port_connection_refused_rank(void)
{
    open_conn(-1, &both);
    seen.refuse_identify = 1;
    send_str("cmd=initack pmiid=99\n");
    CU_ASSERT_EQUAL(seen.closed, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen.reason, "claimed rank 99"));
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 0);
    close_conn();
}

static void test_port_connection_must_identify_first(void)
{
    open_conn(-1, &both);
    send_str("cmd=get_maxes\n");
    CU_ASSERT_EQUAL(seen.closed, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen.reason, "before saying which rank"));
    close_conn();
}

static void test_eof_before_finalize_is_reported(void)
{
    open_conn(0, &both);
    send_str("cmd=init pmi_version=1 pmi_subversion=1\n");
    close(peer);
    peer = -1;
    spin();
    CU_ASSERT_EQUAL(seen.closed, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen.reason, "before finalize"));
    close_conn();
}

static void test_eof_after_finalize_is_clean(void)
{
    open_conn(0, &both);
    send_str("cmd=init pmi_version=1 pmi_subversion=1\ncmd=finalize\n");
    CU_ASSERT_EQUAL(seen.finalized, 1);
    close(peer);
    peer = -1;
    spin();
    CU_ASSERT_EQUAL(seen.closed, 1);
    CU_ASSERT_STRING_EQUAL(seen.reason, "(clean)");
    close_conn();
}

static void test_handler_close_flushes_reply_first(void)
{
    char buf[64];

    open_conn(0, &both);
    seen.reply_close = 1;
    send_str("cmd=init pmi_version=1 pmi_subversion=1\n");
    CU_ASSERT_EQUAL(seen.closed, 1);
    CU_ASSERT_EQUAL(read_peer(buf, sizeof(buf)), 3);
    CU_ASSERT_EQUAL(read_peer(buf, sizeof(buf)), 0); /* then EOF */
    close_conn();
}

static void test_unserved_protocol_is_closed_with_reason(void)
{
    open_conn(4, &pmi1_only);
    send_str("cmd=init pmi_version=2 pmi_subversion=0\n");
    CU_ASSERT_EQUAL(seen.closed, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen.reason, "PMI-2"));
    close_conn();
}

/* The handler reaches the job only through its peer's ops, which the
 * connection hands to its owner with the rank. */
static void test_peer_ops_reach_the_owner(void)
{
    open_conn(5, &both);
    send_str("cmd=init pmi_version=1 pmi_subversion=1\ncmd=abort exitcode=7\n");
    CU_ASSERT_PTR_EQUAL(seen.job_seen, job.kvsname);
    CU_ASSERT_EQUAL(seen.abort_code, 7);
    CU_ASSERT_EQUAL(seen.abort_rank, 5);
    CU_ASSERT_STRING_EQUAL(seen.log, "rank 5 leaves");
    CU_ASSERT(seen.served >= 1); /* the owner re-arms its engine timer after a batch */
    close_conn();
}

static void test_port_connection_identifies_by_srcid(void)
{
    open_conn(-1, &both);
    send_str("cmd=init pmi_version=2 pmi_subversion=0\n");
    send_str("    36cmd=fullinit;srcid=3;threaded=FALSE;");
    CU_ASSERT_EQUAL(seen.identified_rank, 3);
    CU_ASSERT_EQUAL(pg_conn_rank(conn), 3);
    close_conn();
}

static void test_free_inside_on_message_is_safe(void)
{
    open_conn(0, &both);
    seen.free_in_message = 1;
    send_str("cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\n");
    CU_ASSERT_EQUAL(seen.messages[PG_PROTO_PMI1], 1); /* nothing after the free */
    CU_ASSERT_PTR_NULL(conn);
    close_conn();
}

static const pg_cunit_test_t conn_tests[] = {
    { "PMI-1 init selects the PMI-1 handler", test_pmi1_init_picks_pmi1 },
    { "PMI-2 init selects PMI-2 for the whole connection", test_pmi2_init_picks_pmi2_for_the_rest },
    { "messages split into single bytes arrive whole", test_message_split_in_single_bytes },
    { "a non-digit PMI-2 length closes the connection", test_bad_pmi2_length_closes_with_reason },
    { "a line over the limit is answered before its end and skipped",
      test_overlong_line_is_answered_and_skipped },
    { "an over-long key is the handler's to answer", test_malformed_message_reaches_the_handler },
    { "PMI_PORT: initack pmiid= names the rank", test_port_connection_identifies_by_initack },
    { "PMI_PORT: fullinit pmirank= names the rank", test_port_connection_identifies_by_fullinit },
    { "PMI_PORT: a refused rank closes the connection", test_port_connection_refused_rank },
    { "PMI_PORT: commands before identification are refused", test_port_connection_must_identify_first },
    { "EOF before finalize is reported", test_eof_before_finalize_is_reported },
    { "a held init waits for the release", test_held_init_waits_for_release },
    { "EOF while held in init is reported", test_eof_while_held_is_reported },
    { "EOF after finalize is clean", test_eof_after_finalize_is_clean },
    { "PG_HANDLER_CLOSE writes the reply, then closes", test_handler_close_flushes_reply_first },
    { "a protocol without handler is closed with a reason", test_unserved_protocol_is_closed_with_reason },
    { "freeing the connection inside on_message is safe", test_free_inside_on_message_is_safe },
    { "the peer's job_abort and log reach the owner", test_peer_ops_reach_the_owner },
    { "PMI_PORT: fullinit srcid= names the rank", test_port_connection_identifies_by_srcid },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "PMI connection layer", conn_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
