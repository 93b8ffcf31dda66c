#!/bin/sh
# tests/stationary.sh — products with op(A) or op(B) kept in place (src/stationary.c,
# src/ksplit.c), forced on every in-core product (STARGEMM_STATIONARY): the dense
# cases (ragged, transposed, beta = 0 on NaNs, irregular tiles) on 1, 2 and 4 ranks,
# the block-sparse ones with their filter counts on 3 ranks, the four types on 2
# ranks; every C against BLAS. Then the choice on a tall-skinny product (sparse A times
# B of one tile column, on 1 x 3 ranks): automatic, it keeps A in place (the model's
# time under 0.58 of C's);
# each of A, B and C gives the product within the bound and receives over MPI exactly
# the bytes the model counts (cold: no repetition before, so StarPU-MPI's cache is
# empty), and so does the second of two products with A or C kept (what the cache
# holds is not counted: nothing with C); with the network rate measured, the model's times reported and the bytes still
# the model's (the measurement's own messages not counted). Bad settings and A out of
# core are refused by name.
set -e
mpirun() { "$SRCDIR/tests/mpirun.sh" "$@"; }
for s in A B; do
	export STARGEMM_STATIONARY=$s
	mpirun 1 "$BUILDDIR/tests/test_pdgemm" 1 1
	mpirun 2 "$BUILDDIR/tests/test_pdgemm" 1 2
	mpirun 4 "$BUILDDIR/tests/test_pdgemm" 2 2
	mpirun 3 "$BUILDDIR/tests/test_bsfilter" 3 1
	mpirun 2 "$BUILDDIR/tests/test_prec" 2 1
	echo "forced $s: PASS"
done
unset STARGEMM_STATIONARY
# One C tile column on a 1 x 3 grid: C-stationary computes on rank 0 alone. The network
# rate is set so that the choice does not hang on a measurement.
problem="--m 3000 --n 100 --k 3000 --lo 100 --hi 100 --density-a 0.2 --density-b 1 --P 1
	--Q 3 --niter 1 --warmup 0 --check --no-dense --quiet"
for s in auto A B C; do
	# shellcheck disable=SC2086
	row=$(STARGEMM_NETWORK_RATE=1e10 mpirun 3 "$BUILDDIR/bench/stargemm_bsgemm" $problem \
		--stationary "$s" | tail -n 1)
	echo "$s: $row"
	echo "$row" | awk -F, -v s="$s" '{
		want = s == "auto" ? "A" : s
		if ($22 + 0 > 10 || $22 + 0 < 0) { print "FAIL: residual " $22; exit 1 }
		if ($41 != want) { print "FAIL: kept " $41 ", not " want; exit 1 }
		if ($42 + 0 <= 0 || $42 != $43) { print "FAIL: model " $42 " MiB, moved " $43; exit 1 }
		if (s == "auto" && !($45 > 0 && $45 < 0.58 * $44))
			{ print "FAIL: model times C " $44 " A " $45; exit 1 }
	}'
done
# Repeated (the second of two products, the first's tiles still in StarPU-MPI's cache):
# the model counts what is already in place, so its bytes are again those moved —
# none with C kept (A's tiles cached on rank 0, B and C there), only the partial tiles
# with A kept (B's tiles cached where A's are).
for s in C A; do
	# shellcheck disable=SC2086
	row=$(STARGEMM_NETWORK_RATE=1e10 mpirun 3 "$BUILDDIR/bench/stargemm_bsgemm" $problem \
		--stationary "$s" --niter 2 --warmup 1 | tail -n 1)
	echo "repeated, $s: $row"
	echo "$row" | awk -F, -v s="$s" '{
		if ($22 + 0 > 10 || $22 + 0 < 0) { print "FAIL: residual " $22; exit 1 }
		if ($42 != $43) { print "FAIL: model " $42 " MiB, moved " $43; exit 1 }
		if ((s == "C") != ($42 + 0 == 0)) { print "FAIL: " s " repeated moves " $42; exit 1 }
	}'
done
# The network rate measured (src/network.c): the model reports its times, and the
# measurement's own messages are not counted with the product's bytes.
# shellcheck disable=SC2086
row=$(mpirun 3 "$BUILDDIR/bench/stargemm_bsgemm" $problem | tail -n 1)
echo "measured network: $row"
echo "$row" | awk -F, '{
	if ($22 + 0 > 10 || $22 + 0 < 0) { print "FAIL: residual " $22; exit 1 }
	if (!($44 > 0 && $45 > 0)) { print "FAIL: no model times " $44 ", " $45; exit 1 }
	if ($42 + 0 <= 0 || $42 != $43) { print "FAIL: model " $42 " MiB, moved " $43; exit 1 }
}'
# shellcheck disable=SC2086
if STARGEMM_NETWORK_RATE=0 mpirun 3 "$BUILDDIR/bench/stargemm_bsgemm" $problem \
	2> tests/stationary.err; then
	echo "FAIL: STARGEMM_NETWORK_RATE=0 accepted"; exit 1
fi
grep -q "STARGEMM_NETWORK_RATE must be > 0" tests/stationary.err ||
	{ cat tests/stationary.err; echo "FAIL: no message naming STARGEMM_NETWORK_RATE"; exit 1; }
export STARGEMM_STATIONARY=Z
if mpirun 3 "$BUILDDIR/bench/stargemm_bsgemm" $problem 2> tests/stationary.err; then
	echo "FAIL: STARGEMM_STATIONARY=Z accepted"; exit 1
fi
grep -q "STARGEMM_STATIONARY='Z': expected auto, A, B or C" tests/stationary.err ||
	{ cat tests/stationary.err; echo "FAIL: no message naming STARGEMM_STATIONARY"; exit 1; }
unset STARGEMM_STATIONARY
if mpirun 1 "$BUILDDIR/bench/stargemm_bsgemm" --m 500 --n 500 --k 500 --ooc \
	--stationary A --niter 1 --warmup 0 --quiet --no-dense 2> tests/stationary.err; then
	echo "FAIL: stationary A out of core accepted"; exit 1
fi
grep -q "stationary 'A' is in core and without packed operands only" tests/stationary.err ||
	{ cat tests/stationary.err; echo "FAIL: no message for A out of core"; exit 1; }
echo "refusals: PASS"
