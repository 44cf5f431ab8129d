#!/bin/sh
# No process can take over a rank through PMIGATE_PMI_PORT: while the real
# ranks hold back, a process of the same user that is not of the job
# connects and claims rank 1 (PMI-1 initack), rank 2 (PMI-2 fullinit),
# rank 3 (PMIx preamble) and rank 0 (a rank on PMI_FD, PMI-2 form), each
# the first claim of its rank.  Every claim is refused and logged, and the
# job then completes normally: ranks 1-3 are PMIx ranks that connect by
# PMI_PORT themselves, and every rank reads every other rank's real keys
# (tests/mixed checks each value).
. "$top_srcdir/tests/gateway/gw_lib.sh"
ATTACK="$top_builddir/tests/gateway/gw_attack"
MIX="$top_builddir/tests/mixed"
layout=pmi1,pmix,pmix,pmix
mkdir "$TMP/run"

# rank 0 waits too, so the claim of rank 0 comes before the real one speaks
hold='while [ ! -e "$0" ]; do sleep 0.05; done; exec "$@"'
TMPDIR="$TMP/run" "$PMIGATE" run --timeout 60 \
    -n 1 sh -c "$hold" "$TMP/go" "$MIX/mix_pmi1" $layout : \
    -n 3 sh -c "unset PMI_FD; $hold" "$TMP/go" "$MIX/mix_pmix" $layout \
    >"$TMP/o" 2>"$TMP/e" &
gate=$!
sock=
for _ in $(seq 200); do
    sock=$(ls "$TMP"/run/pmigate.*/pmi 2>/dev/null | head -n 1)
    [ -n "$sock" ] && break
    sleep 0.05
done
[ -n "$sock" ] || { kill -9 $gate; fail "pmigate opened no PMI_PORT socket"; }

# all at once, so that each is the first claim of its rank and none ends
# before the others have been judged
attackers=
for claim in "pmi1 1" "pmi2 2" "pmix 3" "pmi2 0"; do
    # shellcheck disable=SC2086 # two words on purpose
    PMIGATE_PMI_PORT=$sock "$ATTACK" impostor $claim >>"$TMP/attack" &
    attackers="$attackers $!"
done
refusals=0
for a in $attackers; do
    wait "$a" && refusals=$((refusals + 1))
done
touch "$TMP/go"
wait $gate
st=$?
[ $st -eq 0 ] || cat "$TMP/attack" "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "a job whose ranks were claimed by an impostor"
[ $refusals -eq 4 ] || { cat "$TMP/attack" >&2; fail "$((4 - refusals)) of 4 impostor claims were accepted"; }
[ "$(grep -c ': ok' "$TMP/o")" -eq 4 ] || { cat "$TMP/o" >&2; fail "the real ranks did not all finish"; }
for r in 1 2 3 0; do
    expect_grep "claimed rank $r on PMI_PORT: the process that connected (pid [0-9]*) is not rank $r" \
        "$TMP/e" "the refusal of the claim of rank $r is logged"
done
exit 0
