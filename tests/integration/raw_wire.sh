#!/bin/sh
# Raw-wire conversations through a real `pmigate run` connection
# (tests/integration/pmi_script speaks scripted bytes on PMI_FD): every
# bad-input rule gets an error reply and leaves the connection usable;
# broken framing fails the rank with a clear message; PMI-2 quirks (left or
# right padded lengths, MPICH 4.0's off-by-6 junk, thrid) are tolerated.
. "$(dirname "$0")/hi_lib.sh"
skip_unless_built "$SCRIPT_PROG"
probe_handlers

K100=$(printf 'k%.0s' $(seq 100))
V2000=$(printf 'v%.0s' $(seq 2000))

# PMI-1: bad input answered, connection stays usable, hydra-compatible replies
cat >"$WORK/pmi1" <<SCRIPT
send1 cmd=init pmi_version=1 pmi_subversion=1
expect cmd=response_to_init rc=0
send1 cmd=bogus_command foo=bar
expect cmd=bogus_command_result rc=-1 msg=unsupported_command_bogus_command
send1 cmd=put kvsname=x key=$K100 value=v
expect cmd=put_result rc=-1 msg=key_too_long
send1 cmd=put kvsname=x key=k value=$V2000
expect cmd=put_result rc=-1 value_too_long
send1 cmd=put key
expect cmd=put_result rc=-1 malformed
send1 cmd=put kvsname=x key=mine value=visible
expect cmd=put_result rc=0 msg=success
send1 cmd=get kvsname=x key=mine
expect rc=0 value=visible\n
send1 cmd=get kvsname=x key=nokey
expect rc=-1 msg=key_nokey_not_found value=unknown\n
send1 cmd=get_universe_size
expect cmd=universe_size size=1
send1 cmd=get_maxes
expect kvsname_max=256 keylen_max=64 vallen_max=1024
send1 cmd=create_kvs
expect cmd=newkvs rc=-1 not_supported
send1 cmd=barrier_in
expect cmd=barrier_out
send1 cmd=finalize
expect cmd=finalize_ack
eof
SCRIPT
run_job 30 -n 1 "$SCRIPT_PROG" "$WORK/pmi1"
[ $rc -eq 0 ] || { fail "PMI-1 bad-input conversation (exit $rc)"; cat "$WORK/out"; }

# PMI-2: quirks and bad input
cat >"$WORK/pmi2" <<SCRIPT
send1 cmd=init pmi_version=2 pmi_subversion=0
expect cmd=response_to_init rc=0 pmi_version=2
send2l cmd=fullinit;pmirank=0;threaded=FALSE;
expect cmd=fullinit-response rc=0 pmi-version=2 pmi-subversion=0 rank=0 size=1
send2 cmd=job-getid;thrid=0xdeadbeef;
expect cmd=job-getid-response thrid=0xdeadbeef; rc=0
raw 20    cmd=job-getid;\x01\x02\x03\x04\x05\x06
expect cmd=job-getid-response rc=0
send2 cmd=frobnicate;thrid=T1;
expect frobnicate-response thrid=T1; unsupported_command
send2 cmd=kvs-put;key=$K100;value=v;
expect kvs-put-response key_too_long
reject rc=0;
send2 cmd=kvs-put;key=k;value=$V2000;
expect kvs-put-response value_too_long
send2 cmd=kvs-put;novalue;
expect kvs-put-response malformed
send2 cmd=kvs-get;key=before-fence;
expect kvs-get-response found=FALSE rc=0
send2 cmd=kvs-put;key=k;value=v;
expect kvs-put-response rc=0
send2 cmd=kvs-fence;
expect kvs-fence-response rc=0
send2 cmd=kvs-get;srcid=0;key=k;
expect found=TRUE value=v;
send2 cmd=job-connect;jobid=x;
expect job-connect-response kvscopy=FALSE no_such_job
reject rc=0;
send2 cmd=name-publish;name=s;port=p0;infokeycount=0;
expect name-publish-response rc=0
send2 cmd=name-publish;name=s;port=p1;infokeycount=0;
expect name-publish-response errmsg=
reject rc=0;
send2 cmd=name-lookup;name=s;infokeycount=0;
expect port=p0; value=p0; found=TRUE rc=0
send2 cmd=finalize;
expect finalize-response rc=0
eof
SCRIPT
run_job 30 -n 1 "$SCRIPT_PROG" "$WORK/pmi2"
[ $rc -eq 0 ] || { fail "PMI-2 quirk/bad-input conversation (exit $rc)"; cat "$WORK/out"; }

