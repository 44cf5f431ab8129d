# cluster.sh -- the project's cluster in a box (sourced; POSIX sh, needs root).
#
# Why: a multi-node job must be tested on separate hosts, not on K proxies
# sharing one hostname, one /tmp, one /dev/shm and one loopback.  This
# library builds K hosts on this machine from Linux namespaces, runs Slurm
# (slurmctld + one slurmd per host, `srun --mpi=pmix`) and Open MPI's
# mpirun (reaching the hosts through an rsh agent) on them, and tears it all
# down again by pid and by name.  Nothing leaves the machine: the hosts'
# network is a bridge with no address on the machine's side.
#
# A host ("node") is a network namespace (its own eth0 with 10.77.S.I/24,
# lo up) plus, held by a keeper process (`sleep infinity`), its own UTS
# namespace (hostname), mount namespace (its own /etc/hosts, its own /tmp
# bind-mounted from CLUSTER_DIR/nodes/NAME/tmp, a tmpfs on /dev/shm) and
# IPC namespace.  The directories in CLUSTER_SHARE that lie under /tmp (the
# checkout and the build tree, when a clone lives there) are bind-mounted
# into each host's /tmp at the same path, so its programs and the tests'
# scratch directories in the build tree are found on every host; the rest
# of the host's /tmp stays its own.  A controller host NAMEc runs slurmctld, so every port
# (slurmctld's, slurmd's, srun's) lives inside the cluster's namespaces and
# two clusters never compete for one.  A private munged (own key, own
# socket, Slurm's AuthInfo=socket=...) serves the cluster; its socket is a
# path, seen by every host.  Programs must live outside /tmp (each host has
# its own) or in a directory of CLUSTER_SHARE: the build tree is fine.
#
# Instances: several clusters run at once (other test scripts, other
# checkouts).  cluster_up takes the first free slot S in 1..200, held by
# flock on CLUSTER_ROOT/slotS.lock through file descriptor 9 of the calling
# shell (do not use fd 9 yourself); every name carries S: netns, hostnames
# and Slurm node names pgSn1..pgSnK (e.g. pg7n1), controller pgSc, bridge
# pgSbr, veths pgSvI, subnet 10.77.S.0/24, state in CLUSTER_ROOT/S.  A slot
# whose owner died (even by SIGKILL) is cleaned up by the next cluster_up
# that takes it.
#
# Interface (after `. tests/cluster/cluster.sh`):
#   cluster_up [K]         start K hosts (default $CLUSTER_K, else 3), Slurm
#                          idle on all; returns non-zero with a message on
#                          stderr when anything is missing or fails.  Sets an
#                          EXIT/INT/TERM/HUP trap that runs cluster_down and
#                          then `eval "$CLUSTER_AT_EXIT"` (put your own
#                          clean-up there, not in a trap of your own).
#                          CLUSTER_RATE=1gbit (any tc rate) limits each
#                          host's eth0 from the start.
#   cluster_down           stop everything (idempotent): every process in
#                          the hosts' namespaces (SIGKILL, until none is
#                          left), munged by pid, links, namespaces, state
#                          (kept when CLUSTER_KEEP=1).
#   cluster_on I CMD...    run CMD on host I (1..K; "c" = the controller) in
#                          the foreground, in the current directory (/ when
#                          the host does not have it), with the caller's
#                          environment.  Also an executable,
#                          $CLUSTER_ON, for `timeout 60 "$CLUSTER_ON" 1 ...`.
#   cluster_srun ARGS...   srun ARGS from host 1 (srun must run on a host: its
#                          steps connect back to it), e.g.
#                          `cluster_srun -N 3 --mpi=pmix pmigate proxy ...`.
#                          srun forwards the caller's environment (Slurm's
#                          default); add -K1 to end a step when a task dies.
#   cluster_mpirun ARGS... mpirun.openmpi ARGS from host 1 with the rsh agent,
#                          the hosts' eth0 for ORTE and the TCP BTL, root
#                          allowed, and `--host` naming every host with
#                          $CLUSTER_SLOTS slots (default 64): place processes
#                          with --map-by, e.g.
#                          `cluster_mpirun -np 3 --map-by ppr:1:node pmigate proxy ...`.
#                          The other hosts' processes get a clean environment
#                          (as over ssh): forward variables with `-x VAR`.
#                          $CLUSTER_MPIRUN is the same as an executable.
#   cluster_kill_node I    a whole host lost: SIGKILL every process in host
#                          I's namespaces (slurmd, slurmstepd, orted, proxies,
#                          ranks) until none is left; its network and /tmp
#                          stay, like a crashed machine's disk.
#   cluster_restart_node I start host I's slurmd again and wait until Slurm
#                          has it idle (after cluster_kill_node).
#   cluster_link I up|down host I's link on the bridge: down drops its packets
#                          silently (no reset), as a cut cable does.
#   cluster_rate RATE|none limit every host's eth0 to RATE (tc tbf: 1gbit,
#                          100mbit, ...) or lift the limit.
#   cluster_wait_idle      wait until Slurm has every host idle again (after
#                          a job that left a host completing).
#   cluster_reset          cancel every Slurm job, wait until all hosts are
#                          idle, then SIGKILL whatever else runs on them but
#                          slurmd (after a killed srun, whose allocation
#                          would hold later jobs, or a killed mpirun, whose
#                          processes may live on).
#   cluster_node_pids I    the pids of every process in host I's namespaces
#                          but its keeper, one a line.
#   cluster_node_tmp I     host I's /tmp as the machine sees it (to look for
#                          what a job left there).
#   cluster_logs           the tails of the daemons' logs, to stderr.
#   cluster_attach DIR     load a running cluster's variables (from
#                          DIR/env) into another shell.
#   cluster_without_runtime_lines  a filter: stdin without mpirun's and
#                          srun's own diagnostics (before comparing output).
# Slurm's commands run on a host too (the machine has no address on the
# cluster's network): `cluster_on c sinfo`, `cluster_on 1 scontrol ...`.
# Variables (exported):
#   CLUSTER_ID (slot S), CLUSTER_K, CLUSTER_DIR (state), CLUSTER_NODES
#   ("pg7n1 pg7n2 pg7n3"), CLUSTER_HOSTS ("pg7n1,pg7n2,pg7n3"),
#   CLUSTER_ADDRS, SLURM_CONF, CLUSTER_ON, CLUSTER_MPIRUN, CLUSTER_AGENT (the
#   rsh agent: `AGENT [opts] HOST CMD...`).
# Knobs (set before cluster_up): CLUSTER_RATE, CLUSTER_SLURMD_TIMEOUT
# (Slurm's SlurmdTimeout, default 300 s: how long before Slurm marks a
# silent host down), CLUSTER_KEEP=1, CLUSTER_ROOT (default /run/pgcluster),
# CLUSTER_SHARE (absolute directories, space-separated, that the hosts see
# as the machine does; default "$top_srcdir $top_builddir", which the test
# harness and tests/lib.sh set; only those under /tmp need it).
# Logs: CLUSTER_DIR/log/ (slurmctld.log, slurmd.NAME.log, daemons.out),
# CLUSTER_DIR/munge/munged.log.
#
# Humans: tests/cluster/cluster up|down|on|srun|mpirun|status (see there).

