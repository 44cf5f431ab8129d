#!/bin/sh
# A tool attached to a running `pmigate run` (tests/pmix/pmix_tool.c,
# docs/user-guide.md "Debuggers and tools"): with nothing running it is
# told so at once; with two jobs it must choose one (by namespace, pid or
# socket); attached, it sees the job's namespace, size, process table
# (the ranks' live pids) and status, and hears the job's end.  A flood of
# silent connections and of tools that say nothing keeps no tool out,
# and another user is refused.  Then OpenPMIx's own examples/tool.c, built
# against pmigate's headers and libpmix, lists the job; its debugger.c
# --attach attaches and finds the job; debugger.c without --attach (a launch
# through the tool, PMIx_Spawn) is refused at once, as documented; its
# debuggerd.c builds (Debian's copy exits before PMIx_tool_init: nothing to
# run).
. "$(dirname "$0")/../lib.sh"
PROG=$top_builddir/tests/pmix/pmix_tool
make_workdir pg_pmix_tool
skip_unless_built "$PMIGATE" "$PROG"
# the jobs of this test alone: tools find jobs under $TMPDIR
TMPDIR=$WORK/tmp
export TMPDIR
mkdir "$TMPDIR" || exit 99

# JOB N RELEASE: `pmigate run -n N` of ranks that wait for the file
# RELEASE, in the background; $jobpid is pmigate
start_job() {
    "$PMIGATE" run -n "$1" sh -c "while [ ! -e '$2' ]; do sleep 0.05; done" \
        >"$WORK/job.$1.out" 2>&1 &
    jobpid=$!
    want=$1
    wait_for 30 ranks_started || fail "job of $1 ranks: its ranks did not start"
}
ranks_started() {
    [ "$(pgrep -c -x sh -P "$jobpid")" -ge "$want" ] && ls "$TMPDIR"/pmigate.*/pmi >/dev/null 2>&1
}

