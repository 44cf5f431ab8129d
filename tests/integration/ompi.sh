#!/bin/sh
# Unmodified Open MPI 4.1 binaries (Debian's, built with mpicc.openmpi) under
# a plain `pmigate run`, nothing else typed: every rank of N = 1, 2, 4 sees
# its rank in the right size and the allreduce sums of distinct ranks, and
# MPI_Abort(..., 7) from one rank ends the job with exit 7.  Before pmigate
# served Open MPI, each rank ran as a silent singleton ("rank 0 of 1").
# Nothing stays behind in $TMPDIR: not pmigate's job directories, not Open
# MPI's session tree (ompi.<host>.<uid>/jf.*, which mpirun's daemon removes
# under mpirun and which the ranks killed after the abort cannot).
# No Open MPI is a failure, not a skip: ./dev deps installs libopenmpi-dev.
. "$(dirname "$0")/hi_lib.sh"
if [ ! -x "$PROGS/ompi_hello" ]; then
    fail "Open MPI test program not built: install libopenmpi-dev (./dev deps) and reconfigure"
    finish
fi

# pmix_inits TRACE: how many ranks said PMIx init to pmigate.
pmix_inits() {
    "$PMIGATE" trace show "$1" 2>/dev/null |
        awk '$4 == "PMIx" && $5 == "->" && $6 == "init" { print $2 }' | sort -u | wc -l
}

# a $TMPDIR of the test's own, to see what the jobs leave there
export TMPDIR="$WORK/tmp"
mkdir "$TMPDIR" || exit 99

for n in 1 2 4; do
    run_job 120 --trace "$WORK/trace$n" -n $n "$PROGS/ompi_hello" --size=$n
    oks=$(grep -c "^ompi_hello: rank [0-9]* of $n: ok$" "$WORK/out")
    inits=$(pmix_inits "$WORK/trace$n")
    # a singleton also says "rank 0 of 1": N = 1 counts only through PMIx
    if [ $rc -eq 0 ] && [ "$oks" -eq $n ] && [ "$inits" -eq $n ]; then
        pass "ompi_hello N=$n: $oks ranks ok, each a PMIx client of pmigate"
    else
        fail "ompi_hello N=$n: exit $rc, $oks of $n ranks ok, $inits PMIx clients"
        head -n 30 "$WORK/out"
    fi
done

run_job 60 -n 4 "$PROGS/ompi_hello" --size=4 --abort=7
if [ $rc -eq 7 ]; then
    pass "MPI_Abort(7) from rank 1 of 4 ends the job with exit 7"
else
    fail "MPI_Abort(7): exit $rc, expected 7"
    head -n 30 "$WORK/out"
fi
grep -q "rank 1 aborted the job (code 7)" "$WORK/out" || fail "pmigate did not name rank 1's abort"

left=$(find "$TMPDIR" -mindepth 1 | head -n 5)
if [ -z "$left" ]; then
    pass "the jobs left nothing in \$TMPDIR (Open MPI's session tree went with them)"
else
    fail "left in \$TMPDIR after the jobs: $left"
fi
finish
