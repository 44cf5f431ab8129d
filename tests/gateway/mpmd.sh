#!/bin/sh
# MPMD: segments separated by ':' form one job (one PMI_JOBID, ranks numbered
# across segments, PMI_SIZE the total), each with its own program, arguments
# and --env; the PMI environment MPICH and Slurm's libpmi2 need is set.
. "$top_srcdir/tests/gateway/gw_lib.sh"

"$PMIGATE" run --genv G=all -n 2 --env SEG=first "$PROG" env PMI_RANK PMI_SIZE PMI_JOBID SEG G \
    : -n 1 --env SEG=second "$PROG" env PMI_RANK PMI_SIZE PMI_JOBID SEG G >"$TMP/out" ||
    fail "MPMD job failed"
for r in 0 1 2; do
    expect_grep "^rank $r PMI_RANK=$r\$" "$TMP/out" "rank $r"
    expect_grep "^rank $r PMI_SIZE=3\$" "$TMP/out" "rank $r size"
    expect_grep "^rank $r G=all\$" "$TMP/out" "rank $r --genv"
done
expect_grep '^rank 1 SEG=first$' "$TMP/out" "segment 1 env"
expect_grep '^rank 2 SEG=second$' "$TMP/out" "segment 2 env"
[ "$(grep PMI_JOBID= "$TMP/out" | sed 's/.*=//' | sort -u | wc -l)" -eq 1 ] ||
    fail "segments got different PMI_JOBIDs"

"$PMIGATE" run -n 1 "$PROG" args one two : -n 2 "$PROG" args three >"$TMP/out" ||
    fail "MPMD args"
expect_grep '^rank 0 args: one two$' "$TMP/out" "segment 1 args"
expect_grep '^rank 2 args: three$' "$TMP/out" "segment 2 args"

PMI_ID=7 PMIX_NAMESPACE=foreign "$PMIGATE" run -n 2 "$PROG" env PMI_FD PMI_ID PMIX_NAMESPACE \
    MPI_LOCALNRANKS MPI_LOCALRANKID PMIGATE_PMI_PORT >"$TMP/out" || fail "env job"
expect_grep '^rank 1 PMI_FD=[0-9][0-9]*$' "$TMP/out" "PMI_FD"
expect_grep '^rank 1 PMI_ID=(unset)$' "$TMP/out" "inherited PMI_ID dropped"
expect_grep '^rank 1 PMIX_NAMESPACE=(unset)$' "$TMP/out" "inherited PMIX_NAMESPACE dropped"
expect_grep '^rank 1 MPI_LOCALNRANKS=2$' "$TMP/out" "MPI_LOCALNRANKS"
expect_grep '^rank 1 MPI_LOCALRANKID=1$' "$TMP/out" "MPI_LOCALRANKID"
expect_grep '^rank 0 PMIGATE_PMI_PORT=/' "$TMP/out" "PMIGATE_PMI_PORT"
exit 0
