#!/bin/sh
# Events, queries and logging of libpmix under a plain `pmigate run -n 4`
# (tests/pmix/pmix_events): registration callbacks, notify between ranks,
# handler chaining, deregistration, bad arguments, queries against the job,
# PMIx_Log on pmigate's stderr; then a peer's PMIx_Abort and a peer killed
# before finalize, which the other ranks' handlers must hear of.
. "$(dirname "$0")/../lib.sh"
PROG=$top_builddir/tests/pmix/pmix_events
make_workdir pg_pmix_events
skip_unless_built "$PMIGATE" "$PROG"

# the checks a user relies on must have run on every rank that makes them
need_pass() {
    check=$1 want=$2
    got=$(grep -c "^PASS $check " "$WORK/out")
    [ "$got" -eq "$want" ] || fail "api: $check passed on $got rank(s), expected $want"
}

run_job 120 --trace "$WORK/api.trace" -n 4 "$PROG" api
if [ $rc -ne 0 ] || grep -q '^FAIL' "$WORK/out"; then
    cat "$WORK/out"
    fail "api: pmigate exited $rc"
fi
need_pass register_callback 4
need_pass register_blocking_returns_id 4
need_pass notify_reaches_peer 4
need_pass custom_range_target_gets_it 1
need_pass custom_range_others_do_not 3
need_pass chain_order 1
need_pass chain_results 1
need_pass deregister_callback 1
need_pass deregistered_handler_silent 1
need_pass deregister_unknown_id 4
need_pass query_job_size 4
need_pass pmix.qry.ptable 4
need_pass pmix.qry.lptable 4
need_pass query_partial_success 4
need_pass log_partial 4
need_pass finalize_is_no_lost_connection 4
for r in 0 1 2 3; do
    # on pmigate's stderr, named by rank, once per successful channel
    n=$(grep -c "rank $r logged: hello from log $r\$" "$WORK/out")
    [ "$n" -eq 3 ] || fail "api: rank $r's PMIx_Log lines: $n, expected 3"
done
echo "api: $(grep -c '^PASS' "$WORK/out") checks passed"
# the trace shows the new messages, and replays (events come unasked)
"$PMIGATE" trace show "$WORK/api.trace" >"$WORK/show" 2>&1 || fail "api: trace show failed"
for what in "notify #" "event #0" "query #" "log #"; do
    grep -q " $what" "$WORK/show" || fail "api: no '$what' in the trace"
done
timeout -k 5 120 "$PMIGATE" replay --fast "$WORK/api.trace" >"$WORK/replay" 2>&1 ||
    { cat "$WORK/replay"; fail "api: the trace does not replay"; }

# PMIx_Abort: the job ends with the abort's code, after the others heard of it
run_job 120 -n 4 "$PROG" abort
[ $rc -eq 7 ] || fail "abort: pmigate exited $rc, expected 7"
n=$(grep -c "^EVENT rank [012] got PMIX_ERR_PROC_ABORTED source 3 affected 1:3 exit 7 text 'rank 3 gives up'" "$WORK/out")
[ "$n" -eq 3 ] || { cat "$WORK/out"; fail "abort: $n of 3 ranks heard of rank 3's abort"; }

# a rank killed before finalize
run_job 120 -n 4 "$PROG" kill
[ $rc -ne 0 ] || fail "kill: pmigate exited 0"
n=$(grep -c "^EVENT rank [012] got PMIX_ERR_PROC_TERM_WO_SYNC source 3 affected 1:3" "$WORK/out")
[ "$n" -eq 3 ] || { cat "$WORK/out"; fail "kill: $n of 3 ranks heard that rank 3 died"; }
finish
