#!/bin/sh
# check.sh DEBDIR BUILDDIR: pmigate's Debian packages on a real system (run
# by ./dev package --check, as root; ./dev test --full, which CI runs, ends with it).  They are
# installed beside Slurm's libpmi2, MPICH and OpenPMIx, which must keep every
# file and every library lookup they had; jobs run from /usr/bin/pmigate
# (MPICH, Slurm-libpmi2 and Open MPI programs, programs built against
# pmigate-dev through pkg-config, the probe under pmigate and hydra); then
# the packages are purged and nothing of them may be left.  The machine is
# shared (other checkouts test at the same time): the check holds a lock
# while pmigate is installed, refuses to run over an installed pmigate
# (it could not put that one back), and purges what it installed however
# it ends.
debdir=$(cd "${1:?usage: check.sh DEBDIR BUILDDIR}" && pwd)
top_builddir=$(cd "${2:?usage: check.sh DEBDIR BUILDDIR}" && pwd)
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
export top_srcdir top_builddir
. "$top_srcdir/tests/lib.sh"
PROGS=$top_builddir/tests/progs
BIN=/usr/bin/pmigate
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
privdir=/usr/lib/$triplet/pmigate
# the neighbours pmigate must not disturb (each must be installed)
neighbours="libpmi2-0 libpmi2-0-dev libpmix2 libpmix-dev mpich libmpich-dev"

if [ "$(id -u)" -ne 0 ]; then
    fail "installing packages needs root (CI runs as root)"
    finish
fi
for p in $neighbours; do
    dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
        fail "$p is not installed (./dev deps installs it): nothing to install beside"
done
set -- "$debdir"/pmigate_*.deb "$debdir"/pmigate-dev_*.deb
for deb in "$@"; do
    [ -f "$deb" ] || fail "no package $deb (./dev package builds them)"
done
[ $failures -eq 0 ] || finish
make_workdir pg_pkg

# One check at a time on this machine: a second one would purge the
# packages under the first.  The lock file stays in /run/lock (tmpfs).
exec 9>/run/lock/pmigate-package-check.lock
flock -w 1800 9 || { fail "another package check held the lock for 30 minutes"; finish; }
if dpkg-query -W -f='${db:Status-Abbrev}' pmigate pmigate-dev 2>/dev/null | grep -qv '^un'; then
    fail "pmigate is already installed as a package: this check would replace it and could not put it back"
    finish
fi

# Every path the packages hold, and which of them exist already (the
# directories they share with the system: /usr/bin, man3, ...).
for deb in "$@"; do
    dpkg-deb --fsys-tarfile "$deb" | tar -t
done | sed -e 's/^\.//' -e 's/\/$//' | grep . | sort -u >"$WORK/files"
while read -r f; do
    if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi
done <"$WORK/files" >"$WORK/before.present"

# What the system looks like without pmigate.
snapshot() {
    ldconfig -p | grep -E 'lib(pmi|pmi2|pmix)\.so' >"$WORK/$1.ldconfig"
    dpkg --verify $neighbours >"$WORK/$1.verify" 2>&1
    pkg-config --variable=libdir pmix >"$WORK/$1.pc" 2>&1
    find /usr /etc /opt /var -xdev -name '*pmigate*' 2>/dev/null | sort >"$WORK/$1.names"
}
snapshot before
dpkg-query -W -f='${Package}\n' | sort >"$WORK/packages.before"

apt_get() {
    DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600 "$@"
}
installed=
cleanup() {
    if [ -n "$installed" ]; then
        apt_get purge pmigate pmigate-dev >"$WORK/purge.log" 2>&1 || cat "$WORK/purge.log"
        # and what apt pulled in for them, so the machine is as it was
        dpkg-query -W -f='${Package}\n' | sort >"$WORK/packages.after"
        extra=$(comm -13 "$WORK/packages.before" "$WORK/packages.after")
        [ -z "$extra" ] || apt_get purge $extra >>"$WORK/purge.log" 2>&1
        installed=
    fi
}
trap 'cleanup; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

installed=yes
if apt_get install "$@" >"$WORK/install.log" 2>&1; then
    pass "pmigate and pmigate-dev installed beside $neighbours"
