#!/bin/sh
# tests/storage.sh — a RAM budget's accounting gives back what destroyed matrices and
# filtered tiles held (tests/test_storage.c), on 1 and 2 ranks.
set -e
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_storage" 1 1
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_storage" 2 1
