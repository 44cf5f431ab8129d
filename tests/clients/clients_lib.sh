# clients_lib.sh: shared helpers of the client-library integration tests
# (sourced).  Programs are libtool-built, so they run through their wrapper
# scripts, which point the loader at the freshly built libpmi / libpmi2.
: "${top_builddir:?set by make check}" "${top_srcdir:?set by make check}"
PMIGATE=$top_builddir/gateway/pmigate
HYDRA=$(command -v mpiexec.hydra || true)
failures=0

# True when `pmigate run` works at all on this tree.
pmigate_ready() {
    [ -x "$PMIGATE" ] && timeout 20 "$PMIGATE" run -n 1 /bin/true >/dev/null 2>&1
}

# run_job LABEL EXPECTED_OK_LINES LAUNCH...: runs a job with a timeout and
# checks that it exits 0 and prints the expected number of ": ok" lines.
run_job() {
    label=$1 want=$2
    shift 2
    out=$(timeout 180 "$@" 2>&1)
    rc=$?
    oks=$(printf '%s\n' "$out" | grep -c ': ok')
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$want" ]; then
        echo "PASS: $label"
        printf '%s\n' "$out" | grep ': ok' | head -n 1
    else
        echo "FAIL: $label (exit $rc, $oks of $want ranks ok)"
        printf '%s\n' "$out" | head -n 20
        failures=$((failures + 1))
    fi
}
