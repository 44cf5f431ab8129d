# hi_lib.sh: shared set-up of the handler integration tests (sourced).
# Finds pmigate (PG_PMIGATE overrides), the test programs, a scratch
# directory, and skips (exit 77) when pmigate was built without its PMI
# handlers wired in -- then there is nothing of the handlers to test.
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
PMIGATE=${PG_PMIGATE:-$top_builddir/gateway/pmigate}
PROGS=$top_builddir/tests/progs
SCRIPT_PROG=$top_builddir/tests/integration/pmi_script
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pg_hi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0

[ -x "$PMIGATE" ] || { echo "SKIP: $PMIGATE not built"; exit 77; }

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run_job TIMEOUT ARGS...: runs pmigate, output in $WORK/out, status in $rc.
run_job() {
    t=$1
    shift
    timeout -k 5 "$t" "$PMIGATE" run "$@" >"$WORK/out" 2>&1
    rc=$?
}

probe_handlers() {
    printf 'send1 cmd=init pmi_version=1 pmi_subversion=1\nexpect rc=0\nsend1 cmd=finalize\nexpect finalize_ack\n' >"$WORK/probe"
    run_job 20 -n 1 "$SCRIPT_PROG" "$WORK/probe"
    if [ $rc -ne 0 ] && grep -q "cannot serve" "$WORK/out"; then
        echo "SKIP: this pmigate has no PMI handlers wired in"
        exit 77
    fi
}

finish() {
    if [ $failures -ne 0 ]; then
        echo "$failures check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}
