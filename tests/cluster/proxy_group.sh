#!/bin/sh
# PMIx groups of a `pmigate proxy` job whose members run on separate hosts
# (the cluster in a box: 3 hosts, ranks 0-1 on host 1, 2-3 on host 2, 4-5
# on host 3), under Slurm (srun --mpi=pmix) and mpirun alike -- neither
# host has groups (docs/proxy.md, "Groups across nodes";
# tests/cluster/pmix_groups.c says what each rank does):
#   - ranks 0, 3, 5 (one per host) construct a group with
#     PMIX_GROUP_ASSIGN_CONTEXT_ID: all three get the same id, and each
#     reads every member's PMIX_GROUP_INFO key;
#   - at the same time ranks 1 and 4 construct and destruct another group
#     without asking for an id (none comes back), and rank 2 alone one
#     with an id: no other group's (the ids are the job's);
#   - rank 5 leaves: ranks 0 and 3 hear PMIX_GROUP_LEFT from it and
#     destruct the group between them; rank 5's destruct is refused;
#   - ranks 0, 3, 5 construct it again: a new id, the same for all three;
#   - rank 0 invites ranks 3 and 5 (PMIx_Group_invite): both hear
#     PMIX_GROUP_INVITED, 3 accepts and 5 declines, rank 0 hears both
#     answers and gets a group of ranks 0 and 3 with one id, which rank 3's
#     join gets too, and rank 3 hears PMIX_GROUP_CONSTRUCT_COMPLETE; the
#     two fence over the group's name across their hosts;
#   - a construct with a member on another host that does not join ends
#     with PMIX_ERR_TIMEOUT under PMIX_TIMEOUT, and leaves nothing behind:
#     the two construct it next, with one id.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/proxy_lib.sh"
PROG=$top_builddir/tests/cluster/pmix_groups
proxy_cluster_up pg_group 3 "$PROG"

# job HOW: the program over the 3 hosts under HOW (proxy_job); a job that
# timed out leaves Slurm as it found it.
job() {
    [ "$1" = slurm ] && cluster_wait_idle
    proxy_job "$1" 120 3 -n 6 "$PROG"
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || cluster_reset
}

# ids WHAT: the context ids the ranks printed for WHAT ("xg", "xg again",
# ...), one line each, in rank order.
ids() {
    sed -n "s/^pmix_groups rank \([0-9]\) on [^:]*: $1 cid=\([0-9]*\)\$/\1 \2/p" "$WORK/out" |
        sort -n | cut -d' ' -f2
}

# one_id WHAT N: the one id N ranks printed for WHAT, non-zero; empty
# otherwise.
one_id() {
    v=$(ids "$1" | sort -u)
    [ "$(ids "$1" | wc -l)" -eq "$2" ] && [ "$(echo "$v" | wc -l)" -eq 1 ] && [ "$v" != 0 ] &&
        echo "$v"
}

for how in slurm mpirun; do
    job $how
    hosts=$(sed -n 's/^pmix_groups rank [035] on \([^:]*\): xg cid=.*/\1/p' "$WORK/out" | sort -u | wc -l)
    first=$(one_id xg 3)
    if [ $rc -eq 0 ] && [ "$(grep -c 'pmix_groups rank [0-5]: ok$' "$WORK/out")" -eq 6 ] &&
        [ -n "$first" ] && [ "$hosts" -eq 3 ]; then
        pass "$how: a group over 3 hosts: one context id ($first) on every member, every member's PMIX_GROUP_INFO key read"
    else
        fail "$how: a group over 3 hosts: exit $rc, ids '$(ids xg | tr '\n' ' ')' on $hosts hosts"
        head -n 20 "$WORK/out"
    fi
    if [ "$(ids yg | tr '\n' ' ')" = "0 0 " ]; then
        pass "$how: a group over hosts 1 and 3 without PMIX_GROUP_ASSIGN_CONTEXT_ID: constructed, no id, destructed"
    else
        fail "$how: a group without an id asked: '$(ids yg | tr '\n' ' ')'"
    fi
    zg=$(one_id zg 1)
    again=$(one_id "xg again" 3)
    if [ -n "$zg" ] && [ -n "$again" ] && [ "$zg" != "$first" ] && [ "$zg" != "$again" ]; then
        pass "$how: a one-host group's id ($zg) is no other group's: the ids are the job's"
    else
        fail "$how: the one-host group's id '$zg' (others: '$first', '$again')"
    fi
    if [ "$(grep -c '^pmix_groups rank [03] on [^:]*: left heard, destructed$' "$WORK/out")" -eq 2 ]; then
        pass "$how: a member on host 3 leaves: hosts 1 and 2 hear PMIX_GROUP_LEFT and destruct the group without it"
    else
        fail "$how: leave across hosts"
        grep -v ': ok$' "$WORK/out" | head -n 10
    fi
    if [ -n "$again" ] && [ -n "$first" ] && [ "$again" != "$first" ]; then
        pass "$how: constructed again over 3 hosts: a new id ($again), the same on every member"
    else
        fail "$how: constructed again: ids '$(ids 'xg again' | tr '\n' ' ')' (first '$first')"
    fi
    ig=$(one_id ig 2)
    if [ $rc -eq 0 ] && [ -n "$ig" ] && [ "$ig" != "$first" ] && [ "$ig" != "$again" ] &&
        [ "$(grep -c '^pmix_groups rank [03] on [^:]*: fenced over ig, destructed$' "$WORK/out")" -eq 2 ]; then
        pass "$how: an invitation from host 1 to hosts 2 and 3: heard, one accept and one decline heard by the leader, a group of the leader and the accepter under one id ($ig), PMIX_GROUP_CONSTRUCT_COMPLETE heard, a fence over the group's name"
    else
        fail "$how: invite across hosts: exit $rc, ids '$(ids ig | tr '\n' ' ')'"
        grep -v ': ok$' "$WORK/out" | grep -v ' cid=' | head -n 10
    fi
    if grep -q '^pmix_groups rank 1 on [^:]*: tg timed out$' "$WORK/out" && [ -n "$(one_id tg 2)" ]; then
        pass "$how: a construct whose member on another host does not join ends with PMIX_ERR_TIMEOUT (PMIX_TIMEOUT 2 s); constructed next with one id"
    else
        fail "$how: PMIX_TIMEOUT on a construct across hosts"
    fi
done
finish
