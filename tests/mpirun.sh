#!/bin/sh
# tests/mpirun.sh — run a test program on NP MPI processes with settings fit for a
# small, possibly oversubscribed machine. Usage: mpirun.sh NP PROGRAM [ARGS...]
# Exits 77 (skipped) when no MPI launcher was configured.
np=$1
shift
if [ -z "$MPIEXEC" ] || [ "$MPIEXEC" = no ] || [ ! -x "$MPIEXEC" ]; then
	echo "SKIP: no MPI launcher (MPIEXEC='$MPIEXEC')"
	exit 77
fi
cores=$(nproc)
# One CPU worker per process when processes outnumber cores, and no pinning then,
# so that oversubscribed ranks do not all land on core 0.
if [ "$np" -gt 1 ] || [ "$cores" -lt 2 ]; then
	per=$((cores / np))
	[ "$per" -ge 1 ] || per=1
	export STARPU_NCPU="${STARPU_NCPU:-$per}"
	[ $((np * per)) -le "$cores" ] || export STARPU_WORKERS_NOBIND=1
fi
export STARPU_HOME="${STARPU_HOME:-$BUILDDIR/tests/starpu-home}"
export STARPU_FXT_TRACE="${STARPU_FXT_TRACE:-0}"
export STARPU_SILENT=1
export OPENBLAS_NUM_THREADS=1
mkdir -p "$STARPU_HOME"
exec timeout "${TEST_TIMEOUT:-600}" "$MPIEXEC" -n "$np" "$@"
