#!/bin/sh
# tests/bsooc_batched.sh — small tiles out of core on the CPU (RAM budget, StarPU's disk
# node): 1200 x 1100 x 1300, tiles 20-60, 30% of A's and B's tiles, C the symbolic
# product. By default such matrices are packed (src/pack.c) and the product is planned
# over packs (src/packlist.c), on 1 and 2 ranks; with STARGEMM_PACK_BELOW=0 every tile
# keeps its handle and the products are batched within each chunk (src/inspect.c,
# batch_ooc()), and with STARGEMM_BATCH_FLOPS=0 as well they run a task per product.
# Every repetition must pass the residual check against a dense reference (the
# benchmark exits 1 otherwise), so the three executors' results are compared with the
# reference on the same problem. The batched runs must run fewer tasks than a quarter
# of their tile products (the progress line counts rank 0's tasks), the packed ones
# must be predicted to load fewer than half the tiles the unpacked run loads (packs
# move whole; with 8 MiB of RAM groups are cut at 128 elements, src/matrix.c: 386
# packs against 1123 tiles), and no run may load from disk more than 1.10 times the
# inspector's prediction (A + B + C is only about twice the RAM budget here: StarPU
# keeps tiles the model reloads, 0.3-0.85 of the prediction). The policy prefetches a
# batch's tiles into RAM from the disk node when the batch becomes ready (sched/ooc.c,
# class ALL): with a handle per tile on 1 rank and two CPU workers, at most an eighth
# of the batches may be taken with an input neither in RAM nor on its way (the
# benchmark's unprefetched column; measured 6-9 of 128 per repetition, and 26-35
# without that prefetch), and every run counts its out-of-core tasks, the same number
# in each repetition (the counters restart at stargemm_transfers_reset()).
set -e
out="$BUILDDIR/tests/bsooc_batched.out"
: >"$out"
bench="$BUILDDIR/bench/stargemm_bsgemm"
problem="--m 1200 --n 1100 --k 1300 --lo 20 --hi 60 --density-a 0.3 --density-b 0.3"

run() { # label ranks [env...]
	label=$1 np=$2
	shift 2
	dir="$BUILDDIR/tests/bsooc_batched.$label.dir"
	# Names that make clean removes (tests/*.out, tests/*.err): make distcheck fails on
	# files left in the build tree.
	csv="$BUILDDIR/tests/bsooc_batched.$label.out" err="$BUILDDIR/tests/bsooc_batched.$label.err"
	rm -rf "$dir" && mkdir -p "$dir"
	# shellcheck disable=SC2086
	if ! env STARGEMM_PROGRESS=force "$@" "$SRCDIR/tests/mpirun.sh" "$np" "$bench" $problem \
		--niter 2 --warmup 0 --ooc --ram-limit 8 --disk "$dir" --check --csv \
		>"$csv" 2>"$err"; then
		echo "$label: the benchmark failed (a residual above its bound exits 1)"
		cat "$csv" "$err"
		exit 1
	fi
	sed "s/^stargemm,/$label,/" "$csv" >>"$out"
	tr '\r' '\n' <"$err" | grep '^stargemm: .* tasks' | tail -n 1 |
		sed "s/^stargemm:/$label tasks:/" >>"$out"
	rm -rf "$dir"
}

run packed1 1
run packed2 2
run batched1 1 STARGEMM_PACK_BELOW=0 STARPU_NCPU=2
run unbatched1 1 STARGEMM_PACK_BELOW=0 STARGEMM_BATCH_FLOPS=0
cat "$out"
awk -F, '
	/^impl,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
	/ tasks: / { split($0, w, " "); split(w[3], t, "/"); tasks[w[1]] = t[2] + 0; next }
	NF > 10 {
		label = $1; n[label]++; products[label] = $col["products"]
		pred[label] = $col["pred_loads"]
		r = $col["loads_ratio"]
		if (!($col["residual"] >= 0)) { print label ": no residual"; bad = 1 }
		if (r > 1.10) { print label ": loads " r " x the model: more than predicted"; bad = 1 }
		ooc = $col["ooc_tasks"]; late = $col["unprefetched"]
		if (!(ooc > 0) || late > ooc) {
			print label ": " late " of " ooc " out-of-core tasks unprefetched"; bad = 1
		}
		if ((label in prev_tasks) && ooc != prev_tasks[label]) {
			print label ": " ooc " out-of-core tasks, " prev_tasks[label] " in the previous " \
			      "repetition: not counted from the reset"; bad = 1
		}
		prev_tasks[label] = ooc
		if (label == "batched1" && late * 8 > ooc) {
			print label ": " late " of " ooc " batches taken with an input not " \
			      "prefetched (at most an eighth)"; bad = 1
		}
	}
	END {
		if (n["packed1"] != 2 || n["packed2"] != 2 || n["batched1"] != 2 ||
		    n["unbatched1"] != 2) {
			print "missing repetitions"; exit 1
		}
		for (l in n)
			printf "%s: %d tasks on rank 0 for %d tile products, %g loads predicted\n",
			       l, tasks[l], products[l], pred[l]
		if (!(tasks["packed1"] > 0) || tasks["packed1"] * 4 > products["packed1"]) {
			print "packed, 1 rank: not batched"; bad = 1
		}
		if (!(tasks["packed2"] > 0) || tasks["packed2"] * 4 > products["packed2"] / 2) {
			print "packed, 2 ranks: not batched"; bad = 1
		}
		if (!(tasks["batched1"] > 0) || tasks["batched1"] * 4 > products["batched1"]) {
			print "STARGEMM_PACK_BELOW=0: not batched"; bad = 1
		}
		if (!(pred["packed1"] > 0) || pred["packed1"] * 2 > pred["batched1"]) {
			print "packed: not planned over packs (" pred["packed1"] " loads against " \
			      pred["batched1"] " with a handle per tile)"; bad = 1
		}
		if (tasks["unbatched1"] != products["unbatched1"]) {
			print "STARGEMM_BATCH_FLOPS=0: not a task per product"; bad = 1
		}
		exit bad
	}' "$out"
echo "small tiles out of core, batched, OK"
