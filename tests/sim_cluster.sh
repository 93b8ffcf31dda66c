#!/bin/sh
# tests/sim_cluster.sh — the out-of-core product on a simulated 2 x 2 grid of nodes with
# GPUs (StarPU-MPI over SMPI, 4 ranks; each rank half a Summit-like node: 3 V100 of
# 300 MiB each, so C does not fit; perfmodels/). Checked on every rank, from the lines
# each prints with stargemm_pdgemm --per-rank:
#   * the tiles loaded per GPU (mean of the rank's GPUs) within [0.90, 1.05] of the
#     model's, and the tiles received over MPI within [0.90, 1.05] of the model's;
#   * with STARGEMM_PREFETCH_RECEIVED=1, received tiles reach the GPUs ahead of time:
#     at most 5% of the rank's
#     out-of-core tasks are late (became ready with an input on none of the rank's GPUs
#     nor on its way: src/execute.c, land_received(); sched/ooc.c, count_ready());
#     measured 0 to 11 of 432 per rank;
#   * the count sees the difference: with STARGEMM_PREFETCH_RECEIVED=0 (the default: a
#     received tile goes to its GPU only when its task becomes ready) at least 10% of
#     every rank's tasks are late (measured 78 to 104 of 432);
#   * by default, at least 25% of the model's peak: the host buffers of received tiles
#     are blocks of the pinned host pool (src/hostpool.c), pinned once and reused;
#     33.9% measured (as with StarPU's kept buffers, STARGEMM_HOST_POOL=0), 14.1%
#     with a buffer pinned per received tile and freed at once;
#   * with the prefetch, ragged and uneven (15000^3 in tiles of 1024: the ranks own 8
#     or 7 tile rows and columns, the last K tile is held on the GPUs): every rank ends
#     and prints its line, the ranks with more work receiving the tiles later than the
#     others ask for them.
# Kernels are not executed in simulation, so results are not compared here: the same
# product on CPUs is checked against BLAS by tests/ooc_4ranks.sh.
set -e
out="$BUILDDIR/tests/sim_cluster.out"
: >"$out"
bench="$BUILDDIR/bench/stargemm_pdgemm"
common="--nb 1024 --niter 1 --warmup 0 --ooc --peak 86400 --csv --quiet --per-rank --P 2 --Q 2"

run() { # label args... (environment: extra settings)
	label=$1
	shift
	echo "== $label" | tee -a "$out"
	env STARPU_NCPU=1 STARPU_NCUDA=3 STARPU_LIMIT_CUDA_MEM=300 \
		"$SRCDIR/tests/simrun.sh" summit 4 "$bench" $common "$@" 2>/dev/null |
		grep -E '^(stargemm|rank),' | sed "s/^/$label,/" | tee -a "$out"
}

# Every rank's line of $label: its rank, and whether FIELD checks hold (awk program
# on the columns of bench_print_rank(): $3 rank, $5 loads, $9 pred_loads, $10 mpi,
# $11 pred_mpi, $15 ooc_tasks, $17 late, after the label column is removed).
check() { # label description awk-condition
	label=$1 what=$2 cond=$3
	if ! grep "^$label,rank," "$out" | cut -d, -f2- | awk -F, -v what="$what" '
		{ n++ }
		!('"$cond"') { printf "FAIL: rank %s: %s (%s)\n", $3, what, $0; bad = 1 }
		END { if (n != 4) { printf "FAIL: %d rank lines, not 4\n", n; bad = 1 }
		      exit bad }'; then
		exit 1
	fi
	echo "ok: $label: $what, on every rank"
}

STARGEMM_PREFETCH_RECEIVED=1 run grid --m 12288 --n 12288 --k 12288
check grid "GPU loads within [0.90, 1.05] of the model" '$5 >= 0.90 * $9 && $5 <= 1.05 * $9'
check grid "MPI tiles within [0.90, 1.05] of the model" '$10 >= 0.90 * $11 && $10 <= 1.05 * $11'
check grid "at most 5% of the tasks late" '$15 > 0 && $17 <= 0.05 * $15'

STARGEMM_PREFETCH_RECEIVED=0 run grid-unprefetched --m 12288 --n 12288 --k 12288
check grid-unprefetched "received tiles left to their tasks: at least 10% late" \
	'$17 >= 0.10 * $15'
# The host buffers of received tiles from the pinned host pool, pinned once: at least
# 25% of the model's peak (33.9% measured; 14.1% with a buffer pinned per received
# tile and freed at once, StarPU's simulated 5.2 ms each).
grep "^grid-unprefetched,stargemm," "$out" | cut -d, -f2- | awk -F, '
	{ n++; if ($18 < 25) { printf "FAIL: %.1f%% of the model peak, below 25%%\n", $18; bad = 1 } }
	END { exit bad || n != 1 }' || exit 1
echo "ok: grid-unprefetched: at least 25% of the model's peak (host buffers pinned once)"

STARGEMM_PREFETCH_RECEIVED=1 run ragged --m 15000 --n 15000 --k 15000
check ragged "ends, with its out-of-core tasks counted" '$15 > 0'
