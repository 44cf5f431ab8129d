#!/bin/sh
# The cluster in a box itself (tests/cluster/cluster.sh), before any test
# trusts it: K = 3 hosts that are separate where a job can tell (hostname,
# address, /etc/hosts, /tmp, /dev/shm), Slurm's srun --mpi=pmix and Open
# MPI's mpirun reaching every host, a second cluster running beside the
# first without a shared name, a host killed whole and started again, the
# link limit slowing what crosses the link, and nothing left on the machine
# after cluster_down (no namespace, link, process or state).  A missing
# prerequisite (root, a tool) skips, and fails under CI=true (tests/skip.sh);
# a cluster that does not start with everything there fails.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"

why=$(cluster_need_tools 2>&1) || skip "the cluster in a box: $why"
if ! cluster_up 3; then
    fail "the cluster in a box does not start"
    finish
fi
pass "3 hosts up in slot $CLUSTER_ID: $CLUSTER_NODES"
id=$CLUSTER_ID

# -- separate hosts ----------------------------------------------------------
seen=
for i in 1 2 3; do
    # each host writes a file into its own /tmp and /dev/shm
    seen="$seen $("$CLUSTER_ON" "$i" sh -c 'h=$(hostname); echo "$h" >/tmp/who; echo "$h" >/dev/shm/who
        a=$(ip -o -4 addr show dev eth0 | awk "{ print \$4 }")
        g=$(getent hosts "$h" | awk "{ print \$1 }")
        echo "$h/$a/$g"')"
done
want=" pg${id}n1/10.77.$id.1/24/10.77.$id.1 pg${id}n2/10.77.$id.2/24/10.77.$id.2 pg${id}n3/10.77.$id.3/24/10.77.$id.3"
if [ "$seen" = "$want" ]; then
    pass "each host has its own name, address and /etc/hosts entry"
else
    fail "hosts: got '$seen', want '$want'"
fi
if [ "$("$CLUSTER_ON" 2 cat /tmp/who /dev/shm/who | tr '\n' ' ')" = "pg${id}n2 pg${id}n2 " ] &&
    [ "$(cat "$(cluster_node_tmp 3)/who")" = "pg${id}n3" ] && ! [ -e /tmp/who ] &&
    ! grep -q . /dev/shm/who 2>/dev/null; then
    pass "each host has its own /tmp and /dev/shm, neither is the machine's"
else
    fail "/tmp or /dev/shm shared between hosts"
fi

# -- both host runtimes across the hosts --------------------------------------
out=$(timeout -k 5 60 "$CLUSTER_ON" 1 srun -N 3 --mpi=pmix sh -c 'echo "$(hostname) $PMIX_RANK $SLURM_NODEID"' 2>&1)
if [ "$(echo "$out" | sort | tr '\n' ' ')" = "pg${id}n1 0 0 pg${id}n2 1 1 pg${id}n3 2 2 " ]; then
    pass "srun -N 3 --mpi=pmix: one PMIx task on each host"
else
    fail "srun -N 3 --mpi=pmix across the hosts:"
    echo "$out"
fi
out=$(timeout -k 5 60 "$CLUSTER_MPIRUN" -np 3 --map-by ppr:1:node sh -c 'echo "$(hostname) $PMIX_RANK"' 2>&1)
if [ "$(echo "$out" | sort | tr '\n' ' ')" = "pg${id}n1 0 pg${id}n2 1 pg${id}n3 2 " ]; then
    pass "mpirun.openmpi --map-by ppr:1:node: one PMIx process on each host (rsh agent)"
else
    fail "mpirun across the hosts:"
    echo "$out"
fi

# -- a second cluster beside this one ------------------------------------------
second=$( (
    CLUSTER_ID=
    cluster_up 2 >/dev/null 2>&1 || exit 1
    echo "$CLUSTER_ID $(timeout -k 5 60 "$CLUSTER_ON" 1 srun -N 2 hostname | sort | tr '\n' ' ')"
) 2>&1)
s=${second%% *}
if [ "$second" = "$s pg${s}n1 pg${s}n2 " ] && [ "$s" != "$id" ]; then
    pass "a second cluster runs beside it in slot $s"
else
    fail "a second cluster beside slot $id: '$second'"
fi
if [ -n "$s" ] && [ -z "$(ls /run/netns | grep "^pg${s}[nc]")" ] &&
    ! ip -o link show | grep -q ": pg${s}\(v\|br\)"; then
    pass "the second cluster, its shell gone, left no namespace or link"
else
    fail "the second cluster left namespaces or links"
fi

# -- a whole host lost, then back ----------------------------------------------
"$CLUSTER_ON" 3 sleep 600 &
until [ -n "$(cluster_node_pids 3 | grep -v "$(cat "$CLUSTER_DIR/slurm/slurmd.pg${id}n3.pid")")" ]; do
    sleep 0.05
done
cluster_kill_node 3
wait
if [ -z "$(cluster_node_pids 3)" ] && "$CLUSTER_ON" 3 hostname >/dev/null; then
    pass "cluster_kill_node 3: nothing left running on host 3, the host still there"
else
    fail "cluster_kill_node 3 left: $(cluster_node_pids 3 | tr '\n' ' ')"
fi
if cluster_restart_node 3 &&
    [ "$(timeout -k 5 60 "$CLUSTER_ON" 1 srun -N 3 hostname | sort | tr '\n' ' ')" = "pg${id}n1 pg${id}n2 pg${id}n3 " ]; then
    pass "cluster_restart_node 3: srun reaches all 3 hosts again"
else
    fail "host 3 did not come back"
    cluster_logs
fi

# -- the link limit: 2 MB of a task's output crossing from host 2 to host 1 ----
# takes at least 1.6 s at 10 Mbit/s
xfer() {
    t0=$(date +%s%N)
    bytes=$(timeout -k 5 60 "$CLUSTER_ON" 1 srun -N 1 -w "pg${id}n2" head -c 2000000 /dev/zero | wc -c)
    echo "$bytes $((($(date +%s%N) - t0) / 1000000))"
}
cluster_rate 10mbit && set -- $(xfer)
slow=$2
cluster_rate none && set -- "$@" $(xfer)
if [ "$1" = 2000000 ] && [ "$3" = 2000000 ] && [ "$slow" -ge 1600 ]; then
    pass "10mbit on the links: 2 MB from host 2 in $slow ms (no limit: $4 ms)"
else
    fail "the link limit: $1 bytes in $slow ms at 10mbit, $3 bytes in $4 ms without"
fi

# -- nothing left ----------------------------------------------------------------
dir=$CLUSTER_DIR
cluster_down
if [ -z "$(ls /run/netns | grep "^pg${id}[nc]")" ] && ! ip -o link show | grep -q ": pg${id}\(v\|br\)" &&
    ! [ -e "$dir" ]; then
    pass "cluster_down: no namespace, link or state of slot $id left"
else
    fail "cluster_down left: $(ls /run/netns | grep "^pg${id}[nc]") $(ip -o link show | grep ": pg${id}") $(ls -d "$dir" 2>/dev/null)"
fi
finish
