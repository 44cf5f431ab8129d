#!/bin/sh
# A rank inherits only its own descriptors (docs/user-guide.md, "What
# pmigate guarantees"): stdin, stdout, stderr and its PMI_FD, at 3.  Here
# `pmigate run` itself holds more, as a shell or a tool may leave it: a
# file on descriptor 7 and a listening unix socket, neither close-on-exec.
# Each rank, the root job's and a spawned one's, lists /proc/self/fd.
. "$top_srcdir/tests/gateway/gw_lib.sh"

command -v python3 >/dev/null || skip "python3 (to hand pmigate a listening socket) is not installed"

# with_socket CMD...: CMD with a listening unix socket it inherits
with_socket() {
    rm -f "$TMP/listening"
    python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen()
os.set_inheritable(s.fileno(), True)
os.execvp(sys.argv[2], sys.argv[2:])' "$TMP/listening" "$@"
}

# expect_own_fds OUT ERR N WHAT: N ranks each listed exactly 0 1 2 3,
# PMI_FD=3
expect_own_fds() {
    got=$(grep -c 'fds:' "$1")
    own=$(grep -c 'fds: 0 1 2 3 pmi_fd=3$' "$1")
    if [ "$got" -ne "$3" ] || [ "$own" -ne "$3" ]; then
        cat "$1" "$2" >&2
        fail "$4: $own of $3 ranks hold only 0, 1, 2 and PMI_FD ($got listed)"
    fi
}

exec 7</dev/null
with_socket "$PMIGATE" run -n 3 "$PROG" fds >"$TMP/out" 2>"$TMP/err"
expect_status 0 $? "pmigate run -n 3 gw_testprog fds"
expect_own_fds "$TMP/out" "$TMP/err" 3 "pmigate run with descriptor 7 and a listening socket open"
echo "pmigate run's ranks hold only 0, 1, 2 and PMI_FD, not what pmigate inherited"

# stdin still reaches rank 0, and PMI still works on the moved PMI_FD
echo hello | "$PMIGATE" run -n 2 "$PROG" cat >"$TMP/out" 2>"$TMP/err"
expect_status 0 $? "echo hello | pmigate run -n 2 gw_testprog cat"
expect_grep '^hello$' "$TMP/out" "rank 0's stdin"
"$PMIGATE" run -n 3 "$PROG" pmi -1 finalize >"$TMP/out" 2>"$TMP/err"
expect_status 0 $? "pmigate run -n 3 gw_testprog pmi -1 finalize (PMI-1 on PMI_FD 3)"
echo "stdin and PMI_FD work as before"

# a spawned job's ranks: the same (PMI-1 spawn of gw_testprog fds)
with_socket "$PMIGATE" run -n 2 "$PROG" spawn-fds 2 >"$TMP/out" 2>"$TMP/err"
expect_status 0 $? "pmigate run -n 2 gw_testprog spawn-fds 2"
expect_grep '^rank 0 spawn: cmd=spawn_result rc=0' "$TMP/out" "the spawn"
expect_own_fds "$TMP/out" "$TMP/err" 2 "a spawned job's ranks, pmigate holding descriptor 7 and a listening socket"
echo "a spawned job's ranks hold only 0, 1, 2 and PMI_FD"
