#!/bin/sh
# tests/ooc_1rank.sh — the pdgemm cases through the out-of-core executor (forced c2 plan and planner's
# choice under a 12-tile device) on a 1 x 1 grid.
exec "$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_pdgemm" 1 1 ooc
