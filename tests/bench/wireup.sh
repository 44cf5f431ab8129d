#!/usr/bin/env bash
# wireup.sh — `./dev bench wireup`: pmigate against mpiexec.hydra and the
# machine's physical floor, on the PMI-2 wire-up workload (Slurm's libpmi2:
# init, put a 220-byte card, fence, get all N cards) and the MPICH hello job.
# Two floors run next to pmigate for every N: floor_pmi2 (the same ranks of
# the real workload against a server of canned replies — the floor the
# 1.25x goal is measured against) and floor_epoll (the system calls alone,
# with hand-written clients; for reference).  At the side-by-side sizes,
# `pmigate run --sched batch` and `floor_pmi2 --batch` run as well: the
# same, with the ranks under SCHED_BATCH.
# Own clients at scale: pmigate's libpmi2 (pmi2_wireup with pmigate's
# library first in LD_LIBRARY_PATH) and its libpmix (pmixbench) at
# BENCH_SCALE_NS ranks, each wall split into launch (start to the last
# rank's card), fence (to the first rank out of it), gets (to the last
# rank holding every card: the other ranks' release and all N^2 gets) and
# exit (the rest: the workload's report fence, finalize, the exits and
# their reaping), from the ranks' own CLOCK_BOOTTIME stamps; next
# to two floors without PMI: `pmigate run /bin/true` (starting N
# processes) and floor_cards (the same N processes doing the workload's own
# key and card work, each get replaced by writing the card).
# Prints a table of medians, a block of `ratio` lines against the goals of
# docs/performance.md, and writes the same figures to $PG_BUILD/bench/wireup.txt.
# Numbers, not a timed test: a missed goal is reported, never an error.
#
# Environment: PG_BUILD (configured build tree), PG_PREFIX (install prefix
# with bin/pmigate) — set by tests/bench/run.sh.  Knobs:
#   BENCH_REPS=3         repetitions per measurement (medians are printed)
#   BENCH_BIG_REPS=1     repetitions at N >= 1024 (one run is ~20-60 s)
#   BENCH_SIDE_NS, BENCH_ALONE_NS, BENCH_HELLO_NS, BENCH_SCALE_NS   the N lists
#   BENCH_GETS=10000     gets of the one-client latency loop
#   BENCH_HYDRA_TIMEOUT=60   seconds before a hydra run counts as hung
set -uo pipefail
export LC_ALL=C

: "${PG_BUILD:?PG_BUILD must name the build tree}" "${PG_PREFIX:?PG_PREFIX must name the install prefix}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reps=${BENCH_REPS:-3}
big_reps=${BENCH_BIG_REPS:-1}
side_ns=${BENCH_SIDE_NS-"32 64 128 192"}
alone_ns=${BENCH_ALONE_NS-"256 512 1024"}
hello_ns=${BENCH_HELLO_NS-"16 64"}
scale_ns=${BENCH_SCALE_NS-"1024 2048 4096"}
loop_gets=${BENCH_GETS:-10000}
hydra_timeout=${BENCH_HYDRA_TIMEOUT:-60}

out=$PG_BUILD/bench
results=$out/wireup.txt
runlog=$out/wireup-runs.log
work=$(mktemp -d "${TMPDIR:-/tmp}/pg-bench.XXXXXX")
mkdir -p "$out"
: >"$runlog"

hydra=$(command -v mpiexec.hydra || true)
pmigate=$PG_PREFIX/bin/pmigate
wireup_prog=$PG_BUILD/tests/progs/pmi2_wireup
hello_prog=$PG_BUILD/tests/progs/mpi_hello

say() { printf '%s\n' "$*"; }
note() { printf '  %s\n' "$*"; NOTES+=("$*"); }
NOTES=()

# ---- measurement store: M[key] holds space-separated samples ------------

declare -A M STATUS

add_sample() { M[$1]="${M[$1]:-} $2"; }

median() {   # median of the samples under key $1, or empty
    local v=${M[$1]:-}
    [ -n "${v// /}" ] || return 0
    printf '%s\n' $v | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.10g\n", m}'
}

