#!/usr/bin/env bash
# bench/compare_dbcsr.sh — run stargemm's block-sparse benchmark and its libDBCSR peer
# (bench/dbcsr_peer.c) on the same bsgen problem, with the same ranks and threads, in
# one call, and print each one's median GFLOP/s and the ratio stargemm/dbcsr.
#
# Why a script: the two cannot share a binary. Debian's libdbcsr is built with Open MPI,
# stargemm with MPICH, so the peer runs under mpiexec.openmpi and stargemm under
# mpiexec.mpich. Both read the same generator options and print the same CSV columns
# (impl,ranks,threads,...,gflops,residual; stargemm may add columns at the end), which
# are read by header name, not position.
#
# Usage: compare_dbcsr.sh [--ranks R] [--threads T] [--rounds N]
#                         [--stargemm-args "..."] [--dbcsr-args "..."] [--]
#                         [generator options: --m --n --k --lo --hi --density-a
#                          --density-b --density-c --seed --niter --warmup --eps --check]
#   --ranks R    MPI processes of each run (default: number of cores)
#   --threads T  threads per process: OpenMP threads of DBCSR, StarPU CPU workers of
#                stargemm (STARPU_NCPU); BLAS stays serial (default 1)
#   --rounds N   repeat the pair N times, interleaved; medians over every repetition
#   --stargemm-args, --dbcsr-args  extra options for one side only
# Environment: DBCSR_PEER (default: stargemm_dbcsr_peer next to this script),
# STARGEMM_BSGEMM (default: stargemm_bsgemm next to this script), GLIBC_TUNABLES (default:
# freed memory kept for reuse on both sides, as stargemm_init() does by itself).
# Exit status: 0; 1 if a run failed or a checked residual is above 10; 2 on a usage
# error or a missing stargemm benchmark; 77 if the DBCSR peer or Open MPI is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# The programs: the variables, else beside this script (a build tree), else in build/
# (scripts/quickstart.sh's build, for a run from the source tree).
peer=${DBCSR_PEER:-$here/stargemm_dbcsr_peer}
[ -x "$peer" ] || [ -n "${DBCSR_PEER:-}" ] || peer=$here/../build/bench/stargemm_dbcsr_peer
bsgemm=${STARGEMM_BSGEMM:-$here/stargemm_bsgemm}
[ -x "$bsgemm" ] || [ -n "${STARGEMM_BSGEMM:-}" ] || bsgemm=$here/../build/bench/stargemm_bsgemm
cores=$(nproc)
ranks=$cores
threads=1
rounds=1
stargemm_args=""
dbcsr_args=""

die() {
	local status=$1; shift
	echo "compare_dbcsr.sh: $*" >&2
	exit "$status"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--ranks) ranks=${2:?}; shift 2 ;;
	--threads) threads=${2:?}; shift 2 ;;
	--rounds) rounds=${2:?}; shift 2 ;;
	--stargemm-args) stargemm_args=${2?}; shift 2 ;;
	--dbcsr-args) dbcsr_args=${2?}; shift 2 ;;
	--help|-h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
for v in "$ranks" "$threads" "$rounds"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die 2 "--ranks, --threads and --rounds want integers >= 1"
done

[ -x "$peer" ] || die 77 "DBCSR peer not found at $peer (build it, see bench/dbcsr_peer.c, or set DBCSR_PEER); skipping"
command -v mpiexec.openmpi >/dev/null || die 77 "mpiexec.openmpi not found (Open MPI is needed by libdbcsr); skipping"
[ -x "$bsgemm" ] || die 2 "stargemm benchmark not found at $bsgemm (set STARGEMM_BSGEMM)"
command -v mpiexec.mpich >/dev/null || die 2 "mpiexec.mpich not found"

# Open MPI refuses root unless told; MPICH does not care.
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads
# The same allocator policy on both sides: stargemm_init() keeps freed memory for
# reuse (src/runtime.c, keep_memory()); the peer gets it from glibc's tunables. Without
# it, on machines where page faults and TLB flushes are dear (virtual machines), DBCSR
# spent most of its time faulting fresh pages in (doc/performance.md).
export GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824}
export STARPU_FXT_TRACE=0 STARPU_SILENT=1
export STARPU_HOME=${STARPU_HOME:-$HOME/.cache/stargemm/starpu-home}
mkdir -p "$STARPU_HOME"

