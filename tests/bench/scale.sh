#!/usr/bin/env bash
# scale.sh — `./dev bench scale`: how `pmigate proxy` grows with the number
# of nodes K.  For each K, K proxies under one mpirun.openmpi, M ranks
# each (N = K x M), run tests/bench/pmix_scale: every rank puts one value
# of S bytes, the ranks line up in a fence without data, then a whole-job
# fence with PMIX_COLLECT_DATA and a fence with PMIX_COLLECT_DATA over a
# subset (the first half of the ranks, so the first half of the nodes, or
# the even ranks), each timed by every rank, each checked by a get of a
# value from another node that must already be there.  Per K, the median
# over BENCH_REPS runs of:
#   start s   from this script launching mpirun to the last rank's return
#             from PMIx_Init (the program stamps it with CLOCK_REALTIME,
#             which the box's hosts share with the machine): the host
#             starting K proxies, their start-up exchange and mesh, the
#             ranks' launch and init -- one column rather than an empty
#             job's wall time, which would add the job's end
#   floor s   from launching the same mpirun with K processes that do
#             nothing but say when they started to the last one's start:
#             what of "start" the host's launcher alone takes
#   wall s    the whole job
#   fence us, subset us   the slowest rank's time in each fence
#   sent      bytes each proxy's mesh wrote over the whole run (its own
#             counters, on the line PMIGATE_PROXY_TIMES=1 makes it print at
#             its end: headers and tags included, start-up, the three
#             fences, liveness, the end), max and mean over the proxies,
#             in KB and as a multiple of D = N x S, the data of the
#             whole-job fence (the subset's adds D/2)
#   links     the most links a proxy held at once (its links_max), max and
#             mean over the proxies
#   rss MB    the largest peak RSS of a proxy (its own getrusage)
#   ok        runs that completed (and exited 0) of those tried; a K where
#             some failed is followed by the first failure's first line of
#             stderr (every run's output is in scale-runs.log)
# Numbers, not a timed test: nothing here fails on a slow machine, and a
# K the proxies cannot start is reported, not an error.
#
# Where (BENCH_WHERE): "machine" is the K proxies on this one machine
# (mpirun --oversubscribe: one host name, one loopback, K x M ranks on its
# cores); "box" is the cluster in a box (tests/cluster/cluster.sh): K hosts
# of their own, one proxy each (--map-by ppr:1:node), traffic over veth and
# a bridge.  The box needs root.
#
# Environment: PG_BUILD, PG_PREFIX (set by tests/bench/run.sh).  Knobs:
#   BENCH_REPS=3                     repetitions (medians are printed)
#   BENCH_WHERE="machine box"        where the proxies run (above)
#   BENCH_SCALE_K="4 16 64 256"      K on the machine
#   BENCH_SCALE_BOX_K="3 4 5 6 7 8"  K on the box
#   BENCH_SCALE_PPN=2                M, ranks per proxy
#   BENCH_SCALE_BYTES=1024           S, bytes of each rank's value
#   BENCH_SCALE_SUBSET=first         the subset fence's ranks: first | even
#   BENCH_SCALE_TIMEOUT=120          seconds before a run is killed (the
#                                    K's other runs are then skipped)
#   BENCH_PROXY_OPTS=""              more options of every `pmigate proxy`
#   BENCH_SCALE_MESH_TIMEOUT=30      on the machine, the proxies'
#   BENCH_SCALE_MESH_CONNECT=120     PMIGATE_MESH_TIMEOUT and _CONNECT
#                                    ("" = pmigate's own, 3 and 30 s): K
#                                    simulated nodes and their ranks share
#                                    the machine's cores, so a proxy may
#                                    wait seconds for a CPU, which the
#                                    mesh's liveness and start-up deadlines
#                                    would take for a lost node (256 of
#                                    them on 2 cores do); the box keeps
#                                    pmigate's own
set -uo pipefail
export LC_ALL=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

