#!/bin/sh
# tests/sim_bsgemm.sh — the block-sparse product out of core on simulated GPUs (StarPU
# SimGrid mode, machines of perfmodels/), on Herault et al. 2020's synthetic problem
# (bench/bsgen.c: tile sizes uniform in [lo, hi], A and B 50% dense, C the symbolic
# product), with A + B + C at least 4 times the GPU memory (shrunk with
# STARPU_LIMIT_CUDA_MEM). Irregular tiles run at all because the codelets' models are
# regressions on the work of a task (codelets/model.c, perfmodels/README.md): no tile
# shape needs an entry of its own. "The band" is [0.85, 1.05] of the inspector's
# prediction: the prediction counts a tile as kept only from one chunk to the next;
# with the serpentine walk of block-sparse lists (src/inspect.c) StarPU's cache also
# serves, at a change of block, shared tiles of the chunks before (0.88-0.94 here,
# 1.000-1.041 with the plain walk). Asserts:
#   * equal tiles (1000), Summit-like node, 1 GPU, case (c2): loads in the band (0.920)
#     and at least 95% of the model's peak (99.7%; 96.4% before the device buffer pool,
#     src/pool.c);
#   * equal tiles (640), H100, 1 GPU, case (c2), 4 C blocks: loads in the band (0.881;
#     the loads keep the device busy, and without the early write-back of
#     finished C blocks, src/execute.c, the next block's loads evicted tiles about to be
#     read: 1.55 times the model at 1280 tiles and 4000 MiB);
#   * irregular tiles [512, 2048], Summit-like node, 1 GPU: loads in the band (0.924)
#     and at least 95% of the model's peak (99.5%). Two
#     things get it there. The plan is fitted to the list's footprint (src/fit.c):
#     planned with every tile at the largest tile's size (b = c = 3), the list used a
#     fraction of the memory and StarPU kept in the rest tiles the prediction reloads
#     (0.65 of it); fitted, 6 x 6 blocks fill 830 of the 900 MiB budget. And the tiles'
#     device buffers come from one allocation per GPU (src/pool.c): StarPU reuses its
#     own buffers only for a tile of the same shape, so each load of a new shape cost a
#     simulated cudaFree and cudaMalloc. Neither: 47.2%; the fit alone 54.7%
#     (STARGEMM_DEVICE_POOL=0); the pool alone 93.7%;
#   * the same on 2 GPUs: some loads from the other GPU, at least 80% of the model's
#     peak (85.9%; neither 31.1%, the pool alone 78.2%) and no more than 1.10 times the
#     predicted loads (0.911; 1.041 with the plain walk): a tile requested on a GPU
#     from the host and from the other GPU at once would arrive twice (StarPU 1.3
#     merges a request only with one from the same source node, coherency.c).
#     sched/ooc.c requests no tile again once it is requested on the device (1.096
#     before), and holds a task whose tile is on its way while the peer holds it until
#     the copy lands (0.940 and 83.8% before);
#   * the irregular 1-GPU case with B made on demand (--generate-b, src/generate.c):
#     tiles made, loads in the band (0.934) and at least 55% of the model's peak
#     (59.9%: the one CPU worker makes B's 141 tiles, 0.42 s of product against 0.25
#     s with B stored; 0.31 s with 4 CPU workers, so the making bounds it); on two
#     nodes (2 x 1, irrmpigen) the run ends and makes tiles; with a CUDA generator
#     (--generate-on-gpus, irrgengpu; its time the model's, perfmodels/generate.sh)
#     every tile is made on the GPU, the loads plus the tiles made there are in the
#     band (each predicted load of a B tile is a making instead: 146 + 141 of 303),
#     and at least 85% of the model's peak (92.4%, 0.273 s);
#   * the 1-GPU case with STARGEMM_DEVICE_POOL=0: loads in the band and below 70% of
#     the model's peak (60.2%), so that the switch is known to turn the pool off;
#   * few tiles per block (30% of the tiles, 600 MiB, 4 x 6 blocks): loads at most 1.05
#     times the prediction (0.847: the cache keeps tiles the model reloads) and at least
#     85% of the model's peak (95.9% with a lookahead of 4; 88.6% before the meter). A
#     tile of a block's rows or columns that meets no tile of the other operand at a k
#     is not loaded (src/inspect.c, readers()): 1.075 and 84.8% when every present tile
#     of the block's rows and columns was prefetched;
#   * irregular tiles, density 1, on the H100 of 2000 MiB (24,000: A + B + C 6.4 times
#     it): at least 85% of the model's peak (89.7%; 84.2% before the loads were
#     metered, src/loads.c; 76.6% with the plain walk and C tiles copied back at the
#     end of their block, src/execute.c) and loads in the band (0.965). A StarPU 1.3 prefetch evicts nothing, and takes only the buffer of a
#     released tile of its own shape: as prefetches, the chunks' loads waited on the
#     full device and arrived as their tasks started (64.0%); the executor asks for
#     them as fetches with tiles of several shapes (src/worklist.c,
#     stargemm__worklist_fetches_ahead());
#   * irregular tiles, density 0.5, on the H100 of 4000 MiB (36,000: A + B + C 5.2
#     times it): at least 80% of the model peak (82.0%; 76.1% before the meter) and
#     loads in the band (0.973). Each of the serpentine walk and the C tiles copied
#     back once finished (src/inspect.c, src/execute.c, release_finished_c()) was
#     needed: before the meter, 68.5% with the walk alone, 72.9% with the copy back
#     alone, 67.4% with neither;
#   * the same on 5000 MiB (A + B + C 4.0 times it): at least 85% of the model peak
#     (85.5%: the fit gives the room left to a lookahead of 4, src/fit.c,
#     try_longer_lookahead(); 74.2% with the lookahead of 2 before the meter) and loads
#     in the band (0.938);
#   * the same density at 48,000 on 8800 MiB (A + B + C 4.0 times it): at least 95% of
#     the model peak (98.2%; 95.2% before the meter; 79.2% when the fit kept its chunks
#     of d = 3 instead of the same 18 x 20 blocks with d = 1, src/fit.c,
#     try_shallow_chunks()) and loads in the band (0.954);
#   * two simulated ranks, one V100 of 200 MiB each, tiles of 500-1000 (3000^3): the
#     run ends (it never did while the device pool registered its MPI datatype in
#     SimGrid mode, src/pool.c) and loads in the band;
#   * small tiles (20-60, 30% of A's and B's tiles) in core on the 4-GPU H100 node:
#     batched (codelets/batch.c: cublas?gemmBatched calls, 25 batches per GPU) the
#     product takes at most a third of its time with a task per tile product
#     (STARGEMM_BATCH_FLOPS=0; 0.072 s against 0.515 s), every GPU runs batches, and it
#     loads at most 1.05 times the tiles the unbatched run loads (1.004-1.007 over
#     repeated runs: with 4 GPUs the batched run varies by a few loads; a C tile
#     first written by a batch with beta = 0 is not loaded: 1.64 times when it was).
#     The batch model (perfmodels/generate.sh) is an assumption, not a measurement;
#   * the same small tiles out of core on one H100 of 40 MiB: batched within each chunk
#     (src/inspect.c, batch_ooc()), the product takes at most a third of its time with a
#     task per tile product (0.42 s against 1.78 s) and loads within [0.90, 1.05] of
#     the prediction (0.975; unbatched 1.005, not asserted: doc/performance.md says why);
#   * and on one H100 of 60 MiB it runs to the end (0.37 s) and loads at most 1.05 times
#     the prediction (0.899: the cache keeps tiles the model reloads). It stopped at
#     the fourth block while the finished block's C tiles went back by prefetch
#     requests, which StarPU served only after the next batch's fetch, itself waiting
#     for their memory (src/execute.c, release_block()). The cases above keep a handle
#     per tile (STARGEMM_PACK_BELOW=0);
#   * the same small tiles packed (src/pack.c, the default), in core on the 4-GPU node:
#     every GPU runs batches, the product takes at most 0.75 of its time with a handle
#     per tile (0.034 s against 0.072 s) and loads at most half as many buffers (446
#     packs against 4029 tiles); out of core on one H100 of 40 MiB, planned over packs
#     (src/packlist.c): loads within [0.90, 1.05] of the prediction (0.999; 0.949 when
#     the plan's footprint counted each pack as its full rectangle) and at most half the
#     time with a handle per tile (0.158 s against 0.415 s). These products are
#     bound by transfers and task costs (11.6 GFLOP take 0.8 ms at the batch model's
#     rate): packs move fewer, larger buffers;
#   * C made anew at each of two steps (its symbolic product, 16,000^3, tiles 512-2048,
#     density 0.5, in core on the H100): with the pinned host pool (src/hostpool.c) the
#     second C pins nothing (at most 1% of the first's time: 0 s against 1.227 s) and
#     the first at most 1.05 times what it pins without the pool (1.000); with
#     STARGEMM_HOST_POOL=0 the second pins as much again (1.227 s);
#   * tiles of 500-1000 received over MPI by 2 ranks (6000^3), in the second of two
#     products, within a host budget of 60 MiB: their host buffers come from the
#     pinned host pool, which the first product pinned: at most 0.8 times the time of
#     StarPU pinning a buffer again for each tile of a shape it no longer keeps
#     (STARGEMM_HOST_POOL=0; 0.0120 s against 0.0177 s).
# Efficiency: useful flops over the product's simulated time (seconds - symbolic_s: the
# symbolic C pattern's time is the simulated pinning of C's host memory) over the
# GPUs' DGEMM rate in perfmodels/generate.sh. The simulation is deterministic.
set -e
out="$BUILDDIR/tests/sim_bsgemm.out"
: >"$out"
bench="$BUILDDIR/bench/stargemm_bsgemm"
case "$MPIEXEC" in
*starpu_smpirun) ;;
*)
	echo "SKIP: simulated block-sparse product: not a SimGrid build (MPIEXEC='$MPIEXEC')"
	exit 77
	;;
