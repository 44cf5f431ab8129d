#!/bin/sh
# pmigate's <pmix.h> against OpenPMIx 4.2's (Debian libpmix-dev), the ABI
# programs and Open MPI are built for.  Everything is derived at test time
# from the installed OpenPMIx headers, so a key or function OpenPMIx adds is
# noticed without editing this script:
#  1. every object-like macro of OpenPMIx's pmix.h / pmix_common.h /
#     pmix_deprecated.h (status codes, data types, attribute strings, ...)
#     exists in ours with the same value: one probe prints NAME=value
#     compiled against each header, and the two outputs must be identical;
#  2. the public structures have the same size and field offsets, and the
#     enumerations the same values (same probe);
#  3. every function-like macro exists, and every PMIx_* client function
#     OpenPMIx declares is declared by ours and defined in our libpmix (a
#     program taking all their addresses compiles and links).  The tool
#     calls (PMIx_tool_*) belong to <pmix_tool.h> and are left to its test.
# OPENPMIX_DIR overrides where OpenPMIx lives; missing, the test fails (it
# is the reference this test is about: ./dev deps installs libpmix-dev).
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
OPENPMIX_DIR=${OPENPMIX_DIR:-/usr/lib/x86_64-linux-gnu/pmix2}
OINC=$OPENPMIX_DIR/include
OURS=${PG_PMIX_INCLUDE:-$top_srcdir/pmix/include}
LIBDIR=$top_builddir/pmix/.libs
CC=${CC:-cc}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pg_abi.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

[ -f "$OINC/pmix.h" ] || { echo "FAIL: no OpenPMIx headers in $OINC (apt-get install libpmix-dev)"; exit 1; }
[ -e "$LIBDIR/libpmix.so" ] || { echo "FAIL: $LIBDIR/libpmix.so not built"; exit 1; }

HDRS="$OINC/pmix.h $OINC/pmix_common.h $OINC/pmix_deprecated.h"
# macro definitions, continuation lines joined
joined() { sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' $HDRS; }

# object-like macros with a value (not guards, not PMIX_EXPORT, not
# initialisers, not the configure-time build switches)
joined | sed -n 's/^#[ \t]*define[ \t][ \t]*\(PMIX_[A-Za-z0-9_]*\)[ \t][ \t]*\([^ \t].*\)$/\1 \2/p' |
    grep -v '^[A-Za-z0-9_]*(' | grep -v 'STATIC_INIT\|^PMIX_EXPORT \|_H \|{' |
    awk '{print $1}' | sort -u >"$WORK/objmacros"
# function-like macros
joined | sed -n 's/^#[ \t]*define[ \t][ \t]*\(PMIX_[A-Za-z0-9_]*\)(.*/\1/p' | sort -u >"$WORK/fnmacros"
# client functions (declared with PMIX_EXPORT in the client headers)
tr '\n' ' ' <"$OINC/pmix.h" | grep -o 'PMIX_EXPORT[^;]*;' | grep -o 'PMIx_[A-Za-z0-9_]*[ \t]*(' |
    tr -d ' \t(' | sort -u | grep -v '^PMIx_tool_' >"$WORK/functions"
cat "$OINC/pmix_common.h" "$OINC/pmix_deprecated.h" | tr '\n' ' ' | grep -o 'PMIX_EXPORT[^;]*;' |
    grep -o 'PMIx_[A-Za-z0-9_]*[ \t]*(' | tr -d ' \t(' | sort -u | grep -v '^PMIx_tool_' \
    >>"$WORK/functions"
sort -u -o "$WORK/functions" "$WORK/functions"
echo "OpenPMIx declares $(wc -l <"$WORK/objmacros") valued macros," \
    "$(wc -l <"$WORK/fnmacros") function-like macros, $(wc -l <"$WORK/functions") functions"
[ "$(wc -l <"$WORK/objmacros")" -gt 500 ] && [ "$(wc -l <"$WORK/functions")" -gt 80 ] ||
    fail "extraction from $OINC found too little (header layout changed?)"

# ---- 1 + 2: the value / layout probe ----------------------------------
cat >"$WORK/probe.c" <<'C'
#include <pmix.h>
#include <stddef.h>
#include <stdio.h>
static void pr_str(const char *n, const char *v) { printf("%s=\"%s\"\n", n, v); }
static void pr_num(const char *n, long long v) { printf("%s=%lld\n", n, v); }
#define PR_STR(n) pr_str(#n, (const char *)(n))
#define PR_NUM(n) pr_num(#n, (long long)(n))
#define SZ(t) printf("sizeof(%s)=%zu\n", #t, sizeof(t))
#define OFF(t, f) printf("offsetof(%s,%s)=%zu\n", #t, #f, offsetof(t, f))
int main(void)
{
#include "values.inc"
#include "layouts.inc"
    return 0;
}
C
# strings go through PR_STR, everything else through PR_NUM: decided by
# how OpenPMIx spells the value
while read -r name; do
    val=$(joined | sed -n "s/^#[ \t]*define[ \t][ \t]*$name[ \t][ \t]*\(.*\)$/\1/p" | head -1)
    case $val in
    \"*) echo "    PR_STR($name);" ;;
    *) echo "    PR_NUM($name);" ;;
    esac