# 1. nothing runs: a clear error, at once
out=$(timeout 10 "$PROG" init 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "$out" | grep -q "no pmigate job of this user runs"; then
    pass "no job: PMIx_tool_init says so"
else
    fail "no job: exit $rc: $out"
fi

# 2. one job: found without a directive, the tool's own identity
start_job 3 "$WORK/release.a"
joba=$jobpid
socka=$(ls -d "$TMPDIR"/pmigate.*/pmi) # the only job yet
out=$(timeout 20 "$PROG" init 2>&1)
nsa=$(echo "$out" | sed -n 's/^TOOL .* SERVER \(kvs_[0-9_]*\)$/\1/p')
if [ -n "$nsa" ] && echo "$out" | grep -Eq "^TOOL $nsa\.tool\.[0-9]+ 0 SERVER $nsa\$"; then
    pass "one job: the tool attached as $(echo "$out" | sed -n 's/^TOOL \([^ ]*\) .*/\1/p')"
else
    fail "one job: $out"
fi

# 3. two jobs: no directive is refused, a namespace chooses
start_job 2 "$WORK/release.b"
jobb=$jobpid
out=$(timeout 20 "$PROG" init 2>&1)
rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "other pmigate jobs of this user run on this node: choose one"; then
    pass "two jobs: no choice is refused"
else
    fail "two jobs: exit $rc: $out"
fi
out=$(timeout 20 "$PROG" init "$nsa" 2>&1)
echo "$out" | grep -q "SERVER $nsa\$" && pass "two jobs: PMIX_SERVER_NSPACE chooses" ||
    fail "two jobs: PMIX_SERVER_NSPACE $nsa: $out"
out=$(timeout 20 "$PROG" init kvs_no_such 2>&1)
[ $? -ne 0 ] && pass "two jobs: an unknown namespace is refused" ||
    fail "two jobs: an unknown namespace attached: $out"

# 4. a flood of the job's socket keeps no tool out; another user is refused
if [ -n "$socka" ]; then
    out=$(timeout 60 "$PROG" flood "$socka" 200 2>&1)
    if echo "$out" | grep -q "^FLOOD [0-9]* connected, attach PMIX_SUCCESS" && ! echo "$out" | grep -q '^FAIL'; then
        pass "flood: $(echo "$out" | head -n 1)"
    else
        fail "flood: $out"
    fi
    if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
        # nobody finds no job of its own, and the job's socket by its path
        # keeps it out (the directory's rights, then the listener's uid check)
        chmod 755 "$WORK" "$TMPDIR"
        out=$(timeout 20 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
            "$PROG" init 2>&1)
        rc=$?
        [ $rc -ne 0 ] && echo "$out" | grep -q "no pmigate job of this user runs" &&
            pass "another user: finds no job" || fail "another user: exit $rc: $out"
        out=$(timeout 20 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
            "$PROG" flood "$socka" 1 2>&1)
        rc=$?
        [ $rc -ne 0 ] && echo "$out" | grep -q "cannot attach to the pmigate job at" &&
            pass "another user: refused at the socket" || fail "another user: exit $rc: $out"
        chmod 700 "$WORK"
    fi
fi

# 5. what a debugger asks, by pmigate's pid, and the job's end
timeout 60 "$PROG" attach "$joba" 3 "$WORK/release.a" sh >"$WORK/tool.out" 2>&1
rc=$?
wait "$joba"
jrc=$?
if [ $rc -eq 0 ] && [ $jrc -eq 0 ] && ! grep -q '^FAIL' "$WORK/tool.out"; then
    pass "attach: $(grep -c '^PASS' "$WORK/tool.out") checks"
else
    cat "$WORK/tool.out" "$WORK/job.3.out"
    fail "attach: tool exit $rc, pmigate exit $jrc"
fi
for check in tool_init tool_identity server_nspace namespaces query_job_size get_job_size \
    pmix.qry.ptable pmix.qry.lptable job_status namespace_info job_end_event tool_finalize; do
    grep -q "^PASS $check " "$WORK/tool.out" || fail "attach: no PASS for $check"
done

# 6. OpenPMIx's examples/tool.c, against pmigate's headers and libpmix
example=/usr/share/doc/libpmix-dev/examples/tool.c
if [ ! -r "$example" ] || ! command -v "${CC:-cc}" >/dev/null; then
    echo "SKIP: OpenPMIx's examples/tool.c is not installed (libpmix-dev)"
else
    # Debian ships the examples without the header OpenPMIx keeps beside
    # them: the locks and records tool.c uses, written here
    cat >"$WORK/examples.h" <<'HDR'
#include <pmix.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    volatile bool active;
    pmix_status_t status;
} mylock_t;
#define DEBUG_CONSTRUCT_LOCK(l) do { pthread_mutex_init(&(l)->mutex, NULL); \
    pthread_cond_init(&(l)->cond, NULL); (l)->active = true; (l)->status = PMIX_SUCCESS; } while (0)
#define DEBUG_DESTRUCT_LOCK(l) do { pthread_mutex_destroy(&(l)->mutex); \
    pthread_cond_destroy(&(l)->cond); } while (0)
#define DEBUG_WAIT_THREAD(l) do { pthread_mutex_lock(&(l)->mutex); while ((l)->active) \
    pthread_cond_wait(&(l)->cond, &(l)->mutex); pthread_mutex_unlock(&(l)->mutex); } while (0)
#define DEBUG_WAKEUP_THREAD(l) do { pthread_mutex_lock(&(l)->mutex); (l)->active = false; \
    pthread_cond_broadcast(&(l)->cond); pthread_mutex_unlock(&(l)->mutex); } while (0)
typedef struct {
    mylock_t lock;
    volatile bool active; /* debuggerd.c waits on this instead of the lock */
    pmix_info_t *info;
    size_t ninfo;
} myquery_data_t;
#define DEBUG_CONSTRUCT_MYQUERY(q) do { DEBUG_CONSTRUCT_LOCK(&(q)->lock); (q)->info = NULL; \
    (q)->ninfo = 0; } while (0)
