#!/bin/sh
# tests/ooc_model_2ranks.sh — out-of-core executor vs the communication model (MPI tiles received, peak of
# received copies) on a 1 x 2 grid.
exec "$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_ooc_model" 1 2