# calc EXPR: the value with the digits that matter and no exponent.
calc() {
    awk "BEGIN {x = $1; a = x < 0 ? -x : x
        printf (a >= 100 ? \"%.0f\" : a >= 10 ? \"%.1f\" : a >= 1 ? \"%.2f\" : \"%.3g\"), x}"
}

field() {    # field KEY FILE: value of KEY=… on the first line that has it
    awk -v k="$1" '{for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) {print substr($i, length(k) + 2); exit}}' "$2"
}

# ---- running one measured command ---------------------------------------

current_pid=

# Every process's "pid ppid", read from /proc (procps may be missing).
process_parents() {
    local stat line fields
    for stat in /proc/[0-9]*/stat; do
        read -r line <"$stat" 2>/dev/null || continue
        fields=(${line##*) })           # after "pid (comm) ": state ppid …
        echo "${stat//[^0-9]/} ${fields[1]}"
    done
}

# All descendants of a pid (and the pid), from one snapshot.
process_tree() {
    process_parents | awk -v root="$1" '
        {parent[$1] = $2}
        END {in_tree[root] = 1; grew = 1
             while (grew) {grew = 0; for (p in parent) if (!(p in in_tree) && (parent[p] in in_tree)) {in_tree[p] = 1; grew = 1}}
             for (p in in_tree) print p}'
}

kill_tree() {
    local pids
    pids=$(process_tree "$1")
    kill -TERM -- "-$1" 2>/dev/null
    kill -TERM $pids 2>/dev/null
    sleep 1
    kill -KILL -- "-$1" 2>/dev/null
    kill -KILL $pids 2>/dev/null
}

trap '[ -n "$current_pid" ] && kill_tree "$current_pid"; rm -rf "$work"; exit 130' INT TERM
trap 'rm -rf "$work"' EXIT

# Watches pid until it is gone: records its peak RSS (VmHWM, kB) in
# $work/hwm and kills its whole tree once the deadline passes.  Sleeps with
# `read -t` so the watching forks nothing.
watch_run() {
    local pid=$1 deadline=$2 hwm=0 key value _ nap
    exec {nap}<> <(:)
    while [ -e "/proc/$pid" ]; do
        while read -r key value _; do
            [ "$key" = VmHWM: ] && [ "$value" -gt "$hwm" ] && { hwm=$value; echo "$hwm" >"$work/hwm"; }
        done <"/proc/$pid/status" 2>/dev/null
        if [[ ${EPOCHREALTIME/./} -gt $deadline ]]; then
            touch "$work/timedout"
            kill_tree "$pid"
            return
        fi
        read -r -t 0.05 -u "$nap" _
    done
}

# run_measured SECONDS LABEL cmd…: runs cmd in its own session with stdin
# closed and output in $work/out; sets RUN_RC, RUN_WALL (s), RUN_HWM (kB of
# the command's own process) and RUN_STATUS (ok, fail rc=…, timeout).
run_measured() {
    local limit=$1 label=$2 t0 t1 watcher
    shift 2
    rm -f "$work/hwm" "$work/timedout"
    t0=$EPOCHREALTIME
    setsid "$@" </dev/null >"$work/out" 2>&1 &
    current_pid=$!
    watch_run "$current_pid" $(( ${t0/./} + limit * 1000000 )) &
    watcher=$!
    wait "$current_pid"
    RUN_RC=$?
    t1=$EPOCHREALTIME
    wait "$watcher"
    current_pid=
    RUN_WALL=$(calc "(${t1/./} - ${t0/./}) / 1e6")
    RUN_HWM=$(cat "$work/hwm" 2>/dev/null || echo 0)
    if [ -e "$work/timedout" ]; then
        RUN_STATUS="timeout ${limit}s"
    elif [ "$RUN_RC" -ne 0 ]; then
        RUN_STATUS="fail rc=$RUN_RC: $(grep -v '^$' "$work/out" | head -1 | cut -c1-100)"
    else
        RUN_STATUS=ok
    fi
    printf '%s rc=%s wall_s=%s hwm_kb=%s status=%s | %s\n' "$label" "$RUN_RC" "$RUN_WALL" \
        "$RUN_HWM" "${RUN_STATUS%%:*}" "$(tr '\n' ' ' <"$work/out" | cut -c1-300)" >>"$runlog"
}

# ---- preparation ---------------------------------------------------------

# The floor programs: built by make when tests/bench/bench.am is included,
# otherwise compiled here (extra: more sources and flags).
bench_bin() {
    local name=$1 src=$here/$1.c extra=${2:-}
    if [ -x "$PG_BUILD/tests/bench/$name" ]; then
        echo "$PG_BUILD/tests/bench/$name"
        return
    fi
    local bin=$out/bin/$name
    mkdir -p "$out/bin"
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$here/pg_bench.c" -nt "$bin" ]; then
        ${CC:-cc} -O2 -g -D_GNU_SOURCE -I"$here/../.." -o "$bin" "$src" $extra >&2 || return 1
    fi
    echo "$bin"
}

max_n=0
for n in $side_ns $alone_ns $hello_ns $scale_ns; do [ "$n" -gt "$max_n" ] && max_n=$n; done

check_limits() {
    # The gateway holds ~4 descriptors per rank (socketpair end, stdout and
    # stderr pipes, …); raise the soft limit as far as the hard one allows.
    local want=$(( 4 * max_n + 200 ))
    [ "$want" -lt 4200 ] && [ "$max_n" -ge 1024 ] && want=4200
    if [ "$(ulimit -Sn)" != unlimited ] && [ "$(ulimit -Sn)" -lt "$want" ]; then
        ulimit -Sn "$want" 2>/dev/null || ulimit -Sn "$(ulimit -Hn)"
    fi
    [ "$(ulimit -Sn)" = unlimited ] || [ "$(ulimit -Sn)" -ge "$want" ] ||
        note "ulimit -n is $(ulimit -Sn) (hard $(ulimit -Hn)); N=$max_n may need $want"
    local procs pid_max running
    procs=$(ulimit -u)
    pid_max=$(cat /proc/sys/kernel/pid_max)
    running=$(process_parents | wc -l)
    if [ "$procs" != unlimited ] && [ "$procs" -lt $(( max_n * 2 + running )) ]; then
        note "ulimit -u is $procs: too few processes for N=$max_n (raise it)"
    fi
    [ "$pid_max" -ge $(( max_n * 2 + running )) ] || note "kernel.pid_max=$pid_max is too small for N=$max_n"
    LIMITS="nofile=$(ulimit -Sn) nproc=$procs pid_max=$pid_max"
}

# pmigate runs its columns only if it can run the smallest job at all.
check_pmigate() {
    if [ ! -x "$pmigate" ]; then
        PMIGATE_WHY="$pmigate not built/installed"
        return 1
    fi
    run_measured 20 "probe pmigate" "$pmigate" run -n 2 /bin/true
    [ "$RUN_STATUS" = ok ] && { PMIGATE_WHY=; return 0; }
    PMIGATE_WHY="'pmigate run -n 2 /bin/true': $RUN_STATUS"
    # A gateway that insists on PMI clients may still run the workload.
    run_measured 20 "probe pmigate wireup" "$pmigate" run -n 2 "$wireup_prog"
    [ "$RUN_STATUS" = ok ] && { note "$PMIGATE_WHY (the 2-rank workload runs)"; PMIGATE_WHY=; return 0; }
    PMIGATE_WHY+="; 'pmigate run -n 2 pmi2_wireup': $RUN_STATUS"
    return 1
}

# ---- the measurements ----------------------------------------------------

# The wire-up workload under one server (the workload's own getall= line
# is the measurement): samples wall, getall, per-get.
wireup_once() {
    local server=$1 n=$2 limit=$3
    local tag="wireup $server $n"
    case $server in
        hydra) run_measured "$limit" "$tag" "$hydra" -n "$n" "$wireup_prog" ;;
        pmigate) run_measured "$limit" "$tag" "$pmigate" run -n "$n" "$wireup_prog" ;;
        pmigate_batch) run_measured "$limit" "$tag" "$pmigate" run --sched batch -n "$n" "$wireup_prog" ;;
        floor_pmi2) run_measured "$limit" "$tag" "$floor_pmi2" "$n" "$wireup_prog" ;;
        floor_pmi2_batch) run_measured "$limit" "$tag" "$floor_pmi2" --batch "$n" "$wireup_prog" ;;
    esac
    local getall
    getall=$(field getall "$work/out")
    if [ "$RUN_STATUS" = ok ] && [ -n "$getall" ] && [ "$(field n "$work/out")" = "$n" ]; then
        STATUS[$tag]=ok
        add_sample "$tag wall" "$RUN_WALL"
        add_sample "$tag getall" "$getall"
        add_sample "$tag hwm" "$RUN_HWM"
    else
        [ "$RUN_STATUS" = ok ] && RUN_STATUS="no wireup line"
        STATUS[$tag]=$RUN_STATUS
    fi
}

