#!/bin/sh
# tests/sim_ooc.sh — the out-of-core algorithm on simulated GPUs (StarPU SimGrid mode,
# the Summit-like node of perfmodels/: V100s of 16 GB, NVLink). Asserts, on small
# problems (tile 1024, a few hundred tasks each):
#   * GPU loads within [0.90, 1.05] of Eq. (1) in regimes (a), (c1) and (c2)
#     (GPU memory shrunk with STARPU_LIMIT_CUDA_MEM to reach c1 and c2), 4 tile
#     columns on 2 and 3 GPUs included (split2, split3: 1.000 and 1.000). Loads above
#     the model on several GPUs would be tiles that reach a GPU twice, from the host
#     and from a peer GPU: StarPU 1.3 joins a new request to a pending one only if both
#     copy from the same node (datawizard/coherency.c). The policy asks no second time
#     for a tile already requested on the device (sched/ooc.c, prefetch_inputs();
#     before: 1.062 and 1.070), and holds a task whose input is on its way while a peer
#     holds it until the copy lands (would_copy_twice(); before: 1.010 and 1.044);
#   * on several GPUs (d2d, split2, split3, mpi3g, c2g2, raggedk6's first repetition),
#     loads at most 1.01 times the model: no tile reaches a GPU twice (all at 1.000);
#   * no C tile leaves its GPU before its block is finished: tiles written back to the
#     host never exceed the number of C tiles (A and B are never dirty, so a C tile
#     evicted early would be written back, and reloaded, twice);
#   * with 2 GPUs that have peer access, some loads come from the other GPU;
#   * lookahead 2 finishes no later than lookahead 1 in case (c2), where C blocks
#     switch (same b, c, d for both; the simulation is deterministic): both 0.1556 s.
#     Before the device pool, 0.1567 s against 0.1574 s: what lookahead 2 hid was
#     StarPU's simulated cudaMalloc; without it (STARPU_SIMGRID_CUDA_MALLOC_COST=0) both
#     took 0.1555 s (doc/out-of-core.md, "Lookahead, measured");
#   * on 2 simulated nodes (StarPU-MPI over SMPI), the tiles each rank received within
#     [0.90, 1.05] of the model's count per rank (src/plan.c: the same on every rank,
#     both grids splitting C evenly), and GPU loads within the band, with 1 GPU per
#     node and with 3 (a split column on each rank). Every rank's figure: StarPU-MPI's
#     bytes sent per destination, which each rank prints as it stops when
#     STARPU_COMM_STATS=1 is set (stargemm counts with them, and leaves them on stderr
#     when the user asks), summed over the senders; rank 0's must equal the
#     benchmark's mpi_tiles, which is rank 0's own;
#   * loads within the band when K ends with a ragged tile and GPU memory is full, on 1
#     and on 6 GPUs (the ragged tiles are held on the devices, src/execute.c);
#   * on that 6-GPU problem, stargemm-ooc finishes sooner and moves fewer tiles than
#     StarPU's dmdas policy with the same executor (GEMMs on the GPUs only), on the
#     first repetition (0.7193 s and 796 tiles per GPU against 0.7290 s and 977) and on
#     the second, whose device buffers were allocated by the first (0.7136 s and 768
#     against 0.7208 s and 912). What makes it sooner: a GEMM that leaves its A tile to
#     a peer prefetches it 16 tasks ahead (sched/ooc.c). Before the device pool
#     (src/pool.c) the first repetitions took 0.9397 s and 0.9595 s: each device buffer
#     cost a simulated cudaMalloc of 175 us under one lock for all GPUs, and the
#     executor's hold on the device memory its plan does not use (src/execute.c) spared
#     some. The second repetition also checks that the first call gave that memory back;
#     at least 40% of stargemm-ooc's loads come from a peer GPU (44.2%; the bus file of
#     perfmodels/generate.sh gives StarPU a prediction for every GPU pair);
#   * that 6-GPU problem's first repetition at >= 90% of the model's peak (97.0%; 74.2%
#     before the device pool, whose one allocation per GPU replaced a cudaMalloc per
#     device buffer). The ragged K tiles are held from the start of the call, while the
#     devices are still empty (src/execute.c, hold_block()): held when their chunk was
#     inserted, on full devices, their buffers cost frees and allocations on the GPU
#     workers' threads (before the pool);
#   * 2 GPUs in case (c2) (16384^3, 900 MiB, 4 C blocks): at least 98% of the model's
#     peak (99.2%; 96.3% before the device pool; the next block's prefetches rank
#     below the current block's last GEMMs, sched/ooc.c);
#   * with StarPU's eager policy, which gives tasks to any idle worker, the executor's
#     GEMMs still run on the GPU only (inserted for CUDA workers): within 5% of
#     stargemm-ooc's time in case (c1) (0.1567 s both; a GEMM on the CPU core would
#     take ~86 ms, and the C tile's next updates would wait for it);
#   * 4 tile columns on 3 GPUs finish sooner than on 2 (0.0434 s against 0.0457 s):
#     with whole columns per GPU (2, 1, 1) they could not (before the device pool:
#     0.0648 s against 0.0581 s; the last column split in row ranges over the 3 GPUs,
#     0.0565 s);
#   * efficiency in case (c2) on the simulated H100 (tile 2048, 4 GiB): at least 90% of
#     the model's peak (94.2% measured). Simulated time is deterministic, not a timing:
#     this catches a prefetch or release that comes too late (68.8% when a chunk's
#     inputs were marked "won't use" as soon as it was inserted; 88.4% when the next C
#     block was prefetched only once it could run); and its loads within 1% of the
#     model (1280 / 1280; 1.021 before the policy let a GEMM whose inputs are on the
#     GPU go before one still waiting for its copies);
#   * small tiles out of core (2000^3 in tiles of 40, batched within the chunks, one
#     H100 of 12 MiB, case (c2)) run to the end with loads in the band: a batch needs
#     hundreds of buffers at once, and when the finished block's C tiles were written
#     back by idle requests, StarPU served those only after the batch's fetch, which
#     waited for their memory: the run stopped at the first block switch
#     (src/execute.c, release_block()).
set -e
out="$BUILDDIR/tests/sim_ooc.out"
: >"$out"
bench="$BUILDDIR/bench/stargemm_pdgemm"
# Kernels are not executed in simulation: no --check. The peak is the model's.
common="--nb 1024 --niter 1 --warmup 0 --ooc --peak 7200 --csv"

