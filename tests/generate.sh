#!/bin/sh
# tests/generate.sh — products with operands made on demand (tests/test_generate.c)
# on 1 rank, on 2 ranks (2x1: the B tiles both ranks read are made on each, none
# crosses the network) and on 3 ranks (1x3).
set -e
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_generate" 1 1
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_generate" 2 1
"$SRCDIR/tests/mpirun.sh" 3 "$BUILDDIR/tests/test_generate" 1 3
