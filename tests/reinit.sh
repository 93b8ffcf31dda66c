#!/bin/sh
# tests/reinit.sh — stargemm initialised and finalised three times in a process whose
# MPI the program started (tests/test_reinit.c), on 1 and 2 ranks; StarPU-MPI's
# [starpu_comm_stats] lines stay off stderr in every round (stargemm turns the counts
# on for itself only).
out="$BUILDDIR/tests/reinit.out"
for np in 1 2; do
	TEST_TIMEOUT=120 "$SRCDIR/tests/mpirun.sh" $np "$BUILDDIR/tests/test_reinit" >"$out" 2>&1
	status=$?
	cat "$out"
	[ $status -eq 77 ] && exit 77
	[ $status -eq 0 ] || { echo "FAIL: $np rank(s): status $status"; exit 1; }
	if grep -q "starpu_comm_stats" "$out"; then
		echo "FAIL: $np rank(s): StarPU-MPI's counts printed"; exit 1
	fi
done
exit 0
