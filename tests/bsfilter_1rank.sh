#!/bin/sh
# tests/bsfilter_1rank.sh — tile norms, norm filtering (in core and out of core) and the
# symbolic product pattern against references, and their bad input, on a 1x1 grid.
exec "$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_bsfilter" 1 1
