#!/usr/bin/env bash
# ./dev bench clients, PMIx part: PMIx_Get latency (median, microseconds)
# through pmigate's libpmix and gateway, 1 rank and 4 ranks: a reserved key
# (PMIX_JOB_SIZE), a fenced key of another rank (repeated: the node segment
# answers) and the same with PMIX_GET_REFRESH_CACHE (a round trip each).
# With 1 rank the "other rank" is the rank itself (its own put).
set -euo pipefail
build=${PG_BUILD:?set PG_BUILD to a configured build directory}
iters=${PG_PMIX_GET_ITERS:-20000}
make -s -C "$build" gateway/pmigate tests/pmix/pmix_get_bench >/dev/null
echo "PMIx_Get latency, pmigate libpmix ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
for n in 1 4; do
    "$build/gateway/pmigate" run -n "$n" "$build/tests/pmix/pmix_get_bench" "$iters"
done