esac
common="--niter 1 --warmup 0 --ooc --density-a 0.5 --density-b 0.5 --csv"
extra_env=

run2() { # the same as run, on two simulated nodes
	label=$1 host=$2 ncuda=$3 limit=$4 rate=$5
	shift 5
	echo "== $label: $host, 2 nodes, $ncuda GPU(s) of $limit MiB each" | tee -a "$out"
	# shellcheck disable=SC2086
	env $extra_env STARPU_NCPU=1 STARPU_NCUDA="$ncuda" STARPU_LIMIT_CUDA_MEM="$limit" \
		TEST_TIMEOUT=120 "$SRCDIR/tests/simrun.sh" "$host" 2 "$bench" $common "$@" |
		grep -v '^\[starpu_comm' | sed "s/^stargemm,/$label,$ncuda,$rate,/" | tee -a "$out"
}

run() { # label host ngpus limit_mib gflops_per_gpu args...
	label=$1 host=$2 ncuda=$3 limit=$4 rate=$5
	shift 5
	echo "== $label: $host, $ncuda GPU(s) of $limit MiB, $rate GFLOP/s each" | tee -a "$out"
	# shellcheck disable=SC2086
	env $extra_env STARPU_NCPU=1 STARPU_NCUDA="$ncuda" STARPU_LIMIT_CUDA_MEM="$limit" \
		"$SRCDIR/tests/simrun.sh" "$host" 1 "$bench" $common "$@" |
		grep -v '^\[starpu_comm' | sed "s/^stargemm,/$label,$ncuda,$rate,/" | tee -a "$out"
}

