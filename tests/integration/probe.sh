#!/bin/sh
# `pmigate probe` as the ranks of real launchers: mpiexec.hydra (PMI-1 on
# PMI_FD), Open MPI's mpirun (PMIx through OpenPMIx's client), pmigate run
# (PMIx through pmigate's libpmix by default, PMI-1 and PMI-2 when asked)
# and pmigate proxy under mpirun (2 nodes); rank 0's one line must name the
# interface, the launcher and the job's shape and say put/fence/get ok.
# Then the failures it exists for: a rank that never reaches the fence (the
# probe names the step and ends within its --timeout), and a rank whose
# key holds the wrong value (rank 0 names the rank and the key).  Across
# hosts, under srun's PMI-2 and PMIx and mpirun's PMIx, the cluster in a
# box probes (tests/cluster/proxy_cases.sh).
. "$(dirname "$0")/hi_lib.sh"
MPIRUN=mpirun.openmpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for tool in mpiexec.hydra "$MPIRUN"; do
    command -v "$tool" >/dev/null 2>&1 ||
        fail "$tool not found (./dev deps installs mpich and openmpi-bin)"
done
[ $failures -eq 0 ] || finish

# probe_ok LABEL REGEX LAUNCH...: LAUNCH exits 0 and prints exactly one probe
# line, which matches REGEX (the end of the line is always the same).
ok_tail=', put/fence/get ok, fence [0-9.]+ ms, all-get [0-9.]+ ms$'
probe_ok() {
    label=$1 re=$2
    shift 2
    timeout -k 5 120 "$@" >"$WORK/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && [ "$(grep -c '^probe: ' "$WORK/out")" -eq 1 ] &&
        grep -qE "^probe: $re$ok_tail" "$WORK/out"; then
        pass "$label"
        grep '^probe: ' "$WORK/out"
    else
        fail "$label (exit $rc)"
        head -n 20 "$WORK/out"
    fi
}

probe_ok "under mpiexec.hydra -n 4: PMI-1" \
    'PMI-1 \(hydra via PMI_FD, job [^ ]+, 1 node, 4 local\) rank 0 of 4' \
    mpiexec.hydra -n 4 "$PMIGATE" probe
probe_ok "under mpirun.openmpi -n 4: PMIx through OpenPMIx" \
    'PMIx \(Open MPI mpirun via PMIX_SERVER_URI, OpenPMIx [0-9][^,]*, job [^ ]+, 1 node, 4 local, universe [0-9]+\) rank 0 of 4' \
    "$MPIRUN" --oversubscribe -n 4 "$PMIGATE" probe
probe_ok "under pmigate run -n 4: PMIx through pmigate's libpmix" \
    'PMIx \(pmigate via PMI_FD, job kvs_[0-9]+_0, 1 node, 4 local, universe 4\) rank 0 of 4' \
    "$PMIGATE" run -n 4 "$PMIGATE" probe
probe_ok "under pmigate run -n 3 --pmi1" \
    'PMI-1 \(pmigate via PMI_FD, job kvs_[0-9]+_0, 1 node, 3 local, universe 3\) rank 0 of 3' \
    "$PMIGATE" run -n 3 "$PMIGATE" probe --pmi1
probe_ok "under pmigate run -n 3 --pmi2 (node attributes too)" \
    'PMI-2 \(pmigate via PMI_FD, job kvs_[0-9]+_0, 1 node, 3 local, universe 3\) rank 0 of 3' \
    "$PMIGATE" run -n 3 "$PMIGATE" probe --pmi2
probe_ok "under pmigate proxy, 2 nodes under mpirun: PMIx" \
    'PMIx \(pmigate via PMI_FD, job [^ ]+, 2 nodes, [23] local, universe 5\) rank 0 of 5' \
    "$MPIRUN" --oversubscribe -np 2 "$PMIGATE" proxy -n 5 "$PMIGATE" probe
probe_ok "under pmigate proxy, 2 nodes: PMI-2 node attributes per node" \
    'PMI-2 \(pmigate via PMI_FD, job [^ ]+, 2 nodes, [23] local, universe 5\) rank 0 of 5' \
    "$MPIRUN" --oversubscribe -np 2 "$PMIGATE" proxy -n 5 "$PMIGATE" probe --pmi2

# outside any launcher: one line, exit 1
env -u PMI_FD -u PMI_PORT "$PMIGATE" probe >"$WORK/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^probe: no PMI in the environment' "$WORK/out" &&
    pass "without a launcher: 'no PMI in the environment', exit 1" ||
    { fail "without a launcher: exit $rc"; cat "$WORK/out"; }

# a rank that never reaches the fence: rank 0's fence step times out
run_job 60 -n 2 sh -c 'if [ "$PMI_RANK" = 1 ]; then exec sleep 50; fi; exec "$0" probe --timeout 2' "$PMIGATE"
if [ $rc -ne 0 ] && grep -q '^probe: PMIx rank 0: fence did not finish within 2 s$' "$WORK/out"; then
    pass "a rank that never fences: rank 0 names the step after --timeout 2 (exit $rc)"
else
    fail "a rank that never fences: exit $rc"
    head -n 10 "$WORK/out"
fi

# a rank whose key holds the wrong value (a scripted PMI-1 rank)
cat >"$WORK/liar" <<'EOF'
send1 cmd=init pmi_version=1 pmi_subversion=1
expect rc=0
send1 cmd=put kvsname=any key=pmigate.probe.1 value=garbage
expect rc=0
send1 cmd=barrier_in
expect barrier_out
send1 cmd=put kvsname=any key=pmigate.probe.verdict.1 value=ok:1:1
expect rc=0
send1 cmd=barrier_in
expect barrier_out
send1 cmd=finalize
expect finalize_ack
EOF
run_job 60 -n 1 "$PMIGATE" probe --pmi1 : -n 1 "$SCRIPT_PROG" "$WORK/liar"
if [ $rc -eq 1 ] && grep -q "^probe: PMI-1 (pmigate via PMI_FD, .*) rank 0 of 2, get failed on rank 0: rank 1's key pmigate.probe.1 holds 'garbage', not 'probe-1-of-2-from-...'$" "$WORK/out"; then
    pass "a rank's wrong value: rank 0 names it, exit 1"
else
    fail "a rank's wrong value: exit $rc"
    head -n 10 "$WORK/out"
fi
finish
