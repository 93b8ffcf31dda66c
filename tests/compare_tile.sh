#!/bin/sh
# tests/compare_tile.sh — bench/compare_tile.sh on a small problem: every configuration
# (the BLAS call, stargemm at the recommended tile and at a fixed one, one rank per core,
# the host call) gives a positive rate and a median beside the BLAS's, each stargemm
# run on CPU workers prints its breakdown (one line per rank), and bad options are
# refused with a message naming the constraint.
set -e
script="$SRCDIR/bench/compare_tile.sh"
out="$BUILDDIR/tests/compare_tile.out"
export STARGEMM_BENCH="$BUILDDIR/bench/stargemm_pdgemm"
export STARPU_HOME="$BUILDDIR/tests/compare_tile.home"
mkdir -p "$STARPU_HOME"
"$script" --rounds 1 --sizes 192 --tiles 64 --niter 1 >"$out" 2>&1 ||
	{ cat "$out"; echo "compare_tile.sh failed"; exit 1; }
cat "$out"
for c in blas recommended tile64 ranks-recommended host; do
	awk -v c="$c" '$1 == c && $2 == 192 && $4 > 0 && $5 > 0 { found = 1 } END { exit !found }' "$out" ||
		{ echo "no median with a positive rate and ratio for $c"; exit 1; }
done
cores=$(nproc)
[ "$(grep -c '^# breakdown rank' "$out")" -eq $((2 + cores)) ] ||
	{ echo "expected a breakdown line for each stargemm run's ranks"; exit 1; }
. "$SRCDIR/tests/refuse.sh"
refuse "$out.err" "want integers >= 1" "$script" --sizes "64 x"
refuse "$out.err" "want integers >= 1" "$script" --rounds 0
refuse "$out.err" "unknown option" "$script" --bogus
