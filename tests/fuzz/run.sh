#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS: builds fuzz_wire.c with clang's libFuzzer and
# ASan + UBSan straight from the sources (ragel output regenerated into the
# work dir), seeds the corpus with every message of tests/captures/ (each
# alone, and each rank's whole session as one stream), and fuzzes for
# SECONDS.  Work dir: _fuzz/ at the top (gitignored); the corpus there grows
# from run to run; crashes land in _fuzz/artifacts/.  Exit status is
# libFuzzer's: non-zero when it found a crash.
set -euo pipefail
seconds=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$top/_fuzz
gen=$work/gen
mkdir -p "$gen/parser" "$work/corpus" "$work/artifacts"

awk -f "$top/parser/pg_cmds.awk" "$top/wire/pg_cmd.def" >"$gen/parser/pg_cmds.rl"
for m in pg_pmi1_parser pg_pmi2_parser; do
    ragel -G2 -I"$top/parser" -I"$gen/parser" -C "$top/parser/$m.rl" -o "$gen/parser/$m.c"
done

clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -D_GNU_SOURCE -I"$top" -I"$gen" -Wall -Wextra -Wno-unused-parameter -Wno-implicit-fallthrough \
    -o "$work/fuzz_wire" "$top/tests/fuzz/fuzz_wire.c" \
    "$top/wire/pg_wire.c" "$top/wire/pg_frame.c" "$top/wire/pg_detect.c" "$top/wire/pg_enc.c" \
    "$top/parser/pg_parse.c" "$gen/parser/pg_pmi1_parser.c" "$gen/parser/pg_pmi2_parser.c"

# Seeds: capture lines use the escapes printf %b understands (\n \\ \xHH).
seeds=$work/seeds
rm -rf "$seeds" && mkdir -p "$seeds"
n=0
for cap in "$top"/tests/captures/*.cap; do
    base=$(basename "$cap" .cap)
    while read -r rank dir proto msg; do
        case $rank in '#'* | '') continue ;; esac
        n=$((n + 1))
        printf '%b' "$msg" >"$seeds/$base-$n"
        printf '%b' "$msg" >>"$seeds/$base-session-$rank-$dir"
    done <"$cap"
done
echo "fuzz_wire: $n seed messages, ${seconds}s, corpus $work/corpus"

cd "$work"
exec ./fuzz_wire -max_total_time="$seconds" -max_len=70000 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds"
