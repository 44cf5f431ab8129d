#!/usr/bin/env bash
# nodes.sh — `./dev bench nodes`: the Slurm-libpmi2 wire-up (pmi2_wireup:
# init, put a 220-byte card, fence, get all N cards) across K nodes, K
# `pmigate proxy` under mpirun.openmpi, on this one machine and on the
# cluster in a box (with and without a link limit; "Where" below), beside
# single-node `pmigate run` with the same N and beside the floor the
# cross-node exchange rides on, all in one run.
#
# Table 1 (wire-up): medians of the launcher's wall time and of the
# workload's own fence and all-get phases (the slowest rank's), and the
# ratio proxy / run.  Goal: <= 1.3x at K = 4.
# Table 2 (cross-node fence): pmigate's fence as the proxies time it
# (PMIGATE_PROXY_TIMES=1: from the last local rank's join to the answers;
# the node whose local ranks joined last is taken, so waiting for slower
# nodes is not counted), split into the host's part (put + commit, fence,
# gets), the hand-off from OpenPMIx's progress thread to the proxy's event
# loop (waiting for a CPU), and ours (merge of the peers' keys, key
# segment, replies to the local ranks); each column is its own median; beside
# the floor: tests/bench/hostfence.c, a bare OpenPMIx client started K
# times under the same mpirun doing one PMIx_Fence(PMIX_COLLECT_DATA) of a
# blob of the same size as the proxies' (taken from their timing lines),
# one measured round per start (OpenPMIx's commit re-sends every earlier
# round's blob, so only the first carries the proxies' bytes), the fastest
# process per start, median of the starts.  Goal: <= 1.2x; "x" is the
# whole fence over the floor, "host x" the host's part alone.
# "bridge" is the least any bridge of M ranks per node can take here: the
# same hostfence with M children per process that wait in a kvs-fence like
# Slurm-libpmi2 ranks and then get N canned cards (under SCHED_BATCH when
# the proxies' options say --sched batch), timed to its last fence reply;
# "brdg x" is it over the floor (above 1.2 no bridge can meet the goal on
# this machine), "vs brdg" pmigate's fence over it (what pmigate adds
# beyond the replies any bridge makes).
# "cpu" is the proxy's own CPU time in merge + segment + reply, and
# "cpu x" (host's part + cpu) over the floor: what the fence would take on
# nodes where the ranks have cores of their own, since on this machine all
# K nodes' ranks share its cores and most of the wall time of merge,
# segment and reply is waiting for one.
# Table 3 (names and events; on the unlimited box only): 2
# hosts, one rank each, beside `pmigate run -n 2`: a PMIx_Lookup of a name
# the other node's rank published (tests/cluster/pmix_names time: each of
# BENCH_NAMES_ROUNDS lookups timed by the rank off the hub, whose lookups
# cross the mesh), the delay from a PMIx_Publish on one node to the wake-up
# of a PMIX_WAIT lookup on the other (one per run), and a notify round trip
# (tests/cluster/pmix_events time: rank 0 raises a NAMESPACE event, the
# rank on the other node answers with a CUSTOM one, timed by rank 0);
# medians and p99 over every sample of every run.
# Table 4 (tests/bench/nodes_dmodex.sh): a direct-modex get of another
# node's key, median and p99, beside the same get under `pmigate run`.
# Numbers, not a timed test: a missed goal is reported, never an error.
#
# Where: "machine" is the K proxies on this one machine (mpirun
# --oversubscribe, one hostname, one loopback); "box" is the cluster in a
# box (tests/cluster/cluster.sh): K hosts of their own, the proxies and the
# floor under mpirun across them (rsh agent, one per host), their traffic
# over veth and a bridge; "box:RATE" the same with every host's link
# limited to RATE (tc tbf, e.g. 1gbit).  `pmigate run` stays on the
# machine.  The box needs root.
#
# Environment: PG_BUILD, PG_PREFIX (set by tests/bench/run.sh).  Knobs:
#   BENCH_REPS=3              repetitions (medians are printed)
#   BENCH_NODES="2x64 4x64 4x128"   the K x M list
#   BENCH_FLOOR_ROUNDS=5      hostfence starts (one measured round each)
#   BENCH_PROXY_OPTS=""       more options of every `pmigate proxy` and
#                             `pmigate run` (e.g. "--sched batch")
#   BENCH_WHERE="machine box box:1gbit"   where the proxies run (above)
#   BENCH_NAMES_ROUNDS=200    timed lookups and notifies per run (table 3)
set -uo pipefail
export LC_ALL=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

