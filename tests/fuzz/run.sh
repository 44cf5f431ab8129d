#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS [TARGET...]: builds every libFuzzer target with
# clang's libFuzzer and ASan + UBSan straight from the sources (ragel output
# regenerated into the work dir), seeds each one, and fuzzes each for
# SECONDS, one after the other (so the whole run takes about 5 x SECONDS).
# Targets (all when none is named):
#   wire   fuzz_wire.c: PMI-1/PMI-2 framer, parsers, detection, encoders;
#          seeds: every message of tests/captures/ (each alone, and each
#          rank's whole session as one stream).
#   pmix   fuzz_pmix.c: PMIx preamble/frames, pg_unpack of every type, the
#          transport's message layer, the gateway's PMIx handler in a real
#          engine; seeds: pmix_seeds.c (the PMIx frames of tests/traces/,
#          the whole job as one stream, a request per command).
#   trace  fuzz_trace.c: the trace reader and viewers (`pmigate trace`,
#          the start of `pmigate replay`), whole and cut short; seeds:
#          tests/traces/*.trace.
#   shm    fuzz_shm.c: the key segment's reader (libpmi, libpmi2, libpmix)
#          on any image, whole or truncated, in a sealed memfd; seeds:
#          shm_seeds.c (segments from the gateway's writer).
#   mesh   fuzz_mesh.c: the proxies' mesh as node 0 reads a link after the
#          handshake (raw bytes, or frames tagged with the link's key) and
#          the frame-body codec under node 0's handlers; seeds: seeds_mesh
#          below (the channel's frames, a job's end, codec fields).
# Work dir: _fuzz/<target>/ at the top (gitignored): the corpus there grows
# from run to run; crashes land in _fuzz/<target>/artifacts/.  Every run
# also starts from the kept corpus tests/fuzz/corpus/<target>/ (in git,
# minimized; read, never written by a run), so a short smoke begins where
# the long runs got to.  Exit status: non-zero when any target found a crash
# (every target still runs).
#
# tests/fuzz/run.sh merge [TARGET...]: rebuilds the kept corpus of each
# target as the minimal set (libFuzzer -merge=1 on edges, -use_counters=0:
# hit counts would keep thousands of files) of the kept corpus, the work
# corpus and the seeds, keeping every edge they reach; for trace, inputs
# over 2 KB are left out (whole traces made it megabytes for 5% of its
# edges).  Commit the result.
set -euo pipefail
mode=fuzz
if [ "${1:-}" = merge ]; then
    mode=merge
    seconds=0
else
    seconds=${1:-60}
fi
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(wire pmix trace shm mesh)
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$top/_fuzz
gen=$work/gen
mkdir -p "$gen/parser"

awk -f "$top/parser/pg_cmds.awk" "$top/wire/pg_cmd.def" >"$gen/parser/pg_cmds.rl"
for m in pg_pmi1_parser pg_pmi2_parser; do
    ragel -G2 -I"$top/parser" -I"$gen/parser" -C "$top/parser/$m.rl" -o "$gen/parser/$m.c"
done

cflags=(-g -O1 -D_GNU_SOURCE -I"$top" -I"$gen" -I"$top/pmix/include"
    -Wall -Wextra -Wno-unused-parameter -Wno-implicit-fallthrough)
fuzzflags=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
wire_src=("$top/wire/pg_wire.c" "$top/wire/pg_frame.c" "$top/wire/pg_detect.c"
    "$top/wire/pg_enc.c" "$top/wire/pg_escape.c" "$top/parser/pg_parse.c"
    "$gen/parser/pg_pmi1_parser.c" "$gen/parser/pg_pmi2_parser.c")
pack_src=("$top"/wire/pack/pg_pack*.c "$top/wire/pg_pmix_msg.c")
engine_src=("$top"/engine/pg_*.c) # the whole engine: it has no I/O
trace_src=("$top"/trace/pg_trace{,_pmix,_analyze,_view,_svg}.c)
shm_src=("$top/client/pg_cl_shm.c")
mesh_src=("$top"/gateway/mesh/pg_mesh*.c "$top/gateway/proxy/pg_jobend.c"
    "$top/gateway/proxy/pg_spawn_wire.c" "$top/wire/pg_clock.c")

