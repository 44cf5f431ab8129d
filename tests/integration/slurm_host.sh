#!/bin/sh
# `pmigate proxy` under Slurm as the PMIx host (`srun --mpi=pmix`, Slurm's
# PMIx v4 plugin): the test starts a one-node Slurm of its own (munged,
# slurmctld, slurmd from Debian's packages, no systemd), runs 2 proxies as
# the job step's 2 tasks -- 2 nodes by pmigate's definition -- and checks
# the Slurm-libpmi2 wire-up, PMI_process_mapping and every key across the
# nodes, PMIx node data, and MPI_Abort(7) from node 2 ending the step with 7
# (Slurm's own --mpi=pmi2 loses that code).  `srun -O`: without overcommit a
# step of more tasks than the 2 CPUs waits forever.  Every daemon the test
# started is stopped by its pid.
. "$(dirname "$0")/hi_lib.sh"
skip_unless_built "$PROGS/pmi2_wireup" "$PROGS/pmi2_features" "$PROGS/mpi_hello" \
    "$top_builddir/tests/integration/pmix_nodes"
for tool in munged slurmctld slurmd srun sinfo; do
    if ! command -v $tool >/dev/null 2>&1 && [ ! -x /usr/sbin/$tool ]; then
        fail "$tool not found (./dev deps installs munge slurmctld slurmd slurm-client)"
        finish
    fi
done
if [ "$(id -u)" -ne 0 ]; then
    fail "a private Slurm needs root (slurmd starts job steps as their user)"
    finish
fi

started_munged=
cleanup() {
    for pidfile in "$WORK/slurmd.pid" "$WORK/slurmctld.pid" $started_munged; do
        [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
    done
    sleep 1
    rm -rf "$WORK"
}
trap cleanup EXIT

# munged: reuse one that runs, else start one (as user munge, as its
# package does) and stop it at the end.
if [ -f /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; then
    :
else
    mkdir -p /run/munge && chown munge:munge /run/munge
    if ! runuser -u munge -- /usr/sbin/munged; then
        fail "cannot start munged"
        finish
    fi
    started_munged=/run/munge/munged.pid
fi

host=$(hostname)
mkdir -p "$WORK/state" "$WORK/spool"
cat >"$WORK/slurm.conf" <<EOF
ClusterName=pmigate
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=17817
SlurmdPort=17818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
MaxTasksPerNode=1024
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000
PartitionName=debug Nodes=$host Default=YES State=UP OverSubscribe=FORCE:256
EOF
export SLURM_CONF=$WORK/slurm.conf
/usr/sbin/slurmctld -c -i -f "$SLURM_CONF" && /usr/sbin/slurmd -f "$SLURM_CONF" ||
    { fail "cannot start slurmctld/slurmd"; finish; }
i=0
until [ "$(sinfo -h -N -o %T 2>/dev/null)" = idle ]; do
    i=$((i + 1))
    if [ $i -gt 30 ]; then
        fail "the private Slurm's node never became idle"
        tail -n 20 "$WORK/slurmctld.log" "$WORK/slurmd.log"
        finish
    fi
    sleep 1
done
pass "a private one-node Slurm is up"

# step K ARGS...: K proxies as the tasks of one srun --mpi=pmix step.
step() {
    k=$1
    shift
    timeout -k 5 120 srun -O --mpi=pmix -N 1 -n "$k" "$PMIGATE" proxy "$@" >"$WORK/out" 2>&1
    rc=$?
}

step 2 -n 8 "$PROGS/pmi2_wireup"
if [ $rc -eq 0 ] && grep -q '^wireup n=8 ' "$WORK/out"; then
    pass "pmi2_wireup N=8 on 2 proxies under srun --mpi=pmix"
else
    fail "pmi2_wireup under srun exited $rc"
    head -n 20 "$WORK/out"
fi
# Slurm 22.05's pmix plugin has no name service (PMIx_Publish is not
# supported): names stay node-local there, so pmi2_features and pmix_nodes
# skip their cross-node publish/lookup (under mpirun, proxy.sh checks them)
PG_SKIP_NAMESERV=1 PG_EXPECT_MAPPING='(vector,(0,2,4))' step 2 -n 8 "$PROGS/pmi2_features"
if [ $rc -eq 0 ] && [ "$(grep -c ': ok$' "$WORK/out")" -eq 8 ]; then
    pass "pmi2_features N=8 on 2 proxies: mapping (vector,(0,2,4)), every key"
else
    fail "pmi2_features under srun exited $rc"
    head -n 20 "$WORK/out"
fi
PG_SKIP_NAMESERV=1 step 2 -n 5 "$top_builddir/tests/integration/pmix_nodes" 3,2
if [ $rc -eq 0 ] && [ "$(grep -c ': ok$' "$WORK/out")" -eq 5 ]; then
    pass "pmix_nodes N=5 on 2 proxies (3 + 2)"
else
    fail "pmix_nodes under srun exited $rc"
    head -n 20 "$WORK/out"
fi
step 3 -n 6 "$PROGS/mpi_hello" --abort=7 --abort-rank=4
if [ $rc -eq 7 ] && grep -q 'rank 4 aborted the job (code 7)' "$WORK/out"; then
    pass "MPI_Abort(7) from rank 4 on node 2 of 3: srun exits 7"
else
    fail "MPI_Abort(7) under srun: exit $rc"
    head -n 20 "$WORK/out"
fi
finish
