#!/bin/sh
# The timeline of a real 4-rank job: well-formed XML (xmllint from
# libxml2-utils, else python3's parser), one row per rank, a legend, an axis,
# and the rank that entered each fence last marked.
. "$top_srcdir/tests/trace/trace_lib.sh"
need_prog pmi2_wireup

record four 4 pmi2_wireup
"$PMIGATE" trace timeline "$TMP/four.trace" -o "$TMP/four.svg" || fail "timeline failed"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$TMP/four.svg" || fail "the timeline is not well-formed XML"
elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$TMP/four.svg" ||
        fail "the timeline is not well-formed XML"
else
    skip "no XML parser (apt-get install libxml2-utils)"
fi
rows=$(grep -c '>rank [0-9]*</text>' "$TMP/four.svg")
[ "$rows" -eq 4 ] || fail "the timeline has $rows rank rows, expected 4"
expect_grep 'fence/barrier wait' "$TMP/four.svg" "legend"
expect_grep 'time since the first message' "$TMP/four.svg" "axis"
[ "$(grep -c 'entered last</title></path>' "$TMP/four.svg")" -eq 2 ] ||
    fail "the two fences' last ranks are not marked"
grep -q 'href=\|<script\|<image' "$TMP/four.svg" && fail "the timeline refers to something outside"
"$PMIGATE" trace timeline "$TMP/four.trace" 2>/dev/null
expect_status 2 $? "timeline without -o"
exit 0
