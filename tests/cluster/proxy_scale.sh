#!/bin/sh
# `pmigate proxy` at K = 64 nodes: 64 proxies under one Open MPI mpirun on
# this machine (--oversubscribe; simulated nodes: one host name, one /tmp,
# one loopback, their PMIX_HOSTNAMEs told apart by the node index), which
# the cluster in a box cannot give (64 hosts of namespaces and slurmds).
# What works across 3 hosts (tests/cluster/proxy_*.sh) works across 64,
# with the same programs:
#   - wire-up: Slurm-libpmi2 cards put, fenced and all got (pmi2_wireup, 2
#     ranks per node); PMIx node data, every node's host name, a get
#     answered before the fence (direct modex from node 0 to node 63), a
#     PMIX_WAIT lookup woken by node 63's publish, a collecting fence and
#     every rank's card (pmix_nodes);
#   - fences with data: one collecting fence of 64 KiB per rank, one rank
#     per node, every byte checked (pmix_bigdata); fences over subsets of
#     ranks on nodes 0 and 63, collecting and not, under PMIX_TIMEOUT, two
#     at once (pmix_xdata fences, 2 ranks per node);
#   - a group over nodes 0, 3 and 5 while the 61 others fence (pmix_groups);
#   - PMI-1 names published on node 0, looked up on every node, refused,
#     unpublished from node 63 (pmi1_names);
#   - PMIx_Spawn of 8 children from rank 1 (they fence across nodes, the
#     parent connects and hears their job end) and from rank 0 (children
#     that fence without data and get a sibling's key: direct modex)
#     (pmix_spawn xnodes, xdirect);
#   - a lost node ends the job: node 37's proxy SIGKILLed while its ranks
#     run: every other proxy names node 37, the whole job is gone within
#     5 s, the launcher ends non-zero, and nothing is left (no process of
#     the job, no job directory).
# And the mesh stays within its bounds, read from the counters each proxy
# prints at its end under PMIGATE_PROXY_TIMES=1 (counters, never timings:
# "pmigate: node N: mesh: nodes=K links=L links_max=LM sent_bytes=B ..."):
#   - links: every proxy of every job above held at most
#     2*ceil(log2 K) + 8 = 20 links at once (the overlay, node i linked
#     with i +- 2^j mod K, and up to 8 direct links made on demand);
#   - bytes: in the 64 KiB-per-rank job (4 MiB for the fence in all) every
#     proxy sent at most 2 x 4 MiB + SLACK (a collecting fence costs each
#     node about (K-1)/K of its total);
#   - SLACK, the control traffic: pmix_bigdata with no data (the same job,
#     the same fence, empty) sends at most SLACK from every proxy.
# A hub that relays the others' traffic breaks all three, on its node.
# Every job runs with TMPDIR=$JOBTMP: its job directories are this
# script's, and so are the processes that carry that TMPDIR.  A missing
# program or mpirun fails the test: it never passes without running.
# 26 to 33 s on 2 cores (the latter with both kept busy by other work).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/proxy_lib.sh" # job_procs, proxy_on, gone_within
MPIRUN=${PG_MPIRUN:-mpirun.openmpi}
PROGS=$top_builddir/tests/progs
CLUSTER=$top_builddir/tests/cluster
INTEG=$top_builddir/tests/integration
HOLD=$top_builddir/tests/gateway/gw_testprog
K=64
# The control traffic a proxy may send besides the fence's data.  Measured
# on pmix_bigdata with no data at K = 64 (the job the SLACK check runs):
# 13 to 17 KiB from the overlay's proxies, which relay along their routes
# (the star mesh before it: 7.4 KiB from each leaf, 460 KiB from the hub).
# 64 KiB leaves room for that to grow and stays small beside the 4 MiB
# fence, so the data bound still bounds the data.
SLACK=65536
BIG_KB=64

make_workdir pg_scale
for built in "$PMIGATE" "$PROGS/pmi2_wireup" "$INTEG/pmix_nodes" "$INTEG/pmix_bigdata" \
    "$INTEG/pmix_xdata" "$INTEG/pmix_spawn" "$CLUSTER/pmix_groups" "$CLUSTER/pmi1_names" "$HOLD"; do
    if [ ! -x "$built" ]; then
        fail "$built not built: this test needs it"
        finish
    fi
done
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    fail "$MPIRUN not found (./dev deps installs openmpi-bin): no PMIx host for the proxies"
    finish
