#!/bin/sh
# tests/soak_2ranks.sh — 1000 consecutive products (in core, out of core, block-sparse;
# matrices created and destroyed each time) in one process per rank on 2 ranks: the
# resident memory of each rank must stay flat, growing by at most 2 KiB per product
# after a warm-up of 100 (tests/test_soak.c: a leak of one 32 x 32 tile, 8 KiB, per
# product fails). The ranks are bound to a core each (tests/mpirun.sh --bound):
# unbound, both ranks' workers share core 0 and the run is ten times slower.
exec "$SRCDIR/tests/mpirun.sh" --bound 2 "$BUILDDIR/tests/test_soak" 2 1 1000 2
