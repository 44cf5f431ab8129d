#!/bin/sh
# The name service and events of a `pmigate proxy` job over separate hosts
# (the cluster in a box: 3 hosts, 2 ranks each), under Slurm (srun
# --mpi=pmix, which has no name service and no notify) and mpirun alike
# (docs/proxy.md, "Names and events across nodes"):
#   - PMI-1 names: published on host 1, found on every host, a duplicate
#     from host 3 refused, unpublished from host 3, then gone everywhere;
#   - PMIx names: two at once from host 3, found everywhere with their
#     publisher, a duplicate refused; a lookup waiting (PMIX_WAIT) on
#     host 1 wakes within 300 ms of the publish on host 3 (by polling it
#     would take up to a second); Unpublish(NULL) takes them all;
#   - PMIx_Notify_event from a rank of the middle host in every range:
#     NAMESPACE, UNDEF, SESSION and GLOBAL reach every rank of every host,
#     CUSTOM only the ranks listed (on hosts 1 and 3), LOCAL only the
#     raiser's host, PROC_LOCAL nobody else; each once, from the raiser,
#     with its payload;
#   - the events pmigate raises itself reach the handlers of every host
#     before the job is brought down: PMIx_Abort(7) on host 3 is heard by
#     the 5 other ranks (the job exits 7), a rank of host 1 ending without
#     PMIx_Finalize is heard by the 5 others;
#   - `pmigate status` asked on any host shows the whole job: on host 1 the
#     rank host 2's part of the fence waits for, on host 3 the lookup host
#     1's rank 0 holds (tests/integration/status_ranks, 6 ranks on 3 hosts).
# (PMI-2 names across hosts: proxy_cases.sh, pmi2_features.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
PROGS=$top_builddir/tests/cluster
RANKS=$top_builddir/tests/integration/status_ranks
proxy_cluster_up pg_names 3 "$PROGS/pmi1_names" "$PROGS/pmix_names" "$PROGS/pmix_events" "$RANKS"

# job HOW SECONDS ARGS...: `pmigate proxy ARGS` once on each host under HOW
# (slurm, mpirun); output in $WORK/out, status in $rc.
job() {
    launcher=$1 t=$2
    shift 2
    case $launcher in
    slurm)
        cluster_wait_idle
        timeout -k 5 "$t" "$CLUSTER_ON" 1 srun -N 3 --mpi=pmix "$PMIGATE" proxy "$@" ;;
    mpirun) timeout -k 5 "$t" "$CLUSTER_MPIRUN" -np 3 --map-by ppr:1:node "$PMIGATE" proxy "$@" ;;
    esac >"$WORK/out" 2>&1
    rc=$?
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || cluster_reset
}

count() {
    grep -c "$1" "$WORK/out"
}

# expect_all HOW LABEL PATTERN: the job exited 0 and all 6 ranks printed PATTERN.
expect_all() {
    if [ $rc -eq 0 ] && [ "$(count "$3")" -eq 6 ]; then
        pass "$1: $2"
    else
        fail "$1: $2 (exit $rc, $(count "$3") of 6 ranks)"
        grep -v "$3" "$WORK/out" | head -n 10
    fi
}

# status_on HOW HOST PATTERN: asks `pmigate status` on HOST every 0.3 s (60
# s at most) until a line matches PATTERN; 0 if one did.  The last answer
# in $WORK/status.
status_on() {
    for _ in $(seq 200); do
        timeout 10 "$CLUSTER_ON" "$2" "$PMIGATE" status >"$WORK/status" 2>&1
        grep -qE "$3" "$WORK/status" && return 0
        sleep 0.3
    done
    return 1
}

# status_job HOW: status_ranks stuck on purpose for 25 s over 3 hosts
# under HOW, in the background ($job_pid).
status_job() {
    case $1 in
    slurm)
        cluster_wait_idle
        STATUS_RANKS_WAIT=25 timeout -k 5 90 "$CLUSTER_ON" 1 srun -N 3 --mpi=pmix "$PMIGATE" proxy \
            -n 6 "$RANKS" ;;
    mpirun)
        STATUS_RANKS_WAIT=25 timeout -k 5 90 "$CLUSTER_MPIRUN" -np 3 --map-by ppr:1:node \
            -x STATUS_RANKS_WAIT "$PMIGATE" proxy -n 6 "$RANKS" ;;
    esac >"$WORK/status_job" 2>&1 &
    job_pid=$!
}

for how in slurm mpirun; do
    # ranks 0-1 on host 1, 2-3 on host 2, 4-5 on host 3: rank 0 waits for a
    # name, rank 2 joins the fence, rank 3 never does
    status_job $how
    if status_on $how 1 '^  fence 1: waiting for rank 3 \(of 6; 2 on this node\)' &&
        grep -qE '^pmigate [0-9]+ on [^ ]+, node 1 of 3: proxy -n 6 ' "$WORK/status" &&
        grep -qE '^pmigate [0-9]+ on [^ ]+, node 2 of 3: proxy -n 6 ' "$WORK/status"; then
        pass "$how: pmigate status on host 1 shows every node, and the rank host 2's fence waits for"
    else
        fail "$how: pmigate status on host 1 does not show the other hosts' nodes:"
        cat "$WORK/status"
    fi
    if status_on $how 3 '^  rank 0 waits for the name "nobody-publishes" to be published'; then
        pass "$how: pmigate status on host 3 shows the lookup rank 0 holds on host 1"
    else
        fail "$how: pmigate status on host 3 does not show host 1's lookup:"
        cat "$WORK/status"
    fi
    wait $job_pid
    rc=$?
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || cluster_reset

    job $how 90 -n 6 "$PROGS/pmi1_names"
    expect_all $how "PMI-1 names cross hosts: found, refused as a duplicate, unpublished, gone" \
        'pmi1_names rank [0-5]: ok'

    job $how 90 -n 6 "$PROGS/pmix_names"
    expect_all $how "PMIx names cross hosts; a waiting lookup wakes within 300 ms of another host's publish" \
        'pmix_names rank [0-5]: ok'

    job $how 90 -n 6 "$PROGS/pmix_events" notify 3 2,2,2
    expect_all $how "PMIx_Notify_event from host 2: every range reaches whom it should on every host" \
        'pmix_events rank [0-5]: ok'

    job $how 90 -n 6 "$PROGS/pmix_events" abort 5 7
    n=$(count 'heard the abort of rank 5$')
    if [ $rc -eq 7 ] && [ "$n" -eq 5 ]; then
        pass "$how: PMIx_Abort(7) on host 3 reaches the handlers of all 5 other ranks, exit 7"
    else
        fail "$how: PMIx_Abort(7) on host 3: exit $rc, heard by $n of 5"
        head -n 10 "$WORK/out"
    fi

    job $how 90 -n 6 "$PROGS/pmix_events" lost 1
    n=$(count 'heard rank 1 end without finalize$')
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$n" -eq 5 ]; then
        pass "$how: a rank gone without finalize on host 1 is heard by all 5 other ranks (exit $rc)"
    else
        fail "$how: a rank gone without finalize on host 1: exit $rc, heard by $n of 5"
        head -n 10 "$WORK/out"
    fi
done
finish
