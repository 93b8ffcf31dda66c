#!/usr/bin/env bash
# bench/compare_tile.sh — stargemm against one BLAS call on this machine's cores, at
# the tile stargemm recommends and at fixed tiles, interleaved: for each round and each
# N, one OpenBLAS dgemm on every core, stargemm_pdgemm on 1 process x every core's
# worker (the recommended tile, then each --tiles side), on one process per core
# (mpiexec -bind-to core, the recommended tile), and the host call stargemm_dgemm()
# (--impl host). Prints every run's GFLOP/s, then the median per configuration and its
# ratio to the BLAS's median of the same N, then each configuration's --breakdown of
# its last round (where the workers' time went).
#
# Usage: compare_tile.sh [--rounds R] [--sizes "N..."] [--tiles "NB..."] [--niter I]
#          [--prec P]
#   defaults: 2 rounds, sizes 4096 8192, tiles 512, 2 timed products (1 warm-up) a run
# Environment: STARGEMM_BENCH (default: beside this script, else build/bench/), MPIEXEC.
# On a CPU this OpenBLAS does not know, export OPENBLAS_CORETYPE first (the calibration
# says which: doc/performance.md, "The BLAS's kernels").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bench=${STARGEMM_BENCH:-$here/stargemm_pdgemm}
[ -x "$bench" ] || [ -n "${STARGEMM_BENCH:-}" ] || bench=$here/../build/bench/stargemm_pdgemm
mpiexec=${MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec || true)}
rounds=2 sizes="4096 8192" tiles=512 niter=2 prec=d
die() { echo "compare_tile.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--tiles) tiles=$2; shift 2 ;;
	--niter) niter=$2; shift 2 ;;
	--prec) prec=$2; shift 2 ;;
	--help|-h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done
for v in "$rounds" "$niter" $sizes $tiles; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "--rounds, --niter, --sizes and --tiles want integers >= 1, got '$v'"
done
[ -n "$sizes" ] || die "--sizes wants at least one N"
[ -x "$bench" ] || die "no benchmark at $bench (set STARGEMM_BENCH)"
[ -n "$mpiexec" ] || die "no mpiexec"
cores=$(nproc)
export STARPU_FXT_TRACE=0 STARPU_SILENT=1 OPENBLAS_NUM_THREADS=1
export STARPU_HOME=${STARPU_HOME:-$HOME/.cache/stargemm/starpu-home}
mkdir -p "$STARPU_HOME"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# One run: LABEL N then the benchmark's options; appends "LABEL,N,GFLOPS,NB" per timed
# product to $out/runs and keeps the run's breakdown lines in $out/LABEL.N.
one() {
	local label=$1 n=$2 np=1 per=$cores
	shift 2
	case "$label" in ranks*) np=$cores per=1 ;; esac
	STARPU_NCPU=$per STARPU_WORKERS_GETBIND=1 "$mpiexec" -n "$np" -bind-to core:"$per" \
		"$bench" --m "$n" --n "$n" --k "$n" --prec "$prec" --niter "$niter" --warmup 1 \
		--quiet --csv "$@" >"$out/last" 2>&1 || { cat "$out/last" >&2; die "$label failed"; }
	awk -F, -v l="$label" -v n="$n" '/^(stargemm|blas|host),/ { print l "," n "," $16 "," $5 }' \
		"$out/last" | tee -a "$out/runs"
	grep '^# breakdown' "$out/last" >"$out/$label.$n" || true
}

echo "label,N,gflops,nb"
for ((r = 0; r < rounds; r++)); do
	for n in $sizes; do
		one blas "$n" --impl blas --ncpus "$cores"
		one "recommended" "$n" --breakdown
		for t in $tiles; do one "tile$t" "$n" --nb "$t" --breakdown; done
		one "ranks-recommended" "$n" --breakdown
		one host "$n" --impl host
	done
done

echo
echo "# medians: configuration, N, tile, GFLOP/s, of the BLAS call"
awk -F, '
	{ key = $1 "," $2; v[key] = v[key] " " $3; nb[key] = $4; if (!(key in seen)) { order[++k] = key; seen[key] = 1 } }
	function median(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		for (i = 1; i <= k; i++) { split(order[i], p, ","); med[order[i]] = median(v[order[i]]) }
		for (i = 1; i <= k; i++) {
			split(order[i], p, ",")
			b = med["blas," p[2]]
			printf "%-18s %6s %5s %8.2f  %5.3f\n", p[1], p[2], nb[order[i]], med[order[i]], (b > 0 ? med[order[i]] / b : 0)
		}
	}' "$out/runs"
echo
for f in "$out"/*.*; do
	[ -s "$f" ] || continue
	echo "# $(basename "$f"):"
	cat "$f"
done