CLUSTER_ROOT=${CLUSTER_ROOT:-/run/pgcluster}

cluster_say() {
    echo "cluster: $*" >&2
}

# cluster_need_tools: every program the cluster needs is there (./dev deps
# installs them); names the missing ones.
cluster_need_tools() {
    _missing=
    for _t in ip nsenter unshare flock tc mount hostname stat sleep \
        munged slurmctld slurmd srun sinfo scontrol mpirun.openmpi; do
        command -v "$_t" >/dev/null 2>&1 || [ -x "/usr/sbin/$_t" ] || _missing="$_missing $_t"
    done
    if [ -n "$_missing" ]; then
        cluster_say "missing:$_missing (./dev deps installs iproute2 util-linux munge slurmctld slurmd slurm-client openmpi-bin)"
        return 1
    fi
    if [ "$(id -u)" -ne 0 ]; then
        cluster_say "needs root (namespaces, bridge, slurmd)"
        return 1
    fi
}

# cluster_names S K: sets the per-slot names.
cluster_names() {
    CLUSTER_ID=$1 CLUSTER_K=$2
    CLUSTER_DIR=$CLUSTER_ROOT/$1
    _i=1 CLUSTER_NODES='' CLUSTER_ADDRS=''
    while [ $_i -le "$2" ]; do
        CLUSTER_NODES="$CLUSTER_NODES pg${1}n$_i"
        CLUSTER_ADDRS="$CLUSTER_ADDRS 10.77.$1.$_i"
        _i=$((_i + 1))
    done
    CLUSTER_NODES=${CLUSTER_NODES# } CLUSTER_ADDRS=${CLUSTER_ADDRS# }
    CLUSTER_HOSTS=$(echo "$CLUSTER_NODES" | tr ' ' ,)
    SLURM_CONF=$CLUSTER_DIR/slurm.conf
    CLUSTER_ON=$CLUSTER_DIR/bin/on
    CLUSTER_AGENT=$CLUSTER_DIR/bin/rsh
    CLUSTER_MPIRUN=$CLUSTER_DIR/bin/mpirun
    export CLUSTER_ID CLUSTER_K CLUSTER_DIR CLUSTER_NODES CLUSTER_HOSTS CLUSTER_ADDRS \
        SLURM_CONF CLUSTER_ON CLUSTER_AGENT CLUSTER_MPIRUN
}

# cluster_node_name I: host I's name (I = 1..K, or c for the controller).
cluster_node_name() {
    echo "pg${CLUSTER_ID}$([ "$1" = c ] && echo c || echo "n$1")"
}

# cluster_node_tmp I: host I's /tmp as the machine sees it.
cluster_node_tmp() {
    echo "$CLUSTER_DIR/nodes/$(cluster_node_name "$1")/tmp"
}

# cluster_take_slot: the first slot whose lock is free, held on fd 9; a
# previous owner's leftovers are removed.
cluster_take_slot() {
    mkdir -p "$CLUSTER_ROOT" || return 1
    _s=1
    while [ $_s -le 200 ]; do
        exec 9>"$CLUSTER_ROOT/slot$_s.lock"
        if flock -n 9; then
            cluster_names "$_s" "$1"
            cluster_down_slot
            return 0
        fi
        exec 9>&-
        _s=$((_s + 1))
    done
    cluster_say "no free slot in $CLUSTER_ROOT (200 clusters running?)"
    return 1
}

# cluster_netns_ino NAME: the inode of netns NAME, empty when there is none.
cluster_netns_ino() {
    [ -e "/run/netns/$1" ] && stat -L -c %i "/run/netns/$1" 2>/dev/null
}

# cluster_ns_pids INO [EXCEPT]: pids of processes in the network namespace
# with inode INO (but EXCEPT).
cluster_ns_pids() {
    stat -L -c '%i %n' /proc/[0-9]*/ns/net 2>/dev/null |
        awk -v ino="$1" -v except="${2:--}" '$1 == ino { split($2, p, "/"); if (p[3] != except) print p[3] }'
}

# cluster_kill_ns NAME [EXCEPT]: SIGKILL every process in netns NAME (but
# EXCEPT) until none is left (a dying parent may fork once more).
cluster_kill_ns() {
    _ino=$(cluster_netns_ino "$1")
    [ -n "$_ino" ] || return 0
    _n=0
    while :; do
        _pids=$(cluster_ns_pids "$_ino" "${2:-}")
        [ -n "$_pids" ] || return 0
        # shellcheck disable=SC2086
        kill -9 $_pids 2>/dev/null
        _n=$((_n + 1))
        if [ $_n -gt 200 ]; then
            cluster_say "processes in $1 will not die: $_pids"
            return 1
        fi
        sleep 0.05
    done
}

# cluster_kill_pid PID NAME: SIGKILL PID if it is still a NAME (a pid file
# left by a dead owner may name a pid reused since).
cluster_kill_pid() {
    [ -n "$1" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] && kill -9 "$1" 2>/dev/null
    return 0
}

# cluster_slot_netns: the network namespaces of slot $CLUSTER_ID.
cluster_slot_netns() {
    for _f in /run/netns/pg"${CLUSTER_ID}"c /run/netns/pg"${CLUSTER_ID}"n*; do
        [ -e "$_f" ] && echo "${_f#/run/netns/}"
    done
}

# cluster_down_slot: removes everything of slot $CLUSTER_ID, by name and by
# pid (from its state directory), whether it runs or was left behind.
cluster_down_slot() {
    _all="$(cluster_node_name c)"
    for _d in "$CLUSTER_DIR"/nodes/*/; do
        [ -d "$_d" ] && _all="$_all $(basename "$_d")"
    done
    for _name in $(cluster_slot_netns) $_all; do
        cluster_kill_ns "$_name"
    done
    cluster_kill_pid "$(cat "$CLUSTER_DIR/munged.pid" 2>/dev/null)" munged
    for _l in $(ip -o link show 2>/dev/null | awk -F': ' '{ print $2 }' | sed 's/@.*//' |
        grep "^pg${CLUSTER_ID}\(v[0-9c]*\|br\)$"); do
        ip link del "$_l" 2>/dev/null
    done
    for _name in $(cluster_slot_netns); do
        ip netns del "$_name" 2>/dev/null
    done
    # state: a mount left in a node directory cannot be (it died with its
    # namespace), so removing is safe
    [ "${CLUSTER_KEEP:-0}" = 1 ] || rm -rf "$CLUSTER_DIR"
}