fi
# CI runs as root; ORTE refuses root unless told
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
JOBTMP=$WORK/tmp
mkdir "$JOBTMP" || exit 99
lost_job=
trap '[ -z "$lost_job" ] || kill "$lost_job" 2>/dev/null; rm -rf "$WORK"' EXIT

# proxy_lib.sh finds a job's processes host by host (cluster_node_pids I);
# here every node is on this machine, and the job's processes are the ones
# whose environment has this script's TMPDIR (the proxies get it from
# mpirun, their ranks from them): other jobs on the machine are not ours.
cluster_node_pids() {
    grep -lzxF "TMPDIR=$JOBTMP" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
}

# the links a proxy may hold: 2*ceil(log2 K) + 8
lg=0
while [ $((1 << lg)) -lt $K ]; do
    lg=$((lg + 1))
done
LINKS_MAX=$((2 * lg + 8))

# job NAME ARGS...: `pmigate proxy ARGS` on K nodes, every proxy's counters
# on; output in $WORK/NAME.out, status in $rc, the mesh counters in
# $WORK/NAME.mesh, $mesh_ok yes when all K proxies printed theirs.
job() {
    name=$1
    shift
    PMIGATE_PROXY_TIMES=1 TMPDIR=$JOBTMP timeout -k 5 120 "$MPIRUN" --oversubscribe -np $K \
        "$PMIGATE" proxy "$@" >"$WORK/$name.out" 2>&1
    rc=$?
    mesh_ok=$(mesh "$name" && echo yes)
}

# mesh NAME: each proxy's mesh counters in $WORK/NAME.out as lines "NODE
# NODES LINKS_MAX SENT_BYTES" in $WORK/NAME.mesh; 0 when every node of K
# printed one, with nodes=K.
mesh() {
    sed -n 's/^pmigate: node \([0-9]*\): mesh: \(.*\)$/\1 \2/p' "$WORK/$1.out" | awk '
        { delete v
          for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          print $1, v["nodes"] + 0, v["links_max"] + 0, v["sent_bytes"] + 0 }' |
        sort -n >"$WORK/$1.mesh"
    awk -v k=$K '$1 == NR - 1 && $2 == k { n++ } END { exit n != k || NR != k }' "$WORK/$1.mesh"
}

# expect NAME LABEL WANT PATTERN: the job exited 0, WANT lines of its
# output match PATTERN, and all K proxies printed their mesh counters.
expect() {
    got=$(grep -c "$4" "$WORK/$1.out")
    if [ $rc -eq 0 ] && [ "$got" -eq "$3" ] && [ "$mesh_ok" = yes ]; then
        pass "K=$K: $2"
    else
        fail "K=$K: $2: exit $rc, $got of $3 lines '$4', mesh counters from $(wc -l <"$WORK/$1.mesh") of $K proxies"
        grep -v '^pmigate: node [0-9]*: \(mesh\|cross-node fence\)' "$WORK/$1.out" | head -n 20
    fi
}

# list COUNT VALUE: "VALUE,VALUE,..." COUNT times
list() {
    printf "$2,%.0s" $(seq "$1") | sed 's/,$//'
}

# -- wire-up --------------------------------------------------------------------
job wireup -n $((2 * K)) "$PROGS/pmi2_wireup"
expect wireup "Slurm-libpmi2 wire-up of $((2 * K)) ranks, 2 per node: cards put, fenced, all got" \
    1 "^wireup n=$((2 * K)) "
job nodes -n $K "$INTEG/pmix_nodes" "$(list $K 1)"
expect nodes "PMIx node data on every node (node ids, $K host names), a get from node 0 answered before the fence by node $((K - 1)), a PMIX_WAIT lookup woken by its publish, every card after a collecting fence" \
    $K '^pmix_nodes rank [0-9]*: ok$'

# -- fences with data -----------------------------------------------------------
job nodata -n $K "$INTEG/pmix_bigdata" 0 1
expect nodata "a collecting fence without data, one rank per node" $K '^pmix_bigdata rank [0-9]*: ok$'
job bigdata -n $K "$INTEG/pmix_bigdata" $BIG_KB 1
expect bigdata "a collecting fence of $BIG_KB KiB per rank, one rank per node, every byte of the other half's checked" \
    $K '^pmix_bigdata rank [0-9]*: ok$'
job xfences -n $((2 * K)) "$INTEG/pmix_xdata" "$(list $K 2)" fences
expect xfences "fences over subsets of ranks on nodes 0 and $((K - 1)) (collecting and not, PMIX_TIMEOUT, two at once), a node-local one's keys reach every node" \
    $((2 * K)) '^pmix_xdata rank [0-9]*: ok$'

