#!/bin/sh
# tests/prec.sh — single, double, single complex and double complex products
# (tests/test_prec.c) on 1, 2 (both grid shapes) and 4 ranks; the host calls on 1.
set -e
prog="$BUILDDIR/tests/test_prec"
"$SRCDIR/tests/mpirun.sh" 1 "$prog" 1 1
"$SRCDIR/tests/mpirun.sh" 2 "$prog" 2 1
"$SRCDIR/tests/mpirun.sh" 2 "$prog" 1 2
"$SRCDIR/tests/mpirun.sh" 4 "$prog" 2 2
