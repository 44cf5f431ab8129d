#!/bin/sh
# Ranks held in init for a debugger (docs/user-guide.md "Debuggers and
# tools"): `pmigate run --stop-in-init` of PMIx ranks (tests/pmix/pmix_tool
# rank) and of Slurm's libpmi2 ranks (tests/progs/pmi2_features), and a job
# a rank spawns with PMIX_DEBUG_STOP_IN_INIT.  `pmigate status` says the
# job is held; a tool (pmix_tool hold) reads the job's
# PMIX_DEBUG_STOP_IN_INIT, sees every rank in the process table while none
# has printed its after-init line, sends PMIX_DEBUGGER_RELEASE to the
# namespace and hears the job end; the job then completes with status 0.
. "$(dirname "$0")/../lib.sh"
PROG=$top_builddir/tests/pmix/pmix_tool
PMI2_PROG=$top_builddir/tests/progs/pmi2_features
make_workdir pg_pmix_tool_hold
skip_unless_built "$PMIGATE" "$PROG"
# the jobs of this test alone: tools and `pmigate status` look under $TMPDIR
TMPDIR=$WORK/tmp
export TMPDIR
mkdir "$TMPDIR" || exit 99

# held LABEL NPROCS PROGRAM MARK WANT NSPACE_NO -- ARGS...: `pmigate run
# ARGS...` in the background; the tool attaches to job number NSPACE_NO
# (0: the root) of NPROCS ranks of PROGRAM, checks no line has MARK, and
# releases it; then WANT lines with MARK and status 0.
held() {
    label=$1 nprocs=$2 prog=$3 mark=$4 want=$5 jobno=$6
    shift 7
    "$PMIGATE" run "$@" >"$WORK/job.out" 2>&1 &
    jobpid=$!
    wait_for 30 job_listed || fail "$label: pmigate status does not list the job"
    if wait_for 30 status_says_held; then
        pass "$label: pmigate status says the job is held"
    else
        "$PMIGATE" status
        fail "$label: pmigate status does not say the job is held"
    fi
    timeout 60 "$PROG" hold "$jobpid" "$nprocs" "$prog" "$WORK/job.out" "$mark" \
        "kvs_${jobpid}_$jobno" >"$WORK/tool.out" 2>&1
    trc=$?
    wait "$jobpid"
    jrc=$?
    for check in stop_in_init_key debug_support held_in_init debugger_release job_end_event; do
        grep -q "^PASS $check " "$WORK/tool.out" || fail "$label: no PASS for $check"
    done
    if [ $trc -eq 0 ] && [ $jrc -eq 0 ] && [ "$(grep -c "$mark" "$WORK/job.out")" -eq "$want" ]; then
        pass "$label: held until released, then $want ranks past init, exit 0"
    else
        cat "$WORK/tool.out" "$WORK/job.out"
        fail "$label: tool exit $trc, pmigate exit $jrc"
    fi
}
job_listed() {
    "$PMIGATE" status 2>/dev/null | grep -q "^job $jobno kvs_${jobpid}_$jobno"
}
status_says_held() {
    "$PMIGATE" status 2>/dev/null | grep "^job $jobno kvs_${jobpid}_$jobno" |
        grep -q ': held in init for a debugger$'
}

held "PMIx --stop-in-init" 3 pmix_tool "PAST INIT" 3 0 -- --stop-in-init -n 3 "$PROG" rank

if [ -x "$PMI2_PROG" ]; then
    held "PMI-2 (Slurm's libpmi2) --stop-in-init" 3 pmi2_features "pmi2_features rank" 3 0 -- \
        --stop-in-init -n 3 "$PMI2_PROG"
else
    echo "SKIP: Slurm's libpmi2 is not installed (tests/progs/pmi2_features)"
fi

# a job spawned with PMIX_DEBUG_STOP_IN_INIT: held; its spawner goes on
held "PMIx_Spawn PMIX_DEBUG_STOP_IN_INIT" 2 pmix_tool "PAST INIT" 2 1 -- -n 1 "$PROG" spawner 2
grep -q "^SPAWNED kvs_[0-9]*_1 PMIX_SUCCESS" "$WORK/job.out" &&
    pass "the spawner went on while its job was held" || fail "the spawner: $(cat "$WORK/job.out")"
finish
