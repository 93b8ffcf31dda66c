#!/bin/sh
# tests/scalapack.sh — an unmodified ScaLAPACK program with libstargemm-scalapack in
# front (tests/test_scalapack.c): its p?gemm_ calls run on stargemm (operands cut alike
# or not where the product joins them), with ScaLAPACK's results, on 1, 2 (both grid shapes)
# and 4 ranks, the grid's ranks in row-major order, and on 2 and 4 ranks in
# column-major order (BLACS's "Col") and in reverse (Cblacs_gridmap): every order runs
# on stargemm. Skipped (77) where ScaLAPACK was not found at configure time.
set -e
prog="$BUILDDIR/tests/test_scalapack"
[ -x "$prog" ] || { echo "SKIP: built without ScaLAPACK (libscalapack-mpich-dev)"; exit 77; }
out="$BUILDDIR/tests/scalapack.out"
for grid in "1 1 1 Row" "2 2 1 Row" "2 1 2 Row" "4 2 2 Row" "2 1 2 Col" "2 2 1 map" \
	"4 2 2 Col" "4 2 2 map"; do
	set -- $grid
	STARGEMM_SCALAPACK=count "$SRCDIR/tests/mpirun.sh" "$1" "$prog" "$2" "$3" "$4" >"$out" 2>"$out.err" ||
		{ cat "$out" "$out.err"; exit 1; }
	cat "$out"
	# Every call went to stargemm, the operands cut alike or not.
	grep -q "stargemm-scalapack: 24 calls by stargemm$" "$out.err" ||
		{ cat "$out.err"; echo "unexpected routing"; exit 1; }
	grep -q "thread level 3 (MPI_THREAD_MULTIPLE = 3)" "$out" ||
		{ echo "MPI did not start at MPI_THREAD_MULTIPLE"; exit 1; }
done
