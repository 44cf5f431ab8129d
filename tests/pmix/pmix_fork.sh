#!/bin/sh
# fork() after PMIx_Init (tests/pmix/pmix_fork.c): the child's requests
# that need the server fail at once instead of hanging, and the parent's
# connection goes on unharmed (its job wires up and finalizes).
. "$top_srcdir/tests/lib.sh"
prog=$top_builddir/tests/pmix/pmix_fork
make_workdir pg-pmix-fork
[ -x "$prog" ] || { fail "tests/pmix/pmix_fork was not built"; finish; }
run_job 60 -n 2 "$prog"
if [ "$rc" -eq 0 ] && [ "$(grep -c ': ok$' "$WORK/out")" -eq 2 ]; then
    pass "a forked child's PMIx requests fail at once; the parent's job goes on"
else
    fail "fork after PMIx_Init: exit $rc"
    cat "$WORK/out"
fi
finish
