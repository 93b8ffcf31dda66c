#!/bin/sh
# tests/chebyshev_example.sh — the Chebyshev filter driver (examples/chebyshev.c) at a
# small size: its wanted Ritz values must converge and match LAPACK's eigenvalues of
# the dense H (--check), on one rank, on a 2x1 grid, and out of core on one rank (a
# RAM budget of 2 MiB, the disk node in the build tree).
set -e
[ -x "$BUILDDIR/examples/chebyshev" ] ||
	{ echo "SKIP: examples/chebyshev not built (configure found no LAPACK dsyev_)"; exit 77; }
args="--n 600 --lo 30 --hi 60 --band 30 --nev 8 --check"
dir="$BUILDDIR/tests/chebyshev.d"
rm -rf "$dir" && mkdir -p "$dir"
# shellcheck disable=SC2086 # the options are a list
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/examples/chebyshev" $args
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/examples/chebyshev" $args --P 2
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/examples/chebyshev" $args --ram-limit 2 \
	--disk "$dir" --disk-mib 64
rm -rf "$dir"
