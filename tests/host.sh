#!/bin/sh
# tests/host.sh — stargemm_dgemm(), the BLAS-like call on host arrays
# (tests/test_host.c): checked against cblas_dgemm on one process, refused by every
# rank of two.
set -e
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_host"
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_host" refuse
