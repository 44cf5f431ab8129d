#!/bin/sh
# pmigate's stdout is a FIFO that is held open but not read (a stalled pager,
# a stopped terminal): output must never block the event loop.  While the
# reader is stalled the ranks' PMI wire-up (put, barrier, get) completes,
# --timeout and SIGTERM end the job on time, and once the reader resumes
# every line arrives, in order, whole.  The same through a terminal that is
# not read (script(1) whose own output is the stalled FIFO).  Before the fix
# pmigate blocked in write() to stdout: no PMI reply, no timeout, no signal
# until SIGKILL.
. "$top_srcdir/tests/gateway/gw_lib.sh"
SCRIPT_PROG="$top_builddir/tests/integration/pmi_script"
[ -x "$SCRIPT_PROG" ] || fail "$SCRIPT_PROG was not built"
LINES=100000 # per rank, ~1 MB each: far more than every buffer on the way

# start_reader: a reader of $TMP/fifo that opens it at once (so pmigate's
# open succeeds) but reads only once $TMP/go exists; output in $TMP/out.
start_reader() {
    rm -f "$TMP/go" "$TMP/out"
    [ -p "$TMP/fifo" ] || mkfifo "$TMP/fifo"
    (while [ ! -e "$TMP/go" ]; do sleep 0.1; done; exec cat) <"$TMP/fifo" >"$TMP/out" &
    reader=$!
}

release_reader() {
    touch "$TMP/go"
    wait $reader
}

# wait_gone PID SECONDS: 0 once PID has exited, 1 (after killing it) if it
# is still there after SECONDS.
wait_gone() {
    _n=$(($2 * 10))
    while kill -0 "$1" 2>/dev/null; do
        _n=$((_n - 1))
        if [ $_n -le 0 ]; then
            kill -9 "$1" 2>/dev/null
            return 1
        fi
        sleep 0.1
    done
    return 0
}

# flood_fills PID, for the ranks' scripts: waits (up to 5 s) until what PID
# writes has filled every buffer on the way, i.e. it sleeps in write() on its
# full pipe.
cat >"$TMP/flood_fills.sh" <<'FLOOD'
flood_fills() {
    for _ in $(seq 100); do
        case $(cat "/proc/$1/wchan" 2>/dev/null) in *pipe_write*) return ;; esac
        sleep 0.05
    done
}
FLOOD

# 1. PMI wire-up of 4 ranks while each floods the stalled stdout, then
# every line arrives once the reader reads.  $1: extra pmigate options.
wireup_under_flood() {
    opts=$1
    for r in 0 1 2 3; do
        cat >"$TMP/wire.$r" <<EOF
send1 cmd=init pmi_version=1 pmi_subversion=1
expect rc=0
send1 cmd=put kvsname=x key=card$r value=v$r
expect rc=0
send1 cmd=barrier_in
expect cmd=barrier_out
send1 cmd=get kvsname=x key=card$(((r + 1) % 4))
expect value=v$(((r + 1) % 4))
send1 cmd=finalize
expect finalize_ack
EOF
    done
    cat >"$TMP/rank.sh" <<EOF
#!/bin/sh
. "$TMP/flood_fills.sh"
seq -f "r\$PMI_RANK %g" 1 $LINES &
flood_fills \$!
"$SCRIPT_PROG" "$TMP/wire.%r" && touch "$TMP/wired.\$PMI_RANK"
wait
EOF
    chmod +x "$TMP/rank.sh"
    rm -f "$TMP"/wired.*
    start_reader
    # shellcheck disable=SC2086
    "$PMIGATE" run $opts -n 4 "$TMP/rank.sh" >"$TMP/fifo" 2>"$TMP/err" &
    pg=$!
    n=0
    while [ "$(ls "$TMP" | grep -c '^wired\.')" -lt 4 ]; do
        n=$((n + 1))
        if [ $n -gt 200 ] || ! kill -0 $pg 2>/dev/null; then
            kill -9 $pg 2>/dev/null
            release_reader
            cat "$TMP/err" >&2
            fail "$opts: the PMI wire-up did not complete while stdout was not read"
        fi
        sleep 0.1
    done
    kill -0 $pg 2>/dev/null || fail "$opts: pmigate ended before its output was read"
    release_reader
    wait_gone $pg 60 || fail "$opts: pmigate did not finish once its output was read"
    wait $pg
    st=$?
    [ $st -eq 0 ] || cat "$TMP/err" >&2
    expect_status 0 $st "$opts: flooding job"
    [ "$(wc -l <"$TMP/out")" -eq $((4 * LINES)) ] ||
        fail "$opts: $(wc -l <"$TMP/out") lines arrived, expected $((4 * LINES))"
    seq -f "%g" 1 $LINES >"$TMP/want"
    for r in 0 1 2 3; do
        if [ -n "$opts" ]; then
            sed -n "s/^\[$r\] r$r //p" "$TMP/out" >"$TMP/got"
        else
            sed -n "s/^r$r //p" "$TMP/out" >"$TMP/got"
        fi
        cmp -s "$TMP/got" "$TMP/want" || fail "$opts: rank $r's lines arrived altered or out of order"
    done
}

wireup_under_flood ""
wireup_under_flood "--tag-output"

