#!/bin/sh
# tests/binding_2ranks.sh — two ranks, each bound to its own core by the launcher
# (-bind-to core), one CPU worker each: their workers must be on different cores
# without the user setting anything (stargemm follows the process's affinity mask;
# StarPU 1.3 alone put both on core 0 and ran at half speed). Skipped with fewer than
# two cores or no MPI launcher.
if [ -z "$MPIEXEC" ] || [ "$MPIEXEC" = no ] || [ ! -x "$MPIEXEC" ]; then
	echo "SKIP: no MPI launcher"; exit 77
fi
[ "$(nproc)" -ge 2 ] || { echo "SKIP: fewer than 2 cores"; exit 77; }
out="$BUILDDIR/tests/binding_2ranks.out"
# A StarPU home per rank: StarPU recalibrates its bus files when the number of CPUs it
# sees changes (here 1 per rank, elsewhere the whole machine), and ranks doing so at
# once in one home can read each other's half-written files.
home="$BUILDDIR/tests/starpu-home-bound"
export STARPU_SILENT=1 STARPU_FXT_TRACE=0 OPENBLAS_NUM_THREADS=1 STARPU_NCPU=1
unset STARPU_WORKERS_GETBIND STARPU_WORKERS_NOBIND STARPU_WORKERS_CPUID
# shellcheck disable=SC2016 # $PMI_RANK is the launched process's
timeout 120 "$MPIEXEC" -n 2 -bind-to core sh -c 'STARPU_HOME="$0/rank$PMI_RANK" &&
	mkdir -p "$STARPU_HOME" && export STARPU_HOME && exec "$1"' \
	"$home" "$BUILDDIR/tests/test_binding" >"$out" || { cat "$out"; exit 1; }
cat "$out"
[ "$(grep -c '^binding rank' "$out")" -eq 2 ] || { echo "expected one worker per rank"; exit 1; }
# Each worker bound to a single core (no range or list), and the two cores distinct.
cpus=$(awk '/^binding rank/ { print $NF }' "$out")
for c in $cpus; do
	case $c in *[!0-9]*) echo "a worker is not bound to one core: $c"; exit 1 ;; esac
done
[ "$(echo "$cpus" | sort -u | wc -l)" -eq 2 ] || { echo "the two ranks' workers share a core"; exit 1; }
echo "bound ranks on distinct cores OK"
