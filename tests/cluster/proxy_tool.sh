#!/bin/sh
# A PMIx tool attached to one node's `pmigate proxy` (docs/user-guide.md
# "Debuggers and tools"): a job of 6 ranks on 3 hosts, under Slurm (srun
# --mpi=pmix) and mpirun; on host 2 a tool (tests/pmix/pmix_tool node)
# finds that node's proxy without a directive, sees the job's namespace and
# its size (6), a local process table of that host's 2 ranks (live pids,
# the program, the host's name), the whole table as a proxy has it (every
# rank with its host; pid and state for its own node's only, the others
# pid 0 and PMIX_PROC_STATE_UNDEF), then lets the ranks go and hears the
# job end on its node with status 0.  And `pmigate proxy --stop-in-init`
# (Slurm): each host's PMIx ranks wait in init until a tool on that host
# releases the job; released on hosts 1 and 2, only their 4 ranks go on.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
TOOL=$top_builddir/tests/pmix/pmix_tool
proxy_cluster_up pg_tool 3 "$TOOL"

# ranks_on I: the job's sh ranks on host I (the proxies' children)
ranks_on() {
    n=0
    for p in $(proxy_on "$1"); do
        n=$((n + $(pgrep -c -x sh -P "$p")))
    done
    echo $n
}
two_ranks_on_host2() {
    [ "$(ranks_on 2)" -ge 2 ]
}

for how in slurm mpirun; do
    release=$WORK/release.$how
    (
        proxy_job $how 120 3 -n 6 sh -c "while [ ! -e '$release' ]; do sleep 0.1; done"
        exit $rc
    ) &
    job=$!
    if ! wait_for 60 two_ranks_on_host2; then
        fail "$how: the ranks of host 2 did not start"
        : >"$release"
        wait $job
        continue
    fi
    timeout 60 "$CLUSTER_ON" 2 "$TOOL" node 6 2 "$release" sh >"$WORK/tool.$how" 2>&1
    trc=$?
    : >"$release" # whatever the tool did
    wait $job
    jrc=$?
    for check in tool_init server_nspace namespaces query_job_size get_job_size \
        local_proc_table job_end_event tool_finalize; do
        grep -q "^PASS $check " "$WORK/tool.$how" || fail "$how: no PASS for $check"
    done
    if [ $trc -eq 0 ] && [ $jrc -eq 0 ] && ! grep -q '^FAIL' "$WORK/tool.$how"; then
        pass "$how: the tool on host 2 sees the job of 6 and its node's $(sed -n 's/^LOCAL //p' "$WORK/tool.$how"), hears the end"
    else
        cat "$WORK/tool.$how"
        head -n 20 "$WORK/out"
        fail "$how: tool exit $trc, job exit $jrc"
    fi
    # the whole table: 6 rows; host 2's own ranks live, the others unknown here
    if grep -q "^TABLE PMIX_SUCCESS 6 rows$" "$WORK/tool.$how" &&
        [ "$(grep -c '^TABLE rank [0-9]* host [^ ]* pid [1-9][0-9]* state [1-9]' "$WORK/tool.$how")" -eq 2 ] &&
        [ "$(grep -c '^TABLE rank [0-9]* host [^ ]* pid 0 state 0$' "$WORK/tool.$how")" -eq 4 ] &&
        [ "$(sed -n 's/^TABLE rank [0-9]* host \([^ ]*\) .*/\1/p' "$WORK/tool.$how" | sort -u | wc -l)" -eq 3 ]; then
        pass "$how: the whole table: 6 ranks on 3 hosts, pids and states of host 2's only"
    else
        sed -n 's/^TABLE /  table: /p' "$WORK/tool.$how"
        fail "$how: the whole process table on host 2"
    fi
done

# past_init: the ranks that printed their after-init line
past_init() {
    grep -c "PAST INIT" "$WORK/out"
}
four_past_init() {
    [ "$(past_init)" -eq 4 ]
}
ranks_on_every_host() {
    [ "$(ranks_of_tool_on 1)" -ge 2 ] && [ "$(ranks_of_tool_on 2)" -ge 2 ] && [ "$(ranks_of_tool_on 3)" -ge 2 ]
}
ranks_of_tool_on() {
    n=0
    for p in $(proxy_on "$1"); do
        n=$((n + $(pgrep -c -P "$p" pmix_tool)))
    done
    echo $n
}
(
    proxy_job slurm 120 3 --stop-in-init -n 6 "$TOOL" rank
    exit $rc
) &
job=$!
wait_for 60 ranks_on_every_host || fail "stop-in-init: the ranks did not start on every host"
sleep 1
held=$(past_init)
for h in 1 2; do
    timeout 30 "$CLUSTER_ON" $h "$TOOL" release >"$WORK/release.$h" 2>&1 ||
        { cat "$WORK/release.$h"; fail "stop-in-init: the release on host $h"; }
done
wait_for 30 four_past_init
sleep 1
after_two=$(past_init)
timeout 30 "$CLUSTER_ON" 3 "$TOOL" release >"$WORK/release.3" 2>&1 ||
    { cat "$WORK/release.3"; fail "stop-in-init: the release on host 3"; }
wait $job
jrc=$?
if [ "$held" -eq 0 ] && [ "$after_two" -eq 4 ] && [ $jrc -eq 0 ] && [ "$(past_init)" -eq 6 ]; then
    pass "stop-in-init: no rank past init until released, each host's ranks by its own release"
else
    head -n 30 "$WORK/out"
    fail "stop-in-init: past init $held held, $after_two after 2 hosts' releases, $(past_init) at the end; exit $jrc"
fi

finish
