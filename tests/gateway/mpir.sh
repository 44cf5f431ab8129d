#!/bin/sh
# MPIR, the way a parallel debugger finds the ranks of `pmigate run`
# (docs/user-guide.md, "Debuggers and tools"), driven as one drives it:
# gdb sets MPIR_being_debugged before pmigate runs and stops in
# MPIR_Breakpoint.  There the table lists every rank in rank order (pid,
# host, program) while each of them is alive and held (pmigate, their PMI
# server, is stopped); once released the job ends well.  A spawned job's
# ranks are appended with a breakpoint of their own, an abort stops there
# with MPIR_DEBUG_ABORTING and its reason, and without the flag pmigate
# never stops there.
. "$top_srcdir/tests/gateway/gw_lib.sh"

command -v gdb >/dev/null || skip "gdb is not installed"
[ -x "$PROG" ] || fail "$PROG was not built"
# a container may forbid ptrace: then nothing here can run
gdb -batch -nx -ex starti --args /bin/true 2>&1 | grep -q 'Program stopped' ||
    skip "gdb cannot start a process here (ptrace not permitted?)"

# run_gdb CMDS OUT ARGS...: pmigate ARGS under gdb with the commands file CMDS
# (after starti); gdb's output in OUT.
run_gdb() {
    cmds=$1 out=$2
    shift 2
    timeout 120 gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' -ex starti \
        -x "$cmds" --args "$PMIGATE" "$@" >"$out" 2>&1
}

# check_held TABLE WANT: run by gdb while pmigate is stopped in
# MPIR_Breakpoint.  TABLE has "pid host exe" lines; each must be a live
# process running exe, and still be so a moment later (its PMI init waits
# for pmigate); WANT lines in all, line i being rank i (its PMI_RANK).
cat >"$TMP/check_held" <<'EOF2'
table=$1 want=$2 prog=$3
n=$(grep -c '' "$table")
[ "$n" -eq "$want" ] || { echo "HELD-FAIL: $n entries, expected $want"; exit 0; }
sleep 0.5
i=0
while read -r pid host exe; do
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "PMI_RANK=$i" ||
        { echo "HELD-FAIL: entry $i (pid $pid) is not rank $i"; exit 0; }
    i=$((i + 1))
    [ "$exe" = "$prog" ] || { echo "HELD-FAIL: pid $pid: executable $exe, expected $prog"; exit 0; }
    [ "$host" = "$(hostname)" ] || { echo "HELD-FAIL: pid $pid: host $host"; exit 0; }
    [ "$(readlink "/proc/$pid/exe")" = "$prog" ] ||
        { echo "HELD-FAIL: pid $pid does not run $prog"; exit 0; }
    state=$(sed 's/.*) //' "/proc/$pid/stat" | cut -c1)
    [ "$state" != Z ] || { echo "HELD-FAIL: pid $pid has ended (not held)"; exit 0; }
done <"$table"
echo "HELD-OK $n"
EOF2

prog_path=$(readlink -f "$PROG")

# 1. three ranks: the table at the breakpoint, the ranks held there, exit 0
cat >"$TMP/cmds" <<EOF2
set var MPIR_being_debugged = 1
break MPIR_Breakpoint
continue
printf "MPIR size=%d state=%d\n", MPIR_proctable_size, MPIR_debug_state
set \$i = 0
while \$i < MPIR_proctable_size
  eval "shell echo %d %s %s >>$TMP/table", MPIR_proctable[\$i].pid, MPIR_proctable[\$i].host_name, MPIR_proctable[\$i].executable_name
  set \$i = \$i + 1
end
shell sh $TMP/check_held $TMP/table 3 $prog_path
delete
continue
printf "MPIR exit=%d\n", \$_exitcode
EOF2
mark=$(marker held)
run_gdb "$TMP/cmds" "$TMP/out" run -n 3 "$PROG" pmi -1 finalize "$mark"
expect_grep '^MPIR size=3 state=1$' "$TMP/out" "the table at the breakpoint"
expect_grep '^HELD-OK 3$' "$TMP/out" "the ranks while pmigate is stopped"
expect_grep '^MPIR exit=0$' "$TMP/out" "the job once released"
no_orphans "$mark"

