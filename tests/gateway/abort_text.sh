#!/bin/sh
# Text a rank sends is printed as pmigate's own words (an abort message)
# only with its control characters made visible: an ANSI escape cannot
# colour or clear the terminal, and a newline cannot start a line of its
# own, so a rank cannot forge a "pmigate: ..." line.  PMI-1 (line-framed:
# ESC) and PMI-2 (length-framed: newlines too); the PMIx abort goes through
# the same pg_job_log.
. "$top_srcdir/tests/gateway/gw_lib.sh"
SCRIPT_PROG="$top_builddir/tests/integration/pmi_script"
[ -x "$SCRIPT_PROG" ] || fail "$SCRIPT_PROG was not built"
ESC=$(printf '\033')

cat >"$TMP/pmi1" <<'EOF2'
send1 cmd=init pmi_version=1 pmi_subversion=1
expect rc=0
send1 cmd=abort exitcode=7 message=\x1b[2J\x1b[31mred\x1b[0m\x07\x7f
EOF2
"$PMIGATE" run -n 1 "$SCRIPT_PROG" "$TMP/pmi1" >"$TMP/out" 2>"$TMP/err"
expect_status 7 $? "PMI-1 abort with escapes"
expect_grep 'rank 0 aborted the job (code 7): \\x1b\[2J\\x1b\[31mred\\x1b\[0m\\x07\\x7f$' "$TMP/err" \
    "PMI-1 abort with escapes"
grep -q "$ESC" "$TMP/err" && fail "PMI-1 abort: an escape byte reached pmigate's stderr"

cat >"$TMP/pmi2" <<'EOF2'
send2 cmd=fullinit;pmirank=0;threaded=FALSE;
expect cmd=fullinit-response rc=0
send2 cmd=abort;isworld=TRUE;msg=boom\npmigate: rank 1 exited with status 0\x0d\tx\xc2\x9b1m é;
EOF2
"$PMIGATE" run -n 2 "$SCRIPT_PROG" "$TMP/pmi2" >"$TMP/out" 2>"$TMP/err"
expect_status 1 $? "PMI-2 abort with a newline"
expect_grep 'rank [01] aborted the job (code 1): boom\\npmigate: rank 1 exited with status 0\\r\\tx\\xc2\\x9b1m é$' \
    "$TMP/err" "PMI-2 abort with a newline"
grep -q '^pmigate: rank 1 exited with status 0' "$TMP/err" && { cat "$TMP/err" >&2; fail "a rank forged a pmigate line"; }
[ "$(grep -c '' "$TMP/err")" -eq "$(grep -c '^pmigate: ' "$TMP/err")" ] ||
    { cat "$TMP/err" >&2; fail "a line of pmigate's stderr does not start with 'pmigate: '"; }
exit 0