# -- a group, names, spawns -----------------------------------------------------
job groups -n $K "$CLUSTER/pmix_groups"
xg=$(sed -n 's/^pmix_groups rank [035] on [^:]*: xg cid=\([1-9][0-9]*\)$/\1/p' "$WORK/groups.out" | sort -u)
if [ "$(grep -c '^pmix_groups rank [035] on [^:]*: xg cid=' "$WORK/groups.out")" -eq 3 ] &&
    [ "$(echo "$xg" | wc -w)" -eq 1 ]; then
    expect groups "a group over nodes 0, 3 and 5 (one context id, $xg; leave, invite, PMIX_TIMEOUT) while every node fences" \
        $K '^pmix_groups rank [0-9]*: ok$'
else
    fail "K=$K: a group over nodes 0, 3 and 5: context ids '$(echo $xg)' (want one, on 3 members), exit $rc"
    grep -v '^pmigate: node [0-9]*: \(mesh\|cross-node fence\)' "$WORK/groups.out" | head -n 20
fi
job names -n $K "$CLUSTER/pmi1_names"
expect names "a PMI-1 name published on node 0 found on every node, a duplicate from node $((K - 1)) refused, unpublished from there, gone everywhere" \
    $K '^pmi1_names rank [0-9]*: ok$'
# spawned NAME RANK PARENT WHAT CHILD: job NAME's spawner (rank RANK) said
# PARENT (a pattern), and its 8 children each a line matching CHILD.
spawned() {
    if grep -q "$3" "$WORK/$1.out"; then
        expect "$1" "PMIx_Spawn of 8 from rank $2: $4" 8 "$5"
    else
        fail "K=$K: PMIx_Spawn of 8 from rank $2: exit $rc, no ok from the parent"
        grep -v '^pmigate: node [0-9]*: \(mesh\|cross-node fence\)' "$WORK/$1.out" | head -n 20
    fi
}
job spawn --tag-output -n $K "$INTEG/pmix_spawn" xnodes 8
spawned spawn 1 '^\[1\] pmix_spawn xnodes: ok nspace=kvs_[0-9]*_1 hosts=[^,]*\(,[^,]*\)\{7\}$' \
    "the children fence across nodes, the parent connects, hears their job end and reads every child's key" \
    '^\[1\.[0-7]\] pmix_spawn xchild [0-7] on [^:]*: ok$'
job xdirect --tag-output -n $K "$INTEG/pmix_spawn" xdirect 8
spawned xdirect 0 '^\[0\] pmix_spawn xdirect: ok nspace=kvs_[0-9]*_1$' \
    "the children fence without data and each gets its sibling's key (direct modex)" \
    '^\[1\.[0-7]\] pmix_spawn xdchild [0-7] got [0-7] from '

# -- the bounds -----------------------------------------------------------------
# over FIELD MAX NAME...: "JOB: node N FIELD=V" for each proxy of the jobs
# NAME whose FIELD (3 links_max, 4 sent_bytes) is over MAX, "; " between
over() {
    field=$1 max=$2
    shift 2
    for name in "$@"; do
        awk -v job="$name" -v f="$field" -v max="$max" \
            -v what="$([ "$field" = 3 ] && echo links_max || echo sent_bytes)" \
            '$f > max { printf "%s: node %d %s=%d\n", job, $1, what, $f }' "$WORK/$name.mesh"
    done | paste -sd';' - | sed 's/;/; /g'
}
# least|most FIELD NAME...: the smallest, the largest FIELD of those jobs' proxies
least() {
    f=$1
    shift
    for name in "$@"; do cat "$WORK/$name.mesh"; done | awk -v f="$f" 'NR == 1 || $f < m { m = $f } END { print m + 0 }'
}
most() {
    f=$1
    shift
    for name in "$@"; do cat "$WORK/$name.mesh"; done | awk -v f="$f" '$f > m { m = $f } END { print m + 0 }'
}
# links: every proxy of every job above (each holds one link at least)
jobs="wireup nodes nodata bigdata xfences groups names spawn xdirect"
over=$(over 3 $LINKS_MAX $jobs)
peak=$(most 3 $jobs)
if [ -z "$over" ] && [ "$(least 3 $jobs)" -gt 0 ]; then
    pass "K=$K: every proxy of every job held at most $peak links at once (bound 2*ceil(log2 $K) + 8 = $LINKS_MAX)"
else
    fail "K=$K: links per proxy over the bound 2*ceil(log2 $K) + 8 = $LINKS_MAX (peak $peak, least $(least 3 $jobs)): ${over:-none}"
