#!/bin/sh
# tests/matops_4ranks.sh — the matrix operations against references on a 2x2 grid: the
# sum's B on another distribution than A, so that its tiles move to A's owners.
exec "$SRCDIR/tests/mpirun.sh" 4 "$BUILDDIR/tests/test_matops" 2 2
