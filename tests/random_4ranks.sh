#!/bin/sh
# tests/random_4ranks.sh — seeded random calls, valid and invalid, on a 2 x 2 grid
# (tests/test_random.c).
exec "$SRCDIR/tests/mpirun.sh" 4 "$BUILDDIR/tests/test_random" 2 2 4 60