else
    fail "apt-get install of the packages failed"
    tail -n 20 "$WORK/install.log"
    finish
fi
# ---- beside the neighbours -------------------------------------------------
outside=$(grep -v -e "^$privdir\(/\|$\)" -e "^/usr/include/pmigate\(/\|$\)" \
    -e "^/usr/lib/$triplet/pkgconfig/pmigate-pmix\?2\?\.pc$" -e '^/usr/bin/pmigate$' \
    -e '^/usr/share/man/man1/pmigate\.1\.gz$' -e '^/usr/share/man/man3/\(libpmi\|PMI\)' \
    -e '^/usr/share/doc/pmigate' -e '^/usr/share/lintian/overrides/pmigate$' "$WORK/files" |
    while read -r f; do [ -d "$f" ] || echo "$f"; done)
[ -z "$outside" ] && pass "every file is in pmigate's own directories or names" ||
    fail "files outside pmigate's own places: $outside"
snapshot during
for what in ldconfig verify pc; do
    if cmp -s "$WORK/before.$what" "$WORK/during.$what"; then
        pass "unchanged with pmigate installed: $what"
    else
        fail "pmigate changed $what"
        diff "$WORK/before.$what" "$WORK/during.$what"
    fi
done
if [ -x "$PROGS/pmi2_wireup" ]; then
    slurm_lib=$(ldd "$PROGS/pmi2_wireup" | sed -n 's/.*libpmi2\.so\.0 => \([^ ]*\).*/\1/p')
    [ -n "$slurm_lib" ] &&
        [ "$(readlink -f "$slurm_lib")" = "$(readlink -f "/usr/lib/$triplet/libpmi2.so.0")" ] &&
        pass "a Slurm-libpmi2 program still loads Slurm's $slurm_lib" ||
        fail "a Slurm-libpmi2 program loads '$slurm_lib'"
else
    fail "tests/progs/pmi2_wireup not built (libpmi2-0-dev: ./dev deps)"
fi
hdr=$(echo '#include <pmix.h>' | cc -E $(pkg-config --cflags pmix) - 2>&1 | sed -n 's/^# 1 "\(.*\/pmix\.h\)".*/\1/p' | head -n 1)
case $hdr in
    */pmix2/include/pmix.h) pass "OpenPMIx's pkg-config still gives OpenPMIx's pmix.h ($hdr)" ;;
    *) fail "#include <pmix.h> with OpenPMIx's flags finds '$hdr'" ;;
esac

# ---- jobs from /usr/bin --------------------------------------------------
"$BIN" --version >"$WORK/version" 2>&1 && pass "$(head -n 1 "$WORK/version") runs from $BIN" ||
    fail "$BIN --version: $(cat "$WORK/version")"
PMIGATE=$BIN
if [ -x "$PROGS/mpi_hello" ]; then
    run_job 120 -n 4 "$PROGS/mpi_hello"
    if [ $rc -eq 0 ] && grep -q 'allreduce ok' "$WORK/out"; then
        pass "an MPICH job of 4 ranks under $BIN"
    else
        fail "MPICH mpi_hello N=4 under $BIN: exit $rc"
        head -n 20 "$WORK/out"
    fi
else
    fail "tests/progs/mpi_hello not built (mpich: ./dev deps)"
fi
# the installed pmigate's library path, Slurm-libpmi2 spawn, Open MPI
if PG_INSTALLED_PMIGATE=$BIN sh "$top_srcdir/tests/integration/installed.sh" >"$WORK/installed.log" 2>&1; then
    pass "tests/integration/installed.sh on $BIN (Slurm libpmi2 spawn, Open MPI through the private libpmix)"
else
    fail "tests/integration/installed.sh on $BIN"
    grep -v '^PASS' "$WORK/installed.log"
fi

