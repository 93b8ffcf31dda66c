#!/usr/bin/env bash
# bench/sweep_cpu.sh — how fast stargemm is on the CPUs of the machine it runs on, beside
# its peers, in one run: the figures of doc/performance.md's "Portable performance".
#
#   dense   stargemm_pdgemm (1 rank, every core a worker) at tiles 128 to 2048, N = 6144,
#           each beside one OpenBLAS dgemm call on as many threads
#   host    stargemm_dgemm() with its default tile at N = 1024 to 12288, each beside
#           one OpenBLAS dgemm call on as many threads
#   sparse  block-sparse stargemm against libDBCSR (bench/compare_dbcsr.sh), one rank,
#           one thread each, at tiles 5, 10-30, 20-60, 64 and 256-1024
#
# Usage: sweep_cpu.sh [--out DIR] [--rounds N] [--parts dense,host,sparse] [--quick]
#   --out DIR     CSV files and plots go there (default: sweep-cpu/)
#   --rounds N    repeat each pair N times, interleaved (default 2)
#   --parts LIST  which of dense, host, sparse (default: all three)
#   --quick       small sizes (a check that the script runs: tests/bench_check.sh)
# Environment: BENCH_DIR, the directory of the built benchmarks (default: this
# script's own when installed beside them, else ./bench, else build/bench). Each CSV row is one timed
# repetition; the summary lines give medians and ratios; bench/plot.sh draws the
# plots (sweep_dense_tile, sweep_host_size, sweep_sparse_ratio) when gnuplot exists.
# The machine's kernel measurements (codelets/calibrate.c) are printed first.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=sweep-cpu rounds=2 parts=dense,host,sparse quick=0
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=${2:?}; shift 2 ;;
	--rounds) rounds=${2:?}; shift 2 ;;
	--parts) parts=${2:?}; shift 2 ;;
	--quick) quick=1; shift ;;
	--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "sweep_cpu.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
bench_dir=${BENCH_DIR:-}
for d in "$bench_dir" "$here" "$PWD/bench" "$here/../build/bench"; do
	if [ -n "$d" ] && [ -x "$d/stargemm_pdgemm" ]; then bench_dir=$d; break; fi
done
[ -x "$bench_dir/stargemm_pdgemm" ] || { echo "sweep_cpu.sh: no stargemm_pdgemm (set BENCH_DIR)" >&2; exit 2; }
mkdir -p "$out"
cores=$(nproc)
export OPENBLAS_NUM_THREADS=1 STARPU_SILENT=1
pd=("$bench_dir/stargemm_pdgemm" --ncpus "$cores" --quiet)

if [ "$quick" = 1 ]; then
	tiles="128 256" dense_n=512 sizes="256 512" niter=1 warmup=0
	sparse=("--m 300 --n 300 --k 300 --lo 10 --hi 30 --density-a 0.2 --density-b 0.2")
else
	tiles="128 256 512 1024 2048" dense_n=6144 sizes="1024 2048 4096 6144 8192 12288"
	niter=2 warmup=1
	sparse=("--m 1000 --n 1000 --k 1000 --lo 5 --hi 5 --density-a 0.1 --density-b 0.1 --niter 10"
		"--m 3000 --n 3000 --k 3000 --lo 10 --hi 30 --density-a 0.15 --density-b 0.15 --niter 3"
		"--m 2000 --n 2000 --k 2000 --lo 20 --hi 60 --density-a 0.1 --density-b 0.1 --niter 3"
		"--m 4096 --n 4096 --k 4096 --lo 64 --hi 64 --density-a 0.3 --density-b 0.3 --niter 3"
		"--m 6144 --n 6144 --k 6144 --lo 256 --hi 1024 --density-a 0.3 --density-b 0.3 --niter 3")
fi

# The machine's kernel measurements, as the library reads them (stargemm_init() writes
# the file when it is missing): one small run first.
"${pd[@]}" --m 64 --n 64 --k 64 --nb 32 --niter 1 --warmup 0 >/dev/null
kernels=$(ls "${STARPU_PERF_MODEL_DIR:-${STARPU_HOME:-$HOME}/.starpu/sampling}"/stargemm/kernels.* 2>/dev/null | head -n1 || true)
[ -n "$kernels" ] && { echo "# $kernels"; sed 's/^/# /' "$kernels"; } | tee "$out/kernels.txt"

