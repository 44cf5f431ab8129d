#!/bin/sh
# The installed pmigate, as users run it (make installcheck: ./dev test runs
# it after ./dev build's install, distcheck after its own, ./dev package
# --check on the packaged /usr/bin/pmigate): the directory it puts first
# on its ranks' LD_LIBRARY_PATH holds pmigate's libpmix.so.2 and nothing
# else, so that Open MPI's PMIx component loads pmigate's libpmix while a
# program linked with Slurm's libpmi2 (or any other PMI library) keeps its
# own.  Before, the whole libdir went first, and pmigate's libpmi2.so.0
# replaced Slurm's under every Slurm-libpmi2 program: PMI2_Job_Spawn, whose
# info structs differ between the two headers, crashed.
. "$(dirname "$0")/hi_lib.sh"
INST=${PG_INSTALLED_PMIGATE:-}
if [ -z "$INST" ] || [ ! -x "$INST" ]; then
    fail "no installed pmigate at '${INST}': install first (make install, then make installcheck)"
    finish
fi
PMIGATE=$INST

run_job 30 -n 1 sh -c 'printf "%s\n" "$LD_LIBRARY_PATH"'
first=$(head -n 1 "$WORK/out" | cut -d: -f1)
if [ $rc -eq 0 ] && [ -e "$first/libpmix.so.2" ]; then
    pass "the installed pmigate puts its libpmix directory first ($first)"
else
    fail "first on the ranks' LD_LIBRARY_PATH: '$first' (exit $rc), not a directory with libpmix.so.2"
fi
others=$(ls "$first" 2>/dev/null | grep -v '^libpmix\.so\.2$')
[ -z "$others" ] && pass "that directory holds libpmix.so.2 alone" ||
    fail "that directory also holds: $others"

# a Slurm-libpmi2 program that spawns: Slurm's PMI2_Job_Spawn, not ours
if [ -x "$PROGS/pmi2_spawn" ]; then
    run_job 120 -n 1 "$PROGS/pmi2_spawn" parent 1 2
    if [ $rc -eq 0 ] && grep -q "pmi2_spawn parent: ok" "$WORK/out"; then
        pass "a Slurm-libpmi2 program spawns under the installed pmigate"
    else
        fail "Slurm-libpmi2 spawn under the installed pmigate: exit $rc"
        head -n 20 "$WORK/out"
    fi
else
    fail "tests/progs/pmi2_spawn not built (Slurm's libpmi2-0-dev: ./dev deps)"
fi

# an Open MPI program finds pmigate's libpmix there
if [ -x "$PROGS/ompi_hello" ]; then
    run_job 120 -n 2 "$PROGS/ompi_hello" --size=2
    oks=$(grep -c "^ompi_hello: rank [0-9]* of 2: ok$" "$WORK/out")
    if [ $rc -eq 0 ] && [ "$oks" -eq 2 ]; then
        pass "Open MPI ranks wire up through the installed pmigate's libpmix"
    else
        fail "ompi_hello N=2 under the installed pmigate: exit $rc, $oks of 2 ok"
        head -n 20 "$WORK/out"
    fi
else
    fail "tests/progs/ompi_hello not built (libopenmpi-dev: ./dev deps)"
fi
finish
