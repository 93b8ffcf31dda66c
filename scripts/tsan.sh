#!/usr/bin/env bash
# scripts/tsan.sh — ThreadSanitizer on the executor, the stargemm-ooc policy, the
# batches and the packs: small products, checked against the reference, on 1 and 2
# ranks, in core and out of core (a RAM budget that forces several C blocks and chunks,
# so that throttling, holds, releases and block fencing all run), dense and
# block-sparse, plus the randomized calls of tests/random_1rank.sh, matrices used in
# place on the ranks' local arrays, a kernel failing mid-product on one rank, and the
# meter of the loads (tests/test_loads.c).
# StarPU is built instrumented too (scripts/deps.sh tsan): uninstrumented, its own
# locks are invisible and every handover between a worker and the caller is reported.
#
# The verdict: a run fails when a report has one of its two racing accesses in
# stargemm's own code (the first frame outside the sanitizer's interceptors lies in
# src/, codelets/, sched/, bench/ or tests/), or when it fails otherwise. Races with
# both accesses inside StarPU 1.3 are listed, not fatal: StarPU reads some of its state
# without synchronisation on purpose (spinlock words, worker flags polled by workers,
# task lists peeked at before their lock, data states read again under the handle's
# lock), and which of them show up varies from run to run.
#
# The disk node is stargemm's own backend (src/disk.c: one file, pread and pwrite on the
# workers): dense and packed block-sparse products run out of core on it. Not covered:
# StarPU's unistd backend (STARGEMM_DISK_ONE_FILE=0), which uses glibc's POSIX AIO,
# whose helper threads glibc starts itself, and ThreadSanitizer crashes (SIGSEGV in its
# allocator) in them.
#
# UCX (MPICH's transport) hooks madvise() through its memory-event library, which
# crashes under ThreadSanitizer at thread exit; the hooks are turned off (they only
# speed up UCX's registration cache).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${STARGEMM_TSAN_BUILD:-$top/build-tsan}
flags="-g -O1 -fsanitize=thread"

prefix=$("$top/scripts/deps.sh" tsan | tail -n1)
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ] ||
	! grep -q "$prefix" config.log 2>/dev/null; then
	PKG_CONFIG_PATH="$prefix/lib/pkgconfig" "$top/configure" CFLAGS="$flags" \
		LDFLAGS="-fsanitize=thread"
fi
make -j"$(nproc)"
make -j"$(nproc)" tests/test_random tests/test_local tests/test_loads

export STARPU_SILENT=1 OPENBLAS_NUM_THREADS=1
export UCX_MEM_EVENTS=no UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 history_size=4"
mpiexec=${MPIEXEC:-$(command -v mpiexec.mpich)}
export STARPU_HOME="$build/tests/starpu-home-tsan"
mkdir -p "$STARPU_HOME"

# The racing accesses of each report whose first frame outside the interceptors is in
# stargemm's tree (paths relative to the build directory: ../src/...; StarPU's are
# ../../src/...).
ours() {
	awk '/WARNING: ThreadSanitizer/ { n++; access = 0 }
		/ (Read|Write|Atomic read|Atomic write) of size|Previous (read|write|atomic)/ {
			access = 1; next }
		access && /^ +#[0-9]+ / {
			if ($3 ~ /libsanitizer/) next
			if ($3 ~ /^\.\.\/(src|codelets|sched|bench|tests)\//) {
				print "report " n ": " $2 " " $3; bad = 1 }
			access = 0 }
		END { exit bad ? 0 : 1 }' "$1"
}

