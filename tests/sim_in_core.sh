#!/bin/sh
# tests/sim_in_core.sh — in-core products whose shape leaves few C tiles or C tile
# columns, on simulated GPUs (StarPU SimGrid mode, the Summit-like node of
# perfmodels/: V100s at 7.2 TFLOP/s, CPU cores at 25 GFLOP/s), run where the GPUs are.
# Kernels are not executed here; the same products on CPUs are checked against BLAS by
# tests/ksplit.sh and tests/stationary.sh. Asserts:
#   * X^T Y with the inner dimension split (src/ksplit.c; 64 x 64 x 10^6 on 2 ranks of
#     3 GPUs and 1 CPU worker): at least 10 times the CPU workers' peak (1,212 GFLOP/s
#     against 50; the split's GEMMs carry the device of their segment: without it
#     they went to the CPU workers);
#   * C = A X, A block-sparse (10^5, tiles 500-1000, 2% present), X of 64 columns, with
#     A kept in place (--stationary A) on 2 x 2 ranks of one GPU and one CPU worker: at
#     least 10 times the CPU workers' peak (4,475 GFLOP/s against 100);
#   * the same C = A X kept in C on one rank: 3 GPUs at least 1.8 times as fast as 1
#     (2.43x: C's one tile column, so the GPUs are dealt its rows,
#     src/inspect.c, stargemm__in_core_by_rows(); all went to the first GPU), and with
#     small tiles (100-200, 0.5% present: batched, codelets/batch.c) too (2.02x: the
#     batches span the rank's rows and 1 column, src/batchlist.c, batch_side(); they
#     were cut to a product or two, 12.4 ms on 1 GPU and 18.3 ms on 3);
#   * the stationary choice with GPUs (src/choice.c), cold (one product: nothing in
#     StarPU-MPI's cache, nothing on the GPUs), the large-tile A X on 2 x 2 ranks of
#     one GPU: auto keeps A in place, at 0.9 of forced A's GFLOP/s or more (0.96), and
#     the model's time of C is within [0.8, 1.25] of C's run (0.303 s against 0.333 s:
#     received tiles need pinned host memory, 650 us a MiB in StarPU's simulation;
#     without that term the model gave 0.024 s); with tiles of 100-200 (C's list
#     batched, A's one task a product: the model counts a task's cost, measured by a
#     probe, src/taskcost.c), cold, auto keeps A (A 0.106 s, C 0.162 s) at 0.9 of
#     forced A or more, and told 20 products it keeps C (warm, C 0.0035 s a product, A
#     0.024 s; without the tasks' cost the model kept A); with the pinned host pool off (STARGEMM_HOST_POOL=0, StarPU
#     pins each received tile's buffer) the model's time of C is as near C's run (the
#     rate measured by pinning a probe buffer; 0.303 s against 0.297 s: without it the
#     model had no pinning term);
#   * over a run of products that read A and X unchanged (stargemm_bsgemm_options
#     .reuse_a, reuse_b; bench --reuse), n = 512 on the same 2 x 2 ranks, where C pays
#     from 18 products on (cold C 0.434 s then 0.0153 s a product, A 0.224 s then
#     0.0273 s): told 40, auto keeps C, and the model's mean time of C per product is
#     within [0.8, 1.25] of C's over 40 (0.0245 s against 0.0258 s); told 2, it keeps A.
# GFLOP/s: useful flops over the product's simulated time (seconds - symbolic_s) of the
# second of two products. The simulation is deterministic.
set -e
out="$BUILDDIR/tests/sim_in_core.out"
: >"$out"

