#!/bin/sh
# Regression: traces recorded from real clients (tests/traces/*.trace, made
# by tests/traces/regenerate.sh; mixed_pmi1_pmi2_pmix_n6 has PMIx ranks)
# must replay against the current gateway with every reply as it was.  A change in what the gateway answers shows up
# here as a MISMATCH naming the rank, command, expected and received message.
. "$top_srcdir/tests/trace/trace_lib.sh"
n=0
for t in "$TRACES"/*.trace; do
    [ -f "$t" ] || continue
    replay_ok "$(basename "$t" .trace)" "$t" --fast
    n=$((n + 1))
done
[ $n -gt 0 ] || fail "no golden traces in $TRACES"
exit 0