# run NAME NP PROGRAM ARGS...: one case, under a timeout. With $expect set, the case
# must fail with a message containing it (an injected fault).
run() {
	local name=$1 np=$2 log="$build/tests/tsan-$1.log" status=0 reports=0 f
	shift 2
	rm -f "$log" "$log".tsan.*
	# Each process's reports in a file of its own (log_path.PID): interleaved in one
	# stream, the ranks' stacks would mix.
	timeout 600 "$mpiexec" -n "$np" env STARPU_NCPU=$((np > 1 ? 1 : 2)) \
		TSAN_OPTIONS="$TSAN_OPTIONS log_path=$log.tsan" "$@" >"$log" 2>&1 || status=$?
	for f in "$log".tsan.*; do
		[ -f "$f" ] || continue
		reports=$((reports + $(grep -c "WARNING: ThreadSanitizer" "$f" || true)))
		if ours "$f"; then
			echo "tsan.sh: $name: a race in stargemm's code (reports: $f)"
			exit 1
		fi
	done
	if [ -n "${expect:-}" ]; then
		if [ $status -eq 0 ] || [ $status -eq 124 ] || ! grep -q "$expect" "$log"; then
			tail -n 40 "$log"
			echo "tsan.sh: $name: expected a failure saying '$expect' (status $status)"
			exit 1
		fi
		status=0
	fi
	# 66: ThreadSanitizer's exit status when it reported (only StarPU's races here).
	if [ $status -ne 0 ] && [ $status -ne 66 ]; then
		tail -n 40 "$log"
		echo "tsan.sh: $name failed with status $status (log: $log)"
		exit 1
	fi
	echo "tsan.sh: $name: no race in stargemm's code ($reports inside StarPU)"
}

dense=(--m 600 --n 550 --k 630 --nb 64 --niter 2 --warmup 0 --check)
ooc=(--ooc --ram-limit 12 --b 2 --c 2 --d 2)
sparse=(--m 400 --n 380 --k 420 --lo 5 --hi 40 --density-a 0.3 --density-b 0.4 --niter 2
	--warmup 0 --check --no-dense)
run dense-1rank 1 bench/stargemm_pdgemm "${dense[@]}"
run dense-ooc-1rank 1 bench/stargemm_pdgemm "${dense[@]}" "${ooc[@]}"
run dense-ooc-2ranks 2 bench/stargemm_pdgemm "${dense[@]}" "${ooc[@]}" --P 1 --Q 2
run sparse-packs-1rank 1 bench/stargemm_bsgemm "${sparse[@]}"
run sparse-packs-2ranks 2 bench/stargemm_bsgemm "${sparse[@]}"
run sparse-ooc-2ranks 2 bench/stargemm_bsgemm "${sparse[@]}" --ooc --ram-limit 8
mkdir -p "$build/tests/tsan-disk"
disk=(--disk "$build/tests/tsan-disk" --disk-mib 256)
run dense-disk-1rank 1 bench/stargemm_pdgemm "${dense[@]}" "${ooc[@]}" "${disk[@]}"
run sparse-disk-1rank 1 bench/stargemm_bsgemm "${sparse[@]}" --ooc --ram-limit 8 "${disk[@]}"
run random-1rank 1 tests/test_random 1 1 1 500
# The stationary choice: the network measured by StarPU-MPI messages whose callbacks
# count down (src/network.c), then op(A) kept in place (src/ksplit.c).
run stationary-3ranks 3 bench/stargemm_bsgemm --m 3000 --n 100 --k 3000 --lo 100 --hi 100 \
	--density-a 0.2 --density-b 1 --P 1 --Q 3 --niter 1 --warmup 0 --check --no-dense
# Matrices on the ranks' local arrays, used in place.
run local-2ranks 2 tests/test_local 1 2
# The meter of the loads (src/loads.c): pumped from this thread and StarPU's.
run loads 1 tests/test_loads
# A kernel failing on rank 1 mid-product, out of core (src/fault.c): the failure
# recorded from a worker, the ranks' agreement between chunks, every rank's stop.
expect="a task failed on rank 1" run dense-ooc-fault-2ranks 2 env STARGEMM_FAULT=kernel:1:3 \
	STARGEMM_AGREE_FLOPS=0 bench/stargemm_pdgemm "${dense[@]}" "${ooc[@]}" --P 1 --Q 2
echo "tsan.sh: no data race in stargemm's code"
