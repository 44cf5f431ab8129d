#!/bin/sh
# `pmigate proxy` where it needs no separate hosts (the multi-node checks
# run on the cluster in a box, tests/cluster/proxy_*.sh): without a PMIx
# host it says so in one line; several proxies on this one machine under
# Open MPI's mpirun (ORTE hosting OpenPMIx 4.2), as a user tries it out,
# wire a job up across them and their nodes' host names get the node index
# appended, shown in each node's trace; each node's trace replays alone
# (its ranks against the other nodes' recorded fence contributions), one
# without those is refused; a single-node trace names no node.
. "$(dirname "$0")/hi_lib.sh"
MPIRUN=${PG_MPIRUN:-mpirun.openmpi}
MIXED=$top_builddir/tests/mixed
skip_unless_built "$PROGS/pmi2_wireup" "$MIXED/mix_pmi1" "$MIXED/mix_pmi2" "$MIXED/mix_pmix"
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    fail "$MPIRUN not found (./dev deps installs openmpi-bin): no PMIx host to test under"
    finish
fi
# CI runs as root; ORTE refuses root unless told
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# host_job K ARGS...: K proxies under mpirun (`pmigate proxy ARGS...`);
# output in $WORK/out, status in $rc.
host_job() {
    k=$1
    shift
    timeout -k 5 120 "$MPIRUN" --oversubscribe -np "$k" "$PMIGATE" proxy "$@" >"$WORK/out" 2>&1
    rc=$?
}

# expect_ok LABEL WANT: the last job exited 0 and WANT ranks said ok.
expect_ok() {
    if [ "$rc" -eq 0 ] && [ "$(grep -cE ': ok( |$)' "$WORK/out")" -eq "$2" ]; then
        pass "$1"
    else
        fail "$1 (exit $rc)"
        head -n 20 "$WORK/out"
    fi
}

# -- no host: one line, non-zero ---------------------------------------------
env -u PMIX_SERVER_URI4 -u PMIX_SERVER_URI3 -u PMIX_SERVER_URI2 -u PMIX_SERVER_URI21 \
    "$PMIGATE" proxy -n 2 /bin/true >"$WORK/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ "$(wc -l <"$WORK/out")" -eq 1 ] && grep -q "no PMIx host" "$WORK/out"; then
    pass "without a host: one line, exit $rc"
else
    fail "without a host: exit $rc, output:"
    cat "$WORK/out"
fi

# -- several proxies on this one machine, as a user tries it out: a wire-up
#    across them, and the host name of each told apart by its node index ---
host_job 2 -n 4 --trace "$WORK/t" "$PROGS/pmi2_wireup"
if [ $rc -eq 0 ] && grep -q '^wireup n=4 ' "$WORK/out"; then
    pass "pmi2_wireup N=4 on 2 proxies on one machine"
else
    fail "pmi2_wireup N=4 on 2 proxies on one machine exited $rc"
    head -n 20 "$WORK/out"
fi
host=$(hostname)
expect_node_traces "a node's trace names the node: header, trace show, trace stats" "$WORK/t" \
    "$host-n0" "$host-n1"
# -- replaying one node's trace: the replay gateway serves that node of the
#    recorded job and stands in for the others with their recorded fence
#    contributions (docs/trace-format.md); a trace without them is refused --
expect_node_replays "pmi2_wireup on 2 nodes" "$WORK/t" 2
grep -v '^#! [0-9]* xfence ' "$WORK/t.1" >"$WORK/t.1.old"
"$PMIGATE" replay --timeout 60 "$WORK/t.1.old" >"$WORK/replay" 2>&1
if [ $? -eq 1 ] && grep -q "node 1's trace of a 2-node job, recorded without what the other nodes contributed" "$WORK/replay"; then
    pass "a node's trace without the other nodes' contributions is refused, saying why"
else
    fail "a node's trace without the other nodes' contributions:"
    cat "$WORK/replay"
fi
printf 'exec "%s" proxy --trace "%s" -n 2 "%s" %s : -n 2 "%s" %s : -n 2 "%s" %s\n' "$PMIGATE" \
    "$WORK/mt" "$MIXED/mix_pmi1" pmi1,pmi1,pmi2,pmi2,pmix,pmix "$MIXED/mix_pmi2" \
    pmi1,pmi1,pmi2,pmi2,pmix,pmix "$MIXED/mix_pmix" pmi1,pmi1,pmi2,pmi2,pmix,pmix >"$WORK/mpmd.sh"
timeout -k 5 120 "$MPIRUN" --oversubscribe -np 3 sh "$WORK/mpmd.sh" >"$WORK/out" 2>&1
rc=$?
expect_ok "mixed job on 3 nodes, traced" 6
expect_node_replays "the mixed PMI-1/PMI-2/PMIx job on 3 nodes" "$WORK/mt" 3

run_job 60 -n 2 --trace "$WORK/t1" "$PROGS/pmi2_wireup"
if [ $rc -eq 0 ] && ! head -n 1 "$WORK/t1" | grep -q ' node=' &&
    ! "$PMIGATE" trace stats "$WORK/t1" | grep -q '^node '; then
    pass "a single-node trace names no node"
else
    fail "pmigate run --trace: exit $rc, or a node named in a single-node trace"
fi
finish
