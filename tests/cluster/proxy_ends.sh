#!/bin/sh
# A `pmigate proxy` job over 3 separate hosts (the cluster in a box) ends,
# completely and quickly, whatever dies -- under Slurm (srun --mpi=pmix,
# with and without -K1) and under mpirun alike (docs/user-guide.md, "What
# survives what across nodes"):
#   - a proxy SIGKILLed (node 0's, which decides the job's end, too): the other hosts'
#     proxies and ranks are gone within 2 s, having said which node was
#     lost; the job ends non-zero;
#   - a proxy and its keeper SIGKILLed together: the job directory they
#     leave is removed by the next proxy on that host;
#   - the host runtime lost (the orted or mpirun, the slurmstepd under the
#     proxy): every proxy ends its ranks within 2 s, and nothing of the job
#     is left on any host (processes, /tmp/pmigate* directories);
#   - a whole host lost (everything in its namespaces SIGKILLed, or its link
#     cut without a reset): the other hosts' part ends within 5 s;
#   - --timeout on every node: exit 124, every time;
#   - MPI_Abort(7) from a rank on the second host: exit 7, every time,
#     though other ranks then fail too (the first failure wins).
# The ranks are PMI programs that initialise and sleep (gw_testprog pmi),
# or MPICH's hello.  Each proxy's stderr goes to /tmp/proxy.err on its host.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
HOLD=$top_builddir/tests/gateway/gw_testprog
HELLO=$top_builddir/tests/progs/mpi_hello
proxy_cluster_up pg_ends 3 "$HOLD" "$HELLO"
# every rank initialises PMI, then sleeps 60 s (rank 99, which would act, is none)
HOLD_RANKS="$HOLD pmi 99 finalize pg_ends"

# launch HOW ARGS...: `pmigate proxy ARGS` once on every host under HOW
# (slurm, slurm-K1, mpirun), in the background ($job); output in $WORK/out.
launch() {
    launcher=$1
    shift
    launch_sh "$launcher" "exec $PMIGATE proxy $* 2>/tmp/proxy.err"
}

# ranks_up N: until N ranks run on the hosts (20 s at most).
ranks_up() {
    n=0
    while [ $n -lt 400 ]; do
        c=0
        for i in 1 2 3; do
            c=$((c + $(job_procs "$i" | xargs -r ps -o comm= -p | grep -c gw_testprog)))
        done
        [ $c -ge "$1" ] && return 0
        n=$((n + 1))
        sleep 0.05
    done
    return 1
}



# leftovers: what the job left on any host (processes, with their state,
# parent and what they wait in, so a failure says why; job directories).
# Its status is always 0: all_clear's loop reads the text, not whether the
# last host had a directory to list.
leftovers() {
    for i in 1 2 3; do
        job_procs "$i" | xargs -r ps -o pid=,stat=,ppid=,wchan=,args= -p | sed "s|^|host $i:|"
        ls -d "$(cluster_node_tmp "$i")"/pmigate* 2>/dev/null
    done
    return 0
}

# all_clear: nothing of the job is left on any host, within 5 s (a lost
# proxy's keeper may still be killing its ranks and removing its
# directories when the launcher returns, on a machine busy with other
# tests); $left says what is.
all_clear() {
    n=0
    while left=$(leftovers) && [ -n "$left" ] && [ $n -lt 100 ]; do
        n=$((n + 1))
        sleep 0.05
    done
    [ -z "$left" ]
}

# finish_job: the launcher's status in $rc (killed after 20 s: srun waits
# for a host whose slurmd is gone, as Slurm does).
finish_job() {
    n=0
    while kill -0 "$job" 2>/dev/null && [ $n -lt 400 ]; do
        n=$((n + 1))
        sleep 0.05
    done
    kill "$job" 2>/dev/null
    wait "$job"
    rc=$?
}

node2=$(cluster_node_name 2)

