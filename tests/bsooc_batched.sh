#!/bin/sh
# tests/bsooc_batched.sh — small tiles out of core on the CPU (RAM budget, StarPU's disk
# node), batched within each chunk (src/inspect.c, batch_ooc()), on 1 and 2 ranks:
# 1200 x 1100 x 1300, tiles 20-60, 30% of A's and B's tiles, C the symbolic product.
# Every repetition must pass the residual check against a dense reference (the
# benchmark exits 1 otherwise), run fewer
# tasks than a quarter of its tile products (the progress line counts rank 0's tasks)
# and load from disk no more than 1.10 times the inspector's prediction (A + B + C is
# only about twice the RAM budget here: StarPU keeps tiles the model reloads, 0.5-0.85
# of the prediction); with
# STARGEMM_BATCH_FLOPS=0 (a task per product) the same product is checked as well, so
# both executors' results are compared with the reference on the same problem.
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

run batched1 1
run batched2 2
run unbatched1 1 STARGEMM_BATCH_FLOPS=0
cat "$out"
awk -F, '
	/^impl,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
	/ tasks: / { split($0, w, " "); split(w[3], t, "/"); tasks[w[1]] = t[2] + 0; next }
	NF > 10 {
		label = $1; n[label]++; products[label] = $col["products"]
		r = $col["loads_ratio"]
		if (!($col["residual"] >= 0)) { print label ": no residual"; bad = 1 }
		if (r > 1.10) { print label ": loads " r " x the model: more than predicted"; bad = 1 }
	}
	END {
		if (n["batched1"] != 2 || n["batched2"] != 2 || n["unbatched1"] != 2) {
			print "missing repetitions"; exit 1
		}
		for (l in n)
			printf "%s: %d tasks on rank 0 for %d tile products\n", l, tasks[l], products[l]
		if (!(tasks["batched1"] > 0) || tasks["batched1"] * 4 > products["batched1"]) {
			print "1 rank: not batched"; bad = 1
		}
		if (!(tasks["batched2"] > 0) || tasks["batched2"] * 4 > products["batched2"] / 2) {
			print "2 ranks: not batched"; bad = 1
		}
		if (tasks["unbatched1"] != products["unbatched1"]) {
			print "STARGEMM_BATCH_FLOPS=0: not a task per product"; bad = 1
		}
		exit bad
	}' "$out"
echo "small tiles out of core, batched, OK"