# 16 x 16 x 16 tiles of 1000: 1000 MiB, case (c2).
run reg summit 1 1000 7200 --m 16000 --n 16000 --k 16000 --lo 1000 --hi 1000
# 25 x 25 x 25 tiles of 640 on the H100: 4 C blocks.
run h100reg h100 1 1000 57000 --m 16000 --n 16000 --k 16000 --lo 640 --hi 640
# Irregular tiles, ~13 per dimension (A + B + C ~ 4.3 GB for 1 GB of GPU memory).
run irr summit 1 1000 7200 --m 16384 --n 16384 --k 16384 --lo 512 --hi 2048
run irr2 summit 2 1000 7200 --m 20480 --n 20480 --k 20480 --lo 512 --hi 2048
# The first with B made on demand (src/generate.c): its tiles made on the host by the
# chunks that read them, not prefetched, loaded when their GEMMs become ready.
run irrgen summit 1 1000 7200 --m 16384 --n 16384 --k 16384 --lo 512 --hi 2048 --generate-b
run irrgengpu summit 1 1000 7200 --m 16384 --n 16384 --k 16384 --lo 512 --hi 2048 \
	--generate-on-gpus
# The first without the device pool: StarPU's own buffers, a cudaMalloc and cudaFree
# per load of a new shape.
extra_env=STARGEMM_DEVICE_POOL=0
run irrnopool summit 1 1000 7200 --m 16384 --n 16384 --k 16384 --lo 512 --hi 2048
# Few tiles per block: 30% of the tiles, 600 MiB (A + B + C ~ 4.5 times it), 4 x 6
# blocks.
extra_env=
common="--niter 1 --warmup 0 --ooc --density-a 0.3 --density-b 0.3 --csv"
run irr600 summit 1 600 7200 --m 16384 --n 16384 --k 16384 --lo 512 --hi 2048
# Irregular tiles, all present, on the H100: the chunks' loads asked for as fetches.
common="--niter 1 --warmup 0 --ooc --density-a 1 --density-b 1 --csv"
run h100irr h100 1 2000 57000 --m 24000 --n 24000 --k 24000 --lo 512 --hi 2048
# Half of the tiles present on the H100 of 4000 MiB (A + B + C 5.2 times it).
common="--niter 1 --warmup 0 --ooc --density-a 0.5 --density-b 0.5 --csv"
run h100half h100 1 4000 57000 --m 36000 --n 36000 --k 36000 --lo 512 --hi 2048
# The same on 5000 MiB (A + B + C 4.0 times it): room for a longer lookahead.
run h100half5 h100 1 5000 57000 --m 36000 --n 36000 --k 36000 --lo 512 --hi 2048
# The same density at 48,000 on 8800 MiB (A + B + C 4.0 times it).
run h100big h100 1 8800 57000 --m 48000 --n 48000 --k 48000 --lo 512 --hi 2048
# Two simulated ranks, one V100 each, tiles of several shapes: the run must end.
run2 irrmpi summit 1 200 7200 --m 3000 --n 3000 --k 3000 --lo 500 --hi 1000 --P 1 --Q 2
# The same with B made on demand on a 2 x 1 grid: both ranks make the B tiles they read.
run2 irrmpigen summit 1 200 7200 --m 3000 --n 3000 --k 3000 --lo 500 --hi 1000 --P 2 --Q 1 \
	--generate-b