: "${PG_BUILD:?PG_BUILD must name the build tree}" "${PG_PREFIX:?PG_PREFIX must name the install prefix}"
reps=${BENCH_REPS:-3}
wheres=${BENCH_WHERE-"machine box"}
machine_ks=${BENCH_SCALE_K-"4 16 64 256"}
box_ks=${BENCH_SCALE_BOX_K-"3 4 5 6 7 8"}
ppn=${BENCH_SCALE_PPN:-2}
bytes=${BENCH_SCALE_BYTES:-1024}
subset=${BENCH_SCALE_SUBSET:-first}
tmo=${BENCH_SCALE_TIMEOUT:-120}
mesh_timeout=${BENCH_SCALE_MESH_TIMEOUT-30}
mesh_connect=${BENCH_SCALE_MESH_CONNECT-120}
opts=${BENCH_PROXY_OPTS:-} # word-split on purpose: several options
top=$(cd "$(dirname "$0")/../.." && pwd)
pmigate=$PG_PREFIX/bin/pmigate
prog=$PG_BUILD/tests/bench/pmix_scale
mpirun=$(command -v mpirun.openmpi || true)
out=$PG_BUILD/bench
mkdir -p "$out"
results=$out/scale.txt
runs=$out/scale-runs.log
work=$(mktemp -d "${TMPDIR:-/tmp}/pg-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT

[ -x "$prog" ] || { echo "scale: $prog not built (make builds it)"; exit 1; }
[ -n "$mpirun" ] || { echo "scale: mpirun.openmpi not found (./dev deps)"; exit 1; }
case $subset in first | even) ;; *) echo "scale: BENCH_SCALE_SUBSET: first or even, not $subset"; exit 2 ;; esac
# K proxies on one machine: mpirun's orted holds pipes to each of them,
# and a proxy may hold a link to every other node (a star's centre does)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

now_us() { date +%s%6N; }

# one_run K: the job once; prints "start_s wall_s fence_us subset_us
# sent_max sent_mean links_max links_mean rss_kb" ("-" for counters the
# proxies did not print), or nothing when the job did not complete or did
# not exit 0 (its stderr stays in $work/err, its status in $work/rc)
one_run() {
    local k=$1 t0 t1 rc
    t0=$(now_us)
    PMIGATE_PROXY_TIMES=1 timeout -k 10 "$tmo" "${launch[@]}" "${times[@]}" -np "$k" \
        "$pmigate" proxy $opts --ppn "$ppn" "$prog" "$bytes" "$subset" >"$work/out" 2>"$work/err"
    rc=$?
    t1=$(now_us)
    echo $rc >"$work/rc"
    [ $rc -eq 0 ] || return 0
    awk -v t0="$t0" -v t1="$t1" -v n=$((k * ppn)) -v k="$k" '
        function kv(    i, p) { delete v; for (i = 1; i <= NF; i++) { split($i, p, "="); v[p[1]] = p[2] + 0 } }
        FNR == NR && /^pmix_scale rank=/ {
            kv(); lines++
            if (v["init_at"] > init) init = v["init_at"]
            if (v["fence_us"] > fence) fence = v["fence_us"]
            if (("subset_us" in v) && v["subset_us"] > subs) subs = v["subset_us"]
            next
        }
        FNR != NR && /^pmigate: node [0-9]*: mesh: / {
            kv(); meshes++
            sent += v["sent_bytes"]; if (v["sent_bytes"] > smax) smax = v["sent_bytes"]
            links += v["links_max"]; if (v["links_max"] > lmax) lmax = v["links_max"]
            if (v["rss_kb"] > rss) rss = v["rss_kb"]
        }
        END {
            if (lines != n) exit
            printf "%.3f %.3f %.0f %.0f", (init - t0) / 1e6, (t1 - t0) / 1e6, fence, subs
            if (meshes == k)
                printf " %d %.0f %d %.1f %d\n", smax, sent / k, lmax, links / k, rss
            else
                print " - - - - -"
        }' "$work/out" "$work/err"
}

# floor_run K: from launching the same mpirun with K processes that only
# print the time they started to the last one's start (s).  They stay half
# a second: when K processes end at once, this mpirun.openmpi sometimes
# never returns (seen with `true` and `hostname` at K = 64).
floor_run() {
    local t0 n=$1
    t0=$(now_us)
    timeout -k 10 60 "${launch[@]}" -np "$n" sh -c 'date +%s%6N; exec sleep 0.5' >"$work/floor.out" 2>/dev/null ||
        return 0
    awk -v t0="$t0" -v n="$n" '/^[0-9]+$/ { c++; if ($1 + 0 > m) m = $1 + 0 }
        END { if (c == n) printf "%.3f\n", (m - t0) / 1e6 }' "$work/floor.out"
}

median() { # [printf format]
    sort -g | awk -v fmt="${1:-%.0f}" '{a[NR]=$1} END {if (NR) {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf fmt "\n", m}}'
}
# col I [format]: the median of column I of $work/rows ("-" when none)
col() {
    local m
    m=$(awk -v i="$1" '$i != "-" { print $i }' "$work/rows" | median "${2:-%.0f}")
    echo "${m:--}"
}
ratio() { [ "$1" != - ] && [ "$2" != - ] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}' || echo -; }
kb() { [ "$1" != - ] && awk -v a="$1" 'BEGIN {printf "%.1f", a / 1024}' || echo -; }

