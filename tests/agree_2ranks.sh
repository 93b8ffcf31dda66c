#!/bin/sh
# tests/agree_2ranks.sh — a collective call that fails on one rank only fails on every
# rank, with a message, instead of leaving the others waiting for it. Rank 1 alone gets
# a bad environment setting (as a rank would run out of memory alone):
#   * STARGEMM_PACK_BELOW: the creation of the block-sparse matrices fails on rank 1;
#   * STARGEMM_BATCH_FLOPS: the product fails on rank 1 after its matrices were made.
# Both ranks must end (in well under the timeout) with an error naming the setting,
# rank 0 saying that rank 1 failed (src/collective.c, stargemm__agree()).
bench="$BUILDDIR/bench/stargemm_bsgemm"
out="$BUILDDIR/tests/agree_2ranks.out"
for var in STARGEMM_PACK_BELOW STARGEMM_BATCH_FLOPS; do
	# shellcheck disable=SC2016 # $PMI_RANK and $1 are the launched shell's
	TEST_TIMEOUT=120 "$SRCDIR/tests/mpirun.sh" 2 sh -c \
		'[ "$PMI_RANK" = 1 ] && export "$0=abc"; exec "$@"' "$var" \
		"$bench" --m 300 --n 300 --k 300 --lo 10 --hi 30 --density-a 0.3 \
		--density-b 0.3 --niter 1 --warmup 0 --no-dense >"$out" 2>&1
	status=$?
	[ $status -eq 77 ] && { cat "$out"; exit 77; }
	if [ $status -eq 0 ] || [ $status -eq 124 ]; then
		echo "FAIL: rank 1 with $var=abc: exit status $status (0: accepted, 124: hung)"
		cat "$out"
		exit 1
	fi
	grep -q "rank 1: .*$var='abc'" "$out" ||
		{ echo "FAIL: rank 1 did not name $var"; cat "$out"; exit 1; }
	grep -q "rank 0: stargemm: rank 1 failed.*$var='abc'" "$out" ||
		{ echo "FAIL: rank 0 did not report rank 1's failure"; cat "$out"; exit 1; }
	echo "rank 1 with $var=abc: both ranks failed (status $status)"
done
exit 0
