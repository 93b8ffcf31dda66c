#!/bin/sh
# tests/pdgemm_4ranks.sh — the pdgemm correctness cases on a 2 x 2 grid of 4 process(es).
exec "$SRCDIR/tests/mpirun.sh" 4 "$BUILDDIR/tests/test_pdgemm" 2 2
