#!/bin/sh
# `pmigate proxy` under Open MPI's mpirun (ORTE hosting OpenPMIx 4.2) as the
# PMIx host runtime: K proxies started on this one machine, one proxy = one
# node by pmigate's definition (their ranks see K nodes in
# PMI_process_mapping, node attributes and PMIx node data, and every key put
# on another node reaches them only through the host's fence).  Each job's
# result must equal the same job under single-node `pmigate run`: Slurm
# libpmi2 wire-up and features at K = 2, 3, 4, uneven rank counts, PMIx node
# data (PMIX_NUM_NODES, PMIX_NODEID, local peers, host names), a mixed
# PMI-1 / PMI-2 / PMIx job (pmigate's libraries; fences with collect, gets of
# remote keys, a remote key before any fence, a PMIx lookup with PMIX_WAIT
# woken by a publish on another node), MPICH hello + allreduce,
# MPI_Abort(7) from a rank on the second node, a rank killed on the third,
# --tag-output, the name service across nodes through the host's
# PMIx_Publish/Lookup, node-named traces and their replays (each node's
# trace alone), the host's PMIX_*/OMPI_*
# variables kept from the ranks, PMIGATE_PROXY_TIMES's line per node and
# fence, and a proxy without a host.
#
# mpirun takes a ':' on its command line as its own MPMD separator, so the
# MPMD proxy line goes into a script that mpirun starts.
. "$(dirname "$0")/hi_lib.sh"
MIXED=$top_builddir/tests/mixed
MPIRUN=${PG_MPIRUN:-mpirun.openmpi}
skip_unless_built "$PROGS/pmi2_wireup" "$PROGS/pmi2_features" "$PROGS/mpi_hello" \
    "$top_builddir/tests/integration/pmix_nodes" \
    "$MIXED/mix_pmi1" "$MIXED/mix_pmi2" "$MIXED/mix_pmix"
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

# oks: how many ranks printed their "...: ok" line.
oks() {
    grep -cE ': ok( |$)' "$WORK/out"
}

