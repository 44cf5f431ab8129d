#!/bin/sh
# pmi2_swap.sh: a program linked with Slurm's libpmi2.so.0
# (tests/progs/pmi2_features) runs with pmigate's libpmi2.so.0 put in its
# place by LD_LIBRARY_PATH: the loader must pick ours, the program must pass
# under pmigate, and under mpiexec.hydra both libraries must give the same
# per-rank verdicts (the program checks pmigate's semantics, which hydra 4.0
# does not have: its mapping for -n 2 on one slot is (vector,(0,1,1))).
. "$top_srcdir/tests/clients/clients_lib.sh"
prog=$top_builddir/tests/progs/pmi2_features
ours=$top_builddir/pmi2/.libs

[ -x "$prog" ] || skip "tests/progs/pmi2_features not built (Slurm's libpmi2-0-dev missing)"
if LD_LIBRARY_PATH=$ours ldd "$prog" | grep -q "libpmi2.so.0 => $ours/"; then
    pass "the loader takes libpmi2.so.0 from $ours"
else
    fail "LD_LIBRARY_PATH does not swap libpmi2.so.0"
    LD_LIBRARY_PATH=$ours ldd "$prog" | grep libpmi2
fi
if pmigate_ready; then
    run_ok_job "Slurm-linked pmi2_features with our libpmi2 under pmigate run -n 2" 2 180 \
        env LD_LIBRARY_PATH="$ours" "$PMIGATE" run -n 2 "$prog"
else
    fail "pmigate run -n 1 /bin/true does not work"
fi
if [ -n "$HYDRA" ]; then
    # hydra sometimes drops a dying rank's last output: ask up to 3 times
    verdicts() {
        for try in 1 2 3; do
            v=$(timeout 60 "$@" 2>&1 | grep '^pmi2_features rank' | sed 's/rank [0-9]*/rank R/' | sort -u)
            [ -n "$v" ] && break
        done
        printf '%s' "$v"
    }
    slurm=$(verdicts "$HYDRA" -n 2 "$prog")
    swapped=$(verdicts env LD_LIBRARY_PATH="$ours" "$HYDRA" -n 2 "$prog")
    if [ -n "$slurm" ] && [ "$slurm" = "$swapped" ]; then
        pass "under mpiexec.hydra both libraries report: $slurm"
    else
        fail "under mpiexec.hydra Slurm's libpmi2 says '$slurm', ours says '$swapped'"
    fi
else
    skip_part "mpiexec.hydra not installed (apt-get install mpich)"
fi
finish