# The key segment is written only for a job with a process that reads it
# (pmigate's libraries say so in their handshake): MPICH's built-in PMI-1
# and Slurm's libpmi2 never look at it, so their fences skip it.
for who in "1 " "2 " "1 pmigate_shm=yes" "2 pmigate_shm=yes"; do
    proto=${who%% *} attr=${who#* }
    if [ "$proto" = 1 ]; then
        init="send1 cmd=init pmi_version=1 pmi_subversion=1 $attr"
        fence="send1 cmd=barrier_in
expect cmd=barrier_out"
        fin="send1 cmd=finalize
expect cmd=finalize_ack"
    else
        init="send1 cmd=init pmi_version=2 pmi_subversion=0
expect rc=0
send2l cmd=fullinit;pmirank=%r;threaded=FALSE;${attr:+$attr;}"
        fence="send2 cmd=kvs-fence;
expect kvs-fence-response rc=0"
        fin="send2 cmd=finalize;
expect finalize-response rc=0"
    fi
    cat >"$WORK/seg" <<SCRIPT
$init
expect rc=0
$fence
segment $([ -n "$attr" ] && echo yes || echo no)
$fin
SCRIPT
    run_job 30 -n 2 "$SCRIPT_PROG" "$WORK/seg"
    [ $rc -eq 0 ] || { fail "PMI-$proto init '${attr:-no reader}': segment after the fence (exit $rc)"; cat "$WORK/out"; }
done

# Over-long messages (a PMI-1 line over 4096 bytes, a PMI-2 message over
# 65542, a spawn block over 256 KiB) get an error reply naming their
# command, and exactly them is skipped: the next request is answered and
# the job succeeds.  The trace holds the messages' heads; its replay sends
# them whole again.
# traced_conversation WHAT NAME: runs script $WORK/NAME traced, then replays it
traced_conversation() {
    run_job 30 --trace "$WORK/$2.trace" -n 1 "$SCRIPT_PROG" "$WORK/$2"
    [ $rc -eq 0 ] || { fail "$1: error reply, connection goes on (exit $rc)"; cat "$WORK/out"; }
    "$PMIGATE" replay --fast --timeout 30 "$WORK/$2.trace" >"$WORK/replay" 2>&1 ||
        { fail "$1: the trace does not replay"; cat "$WORK/replay"; }
}
cat >"$WORK/long1" <<SCRIPT
send1 cmd=init pmi_version=1 pmi_subversion=1
expect cmd=response_to_init rc=0
long1 5000 cmd=put kvsname=x key=big value=v
expect cmd=put_result rc=-1 line_too_long
long1 300000 mcmd=spawn\nnprocs=1\nexecname=x\n
raw endcmd\n
expect cmd=spawn_result rc=-1 spawn_block_too_long
send1 cmd=put kvsname=x key=after value=ok
expect cmd=put_result rc=0
send1 cmd=get kvsname=x key=after
expect rc=0 value=ok\n
send1 cmd=finalize
expect cmd=finalize_ack
eof
SCRIPT
traced_conversation "over-long PMI-1 line and spawn block" long1
cat >"$WORK/long2" <<SCRIPT
send1 cmd=init pmi_version=2 pmi_subversion=0
expect cmd=response_to_init rc=0
send2l cmd=fullinit;pmirank=0;threaded=FALSE;
expect cmd=fullinit-response rc=0
long2 70000 cmd=kvs-put;thrid=0xb1g;key=big;value=v
expect kvs-put-response thrid=0xb1g; message_too_long
reject rc=0;
long2 999999 cmd=kvs-put;key=bigger;value=v
expect kvs-put-response message_too_long
send2 cmd=kvs-put;key=after;value=ok;
expect kvs-put-response rc=0
send2 cmd=kvs-fence;
expect kvs-fence-response rc=0
send2 cmd=kvs-get;srcid=0;key=after;
expect found=TRUE value=ok;
send2 cmd=kvs-get;srcid=0;key=big;
expect found=FALSE
send2 cmd=finalize;
expect finalize-response rc=0
eof
SCRIPT
traced_conversation "over-long PMI-2 messages" long2

# Broken framing: the rank is failed, the job ends non-zero, the message names it
printf 'send1 cmd=init pmi_version=2 pmi_subversion=0\nexpect rc=0\nraw 12a456cmd=kvs-fence;\neof\n' >"$WORK/frame"
run_job 30 -n 1 "$SCRIPT_PROG" "$WORK/frame"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { fail "broken PMI-2 framing: exit $rc"; cat "$WORK/out"; }
grep -q "rank 0" "$WORK/out" || { fail "broken framing: no message naming rank 0"; cat "$WORK/out"; }
finish
