#!/usr/bin/env bash
# bench/compare_pblas.sh — ScaLAPACK's own PBLAS timing tester ({s,d,c,z}pb3tim, Debian's
# scalapack-mpi-test, built with MPICH) on its GEMM cases, run as ScaLAPACK alone and
# with libstargemm-scalapack preloaded, interleaved, in one call: the same unmodified
# program, the same ranks and cores, and each case's rate side by side as a ratio.
#
# The tester reads its problems from P?BLAS3TIM.dat in the working directory; this
# script writes one with PDGEMM alone, on a P x Q grid of all the ranks (row-major, the
# grid libstargemm-scalapack runs on), for every size N (M = N = K, square blocks of
# --nb) and every pair of transposes. The tester times one call per case (wall clock,
# its own Mflops). A first case (the smallest size, no transposes) is a warm-up left
# out of the table: with stargemm in front it pays stargemm_init(). The tester's
# memory is fixed when it is built (about 2 MB per process in Debian's): sizes that do
# not fit are refused here, before anything runs.
#
# Usage: compare_pblas.sh [--ranks R] [--prec s|d|c|z] [--sizes "N ..."] [--nb NB]
#                         [--trans "NN NT TN TT"] [--rounds K]
#   --ranks R    MPI processes (default 2), on a P x Q grid as square as R allows, each
#                bound to a core when there are enough
#   --prec T     element type: the tester Tpb3tim (default d)
#   --sizes      M = N = K of each case (default "100 200")
#   --nb NB      block size MB = NB of the three matrices (default 32)
#   --trans      transposes (op(A) op(B)) of each size (default "NN TN")
#   --rounds K   run each side K times, interleaved; medians over the rounds (default 3)
# Environment: PBLAS_TIMING_DIR (default Debian's .../mpich-tests/PBLAS/TIMING),
# STARGEMM_SCALAPACK_LIB (default: libstargemm-scalapack.so of this build or install),
# STARGEMM_SCALAPACK_MIN_FLOPS (default 0 here: stargemm runs every call, though the
# library alone sends calls this small to ScaLAPACK; set it to measure that routing).
# Prints, per case, the median Mflops of each side and stargemm / ScaLAPACK, and how
# many calls stargemm ran (STARGEMM_SCALAPACK=count).
# Exit status: 0; 1 if a run failed; 2 on a usage error; 77 if the tester or the
# library is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
timing=${PBLAS_TIMING_DIR:-/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/PBLAS/TIMING}
lib=${STARGEMM_SCALAPACK_LIB:-}
if [ -z "$lib" ]; then
	# installed (bin/../lib), a build tree (bench/../.libs), or the source tree's build/
	for cand in "$here/../lib" "$here/../.libs" "$here/../build/.libs"; do
		[ -r "$cand/libstargemm-scalapack.so" ] && { lib=$cand/libstargemm-scalapack.so; break; }
	done
fi
ranks=2
prec=d
sizes="100 200"
nb=32
trans="NN TN"
rounds=3

die() {
	local status=$1; shift
	echo "compare_pblas.sh: $*" >&2
	exit "$status"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--ranks) ranks=${2:?}; shift 2 ;;
	--prec) prec=${2:?}; shift 2 ;;
	--sizes) sizes=${2:?}; shift 2 ;;
	--nb) nb=${2:?}; shift 2 ;;
	--trans) trans=${2:?}; shift 2 ;;
	--rounds) rounds=${2:?}; shift 2 ;;
	--help|-h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die 2 "unknown option '$1' (see --help)" ;;
	esac
done
for v in "$ranks" "$nb" "$rounds" $sizes; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die 2 "--ranks, --nb, --rounds and --sizes want integers >= 1, got '$v'"
done
[ -n "$sizes" ] || die 2 "--sizes is empty"
case $prec in s|d|c|z) ;; *) die 2 "--prec must be s, d, c or z, got '$prec'" ;; esac
for t in $trans; do
	[[ $t =~ ^[NTC][NTC]$ ]] || die 2 "--trans wants pairs of N, T or C (e.g. NN TN), got '$t'"
