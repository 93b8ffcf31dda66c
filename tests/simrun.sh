#!/bin/sh
# tests/simrun.sh — run a stargemm program on NP simulated nodes of kind HOST with
# StarPU's SimGrid mode: platform and performance models from perfmodels/, network
# between nodes from perfmodels/smpi/HOST.xml when there is one, else
# perfmodels/smpi/cluster.xml, or the file SIM_NETWORK names.
# Usage: simrun.sh HOST NP PROGRAM [ARGS]
# Matrices are "folded" in simulation (every page maps the same memory); SMPI folds in
# blocks of 64 MiB here, not its default 1 MiB, so that the paper-size problems (tens
# of GiB) stay under the kernel's limit on memory mappings (vm.max_map_count).
host=$1
np=$2
shift 2
if [ -z "$MPIEXEC" ] || [ ! -x "$MPIEXEC" ]; then
	echo "SKIP: no starpu_smpirun (MPIEXEC='$MPIEXEC')"
	exit 77
fi
models="$SRCDIR/perfmodels/sampling"
if [ ! -f "$models/bus/$host.platform.v4.xml" ]; then
	echo "SKIP: no simulated platform for '$host' in $models"
	exit 77
fi
export STARPU_PERF_MODEL_DIR="$models" STARPU_HOSTNAME="$host"
export STARPU_HOME="${STARPU_HOME:-$BUILDDIR/tests/sim-home}"
export STARPU_SILENT=1 STARPU_FXT_TRACE=0
mkdir -p "$STARPU_HOME"
hosts="$BUILDDIR/tests/simhosts.$$"
i=0
: >"$hosts"
while [ $i -lt "$np" ]; do echo "node$i" >>"$hosts"; i=$((i + 1)); done
network=${SIM_NETWORK:-$SRCDIR/perfmodels/smpi/$host.xml}
[ -f "$network" ] || network="$SRCDIR/perfmodels/smpi/cluster.xml"
timeout "${TEST_TIMEOUT:-600}" "$MPIEXEC" -np "$np" -platform "$network" \
	-hostfile "$hosts" --cfg=smpi/shared-malloc-blocksize:67108864 "$@"
ret=$?
rm -f "$hosts"
exit $ret
