# clients_lib.sh: shared helpers of the client-library integration tests
# (sourced).  Programs are libtool-built, so they run through their wrapper
# scripts, which point the loader at the freshly built libpmi / libpmi2.
# Running, counting and the verdict come from tests/lib.sh.
: "${top_builddir:?set by make check}" "${top_srcdir:?set by make check}"
. "$top_srcdir/tests/lib.sh"
HYDRA=$(command -v mpiexec.hydra || true)

# True when `pmigate run` works at all on this tree.
pmigate_ready() {
    [ -x "$PMIGATE" ] && timeout 20 "$PMIGATE" run -n 1 /bin/true >/dev/null 2>&1
}

