#!/bin/sh
# tests/sim_ooc.sh — the out-of-core algorithm on simulated GPUs (StarPU SimGrid mode,
# the Summit-like node of perfmodels/: V100s of 16 GB, NVLink). Asserts, on small
# problems (tile 1024, a few hundred tasks each):
#   * GPU loads within [0.90, 1.05] of Eq. (1) in regimes (a), (c1) and (c2)
#     (GPU memory shrunk with STARPU_LIMIT_CUDA_MEM to reach c1 and c2);
#   * no C tile leaves its GPU before its block is finished: tiles written back to the
#     host never exceed the number of C tiles (A and B are never dirty, so a C tile
#     evicted early would be written back, and reloaded, twice);
#   * with 2 GPUs that have peer access, some loads come from the other GPU.
# Lookahead 2 vs 1 at C-block switches is reported, not asserted: on these small
# problems the two take the same simulated time (see doc/out-of-core.md).
set -e
out="$BUILDDIR/tests/sim_ooc.out"
: >"$out"
bench="$BUILDDIR/bench/stargemm_pdgemm"
# Kernels are not executed in simulation: no --check. The peak is the model's.
common="--nb 1024 --niter 1 --warmup 0 --ooc --peak 7200 --csv"

run() { # label ncuda limit_mib args...
	label=$1 ncuda=$2 limit=$3
	shift 3
	echo "== $label: $ncuda GPU(s), GPU memory limit ${limit:-none} MiB" | tee -a "$out"
	# No early write-back of dirty tiles (StarPU's clean-buffer targets), so that every
	# GPU -> host copy is a C tile leaving its GPU.
	env STARPU_NCPU=1 STARPU_NCUDA="$ncuda" ${limit:+STARPU_LIMIT_CUDA_MEM=$limit} \
		STARPU_MINIMUM_CLEAN_BUFFERS=0 STARPU_TARGET_CLEAN_BUFFERS=0 \
		"$SRCDIR/tests/simrun.sh" summit 1 "$bench" $common "$@" |
		grep -v '^\[starpu_comm' | sed "s/^stargemm,/$label,/" | tee -a "$out"
}

# 8 x 8 x 8 tiles of 1024: 64 C tiles, 512 GEMMs.
run a 1 "" --m 8192 --n 8192 --k 8192
run c1 1 900 --m 8192 --n 8192 --k 8192
run c2 1 420 --m 8192 --n 8192 --k 8192 --lookahead 2
run c2-l1 1 420 --m 8192 --n 8192 --k 8192 --lookahead 1
run d2d 2 "" --m 8192 --n 8192 --k 8192

awk -F, '
	/^impl,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
	/^==/ { next }
	{
		label = $1; n[label]++
		t[label] = $col["time_s"]; r = $col["loads_ratio"]
		printf "%-6s case %-2s time %8.4f s  loads %s / model %s = %s  d2d %s  d2h %s\n",
			label, $col["case"], t[label], $col["loads"], $col["pred_loads"], r,
			$col["d2d_tiles"], $col["d2h_tiles"]
		want = label; sub(/-l1$/, "", want); sub(/^d2d$/, "", want)
		if (want != "" && $col["case"] != want) { print "  wrong regime"; bad = 1 }
		if (r < 0.90 || r > 1.05) { print "  loads outside [0.90, 1.05] of the model"; bad = 1 }
		if ($col["d2h_tiles"] > 64) { print "  a C tile left its GPU early"; bad = 1 }
		if (label == "d2d" && $col["d2d_tiles"] <= 0) { print "  no GPU->GPU load"; bad = 1 }
	}
	END {
		if (n["a"] + n["c1"] + n["c2"] + n["c2-l1"] + n["d2d"] != 5) { print "missing runs"; exit 1 }
		printf "lookahead 2: %.4f s, lookahead 1: %.4f s (c2, reported only)\n", t["c2"], t["c2-l1"]
		exit bad
	}' "$out"
echo "simulated out-of-core OK"
