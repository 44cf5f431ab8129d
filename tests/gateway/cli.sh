#!/bin/sh
# pmigate's command line: version, help, info, usage errors (exit 2) and a
# program that does not exist (exit 127, nothing launched) or cannot be
# executed (126), and one whose exec fails in the child (127).
. "$top_srcdir/tests/gateway/gw_lib.sh"

"$PMIGATE" --version >"$TMP/v" || fail "--version failed"
expect_grep '^pmigate [0-9]' "$TMP/v" "--version"
expect_grep '^libevent .*built against' "$TMP/v" "--version"
expect_grep '^hwloc API .*built against' "$TMP/v" "--version"

"$PMIGATE" --help >"$TMP/h" || fail "--help failed"
expect_grep 'pmigate run' "$TMP/h" "--help"

"$PMIGATE" info >"$TMP/i" || fail "info failed"
expect_grep 'keylen_max 64, vallen_max 1024, kvsname_max 256' "$TMP/i" "info"
expect_grep 'topology (hwloc): [0-9]* package.*[0-9]* core.*[0-9]* PU' "$TMP/i" "info"

"$PMIGATE" run --help >"$TMP/rh" || fail "run --help failed"
expect_grep '--bind-to core|socket|none' "$TMP/rh" "run --help"
expect_grep 'Exit status' "$TMP/rh" "run --help"

"$PMIGATE" >/dev/null 2>&1
expect_status 2 $? "no command"
"$PMIGATE" frobnicate 2>"$TMP/e"
expect_status 2 $? "unknown command"
expect_grep "unknown command 'frobnicate'" "$TMP/e" "unknown command"
"$PMIGATE" run -n 0 true 2>"$TMP/e"
expect_status 2 $? "-n 0"
expect_grep 'positive number of ranks' "$TMP/e" "-n 0"
"$PMIGATE" run --bind-to numa true 2>"$TMP/e"
expect_status 2 $? "bad --bind-to"
"$PMIGATE" run -n 2 2>"$TMP/e"
expect_status 2 $? "no program"
expect_grep 'missing program' "$TMP/e" "no program"

start=$(now_ms)
"$PMIGATE" run -n 4 ./no/such/program 2>"$TMP/e"
expect_status 127 $? "program not found"
expect_grep "cannot run './no/such/program'" "$TMP/e" "program not found"
"$PMIGATE" run -n 2 no-such-command-gwtest 2>"$TMP/e"
expect_status 127 $? "command not in PATH"
expect_grep 'command not found' "$TMP/e" "command not in PATH"
"$PMIGATE" run -n 1 "$top_srcdir/tests/gateway/gw_lib.sh" 2>"$TMP/e"
expect_status 126 $? "not executable"
# passes the checks before launch but fails in exec (its interpreter is
# missing): the rank's exec error is reported and the job fails with 127
printf '#!/no/such/interp\necho unreachable\n' >"$TMP/badinterp"
chmod +x "$TMP/badinterp"
"$PMIGATE" run -n 3 "$TMP/badinterp" >"$TMP/o" 2>"$TMP/e"
expect_status 127 $? "exec failure"
expect_grep "cannot start rank [0-2] .*No such file or directory" "$TMP/e" "exec failure"
[ ! -s "$TMP/o" ] || fail "exec failure: a rank printed something"
[ $(($(now_ms) - start)) -lt 5000 ] || fail "launch failures took too long"
exit 0
