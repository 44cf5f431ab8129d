#!/usr/bin/env bash
# ./dev bench [name]: runs tests/bench/<name>.sh (or all of them) with the
# build tree and install prefix; each prints medians and ratios.
set -euo pipefail
build=$1 prefix=$2 name=${3:-all}
here=$(cd "$(dirname "$0")" && pwd)
export PG_BUILD=$build PG_PREFIX=$prefix
if [ "$name" = all ]; then
    # pmix_get.sh is part of clients.sh; nodes.sh, spawn.sh and scale.sh run by name only
    for b in parse engine wireup clients trace; do
        bash "$here/$b.sh"
    done
else
    [ -f "$here/$name.sh" ] || { echo "no benchmark named $name (have: $(ls "$here" | sed -n 's/\.sh$//p' | grep -v '^run$' | tr '\n' ' '))" >&2; exit 2; }
    exec bash "$here/$name.sh"
fi