host=summit
run() { # label ncuda limit_mib args...
	label=$1 ncuda=$2 limit=$3
	shift 3
	runnp "$label" 1 "$ncuda" "$limit" "$@"
}

runnp() { # label nodes ncuda limit_mib args...
	label=$1 np=$2 ncuda=$3 limit=$4
	shift 4
	echo "== $label: $np node(s), $ncuda GPU(s) each, GPU memory limit ${limit:-none} MiB" |
		tee -a "$out"
	# On several nodes, each rank's StarPU-MPI byte counts per destination
	# ([starpu_comm_stats][SRC:DST] lines on stderr): what each rank received, as
	# "recv,LABEL,RANK,BYTES" lines of $out.
	stats=
	[ "$np" = 1 ] || stats=1
	err="$BUILDDIR/tests/sim_ooc.err"
	# No early write-back of dirty tiles (StarPU's clean-buffer targets), so that every
	# GPU -> host copy is a C tile leaving its GPU.
	env STARPU_NCPU=1 STARPU_NCUDA="$ncuda" ${limit:+STARPU_LIMIT_CUDA_MEM=$limit} \
		STARPU_MINIMUM_CLEAN_BUFFERS=0 STARPU_TARGET_CLEAN_BUFFERS=0 \
		${stats:+STARPU_COMM_STATS=1} \
		"$SRCDIR/tests/simrun.sh" "$host" "$np" "$bench" $common "$@" 2>"$err" |
		grep -v '^\[starpu_comm' | sed "s/^stargemm,/$label,/" | tee -a "$out"
	grep -v '^\[starpu_comm_stats\]' "$err" | grep -v '^$' >&2 || true
	[ -z "$stats" ] || awk -v label="$label" '
		/^\[starpu_comm_stats\]\[[0-9]+:[0-9]+\]/ {
			s = $0; sub(/^\[starpu_comm_stats\]\[/, "", s)
			split(s, f, /[]:[:space:]]+/)   # SRC, DST, BYTES, "B", ...
			got[f[2]] += f[3]
		}
		END { for (r in got) printf "recv,%s,%d,%.0f\n", label, r, got[r] }' "$err" |
		sort -t, -k3n | tee -a "$out"
	rm -f "$err"
}

