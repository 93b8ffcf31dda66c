#!/bin/sh
# tests/pblas.sh — ScaLAPACK's own level-3 PBLAS testers (Debian's scalapack-mpi-test,
# built with MPICH: {s,d,c,z}pb3tst) with libstargemm-scalapack preloaded, on 1, 2, 3 and
# 4 ranks, and the double one on 8 (grids 2 x 4, 4 x 2, 8 x 1). The testers' problems
# are those of tests/pblas3.dat (9, put in place of the 4 of Debian's .dat, which all
# had TRANSA = 'N'): every pair of TRANSA and TRANSB in N, T, C, on submatrices at
# IA = JA from 1 to 12, in blocks of 1 to 6. Every GEMM case and every error exit must
# pass.
# Each run's grids are those of its process count and smaller ones, but on 3 ranks:
# grids 1 x 2 and 2 x 1, the third process idle. The testers' calls are all small,
# which the library would send to ScaLAPACK: STARGEMM_SCALAPACK_MIN_FLOPS=0 keeps them
# on stargemm. Every call of every grid must then run on stargemm (started in the
# testers' MPI_Init, which BLACS calls, on every process: src/scalapack.c). Then the
# double tester once more on 4 ranks with STARGEMM_SCALAPACK_START=first-call: every
# call but the documented fallback of the smaller grids (stargemm runs on the
# processes of the first grid it ran on, a grid of other processes goes to
# ScaLAPACK). Checked on every rank:
#   - tests/pblas_count.c, preloaded behind the library, counts on each rank the calls
#     whose product stargemm_gemm() ran (and those where it failed) and the calls the
#     library passed on to ScaLAPACK's routine; rank r must have run 9 calls on
#     stargemm for each grid it is in (first-call: each grid of the first grid's
#     processes), none failed, and passed on none (first-call: 9 for each smaller grid
#     it is in);
#   - the library's count (STARGEMM_SCALAPACK=count: calls on stargemm and calls to
#     ScaLAPACK by reason, each the most over the ranks) must name that reason alone,
#     with those numbers, and its once-per-reason report on stderr must be that one
#     line (none where every grid spans the first grid's processes).
# The testers' other routines (SYMM, SYRK, TRMM, ...) stay ScaLAPACK's: the runs test
# GEMM only, but the double one on 4 ranks, which tests them all (they must pass too).
# Skipped (77) without the testers or ScaLAPACK.
set -e
testers=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/PBLAS
data=/usr/share/scalapack/PBLAS
lib="$BUILDDIR/.libs/libstargemm-scalapack.so"
[ -x "$testers/dpb3tst" ] && [ -r "$data/PDBLAS3TST.dat" ] ||
	{ echo "SKIP: no PBLAS testers (Debian's scalapack-mpi-test)"; exit 77; }
[ -r "$lib" ] || { echo "SKIP: built without ScaLAPACK (no libstargemm-scalapack)"; exit 77; }
problems="$SRCDIR/tests/pblas3.dat"
nprob=$(awk '/number of tests problems/ { print $1 }' "$problems")
# src/scalapack.c's words for the one fallback expected (fallback_why[GRID]).
grid_why="the BLACS grid's processes are not those stargemm runs on (the first grid it ran on)"
dir="$BUILDDIR/tests/pblas.d"
rm -rf "$dir" && mkdir -p "$dir"
# The counter, compiled as the library is (MPICH's wrapper: stargemm.h includes mpi.h).
cc=$(sed -n 's/^CC = //p' "$BUILDDIR/Makefile")
# shellcheck disable=SC2086 # CC may hold options
${cc:-mpicc.mpich} -std=gnu11 -Wall -Wextra -Wno-unused-parameter -shared -fPIC \
	-I"$SRCDIR/src" -o "$dir/pblas_count.so" "$SRCDIR/tests/pblas_count.c" -ldl ||
	{ echo "cannot build tests/pblas_count.c"; exit 1; }
