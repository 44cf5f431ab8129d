#!/bin/sh
# OpenPMIx's Python binding (Debian's python3-pmix) as a client of pmigate
# (tests/pmix/pmix_python.py): 3 Python ranks wire up, read every peer's
# key and find a published name; then an MPMD job of 2 Python ranks and
# one C rank (tests/pmix/pmix_peers) shares one key space.
. "$top_srcdir/tests/lib.sh"
PY=/usr/bin/python3
SCRIPT=$top_srcdir/tests/pmix/pmix_python.py
PEERS=$top_builddir/tests/pmix/pmix_peers
make_workdir pg-pmix-python
skip_unless_built "$PMIGATE" "$PEERS"
"$PY" -c 'import pmix' >/dev/null 2>&1 || skip "OpenPMIx's Python binding (python3-pmix) is not installed"

# expect_oks LABEL PYTHON_OKS C_OKS
expect_oks() {
    py=$(grep -c '^pmix_python rank [0-9]*: ok$' "$WORK/out")
    c=$(grep -c '^pmix_peers rank [0-9]*: ok$' "$WORK/out")
    if [ "$rc" -eq 0 ] && [ "$py" -eq "$2" ] && [ "$c" -eq "$3" ]; then
        pass "$1"
    else
        fail "$1: exit $rc, $py Python and $c C ranks ok"
        grep -v -e DeprecationWarning -e 'from pmix import' -e 'CLIENT .*THREAD' "$WORK/out" | head -n 20
    fi
}

run_job 60 -n 3 "$PY" "$SCRIPT"
expect_oks "3 Python ranks: put, fence, every peer's key, publish/lookup" 3 0
run_job 60 -n 2 "$PY" "$SCRIPT" 0,1 : -n 1 "$PEERS"
expect_oks "2 Python ranks and a C rank in one job share one key space" 2 1
finish