: "${PG_BUILD:?PG_BUILD must name the build tree}" "${PG_PREFIX:?PG_PREFIX must name the install prefix}"
reps=${BENCH_REPS:-3}
shapes=${BENCH_NODES-"2x64 4x64 4x128"}
rounds=${BENCH_FLOOR_ROUNDS:-5}
opts=${BENCH_PROXY_OPTS:-} # word-split on purpose: several options
top=$(cd "$(dirname "$0")/../.." && pwd)
pmigate=$PG_PREFIX/bin/pmigate
prog=$PG_BUILD/tests/progs/pmi2_wireup
mpirun=$(command -v mpirun.openmpi || true)
wheres=${BENCH_WHERE-"machine box box:1gbit"}
out=$PG_BUILD/bench
mkdir -p "$out"
results=$out/nodes.txt
work=$(mktemp -d "${TMPDIR:-/tmp}/pg-nodes.XXXXXX")
trap 'rm -rf "$work"' EXIT

[ -x "$prog" ] || { echo "nodes: $prog not built (Slurm libpmi2 missing)"; exit 1; }
[ -n "$mpirun" ] || { echo "nodes: mpirun.openmpi not found (./dev deps)"; exit 1; }
# the floor: OpenPMIx's own client, found as the gateway finds it (in the
# build tree: the box's hosts each have their own /tmp)
floor=$out/hostfence
${CC:-cc} -O2 -o "$floor" -I"$top/tests/bench" "$top/tests/bench/hostfence.c" \
    "$top/tests/bench/pg_bench.c" $(pkg-config --cflags --libs pmix) \
    -Wl,-rpath,"$(pkg-config --variable=libdir pmix)" ||
    { echo "nodes: cannot build tests/bench/hostfence.c against OpenPMIx (pkg-config pmix)"; exit 1; }

now() { date +%s.%N; }
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

# one_run MODE K N: prints "wall fence getall" (seconds, µs, µs) or nothing;
# proxy runs leave the proxies' timing lines in $work/times
one_run() {
    local mode=$1 k=$2 n=$3 t0 t1 line
    t0=$(now)
    if [ "$mode" = proxy ]; then
        line=$(PMIGATE_PROXY_TIMES=1 timeout 300 "${launch[@]}" "${times[@]}" -np "$k" \
            "$pmigate" proxy $opts -n "$n" "$prog" 2>"$work/err" | grep '^wireup ')
        grep 'cross-node fence' "$work/err" >"$work/times"
    else
        line=$(timeout 300 "$pmigate" run $opts -n "$n" "$prog" 2>/dev/null | grep '^wireup ')
    fi
    t1=$(now)
    [ -n "$line" ] || return 0
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') \
$(printf '%s\n' "$line" | field fence) $(printf '%s\n' "$line" | field getall)"
}

# The card fence (the proxies' cross-node fence 1; fence 2 carries the
# workload's timings) of the last proxy run, on the node that took least
# (see above): "out total put fence get handoff merge segment reply cpu"
# (bytes, µs).
proxy_fence() {
    grep 'cross-node fence 1:' "$work/times" |
        awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
               print v["out"], v["total_us"], v["put_us"], v["fence_us"], v["get_us"],
                     v["handoff_us"], v["merge_us"], v["segment_us"], v["reply_us"], v["ours_cpu_us"] }' |
        sort -k2,2n | head -n 1
}

# the ranks' scheduling of the proxies, for the bridge floor's children
case " $opts " in *" --sched batch "* | *" --sched=batch "*) floor_sched=batch ;; *) floor_sched= ;; esac

# floor_run K M BYTES: "floor bridge", the medians over $rounds starts of
# the fastest process's exchange and exchange + M replies (µs), or nothing
floor_run() {
    local i
    for ((i = 0; i < rounds; i++)); do
        timeout 120 "${launch[@]}" -np "$1" "$floor" "$3" 1 "$2" $(($1 * $2)) $floor_sched \
            2>/dev/null |
            awk '/^hostfence / { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                                 if (!("f" in m) || v["us"] < m["f"]) m["f"] = v["us"]
                                 if (!("b" in m) || v["bridge_us"] < m["b"]) m["b"] = v["bridge_us"] }
                 END { if ("f" in m && "b" in m) print m["f"], m["b"] }'
    done >"$work/floor"
    [ -s "$work/floor" ] || return 0
    echo "$(cut -d' ' -f1 "$work/floor" | median) $(cut -d' ' -f2 "$work/floor" | median)"
}

. "$top/tests/bench/nodes_dmodex.sh"

