#!/bin/sh
# `pmigate proxy` on the cluster in a box, Slurm as the PMIx host (srun
# --mpi=pmix, a slurmd per host): the checks are in proxy_cases.sh.
PG_HOST=slurm
. "$(dirname "$0")/proxy_cases.sh"
