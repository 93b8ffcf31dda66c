#!/usr/bin/env bash
# bench/compare_dropin.sh — what a call of the ScaLAPACK drop-in costs against ScaLAPACK
# itself, from small calls to large: the dense benchmark's ScaLAPACK implementation
# (`--impl scalapack`: pdgemm_ on the P x Q grid, repeated on the same arrays), run as
# ScaLAPACK alone, then with libstargemm-scalapack preloaded running every call
# (STARGEMM_SCALAPACK_MIN_FLOPS=0), then preloaded with the library's default routing
# (calls below its threshold go to ScaLAPACK), interleaved in one call. Per size: the
# flops per process, each side's median time per call, and the two drop-in sides over
# ScaLAPACK's time; where "forced" crosses 1 is the drop-in's crossover, and "default"
# should stay near 1 below it and follow "forced" above.
#
# Usage: compare_dropin.sh [--ranks R] [--sizes "N ..."] [--rounds K] [--] [benchmark options]
#   --ranks R    MPI processes (default 1), each bound to cores/R cores (STARPU_NCPU
#                when set: then as many cores and stargemm workers), grid R x 1
#   --sizes      M = N = K of each case (default "128 256 512 1024 2048")
#   --rounds K   each side K times per size, interleaved; medians over all (default 3)
# Benchmark options (--nb, --prec, --niter, --warmup, --P, --Q ...) go to every run
# (defaults here: --nb 64 --niter 5 --warmup 2).
# Environment: STARGEMM_BENCH (the dense benchmark; default beside this script),
# STARGEMM_SCALAPACK_LIB (default: libstargemm-scalapack.so of this build or install).
# Exit status: 0; 1 if a run failed; 2 on a usage error; 77 if ScaLAPACK or the library
# is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bench=${STARGEMM_BENCH:-$here/stargemm_pdgemm}
[ -x "$bench" ] || [ -n "${STARGEMM_BENCH:-}" ] || bench=$here/../build/bench/stargemm_pdgemm
lib=${STARGEMM_SCALAPACK_LIB:-}
for cand in "$here/../lib" "$here/../.libs" "$here/../build/.libs"; do
	[ -n "$lib" ] && break
	[ -r "$cand/libstargemm-scalapack.so" ] && lib=$cand/libstargemm-scalapack.so
done
mpiexec=${MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec || true)}
ranks=1
sizes="128 256 512 1024 2048"
rounds=3

die() {
	local status=$1; shift
	echo "compare_dropin.sh: $*" >&2
	exit "$status"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--ranks) ranks=${2:?}; shift 2 ;;
	--sizes) sizes=${2:?}; shift 2 ;;
	--rounds) rounds=${2:?}; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
for v in "$ranks" "$rounds" $sizes; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || die 2 "--ranks, --rounds and --sizes want integers >= 1 (got '$v')"
done
[ -x "$bench" ] || die 2 "benchmark not found at $bench (set STARGEMM_BENCH)"
[ -n "$mpiexec" ] || die 2 "no mpiexec found"
[ -n "$lib" ] && [ -r "$lib" ] || die 77 "libstargemm-scalapack.so not found (set STARGEMM_SCALAPACK_LIB)"
"$bench" --impl scalapack --m 8 --n 8 --k 8 --nb 4 --niter 1 --warmup 0 >/dev/null 2>&1 ||
	die 77 "the benchmark has no ScaLAPACK implementation (built without ScaLAPACK)"

# Flops per multiply-add: 8 for complex types (--prec c or z among the options).
fma=2
args=" $* "
[[ "$args" =~ \ --prec[\ =]([cz])\  ]] && fma=8
cores=$(nproc)
per=${STARPU_NCPU:-$((cores / ranks > 0 ? cores / ranks : 1))}
bind=()
[ "$ranks" -le "$cores" ] && bind=(-bind-to "core:$per")
export STARPU_FXT_TRACE=0 STARPU_SILENT=1 OPENBLAS_NUM_THREADS=1 STARPU_NCPU=$per
export STARPU_HOME=${STARPU_HOME:-$HOME/.cache/stargemm/starpu-home}
mkdir -p "$STARPU_HOME"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run SIDE N: one benchmark run; its time_s column (seconds per call) to $work/SIDE.N.
run() {
	local side=$1 n=$2; shift 2
	local -a pre=()
	case "$side" in
	forced) pre=(env LD_PRELOAD="$lib" STARGEMM_SCALAPACK_MIN_FLOPS=0) ;;
	default) pre=(env -u STARGEMM_SCALAPACK_MIN_FLOPS LD_PRELOAD="$lib") ;;
	esac
	"$mpiexec" -n "$ranks" "${bind[@]}" "${pre[@]}" "$bench" --impl scalapack --m "$n" \
		--n "$n" --k "$n" --nb 64 --niter 5 --warmup 2 --peak 1 --quiet "$@" \
		>"$work/out" 2>"$work/err" || { cat "$work/err" >&2; die 1 "the $side run of $n failed"; }
	grep "^scalapack," "$work/out" >"$work/rows" ||
		{ cat "$work/out" "$work/err" >&2; die 1 "the $side run of $n printed no result"; }
	cut -d, -f15 "$work/rows" >>"$work/$side.$n"
}

# The median of the values on stdin, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "# ScaLAPACK pdgemm_ alone and through libstargemm-scalapack, $ranks ranks, $rounds rounds: $*"
echo "# n flops_per_process scalapack_ms forced_ms default_ms forced/scalapack default/scalapack"
for n in $sizes; do
	for ((r = 0; r < rounds; r++)); do
		for side in scalapack forced default; do
			run "$side" "$n" "$@"
		done
	done
	s=$(median <"$work/scalapack.$n") f=$(median <"$work/forced.$n") d=$(median <"$work/default.$n")
	awk -v n="$n" -v r="$ranks" -v s="$s" -v f="$f" -v d="$d" -v fma="$fma" 'BEGIN {
		printf "%d %.3g %.3f %.3f %.3f %.2f %.2f\n", n, fma * n * n * n / r, 1e3 * s,
			1e3 * f, 1e3 * d, (s > 0 ? f / s : 0), (s > 0 ? d / s : 0) }'
done
