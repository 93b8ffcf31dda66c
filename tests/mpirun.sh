#!/bin/sh
# tests/mpirun.sh — run a test program on NP MPI processes with settings fit for a
# small, possibly oversubscribed machine. Usage: mpirun.sh [--bound] NP PROGRAM [ARGS...]
# --bound: each rank bound to its own core (-bind-to core), one CPU worker, and a
# StarPU home per rank (StarPU recalibrates its bus files when the number of CPUs it
# sees changes — one here, the whole machine in the other tests — and ranks doing so
# at once in one home can read each other's half-written files); skipped with fewer
# cores than ranks. Exits 77 (skipped) when no MPI launcher was configured.
bound=0
[ "$1" = --bound ] && { bound=1; shift; }
np=$1
shift
if [ -z "$MPIEXEC" ] || [ "$MPIEXEC" = no ] || [ ! -x "$MPIEXEC" ]; then
	echo "SKIP: no MPI launcher (MPIEXEC='$MPIEXEC')"
	exit 77
fi
cores=$(nproc)
export STARPU_FXT_TRACE="${STARPU_FXT_TRACE:-0}"
export STARPU_SILENT=1
export OPENBLAS_NUM_THREADS=1
if [ $bound -eq 1 ]; then
	[ "$cores" -ge "$np" ] || { echo "SKIP: fewer than $np cores for $np bound ranks"; exit 77; }
	export STARPU_NCPU=1
	# shellcheck disable=SC2016 # $PMI_RANK is the launched process's
	exec timeout "${TEST_TIMEOUT:-600}" "$MPIEXEC" -n "$np" -bind-to core sh -c \
		'STARPU_HOME="$0/rank$PMI_RANK" && mkdir -p "$STARPU_HOME" &&
		export STARPU_HOME && exec "$@"' "$BUILDDIR/tests/starpu-home-bound" "$@"
fi
# One CPU worker per process when processes outnumber cores, and no pinning then,
# so that oversubscribed ranks do not all land on core 0.
if [ "$np" -gt 1 ] || [ "$cores" -lt 2 ]; then
	per=$((cores / np))
	[ "$per" -ge 1 ] || per=1
	export STARPU_NCPU="${STARPU_NCPU:-$per}"
	[ $((np * per)) -le "$cores" ] || export STARPU_WORKERS_NOBIND=1
fi
export STARPU_HOME="${STARPU_HOME:-$BUILDDIR/tests/starpu-home}"
mkdir -p "$STARPU_HOME"
exec timeout "${TEST_TIMEOUT:-600}" "$MPIEXEC" -n "$np" "$@"
