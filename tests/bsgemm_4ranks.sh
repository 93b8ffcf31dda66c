#!/bin/sh
# tests/bsgemm_4ranks.sh — block-sparse products (in core and out of core) against a dense
# reference, bad patterns, and the full pattern against the dense product, on a
# 2 x 2 grid.
exec "$SRCDIR/tests/mpirun.sh" 4 "$BUILDDIR/tests/test_bsgemm" 2 2
