#!/usr/bin/env bash
# ./dev bench clients: pmigate's client libraries on pmigate's gateway.
#  1. PMI-2 wire-up (tests/progs/pmi2_wireup: put a 220-byte card, fence, get
#     all N cards) linked with Slurm's libpmi2 and, through LD_LIBRARY_PATH,
#     with pmigate's libpmi2.so.0 — same binary, same gateway, N = 128..1024;
#  2. PMI-2 get throughput of one process with 1, 2, 4, 8 threads;
#  3. PMIx_Get latency (tests/bench/pmix_get.sh);
#  4. PMIx wire-up, pmigate's libpmix next to OpenPMIx under mpirun.openmpi
#     (tests/bench/pmix_wireup.sh).
# Medians of BENCH_REPS runs (default 3; 1 at N = 1024).
set -euo pipefail
build=${PG_BUILD:?set PG_BUILD to a configured build directory}
reps=${BENCH_REPS:-3}
ns=${BENCH_CLIENT_NS:-128 256 512 1024}
here=$(cd "$(dirname "$0")" && pwd)
pmigate=$build/gateway/pmigate
wireup=$build/tests/progs/pmi2_wireup
ourlib=$build/pmi2/.libs
make -s -C "$build" gateway/pmigate tests/progs/pmi2_wireup tests/bench/pmi2_get_threads pmi2/libpmi2.la >/dev/null
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "n/a" }'; }
field() { sed -n "s/.*[ ]$1=\([0-9.]*\).*/\1/p"; }

# run_wireup LIBDIR N -> "wall_ms getall_us" medians
run_wireup() {
    local libdir=$1 n=$2 r walls="" getalls="" out t0 t1 runs=$reps
    [ "$n" -ge 1024 ] && runs=1
    for r in $(seq "$runs"); do
        t0=$(date +%s%N)
        if [ -n "$libdir" ]; then
            out=$(LD_LIBRARY_PATH=$libdir timeout 300 "$pmigate" run -n "$n" "$wireup") || { echo "failed failed"; return; }
        else
            out=$(timeout 300 "$pmigate" run -n "$n" "$wireup") || { echo "failed failed"; return; }
        fi
        t1=$(date +%s%N)
        walls="$walls $(((t1 - t0) / 1000000))"
        getalls="$getalls $(printf '%s\n' "$out" | field getall)"
    done
    echo "$(printf '%s\n' $walls | median) $(printf '%s\n' $getalls | median)"
}

echo "== PMI-2 wire-up: Slurm's libpmi2 vs pmigate's libpmi2 on pmigate ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
printf '%6s | %12s %14s | %12s %14s | %8s\n' N "slurm wall ms" "slurm getall ms" "ours wall ms" "ours getall ms" "getall x"
for n in $ns; do
    read -r sw sg <<<"$(run_wireup "" "$n")"
    read -r ow og <<<"$(run_wireup "$ourlib" "$n")"
    ratio=$(awk -v a="$sg" -v b="$og" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }')
    printf '%6s | %12s %14s | %12s %14s | %8s\n' "$n" "$sw" "$(awk -v v="$sg" 'BEGIN{printf "%.1f", v/1000}')" \
        "$ow" "$(awk -v v="$og" 'BEGIN{printf "%.1f", v/1000}')" "$ratio"
done

echo
echo "== PMI-2 get throughput of one process (pmigate's libpmi2), 4 ranks"
for t in 1 2 4 8; do
    for r in $(seq "$reps"); do
        "$pmigate" run -n 4 "$build/tests/bench/pmi2_get_threads" "$t" 20000 | field gets_per_s
    done | median | awk -v t="$t" '{ printf "threads=%d gets/s=%s\n", t, $1 }'
done

echo
PG_BUILD=$build bash "$here/pmix_get.sh"
echo
PG_BUILD=$build bash "$here/pmix_wireup.sh"
