#!/bin/sh
# Real MPICH 4.0.2 clients (PMI-1 inside libmpich) under `pmigate run`:
# hello + allreduce at N = 1, 2, 4, 16; MPI_Abort(..., 7) ends the job with
# exit 7 at once; a rank that dies before MPI_Init fails the job promptly.
. "$(dirname "$0")/hi_lib.sh"
skip_unless_built "$PROGS/mpi_hello"
probe_handlers

for n in 1 2 4 16; do
    run_job 120 -n $n "$PROGS/mpi_hello"
    [ $rc -eq 0 ] || { fail "mpi_hello N=$n exited $rc"; cat "$WORK/out"; }
    grep -q "allreduce ok" "$WORK/out" || fail "mpi_hello N=$n: no 'allreduce ok'"
    [ "$(grep -c '^hello from rank' "$WORK/out")" -eq $n ] || fail "mpi_hello N=$n: not every rank said hello"
done

start=$(date +%s)
run_job 30 -n 4 "$PROGS/mpi_hello" --abort=7
[ $rc -eq 7 ] || { fail "MPI_Abort(7): exit $rc, expected 7"; cat "$WORK/out"; }
[ $(( $(date +%s) - start )) -le 5 ] || fail "MPI_Abort(7) took more than 5 s"

start=$(date +%s)
run_job 30 -n 4 "$PROGS/mpi_hello" --die-before-init=1
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { fail "rank dying before MPI_Init: exit $rc"; cat "$WORK/out"; }
grep -q "rank 1" "$WORK/out" || fail "the message does not name rank 1"
[ $(( $(date +%s) - start )) -le 5 ] || fail "rank death took more than 5 s to end the job"
finish
