#!/bin/sh
# tests/compare_dropin.sh — bench/compare_dropin.sh, the benchmark's pdgemm_ alone and
# through libstargemm-scalapack (every call, then the default routing): on 1 rank in
# double and 2 ranks in double complex, a row per size with three positive times, bad
# options refused with a message naming the constraint, and a benchmark that prints no
# result row reported as such. Skipped (77) without ScaLAPACK or the library.
set -e
script="$SRCDIR/bench/compare_dropin.sh"
out="$BUILDDIR/tests/compare_dropin.out"
export STARGEMM_SCALAPACK_LIB="$BUILDDIR/.libs/libstargemm-scalapack.so"
export STARGEMM_BENCH="$BUILDDIR/bench/stargemm_pdgemm"
export STARPU_HOME="$BUILDDIR/tests/compare_dropin.home"
mkdir -p "$STARPU_HOME"
status=0
"$script" --sizes "48 96" --rounds 1 -- --nb 16 --niter 2 --warmup 1 >"$out" 2>&1 || status=$?
[ "$status" -eq 77 ] && { cat "$out"; exit 77; }
[ "$status" -eq 0 ] || { cat "$out"; echo "compare_dropin.sh failed ($status)"; exit 1; }
"$script" --ranks 2 --sizes "40" --rounds 1 -- --nb 16 --niter 2 --warmup 1 --prec z >>"$out" 2>&1 ||
	{ cat "$out"; echo "compare_dropin.sh --prec z on 2 ranks failed"; exit 1; }
cat "$out"
# Rows "n flops scalapack_ms forced_ms default_ms ratio ratio", times positive; flops per
# process 2 n^3 on one rank, 8 n^3 / 2 in double complex on two.
[ "$(awk '/^[0-9]/ && NF == 7 && $3 > 0 && $4 > 0 && $5 > 0' "$out" | wc -l)" -eq 3 ] ||
	{ echo "expected 3 rows with three times"; exit 1; }
grep -q "^48 2.21e+05 " "$out" && grep -q "^40 2.56e+05 " "$out" ||
	{ echo "wrong flops per process"; exit 1; }
. "$SRCDIR/tests/refuse.sh"
refuse "$out.err" "want integers >= 1" "$script" --sizes "64 x"
refuse "$out.err" "want integers >= 1" "$script" --ranks 0
# A benchmark that runs but prints no result row: a message, not a silent stop.
refuse "$out.err" "the scalapack run of 8 printed no result" env STARGEMM_BENCH=/bin/true \
	"$script" --sizes 8 --rounds 1
rm -f "$out.err"
echo "compare_dropin.sh OK"
