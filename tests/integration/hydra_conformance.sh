#!/bin/sh
# Conformance with hydra: the same MPICH job (mpi_hello, N=2 and 4) under
# `mpiexec.hydra -verbose` and `pmigate run --verbose`.  The PMI command
# sequences must match (the same request names, the same number of times),
# every pmigate reply must carry rc=0, and the set of reply commands must be
# hydra's minus its proxy-internal keyval_cache (values such as the kvsname
# are not compared).
. "$(dirname "$0")/hi_lib.sh"
command -v mpiexec.hydra >/dev/null || skip "mpiexec.hydra not installed (apt-get install mpich)"
skip_unless_built "$PROGS/mpi_hello"
probe_handlers

for n in 2 4; do
    # line-buffered (stdbuf reaches the proxy through the environment): a
    # log line still in a buffer when the proxy exits would be lost
    timeout -k 5 60 stdbuf -oL -eL mpiexec.hydra -verbose -n $n "$PROGS/mpi_hello" >"$WORK/hydra" 2>&1 ||
        { fail "hydra itself failed at N=$n"; continue; }
    run_job 60 --verbose -n $n "$PROGS/mpi_hello"
    [ $rc -eq 0 ] || { fail "pmigate N=$n exited $rc"; cat "$WORK/out"; continue; }
    # requests: hydra's proxy logs "got pmi command (from F): NAME"; found
    # anywhere in a line, as the ranks' output can run into the proxy's log
    # line (one lost barrier_in made this test fail on a loaded machine)
    grep -o 'got pmi command (from [0-9]*): [a-z_]*' "$WORK/hydra" | sed 's/.*: //' |
        sort | uniq -c >"$WORK/hydra.req"
    sed -n 's/^pmigate: rank [0-9]* cmd: cmd=\([a-z_]*\).*/\1/p' "$WORK/out" | sort | uniq -c >"$WORK/pg.req"
    diff "$WORK/hydra.req" "$WORK/pg.req" >"$WORK/req.diff" ||
        { fail "N=$n: command sequences differ (hydra < > pmigate)"; cat "$WORK/req.diff"; }
    # replies: the same commands (hydra's proxy-internal keyval_cache aside)
    sed -n 's/^\[proxy:[^]]*\] PMI response: cmd=\([a-z_]*\).*/\1/p' "$WORK/hydra" |
        grep -v '^keyval_cache$' | sort -u >"$WORK/hydra.resp"
    sed -n 's/^pmigate: rank [0-9]* reply: cmd=\([a-z_]*\).*/\1/p' "$WORK/out" | sort -u >"$WORK/pg.resp"
    diff "$WORK/hydra.resp" "$WORK/pg.resp" >"$WORK/resp.diff" ||
        { fail "N=$n: reply commands differ (hydra < > pmigate)"; cat "$WORK/resp.diff"; }
    if grep '^pmigate: rank [0-9]* reply: cmd=' "$WORK/out" | grep -v ' rc=0' | grep -q .; then
        fail "N=$n: a pmigate reply without rc=0"
        grep '^pmigate: rank [0-9]* reply: cmd=' "$WORK/out" | grep -v ' rc=0'
    fi
done
finish
