# hi_lib.sh: shared set-up of the handler integration tests (sourced).
# Finds the test programs, makes a scratch directory, and checks first that
# pmigate answers PMI at all: a pmigate whose handlers got lost from the build
# fails every script at once with one clear line (it never skips -- a
# missing handler is a bug, not an absent optional tool).  pmigate
# (PG_PMIGATE overrides), run_job, fail and finish come from tests/lib.sh.
. "$(dirname "$0")/../lib.sh"
PROGS=$top_builddir/tests/progs
SCRIPT_PROG=$top_builddir/tests/integration/pmi_script
make_workdir pg_hi
skip_unless_built "$PMIGATE"

# probe_handlers: one PMI-1 init/finalize through `pmigate run`; exits 1 at
# once when it does not pass (the rest of the script would only repeat it).
probe_handlers() {
    printf 'send1 cmd=init pmi_version=1 pmi_subversion=1\nexpect rc=0\nsend1 cmd=finalize\nexpect finalize_ack\n' >"$WORK/probe"
    run_job 20 -n 1 "$SCRIPT_PROG" "$WORK/probe"
    [ $rc -eq 0 ] && return 0
    if grep -q "cannot serve" "$WORK/out"; then
        fail "this pmigate has no PMI handlers wired in (a PMI-1 init was refused)"
    else
        fail "a PMI-1 init/finalize through pmigate run exited $rc"
    fi
    cat "$WORK/out"
    finish
}
