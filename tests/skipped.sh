#!/bin/sh
# tests/skipped.sh — the last line of `make check`: everything the run skipped and why,
# gathered from the tests' logs, where a skipped test (exit 77) or a skipped step of a
# passing test (a GPU peer without GPU, a peer not built) writes a line
# "SKIP: what: why". Usage: skipped.sh LOG...
all=""
for log in "$@"; do
	[ -f "$log" ] || continue
	name=$(basename "$log" .log)
	reasons=$(sed -n 's/^SKIP: //p' "$log" | sort -u | tr '\n' ';' | sed 's/;$//; s/;/; /g')
	[ -n "$reasons" ] && all="$all${all:+ | }$name: $reasons"
done
if [ -n "$all" ]; then
	echo "make check: skipped — $all"
else
	echo "make check: nothing skipped"
fi
