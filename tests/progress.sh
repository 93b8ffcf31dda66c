#!/bin/sh
# tests/progress.sh — the progress line (stargemm_set_progress(), src/progress.c) as the
# benchmarks show it. stderr is a file here, not a terminal, so the line is forced with
# STARGEMM_PROGRESS=force. Checks: one line per repetition on rank 0 only, ending in
# "N/N tasks" with N rank 0's tasks (in core and out of core, 1 and 2 ranks), and a
# newline; a block-sparse product's line ends complete too; nothing with --quiet, nothing
# without the variable (stderr not a terminal), nothing from a program that did not ask
# (the library's default); a bad STARGEMM_PROGRESS is refused, naming it.
# Usage (from make check): BUILDDIR=... SRCDIR=... MPIEXEC=... tests/progress.sh
set -e
out="$BUILDDIR/tests/progress.out"
err="$out.err"
lines="$BUILDDIR/tests/progress-lines.out"
pdgemm="$BUILDDIR/bench/stargemm_pdgemm"
bsgemm="$BUILDDIR/bench/stargemm_bsgemm"
: >"$out"
# 512^3 in tiles of 256: 2 x 2 C tiles, 2 steps of k, 8 tile products (too large to be
# batched); on a 2 x 1 grid rank 0 owns one tile row, 4 products.
small="--m 512 --n 512 --k 512 --nb 256 --peak 10"

# The progress lines of file $1, one per line ('\r' starts an update).
updates() {
	tr '\r' '\n' <"$1" | grep '^stargemm: .* tasks ' || true
}

# The completed lines of file $1: the last update before each newline.
finals() {
	awk '{ n = split($0, part, "\r"); if (part[n] ~ /^stargemm: .* tasks /) print part[n] }' "$1"
}

# expect NAME RANKS COUNT REPS PROGRAM ARGS...: REPS completed lines, each "COUNT/COUNT".
expect() {
	name=$1 np=$2 count=$3 reps=$4
	shift 4
	STARGEMM_PROGRESS=force "$SRCDIR/tests/mpirun.sh" "$np" "$@" >>"$out" 2>"$err"
	finals "$err" >"$lines"
	got=$(wc -l <"$lines")
	if [ "$got" -ne "$reps" ]; then
		echo "$name: $got completed progress lines, expected $reps (one per repetition, rank 0 only)"
		cat "$err"; exit 1
	fi
	if grep -v "^stargemm: *$count/$count tasks " "$lines"; then
		echo "$name: a progress line does not end at $count/$count tasks"; exit 1
	fi
	echo "$name: $(tail -n1 "$lines")"
}

# shellcheck disable=SC2086 # $small is a list of options
expect "1 rank, in core" 1 8 3 "$pdgemm" $small --niter 2 --warmup 1
# shellcheck disable=SC2086
expect "1 rank, out of core" 1 8 1 "$pdgemm" $small --niter 1 --warmup 0 --ooc
# shellcheck disable=SC2086
expect "2 ranks, in core" 2 4 2 "$pdgemm" $small --niter 1 --warmup 1
# shellcheck disable=SC2086
expect "2 ranks, out of core" 2 4 1 "$pdgemm" $small --niter 1 --warmup 0 --ooc --d 1

# Block-sparse, small tiles (batched or packed): the count is the batches'; the line
# ends complete.
STARGEMM_PROGRESS=force "$SRCDIR/tests/mpirun.sh" 1 "$bsgemm" --m 300 --n 250 --k 280 \
	--lo 5 --hi 40 --density-a 0.5 --density-b 0.5 --niter 1 --warmup 0 --no-dense \
	>>"$out" 2>"$err"
line=$(finals "$err")
echo "block-sparse: $line"
echo "$line" | awk '{ split($2, c, "/"); if (!(c[1] > 0 && c[1] == c[2])) exit 1 }' ||
	{ echo "block-sparse: no complete progress line"; cat "$err"; exit 1; }

# Nothing printed: --quiet (both benchmarks), stderr not a terminal, the library's
# default (a program that never calls stargemm_set_progress()), in and out of core.
silent() {
	name=$1
	shift
	"$@" >>"$out" 2>"$err"
	if [ -n "$(updates "$err")" ]; then
		echo "$name: a progress line was printed"; cat "$err"; exit 1
	fi
	echo "$name: nothing printed"
}
# shellcheck disable=SC2086
silent "--quiet" env STARGEMM_PROGRESS=force "$SRCDIR/tests/mpirun.sh" 1 "$pdgemm" \
	$small --niter 1 --warmup 0 --quiet
silent "stargemm_bsgemm --quiet" env STARGEMM_PROGRESS=force "$SRCDIR/tests/mpirun.sh" 1 \
	"$bsgemm" --m 300 --n 250 --k 280 --niter 1 --warmup 0 --no-dense --quiet
# shellcheck disable=SC2086
silent "stderr not a terminal" "$SRCDIR/tests/mpirun.sh" 2 "$pdgemm" $small --niter 1 \
	--warmup 0
silent "library default, in core" env STARGEMM_PROGRESS=force "$SRCDIR/tests/mpirun.sh" 1 \
	"$BUILDDIR/tests/test_pdgemm" 1 1
silent "library default, out of core" env STARGEMM_PROGRESS=force \
	"$SRCDIR/tests/mpirun.sh" 1 "$BUILDDIR/tests/test_pdgemm" 1 1 ooc

# A bad value is refused before anything runs, naming the variable.
for bench in "$pdgemm" "$bsgemm"; do
	if STARGEMM_PROGRESS=yes "$bench" --niter 1 --warmup 0 >/dev/null 2>"$err"; then
		echo "$bench accepted STARGEMM_PROGRESS=yes"; exit 1
	fi
	grep -q "STARGEMM_PROGRESS='yes': expected 'force'" "$err" ||
		{ echo "no clear error for STARGEMM_PROGRESS=yes"; cat "$err"; exit 1; }
done
rm -f "$err" "$lines"
echo "progress line OK"
