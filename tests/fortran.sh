#!/bin/sh
# tests/fortran.sh — the Fortran module (fortran/stargemm.f90) through a Fortran driver:
# examples/sign_f.f90's sign iteration, on one rank and on a 2x1 grid, must converge,
# match the dense iteration (matmul on rank 0) and see a bad call refused with its
# message; and tests/generate_f.f90's matrix made on demand by a Fortran function
# (a stargemm_distribution, the product against matmul, a failing generator's error
# naming its tile) on 1, 2 and 3 ranks. Skipped when configure found no Fortran
# compiler.
set -e
[ -x "$BUILDDIR/examples/sign_f" ] ||
	{ echo "SKIP: no Fortran compiler (configure's FC): the module is not built"; exit 77; }
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/examples/sign_f" 1
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/examples/sign_f" 2
for np in 1 2 3; do
	out=$("$SRCDIR/tests/mpirun.sh" "$np" "$BUILDDIR/tests/generate_f") ||
		{ echo "$out"; echo "generate_f failed on $np ranks"; exit 1; }
	echo "$out"
	[ "$(echo "$out" | grep -c '^ok: ')" -eq 9 ] ||
		{ echo "generate_f on $np ranks: expected 9 checks"; exit 1; }
done
