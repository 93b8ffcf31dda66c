#!/bin/sh
# tests/plot.sh — bench/plot.sh on the benchmarks' own CSV output: tiny runs of
# stargemm_pdgemm (two sizes, two tiles, the BLAS peer, out of core on a disk node) and
# of stargemm_bsgemm (in core and out of core) give the files; every plot comes out as
# a non-empty PNG and SVG, a file with several headers, comments and summary lines (as
# bench/compare_dbcsr.sh prints) is read, and bad input is refused with a message that
# names the file, the line or the column. Exit 77 when gnuplot is not installed.
# Usage (from make check): BUILDDIR=... SRCDIR=... MPIEXEC=... tests/plot.sh
set -e
if ! command -v gnuplot >/dev/null; then
	echo "SKIP: bench/plot.sh: gnuplot is not installed (Debian package gnuplot-nox)"
	exit 77
fi
dir="$BUILDDIR/tests/plot.dir"
rm -rf "$dir" && mkdir -p "$dir/disk" "$dir/img"
plot="$SRCDIR/bench/plot.sh"
pdgemm="$BUILDDIR/bench/stargemm_pdgemm"
bsgemm="$BUILDDIR/bench/stargemm_bsgemm"
run() {
	"$SRCDIR/tests/mpirun.sh" 1 "$@" --quiet
}

# Dense: 2 sizes x 2 tiles, the BLAS peer at both sizes, and 2 out-of-core sizes with a
# RAM budget of 1 MiB and the disk behind it (measured and predicted loads).
dense="$dir/dense.csv"
run "$pdgemm" --impl blas --m 1 --n 1 --k 1 --niter 1 --warmup 0 --csv | sed -n 1p >"$dense"
for n in 192 384; do
	for nb in 64 96; do
		run "$pdgemm" --m $n --n $n --k $n --nb $nb --niter 2 --warmup 0 --peak 10 >>"$dense"
	done
	run "$pdgemm" --impl blas --m $n --n $n --k $n --niter 2 --warmup 0 --peak 10 >>"$dense"
	run "$pdgemm" --m $n --n $n --k $n --nb 64 --ooc --ram-limit 1 --disk "$dir/disk" \
		--disk-mib 64 --niter 2 --warmup 0 --peak 10 >>"$dense"
done
# Block-sparse: two tile ranges in core, one out of core.
sparse="$dir/sparse.csv"
small="--m 300 --n 250 --k 280 --density-a 0.5 --density-b 0.5 --niter 2 --warmup 0 --no-dense"
# shellcheck disable=SC2086 # $small is a list of options
run "$bsgemm" $small --lo 5 --hi 40 --csv >"$sparse"
# shellcheck disable=SC2086
run "$bsgemm" $small --lo 30 --hi 30 >>"$sparse"
# shellcheck disable=SC2086
run "$bsgemm" $small --lo 30 --hi 30 --ooc --ram-limit 1 --disk "$dir/disk" \
	--disk-mib 64 >>"$sparse"
cat "$dense" "$sparse"
grep -q ',c[12a],' "$dense" || { echo "no out-of-core plan in the dense runs"; exit 1; }

# images FORMAT FILE...: each exists, is not empty and is what its name says.
images() {
	fmt=$1
	shift
	for f in "$@"; do
		[ -s "$f" ] || { echo "$f: missing or empty"; exit 1; }
		case "$fmt" in
		png) [ "$(od -An -tx1 -N4 "$f" | tr -d ' \n')" = 89504e47 ] ||
			{ echo "$f: not a PNG file"; exit 1; } ;;
		svg) grep -q '<svg' "$f" || { echo "$f: not an SVG file"; exit 1; } ;;
		esac
	done
}

"$plot" --out "$dir/img" "$dense" >"$dir/list" 2>"$dir/err"
cat "$dir/list" "$dir/err"
for fmt in png svg; do
	images $fmt "$dir/img/dense_size.$fmt" "$dir/img/dense_tile.$fmt" \
		"$dir/img/dense_ratio.$fmt" "$dir/img/dense_loads.$fmt"
done
[ "$(wc -l <"$dir/list")" -eq 8 ] || { echo "expected 8 images of the dense runs"; exit 1; }
"$plot" --out "$dir/img" --format svg --plots size,tile,loads "$sparse"
images svg "$dir/img/sparse_size.svg" "$dir/img/sparse_tile.svg" "$dir/img/sparse_loads.svg"
[ ! -e "$dir/img/sparse_size.png" ] || { echo "--format svg wrote a PNG"; exit 1; }

# One file as bench/compare_dbcsr.sh writes it: two headers, comments, summaries.
mixed="$dir/mixed.csv"
{
	cat "$sparse"
	echo
	echo "# median GFLOP/s (useful flops / max seconds over ranks) over every repetition"
	echo "stargemm      1       2    2        7.739     2.643    12.836"
	sed 's/^stargemm,/peer,/' "$sparse" | head -n 3
	echo "ratio stargemm/peer (medians): 1.154"
} >"$mixed"
"$plot" --out "$dir/img" --format png --plots ratio,size --name both "$mixed"
images png "$dir/img/both_ratio.png" "$dir/img/both_size.png"

# Bad input: exit 2 and a message naming the file and line, the column, the plot.
. "$SRCDIR/tests/refuse.sh"
bad() {
	msg=$1
	shift
	refuse "$dir/err" "$msg" "$plot" --out "$dir/img" "$@"
	echo "refused: $(cat "$dir/err")"
}
sed 's/gflops/rate/' "$dense" >"$dir/nocol.csv"
bad 'nocol.csv:1: the header has no column "gflops"' "$dir/nocol.csv"
sed '3s/,[^,]*$//' "$dense" >"$dir/short.csv"
bad 'short.csv:3: 38 fields, but the header (line 1) has 39' "$dir/short.csv"
sed '2s/^\(\([^,]*,\)\{15\}\)[^,]*/\1fast/' "$dense" >"$dir/nan.csv"
bad 'nan.csv:2: column "gflops" is "fast", not a number' "$dir/nan.csv"
sed 1d "$dense" >"$dir/noheader.csv"
bad 'noheader.csv:1: data before any header line' "$dir/noheader.csv"
bad 'no ratio plot: it needs rows of impl stargemm and of a peer' --plots ratio "$sparse"
bad 'missing.csv: no such readable file' "$dir/missing.csv"
bad "--format: 'jpg' is neither png nor svg" --format jpg "$dense"
bad "no CSV file given"
rm -rf "$dir"
echo "plots OK"
