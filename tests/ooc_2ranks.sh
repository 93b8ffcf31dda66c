#!/bin/sh
# tests/ooc_2ranks.sh — the pdgemm cases through the out-of-core executor (forced c2 plan and planner's
# choice under a 12-tile device) on a 2 x 1 grid.
exec "$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_pdgemm" 2 1 ooc
