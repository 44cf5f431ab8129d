#!/bin/sh
# Job data across separate hosts (the cluster in a box), under Slurm
# (srun --mpi=pmix) and mpirun alike: a `pmigate proxy` job of 2 ranks on
# each of 3 hosts runs pmix_xdata (tests/integration/pmix_xdata.c) --
#   - fences over subsets of ranks on several hosts, collecting and not,
#     two at once over the same hosts joined in opposite orders, and a
#     node-local collecting one whose keys still reach the other hosts;
#   - direct modex: a get of another host's rank's key before any fence is
#     answered once committed, ends at its PMIX_TIMEOUT, and never
#     deadlocks with a fence the getter must join
# (proxy_cases.sh's pmix_nodes jobs get a key before the first fence too).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
XDATA=$top_builddir/tests/integration/pmix_xdata
proxy_cluster_up pg_xdata 3 "$XDATA"

# job HOW SECONDS ARGS...: `pmigate proxy ARGS` once on each host under HOW
# (slurm, mpirun); output in $WORK/out, status in $rc.
job() {
    launcher=$1 t=$2
    shift 2
    case $launcher in
    slurm) timeout -k 5 "$t" "$CLUSTER_ON" 1 srun -N 3 --mpi=pmix "$PMIGATE" proxy "$@" ;;
    mpirun) timeout -k 5 "$t" "$CLUSTER_MPIRUN" -np 3 --map-by ppr:1:node "$PMIGATE" proxy "$@" ;;
    esac >"$WORK/out" 2>&1
    rc=$?
}

oks() {
    grep -c ': ok$' "$WORK/out" 2>/dev/null
}

for how in slurm mpirun; do
    job $how 120 -n 6 "$XDATA" 2,2,2 fences
    if [ $rc -eq 0 ] && [ "$(oks)" -eq 6 ]; then
        pass "$how: fences over subsets of ranks on 3 hosts (with and without data, two at once over the same hosts), a node-local one's keys reach every host"
    else
        fail "$how: subset fences: exit $rc, $(oks) of 6 ranks ok"
        grep -v ': ok$' "$WORK/out" | head -n 10
    fi
    job $how 120 -n 6 "$XDATA" 2,2,2 dmodex
    if [ $rc -eq 0 ] && [ "$(oks)" -eq 6 ]; then
        pass "$how: direct modex across hosts: held until committed, PMIX_TIMEOUT, no deadlock with a fence"
    else
        fail "$how: direct modex: exit $rc, $(oks) of 6 ranks ok"
        grep -v ': ok$' "$WORK/out" | head -n 10
    fi
done
finish