# Received tiles of several shapes, in a warm product (the second of two), within a
# host budget of 60 MiB that makes StarPU let go of the buffers it kept: from the
# pinned host pool, pinned by the first product, they cost no pinning; without it
# StarPU pins a buffer again for each tile of a shape it no longer keeps one of
# (src/hostpool.c).
common="--niter 1 --warmup 1 --ooc --density-a 0.5 --density-b 0.5 --csv"
recv="--m 6000 --n 6000 --k 6000 --lo 500 --hi 1000 --P 1 --Q 2"
extra_env=STARPU_LIMIT_CPU_MEM=60
# shellcheck disable=SC2086
run2 recvpool summit 1 200 7200 $recv
extra_env="STARPU_LIMIT_CPU_MEM=60 STARGEMM_HOST_POOL=0"
# shellcheck disable=SC2086
run2 recvnopool summit 1 200 7200 $recv
extra_env=
common="--niter 1 --warmup 0 --ooc --density-a 0.5 --density-b 0.5 --csv"
# StarPU's host budget (set here as a user may; with GPUs and STARGEMM_HOST_POOL=0
# stargemm_init() sets this rank's share of the machine) below the tiles of lookahead + 2 chunks that a rank
# receives: refused on every rank with the numbers, where StarPU would wait for room
# forever.
echo "== budget: 2 x 2 nodes, received tiles above a host budget of 20 MiB" | tee -a "$out"
env STARPU_LIMIT_CPU_MEM=20 STARPU_NCPU=1 STARPU_NCUDA=1 STARPU_LIMIT_CUDA_MEM=200 \
	TEST_TIMEOUT=120 "$SRCDIR/tests/simrun.sh" summit 4 "$bench" --m 6000 --n 6000 \
	--k 6000 --lo 500 --hi 1000 --density-a 0.5 --density-b 0.5 --ooc --niter 1 \
	--warmup 0 --csv --P 2 --Q 2 >"$out.budget" 2>&1 || true
