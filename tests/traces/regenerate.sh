#!/bin/sh
# Records the golden traces replayed by tests/trace/golden.sh from real
# clients: MPICH 4 hello (PMI-1 inside libmpich), Slurm libpmi2 wire-up and
# feature programs (PMI-2), and one job of pmigate's libpmi, libpmi2 and
# libpmix ranks (tests/mixed: PMI-1, PMI-2 and PMIx sharing two fences).  Run after a deliberate change of what the
# gateway answers, look at the diff, commit it.
# Usage: tests/traces/regenerate.sh BUILD_DIR
set -eu
build=${1:?usage: regenerate.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
pmigate=$build/gateway/pmigate
progs=$build/tests/progs
"$pmigate" run --trace "$here/mpich_hello_n2.trace" -n 2 "$progs/mpi_hello" >/dev/null
"$pmigate" run --trace "$here/slurm_pmi2_wireup_n4.trace" -n 4 "$progs/pmi2_wireup" >/dev/null
"$pmigate" run --trace "$here/slurm_pmi2_features_n2.trace" -n 2 "$progs/pmi2_features" >/dev/null
mix=$build/tests/mixed layout=pmi1,pmi1,pmi2,pmi2,pmix,pmix
"$pmigate" run --trace "$here/mixed_pmi1_pmi2_pmix_n6.trace" -n 2 "$mix/mix_pmi1" $layout \
    : -n 2 "$mix/mix_pmi2" $layout : -n 2 "$mix/mix_pmix" $layout >/dev/null
# the command line names this machine's build directory: keep only the words
sed -i "1s|cmdline=.*|cmdline=pmigate run --trace FILE (tests/traces/regenerate.sh)|" "$here"/*.trace
