#!/bin/sh
# The job's PMI life-cycle rules, end to end through real connections (with
# the test handler of gw_fakegate): a PMI abort ends the job with its code;
# a rank that breaks off PMI before finalize (closes its connection, exits 0,
# is killed, sends unframeable bytes) fails the job with a message naming it;
# finalize then exit 0 is a clean end.  Each failure must end the job
# promptly and leave no process behind.
. "$top_srcdir/tests/gateway/gw_lib.sh"
GATE="$top_builddir/tests/gateway/gw_fakegate"

# run_case NAME WANT_STATUS WANT_MESSAGE RANKS WHO WHAT
run_case() {
    m=$(marker "$1")
    start=$(now_ms)
    "$GATE" -n "$4" "$PROG" pmi "$5" "$6" "$m" 2>"$TMP/e"
    st=$?
    took=$(($(now_ms) - start))
    expect_status "$2" $st "$1"
    [ -z "$3" ] || expect_grep "$3" "$TMP/e" "$1"
    # the other ranks sleep 60 s; generous bound, not a benchmark
    [ "$took" -lt 10000 ] || fail "$1: the job took ${took} ms to end"
    no_orphans "$m"
}

run_case abort 7 'rank 2 aborted the job (code 7)' 4 2 abort:7
run_case abort-neg 255 'rank 0 aborted the job' 2 0 abort:-1
run_case eof 1 'rank 1 closed its PMI connection before finalize' 3 1 eof
run_case exit0 1 'rank 1 exited with status 0 before PMI finalize' 3 1 exit0
run_case kill9 137 'rank 2 killed by signal 9 (Killed) before PMI finalize' 3 2 kill9
run_case badframe 1 'rank 1 sent a message that cannot be framed' 2 1 badframe
run_case finalize 0 '' 4 -1 finalize
exit 0
