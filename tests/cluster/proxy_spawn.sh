#!/bin/sh
# Spawn from a rank of a `pmigate proxy` job over 2 separate hosts (the
# cluster in a box), under Slurm (srun --mpi=pmix) and mpirun alike
# (docs/user-guide.md, "What crosses nodes"):
#   - PMIx_Spawn from rank 1 (second host) of 4 children: they run on both
#     hosts, see PMIX_SPAWNED and their parent, fence with each other
#     across the hosts, and the parent reads every child's key after
#     PMIx_Connect and hears PMIX_EVENT_JOB_END (status 0) for the job;
#     --tag-output tags the children's lines [1.R];
#   - PMI-2 spawn (Slurm's libpmi2) from rank 0 of 2 commands x 2: the
#     preput key is readable in every child before its first fence, each
#     child's appnum is its command, the parent reads every child's key
#     after PMI2_Job_Connect;
#   - PMI-1 mcmd=spawn, --max-procs counted for the whole job: rank 0
#     (first host) spawns 2 of 3, then rank 1 (second host) is refused 2
#     more (errcodes=11,11: EAGAIN each), and the job goes on;
#   - PMI-1 spawn with the info key host=<second host> from rank 0 (first
#     host): both children run on the second host (they print its name,
#     tagged [1.R]); a host that is no node of the job is refused with
#     EHOSTUNREACH (113) for each process, named, and the job goes on;
#   - a spawned child that dies with 9 before finalize ends the whole job
#     on every host with 9 (one exit status);
# and over 3 hosts:
#   - PMI-2 spawn (Slurm's libpmi2) of 2 from rank 0 while ranks 1 and 2
#     have just finished: 8 runs at several delays,
#     each must start both children and answer the spawner -- a node whose
#     ranks are gone but whose proxy still runs hosts children, or node 0
#     knows it is gone before it places them, never a partial start
#     reported as a refusal (docs/proxy.md, "Spawn across nodes");
#   - PMIx_Spawn of 2 from rank 0 whose children fence without
#     PMIX_COLLECT_DATA and get each other's key across hosts (direct
#     modex of a spawned job, item 11; docs/proxy.md, "Direct modex across
#     nodes"), under Slurm and mpirun.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
PMIX_PROG=$top_builddir/tests/integration/pmix_spawn
PMI2_PROG=$top_builddir/tests/progs/pmi2_spawn
SCRIPT_PROG=$top_builddir/tests/integration/pmi_script
proxy_cluster_up pg_spawn 3 "$PMIX_PROG" "$PMI2_PROG" "$SCRIPT_PROG"

# job HOW SECONDS ARGS...: `pmigate proxy ARGS` once on each of $NODES
# hosts (2 unless set) under HOW (slurm, mpirun); output in $WORK/out,
# status in $rc.
NODES=2
job() {
    launcher=$1 t=$2
    shift 2
    case $launcher in
    slurm) timeout -k 5 "$t" "$CLUSTER_ON" 1 srun -N $NODES --mpi=pmix "$PMIGATE" proxy "$@" ;;
    mpirun) timeout -k 5 "$t" "$CLUSTER_MPIRUN" -np $NODES --map-by ppr:1:node "$PMIGATE" proxy "$@" ;;
    esac >"$WORK/out" 2>&1
    rc=$?
}

show() {
    head -n 20 "$WORK/out"
}

# -- PMIx_Spawn from the second host -------------------------------------------
for how in slurm mpirun; do
    job $how 120 --tag-output -n 2 "$PMIX_PROG" xnodes 4
    hosts=$(sed -n 's/^\[1\] pmix_spawn xnodes: ok nspace=kvs_[0-9]*_1 hosts=//p' "$WORK/out")
    ok=$(grep -c '^\[1\.[0-3]\] pmix_spawn xchild [0-3] on [a-z0-9]*: ok$' "$WORK/out")
    if [ $rc -eq 0 ] && [ "$ok" -eq 4 ] && echo "$hosts" | grep -q "n1" && echo "$hosts" | grep -q "n2"; then
        pass "$how: PMIx_Spawn of 4 from the second host: children on both hosts ($hosts), fenced across, keys read, job end heard"
    else
        fail "$how: PMIx_Spawn across hosts: exit $rc, $ok of 4 children ok, hosts '$hosts'"
        show
    fi
done

# -- PMI-2 spawn (Slurm's libpmi2) from the first host ------------------------------
for how in slurm mpirun; do
    job $how 120 --tag-output -n 2 "$PMI2_PROG" parent 2 2
    ok=$(grep -c '^\[1\.[0-3]\] pmi2_spawn child [0-3] of 4 appnum [01]: ok' "$WORK/out")
    if [ $rc -eq 0 ] && [ "$ok" -eq 4 ] &&
        grep -q '^\[0\] pmi2_spawn parent: ok jobid=kvs_[0-9]*_1 procs=4' "$WORK/out"; then
        pass "$how: PMI-2 spawn of 2 x 2: preput keys, appnums, every child's key after job-connect"
    else
        fail "$how: PMI-2 spawn across hosts: exit $rc, $ok of 4 children ok"
        show
    fi
done