# Bind each process to T cores when R x T cores exist, else bind nothing.
if [ $((ranks * threads)) -le "$cores" ]; then
	ompi_bind=(--map-by "slot:PE=$threads" --bind-to core)
	mpich_bind=(-bind-to "core:$threads")
else
	echo "# warning: $ranks x $threads threads on $cores cores is oversubscribed;" \
		"the rates mean little" >&2
	ompi_bind=(--oversubscribe --bind-to none)
	mpich_bind=(-bind-to none)
	export OMP_WAIT_POLICY=PASSIVE   # spinning OpenMP threads starve the others
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run_dbcsr ROUND ARGS...: one peer run; CSV to $work/dbcsr.ROUND and stdout.
run_dbcsr() {
	local out=$work/dbcsr.$1 status=0; shift
	# shellcheck disable=SC2086 # --dbcsr-args is a word list on purpose
	mpiexec.openmpi -n "$ranks" "${ompi_bind[@]}" "$peer" "$@" $dbcsr_args --csv \
		>"$out" || status=$?
	cat "$out"
	return "$status"
}

# run_stargemm ROUND ARGS...: the same for stargemm's benchmark.
run_stargemm() {
	local out=$work/stargemm.$1 status=0; shift
	# shellcheck disable=SC2086
	STARPU_NCPU=$threads mpiexec.mpich -n "$ranks" "${mpich_bind[@]}" \
		"$bsgemm" "$@" $stargemm_args --csv >"$out" || status=$?
	cat "$out"
	return "$status"
}

failed=0
for ((round = 0; round < rounds; round++)); do
	run_dbcsr "$round" "$@" || { echo "# dbcsr run $round failed" >&2; failed=1; }
	run_stargemm "$round" "$@" || { echo "# stargemm run $round failed" >&2; failed=1; }
done

# Every CSV file: the header line names the columns; rows follow. Prints, per impl,
# "impl ranks threads reps median min max" and sets status 1 on a residual above 10.
summarize() {
	awk -F, '
	FNR == 1 { split("", col) }
	/^impl,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
	!("gflops" in col) || !("impl" in col) || NF < col["gflops"] { next }
	{
		impl = $col["impl"]; key = impl
		r[key] = $col["ranks"]; t[key] = $col["threads"]
		rate[key, ++n[key]] = $col["gflops"] + 0
		if (("residual" in col) && $col["residual"] + 0 > 10) bad = 1
	}
	function median(k,    i, j, x, m) {
		m = n[k]
		for (i = 1; i <= m; i++) v[i] = rate[k, i]
		for (i = 2; i <= m; i++) {   # insertion sort: a handful of values
			x = v[i]
			for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]
			v[j + 1] = x
		}
		lo[k] = v[1]; hi[k] = v[m]
		return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
	}
	function show(k) {
		if (k in med)
			printf "%-9s %5s %7s %4d %12.3f %9.3f %9.3f\n", k, r[k], t[k], n[k],
				med[k], lo[k], hi[k]
	}
	END {
		printf "%-9s %5s %7s %4s %12s %9s %9s\n", "# impl", "ranks", "threads",
			"reps", "median_GF/s", "min", "max"
		for (k in n)
			med[k] = median(k)
		show("dbcsr")
		show("stargemm")
		for (k in n)
			if (k != "dbcsr" && k != "stargemm")
				show(k)
		if (("dbcsr" in med) && ("stargemm" in med) && med["dbcsr"] > 0)
			printf "ratio stargemm/dbcsr (medians): %.3f\n", med["stargemm"] / med["dbcsr"]
		else
			print "ratio stargemm/dbcsr: n/a (a side has no result)"
		exit bad
	}' "$@"
}

echo
echo "# median GFLOP/s (useful flops / max seconds over ranks) over every repetition"
shopt -s nullglob
summarize "$work"/dbcsr.* "$work"/stargemm.* || { echo "compare_dbcsr.sh: a checked residual is above 10" >&2; failed=1; }
exit "$failed"