# 8 x 8 x 8 tiles of 1024: 64 C tiles, 512 GEMMs.
run a 1 "" --m 8192 --n 8192 --k 8192
run c1 1 900 --m 8192 --n 8192 --k 8192
# StarPU's eager policy, which hands tasks to any idle worker: the executor inserts the
# GEMMs for the GPUs only, so the CPU worker takes none (one would take ~86 ms).
run c1-eager 1 900 --m 8192 --n 8192 --k 8192 --sched eager
run c2 1 420 --m 8192 --n 8192 --k 8192 --lookahead 2 --b 4 --c 4 --d 1
run c2-l1 1 420 --m 8192 --n 8192 --k 8192 --lookahead 1 --b 4 --c 4 --d 1
run d2d 2 "" --m 8192 --n 8192 --k 8192
# 8 x 4 x 8 tiles: 4 C columns, on 2 then 3 GPUs (the 3 GPUs' last column is split).
run split2 2 "" --m 8192 --n 4096 --k 8192
run split3 3 "" --m 8192 --n 4096 --k 8192
# 2 x 1 grid: every A tile is read by one rank, B tiles by both.
runnp mpi 2 1 420 --m 8192 --n 8192 --k 8192 --P 2 --Q 1
# 1 x 2 grid, 3 GPUs per node: 4 local C columns per rank, the last one split over the
# 3 GPUs of its rank; B tiles received over MPI.
runnp mpi3g 2 3 420 --m 8192 --n 8192 --k 8192 --P 1 --Q 2
# K ends with a ragged tile (24 x 1024 + 368), device memory full: its tiles are held
# on the devices (src/execute.c, hold_block); prefetched, they were loaded 1.17x (1 GPU).
run raggedk 1 4000 --m 24576 --n 24576 --k 24944
run raggedk6 6 4000 --m 24576 --n 24576 --k 24944 --peak 43200
run raggedk6-dmdas 6 4000 --m 24576 --n 24576 --k 24944 --peak 43200 --sched dmdas
# The same two, timed on a second repetition: the device buffers are allocated by the
# first.
run raggedk6-warm 6 4000 --m 24576 --n 24576 --k 24944 --peak 43200 --warmup 1
run raggedk6-dmdas-warm 6 4000 --m 24576 --n 24576 --k 24944 --peak 43200 --sched dmdas \
	--warmup 1
