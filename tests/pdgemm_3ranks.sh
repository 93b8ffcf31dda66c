#!/bin/sh
# tests/pdgemm_3ranks.sh — the pdgemm correctness cases on a 3 x 1 grid of 3 process(es).
exec "$SRCDIR/tests/mpirun.sh" 3 "$BUILDDIR/tests/test_pdgemm" 3 1