done <"$WORK/objmacros" >"$WORK/values.inc"
cat >"$WORK/layouts.inc" <<'C'
    SZ(pmix_proc_t); OFF(pmix_proc_t, nspace); OFF(pmix_proc_t, rank);
    SZ(pmix_byte_object_t); OFF(pmix_byte_object_t, bytes); OFF(pmix_byte_object_t, size);
    SZ(pmix_data_array_t); OFF(pmix_data_array_t, type); OFF(pmix_data_array_t, size);
    OFF(pmix_data_array_t, array);
    SZ(pmix_data_buffer_t); OFF(pmix_data_buffer_t, base_ptr); OFF(pmix_data_buffer_t, pack_ptr);
    OFF(pmix_data_buffer_t, unpack_ptr); OFF(pmix_data_buffer_t, bytes_allocated);
    OFF(pmix_data_buffer_t, bytes_used);
    SZ(pmix_proc_info_t); OFF(pmix_proc_info_t, proc); OFF(pmix_proc_info_t, hostname);
    OFF(pmix_proc_info_t, executable_name); OFF(pmix_proc_info_t, pid);
    OFF(pmix_proc_info_t, exit_code); OFF(pmix_proc_info_t, state);
    SZ(pmix_envar_t); OFF(pmix_envar_t, envar); OFF(pmix_envar_t, value); OFF(pmix_envar_t, separator);
    SZ(pmix_coord_t); OFF(pmix_coord_t, view); OFF(pmix_coord_t, coord); OFF(pmix_coord_t, dims);
    SZ(pmix_cpuset_t); OFF(pmix_cpuset_t, source); OFF(pmix_cpuset_t, bitmap);
    SZ(pmix_topology_t); OFF(pmix_topology_t, source); OFF(pmix_topology_t, topology);
    SZ(pmix_geometry_t); OFF(pmix_geometry_t, fabric); OFF(pmix_geometry_t, uuid);
    OFF(pmix_geometry_t, osname); OFF(pmix_geometry_t, coordinates); OFF(pmix_geometry_t, ncoords);
    SZ(pmix_device_distance_t); OFF(pmix_device_distance_t, uuid); OFF(pmix_device_distance_t, osname);
    OFF(pmix_device_distance_t, type); OFF(pmix_device_distance_t, mindist);
    OFF(pmix_device_distance_t, maxdist);
    SZ(pmix_endpoint_t); OFF(pmix_endpoint_t, uuid); OFF(pmix_endpoint_t, osname);
    OFF(pmix_endpoint_t, endpt);
    SZ(pmix_value_t); OFF(pmix_value_t, type); OFF(pmix_value_t, data);
    SZ(pmix_info_t); OFF(pmix_info_t, key); OFF(pmix_info_t, flags); OFF(pmix_info_t, value);
    SZ(pmix_pdata_t); OFF(pmix_pdata_t, proc); OFF(pmix_pdata_t, key); OFF(pmix_pdata_t, value);
    SZ(pmix_app_t); OFF(pmix_app_t, cmd); OFF(pmix_app_t, argv); OFF(pmix_app_t, env);
    OFF(pmix_app_t, cwd); OFF(pmix_app_t, maxprocs); OFF(pmix_app_t, info); OFF(pmix_app_t, ninfo);
    SZ(pmix_query_t); OFF(pmix_query_t, keys); OFF(pmix_query_t, qualifiers); OFF(pmix_query_t, nqual);
    SZ(pmix_regattr_t); OFF(pmix_regattr_t, name); OFF(pmix_regattr_t, string);
    OFF(pmix_regattr_t, type); OFF(pmix_regattr_t, description);
    SZ(pmix_fabric_t); OFF(pmix_fabric_t, name); OFF(pmix_fabric_t, index); OFF(pmix_fabric_t, info);
    OFF(pmix_fabric_t, ninfo); OFF(pmix_fabric_t, module);
    SZ(pmix_proc_stats_t); OFF(pmix_proc_stats_t, proc); OFF(pmix_proc_stats_t, state);
    OFF(pmix_proc_stats_t, processor); OFF(pmix_proc_stats_t, sample_time);
    SZ(pmix_disk_stats_t); OFF(pmix_disk_stats_t, weighted_milliseconds_io);
    SZ(pmix_net_stats_t); OFF(pmix_net_stats_t, num_send_errs);
    SZ(pmix_node_stats_t); OFF(pmix_node_stats_t, sample_time); OFF(pmix_node_stats_t, diskstats);
    OFF(pmix_node_stats_t, nnetstats);
    SZ(pmix_nspace_t); SZ(pmix_key_t); SZ(pmix_rank_t); SZ(pmix_status_t); SZ(pmix_data_type_t);
    SZ(pmix_scope_t); SZ(pmix_data_range_t); SZ(pmix_persistence_t); SZ(pmix_info_directives_t);
    SZ(pmix_proc_state_t); SZ(pmix_job_state_t); SZ(pmix_alloc_directive_t); SZ(pmix_iof_channel_t);
    SZ(pmix_locality_t); SZ(pmix_device_type_t); SZ(pmix_link_state_t); SZ(pmix_bind_envelope_t);
    SZ(pmix_storage_medium_t); SZ(pmix_storage_access_type_t); SZ(pmix_group_opt_t);
    PR_NUM(PMIX_EQUAL); PR_NUM(PMIX_VALUE_COMPARISON_NOT_AVAIL); PR_NUM(PMIX_BOOL_TRUE);
    PR_NUM(PMIX_NON_BOOL); PR_NUM(PMIX_GROUP_DECLINE); PR_NUM(PMIX_GROUP_ACCEPT);
    PR_NUM(PMIX_GROUP_CONSTRUCT); PR_NUM(PMIX_GROUP_DESTRUCT); PR_NUM(PMIX_FABRIC_REQUEST_INFO);
    PR_NUM(PMIX_FABRIC_UPDATE_INFO);
