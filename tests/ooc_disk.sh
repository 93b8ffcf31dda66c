#!/bin/sh
# tests/ooc_disk.sh — CPU out-of-core: a RAM budget of about a quarter of the three
# matrices' footprint, StarPU's disk node as the slow memory, ragged sizes. Every
# repetition must pass the residual check and load from disk no more tiles than the
# model predicts (+5%, over 10% is a scheduling bug); the best repetition must be in
# the model's band [0.90, 1.05].
set -e
dir="$BUILDDIR/tests/ooc_disk.dir"
rm -rf "$dir" && mkdir -p "$dir"
out="$BUILDDIR/tests/ooc_disk.out"
# 2000 x 1900 x 2100 doubles: 95 MiB in all; RAM budget 24 MiB.
"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/bench/stargemm_pdgemm" --m 2000 --n 1900 --k 2100 \
	--nb 256 --transB T --niter 3 --warmup 0 --ooc --ram-limit 24 --disk "$dir" \
	--disk-mib 256 --check --csv --peak 10 | tee "$out"
rm -rf "$dir"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$1 == "stargemm" {
		n++; r = $col["loads_ratio"]
		if ($col["check"] != "PASS") { print "residual check failed"; bad = 1 }
		if ($col["case"] != "c2") { print "expected a C-blocked plan (c2)"; bad = 1 }
		if (r > 1.10) { print "loads " r " x the model: more than predicted"; bad = 1 }
		if (best == "" || (r >= 0.90 && r <= 1.05)) best = r
	}
	END {
		if (n != 3) { print "expected 3 rows"; exit 1 }
		if (best < 0.90 || best > 1.05) { print "no repetition in [0.90, 1.05]"; exit 1 }
		exit bad
	}' "$out"
echo "out-of-core on disk OK"
