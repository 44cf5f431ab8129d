#!/bin/sh
# Job directories are removed whatever a rank leaves in them: a tree 40
# levels deep, a directory of mode 000 with files inside (it stops only a
# user that is not root, so the job runs as nobody when the test is root),
# one of mode 0500, and symlinks to a directory and a file outside, which
# must survive.  Both when the job ends and when pmigate and its keeper
# were SIGKILLed, by the next run's sweep.
. "$top_srcdir/tests/gateway/gw_lib.sh"
mkdir "$TMP/run" "$TMP/outside"
touch "$TMP/outside/keep"
chmod 777 "$TMP/run"
chmod 755 "$TMP" "$TMP/outside"

# as_user CMD...: the job as a user that mode 000 keeps out (nobody, when
# the test runs as root)
as_user() {
    if [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
    else
        "$@"
    fi
}

# The rank's leavings, in its own place in the job directory; then it
# touches $1.
litter='d=$OMPI_MCA_orte_tmpdir_base/r$PMI_RANK
mkdir "$d" || exit 9
p=$d/deep; i=0
while [ $i -lt 40 ]; do p=$p/l$i; i=$((i + 1)); done
mkdir -p "$p" && touch "$p/f" || exit 10
mkdir -p "$d/locked/inner" && touch "$d/locked/f" "$d/locked/inner/f" || exit 11
chmod 000 "$d/locked/inner" "$d/locked"
mkdir "$d/ro" && touch "$d/ro/f" && chmod 500 "$d/ro" || exit 12
ln -s "$2" "$d/deep/l0/outdir" && ln -s "$2/keep" "$d/ro-link" || exit 13
touch "$1"'

# the job ends: everything goes
as_user env TMPDIR="$TMP/run" "$PMIGATE" run -n 2 sh -c "$litter" sh "$TMP/run/.made" \
    "$TMP/outside" >"$TMP/o" 2>"$TMP/e"
st=$?
[ $st -eq 0 ] || cat "$TMP/o" "$TMP/e" >&2
expect_status 0 $st "a job whose ranks litter their job directory"
left=$(ls "$TMP/run" | grep '^pmigate')
[ -z "$left" ] || fail "the job left its directory behind: $left"
[ -e "$TMP/outside/keep" ] || fail "the removal followed a symlink out of the job directory"

# pmigate and its keeper SIGKILLed: the next run's sweep removes it all
rm -f "$TMP/run/.made"
as_user env TMPDIR="$TMP/run" "$PMIGATE" run -n 1 sh -c "$litter
exec sleep 300" sh "$TMP/run/.made" "$TMP/outside" >"$TMP/o" 2>"$TMP/e" &
pid=$!
for _ in $(seq 100); do
    [ -e "$TMP/run/.made" ] && break
    sleep 0.1
done
[ -e "$TMP/run/.made" ] || { cat "$TMP/e" >&2; kill $pid; fail "the rank did not litter"; }
# the gateway is the pmigate whose parent is as_user's (or this) shell
gw=$(pgrep -x pmigate -P $pid || echo $pid)
keeper=$(pgrep -x pmigate -P "$gw")
[ -n "$keeper" ] || { kill $pid; fail "no keeper process under pmigate"; }
kill -9 "$keeper" "$gw"
wait $pid 2>/dev/null
[ "$(ls "$TMP/run" | grep -c '^pmigate')" -eq 1 ] ||
    fail "a SIGKILLed pmigate and keeper should leave their directory to the next run"
as_user env TMPDIR="$TMP/run" "$PMIGATE" run -n 1 true || fail "the next run"
left=$(ls "$TMP/run" | grep '^pmigate')
[ -z "$left" ] || fail "the sweep of the next run left $left"
[ -e "$TMP/outside/keep" ] || fail "the sweep followed a symlink out of the job directory"
exit 0