refused=$(grep -c "more than StarPU's host budget of 20.0 MiB" "$out.budget" || true)
if [ "$refused" -ne 4 ] || grep -q '^stargemm,' "$out.budget"; then
	grep -v -e '/INFO]' -e 'MPI_Init_thread' "$out.budget" | tail -n 20
	echo "budget: expected the refusal on all 4 ranks and no result, got $refused"
	exit 1
fi
echo "budget: refused on $refused ranks" | tee -a "$out"
# Small tiles in core on 4 GPUs, batched and not; in core: no --ooc, all the memory.
# A handle per tile (STARGEMM_PACK_BELOW=0), then packed (the default).
common="--niter 1 --warmup 0 --density-a 0.3 --density-b 0.3 --csv"
small="--m 4000 --n 4000 --k 4000 --lo 20 --hi 60"
extra_env="STARPU_WORKER_STATS=1 STARGEMM_PACK_BELOW=0"
# shellcheck disable=SC2086
run small h100x4 4 80000 57000 $small 2>&1 | grep -A1 '^CUDA' | grep -c 'task(s)' |
	sed 's/^/small: CUDA workers with tasks: /' | tee -a "$out"
extra_env="STARGEMM_BATCH_FLOPS=0 STARGEMM_PACK_BELOW=0"
# shellcheck disable=SC2086
run smallnobatch h100x4 4 80000 57000 $small
extra_env="STARPU_WORKER_STATS=1"
# shellcheck disable=SC2086
run smallpack h100x4 4 80000 57000 $small 2>&1 | grep -A1 '^CUDA' | grep -c 'task(s)' |
	sed 's/^/smallpack: CUDA workers with tasks: /' | tee -a "$out"
# The same small tiles out of core on one H100 of 40 MiB (A + B + C: 4.9 times it).
common="--niter 1 --warmup 0 --ooc --density-a 0.3 --density-b 0.3 --csv"
extra_env=STARGEMM_PACK_BELOW=0
# shellcheck disable=SC2086
run smallooc h100 1 40 57000 $small
extra_env="STARGEMM_BATCH_FLOPS=0 STARGEMM_PACK_BELOW=0"
# shellcheck disable=SC2086
run smalloocnobatch h100 1 40 57000 $small
extra_env=
# shellcheck disable=SC2086
run smallpackooc h100 1 40 57000 $small
# At 60 MiB the first batch of the fourth block did not fit beside the third block's C
# tiles; their write-backs, queued as prefetches, waited behind its fetch for ever. A
# run that stops there prints no CSV line (timeout) and the test fails.
extra_env="TEST_TIMEOUT=180 STARGEMM_PACK_BELOW=0"
# shellcheck disable=SC2086
run smallooc60 h100 1 60 57000 $small
# C made at each of two steps (its symbolic product), in core on the H100: pinned once
# with the pinned host pool (src/hostpool.c), at every step without it.
common="--niter 2 --warmup 0 --density-a 0.5 --density-b 0.5 --csv"
pinned="--m 16000 --n 16000 --k 16000 --lo 512 --hi 2048"
extra_env=
# shellcheck disable=SC2086
run pinned h100 1 80000 57000 $pinned
extra_env=STARGEMM_HOST_POOL=0
# shellcheck disable=SC2086
run pinnednopool h100 1 80000 57000 $pinned
extra_env=