# -- a proxy lost ---------------------------------------------------------------
for how in slurm slurm-K1 mpirun; do
    launch $how -n 6 "$HOLD_RANKS"
    if ! ranks_up 6; then
        fail "$how: the job did not start"
        cat "$WORK/out"
        finish_job
        continue
    fi
    kill -9 "$(proxy_on 2)"
    if gone_within 2000 1 3 && [ $took -le 2000 ] && said 1 "node 1 ($node2) was lost" &&
        said 3 "node 1 ($node2) was lost"; then
        pass "$how: proxy on host 2 SIGKILLed: hosts 1 and 3 ended in $took ms, naming node 1"
    else
        fail "$how: proxy on host 2 SIGKILLed: hosts 1 and 3 not done in 2 s ($took ms) or silent"
        cat "$(cluster_node_tmp 1)/proxy.err" "$WORK/out" 2>/dev/null | head -n 10
    fi
    finish_job
    if [ $rc -ne 0 ] && all_clear; then
        pass "$how: the job exited $rc, nothing left on any host"
    else
        fail "$how: the job exited $rc, left: $(echo "$left" | tr '\n' ' ')"
    fi
done

# -- a step killed whole: the proxy and its keeper SIGKILLed together -------------
# (srun killed, a stopped proxy force-terminated): nothing of the node can
# clean up, so its job directory stays -- until the next pmigate proxy (or
# run) on that host, which removes the directories whose owner is dead.
launch slurm -n 6 "$HOLD_RANKS"
if ranks_up 6; then
    pids=$(job_procs 2 | xargs -r ps -o pid=,comm= -p | awk '$2 == "pmigate" { print $1 }')
    kill -9 $pids
    finish_job
    dead=$(ls -d "$(cluster_node_tmp 2)"/pmigate.* 2>/dev/null)
    if [ "$(echo "$pids" | wc -w)" -eq 2 ] && [ -n "$dead" ]; then
        launch slurm -n 3 /bin/true
        finish_job
        if [ $rc -eq 0 ] && all_clear; then
            pass "slurm: proxy and keeper SIGKILLed together: the next proxy on host 2 removed $(basename "$dead")"
        else
            fail "slurm: after a step killed whole, the next job exited $rc and left: $(echo "$left" | tr '\n' ' ')"
        fi
    else
        fail "slurm: proxy and keeper ($pids) SIGKILLed: no job directory left to sweep ('$dead')"
    fi
else
    fail "slurm: the job did not start"
    finish_job
fi

# -- node 0 lost: the nodes linked with it decide alone, the end reaches all --
launch slurm -n 6 "$HOLD_RANKS"
if ranks_up 6; then
    kill -9 "$(proxy_on 1)"
    node1=$(cluster_node_name 1)
    if gone_within 2000 2 3 && [ $took -le 2000 ] && said 2 "node 0 ($node1) was lost" &&
        said 3 "node 0 ($node1) was lost"; then
        pass "slurm: proxy on host 1 (node 0) SIGKILLed: hosts 2 and 3 ended in $took ms"
    else
        fail "slurm: node 0 SIGKILLed: hosts 2 and 3 not done in 2 s ($took ms) or silent"
        cat "$(cluster_node_tmp 2)/proxy.err" 2>/dev/null | head -n 5
    fi
else
    fail "slurm: the job did not start"
fi
finish_job
all_clear || fail "slurm: node 0 lost: left behind: $(echo "$left" | tr '\n' ' ')"

