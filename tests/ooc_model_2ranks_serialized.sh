#!/bin/sh
# tests/ooc_model_2ranks_serialized.sh — tests/ooc_model_2ranks.sh with MPI initialised
# at MPI_THREAD_SERIALIZED by the program: the library's counter exchange then goes
# through StarPU-MPI (src/collective.c), as in simulation.
exec "$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_ooc_model" 1 2 serialized
