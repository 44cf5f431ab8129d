#!/bin/sh
# `pmigate status` on a job stuck on purpose (tests/integration/status_ranks):
# the ranks' counts, the fence naming the ranks it waits for, the held
# lookup and get, the job a rank spawned; found by pmigate's pid and by
# its directory; --watch repeating and ending with its job; refused to
# another user (the directory's mode, and SO_PEERCRED behind it); under
# pmigate proxy each node's part; and nothing once the job is gone.  Then
# the wire-up progress line: on a terminal (script(1)'s pty) while a fence
# waits, never when stderr is not one.
. "$(dirname "$0")/hi_lib.sh"
RANKS=$top_builddir/tests/integration/status_ranks
MPIRUN=mpirun.openmpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
skip_unless_built "$RANKS"
for tool in script runuser "$MPIRUN"; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (bsdutils, util-linux, openmpi-bin)"
done
[ $failures -eq 0 ] || finish

job_pid=
cleanup() {
    [ -n "$job_pid" ] && kill "$job_pid" 2>/dev/null && wait "$job_pid" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# until_status WHAT PATTERN [ARGS]: asks every 0.2 s (60 s at most) until
# the answer has a line matching PATTERN; the last answer in $WORK/status.
until_status() {
    what=$1 pattern=$2
    shift 2
    i=0
    while [ $i -lt 300 ]; do
        "$PMIGATE" status "$@" >"$WORK/status" 2>&1
        grep -qE "$pattern" "$WORK/status" && { pass "$what"; return 0; }
        sleep 0.2
        i=$((i + 1))
    done
    fail "$what: no line matching '$pattern'"
    cat "$WORK/status"
    return 1
}

# -- a stuck job under pmigate run ---------------------------------------------
STATUS_RANKS_SPAWN=1 STATUS_RANKS_WAIT=120 "$PMIGATE" run -n 4 "$RANKS" >"$WORK/job.out" 2>&1 &
job_pid=$!
until_status "the fence names the ranks it waits for" \
    '^  fence 1: waiting for ranks 0, 1, 3 \(of 4\), started [0-9.]+ s ago$' "$job_pid"
grep -qE "^pmigate $job_pid on [^ ]+: run -n 4 [^ ]*status_ranks, up [0-9.]+ s$" "$WORK/status" &&
    pass "the header names pmigate's pid, the host and the command" ||
    { fail "no header line"; cat "$WORK/status"; }
# rank 2 may be in the fence before the others have even initialised: each
# state is waited for (every one lasts until the ranks' waits end)
until_status "the ranks' counts" \
    "^job 0 kvs_${job_pid}_0: 4 ranks: 4 launched, 4 initialised, 0 finalized, 0 exited$" "$job_pid"
until_status "the name-service wait" \
    '^  rank 0 waits for the name "nobody-publishes" to be published, [0-9.]+ s$' "$job_pid"
until_status "the held get" '^  rank 1 waits for key "never-put" of rank 3, [0-9.]+ s$' "$job_pid"
grep -qE "^job 1 kvs_${job_pid}_1 \(spawned by rank 2 of kvs_${job_pid}_0\): 1 rank: 1 launched, 0 initialised, 0 finalized, 0 exited$" "$WORK/status" &&
    pass "the spawned job" || { fail "no spawned-job line"; cat "$WORK/status"; }

# the same job found three ways: all jobs, by pid, by directory
dir=$(ls -d "${TMPDIR:-/tmp}"/pmigate.* 2>/dev/null | while read -r d; do
    "$PMIGATE" status "$d" 2>/dev/null | grep -q "^pmigate $job_pid " && echo "$d"; done | head -n 1)
if [ -n "$dir" ] && "$PMIGATE" status "$dir" | grep -q '^  fence 1: waiting for ranks 0, 1, 3 (of 4)' &&
    "$PMIGATE" status | grep -q "^pmigate $job_pid "; then
    pass "found by its directory ($dir) and among all jobs"
else
    fail "by directory '$dir' or among all jobs"
fi

# --watch: one report per interval, as long as asked
timeout 3 "$PMIGATE" status --watch --interval 0.5 "$job_pid" >"$WORK/watch" 2>&1
n=$(grep -c "^pmigate $job_pid " "$WORK/watch")
[ "$n" -ge 3 ] && pass "--watch --interval 0.5 repeats ($n reports in 3 s)" ||
    { fail "--watch gave $n reports in 3 s"; head -n 20 "$WORK/watch"; }

# another user: the directory (0700) keeps it out, and behind it the
# endpoint checks the peer's uid
runuser -u nobody -- "$PMIGATE" status "$dir" >"$WORK/other" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'permission denied: not your job' "$WORK/other" &&
    pass "another user cannot reach the job" || { fail "another user: exit $rc"; cat "$WORK/other"; }
chmod 0711 "$dir" && chmod 0666 "$dir/status"
runuser -u nobody -- "$PMIGATE" status "$dir" >"$WORK/other" 2>&1
rc=$?
chmod 0700 "$dir" && chmod 0600 "$dir/status"
[ $rc -ne 0 ] && grep -q 'refused: this pmigate job belongs to another user' "$WORK/other" &&
    pass "...and is refused by the endpoint when it does (SO_PEERCRED)" ||
    { fail "another user through an opened directory: exit $rc"; cat "$WORK/other"; }

# the job ends: --watch of it ends too, and it is no longer found.  The job
# is ended once --watch has reported on it (one that started after the end
# would test nothing), and --watch has 5 s to notice.
"$PMIGATE" status --watch --interval 0.2 "$job_pid" >"$WORK/watch" 2>&1 &
watch_pid=$!
watch_reported() { grep -q "^pmigate $job_pid " "$WORK/watch"; }
watch_ended() { ! kill -0 "$watch_pid" 2>/dev/null; }
wait_for 60 watch_reported || { fail "--watch gave no report in 60 s"; cat "$WORK/watch"; }
kill "$job_pid"
wait "$job_pid" 2>/dev/null
job_pid=
if ! wait_for 5 watch_ended; then
    kill "$watch_pid"
    fail "--watch went on after its job ended"
else
    wait "$watch_pid"
    rc=$?
    [ $rc -eq 0 ] && pass "--watch ends (0) when its job does" || fail "--watch exited $rc"
fi
"$PMIGATE" status "$dir" >"$WORK/gone" 2>&1
[ $? -eq 1 ] && pass "an ended job: exit 1, $(cat "$WORK/gone")" || { fail "status of an ended job"; cat "$WORK/gone"; }

# -- under pmigate proxy: each node's answer shows the whole job --------------------
STATUS_RANKS_WAIT=120 timeout -k 5 150 "$MPIRUN" --oversubscribe -np 2 "$PMIGATE" proxy -n 4 "$RANKS" \
    >"$WORK/job.out" 2>&1 &
job_pid=$!
until_status "under the proxy, node 1 names its missing rank 3" \
    '^  fence 1: waiting for rank 3 \(of 4; 2 on this node\), started'
grep -qE '^pmigate [0-9]+ on [^ ]+, node 0 of 2: proxy -n 4 ' "$WORK/status" &&
    grep -qE '^pmigate [0-9]+ on [^ ]+, node 1 of 2: proxy -n 4 ' "$WORK/status" &&
    grep -qE '^job 0 [^ ]+: ranks 2-3 of 4 on this node: 2 launched, 2 initialised, 0 finalized, 0 exited$' "$WORK/status" &&
    [ "$(grep -cE '^pmigate [0-9]+ on [^ ]+, node 0 of 2: ' "$WORK/status")" -eq 2 ] &&
    [ "$(grep -cE '^pmigate [0-9]+ on [^ ]+, node 1 of 2: ' "$WORK/status")" -eq 2 ] &&
    pass "both proxies answer, each with both nodes' ranks" || { fail "the proxies' reports"; cat "$WORK/status"; }
kill "$job_pid"
wait "$job_pid" 2>/dev/null
job_pid=

# -- the progress line -----------------------------------------------------------
slow='if [ "$PMI_RANK" = 1 ]; then sleep 3; fi; exec "$0" probe --pmi2'
timeout 60 script -qec "\"$PMIGATE\" run -n 3 sh -c '$slow' \"$PMIGATE\"" /dev/null >"$WORK/tty" 2>&1
if grep -qa 'wire-up: 2/3 ranks in fence 1, [0-9.]* s' "$WORK/tty" &&
    grep -qa '^.*probe: PMI-2 .* put/fence/get ok' "$WORK/tty"; then
    pass "on a terminal: 'wire-up: 2/3 ranks in fence 1, ...' while rank 1 is late, then erased"
else
    fail "no progress line on a terminal"
    cat -v "$WORK/tty" | head -n 10
fi
run_job 60 -n 3 sh -c "$slow" "$PMIGATE"
if [ $rc -eq 0 ] && ! grep -q 'wire-up' "$WORK/out"; then
    pass "no progress line when stderr is not a terminal"
else
    fail "stderr not a terminal: exit $rc, or a progress line"
    cat -v "$WORK/out"
fi
finish
