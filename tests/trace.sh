#!/bin/sh
# tests/trace.sh — a small traced run writes one FxT file per rank, and starpu_fxt_tool
# merges them into a non-empty paje.trace holding both ranks' workers and MPI events.
if [ "$HAVE_FXT" != yes ]; then
	echo "SKIP: StarPU was built without FxT (or starpu_fxt_tool is missing)"
	exit 77
fi
set -e
dir="$BUILDDIR/tests/trace.dir"
rm -rf "$dir" && mkdir -p "$dir"
STARPU_FXT_TRACE=1 "$SRCDIR/tests/mpirun.sh" 2 "$BUILDDIR/bench/stargemm_pdgemm" \
	--m 256 --n 256 --k 256 --nb 64 --P 2 --Q 1 --niter 1 --warmup 0 --peak 10 \
	--trace "$dir"
ls -l "$dir"
[ "$(ls "$dir"/prof_file_* | wc -l)" -eq 2 ] || { echo "expected 2 per-rank FxT files"; exit 1; }
[ -s "$dir/paje.trace" ] || { echo "no paje.trace"; exit 1; }
grep -q 'PajeDefineContainerType' "$dir/paje.trace"
# Both ranks' CPU workers and MPI communication threads are containers of the trace,
# and dgemm tasks ran.
for c in 0_CPU0 1_CPU0 0_mpict 1_mpict; do
	awk -v c="$c" '$1 == "7" && $NF == c { found = 1 } END { exit !found }' "$dir/paje.trace" ||
		{ echo "container $c missing from paje.trace"; exit 1; }
done
grep -q dgemm "$dir/paje.trace" || { echo "no dgemm task in the trace"; exit 1; }
echo "trace OK"
