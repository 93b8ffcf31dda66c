#!/bin/sh
# tests/bsfilter_3ranks.sh — tile norms, norm filtering (in core and out of core) and the
# symbolic product pattern against references, and their bad input, on a 3x1 grid.
exec "$SRCDIR/tests/mpirun.sh" 3 "$BUILDDIR/tests/test_bsfilter" 3 1
