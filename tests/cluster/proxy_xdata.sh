#!/bin/sh
# Job data across separate hosts (the cluster in a box), under Slurm
# (srun --mpi=pmix) and mpirun alike: a `pmigate proxy` job of 2 ranks on
# each of 3 hosts runs pmix_xdata (tests/integration/pmix_xdata.c) --
#   - fences over subsets of ranks on several hosts, collecting and not,
#     two at once over the same hosts joined in opposite orders, and a
#     node-local collecting one whose keys still reach the other hosts;
#   - PMIX_TIMEOUT on a subset fence across hosts, ending it before and
#     after the node handed it on: PMIX_ERR_TIMEOUT, and the next fence
#     over the same ranks meets the late rank's (instead of both waiting
#     forever for fences the other side numbers differently);
#   - timeouts of fences over subsets across hosts: two subsets joined in
#     opposite orders, each instance timing out with one member in it,
#     then meeting; and one fence whose late member joins around the
#     other's deadline: every member gets the same status, and the next
#     fence over the same ranks meets (as on one node);
#   - direct modex: a get of another host's rank's key before any fence is
#     answered once committed, ends at its PMIX_TIMEOUT, and never
#     deadlocks with a fence the getter must join
# (proxy_cases.sh's pmix_nodes jobs get a key before the first fence too).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
XDATA=$top_builddir/tests/integration/pmix_xdata
proxy_cluster_up pg_xdata 3 "$XDATA"

oks() {
    grep -c ': ok$' "$WORK/out" 2>/dev/null
}

# check HOW PART WHAT: pmix_xdata's PART on 2 ranks of each host under HOW
check() {
    proxy_job "$1" 120 3 -n 6 "$XDATA" 2,2,2 "$2"
    if [ $rc -eq 0 ] && [ "$(oks)" -eq 6 ]; then
        pass "$1: $3"
    else
        fail "$1: $3: exit $rc, $(oks) of 6 ranks ok"
        grep -v ': ok$' "$WORK/out" | head -n 10
    fi
}

for how in slurm mpirun; do
    check $how fences "fences over subsets of ranks on 3 hosts (with and without data, two at once over the same hosts, PMIX_TIMEOUT and a fence again), a node-local one's keys reach every host"
    check $how timeouts "PMIX_TIMEOUT on fences over subsets across hosts: one outcome for every member, the next fence over the same ranks meets"
    check $how dmodex "direct modex across hosts: held until committed, PMIX_TIMEOUT, no deadlock with a fence"
done
finish