# 2 GPUs, 16 x 16 x 16 tiles, 900 MiB each: case (c2), b = c = 8, 4 C blocks (forced:
# the planner's own block, square per GPU, is b = 6 x c = 16, 3 blocks: 768 loads
# instead of 896, 95.5% of the peak).
run c2g2 2 900 --m 16384 --n 16384 --k 16384 --peak 14400 --b 8 --c 8
# One H100 (57 TFLOP/s), 16 x 16 x 16 tiles of 2048, 4 GiB: case (c2), 4 C blocks.
host=h100
run h100 1 4096 --m 32768 --n 32768 --k 32768 --nb 2048 --peak 57000
# Small tiles on the H100 (50 x 50 x 50 tiles of 40 in batches, 12 MiB, 4 C blocks): a
# batch starting a block needs hundreds of buffers at once; with the finished block's
# write-backs queued as idle requests it waited for them and they for it, and the run
# stopped at the first block switch (timeout: no line, "missing runs").
(TEST_TIMEOUT=180; export TEST_TIMEOUT
 run small 1 12 --m 2000 --n 2000 --k 2000 --nb 40 --peak 57000)
host=summit

awk -F, '
	/^impl,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
	/^==/ { next }
	/^recv,/ { recv[$2, $3] = $4; next }
	{
		label = $1; n[label]++
		t[label] = $col["time_s"]; r = $col["loads_ratio"]
		printf "%-6s case %-2s time %8.4f s  loads %s / model %s = %s  d2d %s  d2h %s\n",
			label, $col["case"], t[label], $col["loads"], $col["pred_loads"], r,
			$col["d2d_tiles"], $col["d2h_tiles"]
		want = label; sub(/-l1$/, "", want); sub(/^(d2d|mpi)$/, "", want)
		sub(/^split[23]$/, "a", want); sub(/^mpi3g$/, "c1", want)
		sub(/^(raggedk|h100|c2g2|small)$/, "c2", want); sub(/^c1-eager$/, "c1", want)
		sub(/^raggedk6(-dmdas)?(-warm)?$/, "c1", want)
		ld[label] = $col["loads"]
		ctiles = int(($col["m"] + $col["nb"] - 1) / $col["nb"]) * int(($col["n"] + $col["nb"] - 1) / $col["nb"])
		if (want != "" && $col["case"] != want) { print "  wrong regime"; bad = 1 }
		if (label !~ /dmdas/ && (r < 0.90 || r > 1.05)) {
			print "  loads outside [0.90, 1.05] of the model"; bad = 1
		}
		if (label !~ /dmdas/ && $col["d2h_tiles"] > ctiles) {
			print "  a C tile left its GPU early"; bad = 1
		}
		if (label == "d2d" && $col["d2d_tiles"] <= 0) { print "  no GPU->GPU load"; bad = 1 }
		if (label ~ /^(d2d|split[23]|mpi3g|c2g2|raggedk6)$/ && r > 1.01) {
			print "  loads more than 1% above the model on several GPUs: a tile copied" \
				" twice to a GPU"; bad = 1
		}
		if (label == "raggedk6") {
			share = $col["d2d_tiles"] / ($col["loads"] * 6)
			printf "       GPU<-GPU share %.1f%% (at least 40)\n", 100 * share
			if (share < 0.40) { print "  less than 40% of the loads from a peer"; bad = 1 }
			printf "       %s%% of the model peak (at least 90)\n", $col["pct_peak"]
			if ($col["pct_peak"] < 90) { print "  below 90% of the model peak"; bad = 1 }
		}
		if (label == "c2g2") {
			printf "       %s%% of the model peak (at least 98)\n", $col["pct_peak"]
			if ($col["pct_peak"] < 98) { print "  below 98% of the model peak"; bad = 1 }
		}
		if (label == "h100") {
			printf "       %s%% of the model peak (at least 90)\n", $col["pct_peak"]
			if ($col["pct_peak"] < 90) { print "  below 90% of the model peak"; bad = 1 }
			if (r > 1.01) { print "  loads more than 1% above the model"; bad = 1 }
		}
		if (label ~ /^mpi/) {   # checked at the end, with every rank'"'"'s figure
			ranks[label] = $col["ranks"]; pred[label] = $col["pred_mpi_tiles"]
			mine[label] = $col["mpi_tiles"]
			size = $col["prec"] == "s" ? 4 : $col["prec"] == "z" ? 16 : 8
			tile[label] = $col["nb"] * $col["nb"] * size
		}
	}
	END {
		runs = n["a"] + n["c1"] + n["c2"] + n["c2-l1"] + n["d2d"] + n["raggedk"]
		runs += n["raggedk6"] + n["raggedk6-dmdas"] + n["h100"] + n["split2"] + n["split3"]
		runs += n["raggedk6-warm"] + n["raggedk6-dmdas-warm"] + n["c2g2"] + n["c1-eager"]
		runs += n["small"]
		if (runs != 16 || n["mpi"] < 1 || n["mpi3g"] < 1) {
			print "missing runs"; exit 1
		}
		# Tiles received over MPI, every rank against the model (per rank).
		for (label in ranks) {
			if (ranks[label] < 2) { print label ": not on several ranks"; bad = 1 }
			for (r = 0; r < ranks[label]; r++) {
				if (!((label, r) in recv)) {
					printf "%-6s rank %d: no StarPU-MPI figures\n", label, r; bad = 1
					continue
				}
				got = recv[label, r] / tile[label]; mr = got / pred[label]
				printf "%-6s rank %d: MPI tiles %.1f / model %s = %.3f\n", label, r, got,
					pred[label], mr
				if (mr < 0.90 || mr > 1.05) { print "  MPI tiles outside [0.90, 1.05]"; bad = 1 }
				if (r == 0 && (got - mine[label] > 0.5 || mine[label] - got > 0.5)) {
					printf "  not the benchmark'"'"'s mpi_tiles on rank 0 (%s)\n", mine[label]
					bad = 1
				}
			}
		}
		printf "lookahead 2: %.4f s, lookahead 1: %.4f s (c2): %.1f%% sooner\n", t["c2"],
			t["c2-l1"], 100 * (t["c2-l1"] - t["c2"]) / t["c2-l1"]
		if (!(t["c2"] <= t["c2-l1"])) { print "  lookahead 2 is slower than 1"; bad = 1 }
		printf "6 GPUs, ragged K: stargemm-ooc %.4f s %d loads, dmdas %.4f s %d loads\n",
			t["raggedk6"], ld["raggedk6"], t["raggedk6-dmdas"], ld["raggedk6-dmdas"]
		# Fewer tiles moved than dmdas and sooner, on both repetitions.
		if (!(ld["raggedk6"] < ld["raggedk6-dmdas"])) {
			print "  dmdas moves fewer tiles"; bad = 1
		}
		if (!(t["raggedk6"] < t["raggedk6-dmdas"])) {
			print "  dmdas finishes sooner"; bad = 1
		}
		printf "  second repetition: stargemm-ooc %.4f s %d loads, dmdas %.4f s %d loads\n",
			t["raggedk6-warm"], ld["raggedk6-warm"], t["raggedk6-dmdas-warm"],
			ld["raggedk6-dmdas-warm"]
		if (!(t["raggedk6-warm"] < t["raggedk6-dmdas-warm"])) {
			print "  dmdas finishes sooner on the second repetition"; bad = 1
		}
		if (!(ld["raggedk6-warm"] < ld["raggedk6-dmdas-warm"])) {
			print "  dmdas moves fewer tiles on the second repetition"; bad = 1
		}
		printf "eager policy, GEMMs for the GPU only: %.4f s (stargemm-ooc %.4f s)\n",
			t["c1-eager"], t["c1"]
		if (!(t["c1-eager"] < 1.05 * t["c1"])) {
			print "  a CPU worker ran GEMMs of the out-of-core executor"; bad = 1
		}
		printf "4 columns: 2 GPUs %.4f s, 3 GPUs %.4f s\n", t["split2"], t["split3"]
		if (!(t["split3"] < t["split2"])) {
			print "  3 GPUs are not faster than 2 on 4 columns"; bad = 1
		}
		exit bad
	}' "$out"
echo "simulated out-of-core OK"