# The syscall floor: hand-written clients, so it reports its own phase.
floor_epoll_once() {
    local n=$1 tag="wireup floor_epoll $1"
    run_measured $(( 60 + n / 4 )) "$tag" "$floor_epoll" "$n"
    if [ "$RUN_STATUS" = ok ]; then
        STATUS[$tag]=ok
        add_sample "$tag getall" "$(field phase_us "$work/out")"
        add_sample "$tag wall" "$RUN_WALL"
    else
        STATUS[$tag]=$RUN_STATUS
    fi
}

# failed TAG: an earlier repetition of TAG failed, so the rest are skipped.
failed() { local s=${STATUS[$1]:-}; [ -n "$s" ] && [ "$s" != ok ]; }

run_wireup_series() {
    local n r nreps limit
    for n in $side_ns $alone_ns; do
        nreps=$reps
        [ "$n" -ge 1024 ] && nreps=$big_reps
        say "  N=$n ($nreps reps)"
        for (( r = 1; r <= nreps; r++ )); do
            # The same-client floor and pmigate run back to back, so the
            # machine's other load moves both alike.
            failed "wireup floor_pmi2 $n" || wireup_once floor_pmi2 "$n" $(( 60 + n / 4 ))
            if [ -z "$PMIGATE_WHY" ] && ! failed "wireup pmigate $n"; then
                # Generous: 20 s plus four times what the floor took.
                limit=$(awk -v f="$(median "wireup floor_pmi2 $n getall")" 'BEGIN {printf "%d", 20 + 4 * f / 1e6}')
                wireup_once pmigate "$n" "$limit"
                # the same with the ranks under SCHED_BATCH (pmigate run --sched batch)
                if [[ " $side_ns " == *" $n "* ]]; then
                    failed "wireup floor_pmi2_batch $n" || wireup_once floor_pmi2_batch "$n" $(( 60 + n / 4 ))
                    failed "wireup pmigate_batch $n" || wireup_once pmigate_batch "$n" "$limit"
                fi
            fi
            failed "wireup floor_epoll $n" || floor_epoll_once "$n"
            if [[ " $side_ns " == *" $n "* ]] && [ -n "$hydra" ]; then
                failed "wireup hydra $n" || wireup_once hydra "$n" "$hydra_timeout"
            fi
        done
    done
}