# run LABEL NP NCPU NCUDA BENCH ARGS...: of the last product, "GFLOP/s seconds" and
# for stargemm_bsgemm "stationary model_c_s model_a_s model_b_s", into $out; prints
# the GFLOP/s. Two products (the second measured) unless ARGS say otherwise.
run() {
	label=$1 np=$2 ncpu=$3 ncuda=$4 bench=$5
	shift 5
	env STARPU_NCPU="$ncpu" STARPU_NCUDA="$ncuda" "$SRCDIR/tests/simrun.sh" summit "$np" \
		"$BUILDDIR/bench/$bench" --niter 2 --warmup 1 --csv --quiet "$@" 2>/dev/null |
		awk -F, -v label="$label" '
			/^impl,/ { for (i = 1; i <= NF; i++) h[$i] = i; next }
			/^stargemm,/ { last = $0 }
			END {
				split(last, f, ",")
				if ("gflops" in h && !("useful_gflop" in h)) {
					g = f[h["gflops"]]; t = f[h["time_s"]]
				} else {
					t = f[h["seconds"]] - f[h["symbolic_s"]]
					g = t > 0 ? f[h["useful_gflop"]] / t : 0
				}
				printf "%s %.1f %.6f", label, g, t
				if ("stationary" in h)
					printf " %s %s %s %s", f[h["stationary"]], f[h["model_c_s"]],
					       f[h["model_a_s"]], f[h["model_b_s"]]
				printf "\n"
			}' >>"$out"
	tail -n 1 "$out" >&2
	tail -n 1 "$out" | cut -d' ' -f2
}
# field LABEL N: field N of LABEL's line (2 GFLOP/s, 3 seconds, 4 stationary, 5-7
# model_c_s, model_a_s, model_b_s).
field() {
	grep "^$1 " "$out" | tail -n 1 | cut -d' ' -f"$2"
}

at_least() { # what value floor
	if awk -v v="$2" -v f="$3" 'BEGIN { exit !(v >= f) }'; then
		echo "ok: $1: $2 >= $3"
	else
		echo "FAIL: $1: $2 < $3"
		exit 1
	fi
}

g=$(run ksplit 2 1 3 stargemm_pdgemm --m 64 --n 64 --k 1000000 --nb 512 --transA T \
	--P 2 --Q 1)
at_least "X^T Y split over 2 ranks of 3 GPUs, GFLOP/s over 10x the CPUs' 50" "$g" 500

ts="--m 100000 --k 100000 --n 64 --density-b 1 --no-dense"
big="$ts --lo 500 --hi 1000 --density-a 0.02"
g=$(run stat_a 4 1 1 stargemm_bsgemm $big --P 2 --Q 2 --stationary A)
at_least "A X with A in place on 2 x 2 ranks of 1 GPU, GFLOP/s over 10x the CPUs' 100" "$g" 1000

one=$(run big1 1 1 1 stargemm_bsgemm $big --P 1 --Q 1 --stationary C)
three=$(run big3 1 1 3 stargemm_bsgemm $big --P 1 --Q 1 --stationary C)
at_least "A X kept in C, tiles 500-1000: 3 GPUs over 1.8x 1 GPU" "$three" \
	"$(awk -v x="$one" 'BEGIN { print 1.8 * x }')"

small="$ts --lo 100 --hi 200 --density-a 0.005"
one=$(run small1 1 1 1 stargemm_bsgemm $small --P 1 --Q 1 --stationary C)
three=$(run small3 1 1 3 stargemm_bsgemm $small --P 1 --Q 1 --stationary C)
at_least "A X kept in C, tiles 100-200 (batched): 3 GPUs over 1.8x 1 GPU" "$three" \
	"$(awk -v x="$one" 'BEGIN { print 1.8 * x }')"

# The stationary choice on ranks with GPUs, cold (one product, nothing cached): A X
# with the large tiles above on 2 x 2 ranks of one GPU.
for v in A C auto; do
	run "cold_$v" 4 1 1 stargemm_bsgemm $big --P 2 --Q 2 --stationary "$v" --niter 1 \
		--warmup 0 >/dev/null
done
[ "$(field cold_auto 4)" = A ] || { echo "FAIL: cold auto chose $(field cold_auto 4), not A"; exit 1; }
echo "ok: cold, the automatic choice keeps A in place"
at_least "cold: auto's GFLOP/s over 0.9 of A's" "$(field cold_auto 2)" \
	"$(awk -v x="$(field cold_A 2)" 'BEGIN { print 0.9 * x }')"
