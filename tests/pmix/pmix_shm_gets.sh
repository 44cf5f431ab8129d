#!/bin/sh
# libpmix's gets after a whole-job fence come from the node segment
# (docs/shm-segment.md) and give what the gateway would: tests/pmix/
# pmix_shm_gets checks the values (typed, scopes, a re-put between two
# fences seen fresh, RANK_UNDEF, refresh-cache, a commit after the fence),
# and the gateway's trace shows which gets still reached it:
#   early- n (never fenced), card- n-1 (only the card committed again after
#   the fence), num-/loc- 0, rem- n(n-1) (REMOTE values are not the node's),
#   rf- n (refresh asks first), shared 1 (rank 0 without a rank, after the
#   late commit).
# With PMIGATE_SHM pointing at nothing the same program is right through the
# socket alone.
. "$(dirname "$0")/../lib.sh"
PROG=$top_builddir/tests/pmix/pmix_shm_gets
N=4
make_workdir pg_pmix_shm
skip_unless_built "$PMIGATE" "$PROG"
mkdir "$WORK/tmp"

# gets TRACE PREFIX: PMIx gets of keys starting with PREFIX that reached the gateway
gets() {
    "$PMIGATE" trace show "$1" --cmd get --full | grep ' -> ' | grep -c "key=\"$2"
}

# job LABEL TRACE [env...]: runs the program traced, with a private TMPDIR
job() {
    label=$1 trace=$2
    shift 2
    TMPDIR=$WORK/tmp run_job 120 -n $N --trace "$trace" env "$@" "$PROG"
    if [ $rc -ne 0 ] || [ "$(grep -c '^rank [0-9]* ok$' "$WORK/out")" -ne $N ]; then
        cat "$WORK/out"
        fail "$label: exit $rc"
        return 1
    fi
    return 0
}

if job "with the segment" "$WORK/seg.trace"; then
    want="early-=$N card-=$((N - 1)) num-=0 loc-=0 rem-=$((N * (N - 1))) rf-=$N shared=1"
    got=""
    for k in early- card- num- loc- rem- rf- shared; do
        got="$got${got:+ }$k=$(gets "$WORK/seg.trace" $k)"
    done
    if [ "$got" = "$want" ]; then
        pass "values right; gets that reached the gateway: $got"
    else
        fail "gets that reached the gateway: $got (want $want)"
    fi
fi

if job "PMIGATE_SHM pointing at nothing" "$WORK/none.trace" PMIGATE_SHM="$WORK/missing"; then
    num=$(gets "$WORK/none.trace" num-)
    if [ "$num" -eq $((N * (N - 1))) ]; then
        pass "no segment: values right through the socket ($num typed gets)"
    else
        fail "no segment: $num typed gets reached the gateway (want $((N * (N - 1))))"
    fi
fi

left=$(find "$WORK/tmp" -mindepth 1 | head -n 3)
[ -z "$left" ] && pass "no segment directory is left behind" || fail "left behind: $left"
finish
