#!/bin/sh
# tests/bsgemm_1rank.sh — block-sparse products (in core and out of core) against a dense
# reference, bad patterns, and the full pattern against the dense product, on a
# 1 x 1 grid.
exec "$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_bsgemm" 1 1
