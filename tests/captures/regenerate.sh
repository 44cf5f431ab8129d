#!/usr/bin/env bash
# Re-records the real-traffic test vectors in this folder: builds pmi_tap and
# the two capture programs, runs each scenario under mpiexec.hydra (MPICH
# 4.0.2's hydra, Debian 12) with pmi_tap relaying every rank's PMI_FD, and
# writes <scenario>.cap (rank 0's messages, then rank 1's).  Values that
# change per run (kvs names, business cards) change; the shapes do not.
# Usage: tests/captures/regenerate.sh   (needs mpich, libmpich-dev, libpmi2-0-dev)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gcc -O1 -D_GNU_SOURCE -Wall -Wextra -o "$work/pmi_tap" "$here/pmi_tap.c"
mpicc.mpich -O1 -Wall -o "$work/cap_mpich_pmi1" "$here/cap_mpich_pmi1.c"
gcc -O1 -Wall -Wextra -o "$work/cap_slurm_pmi2" "$here/cap_slurm_pmi2.c" -lpmi2

# record NAME DESCRIPTION PROGRAM [ARGS...]
record() {
    local name=$1 what=$2; shift 2
    (cd "$work" && timeout 120 mpiexec.hydra -n 2 ./pmi_tap "$work/$name" "$@" >/dev/null 2>&1) || true
    {
        echo "# $what"
        echo "# Recorded $(date -u +%Y-%m-%d) by tests/captures/regenerate.sh: mpiexec.hydra -n 2"
        echo "# pmi_tap $name $*  (hydra $(mpiexec.hydra --version 2>/dev/null | sed -n 's/.*Version: *//p' | head -1), Debian 12)."
        echo "# Format: <rank> <C|S> <1|2> <message, C escapes \\n \\\\ \\xHH>; C = client->server,"
        echo "# S = server->client; PMI-2 messages include their 6-byte length field."
        cat "$work/$name".[0-9]*
    } >"$here/$name.cap"
    echo "wrote $here/$name.cap ($(grep -vc '^#' "$here/$name.cap") messages)"
}

record hydra_mpich_pmi1 "MPICH 4.0.2 libmpich (PMI-1 simple client) against hydra 4.0.2: MPI_Init, universe size, publish/lookup/unpublish, barrier, finalize." ./cap_mpich_pmi1
record hydra_mpich_pmi1_abort "MPICH 4.0.2 PMI-1: rank 0 calls MPI_Abort(7) after MPI_Init." ./cap_mpich_pmi1 abort
record hydra_slurm_pmi2 "Slurm libpmi2 22.05.8 (PMI-2 client) against hydra 4.0.2: init, job-getid, getjobattr, kvs-put (';' escaped as ';;'), fence, kvs-get, node attrs, name service, finalize." ./cap_slurm_pmi2
record hydra_slurm_pmi2_abort "Slurm libpmi2 22.05.8: rank 0 calls PMI2_Abort after init (hydra 4.0 does not know PMI-2 abort)." ./cap_slurm_pmi2 abort