median() { # [printf format]
    sort -g | awk -v fmt="${1:-%.0f}" '{a[NR]=$1} END {if (NR) {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf fmt "\n", m}}'
}
med() { printf '%s\n' "$@" | grep . | median; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}' || echo -; }

# bench_at: both tables for the proxies launched by ${launch[@]}.
bench_at() {
    {
        printf '# pmi2_wireup across K nodes, %s (mpirun.openmpi, pmigate proxy) vs pmigate run, median of %s\n' "$where_label" "$reps"
        printf '%-6s %5s | %8s %9s %9s | %8s %9s %9s | %6s\n' "KxM" "N" "proxy s" "fence us" "getall us" "run s" "fence us" "getall us" "wall x"
    } | tee -a "$results"
    fence_rows=()
    for shape in $shapes; do
        k=${shape%x*} m=${shape#*x} n=$((${shape%x*} * ${shape#*x}))
        pw=() pf=() pg=() rw=() rf=() rg=() xo=() xt=() xp=() xf=() xg=() xh=() xm=() xs=() xr=() xhost=() fl=()
        xc=() xest=() br=()
        for ((i = 0; i < reps; i++)); do
            : >"$work/times"
            if read -r w f g < <(one_run proxy "$k" "$n"); then
                pw+=("$w") pf+=("$f") pg+=("$g")
                if read -r o t pu fe ge ho mg sg rp cpu < <(proxy_fence) && [ "${o:-0}" -gt 0 ]; then
                    xo+=("$o") xt+=("$t") xp+=("$pu") xf+=("$fe") xg+=("$ge") xh+=("$ho") xm+=("$mg")
                    xs+=("$sg") xr+=("$rp") xhost+=("$((pu + fe + ge))") xc+=("${cpu:-0}")
                    xest+=("$((pu + fe + ge + ${cpu:-0}))")
                    if read -r fo bo < <(floor_run "$k" "$m" "$o"); then
                        fl+=("$fo") br+=("$bo")
                    fi
                fi
            fi
            read -r w f g < <(one_run run "$k" "$n") && { rw+=("$w") rf+=("$f") rg+=("$g"); }
        done
        mpw=$(printf '%s\n' "${pw[@]:-}" | grep . | median %.3f)
        mrw=$(printf '%s\n' "${rw[@]:-}" | grep . | median %.3f)
        printf '%-6s %5s | %8s %9s %9s | %8s %9s %9s | %6s\n' "$shape" "$n" "${mpw:--}" \
            "$(med "${pf[@]:-}")" "$(med "${pg[@]:-}")" "${mrw:--}" "$(med "${rf[@]:-}")" \
            "$(med "${rg[@]:-}")" "$(ratio "$mpw" "$mrw")" | tee -a "$results"
        mt=$(med "${xt[@]:-}") mf=$(med "${fl[@]:-}") mb=$(med "${br[@]:-}")
        mh=$(med "${xhost[@]:-}") me=$(med "${xest[@]:-}")
        fence_rows+=("$(printf '%-6s %6s | %7s %7s | %8s | %7s %7s %7s | %7s | %7s %7s %7s | %6s | %6s %6s %6s | %6s %6s' \
            "$shape" "$(med "${xo[@]:-}")" "${mf:--}" "${mb:--}" "${mt:--}" "$(med "${xp[@]:-}")" \
            "$(med "${xf[@]:-}")" "$(med "${xg[@]:-}")" "$(med "${xh[@]:-}")" "$(med "${xm[@]:-}")" "$(med "${xs[@]:-}")" \
            "$(med "${xr[@]:-}")" "$(med "${xc[@]:-}")" "$(ratio "$mt" "$mf")" "$(ratio "$mh" "$mf")" \
            "$(ratio "$me" "$mf")" "$(ratio "$mb" "$mf")" "$(ratio "$mt" "$mb")")")
    done
    {
        echo "goal: wire-up across 4 simulated nodes <= 1.3x the single-node run of the same N"
        echo
        printf '# the cross-node fence, %s (us, median of %s runs) beside a bare OpenPMIx client collecting the same bytes\n' "$where_label" "$reps"
        printf '%-6s %6s | %7s %7s | %8s | %7s %7s %7s | %7s | %7s %7s %7s | %6s | %6s %6s %6s | %6s %6s\n' \
            "KxM" "bytes" "floor" "bridge" "pmigate" "put" "fence" "get" "handoff" "merge" "segment" "reply" "cpu" \
            "x" "host x" "cpu x" "brdg x" "vs brdg"
        printf '%s\n' "${fence_rows[@]}"
        echo "goal: pmigate's fence <= 1.2x the floor (x: the whole fence; host x: put + fence + get;"
        echo "  cpu x: put + fence + get + the proxy's CPU time in merge, segment and reply, i.e. without the"
        echo "  waiting for a CPU that K simulated nodes' ranks on one machine's cores add; brdg x: the floor"
        echo "  plus M bare fence replies, the least any bridge can reach here; vs brdg: pmigate over that)"
    } | tee -a "$results"
}

p99() {
    sort -g | awk '{a[NR]=$1} END {if (NR) {i=int(NR*0.99); if (i < NR*0.99) i++; print a[i]}}'
}

# names_run WHERE PROG ARGS...: the program on 2 nodes (WHERE proxy) or one
# (run), 2 ranks; its output on stdout
names_run() {
    local where=$1
    shift
    if [ "$where" = proxy ]; then
        timeout 120 "${launch[@]}" -np 2 "$pmigate" proxy $opts -n 2 "$@" 2>/dev/null
    else
        timeout 120 "$pmigate" run $opts -n 2 "$@" 2>/dev/null
    fi
}

# bench_names: table 3 (above), for the proxies launched by ${launch[@]}.
bench_names() {
    local i w rounds_n=${BENCH_NAMES_ROUNDS:-200} cdir=$PG_BUILD/tests/cluster
    [ -x "$cdir/pmix_names" ] && [ -x "$cdir/pmix_events" ] ||
        { echo "nodes: $cdir/pmix_names, pmix_events not built (make check builds them)"; return 0; }
    for w in proxy run; do
        : >"$work/lookup.$w"
        : >"$work/wake.$w"
        : >"$work/notify.$w"
        for ((i = 0; i < reps; i++)); do
            names_run $w "$cdir/pmix_names" time "$rounds_n" >"$work/names.out"
            sed -n 's/^pmix_names lookup_us=//p' "$work/names.out" >>"$work/lookup.$w"
            sed -n 's/^pmix_names wake_us=//p' "$work/names.out" >>"$work/wake.$w"
            names_run $w "$cdir/pmix_events" time 0 "$rounds_n" |
                sed -n 's/^pmix_events round_trip_us=//p' >>"$work/notify.$w"
        done
    done
    {
        printf '# names and events across 2 nodes, %s, vs pmigate run -n 2 (us; %s runs, %s rounds each)\n' \
            "$where_label" "$reps" "$rounds_n"
        printf '%-28s | %8s %8s | %8s %8s | %6s\n' "operation" "proxy" "p99" "run" "p99" "x"
        for op in lookup wake notify; do
            pm=$(median <"$work/$op.proxy") rm=$(median <"$work/$op.run")
            printf '%-28s | %8s %8s | %8s %8s | %6s\n' \
                "$(case $op in lookup) echo "PMIx_Lookup (found)" ;; wake) echo "publish -> PMIX_WAIT wakes" ;;
                   notify) echo "notify round trip" ;; esac)" \
                "${pm:--}" "$(p99 <"$work/$op.proxy")" "${rm:--}" "$(p99 <"$work/$op.run")" "$(ratio "$pm" "$rm")"
        done
    } | tee -a "$results"
}