# 2. an abort: the spawned state first, then MPIR_DEBUG_ABORTING and why
cat >"$TMP/cmds" <<'EOF2'
set var MPIR_being_debugged = 1
break MPIR_Breakpoint
commands
  silent
  printf "MPIR size=%d state=%d\n", MPIR_proctable_size, MPIR_debug_state
  if MPIR_debug_state == 2
    printf "MPIR why=%s\n", MPIR_debug_abort_string
  end
  continue
end
continue
printf "MPIR exit=%d\n", $_exitcode
EOF2
mark=$(marker abort)
run_gdb "$TMP/cmds" "$TMP/out" run -n 2 "$PROG" pmi 1 abort:7 "$mark"
expect_grep '^MPIR size=2 state=1$' "$TMP/out" "an aborting job's launch"
expect_grep '^MPIR size=2 state=2$' "$TMP/out" "the abort"
expect_grep '^MPIR why=rank 1 aborted the job (exit status 7)$' "$TMP/out" "the abort's reason"
expect_grep '^MPIR exit=7$' "$TMP/out" "the aborted job's status"
no_orphans "$mark"

# 3. a spawned job: its ranks are appended, with a breakpoint of their own
spawn_prog="$top_builddir/tests/progs/pmi2_spawn"
if [ ! -x "$spawn_prog" ]; then
    skip_part "$spawn_prog was not built (Slurm's libpmi2): no spawn under MPIR"
else
    spawn_path=$(readlink -f "$spawn_prog")
    # each stop: the table in $TMP/spawnN, every entry alive then
    cat >"$TMP/check_alive" <<'EOF2'
while read -r pid host exe; do
    [ "$(readlink "/proc/$pid/exe")" = "$exe" ] || echo "ALIVE-FAIL: pid $pid does not run $exe"
done <"$1"
EOF2
    cat >"$TMP/cmds" <<EOF2
set var MPIR_being_debugged = 1
set \$stop = 0
break MPIR_Breakpoint
commands
  silent
  set \$stop = \$stop + 1
  printf "MPIR stop=%d size=%d state=%d\n", \$stop, MPIR_proctable_size, MPIR_debug_state
  set \$i = 0
  while \$i < MPIR_proctable_size
    eval "shell echo %d %s %s >>$TMP/spawn%d", MPIR_proctable[\$i].pid, MPIR_proctable[\$i].host_name, MPIR_proctable[\$i].executable_name, \$stop
    set \$i = \$i + 1
  end
  eval "shell sh $TMP/check_alive $TMP/spawn%d", \$stop
  continue
end
continue
printf "MPIR exit=%d\n", \$_exitcode
EOF2
    run_gdb "$TMP/cmds" "$TMP/out" run -n 2 "$spawn_path" parent 1 2
    expect_grep '^MPIR stop=1 size=2 state=1$' "$TMP/out" "the spawning job's launch"
    expect_grep '^MPIR stop=2 size=4 state=1$' "$TMP/out" "the spawned job's launch"
    expect_grep '^MPIR exit=0$' "$TMP/out" "a job that spawned, under MPIR"
    grep -q 'ALIVE-FAIL' "$TMP/out" && { cat "$TMP/out" >&2; fail "a listed rank was not running"; }
    head -2 "$TMP/spawn2" | cmp -s - "$TMP/spawn1" ||
        { cat "$TMP/spawn1" "$TMP/spawn2" >&2; fail "the spawned job's ranks did not come after the first"; }
    [ "$(cut -d' ' -f1 "$TMP/spawn2" | sort -u | grep -c '')" -eq 4 ] ||
        { cat "$TMP/spawn2" >&2; fail "the table lists a process twice"; }
fi

# 4. no debugger's flag: pmigate never stops in MPIR_Breakpoint
cat >"$TMP/cmds" <<'EOF2'
break MPIR_Breakpoint
commands
  silent
  printf "MPIR stopped\n"
  continue
end
continue
printf "MPIR exit=%d\n", $_exitcode
EOF2
run_gdb "$TMP/cmds" "$TMP/out" run -n 2 "$PROG" pmi -1 finalize
expect_grep '^MPIR exit=0$' "$TMP/out" "the job without the flag"
if grep -q '^MPIR stopped' "$TMP/out"; then
    cat "$TMP/out" >&2
    fail "pmigate stopped in MPIR_Breakpoint without MPIR_being_debugged"
fi
echo "MPIR: the table, the hold, spawned jobs, the abort; nothing without the flag"
