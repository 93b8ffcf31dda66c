#!/bin/sh
# tests/compare_dbcsr.sh — bench/compare_dbcsr.sh: stargemm's block-sparse benchmark and
# its libDBCSR peer on the same small problem, on 2 ranks, in single and double complex
# precision, both checked against a dense reference (the script fails on a residual
# above 10): each side prints its row, in the type asked for, and the ratio line. An
# unknown type is refused by both. Skipped (77) without the peer or Open MPI.
set -e
out="$BUILDDIR/tests/compare_dbcsr.out"
export DBCSR_PEER="$BUILDDIR/bench/stargemm_dbcsr_peer" STARGEMM_BSGEMM="$BUILDDIR/bench/stargemm_bsgemm"
problem="--m 300 --n 250 --k 280 --lo 5 --hi 40 --density-a 0.5 --density-b 0.5"
: >"$out"
# StarPU's calibration files of its own (tests/pblas.sh says why).
export STARPU_HOME="$BUILDDIR/tests/compare_dbcsr.home"
mkdir -p "$STARPU_HOME"
for t in s z; do
	status=0
	# shellcheck disable=SC2086 # $problem is a list of options
	"$SRCDIR/bench/compare_dbcsr.sh" --ranks 2 --threads 1 --stargemm-args --quiet -- \
		$problem --prec "$t" --check --niter 1 --warmup 0 >>"$out" 2>&1 || status=$?
	[ "$status" -eq 77 ] && { cat "$out"; exit 77; }
	[ "$status" -eq 0 ] || { cat "$out"; echo "compare_dbcsr.sh --prec $t failed ($status)"; exit 1; }
	for impl in dbcsr stargemm; do
		# the type is the last column of the peer's rows, before transA, the task
		# counts (ooc_tasks, unprefetched, late), flops_imbalance, ram_peak_mib, the
		# stationary choice's six columns and the four of generated tiles (whether
		# B is, how many, peak resident MiB, how many on GPUs) in stargemm's
		grep -Eq "^$impl,2,.*,$t(,N,[0-9]+,[0-9]+,[0-9]+,[0-9.]+,[0-9.]+,[ABC](,[0-9.]+){5},[012],[0-9]+,[0-9.]+,[0-9]+)?\$" "$out" ||
			{ cat "$out"; echo "no $impl row in type $t"; exit 1; }
	done
done
cat "$out"
[ "$(grep -c '^ratio stargemm/dbcsr (medians): [0-9]' "$out")" -eq 2 ] ||
	{ echo "expected two ratio lines"; exit 1; }
# shellcheck disable=SC2086
if "$SRCDIR/bench/compare_dbcsr.sh" --ranks 1 -- $problem --prec q >"$out.err" 2>&1; then
	echo "accepted --prec q"; exit 1
fi
grep -q "dbcsr_peer: --prec must be s, d, c or z" "$out.err" &&
	grep -q "stargemm_bsgemm: --prec must be s, d, c or z" "$out.err" ||
	{ cat "$out.err"; echo "no clear error for --prec q"; exit 1; }
rm -f "$out.err"
echo "compare_dbcsr.sh OK"
