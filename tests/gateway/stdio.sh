#!/bin/sh
# Output forwarding: whole lines only (pieces written slowly by several ranks
# never interleave), optional [rank] tags, a partial last line flushed at
# exit with a '\n' added (never glued to another rank's next line), lines
# over 64 KiB cut into lines of their own (continuations tagged [r+]) rather
# than mixed, stderr kept apart, stdin delivered to rank 0 only.
. "$top_srcdir/tests/gateway/gw_lib.sh"

"$PMIGATE" run -n 3 --tag-output "$PROG" slow-lines 20 >"$TMP/out" || fail "slow-lines"
[ "$(wc -l <"$TMP/out")" -eq 60 ] || { cat "$TMP/out"; fail "expected 60 lines"; }
bad=$(grep -cvE '^\[([0-2])\] rank \1 line [0-9]+ end$' "$TMP/out")
[ "$bad" -eq 0 ] || { cat "$TMP/out"; fail "$bad lines are torn or mis-tagged"; }

"$PMIGATE" run -n 2 "$PROG" slow-lines 10 >"$TMP/out" || fail "untagged slow-lines"
bad=$(grep -cvE '^rank [01] line [0-9]+ end$' "$TMP/out")
[ "$bad" -eq 0 ] || { cat "$TMP/out"; fail "$bad untagged lines are torn"; }

"$PMIGATE" run -n 1 "$PROG" partial "no newline" >"$TMP/out" || fail "partial"
printf 'no newline\n' | cmp -s - "$TMP/out" || fail "partial last line: '$(cat "$TMP/out")'"
"$PMIGATE" run -n 1 --tag-output "$PROG" partial "tail" >"$TMP/out" || fail "tagged partial"
printf '[0] tail\n' | cmp -s - "$TMP/out" || fail "tagged partial line: '$(cat "$TMP/out")'"

# a last line without '\n' is not glued to another rank's next line: rank 1
# writes its line only once rank 0's unterminated "tail0" is in the output
# (rank 0 has ended and the gateway flushed it), so the order is fixed
tail_first='if [ $PMI_RANK = 0 ]; then printf tail0; exit 0; fi
    . "$0"
    wait_for 60 grep -q tail0 "$1" || { echo "rank 0 wrote tail0, it never reached $1" >&2; exit 1; }
    echo line1'
"$PMIGATE" run -n 2 sh -c "$tail_first" "$top_srcdir/tests/wait.sh" "$TMP/out" \
    >"$TMP/out" || fail "partial then another rank"
printf 'tail0\nline1\n' | cmp -s - "$TMP/out" || fail "partial line glued: '$(cat "$TMP/out")'"
"$PMIGATE" run -n 2 --tag-output sh -c "$tail_first" "$top_srcdir/tests/wait.sh" "$TMP/out" \
    >"$TMP/out" || fail "tagged partial then another rank"
printf '[0] tail0\n[1] line1\n' | cmp -s - "$TMP/out" || fail "tagged partial line glued: '$(cat "$TMP/out")'"

# 8 ranks writing 150000-byte lines at once: cut at 64 KiB into lines of
# their own, never mixed.  Untagged, each output line is one rank's letter
# only and each rank's pieces come 65536, 65536, 18928 per line; tagged,
# gluing each "[r+] " piece to the line before it gives back exactly what
# every rank wrote.
NL=5 LEN=150000
"$PMIGATE" run -n 8 "$PROG" long-lines $NL $LEN >"$TMP/out" || fail "long lines"
awk '{ c = substr($0, 1, 1); if ($0 !~ ("^" c "+$")) bad++; lens[c] = lens[c] " " length($0) }
     END { for (c in lens) print c lens[c]; exit bad > 0 }' "$TMP/out" >"$TMP/pieces" ||
    fail "long lines of different ranks mixed"
sort "$TMP/pieces" >"$TMP/got"
for r in 0 1 2 3 4 5 6 7; do
    printf '%s' "$(printf "\\$(printf '%03o' $((97 + r)))")"
    for i in $(seq $NL); do printf ' 65536 65536 18928'; done
    echo
done >"$TMP/want"
cmp -s "$TMP/got" "$TMP/want" || { diff "$TMP/want" "$TMP/got" | cut -c1-200 >&2; fail "long lines not cut at 64 KiB"; }

"$PMIGATE" run -n 8 --tag-output "$PROG" long-lines $NL $LEN >"$TMP/out" || fail "tagged long lines"
grep -qE '^\[[0-7]\+\] ' "$TMP/out" || fail "no continuation tag on a cut line"
awk -v dir="$TMP" '
    function flush(r) { if (r in cur) { print cur[r] >(dir "/glued." r); delete cur[r] } }
    match($0, /^\[[0-9]+\+\] /) { r = substr($0, 2, RLENGTH - 4); cur[r] = cur[r] substr($0, RLENGTH + 1); next }
    match($0, /^\[[0-9]+\] /) { r = substr($0, 2, RLENGTH - 3); flush(r); cur[r] = substr($0, RLENGTH + 1); next }
    { print "untagged line: " substr($0, 1, 40) >"/dev/stderr"; bad = 1 }
    END { for (r in cur) flush(r); exit bad }' "$TMP/out" || fail "tagged long lines: a line without its tag"
for r in 0 1 2 3 4 5 6 7; do
    PMI_RANK=$r "$PROG" long-lines $NL $LEN >"$TMP/want"
    cmp -s "$TMP/glued.$r" "$TMP/want" || fail "tagged long lines of rank $r do not glue back to what it wrote"
done

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
