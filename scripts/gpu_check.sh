#!/bin/sh
# scripts/gpu_check.sh — issue 3's checks on a real GPU, run from the bundle that
# scripts/gpu_bundle.sh packs (it lies beside bin/ and lib/ there). Phases, in the
# order given (default: info correct sparse small):
#   info     the GPU, the driver, and that every library the programs load is found
#   correct  the CUDA codelets against BLAS: tests/test_pdgemm (ragged, transposed,
#            irregular tiles; in core and out of core) with the GEMMs on the GPU, a
#            ragged out-of-core run forced into case (c2) by a 1 GiB GPU limit with
#            --check, and the cuBLAS peers with --check
#   sparse   the block-sparse product on the GPU: tests/test_bsgemm and test_bsfilter,
#            X^T Y with the inner dimension split and C = A X with A or C kept in place
#            and on 2 ranks as the model chooses (checked), a ragged irregular product checked in core and out of core (256 MiB of
#            GPU memory), then paper 000's synthetic problem (tiles 512-2048, A and B
#            half full, 49,152^3) in core and out of core with 8 GiB of GPU memory
#            (A + B + C = 4.5x that): useful-flop rate and loads against the work list;
#            C made at every repetition (32,768^3) with the pinned host pool and without;
#            small irregular tiles (20-60) as batches of cuBLAS batched calls, checked
#            in double and double complex, and 8000^3 batched and not (rates)
#   small    bench/compare_gpu.sh, N = 32,768, t = 2048, 4 GiB of GPU memory (c2)
#   large    bench/compare_gpu.sh, N = 65,536, t = 2048, 16 GiB (the issue's case; the
#            host needs ~100 GiB: three 32 GiB matrices, one program at a time)
# Every log goes to ${OUT:-/tmp/stargemm-gpu-out}; the summary is printed last.
# GPU_CHECK_OOC_SIZE and GPU_CHECK_OOC_LIMIT (MiB) change the forced-(c2) run's size
# and GPU memory, GPU_CHECK_SPARSE_SIZE and GPU_CHECK_SPARSE_LIMIT the synthetic sparse
# problem's, GPU_CHECK_POOL_SIZE the pool comparison's, GPU_CHECK_BATCH_SIZE the small-tile one's (tests/gpu_bundle.sh runs the
# bundle small on machines without GPU).
# Exit status: 0 when every phase passed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/stargemm-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here/lib:${CUDA_DIR:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# CUDA's libraries elsewhere than the toolkit (e.g. only in Python's nvidia-* wheels):
# add the folder of each one the programs miss.
for lib in $(ldd "$here/bin/stargemm_pdgemm" | awk '/not found/ { print $1 }'); do
	found=$(find / \( -path /proc -o -path /sys \) -prune -o -name "$lib" -print 2>/dev/null | head -n 1)
	[ -n "$found" ] && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$found")"
done
export STARPU_HOME=${STARPU_HOME:-/tmp/stargemm-starpu-home} STARPU_SILENT=1
export STARPU_FXT_TRACE=0 STARPU_NCUDA=${STARPU_NCUDA:-1}
export STARGEMM_BENCH="$here/bin/stargemm_pdgemm"
mkdir -p "$STARPU_HOME"
bench=$STARGEMM_BENCH
bsbench=$here/bin/stargemm_bsgemm
sparse_size=${GPU_CHECK_SPARSE_SIZE:-"--m 49152 --n 49152 --k 49152 --lo 512 --hi 2048 \
	--density-a 0.5 --density-b 0.5"}
sparse_limit=${GPU_CHECK_SPARSE_LIMIT:-8192}
pool_size=${GPU_CHECK_POOL_SIZE:-"--m 32768 --n 32768 --k 32768 --lo 512 --hi 2048 \
	--density-a 0.5 --density-b 0.5"}
ooc_size=${GPU_CHECK_OOC_SIZE:-"--m 10000 --n 9001 --k 7003 --nb 1024"}
ooc_limit=${GPU_CHECK_OOC_LIMIT:-1024}
summary=$out/summary.txt
: >"$summary"
failed=0

