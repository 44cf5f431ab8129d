#!/bin/sh
# An interrupted `pmigate replay` leaves nothing in $TMPDIR: its control
# socket is abstract (no directory), and the child gateway it started
# cleans up after itself once the replayer is gone -- whether the whole
# replay was sent SIGTERM (as a terminal's ^C reaches every process of the
# job) or the replayer alone was SIGKILLed.
. "$top_srcdir/tests/trace/trace_lib.sh"
PROG=$top_builddir/tests/gateway/gw_testprog
mkdir "$TMP/run"

# a recording whose replay takes a while: from the first finalize on,
# every message and record moved 30 s later
"$PMIGATE" run --trace "$TMP/fast.trace" -n 2 "$PROG" pmi -1 finalize >/dev/null 2>&1 ||
    fail "recording the job"
awk '/^[0-9].* C cmd=finalize/ { late = 1 }
     late && /^[0-9]/ { sp = index($0, " ")
                        printf "%.0f%s\n", substr($0, 1, sp - 1) + 30e9, substr($0, sp); next }
     late && /^#! [0-9]/ { rest = substr($0, 4); sp = index(rest, " ")
                           printf "#! %.0f%s\n", substr(rest, 1, sp - 1) + 30e9, substr(rest, sp); next }
     { print }' "$TMP/fast.trace" >"$TMP/slow.trace"

# has_gateway PID: the replay PID has started its child gateway.
has_gateway() {
    [ -n "$(pgrep -P "$1" -x pmigate)" ]
}

# made_job_dir: the child gateway has made its job directory, down to the
# ranks' socket (what it must remove when interrupted).
made_job_dir() {
    for d in "$TMP"/run/pmigate.*; do
        [ -S "$d/pmi" ] && return 0
    done
    return 1
}

# group_gone PGID: no process of the group is left.
group_gone() {
    ! pgrep -g "$1" >/dev/null
}

# interrupt WHAT SIGNAL TARGET: replays in its own process group, sends
# SIGNAL to TARGET (group: the whole replay; replayer: the replay process)
# once the child gateway has made its job directory, then waits for every
# process to go.  (Deadlines of 60 s: a loaded machine may take a while.)
interrupt() {
    setsid env TMPDIR="$TMP/run" "$PMIGATE" replay "$TMP/slow.trace" >/dev/null 2>&1 &
    pid=$!
    wait_for 60 has_gateway "$pid" || { pkill -9 -g "$pid"; fail "$1: the replay started no gateway in 60 s"; }
    wait_for 60 made_job_dir ||
        { pkill -9 -g "$pid"; fail "$1: the replay's gateway made no job directory in 60 s"; }
    if [ "$3" = group ]; then
        kill -s "$2" -- "-$pid"
    else
        kill -s "$2" "$pid"
    fi
    wait "$pid" 2>/dev/null
    wait_for 60 group_gone "$pid" || { pkill -9 -g "$pid"; fail "$1: processes of the replay lived on"; }
    left=$(ls -A "$TMP/run")
    [ -z "$left" ] || fail "$1: left $left in TMPDIR"
}

interrupt "SIGTERM to the whole replay" TERM group
interrupt "SIGKILL to the replayer" KILL replayer
exit 0
