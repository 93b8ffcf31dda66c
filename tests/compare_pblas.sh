#!/bin/sh
# tests/compare_pblas.sh — bench/compare_pblas.sh, ScaLAPACK's PBLAS timing tester with
# and without libstargemm-scalapack in front: on 1 and 2 ranks, in double and double
# complex, every case gets a row with both rates, the calls ran on stargemm, and bad
# options (an unknown type, a size beyond the tester's fixed memory) are refused with
# a message naming the constraint. Skipped (77) without the tester or the library.
set -e
script="$SRCDIR/bench/compare_pblas.sh"
out="$BUILDDIR/tests/compare_pblas.out"
export STARGEMM_SCALAPACK_LIB="$BUILDDIR/.libs/libstargemm-scalapack.so"
# StarPU's calibration files of its own (tests/pblas.sh says why).
export STARPU_HOME="$BUILDDIR/tests/compare_pblas.home"
mkdir -p "$STARPU_HOME"
status=0
"$script" --ranks 1 --sizes "40 70" --trans "NN TN" --rounds 1 --nb 16 >"$out" 2>&1 || status=$?
[ "$status" -eq 77 ] && { cat "$out"; exit 77; }
[ "$status" -eq 0 ] || { cat "$out"; echo "compare_pblas.sh failed ($status)"; exit 1; }
"$script" --ranks 2 --prec z --sizes "50" --trans "CN" --rounds 1 --nb 16 >>"$out" 2>&1 ||
	{ cat "$out"; echo "compare_pblas.sh --prec z on 2 ranks failed"; exit 1; }
cat "$out"
# Rows: "n op scalapack stargemm ratio", positive rates.
[ "$(awk '/^[0-9]/ && $3 > 0 && $4 > 0 && NF >= 5' "$out" | wc -l)" -eq 5 ] ||
	{ echo "expected 5 rows with both rates"; exit 1; }
grep -q "^# Dpb3tim, 1 ranks on a 1 x 1 grid" "$out" && grep -q "^# Zpb3tim, 2 ranks on a 1 x 2 grid" "$out" ||
	{ echo "missing a header"; exit 1; }
[ "$(grep -c "stargemm-scalapack: [0-9]* calls by stargemm$" "$out")" -eq 2 ] ||
	{ echo "a call did not run on stargemm"; exit 1; }
. "$SRCDIR/tests/refuse.sh"
refuse "$out.err" "--prec must be s, d, c or z" "$script" --prec q
refuse "$out.err" "beyond the tester's fixed memory" "$script" --sizes 2000
refuse "$out.err" "--trans wants pairs of N, T or C" "$script" --trans NX
refuse "$out.err" "want integers >= 1" "$script" --ranks 0
refuse "$out.err" "the tester takes at most 20 problems" "$script" --sizes "8 9 10 11 12 13 14 15 16 17" --trans "NN TN"
rm -f "$out.err"
echo "compare_pblas.sh OK"
