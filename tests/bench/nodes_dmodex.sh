# nodes_dmodex.sh — sourced by tests/bench/nodes.sh: a direct-modex get
# across nodes.  tests/bench/pmix_dmodex with 16 ranks on each of 2 nodes
# (rank 0 gets a 64-byte key of each of the other node's 16 ranks, after
# a fence without data: each a first get of that rank, a direct modex;
# then a second key of each: already on rank 0's node) under 2
# `pmigate proxy` launched like the wire-up's (${launch[@]}), beside the
# same program under single-node `pmigate run`.  Median and p99 (µs) over
# every get of $reps runs, and the ratios proxy / run.

dmodex_prog=$PG_BUILD/tests/bench/pmix_dmodex

# dmodex_runs proxy|run: every get's "first|again µs" of $reps runs
dmodex_runs() {
    local i
    for ((i = 0; i < reps; i++)); do
        if [ "$1" = proxy ]; then
            timeout 120 "${launch[@]}" -np 2 "$pmigate" proxy $opts -n 32 "$dmodex_prog"
        else
            timeout 120 "$pmigate" run $opts -n 32 "$dmodex_prog"
        fi 2>/dev/null | sed -n 's/^pmix_dmodex \([a-z]*\) us=\([0-9.]*\)$/\1 \2/p'
    done
}

# dmodex_stat FILE LABEL median|p99
dmodex_stat() {
    awk -v l="$2" '$1 == l { print $2 }' "$1" | sort -g |
        awk -v q="$3" '{ a[NR] = $1 } END { if (NR) printf "%.1f\n", q == "p99" ? a[int((NR - 1) * 0.99) + 1] : a[int((NR + 1) / 2)] }'
}

bench_dmodex() {
    local label row pm pp rm rp
    [ -x "$dmodex_prog" ] || { echo "nodes: $dmodex_prog not built" | tee -a "$results"; return 0; }
    dmodex_runs proxy >"$work/dmodex.proxy"
    dmodex_runs run >"$work/dmodex.run"
    {
        printf '# a direct-modex get, %s: 2 nodes x 16 ranks, rank 0 gets a 64-byte key of each rank of the other node (us, all gets of %s runs)\n' \
            "$where_label" "$reps"
        printf '%-28s %8s %8s | %8s %8s | %7s %7s\n' "" "proxy" "p99" "run" "p99" "x" "x p99"
        for label in first again; do
            pm=$(dmodex_stat "$work/dmodex.proxy" $label median) pp=$(dmodex_stat "$work/dmodex.proxy" $label p99)
            rm=$(dmodex_stat "$work/dmodex.run" $label median) rp=$(dmodex_stat "$work/dmodex.run" $label p99)
            case $label in
            first) row="first get (across nodes)" ;;
            again) row="second key (on the node)" ;;
            esac
            printf '%-28s %8s %8s | %8s %8s | %7s %7s\n' "$row" "${pm:--}" "${pp:--}" "${rm:--}" "${rp:--}" \
                "$(ratio "$pm" "$rm")" "$(ratio "$pp" "$rp")"
        done
    } | tee -a "$results"
}
