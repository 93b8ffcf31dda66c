#!/bin/sh
# tests/scalapack_lu.sh — ScaLAPACK's own LU tester (Debian's scalapack-mpi-test, xdlu,
# on tests/lu.dat: Debian's grids 1 x 1, 2 x 2, 1 x 4 and 4 x 1, two of its problem
# sizes, one block size and right-hand side count — its full file takes 4.5 minutes
# here with or without the library — and without the condition estimate and iterative
# refinement, in which the tester alone, without the library, hung 2 runs of 3 on
# these 2 cores) on 4 ranks with
# libstargemm-scalapack preloaded: a program that makes several BLACS grids, of all
# the processes and of one. Every pdgemm_ call of every grid must run on stargemm
# (started on every process in MPI_Init, each grid on a communicator of its
# processes: src/scalapack.c) and every LU test pass; with
# STARGEMM_SCALAPACK_START=first-call, the calls of the grids of other processes than
# the first grid's go to ScaLAPACK, said once, and the tests pass too. Skipped (77)
# without the tester or ScaLAPACK. Its fresh StarPU home also shows the processes'
# ordered start (the start lock beside the kernels' file).
set -e
tester=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu
data="$SRCDIR/tests/lu.dat"
lib="$BUILDDIR/.libs/libstargemm-scalapack.so"
[ -x "$tester" ] && [ -r "$data" ] ||
	{ echo "SKIP: no ScaLAPACK LU tester (Debian's scalapack-mpi-test)"; exit 77; }
[ -r "$lib" ] || { echo "SKIP: built without ScaLAPACK (no libstargemm-scalapack)"; exit 77; }
dir="$BUILDDIR/tests/scalapack_lu.d"
rm -rf "$dir" && mkdir -p "$dir/starpu-home"
cp "$data" "$dir/LU.dat"
cd "$dir"
export STARPU_HOME="$dir/starpu-home"
grid_why="the BLACS grid's processes are not those stargemm runs on (the first grid it ran on)"
for when in every first-call; do
	(
		[ "$when" = every ] || export STARGEMM_SCALAPACK_START=first-call
		LD_LIBRARY_PATH="$BUILDDIR/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		OPENBLAS_NUM_THREADS=1 STARPU_SILENT=1 STARGEMM_SCALAPACK=count \
		STARGEMM_SCALAPACK_MIN_FLOPS=0 exec timeout "${TEST_TIMEOUT:-600}" "$MPIEXEC" -n 4 \
			env LD_PRELOAD="$lib" "$tester"
	) >"$when.out" 2>"$when.err" ||
		{ tail -n 20 "$when.out" "$when.err"; echo "xdlu ($when) failed"; exit 1; }
	passed=$(awk '/tests completed and passed/ { print $1 }' "$when.out")
	failed=$(awk '/tests completed and failed/ { print $1 }' "$when.out")
	calls=$(grep "calls by stargemm" "$when.err" || true)
	echo "xdlu on 4 ranks ($when): ${passed:-no} tests passed, ${failed:-?} failed; ${calls#stargemm-scalapack: }"
	[ "${passed:-0}" -gt 0 ] && [ "$failed" = 0 ] || { tail -n 20 "$when.out"; exit 1; }
	if [ "$when" = every ]; then
		echo "$calls" | grep -Eq "^stargemm-scalapack: [1-9][0-9]* calls by stargemm\$" ||
			{ cat "$when.err"; echo "not every call ran on stargemm"; exit 1; }
		# the 4 processes, started at once in a fresh home, started StarPU in turn
		# (src/runtime.c, start_starpu(): the first one under the machine's lock)
		ls "$STARPU_HOME"/.starpu/sampling/stargemm/kernels.*.start.lock >/dev/null 2>&1 ||
			{ echo "StarPU was not started in turn (no start lock in $STARPU_HOME)"; exit 1; }
	else
		echo "$calls" | grep -Eq "^stargemm-scalapack: [1-9][0-9]* calls by stargemm, [1-9][0-9]* by ScaLAPACK \(" &&
			[ "${calls##*by ScaLAPACK (}" = "$grid_why)" ] ||
			{ cat "$when.err"; echo "expected the other grids' calls to go to ScaLAPACK"; exit 1; }
	fi
done
echo "scalapack_lu.sh OK"