# ---- own clients at scale --------------------------------------------------

# now_boot_us: CLOCK_BOOTTIME in µs (/proc/uptime: 10 ms steps), the clock
# of the ranks' *_at stamps.
now_boot_us() {
    local up _
    read -r up _ </proc/uptime
    awk -v u="$up" 'BEGIN {printf "%.0f", u * 1e6}'
}

# scale_once LIB N: one wire-up of N ranks of pmigate's LIB (pmi2, pmix, or
# true: the launch floor); samples wall, launch, fence, gets and RSS.
scale_once() {
    local lib=$1 n=$2 tag="scale $1 $2" t0 cmd
    case $lib in
        pmi2) cmd=(env LD_LIBRARY_PATH="$PG_BUILD/pmi2/.libs" "$pmigate" run -n "$n" "$wireup_prog") ;;
        pmix) cmd=(env LD_LIBRARY_PATH="$PG_BUILD/pmix/.libs" "$pmigate" run -n "$n" "$pmixbench") ;;
        true) cmd=("$pmigate" run -n "$n" /bin/true) ;;
        cards) cmd=("$pmigate" run -n "$n" "$floor_cards") ;;
    esac
    t0=$(now_boot_us)
    run_measured $(( 60 + n / 8 )) "$tag" "${cmd[@]}"
    if [ "$RUN_STATUS" != ok ]; then
        STATUS[$tag]=$RUN_STATUS
        return
    fi
    add_sample "$tag wall" "$RUN_WALL"
    add_sample "$tag hwm" "$RUN_HWM"
    STATUS[$tag]=ok
    case $lib in true | cards) return ;; esac
    local ready fenced got
    ready=$(field ready_at "$work/out") fenced=$(field out_at "$work/out") got=$(field got_at "$work/out")
    if [ -z "$got" ] || [ "$(field n "$work/out")" != "$n" ]; then
        STATUS[$tag]="no stamps line"
        return
    fi
    add_sample "$tag launch" "$(calc "($ready - $t0) / 1e6")"
    add_sample "$tag fence" "$(calc "($fenced - $ready) / 1e6")"
    add_sample "$tag gets" "$(calc "($got - $fenced) / 1e6")"
    add_sample "$tag exit" "$(calc "$RUN_WALL - ($got - $t0) / 1e6")"
}

run_scale_series() {
    local n r lib
    [ -n "$PMIGATE_WHY" ] && return
    for n in $scale_ns; do
        say "  N=$n ($big_reps reps)"
        for (( r = 1; r <= big_reps; r++ )); do
            for lib in true cards pmi2 pmix; do
                [ "$lib" = pmix ] && [ -z "$pmixbench" ] && continue
                failed "scale $lib $n" || scale_once "$lib" "$n"
            done
        done
    done
}

hello_once() {
    local server=$1 n=$2 tag="hello $1 $2"
    case $server in
        hydra) run_measured "$hydra_timeout" "$tag" "$hydra" -n "$n" "$hello_prog" --quiet ;;
        pmigate) run_measured 120 "$tag" "$pmigate" run -n "$n" "$hello_prog" --quiet ;;
    esac
    if [ "$RUN_STATUS" = ok ] && grep -q "allreduce ok" "$work/out"; then
        STATUS[$tag]=ok
        add_sample "$tag wall" "$RUN_WALL"
    else
        [ "$RUN_STATUS" = ok ] && RUN_STATUS="no 'allreduce ok' line"
        STATUS[$tag]=$RUN_STATUS
    fi
}

