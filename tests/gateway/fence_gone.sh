#!/bin/sh
# A fence whose missing members exited without ever speaking PMI can never
# complete: pmigate fails it at once for the ranks waiting in it (an error
# reply), names the gone ranks, and with --strict ends the job with 125.
# Both orders: the silent ranks gone before the others fence, and while
# they wait in it; PMI-1 (raw lines) and Slurm's libpmi2.  It used to wait
# for ever, --strict included.
. "$top_srcdir/tests/gateway/gw_lib.sh"
SCRIPT_PROG=$top_builddir/tests/integration/pmi_script
WIREUP=$top_builddir/tests/progs/pmi2_wireup
[ -x "$SCRIPT_PROG" ] || fail "tests/integration/pmi_script was not built"
[ -x "$WIREUP" ] || fail "tests/progs/pmi2_wireup was not built (Slurm's libpmi2-0-dev: ./dev deps)"

# the PMI-1 ranks: a barrier that fails, then a clean finalize
printf '%s\n' 'send1 cmd=init pmi_version=1 pmi_subversion=1' 'expect rc=0' \
    'send1 cmd=barrier_in' 'expect cmd=barrier_out rc=-1' \
    'send1 cmd=finalize' 'expect finalize_ack' >"$TMP/fence"

# rank 2, or ranks 2 and 3: which of them the fence finds gone depends on
# when the others enter it
TWO='ranks\{0,1\} [23] (true)\(, 3 (true)\)\{0,1\}'

# job WANT WHAT GONE ARGS...: `pmigate run --timeout 60 ARGS` exits WANT
# (any: whatever the ranks make of their error) and names GONE as the
# fence's gone members
job() {
    want=$1 what=$2 gone=$3
    shift 3
    "$PMIGATE" run --timeout 60 "$@" >"$TMP/o" 2>"$TMP/e"
    st=$?
    [ $st -ne 124 ] || { cat "$TMP/e" >&2; fail "$what: the fence waited until --timeout"; }
    [ "$want" = any ] || { [ $st -eq "$want" ] || cat "$TMP/o" "$TMP/e" >&2; expect_status "$want" $st "$what"; }
    expect_grep "a fence can never complete: $gone exited without ever speaking PMI" "$TMP/e" "$what"
}

job 0 "PMI-1 ranks fence after two silent ranks exited" "$TWO" \
    -n 2 "$SCRIPT_PROG" "$TMP/fence" : -n 2 true
# (the silent rank is "sh" there, and named so)
job 0 "PMI-1 ranks wait in the fence when a silent rank exits" "rank 2 (sh)" \
    -n 2 "$SCRIPT_PROG" "$TMP/fence" : -n 1 sh -c \
    'n=0
     until "$0" status $PPID | grep -q "fence 1: waiting for rank 2 (of 3)" || [ $n -ge 200 ]; do
         n=$((n + 1))
         sleep 0.05
     done
     exec true' "$PMIGATE"
job 125 "--strict: PMI-1 ranks, silent ranks gone" "$TWO" --strict \
    -n 2 "$SCRIPT_PROG" "$TMP/fence" : -n 2 true
expect_grep '^pmigate: error: a fence can never complete' "$TMP/e" "--strict says error"
job any "Slurm's libpmi2 wire-up beside two silent ranks" "$TWO" -n 2 "$WIREUP" : -n 2 true
job 125 "--strict: Slurm's libpmi2 wire-up beside two silent ranks" "$TWO" --strict \
    -n 2 "$WIREUP" : -n 2 true
exit 0
