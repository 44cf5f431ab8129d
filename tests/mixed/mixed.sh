#!/bin/sh
# One job, three PMI APIs: `pmigate run -n 2 mix_pmi1 : -n 2 mix_pmi2 : -n 2
# mix_pmix` is one namespace in which every rank reads every other rank's
# keys whatever API posted them, and the PMI-1 barrier, the PMI-2 fence and
# the PMIx fence synchronise the same job (tests/mixed/mixed.h has the rules).
pmigate=$top_builddir/gateway/pmigate
bin=$top_builddir/tests/mixed
failures=0

run_mixed() {
    label=$1 want=$2 layout=$3
    shift 3
    out=$(timeout 120 "$pmigate" run "$@" 2>&1)
    rc=$?
    oks=$(printf '%s\n' "$out" | grep -c ': ok$')
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$want" ]; then
        echo "PASS: $label"
    else
        echo "FAIL: $label (exit $rc, $oks of $want ranks ok)"
        printf '%s\n' "$out" | head -n 20
        failures=$((failures + 1))
    fi
}

layout=pmi1,pmi1,pmi2,pmi2,pmix,pmix
run_mixed "2 x PMI-1 : 2 x PMI-2 : 2 x PMIx" 6 "$layout" \
    -n 2 "$bin/mix_pmi1" "$layout" : -n 2 "$bin/mix_pmi2" "$layout" : -n 2 "$bin/mix_pmix" "$layout"
layout=pmix,pmi2,pmi1
run_mixed "PMIx : PMI-2 : PMI-1, one rank each" 3 "$layout" \
    -n 1 "$bin/mix_pmix" "$layout" : -n 1 "$bin/mix_pmi2" "$layout" : -n 1 "$bin/mix_pmi1" "$layout"
exit $((failures > 0))