#define DEBUG_DESTRUCT_MYQUERY(q) do { DEBUG_DESTRUCT_LOCK(&(q)->lock); \
    if ((q)->info != NULL) PMIX_INFO_FREE((q)->info, (q)->ninfo); } while (0)
typedef struct {
    mylock_t lock;
    bool exit_code_given;
    int exit_code;
} myrel_t;
#define EXAMPLES_HIDE_UNUSED_PARAMS(...) (void)0
HDR
    "${CC:-cc}" -o "$WORK/ompi_tool" -I"$WORK" -I"$top_srcdir/pmix/include" "$example" -lpthread \
        -L"$top_builddir/pmix/.libs" -lpmix -Wl,-rpath,"$top_builddir/pmix/.libs" \
        >"$WORK/cc.out" 2>&1 || { cat "$WORK/cc.out"; fail "examples/tool.c does not build"; }
    if [ -x "$WORK/ompi_tool" ]; then
        timeout 20 "$WORK/ompi_tool" >"$WORK/ompi.out" 2>&1
        rc=$?
        nsb=$(sed -n 's/^\t\(kvs_[0-9]*_0\)\t.*/\1/p' "$WORK/ompi.out")
        if [ $rc -eq 0 ] && grep -q "^ACTIVE NSPACES:" "$WORK/ompi.out" &&
            [ "$nsb" = "kvs_${jobb}_0" ] && grep -Eq "^	$nsb	.*sh\$" "$WORK/ompi.out"; then
            pass "examples/tool.c lists the job ($nsb)"
        else
            cat "$WORK/ompi.out"
            fail "examples/tool.c: exit $rc, listed '$nsb', pmigate runs kvs_${jobb}_0"
        fi
        timeout 20 "$WORK/ompi_tool" --nspace "kvs_${jobb}_0" >"$WORK/ompi.out" 2>&1
        grep -q "^JOB SIZE FOR NSPACE kvs_${jobb}_0: 2\$" "$WORK/ompi.out" &&
            pass "examples/tool.c --nspace: the job's size" ||
            { cat "$WORK/ompi.out"; fail "examples/tool.c --nspace: no size 2"; }
    fi
    examples=$(dirname "$example")
    for ex in debugger debuggerd; do
        "${CC:-cc}" -o "$WORK/ompi_$ex" -I"$WORK" -I"$top_srcdir/pmix/include" "$examples/$ex.c" \
            -lpthread -L"$top_builddir/pmix/.libs" -lpmix -Wl,-rpath,"$top_builddir/pmix/.libs" \
            >"$WORK/cc.out" 2>&1 || { cat "$WORK/cc.out"; fail "examples/$ex.c does not build"; }
    done
    [ -x "$WORK/ompi_debuggerd" ] && pass "examples/debuggerd.c builds against pmigate"
    if [ -x "$WORK/ompi_debugger" ]; then
        timeout 20 "$WORK/ompi_debugger" --attach "kvs_${jobb}_0" >"$WORK/ompi.out" 2>&1
        rc=$?
        if [ $rc -eq 0 ] && grep -q "^Query returned .*kvs_${jobb}_0" "$WORK/ompi.out"; then
            pass "examples/debugger.c --attach finds the job"
        else
            cat "$WORK/ompi.out"
            fail "examples/debugger.c --attach: exit $rc"
        fi
        # a launch through the tool: refused (docs/pmix-vs-openpmix.md), not hung
        timeout 20 "$WORK/ompi_debugger" >"$WORK/ompi.out" 2>&1
        rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
            grep -q "Application failed to launch with error: PMIX_ERR_NOT_SUPPORTED" "$WORK/ompi.out"; then
            pass "examples/debugger.c: a tool's PMIx_Spawn is refused at once"
        else
            cat "$WORK/ompi.out"
            fail "examples/debugger.c without --attach: exit $rc"
        fi
    fi
fi
: >"$WORK/release.b"
wait "$jobb" || fail "job b: pmigate exited $?"
finish
