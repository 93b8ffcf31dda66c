#!/bin/sh
# tests/gpu_bundle.sh — the bundle for bare GPU machines (scripts/gpu_bundle.sh) is
# built from this tree, unpacked elsewhere and run with an empty environment: its
# programs must load from the bundle and pass their checks (on a machine without GPU:
# the CPU checks pass and every GPU step reports 77, "skipped"). Skipped (77) when the
# build has no CUDA peers. The forced-(c2) run is made small here.
set -e
grep -q '^#define HAVE_GPU_PEERS 1' "$BUILDDIR/config.h" ||
	{ echo "SKIP: not a CUDA build with the cuBLAS peers"; exit 77; }
command -v xz >/dev/null 2>&1 || { echo "SKIP: no xz to pack the bundle"; exit 77; }
dir="$BUILDDIR/tests/gpu_bundle.d"
rm -rf "$dir" && mkdir -p "$dir/unpacked"
XZ_OPT=-0 "$SRCDIR/scripts/gpu_bundle.sh" "$BUILDDIR" "$dir/stargemm-gpu.tar.xz"
tar -xJf "$dir/stargemm-gpu.tar.xz" -C "$dir/unpacked"
set +e
env -i PATH=/usr/bin:/bin HOME="$dir" OUT="$dir/out" \
	GPU_CHECK_OOC_SIZE="--m 1500 --n 1301 --k 1103 --nb 256" GPU_CHECK_OOC_LIMIT=16 \
	GPU_CHECK_SPARSE_SIZE="--m 1200 --n 1100 --k 1000 --lo 100 --hi 300" \
	GPU_CHECK_POOL_SIZE="--m 900 --n 800 --k 700 --lo 100 --hi 300" \
	GPU_CHECK_BATCH_SIZE="--m 1000 --n 900 --k 800 --lo 20 --hi 60" \
	"$dir/unpacked/stargemm-gpu/gpu_check.sh" info correct sparse
set -e
summary="$dir/out/summary.txt"
for step in test_pdgemm test_pdgemm_ooc ooc_c2_check test_bsgemm test_bsfilter \
	ksplit_check bs_keep_A_check bs_keep_C_check bs_auto_2ranks_check bs_incore_check bs_ooc_check bs_batch_check bs_batch_check_z bs_tiles_check \
	bs_pack_ooc_check bs_incore_perf bs_pool_perf bs_nopool_perf bs_ooc_perf; do
	grep -q "^$step  *rc=0 " "$summary" || { echo "$step failed"; exit 1; }
done
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	! grep -v " rc=0 " "$summary" || { echo "a GPU step failed"; exit 1; }
else
	for step in cublas_check cublasxt_check; do
		grep -q "^$step  *rc=77 " "$summary" || { echo "$step: expected 77"; exit 1; }
	done
	echo "SKIP: the bundle's GPU steps cublas_check and cublasxt_check (the others ran on CPU workers): no GPU visible"
fi
! grep -q ',FAIL,' "$dir/out"/*.log
echo "GPU bundle OK"
