# wait.sh: waiting on a condition instead of sleeping a guessed time.
# Sourced by tests/lib.sh, tests/gateway/gw_lib.sh and
# tests/trace/trace_lib.sh, and by a rank's own shell where a rank must wait
# for something (tests/gateway/stdio.sh).  A sleep that stands for "the
# other side is ready by now" is wrong on a loaded machine and slow on an
# idle one; waiting on what the step needs is neither, and the deadline
# turns a hang into a failure the caller names.

# wait_for SECONDS COMMAND [ARGS...]: runs COMMAND every 0.05 s until it
# succeeds (status 0) or SECONDS have passed (status 1; the caller says
# what did not happen).  COMMAND may be a shell function.
wait_for() {
    _wait_end=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$_wait_end" ] || return 1
        sleep 0.05
    done
}
