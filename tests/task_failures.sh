#!/bin/sh
# tests/task_failures.sh — a task that fails in the middle of a product, injected with
# STARGEMM_FAULT=WHAT:RANK:N (src/fault.c): the N-th task insertion on one rank (as when
# StarPU refuses a task or memory runs out), or its N-th GEMM kernel (as when cuBLAS
# returns a bad status), or hands BLAS a call it refuses (its xerbla_ must fail the
# task). Every rank must end — never hang — with the same error, which
# names the failing rank and the cause and says that C is undefined: in core and out
# of core, one task per tile product and batches of small products, on 2 and 4 ranks
# (src/execute.c), the inner dimension split (src/ksplit.c), also with MPI at MPI_THREAD_SERIALIZED. Out of core, with the
# ranks agreeing every ell + 1 chunks
# (STARGEMM_AGREE_FLOPS=0), the product is abandoned early: rank 0's progress line
# stops well short of its tasks. A CPU kernel refused its scratch memory goes on
# without it, with the same result. A bad STARGEMM_FAULT or STARGEMM_AGREE_FLOPS is
# refused, naming it.
bench="$BUILDDIR/bench/stargemm_pdgemm"
out="$BUILDDIR/tests/task_failures.out"
fail() { echo "FAIL: $1"; cat "$out"; exit 1; }

# expect NAME FAULT NP WHAT-FAILED BENCH-ARGS...: every rank fails with the message of
# the failing rank (rank 1, or 0 when FAULT names it), naming WHAT-FAILED.
expect() {
	name=$1 fault=$2 np=$3 cause=$4
	shift 4
	STARGEMM_PROGRESS=force STARGEMM_FAULT=$fault TEST_TIMEOUT=120 \
		"$SRCDIR/tests/mpirun.sh" "$np" "$bench" --niter 1 --warmup 0 --check \
		--peak 1 "$@" >"$out" 2>&1
	status=$?
	[ $status -eq 77 ] && { cat "$out"; exit 77; }
	[ $status -eq 124 ] && fail "$name: hung (killed by the timeout)"
	[ $status -eq 0 ] && fail "$name: the job succeeded"
	victim=$(echo "$fault" | cut -d: -f2)
	r=0
	while [ $r -lt "$np" ]; do
		grep -q "rank $r: stargemm: a task failed on rank $victim (1 rank(s) with failures): .*$cause.*C is undefined" "$out" ||
			fail "$name: rank $r did not report rank $victim's failure ($cause)"
		r=$((r + 1))
	done
	echo "$name: all $np ranks failed with: $(grep -m1 "rank 0: " "$out" | cut -c1-200)"
}

# done_of_total: rank 0's last progress line's "D/T" as "D T".
done_of_total() {
	tr '\r' '\n' <"$out" | grep '^stargemm: .* tasks ' | tail -1 |
		sed 's|^stargemm: *\([0-9]*\)/\([0-9]*\) tasks.*|\1 \2|'
}

# 700 x 650 x 900 in tiles of 128 (ragged): small products, batched in core.
small="--m 700 --n 650 --k 900 --nb 128"
# In tiles of 300, one task per tile product (above the batching size).
large="--m 1300 --n 1250 --k 1400 --nb 300"
ooc="--ooc --b 2 --c 2 --d 1 --lookahead 1"
# A tile product's kernel failing: cblas_dgemm on a CPU worker, cublasDgemm on a GPU.
gemm_fault='c\(u\)\{0,1\}blas_\{0,1\}[dD]gemm: injected fault'

expect "insertion, in core, batches" insert:1:3 2 "a batch of .* (injected by STARGEMM_FAULT)" $small
expect "insertion, in core, tile products" insert:1:5 2 "the update of C(.*) by k=[0-9]* (injected" $large
expect "insertion, in core, 4 ranks" insert:3:2 4 "injected by STARGEMM_FAULT" $large --P 2 --Q 2
expect "insertion, out of core" insert:1:4 2 "the update of C(.*) by k=[0-9]* (injected" $large $ooc
expect "insertion, out of core, rank 0" insert:0:1 2 "injected by STARGEMM_FAULT" $large $ooc
expect "kernel, in core, batches" kernel:1:2 2 "batch of tile products: injected fault" $small
expect "kernel, in core, tile products" kernel:1:2 2 "$gemm_fault" $large
# A call BLAS refuses (lda = 0): its xerbla_ fails the task (codelets/xerbla.c).
expect "BLAS refusal, in core, tile products" blas:1:2 2 "BLAS refused argument 8 of DGEMM" $large
expect "kernel, out of core, 4 ranks" kernel:2:1 4 "$gemm_fault" $large $ooc \
	--P 2 --Q 2