# bench_at KS: one row per K for the proxies launched by ${launch[@]}
bench_at() {
    local k n d i row rc fails first tried smax smean
    {
        printf '# pmix_scale over K proxies, %s: M=%s ranks each, S=%s bytes each, subset=%s; median of %s runs\n' \
            "$where_label" "$ppn" "$bytes" "$subset" "$reps"
        printf '%-4s %5s | %7s %7s %7s | %9s %9s | %9s %9s %6s %6s | %5s %6s | %6s | %3s\n' \
            K N "start s" "floor s" "wall s" "fence us" "subset us" "sent maxK" "meanK" "max/D" "mean/D" \
            links mean "rss MB" ok
    } | tee -a "$results"
    for k in $1; do
        n=$((k * ppn)) d=$((k * ppn * bytes))
        : >"$work/rows"
        : >"$work/floor"
        fails=0 first= tried=0
        for ((i = 0; i < reps; i++)); do
            row=$(one_run "$k")
            rc=$(cat "$work/rc")
            {
                printf '== %s K=%s M=%s S=%s run %s: %s\n' "$where" "$k" "$ppn" "$bytes" "$((i + 1))" \
                    "${row:-FAILED (exit status $rc)}"
                [ -n "$row" ] || tail -n 20 "$work/err"
            } >>"$runs"
            floor_run "$k" >>"$work/floor"
            tried=$((i + 1))
            if [ -n "$row" ]; then
                echo "$row" >>"$work/rows"
                continue
            fi
            fails=$((fails + 1))
            [ -n "$first" ] || first=$(grep -v -m 1 -e '^$' -e ': cross-node fence ' -e ': mesh: ' "$work/err")
            [ -n "$first" ] || first="exit status $rc"
            # a run the timeout ended would only take as long again
            case $rc in 124 | 137) first="killed after ${tmo} s; first error: $first"; break ;; esac
        done
        smax=$(col 5) smean=$(col 6)
        printf '%-4s %5s | %7s %7s %7s | %9s %9s | %9s %9s %6s %6s | %5s %6s | %6s | %3s\n' \
            "$k" "$n" "$(col 1 %.3f)" "$(fl=$(median %.3f <"$work/floor"); echo "${fl:--}")" "$(col 2 %.3f)" "$(col 3)" "$(col 4)" \
            "$(kb "$smax")" "$(kb "$smean")" "$(ratio "$smax" "$d")" "$(ratio "$smean" "$d")" \
            "$(col 7)" "$(col 8 %.1f)" "$(ratio "$(col 9)" 1024)" "$((tried - fails))/$tried" | tee -a "$results"
        [ -z "$first" ] || printf '     K=%s failed: %s\n' "$k" "$first" | tee -a "$results"
    done
    echo "D = N x S, the whole-job fence's data; sent counts all a proxy's mesh wrote in the run" | tee -a "$results"
}

{
    date -u '+%F %H:%M UTC' | sed 's/^/# scale: /'
    printf '# %s (%s), load %s\n' "$pmigate" "$("$pmigate" --version 2>/dev/null | head -n 1)" \
        "$(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$results"
: >"$runs"
for where in $wheres; do
    case $where in
    machine)
        launch=(env) where_label="on this machine (simulated nodes"
        [ -z "$mesh_timeout" ] || { launch+=("PMIGATE_MESH_TIMEOUT=$mesh_timeout"); where_label+=", PMIGATE_MESH_TIMEOUT=$mesh_timeout"; }
        [ -z "$mesh_connect" ] || { launch+=("PMIGATE_MESH_CONNECT=$mesh_connect"); where_label+=", PMIGATE_MESH_CONNECT=$mesh_connect"; }
        launch+=("$mpirun" --oversubscribe) times=() where_label+=")"
        ks=$machine_ks
        ;;
    box)
        kmax=$(for k in $box_ks; do echo "$k"; done | sort -n | tail -n 1)
        . "$top/tests/cluster/cluster.sh"
        CLUSTER_SHARE="$top $PG_BUILD $PG_PREFIX" # a checkout under /tmp, too
        CLUSTER_AT_EXIT='rm -rf "$work"'
        cluster_up "${kmax:-3}" || { echo "scale: the cluster in a box does not start"; exit 1; }
        launch=("$CLUSTER_MPIRUN" --map-by ppr:1:node) times=(-x PMIGATE_PROXY_TIMES=1)
        where_label="on the cluster in a box, one host each"
        ks=$box_ks
        ;;
    *) echo "scale: BENCH_WHERE: no place named $where (machine, box)"; exit 2 ;;
    esac
    bench_at "$ks"
    echo | tee -a "$results"
done