date -u '+%F %H:%M UTC' | sed 's/^/# nodes: /' | tee "$results"
box_up=0
for where in $wheres; do
    case $where in
    machine)
        launch=("$mpirun" --oversubscribe) times=()
        where_label="on this machine (simulated nodes)"
        ;;
    box | box:*)
        if [ $box_up = 0 ]; then
            kmax=$(for shape in $shapes; do echo "${shape%x*}"; done | sort -n | tail -n 1)
            . "$top/tests/cluster/cluster.sh"
            CLUSTER_SHARE="$top $PG_BUILD $PG_PREFIX" # a checkout under /tmp, too
            CLUSTER_AT_EXIT='rm -rf "$work"'
            cluster_up "${kmax:-4}" || { echo "nodes: the cluster in a box does not start"; exit 1; }
            box_up=1
        fi
        rate=${where#box}
        rate=${rate#:}
        cluster_rate "${rate:-none}" || exit 1
        launch=("$CLUSTER_MPIRUN" --map-by ppr:1:node) times=(-x PMIGATE_PROXY_TIMES=1)
        where_label="on the cluster in a box, one host each, links ${rate:-unlimited}"
        ;;
    *) echo "nodes: BENCH_WHERE: no place named $where (machine, box, box:RATE)"; exit 2 ;;
    esac
    bench_at
    if [ "$where" = box ]; then
        echo | tee -a "$results"
        bench_names
    fi
    bench_dmodex
    echo | tee -a "$results"
done
