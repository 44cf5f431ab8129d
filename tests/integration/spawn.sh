#!/bin/sh
# Dynamic jobs through `pmigate run` (spawn): Slurm's libpmi2
# PMI2_Job_Spawn with one preput from rank 0, 1 and 2 commands, maxprocs 2
# (and the same program on pmigate's libpmi2)
# (children check the preput before their first fence, spawned, appnum;
# the parent checks errcodes and jobid, job-connects and reads every
# child's key); [job.rank] tags; PMI-1 mcmd=spawn blocks over the raw wire
# exactly as MPICH 4.0 sends them (arguments with spaces, '=' and a tab,
# preput, info wdir), with a name published by the parent and looked up by
# the children; failures: a program that does not exist, a child that
# aborts or dies before finalize (the whole job ends with its code, the
# child named), the --max-procs cap, a host that is not this one.
. "$(dirname "$0")/hi_lib.sh"
skip_unless_built "$PROGS/pmi2_spawn" "$SCRIPT_PROG"
probe_handlers

# ---- PMI-2, Slurm's libpmi2 ----
# (2 x 20: more children than one launch batch of 16, started over several
# turns of the loop; every errcode 0 and every child's key read)
for shape in "2 20" "1 1" "1 2" "2 2"; do
    set -- $shape
    run_job 120 --tag-output -n 2 "$PROGS/pmi2_spawn" parent "$1" "$2"
    total=$(($1 * $2))
    [ $rc -eq 0 ] || { fail "spawn of $1 x $2 exited $rc"; cat "$WORK/out"; }
    grep -q "^\[0\] pmi2_spawn parent: ok jobid=kvs_[0-9]*_1 procs=$total" "$WORK/out" ||
        { fail "spawn of $1 x $2: the parent did not see every child's key"; cat "$WORK/out"; }
    [ "$(grep -c '^\[1\.[0-9]*\] pmi2_spawn child [0-9]* of '$total' appnum [0-9]*: ok' "$WORK/out")" -eq $total ] ||
        { fail "spawn of $1 x $2: not every child ok and tagged [1.rank]"; cat "$WORK/out"; }
done
[ "$(grep -c 'appnum 1: ok' "$WORK/out")" -eq 2 ] || fail "the second command's children are not appnum 1"

# the same program built against pmigate's libpmi2 (MPICH's signature)
OWN=$top_builddir/tests/clients/pmi2_spawn_own
run_job 60 --tag-output -n 2 "$OWN" parent 2 2
[ $rc -eq 0 ] && grep -q "^\[0\] pmi2_spawn parent: ok jobid=kvs_[0-9]*_1 procs=4" "$WORK/out" &&
    [ "$(grep -c '^\[1\.[0-3]\] pmi2_spawn child [0-3] of 4 appnum [01]: ok' "$WORK/out")" -eq 4 ] ||
    { fail "pmigate's libpmi2 PMI2_Job_Spawn of 2 x 2 (exit $rc)"; cat "$WORK/out"; }
run_job 30 -n 1 "$OWN" missing
[ $rc -eq 0 ] && grep -q "pmi2_spawn missing: refused" "$WORK/out" ||
    { fail "pmigate's libpmi2: a missing program did not fail with errcode ENOENT (exit $rc)"; cat "$WORK/out"; }

# pmigate's libpmix: PMIx_Spawn from rank 1 (argv, env, PMIX_WDIR; the
# children read PMIX_PARENT_ID = {parent's nspace, 1}), PMIx_Connect and a
# get of the children's keys, PMIx_Disconnect, PMIx_Spawn_nb, failures
PMIX_PROG=$top_builddir/tests/integration/pmix_spawn
run_job 60 --tag-output -n 2 "$PMIX_PROG"
[ $rc -eq 0 ] && grep -q "^\[1\] pmix_spawn parent: ok nspace=kvs_[0-9]*_1" "$WORK/out" &&
    [ "$(grep -c '^\[1\.[01]\] pmix_spawn child [01]: ok' "$WORK/out")" -eq 2 ] &&
    grep -q '^\[2\.0\] pmix_spawn child 0: ok' "$WORK/out" ||
    { fail "PMIx_Spawn / PMIx_Connect through libpmix (exit $rc)"; cat "$WORK/out"; }