awk -F, '
	/^impl,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
	/^small: CUDA workers with tasks:/ { busy = substr($0, 33) + 0; next }
	/^smallpack: CUDA workers with tasks:/ { packbusy = substr($0, 37) + 0; next }
	/^==/ || NF < 10 { next }
	{
		# The label, GPUs and rate were put before the CSV line: shift by 2.
		label = $1; g = $2; rate = $3; n[label]++
		c = 2
		t = $(col["seconds"] + c) - $(col["symbolic_s"] + c)
		flops = $(col["useful_gflop"] + c)
		eff = t > 0 ? 100 * flops / t / (g * rate) : 0
		if (label ~ /^pinned/) {
			sym[label, n[label]] = $(col["symbolic_s"] + c)
			printf "%-13s step %d: C made in %.6f s, product %.6f s\n", label,
				n[label], sym[label, n[label]], t
			next
		}
		if (label ~ /^recv/) {
			product[label] = t
			printf "%-15s warm product %.6f s, host buffers %s MiB at most\n",
				label, t, $(col["ram_peak_mib"] + c)
			next
		}
		if (label ~ /^small/) {
			product[label] = t; loads[label] = $(col["loads"] + c)
			printf "%-15s %.6f s  loads %s  peer %s", label, t, loads[label],
				$(col["peer_loads"] + c)
			if (label ~ /ooc/)
				printf "  / model %s = %s", $(col["pred_loads"] + c),
					$(col["loads_ratio"] + c)
			printf "\n"
			r = $(col["loads_ratio"] + c)
			if ((label == "smallooc" || label == "smallpackooc") && (r < 0.90 || r > 1.05)) {
				print "  loads outside [0.90, 1.05] of the model"; bad = 1
			}
			if (label == "smallooc60" && r > 1.05) {
				print "  more than 1.05 times the predicted loads"; bad = 1
			}
			next
		}
		r = $(col["loads_ratio"] + c)
		if (label == "irrgengpu") {
			made = $(col["generated_on_gpus"] + c)
			if (made != $(col["generated_tiles"] + c) || !(made > 0)) {
				print "  tiles made on the host with a CUDA generator"; bad = 1
			}
			r = ($(col["loads"] + c) + made) / $(col["pred_loads"] + c)
		}
		printf "%-8s loads %s / model %s = %s  peer %s  %.1f%% of the model peak\n",
			label, $(col["loads"] + c), $(col["pred_loads"] + c), r,
			$(col["peer_loads"] + c), eff
		if (label != "irr2" && label != "irr600" && (r < 0.85 || r > 1.05)) {
			print "  loads outside [0.85, 1.05] of the model"; bad = 1
		}
		if (label == "irr600" && r > 1.05) {
			print "  more than 1.05 times the predicted loads"; bad = 1
		}
		if (r > 1.10) { print "  more than 1.10 times the predicted loads"; bad = 1 }
		floor = label == "irr2" ? 80 : label == "irr600" ? 85 : label ~ /^(reg|irr)$/ ? 95 : 0
		if (label == "irrgen")
			floor = 55
		if (label == "irrgengpu")
			floor = 85
		if (label ~ /gen(gpu)?$/ && !($(col["generated_tiles"] + c) > 0)) {
			print "  no tile made on demand"; bad = 1
		}
		if (label == "h100irr" || label == "h100half5")
			floor = 85
		if (label == "h100half")
			floor = 80
		if (label == "h100big")
			floor = 95
		if (eff < floor) { printf "  below %d%% of the model peak\n", floor; bad = 1 }
		if (label == "irrnopool" && eff >= 70) {
			print "  as fast with STARGEMM_DEVICE_POOL=0: the pool is not off"; bad = 1
		}
		if (label == "irr2" && $(col["peer_loads"] + c) <= 0) {
			print "  no load from the other GPU"; bad = 1
		}
	}
	END {
		if (n["reg"] != 1 || n["h100reg"] != 1 || n["irr"] != 1 || n["irr2"] != 1 ||
		    n["irrgen"] != 1 || n["irrgengpu"] != 1 || n["irrmpigen"] != 1 ||
		    n["irrnopool"] != 1 || n["irr600"] != 1 || n["h100irr"] != 1 || n["h100half"] != 1 ||
		    n["h100half5"] != 1 || n["h100big"] != 1 || n["irrmpi"] != 1 || n["small"] != 1 ||
		    n["smallnobatch"] != 1 ||
		    n["smallooc"] != 1 || n["smalloocnobatch"] != 1 || n["smallooc60"] != 1 ||
		    n["smallpack"] != 1 || n["smallpackooc"] != 1 || n["pinned"] != 2 ||
		    n["pinnednopool"] != 2 || n["recvpool"] != 1 || n["recvnopool"] != 1) {
			print "missing runs"; exit 1
		}
		if (!(product["small"] > 0) || product["small"] * 3 > product["smallnobatch"]) {
			print "small tiles: batched not 3 times faster than unbatched"; bad = 1
		}
		if (loads["small"] > 1.05 * loads["smallnobatch"]) {
			print "small tiles: batched loads more than 1.05 times unbatched"; bad = 1
		}
		if (busy != 4) { print "small tiles: " busy " of 4 GPUs ran batches"; bad = 1 }
		if (!(product["smallooc"] > 0) ||
		    product["smallooc"] * 3 > product["smalloocnobatch"]) {
			print "small tiles out of core: batched not 3 times faster"; bad = 1
		}
		if (packbusy != 4) { print "packed small tiles: " packbusy " of 4 GPUs ran batches"; bad = 1 }
		if (!(product["smallpack"] > 0) || product["smallpack"] > 0.75 * product["small"] ||
		    loads["smallpack"] * 2 > loads["small"]) {
			print "packed small tiles in core: not faster than a handle per tile, or " \
			      "not half the loads"; bad = 1
		}
		if (!(product["smallpackooc"] > 0) ||
		    product["smallpackooc"] * 2 > product["smallooc"]) {
			print "packed small tiles out of core: not twice as fast as a handle per tile"
			bad = 1
		}
		if (!(sym["pinned", 1] > 0) || sym["pinned", 2] > 0.01 * sym["pinned", 1]) {
			print "pinned host pool: the second C was pinned again"; bad = 1
		}
		if (sym["pinned", 1] > 1.05 * sym["pinnednopool", 1]) {
			print "pinned host pool: the first C pinned more than 1.05 times its size"
			bad = 1
		}
		if (sym["pinnednopool", 2] < 0.9 * sym["pinnednopool", 1]) {
			print "STARGEMM_HOST_POOL=0: the second C not pinned again: the pool is not off"
			bad = 1
		}
		if (!(product["recvpool"] > 0) || product["recvpool"] > 0.8 * product["recvnopool"]) {
			print "pinned host pool: a warm product with received tiles not in 0.8 " \
			      "times the time of StarPU pinning their buffers"; bad = 1
		}
		exit bad
	}' "$out"
echo "simulated block-sparse product OK"
