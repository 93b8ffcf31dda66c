#!/usr/bin/env bash
# bench/compare.sh — run the same GEMM with one BLAS dgemm call, ScaLAPACK pdgemm and
# stargemm, one after the other in one run, and print stargemm's ratio to both.
#
# Usage: compare.sh [--ranks R] [--stargemm-ranks S] [--rounds N] [--] [benchmark options]
#   --ranks R           MPI processes for ScaLAPACK (default: number of cores)
#   --stargemm-ranks S  stargemm configurations to run, a comma list of process counts
#                       (default "1,R": one process with every core as workers, and R
#                       processes with cores/R workers each)
#   --rounds N          repeat the whole sequence N times, interleaved (default 1)
# Benchmark options (--m --n --k --nb --niter --warmup ...) are passed to every run;
# --nb is the stargemm tile and the ScaLAPACK block size. Output: every CSV line, then a
# summary of the best rate of each configuration and the ratios.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# The benchmark: $STARGEMM_BENCH, else beside this script (run from a build tree or
# the GPU bundle), else in build/ (scripts/quickstart.sh's build, for a run from the
# source tree as the README shows).
bench=${STARGEMM_BENCH:-$here/stargemm_pdgemm}
[ -x "$bench" ] || [ -n "${STARGEMM_BENCH:-}" ] || bench=$here/../build/bench/stargemm_pdgemm
mpiexec=${MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec || true)}
cores=$(nproc)
ranks=$cores
stargemm_ranks=""
rounds=1
while [ $# -gt 0 ]; do
	case "$1" in
	--ranks) ranks=$2; shift 2 ;;
	--stargemm-ranks) stargemm_ranks=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ -n "$stargemm_ranks" ] || stargemm_ranks="1,$ranks"
[ -x "$bench" ] || { echo "compare.sh: benchmark not found at $bench (set STARGEMM_BENCH)" >&2; exit 2; }
[ -n "$mpiexec" ] || { echo "compare.sh: no mpiexec found" >&2; exit 2; }

export STARPU_FXT_TRACE=0 STARPU_SILENT=1 OPENBLAS_NUM_THREADS=1
export STARPU_HOME=${STARPU_HOME:-$HOME/.cache/stargemm/starpu-home}
mkdir -p "$STARPU_HOME"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# run NP EXTRA_ENV... -- ARGS: one configuration; its CSV lines go to stdout and $out.
run() {
	local np=$1 per=$((cores / $1)); shift
	[ "$per" -ge 1 ] || per=1
	STARPU_NCPU=$per STARPU_WORKERS_GETBIND=1 \
		"$mpiexec" -n "$np" -bind-to core:"$per" "$bench" "$@" | grep -v '^impl,' | tee -a "$out"
}

"$bench" --help >/dev/null
"$bench" --help >/dev/null; "$bench" --impl blas --m 1 --n 1 --k 1 --niter 1 --warmup 0 --csv | sed -n 1p
for ((round = 0; round < rounds; round++)); do
	"$bench" --impl blas --ncpus "$cores" "$@" | grep -v '^impl,' | tee -a "$out"
	run "$ranks" --impl scalapack "$@" || echo "# scalapack not available" >&2
	IFS=, read -ra configs <<<"$stargemm_ranks"
	for np in "${configs[@]}"; do
		run "$np" --impl stargemm "$@"
	done
done

echo
echo "# best GFLOP/s per configuration (impl x ranks x workers) and ratios to the peers"
awk -F, '
	{ key = $1 " ranks=" $12 " workers=" $13; if ($16 > best[key]) best[key] = $16
	  if ($1 == "blas" && $16 > blas) blas = $16
	  if ($1 == "scalapack" && $16 > scal) scal = $16 }
	END {
		for (k in best) {
			line = sprintf("%-40s %8.2f GFLOP/s", k, best[k])
			if (k ~ /^stargemm/) {
				if (blas > 0) line = line sprintf("  %5.1f%% of blas", 100 * best[k] / blas)
				if (scal > 0) line = line sprintf("  %4.2fx scalapack", best[k] / scal)
			}
			print line
		}
	}' "$out" | sort
if grep -q ',FAIL,' "$out"; then
	echo "compare.sh: a checked run FAILED" >&2
	exit 1
fi