fi
# bytes: the control traffic, then the data
over=$(over 4 $SLACK nodata)
if [ -z "$over" ] && [ "$(least 4 nodata)" -gt 0 ]; then
    pass "K=$K: without data every proxy sent at most $(most 4 nodata) bytes (the control traffic; SLACK $SLACK)"
else
    fail "K=$K: the control traffic of a job without data over SLACK = $SLACK bytes per proxy: ${over:-none} (least $(least 4 nodata))"
fi
total=$((K * BIG_KB * 1024))
bound=$((2 * total + SLACK))
over=$(over 4 $bound bigdata)
# every proxy sends its own part once at least
if [ -z "$over" ] && [ "$(least 4 bigdata)" -ge $((BIG_KB * 1024)) ]; then
    pass "K=$K: a collecting fence of $total bytes in all: every proxy sent $(least 4 bigdata) to $(most 4 bigdata) bytes (bound 2 x $total + $SLACK = $bound)"
else
    fail "K=$K: bytes per proxy for a collecting fence of $total bytes in all over the bound 2 x $total + $SLACK = $bound, or under one rank's $((BIG_KB * 1024)) (least $(least 4 bigdata)): ${over:-none}"
fi

# -- a lost node ends the job -----------------------------------------------------
# Each proxy's stderr goes to $WORK/lost.err.NODE (mpirun's rank is the
# node); every rank initialises PMI-1 and sleeps 60 s (gw_testprog: rank
# 99, which would act, is none).
victim=37
host=$(hostname)
TMPDIR=$JOBTMP timeout -k 5 60 "$MPIRUN" --oversubscribe -np $K sh -c \
    'exec "$0" proxy -n "$1" "$2" pmi 99 finalize pg_scale 2>"$3/lost.err.$OMPI_COMM_WORLD_RANK"' \
    "$PMIGATE" $K "$HOLD" "$WORK" >"$WORK/lost.out" 2>&1 &
lost_job=$!
n=0
until [ "$(job_procs all | xargs -r ps -o comm= -p | grep -c '^gw_testprog$')" -ge $K ] ||
    [ $n -ge 600 ] || ! kill -0 $lost_job 2>/dev/null; do
    n=$((n + 1))
    sleep 0.05
done
pid=
for p in $(proxy_on all); do
    grep -qzxF "OMPI_COMM_WORLD_RANK=$victim" "/proc/$p/environ" 2>/dev/null && pid=$p
done
if [ -z "$pid" ] || [ $n -ge 600 ]; then
    fail "K=$K: the job to lose a node of did not start (node $victim's proxy '$pid', after $((n / 20)) s)"
    head -n 20 "$WORK/lost.out"
else
    since=$(date +%s%N)
    kill -9 "$pid"
    gone_within 5000 all
    silent=
    i=0
    while [ $i -lt $K ]; do
        [ $i -eq $victim ] || grep -qF "node $victim ($host-n$victim) was lost" "$WORK/lost.err.$i" ||
            silent="$silent $i"
        i=$((i + 1))
    done
    if [ $took -le 5000 ] && [ -z "$silent" ]; then
        pass "K=$K: node $victim's proxy SIGKILLed: every other node named it, the whole job gone in $took ms"
    else
        fail "K=$K: node $victim's proxy SIGKILLed: the job's processes gone after $took ms (want 5000 at most), nodes that did not name node $victim:${silent:- none}"
        echo "left: $(job_procs all | xargs -r ps -o pid=,stat=,ppid=,args= -p | head -n 5)"
        cat "$WORK/lost.err.0" | head -n 5
    fi
fi
# the launcher ends by itself (20 s at most), non-zero
n=0
while kill -0 $lost_job 2>/dev/null && [ $n -lt 400 ]; do
    n=$((n + 1))
    sleep 0.05
done
ended=$([ $n -lt 400 ] && echo yes)
kill $lost_job 2>/dev/null
wait $lost_job
rc=$?
lost_job=
left=$(job_procs all | xargs -r ps -o pid=,stat=,ppid=,args= -p; ls -d "$JOBTMP"/pmigate* 2>/dev/null)
if [ "$ended" = yes ] && [ $rc -ne 0 ] && [ -z "$left" ]; then
    pass "K=$K: a node lost: mpirun exited $rc, no process or job directory of the job left"
else
    fail "K=$K: a node lost: mpirun $([ "$ended" = yes ] && echo "exited $rc" || echo "still ran after 20 s"), left: $(echo $left)"
fi
finish