# C of one tile on 2 ranks: the inner dimension split over the ranks (src/ksplit.c).
split="--m 300 --n 200 --k 6000 --nb 300 --transA T --P 2 --Q 1"
expect "insertion, split inner dimension" insert:1:3 2 "injected by STARGEMM_FAULT" $split
expect "insertion, split, the sums" insert:0:21 2 "a sum of partial tiles (injected" $split
expect "kernel, split inner dimension" kernel:1:2 2 "$gemm_fault" $split

# Out of core, 2 ranks, 5 x 5 C tiles of 300 and 5 chunks of k each: a kernel failing
# early on rank 1 stops every rank within a few chunks.
export STARGEMM_AGREE_FLOPS=0
expect "kernel, out of core, abandoned" kernel:1:1 2 "$gemm_fault" \
	--m 1500 --n 1500 --k 1500 --nb 300 $ooc
unset STARGEMM_AGREE_FLOPS
set -- $(done_of_total)
[ $# -eq 2 ] || fail "no progress line on rank 0"
[ $(($1 * 2)) -lt "$2" ] || fail "abandoned product: rank 0 ran $1 of its $2 tasks"
echo "abandoned product: rank 0 ran $1 of its $2 tasks"

# MPI at MPI_THREAD_SERIALIZED (tests/test_ooc_model.c): the ranks do not agree in the
# middle of the product; the ones that did not fail finish it, then every rank reports.
for fault in kernel:1:3 insert:1:7; do
	STARGEMM_FAULT=$fault TEST_TIMEOUT=120 "$SRCDIR/tests/mpirun.sh" 2 \
		"$BUILDDIR/tests/test_ooc_model" 1 2 serialized >"$out" 2>&1
	status=$?
	[ $status -eq 124 ] && fail "serialized MPI, $fault: hung"
	[ $status -eq 0 ] && fail "serialized MPI, $fault: the job succeeded"
	for r in 0 1; do
		grep -q "rank $r: error -5: stargemm: a task failed on rank 1 " "$out" ||
			fail "serialized MPI, $fault: rank $r did not report rank 1's failure"
	done
	echo "serialized MPI, $fault: both ranks failed with rank 1's error"
done

# Scratch memory refused (STARGEMM_FAULT=scratch): a CPU kernel goes on without it.
# Batches of small products with A stored transposed copy each op(A) tile read more
# than once into a table of copies (codelets/batch.c); without the table each product
# copies its tile (codelets/smallgemm.c), and without that copy BLAS takes the tile as
# it is. One CPU worker and no GPU, so that the first allocation is the first batch's
# table: the product succeeds with the residual of --check whichever allocation is
# refused.
bs="$BUILDDIR/bench/stargemm_bsgemm"
for n in 1 2 3 4; do
	STARPU_NCPU=1 STARPU_NCUDA=0 STARGEMM_FAULT=scratch:0:$n TEST_TIMEOUT=120 \
		"$SRCDIR/tests/mpirun.sh" 1 "$bs" --m 700 --n 650 --k 900 --lo 20 --hi 60 \
		--density-a 0.5 --transA T --check --niter 1 --warmup 0 --no-dense --quiet \
		>"$out" 2>&1 ||
		fail "scratch allocation $n refused: the product failed"
	echo "scratch allocation $n refused: $(grep '^stargemm,' "$out" | cut -d, -f17-22)"
done

for bad in insert:x:1 foo:0:1; do
	STARGEMM_FAULT=$bad "$SRCDIR/tests/mpirun.sh" 1 "$bench" --m 100 --n 100 --k 100 \
		--nb 50 --niter 1 --warmup 0 --peak 1 >"$out" 2>&1
	[ $? -ne 0 ] && grep -q "STARGEMM_FAULT='$bad'" "$out" ||
		fail "a bad STARGEMM_FAULT ($bad) was not refused with its name"
	echo "bad STARGEMM_FAULT refused: $(grep -m1 STARGEMM_FAULT "$out")"
done
STARGEMM_AGREE_FLOPS=-1 "$SRCDIR/tests/mpirun.sh" 2 "$bench" --m 300 --n 300 --k 300 \
	--nb 100 --ooc --b 1 --c 1 --d 1 --niter 1 --warmup 0 --peak 1 >"$out" 2>&1
[ $? -ne 0 ] && grep -q "rank 1: .*STARGEMM_AGREE_FLOPS='-1'" "$out" ||
	fail "a bad STARGEMM_AGREE_FLOPS was not refused on every rank with its name"
echo "bad STARGEMM_AGREE_FLOPS refused: $(grep -m1 STARGEMM_AGREE_FLOPS "$out")"
exit 0
