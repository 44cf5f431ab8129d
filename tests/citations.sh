#!/bin/sh
# citations.sh: every citation in the tree resolves.  Comments and docs
# send the reader elsewhere in two forms, and both must lead somewhere:
#   1. a section of a doc: docs/<doc>.md, "<Section>" (also without the
#      comma, two sections as ("<A>", "<B>") or "<A>" and "<B>", wrapped
#      over comment lines or not): the file exists and has a markdown
#      heading that is the section or starts with it (a citation may
#      shorten a long heading at a word's end);
#   2. a repository path in a comment or doc (see pmi1/client/pg_pmi1_cl.h):
#      a source, script, build file or doc of that name exists (a generated
#      parser .c counts when its .rl does; programs and libraries are built,
#      so they are not looked for), and anything named under docs/.
# Each broken one is printed as a FAIL line; the script exits 1 if any.
# Read: the sources, scripts, build files and docs (in a checkout, git's
# files, new ones not yet committed included; in an unpacked tarball, the
# same kinds of files).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || exit 99

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# The files to read, and every path that exists (files and folders).
tarball=0
# (A tarball unpacked inside a checkout, as make distcheck does, is not the
# checkout: git must know this very folder as its top.)
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
    git ls-files --cached --others --exclude-standard >"$tmp/all"
else
    # An unpacked tarball carries what the build, the tests and the reader
    # need, not every file a comment names (the room READMEs, the cluster
    # scripts): there only docs/ is checked for paths.
    tarball=1
    find . -path './_*' -prune -o -path ./.git -prune -o -type f -print |
        sed 's#^\./##' >"$tmp/all"
fi
# Recorded data (fuzz corpora, captures, traces) is not prose.
grep -E '(\.(c|h|rl|def|sh|am|ac|md)|^dev|\.ci/run)$' "$tmp/all" |
    grep -v -E '^tests/(fuzz/corpus|captures|traces)/' >"$tmp/files"
{
    cat "$tmp/all"
    sed -n 's#/[^/]*$##p' "$tmp/all" | sort -u |
        awk -F/ '{ p = $1; print p; for (i = 2; i <= NF; i++) { p = p "/" $i; print p } }'
} | sort -u >"$tmp/paths"

# The headings of every doc, "docs/X.md<TAB>heading", outside code blocks.
for d in docs/*.md; do
    awk -v d="$d" '/^```/ { code = !code; next }
        !code && /^#+ / { sub(/^#+ +/, ""); sub(/ +$/, ""); print d "\t" $0 }' "$d"
done >"$tmp/headings"

# shellcheck disable=SC2046 # the file names hold no blanks
awk -v headings="$tmp/headings" -v paths="$tmp/paths" -v tarball="$tarball" '
function norm(s) {
    gsub(/`/, "", s)
    gsub(/[ \t]+/, " ", s)
    sub(/^ /, "", s)
    sub(/ $/, "", s)
    return s
}
# line: the line of the file that holds offset o of its joined text.
function line(o,    i) {
    for (i = nl; i > 1 && lo[i] > o; i--)
        ;
    return i
}
function has_heading(doc, s,    n, i, h, c) {
    n = nh[doc]
    for (i = 1; i <= n; i++) {
        h = hd[doc, i]
        if (h == s)
            return 1
        if (substr(h, 1, length(s)) == s) {
            c = substr(h, length(s) + 1, 1)
            if (c !~ /[A-Za-z0-9_]/)
                return 1
        }
    }
    return 0
}
function fail(msg) {
    print "FAIL: " msg
    failures++
}
# The doc citations in the joined text of one file.
function check_sections(    t, base, doc, rest, at, q, s) {
    t = text
    base = 0
    while (match(t, /docs\/[A-Za-z0-9_.-]+\.md/)) {
        doc = substr(t, RSTART, RLENGTH)
        at = line(base + RSTART)
        rest = substr(t, RSTART + RLENGTH)
        base += RSTART + RLENGTH - 1
        t = rest
        if (!match(rest, /^[,:]? ?\(?"/))
            continue
        for (;;) {
            rest = substr(rest, RLENGTH + 1)
            q = index(rest, "\"")
            if (q == 0)
                break
            s = norm(substr(rest, 1, q - 1))
            rest = substr(rest, q + 1)
            if (!(doc in known))
                fail(FILE ":" at " cites " doc " \"" s "\": no such file")
            else if (!has_heading(doc, s))
                fail(FILE ":" at " cites " doc " \"" s "\": no such heading")
            if (!match(rest, /^ ?(,|and|, and) ?"/))
                break
        }
    }
}
# The repository paths named in one line of a file.
function check_paths(l, n,    t, p, c) {
    t = " " l
    while (match(t, /[^A-Za-z0-9_.\/$<>{}~@%*-][A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_.-]+)+/)) {
        p = substr(t, RSTART + 1, RLENGTH - 1)
        t = substr(t, RSTART + RLENGTH)
        if (t ~ /^[\/<$*{]/)
            continue # a pattern or a path with variables in it
        sub(/[.]+$/, "", p)
        sub(/\/+$/, "", p)
        # Programs, libraries and other build outputs are not in the tree:
        # only a source, script, build file or doc must exist.
        if (p !~ /\.(c|h|rl|def|sh|am|ac|md)$/ && p !~ /^docs\//)
            continue
        if (tarball && p !~ /^docs\//)
            continue
        c = p
        sub(/\/.*/, "", c)
        if (!(c in top) || (p in exists))
            continue
        if (p ~ /\.c$/ && (substr(p, 1, length(p) - 2) ".rl") in exists)
            continue
        fail(FILE ":" n " names " p ": no such file")
    }
}
function finish() {
    if (FILE != "")
        check_sections()
    text = ""
    nl = 0
}
BEGIN {
    FS = "\t"
    while ((getline l < headings) > 0) {
        split(l, f, "\t")
        known[f[1]] = 1
        hd[f[1], ++nh[f[1]]] = norm(f[2])
    }
    while ((getline l < paths) > 0) {
        exists[l] = 1
        if (l ~ /\//) {
            c = l
            sub(/\/.*/, "", c)
            top[c] = 1
        }
    }
}
FNR == 1 { finish(); FILE = FILENAME; incomment = 0 }
{
    l = $0
    # In C, only comments cite: a line inside or opening a comment; in a
    # script or build file, a comment line (the rest names build outputs).
    if (FILE ~ /\.(sh|am|ac)$/ || FILE == "dev") {
        if (l !~ /^[ \t]*#/)
            l = ""
    } else if (FILE ~ /\.(c|h|rl)$/) {
        cited = incomment || l ~ /\/\*|\/\//
        if (l ~ /\/\*/ && l !~ /\*\//)
            incomment = 1
        else if (incomment && l ~ /\*\//)
            incomment = 0
        if (!cited)
            l = ""
    }
    check_paths(l, FNR)
    # Join the lines without their comment leaders, so a citation wrapped
    # over two lines reads as one.
    sub(/^[ \t]*(\/\*+|\*+|\/\/+|#+)?[ \t]*/, "", l)
    lo[++nl] = length(text) + 1
    text = text l " "
}
END {
    finish()
    if (failures > 0) {
        print failures " broken citation(s)"
        exit 1
    }
}' $(cat "$tmp/files")
