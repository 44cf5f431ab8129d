#!/bin/sh
# `pmigate proxy` on the cluster in a box, Open MPI's mpirun as the PMIx
# host (ORTE reaching the hosts through the rsh agent): the checks are in
# proxy_cases.sh.
PG_HOST=mpirun
. "$(dirname "$0")/proxy_cases.sh"
