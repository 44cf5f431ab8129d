#!/bin/sh
# `pmigate replay --ranks N` as a load generator: a 2-rank wire-up pattern
# replayed as 8 ranks, recorded again: 8 ranks connected, each fence had all
# 8, and each copy's per-rank keys were renamed (card-0 .. card-7 put once).
. "$top_srcdir/tests/trace/trace_lib.sh"
need_prog pmi2_wireup

record two 2 pmi2_wireup
replay_ok load "$TMP/two.trace" --fast --ranks 8 --trace "$TMP/eight.trace"
expect_grep 'size=8' "$TMP/eight.trace" "replayed job size"
"$PMIGATE" trace stats "$TMP/eight.trace" >"$TMP/stats" || fail "stats of the load run"
[ "$(grep -c ' 8/8 ' "$TMP/stats")" -eq 2 ] || { cat "$TMP/stats" >&2; fail "fences without all 8 ranks"; }
for r in 0 1 2 3 4 5 6 7; do
    [ "$(grep -c "cmd=kvs-put;key=card-$r;" "$TMP/eight.trace")" -eq 1 ] ||
        fail "card-$r was not put exactly once"
done
exit 0
