#!/bin/sh
# A rank that dies brings the whole job down quickly, with a message naming
# the rank and its fate, and leaves no process behind; --timeout does the
# same with status 124; ranks that ignore SIGTERM get SIGKILL.
. "$top_srcdir/tests/gateway/gw_lib.sh"

m=$(marker kill9)
start=$(now_ms)
"$PMIGATE" run -n 4 "$PROG" rank-signal 3 9 "$m" 2>"$TMP/e"
st=$?
took=$(($(now_ms) - start))
expect_status 137 $st "rank 3 SIGKILLed"
expect_grep 'rank 3 killed by signal 9 (Killed)' "$TMP/e" "rank 3 SIGKILLed"
# the survivors sleep 60 s: finishing at all shows they were killed; well
# under the sleep shows it was prompt (generous bound, not a benchmark)
[ "$took" -lt 10000 ] || fail "job took ${took} ms to come down after a rank died"
no_orphans "$m"

m=$(marker timeout)
start=$(now_ms)
"$PMIGATE" run -n 2 --timeout 1 "$PROG" sleep 60 "$m" 2>"$TMP/e"
st=$?
took=$(($(now_ms) - start))
expect_status 124 $st "--timeout"
expect_grep 'timed out after 1 s' "$TMP/e" "--timeout"
[ "$took" -ge 900 ] || fail "--timeout 1 fired after ${took} ms"
[ "$took" -lt 10000 ] || fail "--timeout 1 took ${took} ms"
no_orphans "$m"

m=$(marker stubborn)
"$PMIGATE" run -n 2 --timeout 0.5 "$PROG" ignore-term "$m" 2>"$TMP/e"
expect_status 124 $? "ranks ignoring SIGTERM"
no_orphans "$m"

m=$(marker grandchild)
"$PMIGATE" run -n 2 --timeout 0.5 "$PROG" grandchild "$m" 2>"$TMP/e"
expect_status 124 $? "ranks with children"
no_orphans "$m"

# a PMI_PORT rank that exits while its child keeps the connection open: the
# connection is still open when the job ends, and is freed once
m=$(marker portchild)
"$PMIGATE" run -n 2 "$PROG" port-exit0 "$m" 2>"$TMP/e"
expect_status 1 $? "a PMI_PORT rank whose child holds its connection"
expect_grep 'exited with status 0 before PMI finalize' "$TMP/e" "PMI_PORT rank exit"
no_orphans "$m"
exit 0
