#!/bin/sh
# tests/pblas.sh — ScaLAPACK's own level-3 PBLAS testers (Debian's scalapack-mpi-test,
# built with MPICH: {s,d,c,z}pb3tst) with libstargemm-scalapack preloaded, on 1, 2, 3 and
# 4 ranks, and the double one on 8 (grids 2 x 4, 4 x 2, 8 x 1, every call on stargemm):
# every GEMM case and every error exit must pass. Each run's grids are those
# of its process count and smaller ones (the latter go to ScaLAPACK: stargemm runs on
# the processes of the first grid it ran on), but on 3 ranks: grids 1 x 2 and 2 x 1,
# the third process idle, every call on stargemm. The testers' other routines (SYMM, SYRK, TRMM, ...) stay
# ScaLAPACK's: the runs test GEMM only, but the double one on 4 ranks, which tests
# them all (they must pass too). The testers' calls are all small, which the library
# would send to ScaLAPACK: STARGEMM_SCALAPACK_MIN_FLOPS=0 keeps them on stargemm.
# Skipped (77) without the testers or ScaLAPACK.
set -e
testers=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/PBLAS
data=/usr/share/scalapack/PBLAS
lib="$BUILDDIR/.libs/libstargemm-scalapack.so"
[ -x "$testers/dpb3tst" ] && [ -r "$data/PDBLAS3TST.dat" ] ||
	{ echo "SKIP: no PBLAS testers (Debian's scalapack-mpi-test)"; exit 77; }
[ -r "$lib" ] || { echo "SKIP: built without ScaLAPACK (no libstargemm-scalapack)"; exit 77; }
dir="$BUILDDIR/tests/pblas.d"
rm -rf "$dir" && mkdir -p "$dir"
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
# Tester T on NP ranks, output in OUT and OUT.err.
run_tester() {
	LD_LIBRARY_PATH="$BUILDDIR/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	OPENBLAS_NUM_THREADS=1 STARPU_SILENT=1 STARGEMM_SCALAPACK=count STARGEMM_SCALAPACK_MIN_FLOPS=0 \
		timeout "${TEST_TIMEOUT:-600}" "$MPIEXEC" -n "$2" \
		env LD_PRELOAD="$lib" "$testers/${1}pb3tst" >"$3" 2>"$3.err" ||
		{ tail -n 20 "$3" "$3.err"; echo "${1}pb3tst on $2 ranks failed"; exit 1; }
}
for np in 1 2 3 4 8; do
	g=$(grids $np) ps=${g%|*} qs=${g#*|}
	n=$(echo "$ps" | wc -w)
	for t in s d c z; do
		[ "$np" -lt 8 ] || [ "$t" = d ] || continue   # 8 ranks on few cores: double only
		T=$(echo "$t" | tr sdcz SDCZ)
		# Only the GEMM cases, but for the double run on 4 ranks: all its routines.
		others='/^P.GEMM /!s/^\(P[SDCZ][A-Z0-9]*[[:space:]]*\)T/\1F/'
		[ "$t$np" = d4 ] && others="s/^//"
		sed -e "s/^[0-9]*\([[:space:]]*number of process grids\)/$n\1/" \
			-e "s/^.*values of P\$/$ps\t\tvalues of P/" \
			-e "s/^.*values of Q\$/$qs\t\tvalues of Q/" -e "$others" \
			"$data/P${T}BLAS3TST.dat" >"P${T}BLAS3TST.dat"
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
		echo "$np ranks, grids P=($ps) Q=($qs): $line; ${calls#stargemm-scalapack: }"
		# TOTAL PASSED FAILED SKIPPED: all passed.
		echo "$line" | awk '{ exit !($3 > 0 && $3 == $4 && $5 == 0 && $6 == 0) }' ||
			{ echo "GEMM cases failed"; exit 1; }
		! grep "ERROR" "$out" || { echo "an error exit differs from PBLAS's"; exit 1; }
		grep "^  |  P" "$out" | awk '$5 != 0 { bad = 1 } END { exit bad }' ||
			{ grep "^  |  P" "$out"; echo "another routine failed"; exit 1; }
		echo "$calls" | grep -q "stargemm-scalapack: [1-9][0-9]* calls by stargemm" ||
			{ echo "no call ran on stargemm"; exit 1; }
		[ "$np" != 3 ] || ! echo "$calls" | grep -q "by ScaLAPACK" ||
			{ echo "on 3 ranks, a grid of two processes: a call went to ScaLAPACK"; exit 1; }
	done
done
