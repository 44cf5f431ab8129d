#!/bin/sh
# cluster_without_runtime_lines (tests/cluster/cluster.sh), the filter the
# cluster tests pass a job's output through before comparing it: the host
# runtimes' own diagnostics go (Open MPI's "[host:pid] plm:rsh: Warning:
# setpgid(...)" once failed proxy_mpirun.sh's MPICH comparison), and every
# line of the job stays, even one that looks a little like them.  Needs no
# cluster, no root.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
make_workdir pg_runtime_lines

printf '%s\n' \
    '[pg3n1:4242] plm:rsh: Warning: setpgid(4243,4243) failed in parent with errno=Permission denied' \
    '[pg3n2:17] oob_tcp: connection to 10.77.3.1 refused' \
    'srun: Job 12 step creation temporarily disabled, retrying (Requested nodes are busy)' \
    'slurmstepd: error: *** STEP 12.0 ON pg3n1 CANCELLED AT 2026-11-27T00:00:00 ***' \
    >"$WORK/runtime"
printf '%s\n' \
    '[0] hello from rank 0 of 4' \
    '[1+] the rest of a long line' \
    'pmigate: rank 2 (mpi_hello) exited with status 7' \
    '[3] [pg3n1:4242] plm:rsh: a rank quoting a launcher line' \
    'Warning: a rank of its own' \
    'hello [pg3n1:4242] plm:rsh: not at the start of the line' \
    '[pg3n1] plm: no pid' \
    'srun-like: not srun' \
    >"$WORK/job"
# the job's lines with the runtime's between them (paste's empty lines
# where the runtime's run out dropped)
paste -d '\n' "$WORK/job" "$WORK/runtime" | sed '/^$/d' >"$WORK/mixed"

if cluster_without_runtime_lines <"$WORK/mixed" >"$WORK/kept" && cmp -s "$WORK/kept" "$WORK/job"; then
    pass "the runtime's four diagnostics dropped, the job's $(wc -l <"$WORK/job") lines kept in order"
else
    fail "the filter kept or dropped other lines than the runtime's"
    diff "$WORK/job" "$WORK/kept"
fi
if cluster_without_runtime_lines <"$WORK/runtime" >"$WORK/none" && ! [ -s "$WORK/none" ]; then
    pass "output that is only the runtime's leaves nothing, status 0"
else
    fail "only the runtime's lines: status $?, left '$(cat "$WORK/none")'"
fi
finish
