#!/usr/bin/env bash
# layers.sh: the house's layering holds (docs/architecture.md, "The
# rooms").  Every source folder is a room whose README.md says, in one line
# "May include: ...", which other rooms its files may reach.  Checked:
#   1. every room has that line, and names only rooms that exist;
#   2. every #include "dir/file.h" of a room's file names its own room or
#      one it may include;
#   3. every symbol a built object of a room uses from another room's object
#      (its call and data arrows, read with nm) goes to a room it may
#      include -- an include can be dodged with a prototype, a call cannot;
#   4. no circle of calls between the files of gateway/ (tsort finds them):
#      a file calls down or sideways, never back into one that calls it.
# Headers without a folder ("config.h", <pmix_common.h>: the Standard's
# ABI, on the include path) belong to no room.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir/_build}"
cd "$top_srcdir" || exit 99

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# The rooms: every folder outside tests/, docs/, debian/ and config/ that
# holds C or ragel sources.
rooms=$(find . -path ./tests -prune -o -path ./docs -prune -o -path ./debian -prune \
    -o -path ./config -prune -o -path './_*' -prune -o -path ./.git -prune \
    -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.rl' \) -printf '%h\n' |
    sed 's#^\./##' | sort -u)

# allowed ROOM: the rooms ROOM's README.md says it may include, one a line.
allowed() {
    local line
    line=$(grep -m1 '^May include:' "$1/README.md" 2>/dev/null) || return 1
    printf '%s\n' "${line#May include:}" | tr ',' '\n' |
        sed 's/[`.]//g; s#/$##; s/^ *//; s/ *$//' | grep -v -e '^$' -e '^nothing$'
    return 0
}

declare -A may # "from to" -> 1
for r in $rooms; do
    if ! list=$(allowed "$r"); then
        fail "$r/README.md has no 'May include:' line"
        continue
    fi
    for t in $list; do
        printf '%s\n' "$rooms" | grep -qx "$t" || fail "$r/README.md names '$t', which is no room"
        may["$r $t"]=1
    done
done

# 2. includes
for r in $rooms; do
    for f in "$r"/*.[ch] "$r"/*.rl; do
        [ -f "$f" ] || continue
        grep -o '^#include "[^"]*/[^"]*"' "$f" | sed 's/^#include "//; s/"$//' |
            while read -r inc; do
                t=$(dirname "$inc")
                [ "$t" = config ] && continue # configure's config.h, made at build time
                [ "$t" = "$r" ] || [ -n "${may["$r $t"]:-}" ] || echo "$f includes $inc: $r may not include $t"
            done
    done
done >"${TMPDIR:-/tmp}/layers.$$"
while read -r v; do fail "$v"; done <"${TMPDIR:-/tmp}/layers.$$"
rm -f "${TMPDIR:-/tmp}/layers.$$"

# 3. and 4. calls, from the built objects: "symbol file" for what each
# object defines and what it uses.  An object's name is its library's or
# program's prefix and the source's name (gateway/job/.libs/
# libpggateway_la-pg_job.o, gateway/proxy/pmigate-pg_proxy.o).  The
# Standard's API (PMIx_*, pmix_*) belongs to no room, like its headers: the
# proxy's host calls name OpenPMIx's functions, which pmigate's libpmix
# defines too.
objs=$(cd "$top_builddir" 2>/dev/null && find $rooms -maxdepth 2 -name '*.o' 2>/dev/null | sort -u)
if [ -z "$objs" ]; then
    fail "no built objects under $top_builddir (build first)"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 99
    trap 'rm -rf "$work"' EXIT
    for o in $objs; do
        d=$(dirname "$o")
        [ "$(basename "$d")" = .libs ] && d=$(dirname "$d")
        src=$d/$(basename "$o" .o | sed 's/^.*-//').c
        nm --defined-only -g "$top_builddir/$o" | awk -v f="$src" 'NF==3 {print $3, f}' >>"$work/defs"
        nm -u "$top_builddir/$o" | awk -v f="$src" '$NF !~ /^(PMIx|pmix)_/ {print $NF, f}' >>"$work/uses"
    done
    # a symbol defined by several objects (one source built into two
    # libraries) keeps its first definer: they are the same file.
    sort -u -k1,1 "$work/defs" >"$work/defs1"
    sort -k1,1 "$work/uses" >"$work/uses1"
    join "$work/uses1" "$work/defs1" | awk '$2 != $3 {print $2, $3, $1}' | sort -u >"$work/arrows"
    while read -r from to sym; do
        fr=$(dirname "$from") tr=$(dirname "$to")
        [ "$fr" = "$tr" ] || [ -n "${may["$fr $tr"]:-}" ] ||
            echo "$from uses $sym of $to: $fr may not include $tr"
    done <"$work/arrows" | sort -u -t: -k1,1 >"$work/up"
    while read -r v; do fail "$v"; done <"$work/up"
    awk '$1 ~ /^gateway\// && $2 ~ /^gateway\// {print $1, $2}' "$work/arrows" | sort -u >"$work/gw"
    if ! tsort "$work/gw" >/dev/null 2>"$work/loops"; then
        # tsort names each circle's files after "input contains a loop:"
        awk '/contains a loop/ {if (c) print c; c = ""; next} {sub(/^tsort: /, ""); c = c (c ? " -> " : "") $0}
            END {if (c) print c}' "$work/loops" >"$work/circles"
        while read -r c; do fail "a circle of calls in gateway/: $c"; done <"$work/circles"
    fi
    echo "checked $(wc -l <"$work/arrows") call arrows between $(echo "$objs" | wc -w) objects"
fi

if [ $failures -ne 0 ]; then
    echo "$failures layering violation(s)"
    exit 1
fi
echo "the rooms keep their layers: $(echo "$rooms" | wc -w) rooms"
exit 0
