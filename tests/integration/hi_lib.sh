# hi_lib.sh: shared set-up of the handler integration tests (sourced).
# Finds the test programs, makes a scratch directory, and skips (exit 77)
# when pmigate was built without its PMI handlers wired in -- then there is
# nothing of the handlers to test.  pmigate (PG_PMIGATE overrides), run_job,
# fail and finish come from tests/lib.sh.
. "$(dirname "$0")/../lib.sh"
PROGS=$top_builddir/tests/progs
SCRIPT_PROG=$top_builddir/tests/integration/pmi_script
make_workdir pg_hi
skip_unless_built "$PMIGATE"

probe_handlers() {
    printf 'send1 cmd=init pmi_version=1 pmi_subversion=1\nexpect rc=0\nsend1 cmd=finalize\nexpect finalize_ack\n' >"$WORK/probe"
    run_job 20 -n 1 "$SCRIPT_PROG" "$WORK/probe"
    if [ $rc -ne 0 ] && grep -q "cannot serve" "$WORK/out"; then
        echo "SKIP: this pmigate has no PMI handlers wired in"
        exit 77
    fi
}
