#!/bin/sh
# pmi1_api.sh: the PMI-1 API program linked with pmigate's libpmi, under
# mpiexec.hydra (a server we did not write) with 2 and 4 ranks, and under
# pmigate with 4 ranks, where rank 0 spawns 3 children with
# PMI_Spawn_multiple (and a missing program, which must fail with ENOENT).
. "$top_srcdir/tests/clients/clients_lib.sh"
prog=$top_builddir/tests/clients/pmi1_api

# The calls Slurm's, Flux's and OpenPMIx's libpmi export besides MPICH's
# current set: a program written against them must link with ours.
lib=$top_builddir/pmi1/.libs/libpmi.so.0
for sym in PMI_Get_id PMI_Get_kvs_domain_id PMI_Get_id_length_max; do
    if nm -D --defined-only "$lib" | grep -qw "T $sym"; then
        pass "libpmi.so.0 exports $sym"
    else
        fail "libpmi.so.0 does not export $sym"
    fi
done

if [ -n "$HYDRA" ]; then
    run_ok_job "pmi1_api under mpiexec.hydra -n 2" 2 180 "$HYDRA" -n 2 "$prog"
    run_ok_job "pmi1_api under mpiexec.hydra -n 4" 4 180 "$HYDRA" -n 4 "$prog"
else
    skip_part "mpiexec.hydra not installed (apt-get install mpich)"
fi
if pmigate_ready; then
    # the children are started by pmigate, not through the libtool wrapper:
    # the library path makes them load the libpmi just built too
    run_ok_job "pmi1_api under pmigate run -n 4, spawning 3 children" 7 180 env PMI1_API_SPAWN=1 \
        LD_LIBRARY_PATH="$top_builddir/pmi1/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$PMIGATE" run -n 4 "$prog"
else
    fail "pmigate run -n 1 /bin/true does not work"
fi
finish
