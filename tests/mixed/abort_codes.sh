#!/bin/sh
# A job that aborted never exits 0: a PMI abort whose code is 0 modulo 256
# (0, 256) ends the job with status 1, alike for PMI-1 (cmd=abort), PMI-2
# (cmd=abort;exitcode=) and PMIx (PMIx_Abort); other codes are taken
# modulo 256.
. "$(dirname "$0")/../lib.sh"
SCRIPT_PROG=$top_builddir/tests/integration/pmi_script
ABORT_PROG=$top_builddir/tests/mixed/mix_abort
make_workdir pg_abort
skip_unless_built "$PMIGATE" "$SCRIPT_PROG" "$ABORT_PROG"

# check LABEL WANT ARGS...: the job exits WANT
check() {
    label=$1 want=$2
    shift 2
    run_job 30 "$@"
    if [ "$rc" -eq "$want" ]; then
        pass "$label: exit $rc"
    else
        fail "$label: exit $rc, expected $want"
        cat "$WORK/out"
    fi
}

for code in 0:1 256:1 512:1 -256:1 7:7 263:7 -1:255; do
    want=${code#*:} code=${code%:*}
    printf 'send1 cmd=init pmi_version=1 pmi_subversion=1\nexpect rc=0\nsend1 cmd=abort exitcode=%s\n' \
        "$code" >"$WORK/pmi1"
    check "PMI-1 abort exitcode=$code" "$want" -n 2 "$SCRIPT_PROG" "$WORK/pmi1"
    printf 'send1 cmd=init pmi_version=2 pmi_subversion=0\nexpect rc=0\nsend2 cmd=fullinit;pmirank=%%r;threaded=FALSE;\nexpect rc=0\nsend2 cmd=abort;isworld=TRUE;exitcode=%s;msg=bye;\n' \
        "$code" >"$WORK/pmi2"
    check "PMI-2 abort exitcode=$code" "$want" -n 2 "$SCRIPT_PROG" "$WORK/pmi2"
    check "PMIx_Abort($code)" "$want" -n 2 "$ABORT_PROG" "$code"
done
finish
