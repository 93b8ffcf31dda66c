#!/bin/sh
# tests/pdgemm_2ranks.sh — the pdgemm correctness cases on a 1 x 2 grid of 2 process(es).
exec "$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_pdgemm" 1 2