run_hello_series() {
    local n r
    for n in $hello_ns; do
        for (( r = 1; r <= reps; r++ )); do
            [ -n "$hydra" ] && ! failed "hello hydra $n" && hello_once hydra "$n"
            [ -z "$PMIGATE_WHY" ] && ! failed "hello pmigate $n" && hello_once pmigate "$n"
        done
    done
}

# One client alone, two placements: both processes on CPU 0 ("pinned"), and
# wherever the scheduler puts them ("free").  On these VMs a cross-CPU
# wake-up costs several times a same-CPU switch, so only like with like
# is compared.
oneclient_once() {
    local what=$1 place=$2 tag="oneclient $1 $2" pin=()
    [ "$place" = pinned ] && pin=(taskset -c 0)
    case $what in
        raw) run_measured 60 "$tag" "${pin[@]}" "$floor_rtt" "$loop_gets" ;;
        hydra) run_measured 60 "$tag" "${pin[@]}" "$hydra" -n 1 "$getloop" "$loop_gets" ;;
        pmigate) run_measured 60 "$tag" "${pin[@]}" "$pmigate" run -n 1 --bind-to none "$getloop" "$loop_gets" ;;
    esac
    local med
    med=$(field median_us "$work/out")
    if [ "$RUN_STATUS" = ok ] && [ -n "$med" ]; then
        STATUS[$tag]=ok
        add_sample "$tag median" "$med"
    else
        [ "$RUN_STATUS" = ok ] && RUN_STATUS="no median line"
        STATUS[$tag]=$RUN_STATUS
    fi
}

run_oneclient_series() {
    local r place what
    for (( r = 1; r <= reps; r++ )); do
        for place in pinned free; do
            for what in raw hydra pmigate; do
                [ "$what" = hydra ] && [ -z "$hydra" ] && continue
                [ "$what" = pmigate ] && [ -n "$PMIGATE_WHY" ] && continue
                [ "$what" != raw ] && [ -z "$getloop" ] && continue
                failed "oneclient $what $place" || oneclient_once "$what" "$place"
            done
        done
    done
}

# ---- reporting -----------------------------------------------------------

# cell TAG METRIC [DIVISOR]: median (divided), or the failure, or n/a.
cell() {
    local tag=$1 metric=$2 divisor=${3:-1} m
    m=$(median "$tag $metric")
    if [ -n "$m" ]; then
        calc "$m / ($divisor)"
    elif failed "$tag"; then
        case ${STATUS[$tag]} in timeout*) echo TIMEOUT ;; *) echo FAIL ;; esac
    else
        echo n/a
    fi
}

RESULTS=()
RATIOS=()

record() { RESULTS+=("$*"); }

# ratio NAME VALUE GOAL-OP GOAL WHY-IF-MISSING: one line of the final block.
ratio() {
    local name=$1 value=$2 op=$3 goal=$4 why=$5 verdict
    if [ "$op" = info ]; then
        [ -n "$value" ] && RATIOS+=("$(printf 'ratio %-46s %9s   (for information)' "$name" "$value")")
        return
    fi
    if [ -z "$value" ]; then
        RATIOS+=("$(printf 'ratio %-46s %9s   goal %s %-5s  n/a (%s)' "$name" n/a "$op" "$goal" "$why")")
        return
    fi
    verdict=$(awk -v v="$value" -v g="$goal" -v op="$op" \
        'BEGIN {ok = (op == "<=") ? v <= g : (op == "<") ? v < g : v >= g; print ok ? "PASS" : "MISS"}')
    RATIOS+=("$(printf 'ratio %-46s %9s   goal %s %-5s  %s' "$name" "$value" "$op" "$goal" "$verdict")")
}