C
probe() { # probe NAME INCDIR
    if ! $CC -std=gnu11 -w -I"$WORK" -I"$2" -o "$WORK/probe_$1" "$WORK/probe.c" 2>"$WORK/cc_$1.err"; then
        fail "the probe does not compile against $1's header:"
        grep -m 20 'error' "$WORK/cc_$1.err"
        return 1
    fi
    "$WORK/probe_$1" >"$WORK/out_$1"
}
if probe openpmix "$OINC" && probe pmigate "$OURS"; then
    if ! diff "$WORK/out_openpmix" "$WORK/out_pmigate" >"$WORK/diff"; then
        fail "values or layouts differ (< OpenPMIx, > pmigate):"
        head -40 "$WORK/diff"
    else
        echo "PASS: $(wc -l <"$WORK/out_pmigate") values, sizes and offsets identical"
    fi
fi

# ---- 3: function-like macros and functions -------------------------------
{
    echo '#include <pmix.h>'
    sed 's/.*/#ifndef &\n#error "missing macro &"\n#endif/' "$WORK/fnmacros"
    echo 'typedef void (*fn_t)(void);'
    echo 'static fn_t all[] = {'
    grep -v '^PMIx_Heartbeat$' "$WORK/functions" | sed 's/.*/    (fn_t)&,/'
    echo '};'
    echo 'int main(void) { return all[0] == 0; }'
} >"$WORK/link.c"
if ! $CC -std=gnu11 -I"$OURS" -o "$WORK/link" "$WORK/link.c" -L"$LIBDIR" -lpmix \
    2>"$WORK/link.err"; then
    fail "the program naming every OpenPMIx client macro and function does not build:"
    grep -m 30 'error\|undefined' "$WORK/link.err"
else
    echo "PASS: $(wc -l <"$WORK/fnmacros") function-like macros and $(wc -l <"$WORK/functions") functions present"
fi

if [ $failures -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
