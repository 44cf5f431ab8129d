# Shared helpers for the trace tool's shell tests (sourced).  The harness
# exports top_srcdir and top_builddir.
set -u
. "$top_srcdir/tests/skip.sh"
. "$top_srcdir/tests/wait.sh"
PMIGATE="$top_builddir/gateway/pmigate"
PROGS="$top_builddir/tests/progs"
TRACES="$top_srcdir/tests/traces"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/trtest.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect_status WANT GOT WHAT
expect_status() {
    [ "$2" -eq "$1" ] || fail "$3: exit status $2, expected $1"
}

# expect_grep PATTERN FILE WHAT (fixed string)
expect_grep() {
    grep -qF -- "$1" "$2" || { cat "$2" >&2; fail "$3: no '$1' in the output"; }
}

have_prog() {
    [ -x "$PROGS/$1" ]
}

# need_prog NAME...: the script needs these test programs (tests/skip.sh).
need_prog() {
    for p in "$@"; do
        have_prog "$p" || skip "$PROGS/$p not built"
    done
}

# record NAME N PROG: runs PROG on N ranks under --trace into $TMP/NAME.trace
record() {
    "$PMIGATE" run --timeout 60 --trace "$TMP/$1.trace" -n "$2" "$PROGS/$3" \
        >"$TMP/$1.out" 2>"$TMP/$1.err" || { cat "$TMP/$1.err" >&2; fail "$1: the job failed"; }
    [ -s "$TMP/$1.trace" ] || fail "$1: no trace written"
}

# replay_ok NAME FILE [ARGS...]: the replay must match
replay_ok() {
    name=$1 file=$2
    shift 2
    "$PMIGATE" replay --timeout 60 "$@" "$file" 2>"$TMP/$name.replay" ||
        { cat "$TMP/$name.replay" >&2; fail "$name: replay did not match"; }
    expect_grep "replies matched" "$TMP/$name.replay" "$name"
}
