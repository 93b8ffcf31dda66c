#!/bin/sh
# tests/unfilled.sh — matrices read before any write read as zeros with StarPU-allocated
# tiles (a RAM budget and a disk node), on 1 rank and on 2 (tests/test_unfilled.c).
set -e
dir="$BUILDDIR/tests/unfilled.dir"
rm -rf "$dir" && mkdir -p "$dir"
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_unfilled" 1 1 "$dir"
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_unfilled" 1 2 "$dir"
rm -rf "$dir"
