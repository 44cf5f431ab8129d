#!/bin/sh
# What a `pmigate proxy` job's fences move between separate hosts (the
# cluster in a box), under Slurm (srun --mpi=pmix) and mpirun alike
# (docs/proxy.md, "Fence data through the host"):
#   - 64 MB of keys per node (8 ranks x 8 MB on each of 2 hosts) cross in
#     one fence, every byte checked on the other host;
#   - a long job's fences stay the size of their own data: after a fence
#     of 2 MiB per node, each later fence of 32 KiB per node sends about
#     32 KiB, and the host runtime's processes read and write (the
#     kernel's count, /proc/PID/io) no more for that job than for the
#     small fences alone (the data crosses the proxies' mesh; the host
#     runs the fences' synchronisation).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
BIG=$top_builddir/tests/integration/pmix_bigdata
proxy_cluster_up pg_data 2 "$BIG"

# job HOW SECONDS ARGS...: the job on both hosts (proxy_lib.sh)
job() {
    j_how=$1 j_secs=$2
    shift 2
    proxy_job "$j_how" "$j_secs" 2 "$@"
}

oks() {
    cat "$WORK/out" 2>/dev/null | grep -c ': ok$'
}

# -- 64 MB per node in one fence ------------------------------------------------
for how in slurm mpirun; do
    job $how 300 -n 16 "$BIG" 8192 1
    if [ $rc -eq 0 ] && [ "$(oks)" -eq 16 ]; then
        pass "$how: 64 MB of keys per node cross in one fence, every byte checked"
    else
        fail "$how: 64 MB per node: exit $rc, $(oks) of 16 ranks ok"
        grep -v ': ok$' "$WORK/out" | head -n 10
    fi
done

# -- a long job's fences: the size of their own data ---------------------------------
# A fence of 1 MiB per rank, then 7 of 16 KiB: every later fence's data
# (what its node sent over the mesh: out= on the proxies' timing lines) is
# its own keys, not bounded by the big one before it; and the host
# runtime's processes move no more for that job than for 8 fences of
# 16 KiB (the host carries the fences' synchronisation, not their data).
#
# host_bytes HOW KB FENCES: the bytes the host runtime's processes that
# serve the proxies (their parents: slurmstepd; orted, mpirun) read and
# wrote (/proc/PID/io) by the time the ranks finished FENCES fences of KB
# per rank (pmix_bigdata's KB[:REST]) -- what the proxies' fences and the
# host's collectives moved.  The ranks then wait 20 s, the job with them,
# while /proc is read.  The proxies' timing lines go to $WORK/out.
host_bytes() {
    job_how=$1 kb=$2 fences=$3
    rm -f "$WORK/out" # not the last job's "ok" lines
    (PMIGATE_PROXY_TIMES=1 job "$job_how" 120 -n 4 "$BIG" "$kb" "$fences" 20) &
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
# fence_out N: the largest out= of the nodes' timing lines for fence N
fence_out() {
    sed -n "s/.*cross-node fence $1: out=\([0-9]*\) .*/\1/p" "$WORK/out" | sort -n | tail -n 1
}
for how in slurm mpirun; do
    small=$(host_bytes $how 16 8)
    big=$(host_bytes $how 1024:16 8)
    first=$(fence_out 1) later=0
    for f in 2 3 4 5 6 7 8; do
        o=$(fence_out $f)
        [ "${o:-999999999}" -gt "$later" ] && later=${o:-999999999}
    done
    # 2 ranks x 16 KiB per node, and the keys' names and types
    if [ "$small" -gt 0 ] && [ "$big" -gt 0 ] && [ "${first:-0}" -ge 2097152 ] &&
        [ "$later" -ge 32768 ] && [ "$later" -le 40960 ] && [ "$big" -le $((small + small / 2)) ]; then
        pass "$how: after a 2 MiB fence, each 32 KiB fence sends $later bytes per node; the host moved $big bytes for that job, $small for 8 fences of 32 KiB"
    else
        fail "$how: fence data: fence 1 sent ${first:-?} bytes per node, the later ones up to $later (want 32-40 KiB); the host moved $big bytes, $small without the big fence (0: the job failed)"
    fi
done

finish