# StarPU's calibration files of its own: another test writing the same ones at the same
# time made StarPU fail to read them (check_bus_affinity_file).
export STARPU_HOME="$dir/starpu-home"
mkdir -p "$STARPU_HOME"
cd "$dir"
# The grids of NP processes: "P values|Q values" (the first ones span every process).
grids() {
	case $1 in
	1) echo "1 1|1 1" ;;
	2) echo "1 2 1|2 1 1" ;;
	3) echo "1 2|2 1" ;;
	4) echo "2 1 4 1|2 4 1 2" ;;
	8) echo "2 4 8|4 2 1" ;;
	esac
}
# What rank R of NP should count with grids PS x QS: "R STARGEMM_OK 0 SCALAPACK". A BLACS
# grid of P x Q takes processes 0 to P Q - 1; all run on stargemm, or with
# STARGEMM_SCALAPACK_START=first-call those of the first grid's processes.
expected() {
	echo "$3|$4" | awk -v r="$1" -v nprob="$nprob" -v lazy="${STARGEMM_SCALAPACK_START:-}" \
		-F'|' '{
		np = split($1, p, " "); split($2, q, " "); first = p[1] * q[1]
		for (i = 1; i <= np; i++)
			if (r < p[i] * q[i]) {
				if (lazy != "first-call" || p[i] * q[i] == first) sg += nprob
				else fb += nprob
			}
		printf "%d %d 0 %d\n", r, sg, fb
	}'
}
# Tester T on NP ranks, output in OUT and OUT.err, per-rank counts in OUT.counts/.
run_tester() {
	rm -rf "$3.counts" && mkdir "$3.counts"
	LD_LIBRARY_PATH="$BUILDDIR/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	OPENBLAS_NUM_THREADS=1 STARPU_SILENT=1 STARGEMM_SCALAPACK=count STARGEMM_SCALAPACK_MIN_FLOPS=0 \
		timeout "${TEST_TIMEOUT:-600}" "$MPIEXEC" -n "$2" \
		env LD_PRELOAD="$lib $dir/pblas_count.so" PBLAS_COUNT_DIR="$3.counts" \
		"$testers/${1}pb3tst" >"$3" 2>"$3.err" ||
		{ tail -n 20 "$3" "$3.err"; echo "${1}pb3tst on $2 ranks failed"; exit 1; }
}
for np in 1 2 3 4 8 4first; do
	unset STARGEMM_SCALAPACK_START
	[ "$np" = 4first ] && np=4 && export STARGEMM_SCALAPACK_START=first-call
	g=$(grids $np) ps=${g%|*} qs=${g#*|}
	n=$(echo "$ps" | wc -w)
	for t in s d c z; do
		[ "$np" -lt 8 ] || [ "$t" = d ] || continue   # 8 ranks on few cores: double only
		[ -z "${STARGEMM_SCALAPACK_START:-}" ] || [ "$t" = d ] || continue
		T=$(echo "$t" | tr sdcz SDCZ)
		# Only the GEMM cases, but for the double run on 4 ranks: all its routines.
		others='/^P.GEMM /!s/^\(P[SDCZ][A-Z0-9]*[[:space:]]*\)T/\1F/'
		[ "$t$np" = d4 ] && [ -z "${STARGEMM_SCALAPACK_START:-}" ] && others="s/^//"
		# Debian's file with our grids and, in place of its problems (from their
		# number to JC), tests/pblas3.dat.
		sed -e "s/^[0-9]*\([[:space:]]*number of process grids\)/$n\1/" \
			-e "s/^.*values of P\$/$ps\t\tvalues of P/" \
			-e "s/^.*values of Q\$/$qs\t\tvalues of Q/" -e "$others" \
			"$data/P${T}BLAS3TST.dat" |
			awk -v problems="$problems" '
				/number of tests problems/ { skip = 1; while ((getline l < problems) > 0) print l }
				!skip { print }
				/values of JC/ { skip = 0 }' >"P${T}BLAS3TST.dat"
		[ "$(grep -c "values of" "P${T}BLAS3TST.dat")" = 40 ] ||
			{ echo "P${T}BLAS3TST.dat: not Debian's layout"; exit 1; }
		out="$dir/${t}_$np.out"
		run_tester "$t" "$np" "$out"
		calls=$(grep "calls by stargemm" "$out.err" || true)
		if [ -z "$calls" ]; then
			# Under load, mpiexec (hydra) once lost rank 0's last stderr line, written
			# just before MPI_Finalize; 40 runs alone never did. Once more, then fail.
			# Every check below reads this second run's output.
			echo "${t}pb3tst on $np ranks: no count line on stderr, run again once"
			run_tester "$t" "$np" "$out"
			calls=$(grep "calls by stargemm" "$out.err" || true)
		fi
		line=$(grep "^  |  P${T}GEMM " "$out") ||
			{ tail -n 20 "$out"; echo "${t}pb3tst on $np ranks: no GEMM summary"; exit 1; }
		echo "$np ranks${STARGEMM_SCALAPACK_START:+ (first-call)}, grids P=($ps) Q=($qs): $line; ${calls#stargemm-scalapack: }"
		# TOTAL PASSED FAILED SKIPPED: all of the problems on every grid, all passed.
		echo "$line" | awk -v want=$((nprob * n)) \
			'{ exit !($3 == want && $3 == $4 && $5 == 0 && $6 == 0) }' ||
			{ echo "GEMM cases failed (or not $((nprob * n)) of them)"; exit 1; }
		! grep "ERROR" "$out" || { echo "an error exit differs from PBLAS's"; exit 1; }
		grep "^  |  P" "$out" | awk '$5 != 0 { bad = 1 } END { exit bad }' ||
			{ grep "^  |  P" "$out"; echo "another routine failed"; exit 1; }
		# Every rank's own counts.
		r=0 most_sg=0 most_fb=0
		while [ $r -lt "$np" ]; do
			want=$(expected $r "$np" "$ps" "$qs")
			got=$(cat "$out.counts/rank.$r" 2>/dev/null || echo "$r (no count)")
			echo "  rank $r: stargemm, failed in stargemm, ScaLAPACK: ${got#* } (want ${want#* })"
			[ "$got" = "$want" ] || { echo "rank $r: calls not where they should be"; exit 1; }
			sg=$(echo "$want" | cut -d' ' -f2) fb=$(echo "$want" | cut -d' ' -f4)
			[ "$sg" -le "$most_sg" ] || most_sg=$sg
			[ "$fb" -le "$most_fb" ] || most_fb=$fb
			r=$((r + 1))
		done
		# The library's count (maxima over the ranks) and reports: that fallback only.
		want="stargemm-scalapack: $most_sg calls by stargemm"
		[ "$most_fb" = 0 ] || want="$want, $most_fb by ScaLAPACK ($grid_why)"
		[ "$calls" = "$want" ] ||
			{ echo "count line: '$calls', want '$want'"; exit 1; }
		reports=$(grep "stargemm-scalapack" "$out.err" | grep -v "calls by stargemm" || true)
		want=""
		[ "$most_fb" = 0 ] ||
			want="stargemm-scalapack: a call goes to ScaLAPACK: $grid_why (said once)"
		[ "$reports" = "$want" ] ||
			{ printf '%s\n' "$reports"; echo "reports on stderr: want '$want'"; exit 1; }
	done
done
