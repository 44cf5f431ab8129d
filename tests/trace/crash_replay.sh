#!/bin/sh
# A trace records how the job's ranks ended (docs/trace-format.md,
# "Records"), so the replay of a crashed job reproduces the crash: rank 1
# dies of SIGSEGV while rank 0 waits in a barrier; the trace has rank 1's
# exit and the job's status, and the replay makes rank 1's stub die the
# same way, gets the same failed barrier and the same exit status (it used
# to wait for that reply: HANG).  A trace cut in the middle of a line is
# read as far as its last whole line, and the tools say where it was cut.
. "$top_srcdir/tests/trace/trace_lib.sh"
SCRIPT_PROG=$top_builddir/tests/integration/pmi_script
[ -x "$SCRIPT_PROG" ] || fail "tests/integration/pmi_script was not built"

printf '%s\n' 'send1 cmd=init pmi_version=1 pmi_subversion=1' 'expect rc=0' \
    'send1 cmd=barrier_in' 'expect cmd=barrier_out' 'expect never-comes' >"$TMP/s0"
printf '%s\n' 'send1 cmd=init pmi_version=1 pmi_subversion=1' 'expect rc=0' >"$TMP/s1"
"$PMIGATE" run --trace "$TMP/crash.trace" -n 2 sh -c \
    'ulimit -c 0
     if [ "$PMI_RANK" = 1 ]; then
         "$0" "$1"1
         # die once rank 0 waits in the barrier (its barrier_in is in the
         # trace: the recorder writes it out when the loop goes idle)
         n=0
         until grep -q "^[0-9]* 0 [0-9]* pmi1 C cmd=barrier_in" "$2" || [ $n -ge 200 ]; do
             n=$((n + 1))
             sleep 0.05
         done
         kill -SEGV $$
     fi
     exec "$0" "$1"0' \
    "$SCRIPT_PROG" "$TMP/s" "$TMP/crash.trace" >"$TMP/rec.out" 2>&1
expect_status 139 $? "the recorded job (rank 1 dies of SIGSEGV)"
grep -q '^#! [0-9]* exit rank=1 signal=11$' "$TMP/crash.trace" ||
    { cat "$TMP/crash.trace" >&2; fail "the trace does not record rank 1's death"; }
grep -q '^#! [0-9]* end status=139$' "$TMP/crash.trace" ||
    { cat "$TMP/crash.trace" >&2; fail "the trace does not record the job's exit status"; }

"$PMIGATE" replay --timeout 30 "$TMP/crash.trace" >"$TMP/replay.out" 2>&1
st=$?
[ $st -eq 0 ] || cat "$TMP/replay.out" >&2
expect_status 0 $st "replay of the crashed job"
expect_grep "rank 1 killed by signal 11" "$TMP/replay.out" "the replay gateway saw the crash"
expect_grep "the gateway exited with status 139, as the recorded job did" "$TMP/replay.out" \
    "the replay ended as the job did"

# cut in the middle of rank 0's init reply (its line 3): lines 1-2 stay
head -c "$(($(head -n 2 "$TMP/crash.trace" | wc -c) + 20))" "$TMP/crash.trace" >"$TMP/cut.trace"
"$PMIGATE" trace show "$TMP/cut.trace" >"$TMP/show.out" 2>"$TMP/show.err"
expect_status 0 $? "trace show of a cut trace"
expect_grep "is cut short: its line 3 is incomplete; read the 2 whole lines before it" \
    "$TMP/show.err" "trace show says where the trace was cut"
[ "$(grep -c 'PMI-1 ->\|PMI-1 <-' "$TMP/show.out")" -eq 1 ] ||
    { cat "$TMP/show.out" >&2; fail "trace show of the cut trace: not exactly its one whole message"; }
"$PMIGATE" trace stats "$TMP/cut.trace" >/dev/null 2>"$TMP/stats.err"
expect_status 0 $? "trace stats of a cut trace"
expect_grep "is cut short" "$TMP/stats.err" "trace stats says it"
"$PMIGATE" replay --timeout 30 "$TMP/cut.trace" >"$TMP/cutreplay.out" 2>&1
expect_status 0 $? "replay of a cut trace (as far as it goes)"
expect_grep "is cut short" "$TMP/cutreplay.out" "replay says it"
# cut inside the header: nothing to read
head -c 20 "$TMP/crash.trace" >"$TMP/nohead.trace"
"$PMIGATE" trace show "$TMP/nohead.trace" >/dev/null 2>"$TMP/nohead.err"
expect_status 1 $? "a trace cut inside its header"
expect_grep "cut inside its header" "$TMP/nohead.err" "the header cut"
exit 0
