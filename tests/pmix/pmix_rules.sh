#!/bin/sh
# libpmix under a plain `pmigate run -n 4`: tests/pmix/pmix_rules checks the
# Standard's rules (retrieval order, scopes, timeouts, reserved keys, fences,
# non-blocking calls, name service, resolve, pack/unpack) and prints one line
# per rule.  Run twice: over the inherited PMI_FD socketpair and over the
# PMIGATE_PMI_PORT unix socket (PMI_FD unset), the two ways a rank connects.
. "$(dirname "$0")/../lib.sh"
RULES=$top_builddir/tests/pmix/pmix_rules
make_workdir pg_pmix
skip_unless_built "$PMIGATE" "$RULES"

check_run() {
    how=$1
    shift
    run_job 120 -n 4 "$@"
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
        reserved_list_optional finalize init_after_finalize_refused; do
        grep -q "^PASS $rule " "$WORK/out" || fail "$how: no PASS line for $rule"
    done
    # the refused second init is explained on pmigate's stderr, once per rank
    [ "$(grep -c 'claimed rank [0-9]* on PMI_PORT: that rank has finalized' "$WORK/out")" -eq 4 ] ||
        fail "$how: pmigate did not say why each second init was refused"
    echo "$how: $(grep -c '^PASS' "$WORK/out") rules passed"
}

check_run "PMI_FD" "$RULES"
check_run "PMIGATE_PMI_PORT" sh -c 'unset PMI_FD; exec "$0"' "$RULES"
finish
