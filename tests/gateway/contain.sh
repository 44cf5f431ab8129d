#!/bin/sh
# Nothing the ranks start outlives the job (pmigate is their subreaper):
#  - a job that succeeds while its ranks left background children;
#  - a rank's child that calls setsid, when the job succeeds and when a rank
#    fails (then it escapes the process-group teardown);
#  - a daemon (double fork + setsid) a rank leaves behind.
# After a SIGKILL of pmigate the ranks die with it, and its keeper kills
# the processes left in the job's group and removes its directories; if the
# keeper is killed too, the next `pmigate run` removes them, but not those
# of a job that is still running.  (What a SIGKILL cannot take with it -- a
# child that left the job's group -- is documented in the user guide; the
# test kills it itself.)
. "$top_srcdir/tests/gateway/gw_lib.sh"
mkdir "$TMP/run"

# run_contained WHAT WANT MARKER SCRIPT [ARG]: a 2-rank job of `sh -c SCRIPT`
# ($0 is gw_testprog, $1 the marker, $2 ARG) exits WANT and leaves nothing
# marked behind.
run_contained() {
    "$PMIGATE" run -n 2 sh -c "$4" "$PROG" "$3" "${5:-}" >"$TMP/o" 2>"$TMP/e"
    st=$?
    [ $st -eq "$2" ] || cat "$TMP/o" "$TMP/e" >&2
    expect_status "$2" $st "$1"
    no_orphans "$3"
}

m=$(marker bg)
run_contained "background children of a job that succeeds" 0 "$m" '"$0" sleep 3001 "$1" & exit 0'
expect_grep 'killing 2 processes the ranks left running' "$TMP/e" "background children"

# the rank exits once its child runs the program, so after its setsid
up='until pgrep -f "^$0 sleep $2 $1" >/dev/null; do sleep 0.02; done'
m=$(marker setsid)
run_contained "a setsid child of a job that succeeds" 0 "$m" \
    'setsid "$0" sleep 3002 "$1" & '"$up"'; exit 0' 3002
m=$(marker setsid_fail)
run_contained "a setsid child of a failing job" 3 "$m" \
    'setsid "$0" sleep 3003 "$1" & '"$up"'; exit 3' 3003
m=$(marker daemon)
run_contained "a daemon (double fork, setsid)" 0 "$m" \
    '(setsid "$0" sleep 3004 "$1" &) ; '"$up"'; exit 0' 3004

# SIGKILL to pmigate: the ranks die; its directories are left to the next run
m=$(marker sigkill)
TMPDIR="$TMP/run" "$PMIGATE" run -n 2 sh -c '"$0" sleep 3005 "$1" & exec "$0" sleep 3005 "$1"' \
    "$PROG" "$m" 2>/dev/null &
pid=$!
for _ in $(seq 50); do
    [ "$(pgrep -f "^$PROG sleep 3005 $m" | wc -l)" -ge 4 ] && break
    sleep 0.1
done
ranks=$(pgrep -P $pid -f "^$PROG" | tr '\n' ' ')
kill -9 $pid
wait $pid 2>/dev/null
for r in $ranks; do
    # dead or a zombie (whoever inherited it reaps it when it will), within 3 s
    for _ in $(seq 30); do
        state=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$r/stat" 2>/dev/null)
        [ -z "$state" ] || [ "$state" = Z ] && break
        sleep 0.1
    done
    [ -z "$state" ] || [ "$state" = Z ] ||
        { pkill -9 -f "$m"; fail "rank $r outlived its SIGKILLed pmigate (state $state)"; }
done
# the keeper kills the ranks' children that stayed in the job's group and
# removes the dead job's directories
no_orphans "$m"
for _ in $(seq 20); do
    [ -z "$(ls -A "$TMP/run")" ] && break
    sleep 0.1
done
[ -z "$(ls -A "$TMP/run")" ] || fail "a SIGKILLed pmigate left $(ls "$TMP/run")"

# a child that left the job's group (setsid) survives a SIGKILL of pmigate
# (documented: only a cgroup could find it); its directories go with the
# keeper too, and the next run removes them if the keeper was killed as well
m=$(marker sigkill_setsid)
TMPDIR="$TMP/run" "$PMIGATE" run -n 1 sh -c 'setsid "$0" sleep 3006 "$1" & exec "$0" sleep 3006 "$1"' \
    "$PROG" "$m" 2>/dev/null &
pid=$!
for _ in $(seq 50); do
    [ "$(pgrep -f "^$PROG sleep 3006 $m" | wc -l)" -ge 2 ] && break
    sleep 0.1
done
keeper=$(pgrep -P $pid -x pmigate)
[ -n "$keeper" ] || fail "no keeper process under pmigate"
kill -9 $keeper $pid
wait $pid 2>/dev/null
# the rank dies with pmigate (PDEATHSIG), its setsid child does not
for _ in $(seq 30); do
    survivors=$(pgrep -f "^$PROG sleep 3006 $m" | wc -l)
    [ "$survivors" -le 1 ] && break
    sleep 0.1
done
pkill -9 -f "$m"
[ "$survivors" -eq 1 ] || fail "after SIGKILL, $survivors processes survived, expected the setsid one"
left=$(ls "$TMP/run" | grep -c '^pmigate')
[ "$left" -eq 1 ] || fail "pmigate and its keeper SIGKILLed left $left directories, expected 1"

# the next run removes them, but not those of a job that is still running
# (the running job's rank waits for the file "go", so it outlasts the other)
TMPDIR="$TMP/run" "$PMIGATE" run -n 1 sh -c 'touch "$0.up"; while [ ! -e "$0" ]; do sleep 0.05; done' \
    "$TMP/go" 2>"$TMP/e_live" &
live=$!
for _ in $(seq 100); do
    [ -e "$TMP/go.up" ] && break
    sleep 0.1
done
ls "$TMP/run" >"$TMP/dirs_live"
[ "$(grep -c '^pmigate' "$TMP/dirs_live")" -eq 1 ] ||
    { cat "$TMP/dirs_live" >&2; fail "the dead job's directories were not removed by the next run"; }
TMPDIR="$TMP/run" "$PMIGATE" run -n 1 "$PROG" exit 0 || fail "a job next to a running one"
ls "$TMP/run" | cmp -s - "$TMP/dirs_live" || fail "a run removed the directories of a running job"
touch "$TMP/go"
wait $live
st=$?
[ $st -eq 0 ] || cat "$TMP/e_live" >&2
expect_status 0 $st "a job running while another starts"
left=$(ls -A "$TMP/run")
[ -z "$left" ] || fail "directories left behind: $left"
exit 0
