#!/usr/bin/env bash
# trace.sh — `./dev bench trace`: what `pmigate run --trace` costs.  The
# PMI-2 wire-up workload (Slurm libpmi2: init, put, fence, get all N cards)
# at N ranks, alternating runs without and with --trace, medians of
# BENCH_REPS.  Two figures per mode: the wire-up time the program reports
# (slowest rank's total, us) and the wall time of the whole job (ms).  The
# goal is a ratio <= 1.10 on the wire-up time at N = 128.
# Off costs one NULL test per message in pg_conn (the hook --verbose uses).
# Numbers, not a timed test: a missed goal is reported, never an error.
#
# Environment: PG_BUILD, PG_PREFIX (set by tests/bench/run.sh).  Knobs:
#   BENCH_TRACE_N=128   ranks      BENCH_REPS=5   runs per mode
set -uo pipefail
export LC_ALL=C
: "${PG_BUILD:?PG_BUILD must name the build tree}"
n=${BENCH_TRACE_N:-128}
reps=${BENCH_REPS:-5}
pmigate=${PG_PREFIX:+$PG_PREFIX/bin/pmigate}
[ -x "${pmigate:-}" ] || pmigate=$PG_BUILD/gateway/pmigate
prog=$PG_BUILD/tests/progs/pmi2_wireup
[ -x "$prog" ] || { echo "trace bench: $prog not built (needs Slurm libpmi2)"; exit 0; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pg-bench-trace.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$PG_BUILD/bench
mkdir -p "$out"

declare -A S
add() { S[$1]="${S[$1]:-} $2"; }
median() {
    printf '%s\n' ${S[$1]} | sort -g |
        awk '{a[NR]=$1} END {if (NR == 0) exit; m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.0f\n", m}'
}

# run MODE: one job; records wire-up total (us) and wall time (ms)
run() {
    local mode=$1 t0 t1 line total
    local args=(run --timeout 120 -n "$n")
    [ "$mode" = trace ] && args=(run --timeout 120 --trace "$work/w.trace" -n "$n")
    t0=${EPOCHREALTIME/./}
    line=$("$pmigate" "${args[@]}" "$prog" 2>"$work/err" | grep '^wireup ')
    t1=${EPOCHREALTIME/./}
    total=$(sed -n 's/.* total=\([0-9]*\).*/\1/p' <<<"$line")
    if [ -z "$total" ]; then
        echo "trace bench: a $mode run failed: $(head -3 "$work/err")"
        return
    fi
    add "$mode.wireup" "$total"
    add "$mode.wall" $(((t1 - t0) / 1000))
}

echo "== trace: pmi2_wireup at N=$n, $reps runs each, alternating (load $(cut -d' ' -f1-3 /proc/loadavg))"
for ((i = 0; i < reps; i++)); do
    run plain
    run trace
done
size=$(stat -c %s "$work/w.trace" 2>/dev/null || echo 0)
lines=$(($(wc -l <"$work/w.trace" 2>/dev/null || echo 1) - 1))
pw=$(median plain.wireup) tw=$(median trace.wireup) pl=$(median plain.wall) tl=$(median trace.wall)
if [ -z "$pw" ] || [ -z "$tw" ]; then
    echo "trace bench: no figures"
    exit 0
fi
ratio=$(awk -v a="$tw" -v b="$pw" 'BEGIN {printf "%.3f", a / b}')
wratio=$(awk -v a="$tl" -v b="$pl" 'BEGIN {printf "%.3f", a / b}')
{
    printf '%-26s %12s %12s\n' "" "no trace" "--trace"
    printf '%-26s %12s %12s\n' "wire-up (us, median)" "$pw" "$tw"
    printf '%-26s %12s %12s\n' "job wall time (ms, median)" "$pl" "$tl"
    printf 'trace file: %s messages, %s bytes\n' "$lines" "$size"
    printf 'ratio wireup trace/plain N=%s: %s (goal <= 1.10: %s)\n' "$n" "$ratio" \
        "$(awk -v r="$ratio" 'BEGIN {print (r <= 1.10) ? "met" : "missed"}')"
    printf 'ratio wall   trace/plain N=%s: %s\n' "$n" "$wratio"
    printf 'samples wireup plain:%s trace:%s\n' "${S[plain.wireup]}" "${S[trace.wireup]}"
} | tee "$out/trace.txt"
