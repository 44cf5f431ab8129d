#!/bin/sh
# Large values through libpmix (tests/pmix/pmix_large.c): a put over the
# PMIx value limit is refused with PMIX_ERR_BAD_PARAM and loses nothing
# staged before it; a commit of 39 MiB crosses in several messages and
# every byte reaches the other rank; `pmigate info` states the limits.
. "$top_srcdir/tests/lib.sh"
prog=$top_builddir/tests/pmix/pmix_large
make_workdir pg-pmix-large
[ -x "$prog" ] || { fail "tests/pmix/pmix_large was not built"; finish; }
run_ok_job "a too-large put is refused; a 39 MiB commit reaches the other rank" 2 120 \
    "$PMIGATE" run -n 2 "$prog"
"$PMIGATE" info >"$WORK/info" 2>&1
if grep -q '^PMIx limits: value [0-9]* bytes packed' "$WORK/info"; then
    pass "pmigate info states the PMIx limits"
else
    fail "pmigate info: no PMIx limits line"
    cat "$WORK/info"
fi
finish
