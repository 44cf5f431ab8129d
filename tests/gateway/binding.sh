#!/bin/sh
# --bind-to core gives each rank one core, round-robin; none (the default)
# leaves every rank the whole machine.
. "$top_srcdir/tests/gateway/gw_lib.sh"

ncores=$("$PMIGATE" info | sed -n 's/.* \([0-9]*\) cores*,.*/\1/p')
[ -n "$ncores" ] || fail "cannot read the core count from pmigate info"

"$PMIGATE" run -n 2 "$PROG" affinity >"$TMP/none" || fail "unbound job"
all=$(sed -n 's/^rank 0 cpus: //p' "$TMP/none")
[ "$(sed -n 's/^rank 1 cpus: //p' "$TMP/none")" = "$all" ] || fail "unbound ranks differ"

n=$((ncores + 1))
"$PMIGATE" run -n $n --bind-to core "$PROG" affinity >"$TMP/core" 2>"$TMP/e" ||
    fail "bound job"
for r in $(seq 0 $((n - 1))); do
    cpus=$(sed -n "s/^rank $r cpus: //p" "$TMP/core")
    case $cpus in
    *,*) [ "$ncores" -eq 1 ] || fail "rank $r bound to several CPUs ($cpus) with --bind-to core" ;;
    "") fail "rank $r printed no affinity" ;;
    esac
done
[ "$(sed -n 's/^rank 0 cpus: //p' "$TMP/core")" = "$(sed -n "s/^rank $ncores cpus: //p" "$TMP/core")" ] ||
    fail "binding does not wrap round-robin"
[ "$ncores" -eq 1 ] || [ "$(sed -n 's/^rank 0 cpus: //p' "$TMP/core")" != "$(sed -n 's/^rank 1 cpus: //p' "$TMP/core")" ] ||
    fail "ranks 0 and 1 share a core"
expect_grep 'binding wraps round-robin' "$TMP/e" "oversubscription warning"
exit 0
