#!/bin/sh
# A replay must catch what changed: a deliberately altered reply is reported
# with its rank, command, expected and received message (exit 1); a reply
# the gateway never sends is a hang (exit 124, naming who waits); a job that
# was stopped with ranks still connected replays as such (exit 0); a rank
# number past the job's size (a spawned job's, or a damaged file's) is not
# replayed and starts no stub processes for the ranks up to it; a header
# whose size is far past the ranks that spoke is refused.
. "$top_srcdir/tests/trace/trace_lib.sh"
need_prog pmi2_wireup

record wireup 2 pmi2_wireup

# rank 1's get of rank 0's card: recorded as if the card were different
awk '!done && / 1 1 pmi2 S .*kvs-get-response;rc=0;found=TRUE;value=card-0-/ {
         sub(/value=card-0-/, "value=card-0-X"); done = 1 }
     { print }' "$TMP/wireup.trace" >"$TMP/altered.trace"
cmp -s "$TMP/wireup.trace" "$TMP/altered.trace" && fail "could not alter the trace"
line=$(grep -n 'value=card-0-X' "$TMP/altered.trace" | cut -d: -f1)
"$PMIGATE" replay --fast --timeout 30 "$TMP/altered.trace" 2>"$TMP/err"
expect_status 1 $? "altered reply"
expect_grep "MISMATCH: rank 1, reply to kvs-get (trace line $line, connection 1)" "$TMP/err" "altered"
expect_grep "expected:" "$TMP/err" "altered"
expect_grep "value=card-0-X" "$TMP/err" "altered: the expected message"
expect_grep "got:" "$TMP/err" "altered"
expect_grep "first difference: value: expected 'card-0-X" "$TMP/err" "altered"

# a second reply to rank 1's init that the gateway will never send
awk '{ print } !dup && / 1 1 pmi2 S cmd=response_to_init/ { print; dup = 1 }' \
    "$TMP/wireup.trace" >"$TMP/hang.trace"
"$PMIGATE" replay --fast --timeout 2 "$TMP/hang.trace" 2>"$TMP/err"
expect_status 124 $? "a reply that never comes"
expect_grep "HANG" "$TMP/err" "hang"
expect_grep "rank 1 still waits for the reply to init" "$TMP/err" "hang"

# a stopped job: rank 1 never got past init when the job timed out
"$PMIGATE" run --timeout 1 --trace "$TMP/stopped.trace" -n 2 \
    "$top_builddir/tests/gateway/gw_testprog" pmi 0 finalize >/dev/null 2>&1
expect_status 124 $? "the recorded job times out"
"$PMIGATE" replay "$TMP/stopped.trace" 2>"$TMP/err"
expect_status 0 $? "replay of a stopped job"
expect_grep "still open" "$TMP/err" "stopped job"

# bad usage and unreadable traces are errors, not crashes
"$PMIGATE" replay 2>/dev/null
expect_status 2 $? "replay without a file"
echo "not a trace" >"$TMP/junk"
"$PMIGATE" replay "$TMP/junk" 2>"$TMP/err"
expect_status 1 $? "replay of junk"
expect_grep "not a pmigate trace" "$TMP/err" "junk"

# a connection of rank 700000 in a 2-rank job's trace: the 2 ranks replay,
# the stranger is named and left out (not 700001 stub processes)
awk '!done && $1 == "#!" && $3 == "end" {
         print $2 " 99 700000 pmi1 C cmd=init pmi_version=1 pmi_subversion=1\\n"; done = 1 }
     { print }' "$TMP/wireup.trace" >"$TMP/stranger.trace"
grep -q ' 700000 pmi1 C' "$TMP/stranger.trace" || fail "could not add a stranger to the trace"
"$PMIGATE" replay --fast --timeout 30 "$TMP/stranger.trace" 2>"$TMP/err"
expect_status 0 $? "a rank past the job's size"
expect_grep "1 connection of ranks past the job's 2 (spawned jobs'): not replayed" "$TMP/err" \
    "a rank past the job's size"

# a header claiming 100000 ranks where 2 spoke: refused, nothing started
sed '1s/ size=2 / size=100000 /' "$TMP/wireup.trace" >"$TMP/huge.trace"
grep -q ' size=100000 ' "$TMP/huge.trace" || fail "could not change the trace's size"
"$PMIGATE" replay --fast --timeout 30 "$TMP/huge.trace" 2>"$TMP/err"
expect_status 1 $? "a header's size far past the ranks that spoke"
expect_grep "says its job had 100000 ranks, but only 2 of them spoke" "$TMP/err" "huge size"
exit 0
