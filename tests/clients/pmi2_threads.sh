#!/bin/sh
# pmi2_threads.sh: 8 threads x 1000 mixed PMI-2 requests over one socket per
# rank, plus a thread waiting in PMI2_Info_GetNodeAttr(wait) for an attribute
# posted later, linked with pmigate's libpmi2: under mpiexec.hydra -n 2 and
# -n 4, and under pmigate run -n 4.
. "$top_srcdir/tests/clients/clients_lib.sh"
prog=$top_builddir/tests/clients/pmi2_threads

if [ -n "$HYDRA" ]; then
    run_ok_job "pmi2_threads under mpiexec.hydra -n 2" 2 180 "$HYDRA" -n 2 "$prog"
    run_ok_job "pmi2_threads under mpiexec.hydra -n 4" 4 180 "$HYDRA" -n 4 "$prog"
else
    skip_part "mpiexec.hydra not installed (apt-get install mpich)"
fi
if pmigate_ready; then
    run_ok_job "pmi2_threads under pmigate run -n 4" 4 180 "$PMIGATE" run -n 4 "$prog"
else
    fail "pmigate run -n 1 /bin/true does not work"
fi
finish
