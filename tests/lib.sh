# lib.sh: what the job-running integration scripts share (sourced by
# tests/clients/clients_lib.sh, tests/integration/hi_lib.sh,
# tests/pmix/pmix_rules.sh and tests/mixed/mixed.sh): where pmigate is, a
# scratch directory, a count of failed checks that lets a script go on to
# its next check, and one verdict at the end, so that they all run jobs,
# count and report alike.  (tests/gateway and tests/trace stop at the first
# failure instead and keep their own helpers.)
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/skip.sh" # skip, skip_part, skip_unless_built
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
