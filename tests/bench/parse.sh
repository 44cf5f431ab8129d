#!/usr/bin/env bash
# ./dev bench parse: how fast the codec frames and parses recorded PMI
# traffic, beside a memchr scan of the same bytes (the floor).  Builds
# tests/bench/bench_parse (-O2) in $PG_BUILD (default: ./_build) and runs it
# single-threaded on the captures; PG_BENCH_RUNS / PG_BENCH_SECONDS tune it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${PG_BUILD:-$top/_build}
make -s -C "$build" tests/bench/bench_parse >/dev/null
echo "== bench parse: frame + parse, one core ($(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'))"
exec "$build/tests/bench/bench_parse" -r "${PG_BENCH_RUNS:-7}" -t "${PG_BENCH_SECONDS:-0.3}" "$top/tests/captures"
