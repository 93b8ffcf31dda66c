#!/usr/bin/env bash
# bench/compare_gpu.sh — on a GPU node, run in one call: the kernel's in-core rate (one
# cublasDgemm on matrices already on the GPU), cublasXtDgemm on the host-resident
# problem, and stargemm's out-of-core GEMM on the same problem with the GPU memory
# limited (STARPU_LIMIT_CUDA_MEM), then print stargemm's ratio to each (the
# targets: >= 85% of in-core cublasDgemm, faster than cublasXtDgemm) and its loads
# against the model.
#
# Usage: compare_gpu.sh [--kernel-n N] [--device-mem MIB] [--xt-nb N] [--rounds R]
#                       [--] [benchmark options]
#   --kernel-n N      size of the in-core cublasDgemm (N^3; default 16384: A, B and C
#                     must fit on the GPU together)
#   --device-mem MIB  GPU memory stargemm may use (STARPU_LIMIT_CUDA_MEM; default 16384)
#   --xt-nb N         cublasXt block size (default: the benchmark's --nb)
#   --rounds R        repeat the sequence R times, interleaved (default 1)
# Benchmark options (--m --n --k --nb --niter --warmup --ngpus --check ...) go to every
# run; stargemm runs with --ooc. Output: every CSV line, then the best rate of each and
# the ratios. Exit status 77 when no GPU is visible.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# The benchmark: $STARGEMM_BENCH, else beside this script (run from a build tree or
# the GPU bundle), else in build/ (scripts/quickstart.sh's build, for a run from the
# source tree as the README shows).
bench=${STARGEMM_BENCH:-$here/stargemm_pdgemm}
[ -x "$bench" ] || [ -n "${STARGEMM_BENCH:-}" ] || bench=$here/../build/bench/stargemm_pdgemm
kernel_n=16384
device_mem=16384
xt_nb=""
rounds=1
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel-n) kernel_n=$2; shift 2 ;;
	--device-mem) device_mem=$2; shift 2 ;;
	--xt-nb) xt_nb=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ -x "$bench" ] || { echo "compare_gpu.sh: benchmark not found at $bench (set STARGEMM_BENCH)" >&2; exit 2; }

export STARPU_SILENT=1 STARPU_FXT_TRACE=0
export STARPU_HOME=${STARPU_HOME:-$HOME/.cache/stargemm/starpu-home}
mkdir -p "$STARPU_HOME"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# peer IMPL ARGS...: one run; a skipped peer (77) ends the comparison with 77.
peer() {
	local rc=0
	"$bench" "$@" >"$out.run" || rc=$?
	grep -v '^impl,' "$out.run" | tee -a "$out" || true
	rm -f "$out.run"
	if [ "$rc" = 77 ]; then
		echo "compare_gpu.sh: no GPU run possible here; skipped" >&2
		exit 77
	fi
	return "$rc"
}

"$bench" --impl blas --m 1 --n 1 --k 1 --niter 1 --warmup 0 --csv | sed -n 1p
for ((round = 0; round < rounds; round++)); do
	peer --impl cublas "$@" --m "$kernel_n" --n "$kernel_n" --k "$kernel_n"
	peer --impl cublasxt "$@" ${xt_nb:+--nb "$xt_nb"}
	STARPU_LIMIT_CUDA_MEM=$device_mem peer --impl stargemm --ooc "$@"
done

echo
echo "# best GFLOP/s of each, stargemm's ratios (targets: >= 85% of in-core cublasDgemm,"
echo "# > 1x cublasXtDgemm) and its loads against the model"
awk -F, '
	{ if ($16 > best[$1]) { best[$1] = $16; if ($1 == "stargemm") lr = $28 } }
	END {
		for (k in best) printf("%-10s %10.1f GFLOP/s\n", k, best[k])
		if (best["stargemm"] > 0 && best["cublas"] > 0)
			printf("stargemm / in-core cublasDgemm: %.1f%%\n",
			       100 * best["stargemm"] / best["cublas"])
		if (best["stargemm"] > 0 && best["cublasxt"] > 0)
			printf("stargemm / cublasXtDgemm: %.2fx\n", best["stargemm"] / best["cublasxt"])
		if (lr != "") printf("stargemm loads / model: %s\n", lr)
	}' "$out"
if grep -q ',FAIL,' "$out"; then
	echo "compare_gpu.sh: a checked run FAILED" >&2
	exit 1
fi
