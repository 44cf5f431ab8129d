#!/bin/sh
# Slurm's libpmi2 clients under `pmigate run`: init, put, fence, get of every
# rank's key, job and node attributes (with waits, including one that can
# never be satisfied), name service (tests/progs/pmi2_features) at N = 2, 4;
# the wire-up workload (tests/progs/pmi2_wireup) at N = 8.
. "$(dirname "$0")/hi_lib.sh"
skip_unless_built "$PROGS/pmi2_features"
probe_handlers

for n in 2 4; do
    run_job 60 -n $n "$PROGS/pmi2_features"
    [ $rc -eq 0 ] || { fail "pmi2_features N=$n exited $rc"; cat "$WORK/out"; }
    [ "$(grep -c 'pmi2_features rank [0-9]*: ok' "$WORK/out")" -eq $n ] || fail "pmi2_features N=$n: not every rank ok"
done
run_job 60 -n 8 "$PROGS/pmi2_wireup"
[ $rc -eq 0 ] || { fail "pmi2_wireup N=8 exited $rc"; cat "$WORK/out"; }
finish
