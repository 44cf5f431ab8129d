#!/bin/sh
# The start-up of a `pmigate proxy` job over 3 separate hosts (the cluster
# in a box) is bounded and cannot be starved (docs/proxy.md, "Start-up"),
# under Slurm (srun --mpi=pmix) and mpirun:
#   - a node silent in the host's start-up exchange (its proxy stopped
#     before it joined; node 0's too, then SIGKILLed): every other node
#     ends within the start-up's bound (PMIGATE_MESH_CONNECT) with a message
#     saying that the host's exchange did not complete;
#   - --timeout counts from the proxy's start: with a node silent there,
#     the others end after --timeout, exit 124, saying so;
#   - an outsider on host 3 flooding node 1's mesh port (the one node 0
#     dials: of two neighbours the lower dials) while the proxies start
#     (connections that hold a slot and say nothing, and headers far too
#     big) does not stop the start-up, and node 1's log tells the refusals
#     rate-limited: one line at once, then one count per 10 s.
# Each proxy runs under `sh -c`, which stops itself first on the host the
# case makes silent (SIGSTOP: no hook in pmigate).  Stderr goes to
# /tmp/proxy.err on each host.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
proxy_cluster_up pg_start 3

# launch HOW STOPPED ENV ARGS...: `pmigate proxy ARGS` once per host under
# HOW (slurm, mpirun) with the environment ENV (k=v ...), in the
# background ($job); the proxy of host STOPPED (0: none) stops itself
# before it starts.  Output in $WORK/out.
launch() {
    launcher=$1 stopped=$2 env=$3
    shift 3
    launch_sh "$launcher" "[ \"\$(hostname)\" = $(cluster_node_name "$stopped") ] && kill -STOP \$\$;
         $env exec $PMIGATE proxy $* 2>/tmp/proxy.err"
}

