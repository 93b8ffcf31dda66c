#!/bin/sh
# tests/fortran.sh — the Fortran module (fortran/stargemm.f90) through a Fortran driver:
# examples/sign_f.f90's sign iteration, on one rank and on a 2x1 grid, must converge,
# match the dense iteration (matmul on rank 0) and see a bad call refused with its
# message. Skipped when configure found no Fortran compiler.
set -e
[ -x "$BUILDDIR/examples/sign_f" ] ||
	{ echo "SKIP: no Fortran compiler (configure's FC): the module is not built"; exit 77; }
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/examples/sign_f" 1
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/examples/sign_f" 2