# -- PMI-1 spawn, --max-procs for the whole job --------------------------------------
# pmi1_script FILE LINES...: a PMI-1 rank's script (pmi_script): init,
# LINES (the word "barrier" stands for a barrier), finalize.
pmi1_script() {
    f=$1
    shift
    {
        printf '%s\n' "send1 cmd=init pmi_version=1 pmi_subversion=1" "expect rc=0"
        for line in "$@"; do
            if [ "$line" = barrier ]; then
                printf '%s\n' "send1 cmd=barrier_in" "expect barrier_out"
            else
                printf '%s\n' "$line"
            fi
        done
        printf '%s\n' "send1 cmd=finalize" "expect finalize_ack"
    } >"$f"
}
# spawn1 NPROCS PROGRAM [INFO_KEY INFO_VAL]: a PMI-1 spawn block, raw.
spawn1() {
    info='info_num=0'
    [ $# -gt 2 ] && info="info_num=1\ninfo_key_0=$3\ninfo_val_0=$4"
    printf '%s\n' "raw mcmd=spawn\nnprocs=$1\nexecname=$2\ntotspawns=1\nspawnssofar=1\nargcnt=0\npreput_num=0\n$info\nendcmd\n"
}
pmi1_script "$WORK/spawn.0" "$(spawn1 2 /bin/true)" "expect cmd=spawn_result rc=0" barrier barrier
pmi1_script "$WORK/spawn.1" barrier "$(spawn1 2 /bin/true)" \
    "expect cmd=spawn_result rc=-1 errcodes=11,11" barrier
for how in slurm mpirun; do
    job $how 60 --max-procs 3 -n 2 "$SCRIPT_PROG" "$WORK/spawn.%r"
    if [ $rc -eq 0 ] &&
        grep -q "spawn refused: spawning 2 processes would exceed --max-procs 3 (2 spawned so far)" "$WORK/out"; then
        pass "$how: --max-procs 3 counted job-wide: 2 spawned on one host, 2 more refused on the other (EAGAIN each)"
    else
        fail "$how: --max-procs across hosts: exit $rc"
        show
    fi
done

# -- PMI-1 spawn, host= ------------------------------------------------------------
HOST2=$(cluster_on 2 hostname)
pmi1_script "$WORK/host.0" "$(spawn1 2 /bin/hostname host "$HOST2")" "expect cmd=spawn_result rc=0" \
    "$(spawn1 2 /bin/true host pg-no-such-host)" "expect cmd=spawn_result rc=-1 errcodes=113,113" \
    barrier
pmi1_script "$WORK/host.1" barrier
for how in slurm mpirun; do
    job $how 60 --tag-output -n 2 "$SCRIPT_PROG" "$WORK/host.%r"
    on2=$(grep -c "^\[1\.[01]\] $HOST2\$" "$WORK/out")
    if [ $rc -eq 0 ] && [ "$on2" -eq 2 ] &&
        grep -q "spawn refused: host 'pg-no-such-host' is not a node of this job" "$WORK/out"; then
        pass "$how: host=$HOST2 puts both children there; an unknown host is refused (EHOSTUNREACH each)"
    else
        fail "$how: host= across hosts: exit $rc, $on2 of 2 children on $HOST2"
        show
    fi
done

# -- a child's failure: one exit status ------------------------------------------------
for how in slurm mpirun; do
    job $how 60 -n 2 "$PMI2_PROG" fail die 9
    if [ $rc -eq 9 ] && grep -q "job 1: rank 0 exited with status 9 before PMI finalize" "$WORK/out"; then
        pass "$how: a spawned child dying with 9 ends the job over both hosts with 9, named"
    else
        fail "$how: a spawned child's failure: exit $rc"
        show
    fi
done

# -- over 3 hosts ------------------------------------------------------------------
NODES=3
# -- PMI-2 spawn beside ranks that just finished: every run starts both ----------------
passed=0
for delay in 0 0 2 5 10 20 50 100; do
    job slurm 60 --tag-output -n 3 "$PMI2_PROG" alone 2 $delay
    ok=$(grep -c '^\[1\.[01]\] pmi2_spawn child [01] of 2 appnum 0: ok' "$WORK/out")
    if [ $rc -eq 0 ] && [ "$ok" -eq 2 ] &&
        grep -q '^\[0\] pmi2_spawn alone: ok jobid=kvs_[0-9]*_1$' "$WORK/out"; then
        passed=$((passed + 1))
    else
        echo "# a spawn $delay ms after ranks 1 and 2 left: exit $rc, $ok of 2 children ok"
        show
    fi
done
if [ $passed -eq 8 ]; then
    pass "slurm: PMI-2 spawn of 2 from rank 0 beside finished ranks 1 and 2: 8 of 8 runs start both"
else
    fail "slurm: PMI-2 spawn beside finished ranks: $passed of 8 runs passed"
fi

# -- a spawned job's gets across hosts after a fence that collects nothing ------------
for how in slurm mpirun; do
    job $how 90 --tag-output -n 3 "$PMIX_PROG" xdirect 2
    got=$(grep -c '^\[1\.[01]\] pmix_spawn xdchild [01] got [01] from [a-z0-9]*$' "$WORK/out")
    hosts=$(sed -n 's/^\[1\.[01]\] pmix_spawn xdchild [01] got [01] from //p' "$WORK/out" | sort -u | wc -l)
    if [ $rc -eq 0 ] && [ "$got" -eq 2 ] && [ "$hosts" -eq 2 ] &&
        grep -q '^\[0\] pmix_spawn xdirect: ok nspace=kvs_[0-9]*_1$' "$WORK/out"; then
        pass "$how: spawned children on 2 hosts fence without PMIX_COLLECT_DATA and get each other's key (direct modex)"
    else
        fail "$how: a spawned job's gets across hosts: exit $rc, $got of 2 gets, from $hosts hosts"
        show
    fi
done
finish
