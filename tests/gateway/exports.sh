#!/bin/sh
# The pmigate executable exports none of its own functions (gateway/include.am,
# PG_EXE_EXPORTS_NONE).  It links OpenPMIx's libpmix for `pmigate proxy`, and
# that library calls PMIx_Value_load, PMIx_Info_xfer, ... through its PLT: had
# pmigate its codec's copies of those names (wire/pack/) in its dynamic symbol
# table, OpenPMIx would bind to them, which lack types OpenPMIx uses.  The
# codec's public names stay exported by pmigate's libpmix.so.2.  The
# exception is MPIR's symbols, which a debugger looks up by name: they are
# in the dynamic table, so a package's stripped pmigate still has them.
. "$top_srcdir/tests/gateway/gw_lib.sh"

command -v nm >/dev/null || fail "nm (binutils) is needed"

# nm -D: what the executable defines in its dynamic symbol table
nm -D --defined-only "$PMIGATE" >"$TMP/defined" || fail "nm -D $PMIGATE failed"
if awk '{ print $NF }' "$TMP/defined" | grep -E '^(PMIx_|PMI_|PMI2_|pg_)' >"$TMP/ours"; then
    cat "$TMP/ours" >&2
    fail "pmigate exports $(wc -l <"$TMP/ours") of its own functions"
fi

# MPIR's, every one (gateway/mpir.dynlist)
for sym in MPIR_being_debugged MPIR_proctable MPIR_proctable_size MPIR_debug_state \
    MPIR_debug_abort_string MPIR_i_am_starter MPIR_partial_attach_ok MPIR_Breakpoint; do
    awk '{ print $NF }' "$TMP/defined" | grep -qx "$sym" ||
        fail "pmigate does not export $sym: a stripped pmigate would hide it from debuggers"
done

# the library that must export them still does
libpmix="$top_builddir/pmix/.libs/libpmix.so.2"
[ -f "$libpmix" ] || fail "$libpmix was not built"
nm -D --defined-only "$libpmix" | grep -q ' T PMIx_Value_load$' ||
    fail "pmigate's libpmix.so.2 does not export PMIx_Value_load"

# and the dynamic linker binds OpenPMIx's own calls inside OpenPMIx: every
# symbol bound at load (LD_BIND_NOW), none of the PMIx_ ones to pmigate
LD_BIND_NOW=1 LD_DEBUG=bindings "$PMIGATE" --version >/dev/null 2>"$TMP/bindings" ||
    fail "pmigate --version failed"
grep -q "symbol \`PMIx_" "$TMP/bindings" || fail "no PMIx_ binding seen: is OpenPMIx's libpmix linked?"
if grep "to [^ ]*pmigate .*symbol \`PMIx_" "$TMP/bindings" >"$TMP/bad"; then
    head -3 "$TMP/bad" >&2
    fail "OpenPMIx's calls bind to pmigate's own PMIx_ functions"
fi
echo "pmigate exports no function of its own; OpenPMIx binds to itself"
