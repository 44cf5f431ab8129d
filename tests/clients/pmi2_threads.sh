#!/bin/sh
# pmi2_threads.sh: 8 threads x 1000 mixed PMI-2 requests over one socket per
# rank, plus a thread waiting in PMI2_Info_GetNodeAttr(wait) for an attribute
# posted later, linked with pmigate's libpmi2: under mpiexec.hydra -n 2 and
# -n 4, and under pmigate run -n 4.
. "$top_srcdir/tests/clients/clients_lib.sh"
prog=$top_builddir/tests/clients/pmi2_threads

if [ -n "$HYDRA" ]; then
    run_job "pmi2_threads under mpiexec.hydra -n 2" 2 "$HYDRA" -n 2 "$prog"
    run_job "pmi2_threads under mpiexec.hydra -n 4" 4 "$HYDRA" -n 4 "$prog"
else
    echo "SKIP: mpiexec.hydra not installed (apt-get install mpich)"
fi
if pmigate_ready; then
    # Known gateway issue (reported): the engine's hang detection counts a
    # process with one held info-getnodeattr(wait) as blocked, although its
    # other threads keep working; with every rank's waiter held it ends the
    # waits with found=FALSE before rank 0 posts.  Only that exact symptom is
    # an expected failure; anything else fails.
    out=$(timeout 180 "$PMIGATE" run -n 4 "$prog" 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c ': ok')" -eq 4 ]; then
        echo "PASS: pmi2_threads under pmigate run -n 4"
    elif printf '%s\n' "$out" | grep -q 'waiting getnodeattr: found=0' &&
         ! printf '%s\n' "$out" | grep -q 'thread [0-9]*:'; then
        echo "XFAIL: pmi2_threads under pmigate run -n 4: held getnodeattr ended by hang detection"
    else
        echo "FAIL: pmi2_threads under pmigate run -n 4 (exit $rc)"
        printf '%s\n' "$out" | head -n 20
        failures=$((failures + 1))
    fi
else
    echo "SKIP: pmigate run -n 1 /bin/true does not work yet"
fi
exit $((failures > 0))
