#!/bin/sh
# tests/disagree_2ranks.sh — collective calls wrong on one rank, or whose ranks pass
# different arguments, fail on both ranks with the same code and a message, within
# the timeout (a hang is a failure), and a checked product follows each case
# (tests/test_disagree.c).
TEST_TIMEOUT=120 exec "$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/tests/test_disagree"