# cluster_down: stops this shell's cluster and frees its slot.
cluster_down() {
    [ -n "${CLUSTER_ID:-}" ] || return 0
    cluster_down_slot
    exec 9>&-
    CLUSTER_ID=
}

# cluster_node_up NAME ADDR: netns with its veth on the bridge, then the
# keeper holding the host's UTS, mount and IPC namespaces.
cluster_node_up() {
    _v=pg${CLUSTER_ID}v${1##*[nc]}
    [ "${1%c}" = "$1" ] || _v=pg${CLUSTER_ID}vc
    _nd=$CLUSTER_DIR/nodes/$1
    mkdir -p "$_nd/tmp" && chmod 1777 "$_nd/tmp" || return 1
    ip netns add "$1" &&
        ip link add "$_v" type veth peer name eth0 netns "$1" &&
        ip link set "$_v" master "pg${CLUSTER_ID}br" up &&
        ip -n "$1" addr add "$2/24" dev eth0 &&
        ip -n "$1" link set eth0 up &&
        ip -n "$1" link set lo up || return 1
    cp "$CLUSTER_DIR/hosts" "$_nd/hosts"
    _shared=$(cluster_shared_tmp) || return 1
    for _p in $_shared; do
        mkdir -p "$_nd/tmp/${_p#/tmp/}" || return 1
    done
    # The keeper: its mount namespace drops the copies of /run/netns (they
    # would keep other clusters' namespaces alive) and mounts the host's own
    # files; "ready" says it is done.  The shared directories are bound into
    # the host's /tmp before it covers the machine's (which hides them), and
    # come along with it (--rbind); the namespace is private, so the machine
    # never sees these mounts.
    # It is started from a subshell that exits at once, so that it is not a
    # child of the caller (whose `wait` would wait for it for ever).
    (
        # shellcheck disable=SC2086
        nsenter --net="/run/netns/$1" unshare --uts --mount --ipc --propagation private \
            sh -c 'umount -R -l /run/netns 2>/dev/null
                   n=$1 nd=$2
                   shift 2
                   for p in "$@"; do mount --bind "$p" "$nd/tmp/${p#/tmp/}" || exit 1; done
                   hostname "$n" && mount --bind "$nd/hosts" /etc/hosts &&
                   mount --rbind "$nd/tmp" /tmp && mount -t tmpfs -o mode=1777 tmpfs /dev/shm &&
                   : >"$nd/ready" && exec sleep infinity' keeper "$1" "$_nd" $_shared \
            </dev/null >"$_nd/keeper.log" 2>&1 9>&- &
        echo $! >"$_nd/keeper.pid"
    )
}

# cluster_shared_tmp: the directories of CLUSTER_SHARE under /tmp, one a
# line, without those inside another (its mount brings them; the others
# every host sees anyway); fails on /tmp itself or a relative path.
cluster_shared_tmp() {
    _under=
    for _p in ${CLUSTER_SHARE-${top_srcdir:-} ${top_builddir:-}}; do
        case $_p in
        /tmp | /tmp/) cluster_say "CLUSTER_SHARE: /tmp itself cannot be shared (each host has its own)"; return 1 ;;
        /tmp/*) _under="$_under${_p%/}
" ;;
        /*) ;;
        *) cluster_say "CLUSTER_SHARE: $_p is not an absolute path"; return 1 ;;
        esac
    done
    printf '%s' "$_under" | LC_ALL=C sort -u |
        awk '{ for (i = 0; i < n; i++) if (index($0, kept[i] "/") == 1) next
               kept[n++] = $0; print }'
}

# cluster_wait_file FILE PID SECONDS: until FILE exists, while PID lives.
cluster_wait_file() {
    _n=0
    until [ -e "$1" ]; do
        kill -0 "$2" 2>/dev/null || return 1
        _n=$((_n + 1))
        [ $_n -le $(($3 * 20)) ] || return 1
        sleep 0.05
    done
}

# cluster_keeper I: the keeper's pid of host I.
cluster_keeper() {
    cat "$CLUSTER_DIR/nodes/$(cluster_node_name "$1")/keeper.pid"
}

cluster_on() {
    "$CLUSTER_ON" "$@"
}

cluster_srun() {
    "$CLUSTER_ON" 1 srun "$@"
}

cluster_mpirun() {
    "$CLUSTER_MPIRUN" "$@"
}

# cluster_write_bin: the executables (host entry, rsh agent, mpirun) with
# this cluster's directory written in, so they work from any process.
cluster_write_bin() {
    mkdir -p "$CLUSTER_DIR/bin" || return 1
    cat >"$CLUSTER_ON" <<EOF
#!/bin/sh
# on I CMD...: CMD on host I of the cluster in $CLUSTER_DIR, in the current
# directory (/ when it is under /tmp, which differs per host, and not in a
# directory shared with the hosts: $(echo $(cluster_shared_tmp)))
node=\$1; shift
case \$node in [0-9]*|c) name=pg${CLUSTER_ID}\$([ "\$node" = c ] && echo c || echo "n\$node") ;; *) name=\$node ;; esac
pid=\$(cat "$CLUSTER_DIR/nodes/\$name/keeper.pid" 2>/dev/null) || { echo "on: no host \$node" >&2; exit 125; }
wd=\$PWD
case \$PWD in /tmp|/tmp/*) wd=/ ;; esac
for p in $(echo $(cluster_shared_tmp)); do
    case \$PWD/ in "\$p"/*) wd=\$PWD ;; esac
done
# (fd 9 holds the cluster's slot: nothing on a host may keep it)
exec 9>&-
exec nsenter -t "\$pid" -n -u -m -i -W "\$wd" -- "\$@"
EOF
    cat >"$CLUSTER_AGENT" <<EOF
#!/bin/sh
# rsh agent for ORTE: AGENT [options] HOST [options] CMD...; runs CMD with
# sh on HOST in a clean environment, as ssh would.
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1; shift
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
cd / && exec env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root \
    LANG=C.UTF-8 "$CLUSTER_ON" "\$host" sh -c "\$*"
EOF
    cat >"$CLUSTER_MPIRUN" <<EOF
#!/bin/sh
# mpirun ARGS...: mpirun.openmpi on host 1 across every host of the cluster.
hosts=\$(echo "$CLUSTER_NODES" | sed "s/\\([^ ]*\\)/\\1:\${CLUSTER_SLOTS:-64}/g; s/ /,/g")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec "$CLUSTER_ON" 1 mpirun.openmpi --mca plm_rsh_agent "$CLUSTER_AGENT" \\
    --mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0 --host "\$hosts" "\$@"
EOF
    chmod 755 "$CLUSTER_ON" "$CLUSTER_AGENT" "$CLUSTER_MPIRUN"
}

# cluster_munged: a private munged (own key and socket) as user munge.
cluster_munged() {
    _m=$CLUSTER_DIR/munge
    mkdir -p "$_m" && chown munge:munge "$_m" && chmod 711 "$_m" || return 1
    dd if=/dev/urandom of="$_m/key" bs=1024 count=1 status=none &&
        chown munge:munge "$_m/key" && chmod 400 "$_m/key" || return 1
    runuser -u munge -- /usr/sbin/munged --socket="$_m/socket" --key-file="$_m/key" \
        --pid-file="$_m/munged.pid" --log-file="$_m/munged.log" \
        --seed-file="$_m/seed" </dev/null >>"$CLUSTER_DIR/log/daemons.out" 2>&1 9>&- ||
        { cluster_say "cannot start munged"; cat "$CLUSTER_DIR/log/daemons.out" >&2; return 1; }
    cp "$_m/munged.pid" "$CLUSTER_DIR/munged.pid"
}

# cluster_slurm_conf: controller on host c, one slurmd per host.
cluster_slurm_conf() {
    cat >"$SLURM_CONF" <<EOF
# cluster in a box, slot $CLUSTER_ID (tests/cluster/cluster.sh)
ClusterName=pg$CLUSTER_ID
SlurmctldHost=pg${CLUSTER_ID}c(10.77.$CLUSTER_ID.254)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$CLUSTER_DIR/munge/socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
MaxTasksPerNode=1024
ReturnToService=2
KillWait=2
SlurmdTimeout=${CLUSTER_SLURMD_TIMEOUT:-300}
StateSaveLocation=$CLUSTER_DIR/slurm/state
SlurmdSpoolDir=$CLUSTER_DIR/slurm/spool.%n
SlurmctldPidFile=$CLUSTER_DIR/slurm/slurmctld.pid
SlurmdPidFile=$CLUSTER_DIR/slurm/slurmd.%n.pid
SlurmctldLogFile=$CLUSTER_DIR/log/slurmctld.log
SlurmdLogFile=$CLUSTER_DIR/log/slurmd.%n.log
NodeName=pg${CLUSTER_ID}n[1-$CLUSTER_K] NodeAddr=10.77.$CLUSTER_ID.[1-$CLUSTER_K] CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000
PartitionName=debug Nodes=pg${CLUSTER_ID}n[1-$CLUSTER_K] Default=YES State=UP OverSubscribe=FORCE:256
EOF
}

# cluster_wait_idle [NAME...]: until Slurm has these hosts (default: all)
# idle; 60 s at most.  (Slurm's commands run on a host: the machine itself
# has no address on the cluster's network.)
cluster_wait_idle() {
    _want=${*:-$CLUSTER_NODES}
    _end=$(($(date +%s) + 60))
    while :; do
        _states=$("$CLUSTER_ON" c sinfo -h -N -o '%N %T' 2>/dev/null)
        _ok=1
        for _h in $_want; do
            echo "$_states" | grep -qx "$_h idle" || _ok=0
        done
        [ $_ok = 0 ] || return 0
        if [ "$(date +%s)" -ge $_end ]; then
            cluster_say "hosts not idle after 60 s: $(echo "$_states" | tr '\n' ' ')"
            return 1
        fi
        sleep 0.1
    done
}

# cluster_reset: cancel every Slurm job of the cluster and wait until all
# hosts are idle (after an srun that was killed: its allocation would
# otherwise stay and hold later jobs waiting for resources).
cluster_reset() {
    "$CLUSTER_ON" c scancel --quiet --user=root 2>/dev/null
    cluster_wait_idle || return 1
    # then whatever an mpirun killed before its job ended left behind
    for _i in $(seq "$CLUSTER_K"); do
        _keep=$(cat "$CLUSTER_DIR/slurm/slurmd.$(cluster_node_name "$_i").pid" 2>/dev/null)
        _pids=$(cluster_node_pids "$_i" | grep -vx "${_keep:-none}")
        # shellcheck disable=SC2086
        [ -z "$_pids" ] || kill -9 $_pids 2>/dev/null
    done
}

# cluster_slurmd I: slurmd on host I (it takes its node name from the
# hostname).  The daemons' own stdio goes to a file: they (and the
# slurmstepds they fork) must not hold the caller's output open.
cluster_slurmd() {
    "$CLUSTER_ON" "$1" /usr/sbin/slurmd -f "$SLURM_CONF" \
        </dev/null >>"$CLUSTER_DIR/log/daemons.out" 2>&1 9>&- ||
        { cluster_say "cannot start slurmd on host $1"; return 1; }
}

cluster_up() {
    [ -z "${CLUSTER_ID:-}" ] || { cluster_say "already up (slot $CLUSTER_ID)"; return 1; }
    cluster_need_tools || return 1
    trap 'cluster_down; eval "${CLUSTER_AT_EXIT:-}"' EXIT
    trap 'exit 130' INT TERM HUP
    cluster_take_slot "${1:-${CLUSTER_K:-3}}" || return 1
    mkdir -p "$CLUSTER_DIR/log" "$CLUSTER_DIR/slurm/state" "$CLUSTER_DIR/nodes" || return 1
    for _h in $CLUSTER_NODES; do
        mkdir -p "$CLUSTER_DIR/slurm/spool.$_h" || return 1
    done
    {
        echo "127.0.0.1 localhost"
        echo "10.77.$CLUSTER_ID.254 pg${CLUSTER_ID}c"
        for _i in $(seq "$CLUSTER_K"); do echo "10.77.$CLUSTER_ID.$_i pg${CLUSTER_ID}n$_i"; done
    } >"$CLUSTER_DIR/hosts"
    ip link add "pg${CLUSTER_ID}br" type bridge && ip link set "pg${CLUSTER_ID}br" up ||
        { cluster_say "cannot make bridge pg${CLUSTER_ID}br"; return 1; }
    cluster_node_up "pg${CLUSTER_ID}c" "10.77.$CLUSTER_ID.254" ||
        { cluster_say "cannot make the controller host"; return 1; }
    for _i in $(seq "$CLUSTER_K"); do
        cluster_node_up "pg${CLUSTER_ID}n$_i" "10.77.$CLUSTER_ID.$_i" ||
            { cluster_say "cannot make host $_i"; return 1; }
    done
    for _nd in "$CLUSTER_DIR"/nodes/*; do
        cluster_wait_file "$_nd/ready" "$(cat "$_nd/keeper.pid")" 30 ||
            { cluster_say "host $(basename "$_nd") did not come up:"; cat "$_nd/keeper.log" >&2; return 1; }
    done
    cluster_write_bin || return 1
    [ -z "${CLUSTER_RATE:-}" ] || cluster_rate "$CLUSTER_RATE" || return 1
    cluster_munged || return 1
    cluster_slurm_conf || return 1
    "$CLUSTER_ON" c /usr/sbin/slurmctld -c -i -f "$SLURM_CONF" \
        </dev/null >>"$CLUSTER_DIR/log/daemons.out" 2>&1 9>&- ||
        { cluster_say "cannot start slurmctld"; cluster_logs; return 1; }
    for _i in $(seq "$CLUSTER_K"); do
        cluster_slurmd "$_i" || { cluster_logs; return 1; }
    done
    cluster_wait_idle || { cluster_logs; return 1; }
    cluster_save
}

# cluster_save / cluster_attach DIR: the variables, for another shell.
cluster_save() {
    for _v in CLUSTER_ID CLUSTER_K CLUSTER_DIR CLUSTER_NODES CLUSTER_HOSTS CLUSTER_ADDRS \
        SLURM_CONF CLUSTER_ON CLUSTER_AGENT CLUSTER_MPIRUN; do
        eval "printf '%s=\"%s\"\n' $_v \"\$$_v\""
    done >"$CLUSTER_DIR/env"
}

cluster_attach() {
    [ -f "$1/env" ] || { cluster_say "no cluster in $1"; return 1; }
    . "$1/env"
    export CLUSTER_ID CLUSTER_K CLUSTER_DIR CLUSTER_NODES CLUSTER_HOSTS CLUSTER_ADDRS \
        SLURM_CONF CLUSTER_ON CLUSTER_AGENT CLUSTER_MPIRUN
}

# cluster_without_runtime_lines: stdin without the host runtimes' own
# diagnostics, for tests that compare a job's output: Open MPI's
# "[host:pid] framework:component: ..." lines (e.g. "[pg1n1:123] plm:rsh:
# Warning: setpgid(...) failed in parent with errno=Permission denied",
# printed when it pleases) and Slurm's "srun: ..." and "slurmstepd: ..."
# lines come from the launcher, not the job.  The job's lines stay, pmigate's
# "pmigate: ..." and the ranks' "[r] ..." and "[r+] ..." tags included
# (checked by tests/cluster/runtime_lines.sh).
cluster_without_runtime_lines() {
    grep -Ev '^\[[^] :]+:[0-9]+\] [A-Za-z0-9_]+(:[A-Za-z0-9_]+)*: |^(srun|slurmstepd): ' ||
        [ $? -eq 1 ] # (nothing left is no error)
}

# cluster_logs: the daemons' last lines, for a failure report.
cluster_logs() {
    for _f in "$CLUSTER_DIR"/log/* "$CLUSTER_DIR"/munge/munged.log; do
        [ -f "$_f" ] || continue
        echo "--- $_f" >&2
        tail -n 15 "$_f" >&2
    done
}

cluster_node_pids() {
    cluster_ns_pids "$(cluster_netns_ino "$(cluster_node_name "$1")")" "$(cluster_keeper "$1")"
}

cluster_kill_node() {
    cluster_kill_ns "$(cluster_node_name "$1")" "$(cluster_keeper "$1")"
}

cluster_restart_node() {
    _name=$(cluster_node_name "$1")
    cluster_slurmd "$1" || return 1
    # a host Slurm took for down comes back by itself (ReturnToService=2)
    # once its slurmd registers; one that was only "not responding" too
    cluster_wait_idle "$_name"
}

cluster_link() {
    ip link set "pg${CLUSTER_ID}v$1" "$2"
}

# cluster_rate RATE|none: tbf on every host's eth0 (egress).  The bucket
# holds 10 ms at RATE and at least 64 KiB (a TSO segment on veth).
cluster_rate() {
    for _i in $(seq "$CLUSTER_K"); do
        _ns=$(cluster_node_name "$_i")
        tc -n "$_ns" qdisc del dev eth0 root 2>/dev/null
        [ "$1" = none ] && continue
        _bits=$(cluster_rate_bits "$1") || { cluster_say "cannot read rate $1"; return 1; }
        _burst=$((_bits / 800))
        [ $_burst -ge 65536 ] || _burst=65536
        tc -n "$_ns" qdisc add dev eth0 root tbf rate "$1" burst "$_burst" latency 100ms ||
            { cluster_say "tc tbf rate $1 on $_ns failed"; return 1; }
    done
}

# cluster_rate_bits RATE: bits per second of a tc rate (1gbit, 100mbit,
# 500kbit).
cluster_rate_bits() {
    echo "$1" | awk '/^[0-9]+(gbit|mbit|kbit|bit)$/ {
        n = $0 + 0; u = $0; sub(/^[0-9]+/, "", u)
        m = (u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : 1
        printf "%d\n", n * m; ok = 1 } END { exit !ok }'
}
