#!/bin/sh
# tests/init_failure_2ranks.sh — a stargemm_init that fails once StarPU starts, on 2
# ranks: retried successfully, or given up with stargemm_finalize ending MPI
# (tests/test_init_failure.c).
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_init_failure" retry || exit 1
exec "$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_init_failure" give-up
