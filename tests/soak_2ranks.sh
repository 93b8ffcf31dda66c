#!/bin/sh
# tests/soak_2ranks.sh — 1000 consecutive products (in core, out of core, block-sparse;
# matrices created and destroyed each time) in one process per rank on 2 ranks: the
# resident memory of each rank must stay flat (tests/test_soak.c). The ranks are bound
# to a core each, with a StarPU home per rank (see tests/binding_2ranks.sh); one core
# per rank otherwise made the run ten times slower.
if [ -z "$MPIEXEC" ] || [ "$MPIEXEC" = no ] || [ ! -x "$MPIEXEC" ]; then
	echo "SKIP: no MPI launcher"; exit 77
fi
[ "$(nproc)" -ge 2 ] || { echo "SKIP: fewer than 2 cores"; exit 77; }
home="$BUILDDIR/tests/starpu-home-bound"
export STARPU_SILENT=1 STARPU_FXT_TRACE=0 OPENBLAS_NUM_THREADS=1 STARPU_NCPU=1
# shellcheck disable=SC2016 # $PMI_RANK is the launched process's
exec timeout 600 "$MPIEXEC" -n 2 -bind-to core sh -c 'STARPU_HOME="$0/rank$PMI_RANK" &&
	mkdir -p "$STARPU_HOME" && export STARPU_HOME && exec "$@"' \
	"$home" "$BUILDDIR/tests/test_soak" 2 1 1000 8
