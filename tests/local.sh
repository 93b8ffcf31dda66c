#!/bin/sh
# tests/local.sh — matrices on the processes' local arrays in ScaLAPACK's layout, used
# in place (tests/test_local.c), on 1, 2 (both grid shapes) and 4 ranks.
set -e
prog="$BUILDDIR/tests/test_local"
"$SRCDIR/tests/mpirun.sh" 1 "$prog" 1 1
"$SRCDIR/tests/mpirun.sh" 2 "$prog" 2 1
"$SRCDIR/tests/mpirun.sh" 2 "$prog" 1 2
"$SRCDIR/tests/mpirun.sh" 4 "$prog" 2 2