# a name published by one spawned job is found from an unrelated one
run_job 60 -n 1 "$PROGS/pmi2_spawn" names
[ $rc -eq 0 ] && grep -q "pmi2_spawn names: ok" "$WORK/out" ||
    { fail "a name published by one job was not found from another (exit $rc)"; cat "$WORK/out"; }

# traces record spawned jobs: their ranks get rows after the root's
run_job 60 --trace "$WORK/spawn.trace" -n 2 "$PROGS/pmi2_spawn" parent 1 2
"$PMIGATE" trace timeline "$WORK/spawn.trace" -o "$WORK/spawn.svg" >"$WORK/tl" 2>&1 &&
    grep -q '>rank 3<\|rank 3' "$WORK/spawn.svg" &&
    "$PMIGATE" trace show "$WORK/spawn.trace" --rank 3 | grep -q 'spawner-jobid=kvs_[0-9]*_0' ||
    { fail "the trace does not show the spawned job's ranks as rows 2-3"; cat "$WORK/tl"; }

run_job 30 -n 2 "$PROGS/pmi2_spawn" missing
[ $rc -eq 0 ] && grep -q "pmi2_spawn missing: refused" "$WORK/out" &&
    grep -q "spawn refused: cannot run '/nonexistent/pmi2_spawn_missing'" "$WORK/out" ||
    { fail "spawning a missing program was not refused clearly (exit $rc)"; cat "$WORK/out"; }

run_job 30 -n 2 "$PROGS/pmi2_spawn" fail abort 0
[ $rc -eq 1 ] && grep -q "job 1: rank 0 aborted the job (code 1): pmi2_spawn child aborts" "$WORK/out" ||
    { fail "a child's abort did not end the whole job with its code (exit $rc)"; cat "$WORK/out"; }
run_job 30 -n 2 "$PROGS/pmi2_spawn" fail die 9
[ $rc -eq 9 ] && grep -q "job 1: rank 0 exited with status 9 before PMI finalize" "$WORK/out" ||
    { fail "a child dying before finalize did not end the job with its status, named (exit $rc)"; cat "$WORK/out"; }

run_job 30 --max-procs 3 -n 1 "$PROGS/pmi2_spawn" parent 2 2
[ $rc -ne 0 ] && grep -q "spawn refused: spawning 4 processes would exceed --max-procs 3 (0 spawned so far)" "$WORK/out" &&
    ! grep -q "pmi2_spawn child" "$WORK/out" ||
    { fail "the spawn cap was not enforced (exit $rc)"; cat "$WORK/out"; }

# a chain of children each spawning one more ends at the cap
run_job 60 --max-procs 4 -n 1 "$PROGS/pmi2_spawn" loop
[ $rc -eq 0 ] && [ "$(grep -c 'pmi2_spawn loop: spawned' "$WORK/out")" -eq 3 ] &&
    [ "$(grep -c 'pmi2_spawn loop: refused' "$WORK/out")" -eq 1 ] &&
    grep -q "would exceed --max-procs 4 (4 spawned so far)" "$WORK/out" ||
    { fail "a spawn chain did not stop at --max-procs 4 (exit $rc)"; cat "$WORK/out"; }

# ---- PMI-1, the exact mcmd blocks MPICH 4.0 sends (tests/captures/doc.cap) ----
for app in 0 1; do
    cat >"$WORK/child$app" <<SCRIPT
