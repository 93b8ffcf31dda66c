#!/bin/sh
# tests/sim_in_core.sh — in-core products whose shape leaves few C tiles or C tile
# columns, on simulated GPUs (StarPU SimGrid mode, the Summit-like node of
# perfmodels/: V100s at 7.2 TFLOP/s, CPU cores at 25 GFLOP/s), run where the GPUs are.
# Kernels are not executed here; the same products on CPUs are checked against BLAS by
# tests/ksplit.sh and tests/stationary.sh. Asserts:
#   * X^T Y with the inner dimension split (src/ksplit.c; 64 x 64 x 10^6 on 2 ranks of
#     3 GPUs and 1 CPU worker): at least 10 times the CPU workers' peak (1,223 GFLOP/s
#     against 50; the split's GEMMs carry the device of their segment: without it
#     they went to the CPU workers);
#   * C = A X, A block-sparse (10^5, tiles 500-1000, 2% present), X of 64 columns, with
#     A kept in place (--stationary A) on 2 x 2 ranks of one GPU and one CPU worker: at
#     least 10 times the CPU workers' peak (4,570 GFLOP/s against 100);
#   * the same C = A X kept in C on one rank: 3 GPUs at least 1.8 times as fast as 1
#     (2.43x: C's one tile column, so the GPUs are dealt its rows,
#     src/inspect.c, stargemm__in_core_by_rows(); all went to the first GPU), and with
#     small tiles (100-200, 0.5% present: batched, codelets/batch.c) too (2.22x: the
#     batches span the rank's rows and 1 column, src/batchlist.c, batch_side(); they
#     were cut to a product or two, 12.4 ms on 1 GPU and 18.3 ms on 3).
# GFLOP/s: useful flops over the product's simulated time (seconds - symbolic_s) of the
# second of two products. The simulation is deterministic.
set -e
out="$BUILDDIR/tests/sim_in_core.out"
: >"$out"

# gflops LABEL NP NCPU NCUDA BENCH ARGS...: the GFLOP/s of the last product, into $out.
gflops() {
	label=$1 np=$2 ncpu=$3 ncuda=$4 bench=$5
	shift 5
	env STARPU_NCPU="$ncpu" STARPU_NCUDA="$ncuda" "$SRCDIR/tests/simrun.sh" summit "$np" \
		"$BUILDDIR/bench/$bench" --niter 2 --warmup 1 --csv --quiet "$@" 2>/dev/null |
		awk -F, -v label="$label" '
			/^impl,/ { for (i = 1; i <= NF; i++) h[$i] = i; next }
			/^stargemm,/ { last = $0 }
			END {
				split(last, f, ",")
				if ("gflops" in h && !("useful_gflop" in h)) g = f[h["gflops"]]
				else if (f[h["seconds"]] - f[h["symbolic_s"]] > 0)
					g = f[h["useful_gflop"]] / (f[h["seconds"]] - f[h["symbolic_s"]])
				printf "%.1f\n", g
			}' | tee -a "$out" | sed "s/^/$label: /" >&2
	tail -n 1 "$out"
}

at_least() { # what value floor
	if awk -v v="$2" -v f="$3" 'BEGIN { exit !(v >= f) }'; then
		echo "ok: $1: $2 >= $3"
	else
		echo "FAIL: $1: $2 < $3"
		exit 1
	fi
}

g=$(gflops ksplit 2 1 3 stargemm_pdgemm --m 64 --n 64 --k 1000000 --nb 512 --transA T \
	--P 2 --Q 1)
at_least "X^T Y split over 2 ranks of 3 GPUs, GFLOP/s over 10x the CPUs' 50" "$g" 500

ts="--m 100000 --k 100000 --n 64 --density-b 1 --no-dense"
big="$ts --lo 500 --hi 1000 --density-a 0.02"
g=$(gflops stat_a 4 1 1 stargemm_bsgemm $big --P 2 --Q 2 --stationary A)
at_least "A X with A in place on 2 x 2 ranks of 1 GPU, GFLOP/s over 10x the CPUs' 100" "$g" 1000

one=$(gflops big1 1 1 1 stargemm_bsgemm $big --P 1 --Q 1 --stationary C)
three=$(gflops big3 1 1 3 stargemm_bsgemm $big --P 1 --Q 1 --stationary C)
at_least "A X kept in C, tiles 500-1000: 3 GPUs over 1.8x 1 GPU" "$three" \
	"$(awk -v x="$one" 'BEGIN { print 1.8 * x }')"

small="$ts --lo 100 --hi 200 --density-a 0.005"
one=$(gflops small1 1 1 1 stargemm_bsgemm $small --P 1 --Q 1 --stationary C)
three=$(gflops small3 1 1 3 stargemm_bsgemm $small --P 1 --Q 1 --stationary C)
at_least "A X kept in C, tiles 100-200 (batched): 3 GPUs over 1.8x 1 GPU" "$three" \
	"$(awk -v x="$one" 'BEGIN { print 1.8 * x }')"
