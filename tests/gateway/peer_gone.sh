#!/bin/sh
# A rank that is gone before its replies can be written (it closed PMI_FD
# right after sending) is judged by how it ended, not by the failed write:
# finalize then exit 0 is a clean end even when the finalize ack cannot be
# delivered; requests then exit 5 ends the job with 5 and names the rank's
# exit.  gw_attack stops pmigate while it sends, so every run meets the
# closed peer.
. "$top_srcdir/tests/gateway/gw_lib.sh"
ATTACK="$top_builddir/tests/gateway/gw_attack"

"$PMIGATE" run -n 2 "$ATTACK" fin-exit 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/e" >&2
expect_status 0 $st "finalize, then exit before reading the ack"

"$PMIGATE" run -n 2 "$ATTACK" spam-exit 2000 5 2>"$TMP/e"
st=$?
expect_status 5 $st "2000 requests, then exit 5 before reading a reply"
expect_grep 'rank [01] exited with status 5 before PMI finalize' "$TMP/e" \
    "2000 requests, then exit 5"
exit 0
