#!/bin/sh
# tests/binding_2ranks.sh — two ranks, each bound to its own core by the launcher
# (-bind-to core), one CPU worker each: their workers must be on different cores
# without the user setting anything (stargemm follows the process's affinity mask;
# StarPU 1.3 alone put both on core 0 and ran at half speed). Launched by
# tests/mpirun.sh --bound, which skips with fewer than two cores or no MPI launcher.
out="$BUILDDIR/tests/binding_2ranks.out"
unset STARPU_WORKERS_GETBIND STARPU_WORKERS_NOBIND STARPU_WORKERS_CPUID
"$SRCDIR/tests/mpirun.sh" --bound 2 "$BUILDDIR/tests/test_binding" >"$out"
rc=$?
[ $rc -eq 0 ] || { cat "$out"; exit $rc; }
cat "$out"
[ "$(grep -c '^binding rank' "$out")" -eq 2 ] || { echo "expected one worker per rank"; exit 1; }
# Each worker bound to a single core (no range or list), and the two cores distinct.
cpus=$(awk '/^binding rank/ { print $NF }' "$out")
for c in $cpus; do
	case $c in *[!0-9]*) echo "a worker is not bound to one core: $c"; exit 1 ;; esac
done
[ "$(echo "$cpus" | sort -u | wc -l)" -eq 2 ] || { echo "the two ranks' workers share a core"; exit 1; }
echo "bound ranks on distinct cores OK"
