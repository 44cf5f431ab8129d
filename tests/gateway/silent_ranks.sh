#!/bin/sh
# No silent singletons: a rank that exits 0 without ever speaking PMI while
# other ranks did, or a job of several ranks none of which spoke PMI, is what
# an MPI binary built for another launcher looks like (each rank runs alone,
# "rank 0 of 1", and exits 0).  pmigate warns in one line naming the rank;
# --strict fails the job with status 125.  One rank that speaks no PMI
# (`pmigate run hostname`) is a plain program: nothing is said.
. "$top_srcdir/tests/gateway/gw_lib.sh"

# expect_lines N FILE WHAT: FILE has exactly N lines
expect_lines() {
    [ "$(grep -c '' "$2")" -eq "$1" ] || { cat "$2" >&2; fail "$3: expected $1 line(s) on stderr"; }
}

# rank 0 speaks PMI-1 (init, finalize); rank 1 is a program without PMI
"$PMIGATE" run -n 1 "$PROG" pmi -1 finalize : -n 1 true >"$TMP/o" 2>"$TMP/e"
expect_status 0 $? "a silent rank beside a PMI rank"
expect_grep '^pmigate: warning: rank 1 (true) exited without ever speaking PMI while other ranks did' \
    "$TMP/e" "a silent rank beside a PMI rank"
expect_grep 'built for another launcher' "$TMP/e" "a silent rank: the likely cause"
expect_lines 1 "$TMP/e" "a silent rank beside a PMI rank"

"$PMIGATE" run --strict -n 1 "$PROG" pmi -1 finalize : -n 1 true >"$TMP/o" 2>"$TMP/e"
expect_status 125 $? "--strict: a silent rank beside a PMI rank"
expect_grep '^pmigate: error: rank 1 (true) exited without ever speaking PMI' "$TMP/e" \
    "--strict: a silent rank beside a PMI rank"

# every rank speaks PMI: nothing said, under --strict too
"$PMIGATE" run --strict -n 3 "$PROG" pmi -1 finalize >"$TMP/o" 2>"$TMP/e"
expect_status 0 $? "every rank speaks PMI"
[ ! -s "$TMP/e" ] || { cat "$TMP/e" >&2; fail "every rank speaks PMI: something was said on stderr"; }

# many silent ranks: the first few named, the rest counted, one line
"$PMIGATE" run -n 1 "$PROG" pmi -1 finalize : -n 9 true >"$TMP/o" 2>"$TMP/e"
expect_status 0 $? "nine silent ranks"
expect_grep '^pmigate: warning: rank 4 (true) exited without' "$TMP/e" "nine silent ranks: rank 4"
grep -q 'rank 5 (true)' "$TMP/e" && { cat "$TMP/e" >&2; fail "nine silent ranks: more than 4 named"; }
expect_grep '^pmigate: warning: and 5 more ranks exited without ever speaking PMI$' "$TMP/e" \
    "nine silent ranks: the rest counted"
expect_lines 5 "$TMP/e" "nine silent ranks"

# no rank spoke PMI: one line for the whole job
"$PMIGATE" run -n 2 true >"$TMP/o" 2>"$TMP/e"
expect_status 0 $? "a job of 2 silent ranks"
expect_grep '^pmigate: warning: none of the 2 ranks spoke PMI' "$TMP/e" "a job of 2 silent ranks"
expect_grep 'built for another launcher' "$TMP/e" "a job of 2 silent ranks: the likely cause"
expect_lines 1 "$TMP/e" "a job of 2 silent ranks"

"$PMIGATE" run --strict -n 2 true >"$TMP/o" 2>"$TMP/e"
expect_status 125 $? "--strict: a job of 2 silent ranks"
expect_grep '^pmigate: error: none of the 2 ranks spoke PMI' "$TMP/e" \
    "--strict: a job of 2 silent ranks"

# one rank without PMI is a plain program
"$PMIGATE" run --strict -n 1 true >"$TMP/o" 2>"$TMP/e"
expect_status 0 $? "one rank without PMI"
[ ! -s "$TMP/e" ] || { cat "$TMP/e" >&2; fail "one rank without PMI: something was said on stderr"; }

# a failed job is not judged: its own message stands, its status too
"$PMIGATE" run --strict -n 2 "$PROG" exit 3 >"$TMP/o" 2>"$TMP/e"
expect_status 3 $? "--strict: a failing job keeps its status"
grep -q 'spoke PMI' "$TMP/e" && { cat "$TMP/e" >&2; fail "a failed job was judged for silent ranks"; }
exit 0
