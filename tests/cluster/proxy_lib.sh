# proxy_lib.sh: what the tests of `pmigate proxy` on the cluster in a box
# share (sourced after tests/lib.sh and cluster.sh): a scratch directory in
# the build tree (each host has a /tmp of its own), the cluster itself, and
# finding a job's processes on a host.

# proxy_cluster_up NAME K PROGRAM...: skips unless pmigate, PROGRAMs and
# the cluster's tools are there (fails under CI=true: tests/skip.sh); $WORK;
# K hosts up (else the script fails at once).
proxy_cluster_up() {
    name=$1 k=$2
    shift 2
    skip_unless_built "$PMIGATE" "$@"
    why=$(cluster_need_tools 2>&1) || skip "the cluster in a box: $why"
    WORK=$(mktemp -d "$top_builddir/$name.XXXXXX") || exit 99
    CLUSTER_AT_EXIT='rm -rf "$WORK"'
    if ! cluster_up "$k"; then
        fail "the cluster in a box does not start"
        finish
    fi
}

# job_procs I: the job's processes on host I (proxies, keepers, ranks of
# the test programs).  Zombies are not among them: they have ended, and
# when a proxy dies its keeper and ranks are reaped by init, which may take
# its time.
job_procs() {
    for p in $(cluster_node_pids "$1"); do
        case $(cat "/proc/$p/comm" 2>/dev/null) in
        pmigate | gw_testprog | mpi_hello | pmix_bigdata)
            [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" = Z ] || echo "$p"
            ;;
        esac
    done
}

# proxy_on I: the proxy on host I (the pmigate whose parent is not one: the
# other is its keeper).
proxy_on() {
    for p in $(job_procs "$1"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = pmigate ] || continue
        pp=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
        [ "$(cat "/proc/$pp/comm" 2>/dev/null)" = pmigate ] || echo "$p"
    done
}

# proxy_job HOW SECONDS K ARGS...: `pmigate proxy ARGS` once on each of K
# hosts under HOW (slurm: srun --mpi=pmix; mpirun), at most SECONDS;
# output in $WORK/out, status in $rc.  PMIGATE_PROXY_TIMES goes along when
# it is set.
proxy_job() {
    launcher=$1 t=$2 k=$3
    shift 3
    case $launcher in
    slurm) timeout -k 5 "$t" "$CLUSTER_ON" 1 srun -N "$k" --mpi=pmix "$PMIGATE" proxy "$@" ;;
    mpirun) timeout -k 5 "$t" "$CLUSTER_MPIRUN" -np "$k" --map-by ppr:1:node \
        ${PMIGATE_PROXY_TIMES:+-x PMIGATE_PROXY_TIMES} "$PMIGATE" proxy "$@" ;;
    esac >"$WORK/out" 2>&1
    rc=$?
}

# gone_within MS HOST...: polls until no process of the job runs on those
# hosts; $took is how long it took (ms), counted from $since (date +%s%N)
# when the caller set it (the start of what it times), else from now.
# Returns 1 once MS + 5 s passed with processes left (it failed: polling
# on would only wait).
gone_within() {
    limit=$1
    shift
    from=${since:-$(date +%s%N)}
    while :; do
        left=
        for i in "$@"; do
            left="$left$(job_procs "$i")"
        done
        took=$((($(date +%s%N) - from) / 1000000))
        [ -z "$left" ] && return 0
        [ $took -le $((limit + 5000)) ] || return 1
        sleep 0.05
    done
}

# said I TEXT: host I's proxy said TEXT on its stderr (/tmp/proxy.err there,
# where the tests that start proxies by hand send it).
said() {
    grep -q "$2" "$(cluster_node_tmp "$1")/proxy.err" 2>/dev/null
}

# launch_sh HOW CMD: `sh -c CMD` once on each of 3 hosts under HOW (slurm,
# slurm-K1: srun -K1, mpirun), in the background ($job), after each host's
# /tmp/proxy.err is cleared (CMD sends the proxy's stderr there); output in
# $WORK/out.
launch_sh() {
    for i in 1 2 3; do
        rm -f "$(cluster_node_tmp "$i")/proxy.err"
    done
    case $1 in
    slurm) timeout -k 5 60 "$CLUSTER_ON" 1 srun -N 3 --mpi=pmix sh -c "$2" ;;
    slurm-K1) timeout -k 5 60 "$CLUSTER_ON" 1 srun -K1 -N 3 --mpi=pmix sh -c "$2" ;;
    mpirun) timeout -k 5 60 "$CLUSTER_MPIRUN" -np 3 --map-by ppr:1:node sh -c "$2" ;;
    esac >"$WORK/out" 2>&1 &
    job=$!
}
