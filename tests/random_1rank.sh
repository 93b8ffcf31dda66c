#!/bin/sh
# tests/random_1rank.sh — 2000 seeded random calls, valid and invalid, on one rank
# (tests/test_random.c); a few seconds.
exec "$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_random" 1 1 1 2000
