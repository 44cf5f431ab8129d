#!/bin/sh
# What a `pmigate proxy` job over separate hosts (the cluster in a box)
# hands its host runtime, under Slurm (srun --mpi=pmix) and mpirun alike
# (docs/architecture.md, "Fence data through the host"):
#   - 64 MB of keys per node (8 ranks x 8 MB on each of 2 hosts) cross in
#     one fence, every byte checked on the other host (the host's store
#     takes at most one 4 MiB segment per value: the proxy splits);
#   - a node's data over what the host can carry is a clear error before
#     anything is handed over, and the job ends (PMIGATE_HOST_MAX lowers
#     the limit to 1 MiB, so 2 MiB of keys are too many), never a crash
#     or a hang of the host;
#   - a long job's fences stay the size of their own data: what the host
#     runtime's processes read and write (the kernel's count, /proc/PID/io)
#     over 32 fences of 32 KiB per node is at most 2 x 8 times what they do
#     over 4.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
BIG=$top_builddir/tests/integration/pmix_bigdata
proxy_cluster_up pg_data 2 "$BIG"

# job HOW SECONDS ARGS...: `pmigate proxy ARGS` once on each host under HOW
# (slurm, mpirun); output in $WORK/out, status in $rc.  PMIGATE_HOST_MAX
# goes along when it is set.
job() {
    launcher=$1 t=$2
    shift 2
    case $launcher in
    slurm) timeout -k 5 "$t" "$CLUSTER_ON" 1 srun -N 2 --mpi=pmix "$PMIGATE" proxy "$@" ;;
    mpirun) timeout -k 5 "$t" "$CLUSTER_MPIRUN" -np 2 --map-by ppr:1:node \
        ${PMIGATE_HOST_MAX:+-x PMIGATE_HOST_MAX} "$PMIGATE" proxy "$@" ;;
    esac >"$WORK/out" 2>&1
    rc=$?
}

oks() {
    cat "$WORK/out" 2>/dev/null | grep -c ': ok$'
}

# -- 64 MB per node in one fence ------------------------------------------------
for how in slurm mpirun; do
    job $how 300 -n 16 "$BIG" 8192 1
    if [ $rc -eq 0 ] && [ "$(oks)" -eq 16 ]; then
        pass "$how: 64 MB of keys per node cross the host in one fence, every byte checked"
    else
        fail "$how: 64 MB per node: exit $rc, $(oks) of 16 ranks ok"
        grep -v ': ok$' "$WORK/out" | head -n 10
    fi
done

# -- more than the host can carry: a clear error, the job ends ------------------------
export PMIGATE_HOST_MAX=1048576
for how in slurm mpirun; do
    job $how 60 -n 4 "$BIG" 1024 1
    if [ $rc -eq 1 ] && grep -q "is more than the host runtime can carry from one node (1048576 bytes: PMIGATE_HOST_MAX)" "$WORK/out" &&
        [ "$(oks)" -eq 0 ]; then
        pass "$how: 2 MiB per node over a 1 MiB host limit: refused before the host saw it, exit 1"
    else
        fail "$how: 2 MiB over a 1 MiB host limit: exit $rc"
        head -n 10 "$WORK/out"
    fi
done
unset PMIGATE_HOST_MAX

# -- a long job's fences: their own size -----------------------------------------------
# host_bytes HOW FENCES: the bytes the host runtime's processes that serve
# the proxies (their parents: slurmstepd; orted, mpirun) read and wrote
# (/proc/PID/io) by the time the ranks
# finished FENCES fences of 16 KiB per rank -- what the proxies' commits
# and the host's collectives moved.  The ranks then wait 20 s, the job with
# them, while /proc is read.
host_bytes() {
    job_how=$1 fences=$2
    rm -f "$WORK/out" # not the last job's "ok" lines
    (job "$job_how" 120 -n 4 "$BIG" 16 "$fences" 20) &
    bg=$!
    n=0
    until [ "$(oks)" -eq 4 ] 2>/dev/null || [ $n -gt 1200 ] || ! kill -0 $bg 2>/dev/null; do
        n=$((n + 1))
        sleep 0.05
    done
    total=0
    for i in 1 2; do
        host=$(awk '{ print $4 }' "/proc/$(proxy_on "$i")/stat" 2>/dev/null) # the proxy's parent
        case $(cat "/proc/$host/comm" 2>/dev/null) in
        slurmstepd | orted | mpirun.openmpi)
            b=$(awk '/^[rw]char:/ { n += $2 } END { print n + 0 }' "/proc/$host/io" 2>/dev/null)
            total=$((total + ${b:-0}))
            ;;
        esac
    done
    for i in 1 2; do
        job_procs "$i" | xargs -r ps -o pid=,comm= -p | awk '$2 == "pmix_bigdata" { print $1 }' |
            xargs -r kill
    done
    wait $bg
    [ "$(oks)" -eq 4 ] && echo "$total" || echo 0
}
for how in slurm mpirun; do
    few=$(host_bytes $how 4)
    many=$(host_bytes $how 32)
    if [ "$few" -gt 0 ] && [ "$many" -gt 0 ] && [ "$many" -le $((16 * few)) ]; then
        pass "$how: the host moved $many bytes for 32 fences, $few for 4: linear, not quadratic"
    else
        fail "$how: the host moved $many bytes for 32 fences, $few for 4 (0: the job failed)"
    fi
done

finish
