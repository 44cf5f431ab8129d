#!/bin/sh
# No process can take over a rank through PMIGATE_PMI_PORT: while the real
# ranks hold back, a process of the same user that is not of the job
# connects and claims rank 1 (PMI-1 initack, PMI-2 fullinit, PMIx preamble),
# and rank 0 (a rank on PMI_FD) in PMI-2 form.  Every claim is refused and
# logged, and the job then completes normally: rank 1 is a PMIx rank that
# connects by PMI_PORT itself, and every rank reads every other rank's real
# keys (tests/mixed checks each value).
. "$top_srcdir/tests/gateway/gw_lib.sh"
ATTACK="$top_builddir/tests/gateway/gw_attack"
MIX="$top_builddir/tests/mixed"
layout=pmi1,pmix
mkdir "$TMP/run"

# rank 0 waits too, so the claim of rank 0 comes before the real one speaks
hold='while [ ! -e "$0" ]; do sleep 0.05; done; exec "$@"'
TMPDIR="$TMP/run" "$PMIGATE" run --timeout 60 \
    -n 1 sh -c "$hold" "$TMP/go" "$MIX/mix_pmi1" $layout : \
    -n 1 sh -c "unset PMI_FD; $hold" "$TMP/go" "$MIX/mix_pmix" $layout \
    >"$TMP/o" 2>"$TMP/e" &
gate=$!
sock=
for _ in $(seq 200); do
    sock=$(ls "$TMP"/run/pmigate.*/pmi 2>/dev/null | head -n 1)
    [ -n "$sock" ] && break
    sleep 0.05
done
[ -n "$sock" ] || { kill -9 $gate; fail "pmigate opened no PMI_PORT socket"; }

refusals=0
for claim in "pmi1 1" "pmi2 1" "pmix 1" "pmi2 0"; do
    # shellcheck disable=SC2086 # two words on purpose
    if PMIGATE_PMI_PORT=$sock "$ATTACK" impostor $claim >>"$TMP/attack"; then
        refusals=$((refusals + 1))
    fi
done
touch "$TMP/go"
wait $gate
st=$?
[ $st -eq 0 ] || cat "$TMP/attack" "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "a job whose ranks were claimed by an impostor"
[ $refusals -eq 4 ] || { cat "$TMP/attack" >&2; fail "$((4 - refusals)) of 4 impostor claims were accepted"; }
[ "$(grep -c ': ok' "$TMP/o")" -eq 2 ] || { cat "$TMP/o" >&2; fail "the real ranks did not both finish"; }
expect_grep 'claimed rank 1 on PMI_PORT: the process that connected (pid [0-9]*) is not rank 1' \
    "$TMP/e" "the refusal is logged"
expect_grep 'claimed rank 0 on PMI_PORT' "$TMP/e" "the claim of a PMI_FD rank is refused"
exit 0
