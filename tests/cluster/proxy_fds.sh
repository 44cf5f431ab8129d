#!/bin/sh
# A rank of `pmigate proxy` inherits only its own descriptors (docs/user-guide.md,
# "What pmigate guarantees"): on each of 3 hosts, under Slurm (srun
# --mpi=pmix) and mpirun alike, every rank holds 0, 1, 2 and its PMI_FD
# (3), not the proxy's mesh links, its connection to the host runtime or
# what slurmstepd / orted left open.  And a rank that writes garbage on
# every socket it holds besides those does not end the job (before, it
# held the hub's mesh link and its frame aborted every node).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
PROG=$top_builddir/tests/gateway/gw_testprog
proxy_cluster_up pg_fds 3 "$PROG"

for how in slurm mpirun; do
    proxy_job $how 120 3 -n 6 "$PROG" fds
    listed=$(grep -c ' fds:' "$WORK/out")
    own=$(grep -c ' fds: 0 1 2 3 pmi_fd=3$' "$WORK/out")
    hosts=$(sed -n 's/^rank [0-9]* on \([^ ]*\) fds: 0 1 2 3 pmi_fd=3$/\1/p' "$WORK/out" | sort -u | wc -l)
    if [ $rc -eq 0 ] && [ "$listed" -eq 6 ] && [ "$own" -eq 6 ] && [ "$hosts" -eq 3 ]; then
        pass "$how: the 6 ranks on 3 hosts hold only 0, 1, 2 and PMI_FD"
    else
        fail "$how: exit $rc; $own of 6 ranks ($listed listed, on $hosts hosts) hold only 0, 1, 2 and PMI_FD"
        head -n 40 "$WORK/out"
    fi

    proxy_job $how 120 3 -n 3 "$PROG" forge
    if [ $rc -eq 0 ] && [ "$(grep -c 'forged on 0 sockets$' "$WORK/out")" -eq 3 ] &&
        ! grep -q 'aborted' "$WORK/out"; then
        pass "$how: ranks that write on whatever they hold do not end the job (they hold no other socket)"
    else
        fail "$how: ranks writing garbage on their other descriptors: exit $rc"
        head -n 20 "$WORK/out"
    fi
done

finish
