#!/bin/sh
# A rank that sends requests without reading a reply must not make the
# gateway grow: it stops taking that rank's requests until the replies are
# read (the rank's own writes block), and loses nothing: every request is
# answered once the rank reads.  Over PMI_FD with 8 ranks at once, and over
# PMIGATE_PMI_PORT.  The ranks report pmigate's VmHWM; without the pause
# each connection grew to the 16 MiB cap and was then dropped.
. "$top_srcdir/tests/gateway/gw_lib.sh"
ATTACK="$top_builddir/tests/gateway/gw_attack"
HWM_MAX_KB=40000

# check_flood WHAT OUTPUT_FILE RANKS
check_flood() {
    [ "$(grep -c '^rank [0-9]* sent' "$2")" -eq "$3" ] || { cat "$2" >&2; fail "$1: not every rank reported"; }
    awk -v what="$1" -v max=$HWM_MAX_KB '
        $3 != "sent" { next }
        $4 != $6 { print "FAIL: " what ": rank " $2 " sent " $4 " requests, got " $6 " replies"; bad = 1 }
        $8 > max { print "FAIL: " what ": pmigate peaked at " $8 " kB (limit " max ")"; bad = 1 }
        END { exit bad }' "$2" >&2 || exit 1
}

"$PMIGATE" run -n 8 "$ATTACK" flood fd 1500 >"$TMP/o" 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "8 ranks flooding PMI_FD"
check_flood "8 ranks flooding PMI_FD" "$TMP/o" 8

"$PMIGATE" run -n 2 "$ATTACK" flood port 1500 >"$TMP/o" 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "2 ranks flooding PMI_PORT"
check_flood "2 ranks flooding PMI_PORT" "$TMP/o" 2
exit 0
