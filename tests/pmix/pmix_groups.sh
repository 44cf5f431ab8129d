#!/bin/sh
# Groups built by invitation under a plain `pmigate run` (tests/pmix/pmix_groups.c):
# PMIx_Group_invite / _join / _leave with their events, the group they
# make (members, context id, a fence over it), bad joins and leaves
# refused, an unanswered invite timing out, and an invitee that goes away
# failing the invite instead of hanging the leader.
. "$(dirname "$0")/../lib.sh"
GROUPS_BIN=$top_builddir/tests/pmix/pmix_groups
make_workdir pg_pmix_groups
skip_unless_built "$PMIGATE" "$GROUPS_BIN"

# must_pass COUNT CHECK...: each check printed PASS on COUNT ranks, none FAIL
must_pass() {
    want=$1
    shift
    for check in "$@"; do
        [ "$(grep -c "^PASS $check " "$WORK/out")" -eq "$want" ] ||
            fail "$check: want $want PASS lines"
    done
}

run_job 120 -n 4 "$GROUPS_BIN"
if [ $rc -ne 0 ] || grep -q '^FAIL' "$WORK/out"; then
    cat "$WORK/out"
    fail "groups run: pmigate exited $rc"
fi
must_pass 1 invite_completes_with_accepters leader_hears_accept_and_decline \
    invite_existing_name_refused accepter_joins_group decliner_answered_at_once \
    duplicate_join_refused invite_self_refused join_after_decline_refused \
    join_without_invite_refused join_unknown_group_refused nonmember_leave_refused \
    leave_unknown_group_refused join_bad_option_refused uninvited_hears_nothing \
    member_leaves leave_twice_refused member_hears_left destruct_after_leave_spans_the_rest \
    unanswered_invite_times_out join_after_timeout_refused
must_pass 2 invitee_hears_invitation members_fence_and_share_cid nonmembers_not_told_of_leave
echo "groups: $(grep -c '^PASS' "$WORK/out") checks passed"

# an invitee finalizes instead of answering: the leader is told, no hang
run_job 60 -n 3 "$GROUPS_BIN" invitee-gone
[ $rc -ne 124 ] || { cat "$WORK/out"; fail "invitee-gone: the invite hung"; }
grep -q '^FAIL' "$WORK/out" && { cat "$WORK/out"; fail "invitee-gone: a check failed"; }
must_pass 1 invite_fails_when_invitee_gone leader_hears_invite_failed \
    accepter_fails_when_invitee_gone
finish
