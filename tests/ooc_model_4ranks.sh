#!/bin/sh
# tests/ooc_model_4ranks.sh — out-of-core executor vs the communication model (MPI tiles received, peak of
# received copies) on a 2 x 2 grid.
exec "$SRCDIR/tests/mpirun.sh" 4 "$BUILDDIR/tests/test_ooc_model" 2 2
