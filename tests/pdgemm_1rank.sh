#!/bin/sh
# tests/pdgemm_1rank.sh — the pdgemm correctness cases on a 1 x 1 grid of 1 process(es).
exec "$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_pdgemm" 1 1
