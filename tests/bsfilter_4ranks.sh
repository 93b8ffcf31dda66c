#!/bin/sh
# tests/bsfilter_4ranks.sh — tile norms, norm filtering (in core and out of core) and the
# symbolic product pattern against references, and their bad input, on a 2x2 grid.
exec "$SRCDIR/tests/mpirun.sh" 4 "$BUILDDIR/tests/test_bsfilter" 2 2
