# lib.sh: what the job-running integration scripts share (sourced by
# tests/clients/clients_lib.sh, tests/integration/hi_lib.sh,
# tests/pmix/pmix_rules.sh, tests/mixed/mixed.sh and tests/cluster/): where pmigate is, a
# scratch directory, a count of failed checks that lets a script go on to
# its next check, and one verdict at the end, so that they all run jobs,
# count and report alike.  (tests/gateway and tests/trace stop at the first
# failure instead and keep their own helpers.)
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/skip.sh" # skip, skip_part, skip_unless_built
. "$top_srcdir/tests/wait.sh" # wait_for
PMIGATE=${PG_PMIGATE:-$top_builddir/gateway/pmigate}
failures=0

pass() {
    echo "PASS: $*"
}

# fail WHAT: counts a failed check; the script goes on with the next one.
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# finish: the verdict, exit 1 when any check failed.
finish() {
    if [ $failures -ne 0 ]; then
        echo "$failures check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}

# make_workdir PREFIX: $WORK becomes a scratch directory, removed at exit.
make_workdir() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 99
    trap 'rm -rf "$WORK"' EXIT
}

# run_job TIMEOUT ARGS...: `pmigate run ARGS...`, killed after TIMEOUT
# seconds; its output in $WORK/out, its status in $rc.
run_job() {
    t=$1
    shift
    timeout -k 5 "$t" "$PMIGATE" run "$@" >"$WORK/out" 2>&1
    rc=$?
}

# run_ok_job LABEL WANT TIMEOUT LAUNCH...: runs LAUNCH (any launcher) under
# a timeout; it passes when it exits 0 and exactly WANT ranks print their
# "...: ok" line (alone or followed by details).
run_ok_job() {
    label=$1 want=$2 t=$3
    shift 3
    out=$(timeout "$t" "$@" 2>&1)
    rc=$?
    oks=$(printf '%s\n' "$out" | grep -cE ': ok( |$)')
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$want" ]; then
        pass "$label"
        printf '%s\n' "$out" | grep -E ': ok( |$)' | head -n 1
    else
        fail "$label (exit $rc, $oks of $want ranks ok)"
        printf '%s\n' "$out" | head -n 20
    fi
}

# expect_node_traces LABEL PREFIX HOST0 HOST1: the node traces PREFIX.0
# and PREFIX.1 of a 2-node `pmigate proxy --trace PREFIX` job name their
# node and host, in the header, in `trace show` and in `trace stats`.
expect_node_traces() {
    if head -n 1 "$2.1" | grep -q " node=1 nnodes=2 host=$4 " &&
        "$PMIGATE" trace show "$2.1" | grep -q "^node 1 of 2 ($4)" &&
        "$PMIGATE" trace stats "$2.0" | grep -q "^node 0 of 2 ($3)"; then
        pass "$1"
    else
        fail "$1: the node traces name other hosts:"
        head -n 1 "$2.1" | cut -c 1-200
        "$PMIGATE" trace stats "$2.0" | head -n 3
    fi
}

# expect_node_replays WHAT PREFIX N: each node trace PREFIX.0 .. PREFIX.<N-1>
# replays alone (its ranks against the other nodes' recorded fence
# contributions) with every reply matched.
expect_node_replays() {
    n=0
    while [ $n -lt "$3" ]; do
        if "$PMIGATE" replay --timeout 60 "$2.$n" >"$WORK/replay" 2>&1 &&
            grep -q "replies matched" "$WORK/replay"; then
            pass "replay of node $n's trace of $1"
        else
            fail "replay of node $n's trace of $1"
            cat "$WORK/replay"
        fi
        n=$((n + 1))
    done
}
