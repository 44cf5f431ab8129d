#!/bin/sh
# Exit status of pmigate run: 0 when every rank exits 0, the first non-zero
# rank status otherwise, 128+N for a rank killed by signal N.
. "$top_srcdir/tests/gateway/gw_lib.sh"

"$PMIGATE" run -n 4 "$PROG" exit 0
expect_status 0 $? "all ranks exit 0"

"$PMIGATE" run -n 1 "$PROG" exit 3 2>"$TMP/e"
expect_status 3 $? "one rank exits 3"
expect_grep 'rank 0 exited with status 3' "$TMP/e" "one rank exits 3"

m=$(marker exit)
"$PMIGATE" run -n 3 "$PROG" rank-exit 2 5 "$m" 2>"$TMP/e"
expect_status 5 $? "rank 2 exits 5 while the others sleep"
expect_grep 'rank 2 exited with status 5' "$TMP/e" "rank 2 exits 5"
no_orphans "$m"

m=$(marker sig)
"$PMIGATE" run -n 2 "$PROG" rank-signal 1 11 "$m" 2>"$TMP/e"
expect_status 139 $? "rank killed by SIGSEGV"
expect_grep 'rank 1 killed by signal 11' "$TMP/e" "rank killed by SIGSEGV"
no_orphans "$m"
exit 0
