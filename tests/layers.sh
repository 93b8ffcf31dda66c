#!/bin/sh
# tests/layers.sh — the library's files call only downward: the floors of doc/design.md
# ("Layers") held against the built objects. Each undefined stargemm symbol of an
# object must be defined by an object on its floor or below; every object of the
# library must be on a floor; the planning floor (pure) references no StarPU and no
# MPI symbol. Needs nm and the objects of the build; exits 77 without them.
doc="${SRCDIR:-$(dirname "$0")/..}/doc/design.md"
build=${BUILDDIR:-.}
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
[ -r "$doc" ] || { echo "SKIP: no $doc"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

# "path floor" for each file of the table; codelets/*.c expanded by the objects below.
awk '/^## Layers/ {on = 1; next} on && /^## / {exit}
	on && /^\| [0-9]+ / {
		split($0, col, "|"); floor = col[2] + 0; n = split(col[3], w, "`")
		for (i = 2; i <= n; i += 2) print w[i], floor
	}' "$doc" > "$work/floors"
[ -s "$work/floors" ] || { echo "FAIL: no floors table under '## Layers' in $doc"; exit 1; }

# The library's objects (the PIC ones of a shared build, else the static ones), each
# named by its source: src/.libs/x.o or src/libfoo_la-x.o -> src/x.c.
objs=$(find "$build/src" "$build/codelets" "$build/sched" -name '*.o' 2>/dev/null |
	grep -v '/tests/' | sort)
[ -n "$objs" ] || { echo "SKIP: no objects under $build/src"; exit 77; }
if printf '%s\n' "$objs" | grep -q '/\.libs/'; then
	objs=$(printf '%s\n' "$objs" | grep '/\.libs/')
fi
: > "$work/defs"; : > "$work/uses"; : > "$work/files"
for o in $objs; do
	src=$(printf '%s\n' "${o#"$build"/}" | sed 's#/\.libs/#/#; s#/[a-z_]*_la-#/#; s#\.o$#.c#')
	echo "$src" >> "$work/files"
	nm -g --defined-only "$o" | awk -v f="$src" 'NF == 3 && $3 ~ /^stargemm/ {print $3, f}' \
		>> "$work/defs"
	nm -u "$o" | awk -v f="$src" '{print f, $2}' >> "$work/uses"
done
sort -u "$work/files" -o "$work/files"

awk -v floors="$work/floors" -v defs="$work/defs" -v files="$work/files" '
	BEGIN {
		while ((getline l < floors) > 0) {
			split(l, w, " ")
			if (w[1] == "codelets/*.c") glob = w[2]; else fl[w[1]] = w[2]
		}
		while ((getline l < files) > 0) {
			if (!(l in fl) && l ~ /^codelets\// && glob) fl[l] = glob
			if (!(l in fl)) { print "FAIL: " l " is on no floor of doc/design.md"; bad++ }
		}
		while ((getline l < defs) > 0) { split(l, w, " "); owner[w[1]] = w[2] }
	}
	{
		f = $1; s = $2
		if ((f in fl) && fl[f] == 2 && s ~ /^(_?starpu|MPI_|PMPI_)/) {
			print "FAIL: " f " (planning, pure) references " s; bad++
		}
		if (!(s in owner) || owner[s] == f || !(f in fl) || !(owner[s] in fl)) next
		calls++
		if (fl[owner[s]] > fl[f]) {
			print "FAIL: " f " (floor " fl[f] ") calls " s " of " owner[s] \
			      " (floor " fl[owner[s]] ")"
			bad++
		}
	}
	END {
		printf "%d calls between files checked\n", calls
		exit bad > 0
	}' "$work/uses" || exit 1
echo "every call runs down the floors of doc/design.md: OK"
