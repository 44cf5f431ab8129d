#!/bin/sh
# One job, three PMI APIs: `pmigate run -n 2 mix_pmi1 : -n 2 mix_pmi2 : -n 2
# mix_pmix` is one namespace in which every rank reads every other rank's
# keys whatever API posted them, and the PMI-1 barrier, the PMI-2 fence and
# the PMIx fence synchronise the same job (tests/mixed/mixed.h has the rules).
. "$(dirname "$0")/../lib.sh"
bin=$top_builddir/tests/mixed

layout=pmi1,pmi1,pmi2,pmi2,pmix,pmix
run_ok_job "2 x PMI-1 : 2 x PMI-2 : 2 x PMIx" 6 120 "$PMIGATE" run \
    -n 2 "$bin/mix_pmi1" "$layout" : -n 2 "$bin/mix_pmi2" "$layout" : -n 2 "$bin/mix_pmix" "$layout"
layout=pmix,pmi2,pmi1
run_ok_job "PMIx : PMI-2 : PMI-1, one rank each" 3 120 "$PMIGATE" run \
    -n 1 "$bin/mix_pmix" "$layout" : -n 1 "$bin/mix_pmi2" "$layout" : -n 1 "$bin/mix_pmi1" "$layout"
finish
