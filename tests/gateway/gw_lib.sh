# Shared helpers for the gateway's shell integration tests (sourced).
# The harness exports top_srcdir and top_builddir.
set -u
. "$top_srcdir/tests/skip.sh"
. "$top_srcdir/tests/wait.sh"
PMIGATE="$top_builddir/gateway/pmigate"
PROG="$top_builddir/tests/gateway/gw_testprog"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gwtest.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# A string unique to this test run, put on rank command lines so pgrep -f
# finds exactly our processes.
marker() {
    echo "gwmark_$$_$1"
}

now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

# no_orphans MARKER: nothing carrying MARKER may survive pmigate (allow the
# kernel a moment to finish reaping).
no_orphans() {
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        pgrep -f "$1" >/dev/null || return 0
        sleep 0.2
    done
    ps -o pid,pgid,stat,args -p "$(pgrep -d, -f "$1")" >&2
    pkill -9 -f "$1"
    fail "processes marked $1 outlived pmigate"
}

# expect_status WANT GOT WHAT
expect_status() {
    [ "$2" -eq "$1" ] || fail "$3: exit status $2, expected $1"
}

# expect_grep PATTERN FILE WHAT
expect_grep() {
    grep -q -- "$1" "$2" || { cat "$2" >&2; fail "$3: no '$1' in the output"; }
}
