#!/bin/sh
# OpenPMIx's Python binding (python3-pmix) as the client of a `pmigate
# proxy` job over 3 separate hosts (the cluster in a box), under Slurm
# (srun --mpi=pmix) and mpirun alike: 6 Python ranks (tests/pmix/
# pmix_python.py) put a key each, fence collecting data across the hosts,
# read every peer's key, and find a name rank 0 published (a waiting
# lookup on every host).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
PY=/usr/bin/python3
SCRIPT=$top_srcdir/tests/pmix/pmix_python.py
"$PY" -c 'import pmix' >/dev/null 2>&1 || skip "OpenPMIx's Python binding (python3-pmix) is not installed"
proxy_cluster_up pg_python 3

for how in slurm mpirun; do
    [ $how = slurm ] && cluster_wait_idle
    proxy_job $how 120 3 -n 6 "$PY" "$SCRIPT"
    ok=$(grep -c '^pmix_python rank [0-5]: ok$' "$WORK/out")
    if [ "$rc" -eq 0 ] && [ "$ok" -eq 6 ]; then
        pass "$how: 6 Python ranks on 3 hosts: every peer's key, a name found on every host"
    else
        fail "$how: Python ranks across hosts: exit $rc, $ok of 6 ok"
        grep -v -e DeprecationWarning -e 'from pmix import' -e 'CLIENT .*THREAD' "$WORK/out" | head -n 20
    fi
done
finish
