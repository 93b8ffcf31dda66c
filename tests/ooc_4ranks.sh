#!/bin/sh
# tests/ooc_4ranks.sh — the pdgemm cases through the out-of-core executor (forced c2 plan and planner's
# choice under a 12-tile device) on a 2 x 2 grid.
exec "$SRCDIR/tests/mpirun.sh" 4 "$BUILDDIR/tests/test_pdgemm" 2 2 ooc
