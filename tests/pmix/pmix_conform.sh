#!/bin/sh
# The calls OpenPMIx's own examples make, the way they make them
# (tests/pmix/pmix_conform.c), under a plain `pmigate run`; then
# process monitoring that ends jobs: a PMIx rank's heartbeat or file watch,
# and `run --heartbeat` watching PMI-1 and PMI-2 ranks (alone and beside a
# PMIx rank that hears the alert).  Every program it needs is built by
# `make check`: one that is missing is a failure, not a skip.
. "$(dirname "$0")/../lib.sh"
PROG=$top_builddir/tests/pmix/pmix_conform
STALL1=$top_builddir/tests/pmix/pmi1_stall
STALL2=$top_builddir/tests/pmix/pmi2_stall
make_workdir pg_pmix_conform
for built in "$PMIGATE" "$PROG" "$STALL1" "$STALL2"; do
    [ -x "$built" ] || { echo "FAIL: $built is not built"; exit 1; }
done

# need_pass CHECK N: CHECK printed PASS on N ranks
need_pass() {
    got=$(grep -c "^PASS $1 " "$WORK/out")
    [ "$got" -eq "$2" ] || fail "$label: $1 passed on $got rank(s), expected $2"
}

# run_mode LABEL TIMEOUT ARGS...: the job's stdout in $WORK/out, stderr in
# $WORK/err, status in $rc
run_mode() {
    label=$1 t=$2
    shift 2
    timeout -k 5 "$t" "$PMIGATE" run "$@" >"$WORK/out" 2>"$WORK/err"
    rc=$?
}

# ---- cause 3: the ABI level before PMIx_Init -------------------------------
run_mode abi 60 -n 2 "$PROG" abi
[ $rc -eq 0 ] && ! grep -q '^FAIL' "$WORK/out" || { cat "$WORK/out" "$WORK/err"; fail "abi: exited $rc"; }
need_pass abi_query_before_init 2
need_pass abi_query_with_gateway_keys 2

# ---- causes 1, 2, 4, 5, 6, 7, 8: a job of 4 ranks each --------------------------
# scenario CHECKS...: runs `pmix_conform SCENARIO` on 4 ranks; CHECKS are
# CHECK:N pairs (passed on N ranks)
scenario() {
    s=$1
    shift
    run_mode "$s" 120 -n 4 "$PROG" "$s" "$WORK"
    if [ $rc -ne 0 ] || grep -q '^FAIL' "$WORK/out"; then
        cat "$WORK/out"
        grep -v xxxxxxxxxx "$WORK/err"
        fail "$s: pmigate exited $rc"
    fi
    for pair in "$@"; do
        need_pass "${pair%:*}" "${pair#*:}"
    done
    echo "$s: $(grep -c '^PASS' "$WORK/out") checks passed"
}

scenario print print_query_results:4
scenario deregister deregister_unknown_calls_back:4
scenario invite invite_listing_leader:1 construct_complete_releases_joiner:3 \
    fence_over_group_name:4 invited_group_destructs:4
scenario group-info construct_with_group_info:4 group_info_shared_with_members:4 \
    group_info_of_other_cid_not_found:4
scenario groups-query query_num_groups:1 query_group_names:1 query_group_membership:1 \
    query_num_groups_after_destruct:1
scenario checkpoint declare_preemptible_and_checkpoint:4 query_job_preemptible:1 \
    query_checkpoint_methods:1 checkpoint_request:1 checkpoint_by_signal:2 checkpoint_by_event:2
scenario watches monitor_heartbeat_accepted:1 beating_rank_not_alerted:1 \
    heartbeat_alert_to_self:1 monitor_cancel:1 monitor_file_accepted:1 \
    growing_file_not_alerted:1 file_alert_names_file:1 job_hears_alerts:1
# the watches that alerted named their ranks; the job went on (APP_CONTROL)
grep -q '^pmigate: rank 3 stalled: no heartbeat for [0-9]* s (PMIx_Process_monitor, id beats); the job goes on' \
    "$WORK/err" || fail "watches: rank 3's heartbeat alert was not logged"
grep -q "^pmigate: rank 2 stalled: $WORK/progress.2 did not change for [0-9]* s" "$WORK/err" ||
    fail "watches: rank 2's file alert was not logged"
scenario log log_long_text:1 log_trailing_newline:1
# a 2 MB text is one whole line on pmigate's stderr (it used to stop near 1 KB)
big=$(grep '^pmigate: rank 0 logged: xxxx' "$WORK/err" | head -n 1)
[ "${#big}" -eq $((24 + 2097152 + 3)) ] && [ "${big%END}" != "$big" ] ||
    fail "log: the 2 MB log text came out as ${#big} bytes"
# the newline that ends a text is not shown (it was, as a literal \n)
grep -qx 'pmigate: rank 0 logged: ends with a newline' "$WORK/err" ||
    fail "log: a log text's ending newline shows"

# ---- cause 7: a watch that kills the job -------------------------------------
for mode in monitor-kill file-kill; do
    run_mode $mode 90 -n 2 "$PROG" $mode "$WORK/kill.progress"
    [ $rc -eq 124 ] || { cat "$WORK/out" "$WORK/err"; fail "$mode: exited $rc, want 124"; }
    need_pass monitor_accepted 1
    need_pass heard_alert_before_kill 1
    if [ $mode = monitor-kill ]; then
        what='no heartbeat for [0-9]* s'
    else
        what="$WORK/kill.progress did not change for [0-9]* s"
    fi
    grep -q "^pmigate: rank 1 stalled: $what (PMIx_Process_monitor, id kill-me); killing the job (exit status 124)" \
        "$WORK/err" || { cat "$WORK/err"; fail "$mode: no line naming rank 1"; }
done

# ---- --heartbeat: PMI-1 and PMI-2 ranks that go silent ----------------------
for stall in "$STALL1" "$STALL2"; do
    name=$(basename "$stall")
    run_mode "heartbeat $name" 60 --heartbeat 3 -n 2 "$stall"
    [ $rc -eq 124 ] || { cat "$WORK/err"; fail "--heartbeat $name: exited $rc, want 124"; }
    grep -q '^pmigate: rank 1 stalled: no PMI message or output for [0-9]* s (--heartbeat); killing the job (exit status 124)' \
        "$WORK/err" || { cat "$WORK/err"; fail "--heartbeat $name: no line naming rank 1"; }
    # beside a PMIx rank, which hears it as PMIX_MONITOR_HEARTBEAT_ALERT
    run_mode "heartbeat mixed $name" 60 --heartbeat 3 -n 1 "$PROG" listen 1 : -n 1 "$stall"
    [ $rc -eq 124 ] || { cat "$WORK/out" "$WORK/err"; fail "--heartbeat mixed $name: exited $rc"; }
    need_pass heard_heartbeat_alert 1
done
# ranks that keep writing (every quarter second: a loaded machine's delays
# stay far below the heartbeat) outlive the heartbeat many times over
run_mode "heartbeat alive" 60 --heartbeat 3 -n 2 \
    sh -c 'i=0; while [ $i -lt 40 ]; do echo "$i"; sleep 0.25; i=$((i + 1)); done'
[ $rc -eq 0 ] || { cat "$WORK/err"; fail "--heartbeat: ranks that write were killed ($rc)"; }
! grep -q stalled "$WORK/err" || fail "--heartbeat: a rank that writes was called stalled"
finish
