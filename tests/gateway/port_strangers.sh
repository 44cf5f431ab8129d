#!/bin/sh
# Connections on PMIGATE_PMI_PORT that never say which rank they are cannot
# grow the gateway or wedge it: 1000 of them, each holding part of a large
# message, leave pmigate small (the oldest strangers are dropped, and a
# stranger may not buffer more than a handshake); when they exhaust its file
# descriptors, it neither spins on the listener nor stops serving once they
# are gone; one that stays silent is closed after the handshake timeout.
# Every job must still end cleanly.
. "$top_srcdir/tests/gateway/gw_lib.sh"
ATTACK="$top_builddir/tests/gateway/gw_attack"

"$PMIGATE" run -n 1 "$ATTACK" hoard 1000 >"$TMP/o" 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "1000 silent strangers"
hwm=$(awk '$3 == "hoard" { print $6 }' "$TMP/o")
[ -n "$hwm" ] || { cat "$TMP/o" >&2; fail "the hoarding rank did not report"; }
[ "$hwm" -lt 40000 ] || fail "1000 silent strangers: pmigate peaked at $hwm kB"
[ "$(wc -l <"$TMP/e")" -lt 20 ] || fail "1000 silent strangers: $(wc -l <"$TMP/e") lines on stderr"

# a connection that never says which rank it is gets closed after the
# handshake timeout, with a line saying so, and the job goes on
PMIGATE_HELLO_TIMEOUT=1 "$PMIGATE" run -n 1 "$ATTACK" silent 8000 >"$TMP/o" 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "a silent PMI_PORT connection"
expect_grep 'silent connection closed by the gateway' "$TMP/o" "a silent PMI_PORT connection"
expect_grep 'a PMI_PORT client did not say which rank it is within 1 s: closed' "$TMP/e" \
    "a silent PMI_PORT connection"

# 55 strangers more than the 64 descriptors pmigate may have
(ulimit -n 64 && exec "$PMIGATE" run -n 1 "$ATTACK" fd-hog 55 1000) >"$TMP/o" 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "descriptors exhausted by strangers"
expect_grep 'after the hog: served' "$TMP/o" "descriptors exhausted by strangers"
cpu=$(awk '$3 == "held" { print $6 }' "$TMP/o")
[ "$cpu" -lt 30 ] || fail "out of descriptors, pmigate used $cpu% of a CPU doing nothing"
exit 0
