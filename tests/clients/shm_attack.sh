#!/bin/sh
# shm_attack.sh: no file a rank can write crashes the gateway or another
# rank.  A rank of a pmigate libpmi2 job (tests/clients/shm_attack) tries
# to truncate, write, punch and map for writing the node's key segment and
# its commit table while the other ranks have the segment mapped; every
# attempt must fail, the readers must read right, and the gateway must go
# on storing into the commit table and publishing (it used to die of
# SIGBUS, exit 135, and the readers with it).
. "$top_srcdir/tests/clients/clients_lib.sh"
prog=$top_builddir/tests/clients/shm_attack
make_workdir pg-shm-attack
[ -x "$prog" ] || { fail "tests/clients/shm_attack was not built"; finish; }

for n in 2 4; do
    rm -f "$WORK/attacked"
    run_job 120 -n $n "$prog" "$WORK"
    oks=$(grep -c ': ok$' "$WORK/out")
    if [ "$rc" -eq 0 ] && [ "$oks" -eq $n ]; then
        pass "-n $n: every attempt refused, readers and gateway unharmed"
    else
        fail "-n $n: exit $rc, $oks of $n ranks ok"
        cat "$WORK/out"
    fi
done
finish
