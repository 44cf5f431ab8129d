# skip.sh: what a test script does when something it needs is missing (a
# test program that was not built, a tool that is not installed).  Sourced
# by tests/lib.sh, tests/gateway/gw_lib.sh and tests/trace/trace_lib.sh, so
# every script decides alike.
#
# Outside CI the script, or the part of it that needs the missing piece, is
# skipped.  Under CI=true (.ci/run sets it) a missing prerequisite is an
# error, exit 99 (automake's ERROR, which fails `make check` and so
# `./dev test --full`): there ./dev deps has installed everything the tests use and
# the build has made every test program, so a missing piece is a broken
# set-up, and a run that tested less than it should must not pass.

# skip WHY: the script cannot run at all (exit 77; 99 under CI=true).
skip() {
    if [ "${CI:-}" = true ]; then
        echo "ERROR: $* (a missing prerequisite fails the run under CI=true)"
        exit 99
    fi
    echo "SKIP: $*"
    exit 77
}

# skip_part WHY: one part of the script cannot run and the rest goes on
# (under CI=true: exit 99 at once).
skip_part() {
    if [ "${CI:-}" = true ]; then
        echo "ERROR: $* (a missing prerequisite fails the run under CI=true)"
        exit 99
    fi
    echo "SKIP: $*"
}

# skip_unless_built FILE...: skip unless each FILE was built (executable).
skip_unless_built() {
    for built in "$@"; do
        [ -x "$built" ] || skip "$built not built"
    done
}