done
[ -n "$trans" ] || die 2 "--trans is empty"

tester=$timing/${prec}pb3tim
T=$(echo "$prec" | tr sdcz SDCZ)
[ -x "$tester" ] || die 77 "no PBLAS timing tester at $tester (Debian's scalapack-mpi-test); skipping"
[ -n "$lib" ] && [ -r "$lib" ] || die 77 "libstargemm-scalapack.so not found (built where ScaLAPACK is found; or set STARGEMM_SCALAPACK_LIB); skipping"
command -v mpiexec.mpich >/dev/null || die 2 "mpiexec.mpich not found"

# The grid: P the largest divisor of R not above its square root.
P=1
for ((p = 1; p * p <= ranks; p++)); do
	[ $((ranks % p)) -eq 0 ] && P=$p
done
Q=$((ranks / P))

# The tester's memory is fixed (Debian's: 2,000,000 bytes per process); the three
# local matrices of a case must fit in it (it says "Not enough memory" otherwise), with
# a little more it keeps (8 bytes per row, rounded up here).
esize=$(case $prec in s) echo 4 ;; d|c) echo 8 ;; z) echo 16 ;; esac)
for n in $sizes; do
	lr=$(( (n + nb * P - 1) / (nb * P) * nb )); [ "$lr" -le "$n" ] || lr=$n
	lc=$(( (n + nb * Q - 1) / (nb * Q) * nb )); [ "$lc" -le "$n" ] || lc=$n
	need=$((3 * lr * lc * esize + 16 * n))
	[ "$need" -le 2000000 ] ||
		die 2 "size $n: its three local matrices (${lr} x ${lc} on a ${P} x ${Q} grid) need $need bytes, beyond the tester's fixed memory (about 2,000,000 bytes per process); use smaller sizes or more ranks"
done

# StarPU's calibration files: the benchmarks' own place, as compare.sh's.
export STARPU_HOME=${STARPU_HOME:-$HOME/.cache/stargemm/starpu-home}
mkdir -p "$STARPU_HOME"

# One core per rank when there are enough (both sides alike), else no binding.
bind=(-bind-to core)
[ "$ranks" -le "$(nproc)" ] || bind=(-bind-to none)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The cases: a warm-up (the smallest size, NN) then every size x transposes.
first=$(printf '%s\n' $sizes | sort -n | head -n1)
cases=("$first NN")
for n in $sizes; do
	for t in $trans; do
		cases+=("$n $t")
	done
done

# The tester reads at most 20 problems; the warm-up is one of them.
[ "${#cases[@]}" -le 20 ] ||
	die 2 "$(( ${#cases[@]} - 1 )) cases (sizes x transposes): the tester takes at most 20 problems, one of them the warm-up; give at most 19"

# One row of the .dat file: a value per case, then its label.
row() {
	local label=$1 what=$2 line="" c
	for c in "${cases[@]}"; do
		set -- $c
		case $what in
		size) line+="$1 " ;;
		ta) line+="'${2:0:1}' " ;;
		tb) line+="'${2:1:1}' " ;;
		*) line+="$what " ;;
		esac
	done
	printf '%s\t\t%s\n' "$line" "$label"
}

