#!/bin/sh
# tests/bsprec.sh — block-sparse products in single, double, single complex and double
# complex (tests/test_bsprec.c) on 1, 2 (both grid shapes) and 4 ranks.
set -e
prog="$BUILDDIR/tests/test_bsprec"
"$SRCDIR/tests/mpirun.sh" 1 "$prog" 1 1
"$SRCDIR/tests/mpirun.sh" 2 "$prog" 2 1
"$SRCDIR/tests/mpirun.sh" 2 "$prog" 1 2
"$SRCDIR/tests/mpirun.sh" 4 "$prog" 2 2
