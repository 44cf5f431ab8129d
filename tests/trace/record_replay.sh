#!/bin/sh
# Record real jobs with `pmigate run --trace` — MPICH hello (PMI-1 inside
# libmpich) and Slurm-libpmi2 wire-up and feature programs (PMI-2) — check
# that the trace says what happened, and replay each against the current
# gateway without the application: every reply must match.
. "$top_srcdir/tests/trace/trace_lib.sh"

if have_prog mpi_hello; then
    record hello 2 mpi_hello
    head -1 "$TMP/hello.trace" | grep -q '^#pmigate-trace 1 kvsname=kvs_[0-9]*_0 size=2 start=20' ||
        fail "hello: bad header: $(head -1 "$TMP/hello.trace")"
    expect_grep "cmdline=$PMIGATE run --timeout 60 --trace" "$TMP/hello.trace" "hello header"
    # one line per message, both directions, greppable
    expect_grep ' 0 0 pmi1 C cmd=init pmi_version=1 pmi_subversion=1\n' "$TMP/hello.trace" "hello"
    expect_grep ' 1 1 pmi1 S cmd=barrier_out' "$TMP/hello.trace" "hello"
    expect_grep ' pmi1 S cmd=finalize_ack' "$TMP/hello.trace" "hello"
    replay_ok hello "$TMP/hello.trace"          # at the recorded pace
    replay_ok hello-fast "$TMP/hello.trace" --fast
    "$PMIGATE" trace show "$TMP/hello.trace" --rank 1 --cmd barrier_in >"$TMP/show" ||
        fail "trace show failed"
    expect_grep 'cmd=barrier_out' "$TMP/show" "show --cmd barrier_in"
    grep -q ' 0  *0  PMI-1' "$TMP/show" && fail "show --rank 1 printed rank 0"
    # --rank takes a plain decimal rank: anything else is a usage error
    for bad in -1 +1 1x ' 1' '' 1048577 99999999999; do
        "$PMIGATE" trace show "$TMP/hello.trace" --rank "$bad" >/dev/null 2>&1
        expect_status 2 $? "show --rank '$bad'"
    done
    "$PMIGATE" trace show "$TMP/hello.trace" --rank 1048576 >/dev/null ||
        fail "show --rank 1048576 (the largest rank) refused"
else
    skip_part "$PROGS/mpi_hello not built (MPICH)"
fi
if have_prog pmi2_wireup && have_prog pmi2_features; then
    record wireup 4 pmi2_wireup
    expect_grep ' pmi2 C cmd=init pmi_version=2 pmi_subversion=0\n' "$TMP/wireup.trace" "wireup"
    expect_grep 'cmd=fullinit;pmijobid=kvs_' "$TMP/wireup.trace" "wireup"
    expect_grep 'cmd=kvs-fence-response;rc=0;' "$TMP/wireup.trace" "wireup"
    replay_ok wireup "$TMP/wireup.trace" --fast
    record features 2 pmi2_features
    replay_ok features "$TMP/features.trace"
    "$PMIGATE" trace stats "$TMP/wireup.trace" >"$TMP/stats" || fail "trace stats failed"
    expect_grep 'kvs-fence' "$TMP/stats" "stats"
    expect_grep '4/4' "$TMP/stats" "stats: every rank in the fence"
else
    skip_part "$PROGS/pmi2_wireup and pmi2_features not built (Slurm's libpmi2)"
fi
# a trace holds every key and value of the job: only its owner reads it,
# whatever the umask, even when it replaces a file anyone could read
if have_prog pmi2_wireup; then
    : >"$TMP/private.trace"
    chmod 0644 "$TMP/private.trace"
    for t in new.trace private.trace; do
        (umask 022 && "$PMIGATE" run --trace "$TMP/$t" -n 2 "$PROGS/pmi2_wireup" >/dev/null 2>&1) ||
            fail "--trace $t: the job failed"
        mode=$(stat -c %a "$TMP/$t")
        [ "$mode" = 600 ] || fail "--trace $t: the trace is mode $mode, not 600"
        grep -q 'cmd=kvs-fence;' "$TMP/$t" || fail "--trace $t: nothing recorded"
    done
fi
# --verbose and --trace together: both get every message
if have_prog pmi2_wireup; then
    "$PMIGATE" run --verbose --trace "$TMP/v.trace" -n 2 "$PROGS/pmi2_wireup" >/dev/null 2>"$TMP/v.err" ||
        fail "--verbose --trace failed"
    expect_grep 'rank 1 cmd: ' "$TMP/v.err" "--verbose with --trace"
    [ "$(grep -c 'cmd=kvs-fence;' "$TMP/v.trace")" -eq 4 ] || fail "--verbose --trace: fences missing"
fi
exit 0