# programs built against pmigate-dev load pmigate's libraries by their run path
build_with() { # NAME SOURCE PKG [LIBS]
    cc -o "$WORK/$1" "$top_srcdir/$2" $(pkg-config --cflags --libs "$3") $4 >"$WORK/cc.log" 2>&1 || {
        fail "cannot build $2 with pkg-config $3"
        cat "$WORK/cc.log"
        return 1
    }
    lib=$(ldd "$WORK/$1" | grep -o "$privdir/lib[a-z0-9]*\.so\.[0-9]*" | head -n 1)
    [ -n "$lib" ] && pass "$2 built with pkg-config $3 loads $lib" ||
        fail "$2 built with pkg-config $3 does not load from $privdir"
}
build_with pmi1_api tests/clients/pmi1_api.c pmigate-pmi &&
    run_ok_job "PMI-1 program (pmigate-pmi) N=4 under $BIN" 4 120 "$BIN" run -n 4 "$WORK/pmi1_api"
if build_with pmi2_threads tests/clients/pmi2_threads.c pmigate-pmi2 -lpthread; then
    run_ok_job "PMI-2 program (pmigate-pmi2) N=2 under $BIN" 2 180 "$BIN" run -n 2 "$WORK/pmi2_threads"
    # the run path holds under another launcher too: hydra, no LD_LIBRARY_PATH
    run_ok_job "PMI-2 program (pmigate-pmi2) N=2 under mpiexec.hydra" 2 180 mpiexec.hydra -n 2 "$WORK/pmi2_threads"
fi
build_with pmix_nodes tests/integration/pmix_nodes.c pmigate-pmix &&
    run_ok_job "PMIx program (pmigate-pmix) N=3 under $BIN" 3 120 "$BIN" run -n 3 "$WORK/pmix_nodes" 3
# the probe from /usr/bin: PMIx through the installed libpmix, PMI-1 under hydra
for launch in "$BIN run -n 2" "mpiexec.hydra -n 2"; do
    out=$(timeout 120 $launch "$BIN" probe 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^probe: .* rank 0 of 2, put/fence/get ok,'; then
        pass "$BIN probe under $launch: $(printf '%s\n' "$out" | grep '^probe: ')"
    else
        fail "$BIN probe under $launch: exit $rc"
        printf '%s\n' "$out" | head -n 10
    fi
done
# pmigate status from /usr/bin names the rank a fence waits for
"$BIN" run -n 2 sh -c 'if [ "$PMI_RANK" = 1 ]; then sleep 4; fi; exec "$0" probe' "$BIN" \
    >"$WORK/stuck.out" 2>&1 &
stuck=$!
seen=
for i in $(seq 1 30); do
    "$BIN" status "$stuck" >"$WORK/status" 2>&1
    if grep -q '^  fence 1: waiting for rank 1 (of 2)' "$WORK/status"; then
        seen=yes
        break
    fi
    sleep 0.1
done
wait "$stuck"
[ -n "$seen" ] && pass "$BIN status: '$(grep '^  fence' "$WORK/status")'" ||
    { fail "$BIN status did not name rank 1"; cat "$WORK/status"; }
for page in /usr/share/man/man1/pmigate.1.gz /usr/share/man/man3/libpmix.3.gz \
    /usr/share/man/man3/PMI2_Init.3.gz; do
    grep -qx "$page" "$WORK/files" || fail "no manual page $page in the packages"
done

# ---- purge --------------------------------------------------------------
cleanup
if dpkg-query -W -f='${db:Status-Abbrev}' pmigate pmigate-dev 2>/dev/null | grep -qv '^un'; then
    fail "pmigate is still known to dpkg after the purge: $(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' pmigate pmigate-dev)"
fi
left=$(while read -r f; do
    if { [ -e "$f" ] || [ -L "$f" ]; } && ! grep -qx "$f" "$WORK/before.present"; then echo "$f"; fi
done <"$WORK/files")
snapshot after
if [ -z "$left" ] && cmp -s "$WORK/before.names" "$WORK/after.names"; then
    pass "purged without a trace (every file of the packages gone, no *pmigate* name left in /usr /etc /opt /var)"
else
    fail "left after the purge: $left $(comm -13 "$WORK/before.names" "$WORK/after.names")"
fi
for what in ldconfig verify pc; do
    cmp -s "$WORK/before.$what" "$WORK/after.$what" || fail "$what differs after the purge"
done
finish