# -- the host runtime lost ----------------------------------------------------------
# killrt HOW: SIGKILLs the host runtime's process: the parent of host 2's
# proxy (orted, slurmstepd), or mpirun itself (how = mpirun-hnp).
for how in slurm mpirun mpirun-hnp; do
    launch "${how%-hnp}" -n 6 "$HOLD_RANKS"
    if ! ranks_up 6; then
        fail "$how: the job did not start"
        finish_job
        continue
    fi
    if [ $how = mpirun-hnp ]; then
        victim=$(cluster_node_pids 1 | xargs -r ps -o pid=,comm= -p | awk '$2 == "mpirun.openmpi" { print $1 }')
    else
        victim=$(awk '{ print $4 }' "/proc/$(proxy_on 2)/stat")
    fi
    what=$(cat "/proc/$victim/comm")
    kill -9 "$victim"
    if gone_within 2000 1 2 3 && [ $took -le 2000 ]; then
        pass "$how: $what SIGKILLed: every host's proxy and ranks gone in $took ms"
    else
        fail "$how: $what SIGKILLed: the job's processes not all gone in 2 s: $(leftovers | tr '\n' ' ')"
    fi
    host=$([ $how = mpirun-hnp ] && echo 1 || echo 2)
    if said $host "the host runtime is gone: its process $victim ($what)"; then
        pass "$how: host $host's proxy said the host runtime is gone"
    else
        fail "$how: host $host's proxy did not say why it ended:"
        cat "$(cluster_node_tmp $host)/proxy.err"
    fi
    finish_job
    if all_clear; then
        pass "$how: no process or /tmp/pmigate* directory of the job left on any host"
    else
        fail "$how: left behind: $(echo "$left" | tr '\n' ' ')"
    fi
done

# -- a whole host lost --------------------------------------------------------------
for how in slurm mpirun; do
    for loss in kill link; do
        launch $how -n 6 "$HOLD_RANKS"
        if ! ranks_up 6; then
            fail "$how: the job did not start"
            finish_job
            continue
        fi
        if [ $loss = kill ]; then
            cluster_kill_node 2
            # the proxy may see its slurmstepd or orted die first and say
            # so before it dies too: either way the other nodes name node 1
            why="node 1 ($node2)"
        else
            cluster_link 2 down
            why="node 1 ($node2) was lost: nothing came from it"
        fi
        if gone_within 5000 1 3 && [ $took -le 5000 ] && said 1 "$why" && said 3 "$why"; then
            pass "$how: host 2 lost ($loss): hosts 1 and 3 ended in $took ms, naming node 1"
        else
            fail "$how: host 2 lost ($loss): hosts 1 and 3 not done in 5 s ($took ms) or silent"
            cat "$(cluster_node_tmp 1)/proxy.err" 2>/dev/null | head -n 5
        fi
        [ $loss = link ] && cluster_link 2 up
        finish_job
        if [ $how = mpirun ] && [ $rc -ne 0 ] && [ $rc -ne 143 ]; then
            pass "$how: host 2 lost ($loss): mpirun exited $rc"
        elif [ $how = mpirun ]; then
            fail "$how: host 2 lost ($loss): mpirun exited $rc"
        fi
        cluster_kill_node 2
        cluster_restart_node 2 || { fail "host 2 does not come back"; finish; }
    done
done

# -- --timeout on every node: 124, every time ---------------------------------------
for how in slurm mpirun; do
    codes=
    for try in 1 2 3 4 5 6 7 8; do
        launch $how --timeout 1 -n 6 "$HOLD_RANKS"
        finish_job
        codes="$codes $rc"
    done
    if [ "$codes" = " 124 124 124 124 124 124 124 124" ]; then
        pass "$how: --timeout 1 on 3 nodes: 124 in 8 runs of 8"
    else
        fail "$how: --timeout 1 on 3 nodes exited:$codes"
        cat "$WORK/out" | head -n 10
    fi
    cluster_wait_idle >/dev/null 2>&1
done

# -- the first failure wins: MPI_Abort(7) on host 2, then the ranks it breaks ---------
for how in slurm mpirun; do
    codes=
    for try in 1 2 3 4 5; do
        launch $how -n 6 "$HELLO" --abort=7 --abort-rank=3
        finish_job
        codes="$codes $rc"
    done
    if [ "$codes" = " 7 7 7 7 7" ] && said 2 "rank 3 aborted the job (code 7)" &&
        said 1 "node 1 ($node2): rank 3 aborted the job (code 7)"; then
        pass "$how: MPI_Abort(7) from rank 3 on host 2: 7 in 5 runs of 5, every node naming it"
    else
        fail "$how: MPI_Abort(7) from rank 3 on host 2 exited:$codes"
        cat "$(cluster_node_tmp 1)/proxy.err" "$WORK/out" | head -n 10
    fi
done
finish
