#!/bin/sh
# SIGTERM and SIGINT sent to pmigate reach the ranks; pmigate exits 128+N and
# nothing it started survives, grandchildren included.
. "$top_srcdir/tests/gateway/gw_lib.sh"

for sig in TERM:15 INT:2; do
    num=${sig#*:}
    sig=${sig%:*}
    m=$(marker "sig$sig")
    "$PMIGATE" run -n 3 "$PROG" grandchild "$m" 2>"$TMP/e" &
    pid=$!
    # wait until every rank and grandchild is up (3 + 3 processes)
    for _ in $(seq 50); do
        [ "$(pgrep -f "$PROG grandchild $m" | wc -l)" -ge 6 ] && break
        sleep 0.1
    done
    kill -$sig $pid
    wait $pid
    st=$?
    want=$((128 + num))
    expect_status $want $st "SIG$sig to pmigate"
    expect_grep 'forwarding it to the job' "$TMP/e" "SIG$sig to pmigate"
    no_orphans "$m"
done

# the ranks die with pmigate even when pmigate itself is SIGKILLed
m=$(marker sigkill)
"$PMIGATE" run -n 2 "$PROG" sleep 60 "$m" 2>/dev/null &
pid=$!
for _ in $(seq 50); do
    [ "$(pgrep -f "$PROG sleep 60 $m" | wc -l)" -ge 2 ] && break
    sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
no_orphans "$m"
exit 0
