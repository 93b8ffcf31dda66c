#!/bin/sh
# tests/sign_example.sh — the sign-iteration driver (examples/sign.c) at a small size:
# it must converge with and without filtering and match the dense iteration run by
# BLAS (--check), on one rank and on a 1x2 grid; McWeeny's purification on a 2x1 grid.
set -e
args="--n 700 --lo 30 --hi 60 --band 40 --eps 1e-9 --tol 1e-7 --check"
# shellcheck disable=SC2086 # the options are a list
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/examples/sign" $args
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/examples/sign" $args --P 1 --Q 2
# McWeeny's purification on P = (I - X) / 2, against its dense iteration
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/examples/sign" $args --P 2 --Q 1 --mcweeny