# step NAME COMMAND...: run, log to $out/NAME.log, one summary line.
step() {
	name=$1
	shift
	start=$(date +%s)
	"$@" >"$out/$name.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || failed=1
	printf '%-22s rc=%-3s %4ss  %s\n' "$name" "$rc" $(($(date +%s) - start)) \
		"$(grep -v '^\[starpu' "$out/$name.log" | grep . | tail -n 1)" >>"$summary"
}

phase_info() {
	step info sh -c "nvidia-smi -L && nvidia-smi --query-gpu=name,memory.total,driver_version \
		--format=csv && cat '$here/COMMIT' && ! ldd '$bench' | grep 'not found'"
}

phase_correct() {
	step test_pdgemm "$here/bin/test_pdgemm" 1 1
	step test_pdgemm_ooc "$here/bin/test_pdgemm" 1 1 ooc
	# shellcheck disable=SC2086 # the size is a list of options
	step ooc_c2_check env STARPU_LIMIT_CUDA_MEM=$ooc_limit "$bench" --ooc $ooc_size \
		--transB T --beta 0.5 --niter 1 --warmup 0 --check --csv
	step cublas_check "$bench" --impl cublas --m 3001 --n 2999 --k 1501 --transA T \
		--niter 1 --warmup 1 --check --csv
	step cublasxt_check "$bench" --impl cublasxt --m 5001 --n 4999 --k 3001 --nb 1024 \
		--niter 1 --warmup 1 --check --csv
	# The out-of-core run must have planned case (c2) and moved tiles to the GPU.
	step ooc_c2_on_gpu awk -F, '$1 == "stargemm" { ok = $25 == "c2" && $33 > 0
		print "case " $25 ", loads/model " $28 ", host->GPU tiles " $33 }
		END { exit !ok }' "$out/ooc_c2_check.log"
	grep -h ',FAIL,' "$out"/*_check.log >/dev/null 2>&1 && failed=1
}

phase_sparse() {
	ragged="--m 6001 --n 5003 --k 4007 --lo 200 --hi 900 --density-a 0.4 --density-b 0.5"
	step test_bsgemm "$here/bin/test_bsgemm" 1 1
	step test_bsfilter "$here/bin/test_bsfilter" 1 1
	# shellcheck disable=SC2086 # sizes are lists of options
	step bs_incore_check "$bsbench" $ragged --alpha 1.5 --beta 0.5 --niter 1 --warmup 0 \
		--check --no-dense --csv
	# shellcheck disable=SC2086
	step bs_ooc_check env STARPU_LIMIT_CUDA_MEM=256 "$bsbench" $ragged --alpha 1.5 \
		--beta 0.5 --ooc --niter 1 --warmup 0 --check --no-dense --csv
	# in core, a C of one tile column (C = A X, X of 64 columns): the inner dimension
	# split over the GPU's partials (src/ksplit.c; X^T Y), A kept in place (the same
	# path with one partial), C kept (its rows dealt to the GPUs), each checked
	# shellcheck disable=SC2086
	step ksplit_check env STARGEMM_KSPLIT=2 "$bench" --m 130 --n 70 --k 200011 --nb 512 \
		--transA T --niter 1 --warmup 0 --check --csv
	thin="--m 8000 --k 8000 --n 64 --lo 500 --hi 1000 --density-a 0.2 --density-b 1"
	for keep in A C; do
		# shellcheck disable=SC2086
		step "bs_keep_${keep}_check" "$bsbench" $thin --stationary $keep --beta 0.5 \
			--niter 1 --warmup 0 --check --no-dense --csv
	done
	# the model's choice on 2 ranks sharing the GPU: a task's cost probed there
	# (src/taskcost.c), the pinning rate, the run's length (--reuse), checked
	# shellcheck disable=SC2086
	step bs_auto_2ranks_check "$here/bin/mpiexec" -n 2 "$bsbench" $thin --P 1 --Q 2 \
		--stationary auto --reuse 2 --beta 0.5 --niter 2 --warmup 0 --check --no-dense --csv
	# small irregular tiles: batches of cublas?gemmBatched calls (codelets/batch.c), the
	# tiles packed (src/pack.c, the default), or a handle per tile (STARGEMM_PACK_BELOW=0)
	small="--m 1500 --n 1400 --k 1300 --lo 20 --hi 60 --density-a 0.3 --density-b 0.3"
	# shellcheck disable=SC2086
	step bs_batch_check "$bsbench" $small --alpha 1.5 --beta 0.5 --niter 1 --warmup 0 \
		--check --no-dense --csv
	# shellcheck disable=SC2086
	step bs_batch_check_z "$bsbench" $small --prec z --alpha 1.5 --beta 0.5 --niter 1 \
		--warmup 0 --check --no-dense --csv
	# shellcheck disable=SC2086
	step bs_tiles_check env STARGEMM_PACK_BELOW=0 "$bsbench" $small --alpha 1.5 --beta 0.5 \
		--niter 1 --warmup 0 --check --no-dense --csv
	# packed out of core: the plan over packs (src/packlist.c) on a 16 MiB GPU
	# shellcheck disable=SC2086
	step bs_pack_ooc_check env STARPU_LIMIT_CUDA_MEM=16 "$bsbench" $small --alpha 1.5 \
		--beta 0.5 --ooc --niter 1 --warmup 0 --check --no-dense --csv --plan
	small=${GPU_CHECK_BATCH_SIZE:-"--m 8000 --n 8000 --k 8000 --lo 20 --hi 60 \
		--density-a 0.3 --density-b 0.3"}
	# shellcheck disable=SC2086
	step bs_batch_perf "$bsbench" $small --niter 3 --warmup 1 --no-dense --csv
	# shellcheck disable=SC2086
	step bs_tiles_perf env STARGEMM_PACK_BELOW=0 "$bsbench" $small --niter 3 --warmup 1 \
		--no-dense --csv
	# shellcheck disable=SC2086
	step bs_nobatch_perf env STARGEMM_PACK_BELOW=0 STARGEMM_BATCH_FLOPS=0 "$bsbench" $small \
		--niter 3 --warmup 1 --no-dense --csv
	# shellcheck disable=SC2086
	step bs_incore_perf "$bsbench" $sparse_size --niter 2 --warmup 1 --no-dense --csv
	# C made at every repetition (symbolic_s): host tiles from the pinned pool, whose
	# slabs the second C reuses (src/hostpool.c, the default), or pinned per tile by
	# StarPU (STARGEMM_HOST_POOL=0)
	# shellcheck disable=SC2086
	step bs_pool_perf "$bsbench" $pool_size --niter 3 --warmup 0 --no-dense --csv
	# shellcheck disable=SC2086
	step bs_nopool_perf env STARGEMM_HOST_POOL=0 "$bsbench" $pool_size --niter 3 \
		--warmup 0 --no-dense --csv
	# shellcheck disable=SC2086
	step bs_ooc_perf env STARPU_LIMIT_CUDA_MEM=$sparse_limit "$bsbench" $sparse_size --ooc \
		--niter 2 --warmup 1 --no-dense --csv --plan
}

phase_small() {
	step compare_32768 "$here/bench/compare_gpu.sh" --device-mem 4096 -- --m 32768 \
		--n 32768 --k 32768 --nb 2048 --niter 2 --warmup 1
}

phase_large() {
	step compare_65536 "$here/bench/compare_gpu.sh" --device-mem 16384 -- --m 65536 \
		--n 65536 --k 65536 --nb 2048 --niter 1 --warmup 1
}

[ $# -gt 0 ] || set -- info correct sparse small
for phase in "$@"; do
	case $phase in
	info | correct | sparse | small | large) "phase_$phase" ;;
	*) echo "gpu_check.sh: unknown phase '$phase' (info correct sparse small large)" >&2
	   exit 2 ;;
	esac
done
for f in "$out"/compare_*.log "$out"/bs_*_perf.log; do
	[ -f "$f" ] && { echo "== $f"; tail -n 8 "$f"; }
done
echo "== summary ($out)"
cat "$summary"
exit $failed
