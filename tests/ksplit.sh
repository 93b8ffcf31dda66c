#!/bin/sh
# tests/ksplit.sh — products with the inner dimension split over ranks and workers
# (src/ksplit.c), forced on every in-core product (STARGEMM_KSPLIT=2): the dense cases
# (ragged, transposed, beta = 0 on NaNs, irregular tiles) on 1, 2 and 4 ranks, the
# block-sparse ones with their filter counts on 3 ranks, and the four types (not
# test_bsgemm: its full pattern packed is not split, its dense twin is, and the sums'
# order differs, where it asks for the same bits); then the
# automatic choice on the shape it is for (X^T Y, C of one tile) against BLAS, on 1
# and 2 ranks.
set -e
export STARGEMM_KSPLIT=2
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_pdgemm" 1 1
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_pdgemm" 2 1
"$SRCDIR/tests/mpirun.sh" 4 "$BUILDDIR/tests/test_pdgemm" 2 2
"$SRCDIR/tests/mpirun.sh" 3 "$BUILDDIR/tests/test_bsfilter" 3 1
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_prec" 1 1
unset STARGEMM_KSPLIT
for np in 1 2; do
	"$SRCDIR/tests/mpirun.sh" "$np" "$BUILDDIR/bench/stargemm_pdgemm" --m 130 --n 70 \
		--k 20011 --nb 512 --transA T --P "$np" --Q 1 --niter 1 --warmup 0 --check \
		--peak 1 --csv --quiet | grep -q ',PASS,' ||
		{ echo "FAIL: X^T Y on $np rank(s)"; exit 1; }
	echo "X^T Y, 130 x 70 x 20011 on $np rank(s): PASS"
done