quotient() {  # quotient A B: A/B to 3 digits, empty if either is missing
    [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.3g", a / b}'
}

report_wireup() {
    local n s per_get wall getall line
    say ""
    say "Wire-up (Slurm libpmi2: init, put 220 B, fence, get all N): medians of $reps runs ($big_reps at N>=1024)"
    say "  per-get = all-get phase / N^2 (server time per get served); client = phase / N (one rank's wait per get)"
    say "  floor_pmi2 = the same Slurm-libpmi2 ranks, canned replies; floor_epoll = syscall floor, hand-written clients"
    printf '  %5s | %-28s | %-28s | %-28s | %-20s | %s\n' N "pmigate per-get client wall" \
        "floor_pmi2 per-get client wall" "hydra per-get client wall" "floor_epoll per-get cl." "pmigate RSS"
    printf '  %5s | %8s %9s %8s | %8s %9s %8s | %8s %9s %8s | %8s %9s   | %s\n' "" \
        "us" "us" "s" "us" "us" "s" "us" "us" "s" "us" "us" "MB"
    for n in $side_ns $alone_ns; do
        line=$(printf '  %5s |' "$n")
        for s in pmigate floor_pmi2 hydra floor_epoll; do
            line+=$(printf ' %8s %9s' "$(cell "wireup $s $n" getall "$n * $n")" \
                "$(cell "wireup $s $n" getall "$n")")
            [ "$s" != floor_epoll ] && line+=$(printf ' %8s |' "$(cell "wireup $s $n" wall)")
        done
        line+=$(printf '   | %s' "$(cell "wireup pmigate $n" hwm 1024)")
        say "$line"
        for s in pmigate floor_pmi2 hydra floor_epoll; do
            getall=$(median "wireup $s $n getall")
            wall=$(median "wireup $s $n wall")
            per_get=$([ -n "$getall" ] && calc "$getall / ($n * $n)")
            record "result bench=wireup server=$s n=$n runs=$(wc -w <<<"${M["wireup $s $n getall"]:-}") status=\"${STATUS["wireup $s $n"]:-not run}\"" \
                "getall_us=${getall:-na} per_get_us=${per_get:-na} per_client_get_us=$([ -n "$getall" ] && calc "$getall / $n" || echo na)" \
                "wall_s=${wall:-na}$([ "$s" = pmigate ] && echo " rss_kb=$(median "wireup $s $n hwm")")"
        done
    done
    say "  hydra runs only at N = $side_ns: beyond that it hangs on these machines"
    say "  ranks under SCHED_BATCH (pmigate run --sched batch; floor_pmi2 --batch):"
    for n in $side_ns; do
        say "$(printf '  %5s | pmigate per-get %8s us wall %8s s | floor_pmi2 per-get %8s us wall %8s s' "$n" \
            "$(cell "wireup pmigate_batch $n" getall "$n * $n")" "$(cell "wireup pmigate_batch $n" wall)" \
            "$(cell "wireup floor_pmi2_batch $n" getall "$n * $n")" "$(cell "wireup floor_pmi2_batch $n" wall)")"
        for s in pmigate_batch floor_pmi2_batch; do
            getall=$(median "wireup $s $n getall")
            record "result bench=wireup server=$s n=$n runs=$(wc -w <<<"${M["wireup $s $n getall"]:-}") status=\"${STATUS["wireup $s $n"]:-not run}\"" \
                "getall_us=${getall:-na} per_get_us=$([ -n "$getall" ] && calc "$getall / ($n * $n)" || echo na)" \
                "wall_s=$(median "wireup $s $n wall")"
        done
    done
}

report_scale() {
    local n lib line
    say ""
    say "Own clients at scale (put 220 B, fence, get all N; pmigate's libpmi2 and libpmix), seconds, medians of $big_reps runs"
    say "  launch = start to the last rank's card put; fence = to the first rank out of the fence; gets = to the last rank holding all N;"
    say "  exit = the rest (the workload's report fence, finalize, the exits and their reaping)"
    printf '  %5s | %-17s | %-45s | %-45s | %s\n' N "floors: true cards" "libpmi2: wall launch fence gets exit" \
        "libpmix: wall launch fence gets exit" "RSS MB pmi2/pmix"
    for n in $scale_ns; do
        line=$(printf '  %5s | %8s %8s |' "$n" "$(cell "scale true $n" wall)" "$(cell "scale cards $n" wall)")
        for lib in pmi2 pmix; do
            line+=$(printf ' %8s %8s %8s %8s %8s |' "$(cell "scale $lib $n" wall)" \
                "$(cell "scale $lib $n" launch)" "$(cell "scale $lib $n" fence)" \
                "$(cell "scale $lib $n" gets)" "$(cell "scale $lib $n" exit)")
        done
        line+=$(printf ' %s / %s' "$(cell "scale pmi2 $n" hwm 1024)" "$(cell "scale pmix $n" hwm 1024)")
        say "$line"
        for lib in true cards pmi2 pmix; do
            record "result bench=scale lib=$lib n=$n status=\"${STATUS["scale $lib $n"]:-not run}\"" \
                "wall_s=$(median "scale $lib $n wall") launch_s=$(median "scale $lib $n launch")" \
                "fence_s=$(median "scale $lib $n fence") gets_s=$(median "scale $lib $n gets")" \
                "exit_s=$(median "scale $lib $n exit")" \
                "rss_kb=$(median "scale $lib $n hwm")"
        done
    done
    say "  floors, no PMI: true = pmigate run -n N /bin/true (starting and reaping N processes);"
    say "  cards = pmigate run -n N floor_cards (the same N processes doing the workload's own key and card work,"
    say "  each get replaced by writing the card): no PMI library wires up this workload faster than cards"
}

report_hello() {
    local n s
    say ""
    say "MPICH hello + allreduce (PMI-1 inside libmpich), wall seconds, medians of $reps runs"
    printf '  %5s | %8s | %8s\n' N pmigate hydra
    for n in $hello_ns; do
        printf '  %5s | %8s | %8s\n' "$n" "$(cell "hello pmigate $n" wall)" "$(cell "hello hydra $n" wall)"
        for s in pmigate hydra; do
            record "result bench=hello server=$s n=$n status=\"${STATUS["hello $s $n"]:-not run}\" wall_s=$(median "hello $s $n wall")"
        done
    done
}

report_oneclient() {
    local place w
    say ""
    say "One client, $loop_gets sequential kvs-gets, median us per get (medians of $reps runs)"
    printf '  %-9s | %8s | %8s | %8s\n' placement "raw rtt" pmigate hydra
    for place in pinned free; do
        printf '  %-9s | %8s | %8s | %8s\n' "$place" "$(cell "oneclient raw $place" median)" \
            "$(cell "oneclient pmigate $place" median)" "$(cell "oneclient hydra $place" median)"
        for w in raw pmigate hydra; do
            record "result bench=oneclient server=$w placement=$place status=\"${STATUS["oneclient $w $place"]:-not run}\" median_us=$(median "oneclient $w $place median")"
        done
    done
}

report_ratios() {
    local n why=${PMIGATE_WHY:-not run}
    local pm fl hy op place
    for n in $side_ns $alone_ns; do
        pm=$(median "wireup pmigate $n getall")
        fl=$(median "wireup floor_pmi2 $n getall")
        ratio "pmigate/floor_pmi2 all-get n=$n" "$(quotient "$pm" "$fl")" "<=" 1.25 \
            "$([ -n "$pm" ] && echo "floor_pmi2 ${STATUS["wireup floor_pmi2 $n"]:-missing}" || echo "${STATUS["wireup pmigate $n"]:-$why}")"
    done
    for n in $side_ns $alone_ns; do
        pm=$(median "wireup pmigate $n getall")
        ratio "pmigate/floor_epoll all-get n=$n" "$(quotient "$pm" "$(median "wireup floor_epoll $n getall")")" info 0 ""
    done
    for n in $side_ns; do
        pm=$(median "wireup pmigate $n wall")
        hy=$(median "wireup hydra $n wall")
        [ "$n" = 128 ] && op="<=" || op=info
        ratio "pmigate/hydra wall n=$n" "$(quotient "$pm" "$hy")" "$op" 0.25 \
            "$([ -n "$pm" ] && echo "hydra ${STATUS["wireup hydra $n"]:-missing}" || echo "${STATUS["wireup pmigate $n"]:-$why}")"
    done
    for n in $side_ns; do
        pm=$(median "wireup pmigate_batch $n wall")
        [ "$n" = 128 ] && op="<=" || op=info
        ratio "pmigate --sched batch/hydra wall n=$n" "$(quotient "$pm" "$(median "wireup hydra $n wall")")" "$op" 0.25 \
            "$([ -n "$pm" ] && echo "hydra ${STATUS["wireup hydra $n"]:-missing}" || echo "${STATUS["wireup pmigate_batch $n"]:-$why}")"
        ratio "pmigate/floor_pmi2 all-get, both batch, n=$n" \
            "$(quotient "$(median "wireup pmigate_batch $n getall")" "$(median "wireup floor_pmi2_batch $n getall")")" info 0 ""
    done
    ratio "pmigate wall n=512 (s)" "$(median "wireup pmigate 512 wall")" "<" 8 "${STATUS["wireup pmigate 512"]:-$why}"
    for n in $scale_ns; do
        for lib in pmi2 pmix; do
            ratio "lib$lib wire-up wall n=$n (s)" "$(median "scale $lib $n wall")" "<" 3 \
                "${STATUS["scale $lib $n"]:-$why}"
            ratio "lib$lib wire-up wall/no-PMI floor n=$n" \
                "$(quotient "$(median "scale $lib $n wall")" "$(median "scale cards $n wall")")" info 0 ""
            pm=$(median "scale $lib $n hwm")
            ratio "lib$lib pmigate RSS n=$n (MB)" "$([ -n "$pm" ] && calc "$pm / 1024")" "<" 64 \
                "${STATUS["scale $lib $n"]:-$why}"
        done
    done
    pm=$(median "wireup pmigate 1024 hwm")
    ratio "pmigate RSS n=1024 (MB)" "$([ -n "$pm" ] && calc "$pm / 1024")" "<" 64 "${STATUS["wireup pmigate 1024"]:-$why}"
    for n in $hello_ns; do
        pm=$(median "hello pmigate $n wall")
        ratio "pmigate/hydra hello wall n=$n" "$(quotient "$pm" "$(median "hello hydra $n wall")")" "<=" 1 \
            "$([ -n "$pm" ] && echo "hydra ${STATUS["hello hydra $n"]:-missing}" || echo "${STATUS["hello pmigate $n"]:-$why}")"
    done
    for place in pinned free; do
        pm=$(median "oneclient pmigate $place median")
        ratio "pmigate get/raw rtt ($place)" "$(quotient "$pm" "$(median "oneclient raw $place median")")" "<=" 1.3 \
            "${STATUS["oneclient pmigate $place"]:-$why}"
    done
    for place in pinned free; do
        hy=$(median "oneclient hydra $place median")
        ratio "hydra get/raw rtt ($place)" "$(quotient "$hy" "$(median "oneclient raw $place median")")" info 0 ""
    done
}

write_results() {
    {
        echo "# pmigate wire-up benchmark, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo "# reproduce: ./dev bench wireup   (or: PG_BUILD=$PG_BUILD PG_PREFIX=$PG_PREFIX bash tests/bench/wireup.sh)"
        echo "# host: $(uname -n) $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo);" \
            "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
        echo "# reps=$reps big_reps=$big_reps gets=$loop_gets limits: $LIMITS"
        echo "# load average (1/5/15 min): $load_start at start (before this benchmark's own processes)"
        echo "# git: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
        echo "# pmigate: ${PMIGATE_WHY:-ok}"
        echo "# per_get_us = all-get phase / N^2; per_client_get_us = phase / N; every run is in $(basename "$runlog")"
        printf '%s\n' "${RESULTS[@]}"
        printf '%s\n' "${RATIOS[@]}"
        for n in "${NOTES[@]}"; do echo "# note: $n"; done
    } >"$results"
}

# ---- main ------------------------------------------------------------------

say "== wireup benchmark (reps=$reps, $(nproc) CPUs); results in $results"
check_limits
floor_epoll=$(bench_bin floor_epoll "$here/pg_bench.c") || { echo "cannot build floor_epoll" >&2; exit 1; }
floor_pmi2=$(bench_bin floor_pmi2 "$here/pg_bench.c") || { echo "cannot build floor_pmi2" >&2; exit 1; }
floor_rtt=$(bench_bin floor_rtt "$here/pg_bench.c") || { echo "cannot build floor_rtt" >&2; exit 1; }
floor_cards=$(bench_bin floor_cards) || { echo "cannot build floor_cards" >&2; exit 1; }
make -s -C "$PG_BUILD" tests/bench/pmixbench >/dev/null 2>&1 || true
pmixbench=$PG_BUILD/tests/bench/.libs/pmixbench   # the binary, not libtool's wrapper
[ -x "$pmixbench" ] || pmixbench=$PG_BUILD/tests/bench/pmixbench
[ -x "$pmixbench" ] || { pmixbench=; note "no pmixbench built: libpmix at scale skipped"; }
getloop=$(bench_bin pmi2_getloop -lpmi2) || { getloop=; note "pmi2_getloop not built (no libpmi2?)"; }
[ -x "$wireup_prog" ] || { echo "no $wireup_prog: build the tree first (make)" >&2; exit 1; }
[ -n "$hydra" ] || note "mpiexec.hydra not found: hydra columns are n/a"
[ -x "$hello_prog" ] || { hello_ns=; note "no $hello_prog (MPICH missing?): hello skipped"; }
check_pmigate || note "pmigate columns n/a: $PMIGATE_WHY"
say "  limits: $LIMITS"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
# Other work on a 2-core machine moves every figure; say so next to them.
awk -v l="${load_start%% *}" 'BEGIN {exit !(l > 1.0)}' &&
    note "load average $load_start at start: the machine is busy, figures will be noisy"

t_start=$SECONDS
say "-- wire-up series"
run_wireup_series
say "-- own clients at scale"
run_scale_series
say "-- MPICH hello series"
run_hello_series
say "-- one-client series"
run_oneclient_series

report_wireup
report_scale
report_hello
report_oneclient
report_ratios
say ""
printf '%s\n' "${RATIOS[@]}"
write_results
say ""
say "(took $(( SECONDS - t_start )) s; every run's output: $runlog)"