# 1b. The ranks end while the reader is stalled: pmigate waits for the
# reader (longer than the 1 s it gives a reader after --timeout) and
# delivers every line once it reads, then exits 0.
start_reader
"$PMIGATE" run -n 2 sh -c 'seq -f "r$PMI_RANK %g" 1 8000' >"$TMP/fifo" 2>"$TMP/err" &
pg=$!
sleep 2.5
kill -0 $pg 2>/dev/null || fail "the job's output was given up while the reader was stalled"
release_reader
wait_gone $pg 20 || fail "pmigate did not finish once its output was read"
wait $pg
expect_status 0 $? "a job ending while its reader is stalled"
seq -f "%g" 1 8000 >"$TMP/want"
for r in 0 1; do
    sed -n "s/^r$r //p" "$TMP/out" | cmp -s - "$TMP/want" || fail "rank $r's lines were lost at the end"
done

# 2. --timeout ends the job on time although nobody ever reads.
start_reader
t0=$(now_ms)
"$PMIGATE" run --timeout 2 -n 2 sh -c 'exec yes flood' >"$TMP/fifo" 2>"$TMP/err" &
pg=$!
wait_gone $pg 20 || { release_reader; fail "--timeout: pmigate still runs 20 s later"; }
wait $pg
st=$?
elapsed=$(($(now_ms) - t0))
release_reader
expect_status 124 $st "--timeout with a stalled stdout"
[ $elapsed -lt 6000 ] || fail "--timeout 2 ended the job after $elapsed ms"
expect_grep "not delivered: nobody read them" "$TMP/err" "--timeout with a stalled stdout"
bad=$(grep -cv '^flood$' "$TMP/out" | head -1)
# the last line may be cut where pmigate gave up, and a rank killed
# mid-line has its last line ended with '\n': nothing else is torn
[ "$bad" -le 3 ] || fail "--timeout: $bad torn lines"

# 3. SIGTERM ends it on time too, and so does SIGINT.
for sig in TERM INT; do
    start_reader
    "$PMIGATE" run -n 2 sh -c 'exec yes flood' >"$TMP/fifo" 2>"$TMP/err" &
    pg=$!
    # both ranks flood, and their output has filled pmigate's queue
    for _ in $(seq 100); do
        [ "$(pgrep -P $pg -x yes | wc -l)" -eq 2 ] && break
        sleep 0.05
    done
    for y in $(pgrep -P $pg -x yes); do
        . "$TMP/flood_fills.sh"
        flood_fills "$y"
    done
    t0=$(now_ms)
    kill -$sig $pg
    wait_gone $pg 20 || { release_reader; fail "SIG$sig: pmigate still runs 20 s later"; }
    wait $pg
    st=$?
    elapsed=$(($(now_ms) - t0))
    release_reader
    want=143
    [ $sig = INT ] && want=130
    expect_status $want $st "SIG$sig with a stalled stdout"
    [ $elapsed -lt 4000 ] || fail "SIG$sig ended the job after $elapsed ms"
done

# 3b. --verbose with stderr the stalled FIFO: every PMI message is logged
# there (queued, never written straight past the queue), the wire-up still
# completes and --timeout still ends the job on time.
cat >"$TMP/rank.sh" <<EOF
#!/bin/sh
. "$TMP/flood_fills.sh"
yes flood >&2 &
flood_fills \$!
"$SCRIPT_PROG" "$TMP/wire.%r" && touch "$TMP/wired.\$PMI_RANK"
sleep 60
EOF
chmod +x "$TMP/rank.sh"
rm -f "$TMP"/wired.*
start_reader
t0=$(now_ms)
"$PMIGATE" run --verbose --timeout 3 -n 4 "$TMP/rank.sh" 2>"$TMP/fifo" >"$TMP/err" &
pg=$!
wait_gone $pg 20 || { release_reader; fail "--verbose: pmigate still runs 20 s later"; }
wait $pg
st=$?
elapsed=$(($(now_ms) - t0))
release_reader
expect_status 124 $st "--verbose with a stalled stderr"
[ $elapsed -lt 7000 ] || fail "--verbose: --timeout 3 ended the job after $elapsed ms"
[ "$(ls "$TMP" | grep -c '^wired\.')" -eq 4 ] || fail "--verbose: the wire-up did not complete"

# 4. A terminal that is not read: pmigate under script(1), whose output is
# the stalled FIFO, so the pseudo-terminal fills up.  script itself then
# waits for the FIFO, so pmigate's status and end come through a file.
start_reader
rm -f "$TMP/status"
t0=$(now_ms)
script -qfc "\"$PMIGATE\" run --timeout 2 --tag-output -n 2 sh -c 'exec yes flood'; echo \$? >\"$TMP/status\"" \
    /dev/null >"$TMP/fifo" 2>"$TMP/err" </dev/null &
pg=$!
n=0
while [ ! -s "$TMP/status" ] && [ $n -lt 200 ]; do
    sleep 0.1
    n=$((n + 1))
done
elapsed=$(($(now_ms) - t0))
release_reader
wait_gone $pg 20 || fail "terminal: script(1) still runs once its output was read"
[ -s "$TMP/status" ] || fail "terminal: pmigate still ran 20 s later"
expect_status 124 "$(cat "$TMP/status")" "--timeout with a stalled terminal"
[ $elapsed -lt 6000 ] || fail "--timeout 2 on a stalled terminal ended after $elapsed ms"
exit 0