# build_target NAME SOURCES...: _fuzz/NAME/fuzz_NAME
build_target() {
    local name=$1; shift
    mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
    clang "${cflags[@]}" "${fuzzflags[@]}" -o "$work/$name/fuzz_$name" \
        "$top/tests/fuzz/fuzz_$name.c" "$@" -lm
}

# Seeds of each target into a fresh _fuzz/NAME/seeds; prints the count.
seeds_wire() {
    local seeds=$1 n=0 cap base rank dir proto msg
    for cap in "$top"/tests/captures/*.cap; do
        base=$(basename "$cap" .cap)
        # capture lines use the escapes printf %b understands (\n \\ \xHH)
        while read -r rank dir proto msg; do
            case $rank in '#'* | '') continue ;; esac
            n=$((n + 1))
            printf '%b' "$msg" >"$seeds/$base-$n"
            printf '%b' "$msg" >>"$seeds/$base-session-$rank-$dir"
        done <"$cap"
    done
    # over-long messages (answered by their head and skipped), each followed
    # by a short one
    printf 'cmd=put kvsname=x key=k value=%s\ncmd=get_maxes\n' \
        "$(head -c 5000 /dev/zero | tr '\0' v)" >"$seeds/oversized-pmi1"
    { printf ' 66000cmd=kvs-put;thrid=7;key=k;value='; head -c 65962 /dev/zero | tr '\0' v
      printf '    14cmd=finalize;'; } >"$seeds/oversized-pmi2"
    echo "$((n + 2))"
}

seeds_pmix() {
    clang "${cflags[@]}" -o "$work/pmix/pmix_seeds" "$top/tests/fuzz/pmix_seeds.c" \
        "${pack_src[@]}" "$top/wire/pg_escape.c"
    "$work/pmix/pmix_seeds" "$1" "$top"/tests/traces/*.trace
}

seeds_trace() {
    cp "$top"/tests/traces/*.trace "$1"/
    ls "$1" | wc -l
}

seeds_shm() {
    clang "${cflags[@]}" -o "$work/shm/shm_seeds" "$top/tests/fuzz/shm_seeds.c" \
        "$top/gateway/io/pg_shm.c" "$top/pmix/server/pg_pmix_value.c" "${engine_src[@]}" \
        "${pack_src[@]}" "${wire_src[@]}" -lm
    "$work/shm/shm_seeds" "$1"
    ls "$1" | wc -l
}

# A mode byte (0 raw, 1 sealed) and records: u8 type, u8 route, u16 length,
# body (fuzz_mesh.c says what they mean).
seeds_mesh() {
    local s=$1
    printf '\x00%s' 'GET / HTTP/1.0' >"$s/raw-stranger"
    printf '\x00\x00\x00\x00\x05\x00\x04\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00' >"$s/raw-untagged-heartbeat"
    printf '\x01\x04\x00\x00\x00' >"$s/sealed-heartbeat"
    printf '\x01\x06\x00\x00\x04\x00\x00\x01\xf4\x07\x00\x00\x00' >"$s/sealed-quiet-ready"
    printf '\x01\x05\x00\x00\x00' >"$s/sealed-bye"
    printf '\x01\x08\x00\x00\x00' >"$s/sealed-refused"
    # a job's end: FAIL (u64 when, u32 code, u32 flags, u32 node, text) to
    # node 0: the leaf's own abort, and a node it lost
    printf '\x01\x40\x00\x00\x22\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x2a\x00\x00\x00\x01\x00\x00\x00\x01rank 0 aborted' >"$s/sealed-jobend-fail"
    printf '\x01\x40\x00\x00\x24\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x02node 2 (x) was lost' >"$s/sealed-jobend-lost"
    printf '\x01\x41\x00\x00\x0b\x00\x00\x00\x01\x00\x00\x00\x00end' >"$s/sealed-jobend-end"
    # codec fields (each byte picks the next read) to every node, relayed
    printf '\x01\x50\x0c\x00\x10\x01\x04\x05\x06\x00\x00\x00\x03abc\xff\xff\xff\xff' >"$s/sealed-codec-all"
    printf '\x01\x70\x04\x00\x08\x07\x08\x09\x02\x00\x00\x00\x02' >"$s/sealed-codec-to-leaf"
    # a spawn request cut short, and one from a node that is no peer
    printf '\x01\x90\x00\x00\x08\x00\x00\x00\x01\x00\x00\x00\x05' >"$s/sealed-spawn-short"
    printf '\x01\x50\x03\x00\x01\x00' >"$s/sealed-wrong-source"
    ls "$s" | wc -l
}

run_target() {
    local name=$1 max_len=$2 seeds=$work/$1/seeds kept=$top/tests/fuzz/corpus/$1 n
    [ "$mode" = merge ] && { merge_target "$name" "$max_len"; return; }
    rm -rf "$seeds" && mkdir -p "$seeds" "$kept"
    n=$("seeds_$name" "$seeds")
    echo "fuzz_$name: $n seeds, $(ls "$kept" | wc -l) kept, ${seconds}s, corpus $work/$name/corpus"
    (cd "$work/$name" && "./fuzz_$name" -max_total_time="$seconds" -max_len="$max_len" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/$name/artifacts/" "$work/$name/corpus" "$kept" "$seeds")
}

# The kept corpus becomes the smallest set reaching every edge that the
# kept corpus, the work corpus and the seeds reach together (inputs up to
# `cap` bytes when a cap is given).
merge_target() {
    local name=$1 max_len=$2 kept=$top/tests/fuzz/corpus/$1 fresh=$work/$1/merged
    local seeds=$work/$1/seeds pool=$work/$1/pool cap=0 dir
    [ "$name" = trace ] && cap=2048
    rm -rf "$fresh" "$seeds" "$pool" && mkdir -p "$fresh" "$kept" "$seeds" "$pool" "$work/$name/corpus"
    "seeds_$name" "$seeds" >/dev/null
    for dir in "$kept" "$work/$name/corpus" "$seeds"; do
        if [ "$cap" -gt 0 ]; then
            find "$dir" -type f -size -$((cap + 1))c -exec cp -t "$pool" {} +
        else
            find "$dir" -type f -exec cp -t "$pool" {} +
        fi
    done
    (cd "$work/$name" && "./fuzz_$name" -merge=1 -use_counters=0 -max_len="$max_len" \
        -timeout=60 -rss_limit_mb=2048 "$fresh" "$pool")
    rm -rf "$kept" "$pool" && mv "$fresh" "$kept"
    echo "fuzz_$name: kept corpus $(ls "$kept" | wc -l) files," \
        "$(du -s --apparent-size -k "$kept" | cut -f1) KB"
}

rc=0
for t in "${targets[@]}"; do
    case $t in
        wire) build_target wire "${wire_src[@]}" && run_target wire 70000 || rc=1 ;;
        pmix) build_target pmix "$top"/pmix/server/pg_pmix_*.c "${pack_src[@]}" \
                  "${engine_src[@]}" && run_target pmix 65536 || rc=1 ;;
        trace) build_target trace "${trace_src[@]}" "${wire_src[@]}" "${pack_src[@]}" &&
                   run_target trace 65536 || rc=1 ;;
        shm) build_target shm "${shm_src[@]}" "${pack_src[@]}" -lpthread &&
                 run_target shm 65536 || rc=1 ;;
        mesh) build_target mesh "${mesh_src[@]}" -levent_core -lcrypto &&
                  run_target mesh 65536 || rc=1 ;;
        *) echo "run.sh: unknown target '$t' (wire, pmix, trace, shm, mesh)" >&2; exit 2 ;;
    esac
done
exit $rc
