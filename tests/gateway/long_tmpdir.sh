#!/bin/sh
# A $TMPDIR too long for a unix socket's path (107 bytes) still runs jobs:
# the PMI_PORT socket stays in the job's directory and is reached through a
# short alias (/proc/<pmigate>/fd/N), and nothing is left behind.
. "$top_srcdir/tests/gateway/gw_lib.sh"
long=$TMP/$(printf 'a%.0s' $(seq 60))/$(printf 'b%.0s' $(seq 60))
mkdir -p "$long"
[ ${#long} -ge 120 ] || fail "the test's TMPDIR is only ${#long} bytes"

TMPDIR=$long "$PMIGATE" run -n 2 "$PROG" port-finalize >"$TMP/o" 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "ranks that connect to PMI_PORT under a $(printf %s "$long" | wc -c)-byte TMPDIR"
TMPDIR=$long "$PMIGATE" run -n 2 "$PROG" pmi -1 finalize >"$TMP/o" 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "ranks on PMI_FD under a long TMPDIR"
left=$(ls -A "$long")
[ -z "$left" ] || fail "a job under a long TMPDIR left $left"
exit 0
