#!/bin/sh
# Events, queries and logging of libpmix under a plain `pmigate run -n 4`
# (tests/pmix/pmix_events): registration callbacks, notify between ranks,
# handler chaining, deregistration, bad arguments, queries against the job,
# PMIx_Log on pmigate's stdout, stderr and syslog; then a peer's PMIx_Abort,
# a PMI-1 / PMI-2 peer's abort, a peer killed before finalize, which the
# other ranks' handlers must hear of, and the end of spawned jobs.
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

# stdout apart, to see where PMIx_Log's lines went
timeout -k 5 120 "$PMIGATE" run --trace "$WORK/api.trace" -n 4 "$PROG" api \
    >"$WORK/stdout" 2>"$WORK/stderr"
rc=$?
cat "$WORK/stdout" "$WORK/stderr" >"$WORK/out"
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
need_pass log_stdout 4
need_pass log_syslog 4
need_pass log_email_not_served 4
need_pass log_nb_once 4
need_pass finalize_is_no_lost_connection 4
for r in 0 1 2 3; do
    # on pmigate's stderr, named by rank, once per successful channel
    n=$(grep -c "^pmigate: rank $r logged: hello from log $r\$" "$WORK/stderr")
    [ "$n" -eq 3 ] || fail "api: rank $r's PMIx_Log lines on stderr: $n, expected 3"
    # on pmigate's stdout: once (PMIX_LOG_ONCE took stderr), never on stderr
    n=$(grep -c "^pmigate: rank $r logged: to stdout from log $r\$" "$WORK/stdout")
    [ "$n" -eq 1 ] || fail "api: rank $r's PMIx_Log lines on stdout: $n, expected 1"
    ! grep -q "to stdout from log" "$WORK/stderr" || fail "api: a stdout log line on stderr"
    # the gateway's time in front when asked (PMIX_LOG_GENERATE_TIMESTAMP)
    grep -Eq "^pmigate: rank $r logged: \[[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\] stamped from log $r\$" \
        "$WORK/stdout" || fail "api: rank $r's stamped log line is missing"
    # a newline in the text cannot start a line of its own
    grep -Fqx "pmigate: rank $r logged: two\\nlines" "$WORK/stdout" ||
        fail "api: rank $r's two-line log text was not kept on one escaped line"
done
! grep -q '^lines' "$WORK/stdout" || fail "api: a log text forged a line of its own"
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

# a PMI-1, then a PMI-2 rank aborts a mixed job: its PMIx ranks hear of it
# as they hear of a PMIx_Abort (PMI-2's abort carries no code: 1)
run_job 120 -n 3 "$PROG" watch : -n 1 "$top_builddir/tests/pmix/pmi1_aborter"
[ $rc -eq 7 ] || { cat "$WORK/out"; fail "pmi1 abort: pmigate exited $rc, expected 7"; }
# (PMI-1's abort carries no message on the wire: MPICH's libpmi sends none)
n=$(grep -c "^EVENT rank [012] got PMIX_ERR_PROC_ABORTED source 3 affected 1:3 exit 7 text ''" "$WORK/out")
[ "$n" -eq 3 ] || { cat "$WORK/out"; fail "pmi1 abort: $n of 3 PMIx ranks heard of it"; }
run_job 120 -n 3 "$PROG" watch : -n 1 "$top_builddir/tests/pmix/pmi2_aborter"
[ $rc -eq 1 ] || { cat "$WORK/out"; fail "pmi2 abort: pmigate exited $rc, expected 1"; }
n=$(grep -c "^EVENT rank [012] got PMIX_ERR_PROC_ABORTED source 3 affected 1:3 exit 1 text 'rank 3 gives up'" "$WORK/out")
[ "$n" -eq 3 ] || { cat "$WORK/out"; fail "pmi2 abort: $n of 3 PMIx ranks heard of it"; }

# spawned jobs asked for with PMIX_NOTIFY_COMPLETION: PMIX_EVENT_JOB_END to
# every rank of the spawner's job, with the status; the job exiting 3 ends all
run_job 120 -n 2 "$PROG" spawn_end
[ $rc -eq 3 ] || { cat "$WORK/out"; fail "spawn_end: pmigate exited $rc, expected 3"; }
if grep -q '^FAIL' "$WORK/out"; then
    cat "$WORK/out"
    fail "spawn_end: a check failed"
fi
for r in 0 1; do
    for st in 0 3; do
        exit=-1 failed=-1
        [ $st -eq 3 ] && exit=3 failed=0
        grep -Eq "^JOBEND rank $r nspace [^ ]+ status $st affected-job 1 stamped 1 exit $exit failed $failed\$" \
            "$WORK/out" || { cat "$WORK/out"; fail "spawn_end: rank $r missed the end (status $st)"; }
    done
done

# the same in programs that keep SIGTERM's default action: the gateway
# gives their handlers time before it brings the job down
run_job 120 -n 4 "$PROG" abort_sigterm
[ $rc -eq 7 ] || fail "abort_sigterm: pmigate exited $rc, expected 7"
n=$(grep -c "^EVENT rank [012] got PMIX_ERR_PROC_ABORTED source 3 " "$WORK/out")
[ "$n" -eq 3 ] || { cat "$WORK/out"; fail "abort_sigterm: $n of 3 ranks ran their handler"; }
run_job 120 -n 4 "$PROG" kill_sigterm
[ $rc -ne 0 ] || fail "kill_sigterm: pmigate exited 0"
n=$(grep -c "^EVENT rank [012] got PMIX_ERR_PROC_TERM_WO_SYNC source 3 affected 1:3" "$WORK/out")
[ "$n" -eq 3 ] || { cat "$WORK/out"; fail "kill_sigterm: $n of 3 ranks ran their handler"; }

# a rank killed before finalize
run_job 120 -n 4 "$PROG" kill
[ $rc -ne 0 ] || fail "kill: pmigate exited 0"
n=$(grep -c "^EVENT rank [012] got PMIX_ERR_PROC_TERM_WO_SYNC source 3 affected 1:3" "$WORK/out")
[ "$n" -eq 3 ] || { cat "$WORK/out"; fail "kill: $n of 3 ranks heard that rank 3 died"; }
finish
