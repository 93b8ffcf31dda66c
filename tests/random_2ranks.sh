#!/bin/sh
# tests/random_2ranks.sh — seeded random calls, valid and invalid, on 2 x 1 and 1 x 2
# grids (tests/test_random.c).
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_random" 2 1 2 200 || exit 1
exec "$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_random" 1 2 3 200