# P?BLAS3TIM.dat: the layout of the tester's input (one value per line or per case).
write_dat() {
	local dat=$work/P${T}BLAS3TIM.dat m
	{
		echo "'Level 3 PBLAS, Timing input file'"
		echo "'stargemm compare_pblas.sh'"
		printf "'P%sBLAS3TIM.SUMM'\toutput file name (if any)\n" "$T"
		printf '6\t\tdevice out\n'
		printf '%s\t\tvalue of the logical computational blocksize NB\n' "$nb"
		printf '1\t\tnumber of process grids (ordered pairs of P & Q)\n'
		printf '%s\t\tvalues of P\n%s\t\tvalues of Q\n' "$P" "$Q"
		if [ "$prec" = c ] || [ "$prec" = z ]; then
			printf '(2.0E0,1.0E0)\t\tvalue of ALPHA\n(3.0E0,-1.0E0)\t\tvalue of BETA\n'
		else
			printf '2.0E0\t\tvalue of ALPHA\n3.0E0\t\tvalue of BETA\n'
		fi
		printf '%s\t\tnumber of tests problems\n' "${#cases[@]}"
		row "values of DIAG" "'N'"
		row "values of SIDE" "'L'"
		row "values of TRANSA" ta
		row "values of TRANSB" tb
		row "values of UPLO" "'U'"
		for m in M N K; do row "values of $m" size; done
		for m in A B C; do
			row "values of M_$m" size
			row "values of N_$m" size
			for f in IMB INB MB NB; do row "values of ${f}_$m" "$nb"; done
			row "values of RSRC_$m" 0
			row "values of CSRC_$m" 0
			row "values of I$m" 1
			row "values of J$m" 1
		done
		# The routines' lines as the tester's own file lists them: GEMM alone on.
		grep "^P${T}[A-Z0-9]* *[TF][[:space:]]" "$timing/P${T}BLAS3TIM.dat" |
			sed -e "/^P${T}GEMM /!s/^\(P[A-Z0-9]*[[:space:]]*\)T/\1F/"
	} >"$dat"
}

# run SIDE ROUND: one tester run in $work; its GEMM lines' wall Mflops to SIDE.ROUND.
run() {
	local side=$1 round=$2 out=$work/$1.$2.out status=0
	local -a pre=()
	[ "$side" = stargemm ] && pre=(env LD_PRELOAD="$lib" STARGEMM_SCALAPACK=count
		STARGEMM_SCALAPACK_MIN_FLOPS="${STARGEMM_SCALAPACK_MIN_FLOPS-0}")
	(cd "$work" && OPENBLAS_NUM_THREADS=1 STARPU_SILENT=1 STARPU_FXT_TRACE=0 \
		mpiexec.mpich -n "$ranks" "${bind[@]}" "${pre[@]}" "$tester" >"$out" 2>"$out.err") ||
		status=$?
	if [ "$status" -ne 0 ] || grep -q "Not enough memory" "$out" ||
		grep -q "ILLEGAL\|error" "$out"; then
		tail -n 20 "$out" "$out.err" >&2
		echo "# $side run $round failed (status $status)" >&2
		return 1
	fi
	grep "^  |  P${T}GEMM " "$out" | awk '{ print $4 }' >"$work/$side.$round"
	[ "$(wc -l <"$work/$side.$round")" -eq "${#cases[@]}" ] ||
		{ echo "# $side run $round: expected ${#cases[@]} GEMM timings" >&2; return 1; }
	[ "$side" = stargemm ] && grep "calls by stargemm" "$out.err" | head -n1 >"$work/calls" || true
	return 0
}

# The median of the values on stdin, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Case c's timings of SIDE over the rounds.
timings() {
	for ((r = 0; r < rounds; r++)); do sed -n "$(($2 + 1))p" "$work/$1.$r"; done
}

[ -r "$timing/P${T}BLAS3TIM.dat" ] || die 77 "no P${T}BLAS3TIM.dat beside the tester; skipping"
write_dat
failed=0
for ((round = 0; round < rounds; round++)); do
	run scalapack "$round" || failed=1
	run stargemm "$round" || failed=1
done
[ "$failed" -eq 0 ] || die 1 "a run failed"

echo "# ${T}pb3tim, ${ranks} ranks on a ${P} x ${Q} grid, nb = $nb, median wall Mflops of $rounds rounds"
printf '%-8s %-6s %14s %14s %9s\n' "# n" "op" "scalapack" "stargemm" "ratio"
for ((c = 1; c < ${#cases[@]}; c++)); do
	set -- ${cases[$c]}
	s=$(timings scalapack "$c" | median)
	g=$(timings stargemm "$c" | median)
	awk -v n="$1" -v t="$2" -v s="$s" -v g="$g" \
		'BEGIN { printf "%-8s %-6s %14.1f %14.1f %9.3f\n", n, t, s, g, (s > 0 ? g / s : 0) }'
done
cat "$work/calls" 2>/dev/null || true
