#!/bin/sh
# --bind-to core gives each rank one core, round-robin; none (the default)
# leaves every rank what pmigate itself may use (all of the machine, or what
# taskset gave it).  The cpuset --verbose reports for a rank (also the
# rank's locality in the engine) is the one the rank really runs on.
# --sched batch runs every rank under SCHED_BATCH; by default they keep the
# policy pmigate has (SCHED_OTHER).
. "$top_srcdir/tests/gateway/gw_lib.sh"

# "0-2,5" -> "0,1,2,5": hwloc's list syntax in the affinity mode's.
expand_list() {
    echo "$1" | tr ',' '\n' | awk -F- '{hi = NF > 1 ? $2 : $1; for (c = $1; c <= hi; c++) printf "%s%d", n++ ? "," : "", c} END {print ""}'
}

# check_reported FILE: each rank's reported cpuset equals its affinity.
check_reported() {
    grep '^rank [0-9]* cpus: ' "$1" | while read -r _ r _ cpus; do
        said=$(sed -n "s/^pmigate: rank $r: pid [0-9]*, appnum [0-9]*, cpuset //p" "$1")
        [ -n "$said" ] || fail "--verbose reported no cpuset for rank $r"
        [ "$(expand_list "$said")" = "$cpus" ] ||
            fail "rank $r runs on $cpus but pmigate reported cpuset $said"
    done || exit 1
}

ncores=$("$PMIGATE" info | sed -n 's/.* \([0-9]*\) cores*,.*/\1/p')
[ -n "$ncores" ] || fail "cannot read the core count from pmigate info"

"$PMIGATE" run -n 2 "$PROG" affinity >"$TMP/none" || fail "unbound job"
all=$(sed -n 's/^rank 0 cpus: //p' "$TMP/none")
[ "$(sed -n 's/^rank 1 cpus: //p' "$TMP/none")" = "$all" ] || fail "unbound ranks differ"

"$PMIGATE" run --verbose -n 2 "$PROG" affinity >"$TMP/v" 2>&1 || fail "unbound job, --verbose"
check_reported "$TMP/v"
if command -v taskset >/dev/null; then
    last=${all##*[ ,]}
    taskset -c "$last" "$PMIGATE" run --verbose -n 2 "$PROG" affinity >"$TMP/ts" 2>&1 ||
        fail "unbound job under taskset"
    [ "$(sed -n 's/^rank 1 cpus: //p' "$TMP/ts")" = "$last" ] || fail "ranks left the CPU taskset gave"
    check_reported "$TMP/ts"
else
    skip_part "taskset not installed (util-linux)"
fi

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
"$PMIGATE" run --verbose -n $n --bind-to core "$PROG" affinity >"$TMP/cv" 2>&1 || fail "bound job, --verbose"
check_reported "$TMP/cv"

if command -v chrt >/dev/null; then
    policies() { grep -o 'policy: SCHED_[A-Z]*' "$1" | sort | uniq -c | tr -s ' '; }
    "$PMIGATE" run -n 3 sh -c 'chrt -p $$' >"$TMP/pol" || fail "default policy job"
    [ "$(policies "$TMP/pol")" = " 3 policy: SCHED_OTHER" ] ||
        fail "default: ranks not all SCHED_OTHER: $(policies "$TMP/pol")"
    "$PMIGATE" run --sched batch --verbose -n 3 sh -c 'chrt -p $$' >"$TMP/pol" 2>"$TMP/e" ||
        fail "--sched batch job"
    [ "$(policies "$TMP/pol")" = " 3 policy: SCHED_BATCH" ] ||
        fail "--sched batch: ranks not all SCHED_BATCH: $(policies "$TMP/pol")"
    expect_grep 'scheduling batch' "$TMP/e" "--verbose names the policy"
    [ "$(chrt -p $$ | grep -o 'SCHED_[A-Z]*')" = SCHED_OTHER ] || fail "the test shell's policy changed"
else
    skip_part "chrt not installed (util-linux)"
fi
exit 0
