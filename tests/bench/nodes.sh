#!/usr/bin/env bash
# nodes.sh — `./dev bench nodes`: the Slurm-libpmi2 wire-up (pmi2_wireup:
# init, put a 220-byte card, fence, get all N cards) across K simulated
# nodes, K `pmigate proxy` under mpirun.openmpi on this machine, beside
# single-node `pmigate run` with the same N, in one run.  For each K x M
# (M ranks per node) it prints the medians of the wall time of the launcher
# and of the workload's own fence and all-get phases (the slowest rank's),
# and the ratio proxy / run.  Writes the table to $PG_BUILD/bench/nodes.txt.
# Numbers, not a timed test: a missed goal is reported, never an error.
# Not measured yet: the floor of a bare OpenPMIx client doing one
# PMIx_Fence(COLLECT_DATA) of the same bytes under the same host.
#
# Environment: PG_BUILD, PG_PREFIX (set by tests/bench/run.sh).  Knobs:
#   BENCH_REPS=3              repetitions (medians are printed)
#   BENCH_NODES="2x64 4x64 4x128"   the K x M list
set -uo pipefail
export LC_ALL=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

: "${PG_BUILD:?PG_BUILD must name the build tree}" "${PG_PREFIX:?PG_PREFIX must name the install prefix}"
reps=${BENCH_REPS:-3}
shapes=${BENCH_NODES-"2x64 4x64 4x128"}
pmigate=$PG_PREFIX/bin/pmigate
prog=$PG_BUILD/tests/progs/pmi2_wireup
mpirun=$(command -v mpirun.openmpi || true)
out=$PG_BUILD/bench
mkdir -p "$out"
results=$out/nodes.txt

[ -x "$prog" ] || { echo "nodes: $prog not built (Slurm libpmi2 missing)"; exit 1; }
[ -n "$mpirun" ] || { echo "nodes: mpirun.openmpi not found (./dev deps)"; exit 1; }

now() { date +%s.%N; }

# one_run MODE K N: prints "wall fence getall" (seconds, µs, µs) or nothing
one_run() {
    local mode=$1 k=$2 n=$3 t0 t1 line
    t0=$(now)
    if [ "$mode" = proxy ]; then
        line=$(timeout 300 "$mpirun" --oversubscribe -np "$k" "$pmigate" proxy -n "$n" "$prog" 2>/dev/null | grep '^wireup ')
    else
        line=$(timeout 300 "$pmigate" run -n "$n" "$prog" 2>/dev/null | grep '^wireup ')
    fi
    t1=$(now)
    [ -n "$line" ] || return 0
    local fence getall
    fence=$(printf '%s\n' "$line" | sed -n 's/.* fence=\([0-9]*\).*/\1/p')
    getall=$(printf '%s\n' "$line" | sed -n 's/.* getall=\([0-9]*\).*/\1/p')
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') $fence $getall"
}

median() { # [printf format]
    sort -g | awk -v fmt="${1:-%.0f}" '{a[NR]=$1} END {if (NR) {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf fmt "\n", m}}'
}

{
    printf '# pmi2_wireup across K simulated nodes (mpirun.openmpi, pmigate proxy) vs pmigate run, median of %s\n' "$reps"
    printf '%-8s %5s | %10s %10s %10s | %10s %10s %10s | %7s\n' "KxM" "N" "proxy s" "fence us" "getall us" "run s" "fence us" "getall us" "wall x"
} | tee "$results"
for shape in $shapes; do
    k=${shape%x*} m=${shape#*x} n=$((${shape%x*} * ${shape#*x}))
    declare -a pw=() pf=() pg=() rw=() rf=() rg=()
    for ((i = 0; i < reps; i++)); do
        read -r w f g < <(one_run proxy "$k" "$n") && { pw+=("$w"); pf+=("$f"); pg+=("$g"); }
        read -r w f g < <(one_run run "$k" "$n") && { rw+=("$w"); rf+=("$f"); rg+=("$g"); }
    done
    mpw=$(printf '%s\n' "${pw[@]:-}" | grep . | median %.3f)
    mrw=$(printf '%s\n' "${rw[@]:-}" | grep . | median %.3f)
    ratio=-
    [ -n "$mpw" ] && [ -n "$mrw" ] && ratio=$(awk -v a="$mpw" -v b="$mrw" 'BEGIN {printf "%.2f", a / b}')
    printf '%-8s %5s | %10s %10s %10s | %10s %10s %10s | %7s\n' "$shape" "$n" "${mpw:--}" \
        "$(printf '%s\n' "${pf[@]:-}" | grep . | median)" "$(printf '%s\n' "${pg[@]:-}" | grep . | median)" \
        "${mrw:--}" "$(printf '%s\n' "${rf[@]:-}" | grep . | median)" \
        "$(printf '%s\n' "${rg[@]:-}" | grep . | median)" "$ratio" | tee -a "$results"
    unset pw pf pg rw rf rg
done
echo "goal (issue 13): wire-up across 4 simulated nodes <= 1.3x the single-node run of the same N" | tee -a "$results"
