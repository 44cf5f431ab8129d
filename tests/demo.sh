#!/usr/bin/env bash
# ./dev demo: the most real thing pmigate does — an unmodified MPICH program
# (PMI-1 inside Debian's libmpich) launched and wired up by `pmigate run`,
# then the same wire-up spoken by Slurm's PMI-2 client library.
set -euo pipefail
prefix=$1
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/_build
pmigate=$prefix/bin/pmigate

step() { printf '\n$ %s\n' "$*"; "$@"; }

step "$pmigate" --version
step "$pmigate" run -n 4 --tag-output "$build/tests/progs/mpi_hello"
if [ -x "$build/tests/progs/pmi2_wireup" ]; then
    step "$pmigate" run -n 8 "$build/tests/progs/pmi2_wireup"
fi
printf '\nThe PMI conversation of one rank (pmigate run --verbose, rank 1 of 2):\n'
"$pmigate" run -n 2 --verbose "$build/tests/progs/mpi_hello" --quiet 2>&1 |
    grep -E 'rank 1 (cmd|reply)' | head -20 || true
