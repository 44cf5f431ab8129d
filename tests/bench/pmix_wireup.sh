#!/usr/bin/env bash
# ./dev bench clients, PMIx wire-up: tests/bench/pmixbench (put a 220-byte
# card, commit, collecting fence, get and check all N cards) through
# pmigate's libpmix under `pmigate run`, and the same source built against
# OpenPMIx (Debian libpmix-dev) under mpirun.openmpi, side by side.
# A third run of ours with PMIGATE_SHM emptied shows the socket path the
# segment replaces.  Figures are the slowest rank's phase times; medians of
# BENCH_REPS runs (default 3).  "getall x" = OpenPMIx getall / pmigate getall (> 1: ours is
# faster).  OPENPMIX_DIR overrides where OpenPMIx lives; without it (or
# without mpirun.openmpi) only pmigate's side is shown.
set -euo pipefail
build=${PG_BUILD:?set PG_BUILD to a configured build directory}
reps=${BENCH_REPS:-3}
ns=${BENCH_PMIX_NS:-128 256}
top=$(cd "$(dirname "$0")/../.." && pwd)
opmix=${OPENPMIX_DIR:-/usr/lib/x86_64-linux-gnu/pmix2}
mpirun=${MPIRUN_OPENMPI:-/usr/bin/mpirun.openmpi}
make -s -C "$build" gateway/pmigate tests/bench/pmixbench >/dev/null
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
work=$(mktemp -d "${TMPDIR:-/tmp}/pg-pmixbench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ours: the real binary, not libtool's wrapper script (a shell per rank
# would be most of what is measured), with the fresh libpmix
ours=$build/tests/bench/.libs/pmixbench
[ -x "$ours" ] || ours=$build/tests/bench/pmixbench
theirs=""
if [ -f "$opmix/include/pmix.h" ] && [ -x "$mpirun" ] &&
    ${CC:-cc} -O2 -o "$work/pmixbench_openpmix" "$top/tests/bench/pmixbench.c" -I"$top" \
        -I"$opmix/include" -L"$opmix/lib" -Wl,-rpath,"$opmix/lib" -lpmix; then
    theirs=$work/pmixbench_openpmix
fi

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "n/a" }'; }
field() { sed -n "s/.*[ ]$1=\([0-9.]*\).*/\1/p"; }

# run WHO N -> "fence_us getall_us" medians
run() {
    local who=$1 n=$2 out fences="" getalls=""
    for _ in $(seq "$reps"); do
        if [ "$who" != theirs ]; then
            local envs=(LD_LIBRARY_PATH="$build/pmix/.libs")
            [ "$who" = socket ] && envs+=(PMIGATE_SHM=)
            out=$(timeout 300 "$build/gateway/pmigate" run -n "$n" env "${envs[@]}" "$ours") ||
                { echo "failed failed"; return; }
        else
            # at N = 256 mpirun.openmpi may report a rank "exiting improperly"
            # after rank 0 printed the figures: the line is what counts
            out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 \
                "$mpirun" --oversubscribe --allow-run-as-root -n "$n" "$theirs" 2>/dev/null) || true
        fi
        printf '%s\n' "$out" | grep -q '^pmixbench n=' || { echo "failed failed"; return; }
        fences="$fences $(printf '%s\n' "$out" | field fence)"
        getalls="$getalls $(printf '%s\n' "$out" | field getall)"
    done
    echo "$(printf '%s\n' $fences | median) $(printf '%s\n' $getalls | median)"
}

ms() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9.]+$/) printf "%.2f", v / 1000; else print v }'; }

echo "== PMIx wire-up (pmixbench): OpenPMIx $(sed -n 's/^Version: //p' "$opmix/../pkgconfig/pmix.pc" 2>/dev/null || true) under mpirun.openmpi vs pmigate's libpmix ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
[ -n "$theirs" ] || echo "(no OpenPMIx in $opmix or no $mpirun: pmigate only)"
printf '%6s | %16s %18s | %14s %16s | %8s | %18s\n' N "openpmix fence ms" "openpmix getall ms" \
    "ours fence ms" "ours getall ms" "getall x" "ours socket getall"
for n in $ns; do
    read -r of og <<<"n/a n/a"
    [ -n "$theirs" ] && read -r of og <<<"$(run theirs "$n")"
    read -r pf pg <<<"$(run ours "$n")"
    read -r _ sg <<<"$(run socket "$n")"
    ratio=$(awk -v a="$og" -v b="$pg" 'BEGIN { if (a ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else print "n/a" }')
    printf '%6s | %16s %18s | %14s %16s | %8s | %18s\n' "$n" "$(ms "$of")" "$(ms "$og")" "$(ms "$pf")" \
        "$(ms "$pg")" "$ratio" "$(ms "$sg")"
done
