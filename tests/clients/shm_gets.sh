#!/bin/sh
# shm_gets.sh: after a fence, pmigate's client libraries answer gets from
# the node's shared key segment (docs/shm-segment.md) without asking the
# gateway -- and stay correct through the socket when the segment is
# missing or damaged.  Evidence comes from the gateway's own trace: the
# requests that reached it.
#   - pmi2_wireup (Slurm-linked, our libpmi2 swapped in) puts a card per
#     rank, fences, gets and checks all N cards, fences, rank 0 gets N
#     reports: with the segment no kvs-get reaches the gateway; with
#     PMIGATE_SHM pointing at nothing or at garbage all N*N+N do, and the
#     cards are still right.
#   - pmi1_api (libpmi): its gets of the other ranks' keys after the
#     barrier never reach the gateway; a key nobody put still does (and
#     fails), as do job attributes.
#   - the segment's private directory is gone when the job ends.
. "$top_srcdir/tests/clients/clients_lib.sh"
wireup=$top_builddir/tests/progs/pmi2_wireup
pmi1=$top_builddir/tests/clients/pmi1_api
ours=$top_builddir/pmi2/.libs
n=8

if ! pmigate_ready; then
    fail "pmigate run -n 1 /bin/true does not work"
    finish
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/pg-shm-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp"

# requests TRACE CMD [PATTERN]: how many CMD requests reached the gateway.
requests() {
    "$PMIGATE" trace show "$1" --cmd "$2" --full | grep ' -> ' | grep -c -- "${3:-cmd=$2}"
}

# job LABEL TRACE LAUNCH...: runs a traced job with a private TMPDIR.
job() {
    label=$1 trace=$2
    shift 2
    out=$(TMPDIR=$work/tmp timeout 120 "$PMIGATE" run --trace "$trace" "$@" 2>&1)
    rc=$?
    [ "$rc" -eq 0 ] || { fail "$label: exit $rc"; printf '%s\n' "$out" | head -n 10; return 1; }
    return 0
}

if [ -x "$wireup" ]; then
    if job "pmi2_wireup -n $n with the segment" "$work/seg.trace" -n $n \
        env LD_LIBRARY_PATH="$ours" "$wireup"; then
        gets=$(requests "$work/seg.trace" kvs-get)
        fences=$(requests "$work/seg.trace" kvs-fence)
        if printf '%s\n' "$out" | grep -q "^wireup n=$n " && [ "$gets" -eq 0 ] &&
            [ "$fences" -eq $((2 * n)) ]; then
            pass "pmi2_wireup -n $n: cards right, 0 kvs-get reached the gateway ($fences fences)"
        else
            fail "pmi2_wireup -n $n: $gets kvs-get reached the gateway (want 0), $fences fences"
        fi
    fi
    printf 'not a segment' >"$work/garbage"
    for shm in "$work/missing" "$work/garbage"; do
        if job "pmi2_wireup -n $n with PMIGATE_SHM=$shm" "$work/fallback.trace" -n $n \
            env LD_LIBRARY_PATH="$ours" PMIGATE_SHM="$shm" "$wireup"; then
            gets=$(requests "$work/fallback.trace" kvs-get)
            if printf '%s\n' "$out" | grep -q "^wireup n=$n " && [ "$gets" -eq $((n * n + n)) ]; then
                pass "segment $(basename "$shm"): cards right through the socket ($gets kvs-get)"
            else
                fail "segment $(basename "$shm"): $gets kvs-get (want $((n * n + n)))"
            fi
        fi
    done
else
    skip_part "tests/progs/pmi2_wireup not built (Slurm's libpmi2-0-dev missing)"
fi

if job "pmi1_api -n 4 with the segment" "$work/pmi1.trace" -n 4 \
    "$pmi1"; then
    oks=$(printf '%s\n' "$out" | grep -c ': ok')
    keys=$(requests "$work/pmi1.trace" get "key=pmi1-key-")
    missing=$(requests "$work/pmi1.trace" get "key=pmi1-no-such-key")
    if [ "$oks" -eq 4 ] && [ "$keys" -eq 0 ] && [ "$missing" -eq 4 ]; then
        pass "pmi1_api -n 4: gets after the barrier served locally, misses asked ($missing)"
    else
        fail "pmi1_api -n 4: $oks ok, $keys key gets and $missing misses reached the gateway (want 4, 0, 4)"
    fi
fi
if job "pmi1_api -n 4 without a segment" "$work/pmi1-none.trace" -n 4 \
    env PMIGATE_SHM="$work/missing" "$pmi1"; then
    oks=$(printf '%s\n' "$out" | grep -c ': ok')
    keys=$(requests "$work/pmi1-none.trace" get "key=pmi1-key-")
    if [ "$oks" -eq 4 ] && [ "$keys" -gt 0 ]; then
        pass "pmi1_api -n 4, segment missing: right through the socket ($keys key gets)"
    else
        fail "pmi1_api -n 4, segment missing: $oks ok, $keys key gets"
    fi
fi

left=$(find "$work/tmp" -mindepth 1 | head -n 3)
if [ -z "$left" ]; then
    pass "no segment directory is left behind"
else
    fail "left behind: $left"
fi
finish
