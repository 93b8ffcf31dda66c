#!/bin/sh
# tests/unwritten.sh — matrices never written read as zeros (tests/test_unwritten.c):
# library-allocated tiles on 1 and 2 ranks, StarPU-allocated ones under a RAM budget on
# 1, 2 and 4 ranks (owners then send tiles that only the zeros wrote).
set -e
prog="$BUILDDIR/tests/test_unwritten"
"$SRCDIR/tests/mpirun.sh" 1 "$prog" 1 1
"$SRCDIR/tests/mpirun.sh" 2 "$prog" 2 1
"$SRCDIR/tests/mpirun.sh" 1 "$prog" 1 1 64
"$SRCDIR/tests/mpirun.sh" 2 "$prog" 1 2 64
"$SRCDIR/tests/mpirun.sh" 4 "$prog" 2 2 64
