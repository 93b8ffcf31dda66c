#!/bin/sh
# tests/scalapack.sh — an unmodified ScaLAPACK program with libstargemm-scalapack in
# front (tests/test_scalapack.c): its p?gemm_ calls run on stargemm (operands cut alike
# or not where the product joins them), with ScaLAPACK's results, on 1, 2 (both grid shapes)
# and 4 ranks, the grid's ranks in row-major order, and on 2 and 4 ranks in
# column-major order (BLACS's "Col") and in reverse (Cblacs_gridmap): every order runs
# on stargemm (STARGEMM_SCALAPACK_MIN_FLOPS=0: the calls are small). Then grids of
# some of the processes (see below). Then the routing
# of small calls on 2 ranks: by default they all go to ScaLAPACK, silently, with the
# same results; a threshold between the program's call sizes splits them; a setting
# that does not parse sends them to ScaLAPACK with one message naming it. Skipped (77)
# where ScaLAPACK was not found at configure time.
set -e
prog="$BUILDDIR/tests/test_scalapack"
[ -x "$prog" ] || { echo "SKIP: built without ScaLAPACK (libscalapack-mpich-dev)"; exit 77; }
out="$BUILDDIR/tests/scalapack.out"
for grid in "1 1 1 Row" "2 2 1 Row" "2 1 2 Row" "4 2 2 Row" "2 1 2 Col" "2 2 1 map" \
	"4 2 2 Col" "4 2 2 map"; do
	set -- $grid
	STARGEMM_SCALAPACK=count STARGEMM_SCALAPACK_MIN_FLOPS=0 \
		"$SRCDIR/tests/mpirun.sh" "$1" "$prog" "$2" "$3" "$4" >"$out" 2>"$out.err" ||
		{ cat "$out" "$out.err"; exit 1; }
	cat "$out"
	# Every call went to stargemm, the operands cut alike or not.
	grep -q "stargemm-scalapack: 24 calls by stargemm$" "$out.err" ||
		{ cat "$out.err"; echo "unexpected routing"; exit 1; }
	grep -q "thread level 3 (MPI_THREAD_MULTIPLE = 3)" "$out" ||
		{ echo "MPI did not start at MPI_THREAD_MULTIPLE"; exit 1; }
done
# A grid of some of the processes: the first two of three ("Row"), or the last two
# ("last", rank 0 idle); the double cases then run on a grid of all three. stargemm,
# started on every process in MPI_Init, runs both grids, each on a communicator of its
# processes (with FxT tracing too). Started at the first call instead
# (STARGEMM_SCALAPACK_START=first-call), it starts on the first grid's processes and
# runs their calls; the full grid's go to ScaLAPACK, said once; with FxT tracing asked
# for, StarPU-MPI 1.3 would start with a barrier on every process: the first grid's
# calls go to ScaLAPACK, the full grid's to stargemm.
other="the BLACS grid's processes are not those stargemm runs on (the first grid it ran on)"
traced="FxT tracing on (STARPU_FXT_TRACE) and a grid of some of the processes: StarPU-MPI would start with a barrier on MPI_COMM_WORLD"
for grid in "1 2 Row" "2 1 last" "1 2 Row traced" "1 2 Row first-call" "2 1 last first-call" \
	"1 2 Row traced first-call"; do
	set -- $grid
	when=${5:-$4}
	[ "$when" = first-call ] && export STARGEMM_SCALAPACK_START=first-call
	expect="30 calls by stargemm"
	[ "$when" = first-call ] && expect="24 calls by stargemm, 6 by ScaLAPACK ($other)"
	if [ "$4" = traced ]; then
		[ "$HAVE_FXT" = yes ] || { echo "no FxT: the traced case is skipped"; continue; }
		[ "$when" = first-call ] && expect="6 calls by stargemm, 24 by ScaLAPACK ($traced)"
		export STARPU_FXT_TRACE=1 STARPU_FXT_PREFIX="$BUILDDIR/tests/scalapack-fxt/"
		rm -rf "$STARPU_FXT_PREFIX" && mkdir -p "$STARPU_FXT_PREFIX"
	fi
	STARGEMM_SCALAPACK=count STARGEMM_SCALAPACK_MIN_FLOPS=0 \
		"$SRCDIR/tests/mpirun.sh" 3 "$prog" "$1" "$2" "$3" >"$out" 2>"$out.err" ||
		{ cat "$out" "$out.err"; exit 1; }
	unset STARPU_FXT_TRACE STARPU_FXT_PREFIX STARGEMM_SCALAPACK_START
	cat "$out"
	grep -q "stargemm-scalapack: $expect\$" "$out.err" ||
		{ cat "$out.err"; echo "unexpected routing: expected '$expect'"; exit 1; }
	said=$(grep -c "a call goes to ScaLAPACK" "$out.err" || true)
	[ "$when" = first-call ] && [ "$said" -ne 1 ] &&
		{ cat "$out.err"; echo "the fallback is not said once"; exit 1; }
	[ "$when" != first-call ] && [ "$said" -ne 0 ] &&
		{ cat "$out.err"; echo "a call went to ScaLAPACK"; exit 1; }
	echo "grid of some processes then of all, $*: $expect"
done
rm -rf "$BUILDDIR/tests/scalapack-fxt"
# routed SETTING EXPECTED: the 2-rank run with STARGEMM_SCALAPACK_MIN_FLOPS=SETTING
# ("default": unset) passes and rank 0's count line matches EXPECTED.
routed() {
	setting=$1 expected=$2
	(
		unset STARGEMM_SCALAPACK_MIN_FLOPS
		[ "$setting" = default ] || export STARGEMM_SCALAPACK_MIN_FLOPS="$setting"
		STARGEMM_SCALAPACK=count exec "$SRCDIR/tests/mpirun.sh" 2 "$prog" 1 2
	) >"$out" 2>"$out.err" ||
		{ cat "$out" "$out.err"; echo "the run with MIN_FLOPS=$setting failed"; exit 1; }
	grep -q "$expected" "$out.err" ||
		{ cat "$out.err"; echo "MIN_FLOPS=$setting: expected '$expected'"; exit 1; }
	grep "calls by stargemm" "$out.err"
}
small="fewer flops per process than STARGEMM_SCALAPACK_MIN_FLOPS"
routed default "stargemm-scalapack: 0 calls by stargemm, 24 by ScaLAPACK ($small)$"
! grep -q "goes to ScaLAPACK" "$out.err" || { cat "$out.err"; echo "small calls reported"; exit 1; }
# Between the program's smallest and largest calls: some each way, 24 in all.
routed 3e5 "stargemm-scalapack: [1-9][0-9]* calls by stargemm, [1-9][0-9]* by ScaLAPACK ($small)$"
line=$(grep "calls by stargemm" "$out.err")
[ "$(echo "$line" | sed 's/[^0-9 ]//g' | awk '{ print $1 + $2 }')" -eq 24 ] ||
	{ echo "expected 24 calls in all: $line"; exit 1; }
bad="STARGEMM_SCALAPACK_MIN_FLOPS is not a number >= 0"
routed fast "stargemm-scalapack: 0 calls by stargemm, 24 by ScaLAPACK ($bad)$"
[ "$(grep -c "a call goes to ScaLAPACK: $bad (said once)" "$out.err")" -eq 1 ] ||
	{ cat "$out.err"; echo "the bad setting is not reported once"; exit 1; }
rm -f "$out" "$out.err"
echo "scalapack.sh OK"