ratio=$(awk -v m="$(field cold_auto 5)" -v t="$(field cold_C 3)" 'BEGIN { print m / t }')
at_least "cold: the model's time of C over 0.8 of C's (the pinning of what it receives)" \
	"$ratio" 0.8
at_least "cold: C's time over 0.8 of the model's" \
	"$(awk -v r="$ratio" 'BEGIN { print 1 / r }')" 0.8

# Tiles of 100-200 on ranks with GPUs: C's list batched, A's one task a product.
for v in A auto; do
	run "cold_small_$v" 4 1 1 stargemm_bsgemm $small --P 2 --Q 2 --stationary "$v" \
		--niter 1 --warmup 0 >/dev/null
done
run small_told20 4 1 1 stargemm_bsgemm $small --P 2 --Q 2 --reuse 20 --niter 1 --warmup 0 \
	>/dev/null
[ "$(field cold_small_auto 4)" = A ] && [ "$(field small_told20 4)" = C ] ||
	{ echo "FAIL: small tiles on GPUs: chose $(field cold_small_auto 4) (not A) cold, $(field small_told20 4) (not C) told 20"; exit 1; }
echo "ok: small tiles on GPUs: cold A kept, told 20 products C"
at_least "small tiles, cold: auto's GFLOP/s over 0.9 of A's" "$(field cold_small_auto 2)" \
	"$(awk -v x="$(field cold_small_A 2)" 'BEGIN { print 0.9 * x }')"

# The pinned host pool off: StarPU pins each received tile's buffer; the model pins a
# probe to know the rate (src/hostpool.c, stargemm__hostpool_pinning()).
export STARGEMM_HOST_POOL=0
for v in C auto; do
	run "nopool_$v" 4 1 1 stargemm_bsgemm $big --P 2 --Q 2 --stationary "$v" --niter 1 \
		--warmup 0 >/dev/null
done
unset STARGEMM_HOST_POOL
ratio=$(awk -v m="$(field nopool_auto 5)" -v t="$(field nopool_C 3)" 'BEGIN { print m / t }')
at_least "no host pool: the model's time of C over 0.8 of C's (the probe's pinning rate)" \
	"$ratio" 0.8
at_least "no host pool: C's time over 0.8 of the model's" \
	"$(awk -v r="$ratio" 'BEGIN { print 1 / r }')" 0.8

# A run of products with A and X unchanged (--reuse N), n = 512: C's cold product and
# a warm one, then the choice told 40 and told 2.
wide="--m 100000 --k 100000 --n 512 --density-b 1 --no-dense --lo 500 --hi 1000 --density-a 0.02"
run seq_C_cold 4 1 1 stargemm_bsgemm $wide --P 2 --Q 2 --stationary C --niter 1 \
	--warmup 0 >/dev/null
run seq_C_warm 4 1 1 stargemm_bsgemm $wide --P 2 --Q 2 --stationary C >/dev/null
run seq_40 4 1 1 stargemm_bsgemm $wide --P 2 --Q 2 --reuse 40 --niter 1 --warmup 0 >/dev/null
run seq_2 4 1 1 stargemm_bsgemm $wide --P 2 --Q 2 --reuse 2 --niter 1 --warmup 0 >/dev/null
[ "$(field seq_40 4)" = C ] && [ "$(field seq_2 4)" = A ] ||
	{ echo "FAIL: told 40 products chose $(field seq_40 4) (not C), told 2 $(field seq_2 4) (not A)"; exit 1; }
echo "ok: told 40 products with A and X unchanged, auto keeps C; told 2, A"
ratio=$(awk -v m="$(field seq_40 5)" -v c="$(field seq_C_cold 3)" -v w="$(field seq_C_warm 3)" \
	'BEGIN { print m / ((c + 39 * w) / 40) }')
at_least "told 40: the model's mean time of C over 0.8 of C's mean over 40" "$ratio" 0.8
at_least "told 40: C's mean over 0.8 of the model's" \
	"$(awk -v r="$ratio" 'BEGIN { print 1 / r }')" 0.8
