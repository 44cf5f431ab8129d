#!/bin/sh
# libpmix under a plain `pmigate run -n 4`: tests/pmix/pmix_rules checks the
# Standard's rules (retrieval order, scopes, timeouts, reserved keys, fences,
# non-blocking calls, name service, resolve, pack/unpack) and prints one line
# per rule.  Run twice: over the inherited PMI_FD socketpair and over the
# PMIGATE_PMI_PORT unix socket (PMI_FD unset), the two ways a rank connects.
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
PMIGATE=${PG_PMIGATE:-$top_builddir/gateway/pmigate}
RULES=$top_builddir/tests/pmix/pmix_rules
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pg_pmix.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0

[ -x "$PMIGATE" ] || { echo "SKIP: $PMIGATE not built"; exit 77; }
[ -x "$RULES" ] || { echo "SKIP: $RULES not built"; exit 77; }

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

check_run() {
    how=$1
    shift
    timeout -k 5 120 "$PMIGATE" run -n 4 "$@" >"$WORK/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail "$how: pmigate exited $rc"
    if grep -q '^FAIL' "$WORK/out" || [ $rc -ne 0 ]; then
        cat "$WORK/out"
        fail "$how: rules failed"
    fi
    # the rules a user relies on most must have run (not silently vanished)
    for rule in put_reserved_key_is_bad_param own_value_before_commit \
        scope_remote_peer_same_node_outside_scope rank_undef_after_collecting_fence \
        timeout_missing_key refresh_cache_brings_new_value get_nb_callback_value \
        lookup_after_unpublish_not_found resolve_peers_own_node data_pack_unpack_round_trip \
        finalize; do
        grep -q "^PASS $rule " "$WORK/out" || fail "$how: no PASS line for $rule"
    done
    echo "$how: $(grep -c '^PASS' "$WORK/out") rules passed"
}

check_run "PMI_FD" "$RULES"
check_run "PMIGATE_PMI_PORT" sh -c 'unset PMI_FD; exec "$0"' "$RULES"

if [ $failures -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