# expect_ok LABEL WANT: the last job exited 0 and WANT ranks said ok.
expect_ok() {
    if [ "$rc" -eq 0 ] && [ "$(oks)" -eq "$2" ]; then
        pass "$1"
    else
        fail "$1 (exit $rc, $(oks) of $2 ranks ok)"
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

# -- Slurm libpmi2: wire-up (220-byte cards, fence, get all) ------------------
for k in 2 3 4; do
    host_job $k -n 8 "$PROGS/pmi2_wireup"
    if [ $rc -eq 0 ] && grep -q '^wireup n=8 ' "$WORK/out"; then
        pass "pmi2_wireup N=8 on K=$k nodes"
    else
        fail "pmi2_wireup N=8 on K=$k nodes exited $rc"
        head -n 20 "$WORK/out"
    fi
done

# -- PMIGATE_PROXY_TIMES: each node's line per cross-node fence, with what
#    went out of one node coming into the other -----------------------------
export PMIGATE_PROXY_TIMES=1
host_job 2 -n 8 "$PROGS/pmi2_wireup"
unset PMIGATE_PROXY_TIMES
fields='out in put_us fence_us get_us handoff_us merge_us segment_us reply_us total_us ours_cpu_us'
if [ $rc -eq 0 ] && grep 'cross-node fence 1: ' "$WORK/out" | awk -v want="$fields" '
        { sub(/^pmigate: node /, ""); node = $1 + 0; delete v
          for (i = 5; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          n = split(want, w, " ")
          for (i = 1; i <= n; i++) if (v[w[i]] !~ /^[0-9]+$/) bad = 1
          out[node] = v["out"]; in_[node] = v["in"]; lines++
          # four 220-byte cards at least; the phases fit in the total
          if (v["out"] < 880 || v["merge_us"] + v["reply_us"] > v["total_us"]) bad = 1 }
        END { exit !(lines == 2 && !bad && out[0] == in_[1] && out[1] == in_[0]) }'; then
    pass "PMIGATE_PROXY_TIMES: one line per node for the card fence, node 0's out = node 1's in"
else
    fail "PMIGATE_PROXY_TIMES lines (exit $rc):"
    grep 'cross-node fence' "$WORK/out" | head -n 4
fi

# -- Slurm libpmi2 features: mapping, job attributes, every key, node attrs,
#    name service (rank 0 publishes on node 0, every node looks up) ---------
run_job 60 -n 8 "$PROGS/pmi2_features"
expect_ok "pmi2_features N=8 under pmigate run (the reference)" 8
for case in "2 8 (vector,(0,2,4))" "3 8 (vector,(0,2,3),(2,1,2))" "2 5 (vector,(0,1,3),(1,1,2))" \
    "4 8 (vector,(0,4,2))"; do
    set -- $case
    PG_EXPECT_MAPPING=$3 host_job "$1" -n "$2" "$PROGS/pmi2_features"
    expect_ok "pmi2_features N=$2 on K=$1 nodes, mapping $3, names across nodes" "$2"
done

# -- --ppn: M ranks on every node --------------------------------------------
PG_EXPECT_MAPPING='(vector,(0,3,2))' host_job 3 --ppn 2 "$PROGS/pmi2_features"
expect_ok "pmi2_features --ppn 2 on K=3 nodes" 6

# -- PMIx node data (pmigate's libpmix): nodes, node id, local peers, host
#    names; fence with collect; every key by rank and by RANK_UNDEF ---------
run_job 60 -n 5 "$top_builddir/tests/integration/pmix_nodes" 5
expect_ok "pmix_nodes N=5 under pmigate run (one node)" 5
host_job 2 -n 5 "$top_builddir/tests/integration/pmix_nodes" 3,2
expect_ok "pmix_nodes N=5 on K=2 nodes (3 + 2)" 5
host_job 3 -n 8 "$top_builddir/tests/integration/pmix_nodes" 3,3,2
expect_ok "pmix_nodes N=8 on K=3 nodes (3 + 3 + 2)" 8

# -- mixed PMI-1 / PMI-2 / PMIx job (pmigate's libraries) ---------------------
mixed_job() { # K LAYOUT N1 N2 N3
    printf 'exec "%s" proxy -n %s "%s" %s : -n %s "%s" %s : -n %s "%s" %s\n' "$PMIGATE" \
        "$3" "$MIXED/mix_pmi1" "$2" "$4" "$MIXED/mix_pmi2" "$2" "$5" "$MIXED/mix_pmix" "$2" \
        >"$WORK/mpmd.sh"
    timeout -k 5 120 "$MPIRUN" --oversubscribe -np "$1" sh "$WORK/mpmd.sh" >"$WORK/out" 2>&1
    rc=$?
}
for k in 2 3; do
    mixed_job $k pmi1,pmi1,pmi2,pmi2,pmix,pmix 2 2 2
    expect_ok "mixed 2 x PMI-1 : 2 x PMI-2 : 2 x PMIx on K=$k nodes" 6
done
mixed_job 2 pmi1,pmi1,pmi2,pmi2,pmix 2 2 1
expect_ok "mixed job of 5 ranks on 2 nodes (3 + 2)" 5

# -- MPICH (PMI-1 inside libmpich): hello + allreduce over 2 nodes, the same
#    lines as under pmigate run.  Debian's MPICH (ch4:ucx) does run across
#    simulated nodes: it reaches the other "node"'s ranks through its UCX
#    netmod, and UCX, all ranks being on one host, picks its own shared
#    memory or TCP transports. --------------------------------------------
run_job 60 -n 4 --tag-output "$PROGS/mpi_hello"
sort "$WORK/out" >"$WORK/want"
host_job 2 -n 4 --tag-output "$PROGS/mpi_hello"
if [ $rc -eq 0 ] && grep -q 'allreduce ok: sum of 1..4 = 10' "$WORK/out" &&
    grep -q '^\[3\] hello from rank 3 of 4' "$WORK/out" && sort "$WORK/out" | cmp -s - "$WORK/want"; then
    pass "MPICH hello + allreduce N=4 on 2 nodes, --tag-output with global ranks, as under pmigate run"
else
    fail "MPICH hello N=4 on 2 nodes exited $rc (or its lines differ from pmigate run's)"
    sort "$WORK/out" | diff - "$WORK/want" | head -n 20
fi

# -- failures: the same exit status as under pmigate run ---------------------
# 6 ranks on 3 nodes: node 0 runs 0-1, node 1 runs 2-3, node 2 runs 4-5.
# The issue's "node 2" and "node 3" count from 1: the second and the third.
run_job 60 -n 6 "$PROGS/mpi_hello" --abort=7 --abort-rank=3
want=$rc
host_job 3 -n 6 "$PROGS/mpi_hello" --abort=7 --abort-rank=3
if [ $rc -eq 7 ] && [ $want -eq 7 ] && grep -q 'rank 3 aborted the job (code 7)' "$WORK/out"; then
    pass "MPI_Abort(7) from rank 3 on the second node of 3: exit 7 (pmigate run: $want)"
else
    fail "MPI_Abort(7) from rank 3 on the second node: exit $rc (pmigate run: $want)"
    head -n 20 "$WORK/out"
fi
run_job 60 -n 6 "$PROGS/mpi_hello" --die-before-init=5
want=$rc
host_job 3 -n 6 "$PROGS/mpi_hello" --die-before-init=5
if [ $rc -ne 0 ] && [ $rc -eq $want ] && grep -q 'rank 5 killed by signal 9' "$WORK/out"; then
    pass "rank 5 killed on the third node of 3: exit $rc, named (pmigate run: $want)"
else
    fail "rank 5 killed on the third node: exit $rc (pmigate run: $want)"
    head -n 20 "$WORK/out"
fi

# -- --trace: one file per node (FILE.<node>), global ranks in it, and the
#    node (index, count, host name) in its header, shown by show and stats --
host_job 2 -n 4 --trace "$WORK/t" "$PROGS/pmi2_wireup"
if [ $rc -eq 0 ] && "$PMIGATE" trace show "$WORK/t.1" --rank 2 | grep -q 'cmd=init' &&
    ! "$PMIGATE" trace show "$WORK/t.1" --rank 0 | grep -q 'cmd=' &&
    "$PMIGATE" trace show "$WORK/t.0" --rank 0 | grep -q 'cmd=init'; then
    pass "--trace FILE: FILE.0 has rank 0, FILE.1 rank 2 and not rank 0"
else
    fail "--trace under the proxy (exit $rc)"
    ls "$WORK"
fi
host=$(hostname)
if head -n 1 "$WORK/t.1" | grep -q " node=1 nnodes=2 host=$host-n1 " &&
    "$PMIGATE" trace show "$WORK/t.1" | grep -q "^node 1 of 2 ($host-n1)" &&
    "$PMIGATE" trace stats "$WORK/t.0" | grep -q "^node 0 of 2 ($host-n0)"; then
    pass "a node's trace names the node: header, trace show, trace stats"
else
    fail "the node is not named in the proxy's trace:"
    head -n 1 "$WORK/t.1" | cut -c 1-200
    "$PMIGATE" trace stats "$WORK/t.0" | head -n 3
fi
# -- replaying one node's trace: the replay gateway serves that node of the
#    recorded job and stands in for the others with their recorded fence
#    contributions (docs/trace-format.md); a trace without them is refused --
for n in 0 1; do
    if "$PMIGATE" replay --timeout 60 "$WORK/t.$n" >"$WORK/replay" 2>&1 &&
        grep -q "replies matched" "$WORK/replay"; then
        pass "replay of node $n's trace of pmi2_wireup on 2 nodes"
    else
        fail "replay of node $n's trace of pmi2_wireup on 2 nodes"
        cat "$WORK/replay"
    fi
done
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
for n in 0 1 2; do
    if "$PMIGATE" replay --timeout 60 "$WORK/mt.$n" >"$WORK/replay" 2>&1; then
        pass "replay of node $n's trace of the mixed PMI-1/PMI-2/PMIx job on 3 nodes"
    else
        fail "replay of node $n's trace of the mixed job on 3 nodes"
        cat "$WORK/replay"
    fi
done

run_job 60 -n 2 --trace "$WORK/t1" "$PROGS/pmi2_wireup"
if [ $rc -eq 0 ] && ! head -n 1 "$WORK/t1" | grep -q ' node=' &&
    ! "$PMIGATE" trace stats "$WORK/t1" | grep -q '^node '; then
    pass "a single-node trace names no node"
else
    fail "pmigate run --trace: exit $rc, or a node named in a single-node trace"
fi

# -- the host's environment stays with the proxy ------------------------------
host_job 2 -n 2 sh -c 'env | grep -E "^(PMIX|OMPI)_"; echo "PMI_RANK=$PMI_RANK"'
# (pmigate's own Open MPI settings, docs/user-guide.md, are not the host's)
if [ $rc -eq 0 ] && [ "$(grep -c '^PMI_RANK=[01]$' "$WORK/out")" -eq 2 ] &&
    ! grep -E '^(PMIX|OMPI)_' "$WORK/out" |
    grep -qvxE 'OMPI_MCA_pmix=ext3x|OMPI_MCA_schizo=\^orte|OMPI_MCA_orte_tmpdir_base=.*/pmigate\.[^/]*'; then
    pass "ranks see PMI_RANK but none of the host's PMIX_*/OMPI_* variables"
else
    fail "the ranks' environment under the proxy (exit $rc):"
    head -n 20 "$WORK/out"
fi
finish