# stopped_on I: the stopped shell on host I (5 s at most).
stopped_on() {
    n=0
    while [ $n -lt 100 ]; do
        for p in $(cluster_node_pids "$1"); do
            [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" = T ] && echo "$p" && return 0
        done
        n=$((n + 1))
        sleep 0.05
    done
    return 1
}



# finish_job: the launcher's status in $rc, every process of the job gone.
finish_job() {
    [ -n "${victim:-}" ] && kill -9 "$victim" 2>/dev/null
    victim=
    n=0
    while kill -0 "$job" 2>/dev/null && [ $n -lt 300 ]; do
        n=$((n + 1))
        sleep 0.05
    done
    kill "$job" 2>/dev/null
    wait "$job"
    rc=$?
    for i in 1 2 3; do
        job_procs "$i" | xargs -r kill -9 2>/dev/null
    done
}

# -- a node silent in the host's exchange: the others end within the bound ------
# (host 3, node 2; host 1, node 0, stopped then SIGKILLed)
for how in slurm mpirun; do
    for host in 3 1; do
        since=$(date +%s%N)
        launch $how $host PMIGATE_MESH_CONNECT=4 -n 6 /bin/true
        victim=$(stopped_on $host)
        [ $host = 1 ] && sleep 1 && kill -9 "$victim"
        others=$([ $host = 3 ] && echo "1 2" || echo "2 3")
        a=${others% *} b=${others#* }
        # a killed node 0 is a task the launcher sees die: it may end the other
        # tasks around their own deadline, and then they have nothing to
        # say -- what counts is that they end within the bound (Slurm left
        # them waiting 9 s before); a node that is only silent is for the
        # others to notice and name
        if gone_within 4000 $others && [ $took -le 12000 ] &&
            { [ $host = 1 ] && [ $took -le 8000 ] ||
                { said $a "did not complete within 4 s" && said $b "did not complete within 4 s"; }; }; then
            pass "$how: host $host silent in the start-up: hosts $others ended in $took ms$([ $took -ge 4000 ] && echo ", saying so")"
        else
            fail "$how: host $host silent in the start-up: hosts $others not done in 12 s ($took ms) or silent"
            cat "$(cluster_node_tmp $a)/proxy.err" 2>/dev/null | head -n 5
        fi
        finish_job
    done
done

# -- --timeout counts from the proxy's start --------------------------------------
for how in slurm mpirun; do
    since=$(date +%s%N)
    launch $how 3 PMIGATE_MESH_CONNECT=30 --timeout 3 -n 6 /bin/true
    victim=$(stopped_on 3)
    if gone_within 3000 1 2 && [ $took -le 8000 ] && said 1 "job timed out after 3 s, in the start-up" &&
        said 2 "job timed out after 3 s, in the start-up"; then
        pass "$how: --timeout 3 with host 3 silent in the start-up: hosts 1 and 2 ended in $took ms"
    else
        fail "$how: --timeout 3 with host 3 silent in the start-up: hosts 1 and 2 not done in 8 s ($took ms) or silent"
        cat "$(cluster_node_tmp 1)/proxy.err" 2>/dev/null | head -n 5
    fi
    finish_job
    [ $how = slurm ] || continue
    # a run that got going: its ranks get what is left of the 4 s (counted
    # from the run's start, it would end 7 s in)
    since=$(date +%s%N)
    launch $how 3 "" --timeout 4 -n 3 sleep 30
    sleep 3
    kill -CONT "$(stopped_on 3)"
    finish_job
    took=$((($(date +%s%N) - since) / 1000000))
    if [ $rc -eq 124 ] && [ $took -lt 6000 ]; then
        pass "$how: --timeout 4, one host 3 s late: exit 124 after $took ms"
    else
        fail "$how: --timeout 4, one host 3 s late: exit $rc after $took ms"
    fi
done

# -- an outsider floods node 1's mesh port while the proxies start ---------------------
cat >"$WORK/flood.py" <<'EOF'
# flood.py ADDR PORT: keep 200 silent connections to ADDR:PORT open, each
# one the server closes opened again at once (so the node's handshake slots
# stay taken), and between them send a header announcing a 1 GiB body on
# another connection.
import selectors, socket, struct, sys, time
addr, port = sys.argv[1], int(sys.argv[2])
sel = selectors.DefaultSelector()
held = 0
while True:
    while held < 200:
        try:
            c = socket.create_connection((addr, port), timeout=0.5)
        except OSError:
            time.sleep(0.01)
            break
        sel.register(c, selectors.EVENT_READ)
        held += 1
    for key, _ in sel.select(timeout=0.01):
        try:
            gone = key.fileobj.recv(64) == b""
        except OSError:
            gone = True
        if gone:
            sel.unregister(key.fileobj)
            key.fileobj.close()
            held -= 1
    try:
        b = socket.create_connection((addr, port), timeout=0.5)
        b.sendall(struct.pack(">IHHII", 1 << 30, 1, 0, 0, 0))
        b.close()
    except OSError:
        pass
EOF
for how in slurm mpirun; do
    launch $how 3 PMIGATE_MESH_CONNECT=20 -n 3 /bin/true
    victim=$(stopped_on 3)
    target=$(proxy_on 2)
    # node 1's mesh listener: the one its proxy holds alone.  Under Slurm the
    # proxy also holds a listener it inherited from slurmstepd (ss names
    # both processes on that line): flooding that one reaches slurmstepd,
    # not the mesh.
    port=$("$CLUSTER_ON" 2 ss -Hltnp |
        awk -v u="users:((\"pmigate\",pid=$target," '$NF ~ /^users:\(\(/ && index($NF, u) == 1 && index($NF, "),(") == 0 { n = split($4, a, ":"); print a[n]; exit }')
    if [ -z "$port" ]; then
        fail "$how: node 1's mesh port not found (proxy $target)"
        finish_job
        continue
    fi
    # four flooders: a slot a silent stranger gives up after its handshake
    # deadline is taken again at once, so only a newcomer that makes room
    # for itself (node 0's dial) gets in
    floods=
    for f in 1 2 3 4; do
        "$CLUSTER_ON" 3 /usr/bin/python3 "$WORK/flood.py" "$(cluster_node_name 2)" "$port" &
        floods="$floods $!"
    done
    sleep 2
    kill -CONT "$victim"
    victim=
    finish_job
    kill $floods 2>/dev/null
    wait $floods 2>/dev/null
    err=$(cluster_node_tmp 2)/proxy.err
    first=$(grep -c "refused a mesh connection" "$err")
    counts=$(grep -c "refused [0-9]* more mesh connections" "$err")
    total=$(sed -n 's/.*refused \([0-9]*\) more mesh.*/\1/p' "$err" | awk '{ s += $1 } END { print s + 0 }')
    if [ $rc -eq 0 ]; then
        pass "$how: node 1's mesh port flooded from host 3 during the start-up: the job ran (exit 0)"
    else
        fail "$how: node 1's mesh port flooded from host 3 during the start-up: exit $rc"
        head -n 5 "$err" "$(cluster_node_tmp 1)/proxy.err"
    fi
    if [ "$first" -eq 1 ] && [ "$counts" -ge 1 ] && [ "$counts" -le 3 ] && [ "$total" -ge 20 ]; then
        pass "$how: node 1 logged the refusals in $((first + counts)) lines ($((total + 1)) connections)"
    else
        fail "$how: node 1's log of refusals: $first first, $counts counts, $total counted"
        head -n 5 "$err"
    fi
done
finish