# median of the gflops column of the rows of @1 whose impl is @2
median() {
	awk -F, -v impl="$2" '$1 == "impl" { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == impl { print $col["gflops"] }' "$1" | sort -g |
		awk '{ r[NR] = $1 } END { if (!NR) { print "nan"; exit }
			print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }'
}

if [[ ,$parts, == *,dense,* ]]; then
	f=$out/sweep_dense.csv
	"${pd[@]}" --impl blas --m 1 --n 1 --k 1 --niter 1 --warmup 0 --csv | sed -n 1p > "$f"
	for r in $(seq "$rounds"); do
		for nb in $tiles; do
			args=(--m "$dense_n" --n "$dense_n" --k "$dense_n" --niter "$niter" --warmup "$warmup")
			"${pd[@]}" --impl blas "${args[@]}" | grep -v '^impl,' | tee -a "$f" >/dev/null
			"${pd[@]}" --impl stargemm --nb "$nb" "${args[@]}" | grep -v '^impl,' >> "$f"
		done
	done
	for nb in $tiles; do
		awk -F, -v nb="$nb" 'NR == 1 || $1 == "blas" || ($1 == "stargemm" && $5 == nb)' "$f" > "$f.$nb"
		s=$(median "$f.$nb" stargemm) b=$(median "$f.$nb" blas)
		echo "dense N=$dense_n nb=$nb: stargemm $s GFLOP/s, OpenBLAS $b (all runs), ratio $(awk -v s="$s" -v b="$b" 'BEGIN { printf "%.2f", s / b }')"
		rm -f "$f.$nb"
	done | tee "$out/sweep_dense.txt"
fi

if [[ ,$parts, == *,host,* ]]; then
	f=$out/sweep_host.csv
	"${pd[@]}" --impl blas --m 1 --n 1 --k 1 --niter 1 --warmup 0 --csv | sed -n 1p > "$f"
	for r in $(seq "$rounds"); do
		for n in $sizes; do
			it=$niter
			[ "$n" -ge 12288 ] && it=1
			args=(--m "$n" --n "$n" --k "$n" --niter "$it" --warmup "$warmup")
			"${pd[@]}" --impl blas "${args[@]}" | grep -v '^impl,' >> "$f"
			"${pd[@]}" --impl host "${args[@]}" | grep -v '^impl,' >> "$f"
		done
	done
	for n in $sizes; do
		awk -F, -v n="$n" 'NR == 1 || $2 == n' "$f" > "$f.$n"
		s=$(median "$f.$n" host) b=$(median "$f.$n" blas)
		echo "host N=$n: stargemm_dgemm $s GFLOP/s, OpenBLAS $b, ratio $(awk -v s="$s" -v b="$b" 'BEGIN { printf "%.2f", s / b }')"
		rm -f "$f.$n"
	done | tee "$out/sweep_host.txt"
fi

if [[ ,$parts, == *,sparse,* ]]; then
	f=$out/sweep_sparse.csv
	: > "$f"
	: > "$out/sweep_sparse.txt"
	for p in "${sparse[@]}"; do
		status=0
		# shellcheck disable=SC2086
		"$here/compare_dbcsr.sh" --ranks 1 --threads 1 --rounds "$rounds" \
			--stargemm-args --quiet -- $p --csv > "$f.one" 2>&1 || status=$?
		if [ "$status" = 77 ]; then
			echo "sparse: libDBCSR peer missing, skipped" | tee -a "$out/sweep_sparse.txt"
			break
		fi
		grep '^[a-z]*,' "$f.one" >> "$f" || true
		ratio=$(sed -n 's/^ratio stargemm\/dbcsr (medians): //p' "$f.one")
		rates=$(awk '$1 == "dbcsr" || $1 == "stargemm" { printf "%s %s, ", $1, $5 }' "$f.one")
		echo "sparse $p: ${rates}ratio ${ratio:-none} (status $status)" |
			tee -a "$out/sweep_sparse.txt"
	done
	rm -f "$f.one"
fi

if command -v gnuplot >/dev/null; then
	[ -s "$out/sweep_dense.csv" ] && "$here/plot.sh" --out "$out" --plots tile,ratio --name sweep_dense "$out/sweep_dense.csv" || true
	[ -s "$out/sweep_host.csv" ] && "$here/plot.sh" --out "$out" --plots size --name sweep_host "$out/sweep_host.csv" || true
fi
echo "sweep_cpu.sh: results in $out"
