#!/usr/bin/env bash
# spawn.sh — `./dev bench spawn`: spawn latency, from the parent's
# PMI2_Job_Spawn request to its reply, for 1, 8 and 64 children of the same
# Slurm-libpmi2 program (tests/progs/pmi2_spawn bench N: rank 0 of a 1-rank
# job spawns N children of itself, which init, read the preput, put, fence
# and finalize), under `pmigate run` and under mpiexec.hydra, in one run;
# and across nodes: rank 0 of a 2-rank job over 2 hosts of the cluster in a
# box (tests/cluster/cluster.sh; `pmigate proxy` under mpirun, one per
# host), whose children node 0 places over both hosts and both proxies
# start.  Prints the median of BENCH_REPS runs of each and the ratios
# pmigate/hydra and 2 nodes/1 node; writes the table to
# $PG_BUILD/bench/spawn.txt.  BENCH_SPAWN_NODES=0 leaves the cluster out.
#
# The two replies do not promise the same thing: pmigate answers once every
# child has exec'd (or failed, with its errno in errcodes), hydra once it
# has handed the launch to its proxy, before any child
# runs.  Numbers, not a timed test: nothing here fails on a slow machine.
#
# Environment: PG_BUILD (its gateway/pmigate and tests/progs/pmi2_spawn
# are run), PG_PREFIX (set by tests/bench/run.sh).  Knobs:
#   BENCH_REPS=5            repetitions (medians are printed)
#   BENCH_SPAWN="1 8 64"    the children counts
set -uo pipefail
export LC_ALL=C

: "${PG_BUILD:?PG_BUILD must name the build tree}" "${PG_PREFIX:?PG_PREFIX must name the install prefix}"
reps=${BENCH_REPS:-5}
counts=${BENCH_SPAWN-"1 8 64"}
# the build tree's pmigate: an installed one puts its whole libdir first on
# the ranks' LD_LIBRARY_PATH (for Open MPI's libpmix), and pmigate's
# libpmi2.so.0 there shadows Slurm's, whose PMI2_Job_Spawn this program
# calls with other arguments (it crashes); the build tree's libpmix
# directory, pmix/.libs, holds libpmix only
pmigate=$PG_BUILD/gateway/pmigate
prog=$PG_BUILD/tests/progs/pmi2_spawn
hydra=$(command -v mpiexec.hydra || true)
out=$PG_BUILD/bench
mkdir -p "$out"
results=$out/spawn.txt

[ -x "$prog" ] || { echo "spawn: $prog not built (Slurm libpmi2 missing)"; exit 1; }

# one_run LAUNCHER... : the spawn latency in µs, or nothing
one_run() {
    timeout 300 "$@" 2>/dev/null | sed -n 's/^spawn_ns [0-9]* \([0-9]*\)$/\1/p' |
        awk '{printf "%.0f\n", $1 / 1000}'
}

median() {
    sort -g | awk '{a[NR]=$1} END {if (NR) {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f\n", m}}'
}

ratio() {
    awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b; else print "-"}'
}

# the cluster in a box, 2 hosts (needs root and its tools; else no column)
nodes=${BENCH_SPAWN_NODES-1}
if [ "$nodes" != 0 ]; then
    top=$(cd "$(dirname "$0")/../.." && pwd)
    . "$top/tests/cluster/cluster.sh"
    CLUSTER_SHARE="$top $PG_BUILD $PG_PREFIX" # a checkout under /tmp, too
    cluster_up 2 >/dev/null 2>&1 || { nodes=0; echo "spawn: the cluster in a box does not start: no 2-node column"; }
fi

{
    printf '# spawn latency (PMI2_Job_Spawn request -> reply), Slurm libpmi2, median of %s\n' "$reps"
    printf '%8s | %12s | %12s | %8s | %14s | %8s\n' "children" "pmigate us" "hydra us" "ratio" \
        "2 nodes us" "2n/1n"
} | tee "$results"
for n in $counts; do
    pg=$(for r in $(seq "$reps"); do one_run "$pmigate" run --max-procs "$n" -n 1 "$prog" bench "$n"; done | median)
    hy="" xn=""
    [ -n "$hydra" ] && hy=$(for r in $(seq "$reps"); do one_run "$hydra" -n 1 "$prog" bench "$n"; done | median)
    [ "$nodes" != 0 ] && xn=$(for r in $(seq "$reps"); do
        one_run "$CLUSTER_MPIRUN" -np 2 --map-by ppr:1:node "$pmigate" proxy --max-procs "$n" -n 2 \
            "$prog" bench "$n"
    done | median)
    printf '%8s | %12s | %12s | %8s | %14s | %8s\n' "$n" "${pg:--}" "${hy:--}" "$(ratio "$pg" "$hy")" \
        "${xn:--}" "$(ratio "$xn" "$pg")" | tee -a "$results"
done
[ -n "$hydra" ] || echo "(mpiexec.hydra not installed: ./dev deps brings mpich)" | tee -a "$results"
