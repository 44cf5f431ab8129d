/*
 * gw_fakegate: `pmigate run` with a minimal PMI-1 handler made for tests, so
 * the launcher's PMI life-cycle rules (abort code, a rank lost before
 * finalize, a framing error failing its rank) are tested end to end before
 * the real pmi1/ handler exists, and keep being tested apart from it.
 *
 * The handler answers init, takes "cmd=abort exitcode=N" to its host's
 * job_abort,
 * and acknowledges finalize; anything else gets "cmd=error rc=-1".
 * Usage: gw_fakegate <pmigate run arguments>
 */
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/util/pg_cli.h"
#include "gateway/run/pg_run.h"

static int reply(pg_peer_t *peer, const char *line)
{
    return peer->ops->reply_send(peer, line, strlen(line)) == 0 ? PG_HANDLER_OK : PG_HANDLER_FAIL;
}

static int fake_message(pg_peer_t *peer, pg_msg_t *msg, int parse_rc)
{
    long code = 1;

    (void)parse_rc;
    switch (msg->cmd) {
    case PG_CMD_PMI1_INIT:
        return reply(peer, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    case PG_CMD_PMI1_ABORT:
        (void)pg_str_to_long(pg_msg_get(msg, "exitcode"), &code);
        peer->ops->job_abort(peer, (int)code, "test abort");
        return PG_HANDLER_OK;
    case PG_CMD_PMI1_FINALIZE:
        peer->ops->peer_finalize(peer);
        reply(peer, "cmd=finalize_ack rc=0\n");
        return PG_HANDLER_CLOSE;
    default:
        return reply(peer, "cmd=error rc=-1\n");
    }
}

static const pg_proto_handler_t fake_pmi1 = { .name = "PMI-1", .on_message = fake_message };
static const pg_handler_table_t handlers = { { [PG_PROTO_PMI1] = &fake_pmi1 } };

int main(int argc, char **argv)
{
    struct event_base *base = event_base_new();
    pg_run_opts_t opts;
    pg_run_t *run;
    char err[256];
    int status = 1;

    if (base == NULL || pg_cli_parse_run(argc - 1, argv + 1, &opts, err, sizeof(err)) != 0) {
        fprintf(stderr, "gw_fakegate: %s\n", err);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    run = pg_run_new(base, &opts, &handlers);
    if (run != NULL)
        status = pg_run_dispatch(run);
    pg_run_free(run);
    pg_run_opts_free(&opts);
    event_base_free(base);
    return status;
}
