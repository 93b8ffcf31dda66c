#!/bin/sh
# tests/matops_1rank.sh — the matrix operations (copy, scale, add over the union of
# patterns, the diagonal's shift, trace, norm; dense, block-sparse, packed; s/d/c/z),
# the sign step through the symbolic product, and their bad input, on one rank.
exec "$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_matops" 1 1
