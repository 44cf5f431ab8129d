#!/bin/sh
# Output forwarding: whole lines only (pieces written slowly by several ranks
# never interleave), optional [rank] tags, a partial last line flushed at
# exit, stderr kept apart, stdin delivered to rank 0 only.
. "$top_srcdir/tests/gateway/gw_lib.sh"

"$PMIGATE" run -n 3 --tag-output "$PROG" slow-lines 20 >"$TMP/out" || fail "slow-lines"
[ "$(wc -l <"$TMP/out")" -eq 60 ] || { cat "$TMP/out"; fail "expected 60 lines"; }
bad=$(grep -cvE '^\[([0-2])\] rank \1 line [0-9]+ end$' "$TMP/out")
[ "$bad" -eq 0 ] || { cat "$TMP/out"; fail "$bad lines are torn or mis-tagged"; }

"$PMIGATE" run -n 2 "$PROG" slow-lines 10 >"$TMP/out" || fail "untagged slow-lines"
bad=$(grep -cvE '^rank [01] line [0-9]+ end$' "$TMP/out")
[ "$bad" -eq 0 ] || { cat "$TMP/out"; fail "$bad untagged lines are torn"; }

"$PMIGATE" run -n 1 "$PROG" partial "no newline" >"$TMP/out" || fail "partial"
[ "$(cat "$TMP/out")" = "no newline" ] || fail "partial last line lost: '$(cat "$TMP/out")'"
"$PMIGATE" run -n 1 --tag-output "$PROG" partial "tail" >"$TMP/out" || fail "tagged partial"
[ "$(cat "$TMP/out")" = "[0] tail" ] || fail "tagged partial line: '$(cat "$TMP/out")'"

"$PMIGATE" run -n 1 sh -c 'echo out; echo err >&2' >"$TMP/out" 2>"$TMP/err" || fail "stderr"
[ "$(cat "$TMP/out")" = "out" ] && [ "$(cat "$TMP/err")" = "err" ] || fail "stdout/stderr mixed"

# stdin through a pipe (forwarded) and from a file (inherited)
seq 1 5000 >"$TMP/in"
cat "$TMP/in" | "$PMIGATE" run -n 2 --tag-output "$PROG" cat >"$TMP/out" || fail "stdin pipe"
[ "$(grep -c '^\[0\] ' "$TMP/out")" -eq 5000 ] || fail "rank 0 did not get all of stdin"
grep -q '^\[1\] ' "$TMP/out" && fail "rank 1 got stdin"
sed 's/^\[0\] //' "$TMP/out" | cmp -s - "$TMP/in" || fail "stdin arrived altered"
"$PMIGATE" run -n 2 "$PROG" cat <"$TMP/in" >"$TMP/out" || fail "stdin file"
cmp -s "$TMP/out" "$TMP/in" || fail "stdin from a file arrived altered"
exit 0
