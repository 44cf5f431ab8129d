#!/bin/sh
# libpmix's API families beyond key exchange under a plain `pmigate run`
# (tests/pmix/pmix_api.c): info lists, groups (construct/destruct over 2 of
# 4 ranks, the context id, a non-member unaffected, a member that leaves
# fails the others instead of hanging them), topology, attribute names,
# job control (a signal reaches the named rank; a kill ends it), and the
# calls pmigate does not serve answering NOT_SUPPORTED through their
# callback.  (Groups by invitation: tests/pmix/pmix_groups.sh.)
. "$(dirname "$0")/../lib.sh"
API=$top_builddir/tests/pmix/pmix_api
make_workdir pg_pmix_api
skip_unless_built "$PMIGATE" "$API"

# must_pass CHECK...: each check printed PASS on some rank, none FAIL
must_pass() {
    for check in "$@"; do
        grep -q "^PASS $check " "$WORK/out" || fail "no PASS line for $check"
    done
}

run_job 120 -n 4 "$API"
if [ $rc -ne 0 ] || grep -q '^FAIL' "$WORK/out"; then
    cat "$WORK/out"
    fail "api run: pmigate exited $rc"
fi
must_pass info_list_convert_keeps_order_and_values info_list_empty_convert \
    attribute_name_and_string load_topology_matches_node parse_cpuset_string \
    get_cpuset_process relative_locality process_monitor_nb_not_supported \
    allocation_request_nb_not_supported fabric_register_nb_not_supported \
    get_credential_nb_not_supported compute_distances_nb_not_supported \
    group_construct_context_id group_context_id_same_on_members \
    group_construct_existing_refused group_destruct group_destruct_twice_not_found \
    group_reconstruct_new_context_id group_destruct_nb group_nonmember_refused \
    group_nonmembers_fence_unaffected job_control_signal_accepted \
    job_control_signal_reaches_rank job_control_pause_not_supported
[ "$(grep -c '^PASS group_context_id_same_on_members ' "$WORK/out")" -eq 2 ] ||
    fail "both members must see the same context id"
echo "api: $(grep -c '^PASS' "$WORK/out") checks passed"

# a member finalizes without joining: the others' construct fails, no hang
run_job 60 -n 3 "$API" member-gone
[ $rc -ne 124 ] || fail "member-gone: the group construct hung"
[ "$(grep -c '^PASS group_member_gone_fails ' "$WORK/out")" -eq 2 ] || {
    cat "$WORK/out"
    fail "member-gone: ranks 0 and 1 must both see the construct fail"
}

# job control kill: rank 1 would sleep 30 s; it must die at once, by SIGKILL
run_job 25 -n 2 "$API" kill
[ $rc -ne 124 ] || fail "kill: the job outlived the kill"
# (rank 0 may itself be ended by pmigate's teardown before it prints)
grep -q '^FAIL' "$WORK/out" && fail "kill: $(grep '^FAIL' "$WORK/out")"
grep -q 'survived the kill' "$WORK/out" && fail "kill: rank 1 survived"
grep -q 'rank 1.*signal 9' "$WORK/out" || {
    cat "$WORK/out"
    fail "kill: pmigate does not report rank 1 killed by signal 9"
}
grep -q 'asked (job control) for signal 9' "$WORK/out" ||
    fail "kill: the job log does not say who asked for the kill"
finish
