#!/bin/sh
# PMIx in traces: a job of PMI-1, PMI-2 and PMIx ranks (tests/mixed) and the
# PMIx rules program (tests/pmix/pmix_rules, 4 ranks) are recorded and
# replayed against the current gateway (every reply must match, PMIx ones by
# request id); a PMIx reply altered in the trace is reported exactly; show
# decodes PMIx frames; stats and the timeline have all six ranks with the
# fences they share.
. "$top_srcdir/tests/trace/trace_lib.sh"
MIX="$top_builddir/tests/mixed"
RULES="$top_builddir/tests/pmix/pmix_rules"
skip_unless_built "$MIX/mix_pmix" "$RULES"

layout=pmi1,pmi1,pmi2,pmi2,pmix,pmix
# The PMIx ranks read no key segment (PMIGATE_SHM emptied), so every get is a
# frame in the trace: with the segment, how many gets still reach the gateway
# depends on timing (a peer's commit for the next round sends a reader back to
# it), and tests/pmix/pmix_shm_gets.sh is where that is checked.
"$PMIGATE" run --timeout 60 --trace "$TMP/mix.trace" -n 2 "$MIX/mix_pmi1" $layout \
    : -n 2 "$MIX/mix_pmi2" $layout : -n 2 env PMIGATE_SHM= "$MIX/mix_pmix" $layout \
    >"$TMP/mix.out" 2>&1 ||
    { cat "$TMP/mix.out" >&2; fail "the mixed job failed"; }
expect_grep ' apps=2,2,2 ' "$TMP/mix.trace" "the MPMD layout in the header"
expect_grep ' 4 4 pmix C \x89PGX\x00\x01' "$TMP/mix.trace" "the PMIx preamble, as pmix"
replay_ok mix "$TMP/mix.trace"
replay_ok mix-fast "$TMP/mix.trace" --fast

# show: PMIx frames in words
"$PMIGATE" trace show "$TMP/mix.trace" --rank 5 >"$TMP/show" || fail "trace show"
expect_grep 'PMIx  ->  preamble rank=fd' "$TMP/show" "show"
expect_grep 'PMIx  ->  fence #3 procs=[] info=[pmix.collect=true]' "$TMP/show" "show"
expect_grep 'PMIx  ->  get #4 proc=kvs_' "$TMP/show" "show"
expect_grep 'PMIx  <-  get #4 SUCCESS value="pmi1-0-round1" poster=0' "$TMP/show" "show"
"$PMIGATE" trace show "$TMP/mix.trace" --cmd fence >"$TMP/fences" || fail "trace show --cmd"
[ "$(grep -c 'PMIx  <-  fence #' "$TMP/fences")" -eq 4 ] || fail "show --cmd fence: PMIx replies"

# stats: PMIx requests and the two fences all six ranks share
"$PMIGATE" trace stats "$TMP/mix.trace" >"$TMP/stats" || fail "trace stats"
expect_grep 'get                  PMIx         20        20' "$TMP/stats" "stats"
[ "$(grep -c ' (mixed)  *6/6 ' "$TMP/stats")" -eq 2 ] || { cat "$TMP/stats" >&2; fail "stats: fences"; }
[ "$(grep -c '  fence by rank [45] [45]$' "$TMP/stats")" -eq 2 ] || fail "stats: the PMIx ranks in each fence"
grep -q '(unnamed)' "$TMP/stats" && fail "stats: requests left unnamed"

# timeline: six rows, each with its protocol, well-formed
"$PMIGATE" trace timeline "$TMP/mix.trace" -o "$TMP/mix.svg" || fail "timeline"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$TMP/mix.svg" || fail "the timeline is not well-formed XML"
else
    python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$TMP/mix.svg" ||
        fail "the timeline is not well-formed XML"
fi
[ "$(grep -c '>rank [0-9]*</text>' "$TMP/mix.svg")" -eq 6 ] || fail "the timeline has not 6 rows"
[ "$(grep -c '>PMIx</text>' "$TMP/mix.svg")" -eq 2 ] || fail "the timeline does not say PMIx"
[ "$(grep -c 'entered last</title></path>' "$TMP/mix.svg")" -eq 2 ] || fail "fence holders"

# an altered PMIx reply: rank 5's get #4 recorded as if the value differed
awk '!done && / 5 5 pmix S .*pmi1-0-round1/ { sub(/pmi1-0-round1/, "pmi1-0-roundX"); done = 1 }
     { print }' "$TMP/mix.trace" >"$TMP/altered.trace"
cmp -s "$TMP/mix.trace" "$TMP/altered.trace" && fail "could not alter the trace"
line=$(grep -n 'pmi1-0-roundX' "$TMP/altered.trace" | cut -d: -f1)
"$PMIGATE" replay --fast --timeout 30 "$TMP/altered.trace" 2>"$TMP/err"
expect_status 1 $? "altered PMIx reply"
expect_grep "MISMATCH: rank 5, reply to get #4 (trace line $line, connection 5)" "$TMP/err" "altered"
expect_grep 'expected: get #4 SUCCESS value="pmi1-0-roundX" poster=0' "$TMP/err" "altered"
expect_grep 'got:      get #4 SUCCESS value="pmi1-0-round1" poster=0' "$TMP/err" "altered"
expect_grep 'first difference: value: expected STRING "pmi1-0-roundX", got STRING "pmi1-0-round1"' \
    "$TMP/err" "altered"

# the load generator: the mixed pattern as 12 ranks, PMIx keys renamed per copy
replay_ok load "$TMP/mix.trace" --fast --ranks 12 --trace "$TMP/twelve.trace"
"$PMIGATE" trace show "$TMP/twelve.trace" --rank 11 >"$TMP/show12" || fail "show of the load run"
expect_grep 'commit #2 puts=[mix1-11=' "$TMP/show12" "--ranks: a PMIx per-rank key renamed"
expect_grep 'get #4 proc=kvs_' "$TMP/show12" "--ranks"

# the PMIx rules program, over PMI_FD and over PMIGATE_PMI_PORT
"$PMIGATE" run --timeout 120 --trace "$TMP/rules.trace" -n 4 "$RULES" >"$TMP/rules.out" 2>&1 ||
    { cat "$TMP/rules.out" >&2; fail "pmix_rules failed"; }
replay_ok rules "$TMP/rules.trace" --fast
"$PMIGATE" run --timeout 120 --trace "$TMP/rules_port.trace" -n 4 \
    sh -c 'unset PMI_FD; exec "$0"' "$RULES" >"$TMP/rules.out" 2>&1 ||
    { cat "$TMP/rules.out" >&2; fail "pmix_rules over PMI_PORT failed"; }
expect_grep ' -1 pmix C \x89PGX' "$TMP/rules_port.trace" "a PMI_PORT preamble before the rank"
replay_ok rules-port "$TMP/rules_port.trace" --fast
exit 0