send1 cmd=init pmi_version=1 pmi_subversion=1
expect rc=0
send1 cmd=get_appnum
expect appnum=$app
send1 cmd=get_my_kvsname
expect kvsname=kvs_ _1
send1 cmd=get kvsname=x key=PARENT_ROOT_PORT_NAME
expect rc=0 value=tag#0\$port#99\$
send1 cmd=lookup_name service=pg_spawn_svc
expect port=tag#7\$svc\$ rc=0
send1 cmd=barrier_in
expect barrier_out
send1 cmd=finalize
expect finalize_ack
SCRIPT
done
SHOW='printf "<%s>" "$@"; echo " spawned=$PMI_SPAWNED parent=$PMI_PARENT_ID cwd=$(pwd)"; exec "$0"'
cat >"$WORK/parent" <<SCRIPT
send1 cmd=init pmi_version=1 pmi_subversion=1
expect rc=0
send1 cmd=publish_name service=pg_spawn_svc port=tag#7\$svc\$
expect rc=0
raw mcmd=spawn\nnprocs=2\nexecname=/bin/sh\ntotspawns=2\nspawnssofar=1\narg1=-c\narg2=$SHOW "\$1"\narg3=$SCRIPT_PROG\narg4=$WORK/child0\narg5=a b c\narg6=k=v\targ\nargcnt=6\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=tag#0\$port#99\$\ninfo_num=2\ninfo_key_0=wdir\ninfo_val_0=/tmp\ninfo_key_1=unknown_key\ninfo_val_1=x\nendcmd\n
raw mcmd=spawn\nnprocs=1\nexecname=$SCRIPT_PROG\ntotspawns=2\nspawnssofar=2\narg1=$WORK/child1\nargcnt=1\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=tag#0\$port#99\$\ninfo_num=0\nendcmd\n
expect cmd=spawn_result rc=0 errcodes=0,0,0
send1 cmd=barrier_in
expect barrier_out
send1 cmd=finalize
expect finalize_ack
SCRIPT
run_job 60 --tag-output -n 1 "$SCRIPT_PROG" "$WORK/parent"
[ $rc -eq 0 ] || { fail "PMI-1 mcmd spawn exited $rc"; cat "$WORK/out"; }
[ "$(grep -c "^\[1\.[01]\] <$WORK/child0><a b c><k=v	arg> spawned=1 parent=kvs_[0-9]*_0 cwd=/tmp$" "$WORK/out")" -eq 2 ] ||
    { fail "PMI-1 spawn: arguments, PMI_SPAWNED, PMI_PARENT_ID or wdir did not reach the children"; cat "$WORK/out"; }

# a relative program is found the way the child finds it: from its wdir
# (not pmigate's directory), and a refusal names it and the wdir
mkdir "$WORK/wd"
printf 'send1 cmd=init pmi_version=1 pmi_subversion=1\nexpect rc=0\nsend1 cmd=finalize\nexpect finalize_ack\n' >"$WORK/wdchild"
printf '#!/bin/sh\nexec "%s" "%s"\n' "$SCRIPT_PROG" "$WORK/wdchild" >"$WORK/wd/pg-wd-child"
cp "$WORK/wd/pg-wd-child" "$WORK/pg-here-only"
chmod +x "$WORK/wd/pg-wd-child" "$WORK/pg-here-only"
for prog in pg-wd-child pg-here-only; do
    [ $prog = pg-wd-child ] && want="rc=0 errcodes=0" || want="rc=-1"
    cat >"$WORK/wdparent" <<SCRIPT
send1 cmd=init pmi_version=1 pmi_subversion=1
expect rc=0
raw mcmd=spawn\nnprocs=1\nexecname=./$prog\ntotspawns=1\nspawnssofar=1\nargcnt=0\npreput_num=0\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=$WORK/wd\nendcmd\n
expect cmd=spawn_result $want
send1 cmd=finalize
expect finalize_ack
SCRIPT
    (cd "$WORK" && run_job 30 -n 1 "$SCRIPT_PROG" "$WORK/wdparent" && exit $rc)
    rc=$?
    [ $rc -eq 0 ] || { fail "spawn of ./$prog with wdir $WORK/wd (exit $rc)"; cat "$WORK/out"; }
done
grep -q "spawn refused: cannot run './pg-here-only' in wdir '$WORK/wd': No such file or directory" \
    "$WORK/out" || { fail "the refusal of ./pg-here-only does not name it and its wdir"; cat "$WORK/out"; }

cat >"$WORK/elsewhere" <<SCRIPT
send1 cmd=init pmi_version=1 pmi_subversion=1
expect rc=0
raw mcmd=spawn\nnprocs=1\nexecname=/bin/true\ntotspawns=1\nspawnssofar=1\nargcnt=0\npreput_num=0\ninfo_num=1\ninfo_key_0=host\ninfo_val_0=pg-no-such-host\nendcmd\n
expect cmd=spawn_result errcodes=
reject rc=0
send1 cmd=finalize
expect finalize_ack
SCRIPT
run_job 30 -n 1 "$SCRIPT_PROG" "$WORK/elsewhere"
[ $rc -eq 0 ] && grep -q "spawn refused: host 'pg-no-such-host' is not this node" "$WORK/out" ||
    { fail "a spawn on another host was not refused clearly (exit $rc)"; cat "$WORK/out"; }
finish
