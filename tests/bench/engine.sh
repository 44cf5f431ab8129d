#!/usr/bin/env bash
# ./dev bench engine: the engine's store alone (no sockets): put and get
# rates on 1024 ranks x 16 keys, median warm get latency, bytes per key.
set -euo pipefail
build=${PG_BUILD:?set PG_BUILD to a configured build directory}
make -s -C "$build" tests/bench/bench_engine >/dev/null
exec "$build/tests/bench/bench_engine"
