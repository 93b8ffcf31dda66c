#!/bin/sh
# tests/faults.sh — faults a user meets, each ending fast with a message naming the
# cause, never a hang (every case runs under a timeout; status 124 = hung = failure):
#   * the disk node too small for the data (StarPU 1.3 would wait for room forever);
#   * a RAM budget, no disk node, and matrices larger than it;
#   * matrices that fit, but not with the tiles a product receives from another rank;
#   * a RAM budget below any out-of-core plan;
#   * the disk node's directory missing, or not writable (a directory of mode 555;
#     as root, which may write there anyway, a read-only file system such as
#     /proc/sys, or the step is skipped, saying so);
#   * a disk node larger than its file system (on /dev/shm, or skipped, saying so);
#   * a rank killed with SIGKILL in the middle of a product, rank 1 then rank 0: the
#     job must end within KILL_LIMIT seconds with the launcher naming the signal.
bench="$BUILDDIR/bench/stargemm_pdgemm"
out="$BUILDDIR/tests/faults.out"
dir="$BUILDDIR/tests/faults.dir"
KILL_LIMIT=30
rm -rf "$dir" && mkdir -p "$dir"
fail() { echo "FAIL: $1"; cat "$out"; rm -rf "$dir"; exit 1; }

# expect NAME NEEDLE NP BENCH-ARGS...: the run fails (not hangs) and says NEEDLE.
expect() {
	name=$1 needle=$2 np=$3
	shift 3
	TEST_TIMEOUT=120 "$SRCDIR/tests/mpirun.sh" "$np" "$bench" --m 2000 --n 2000 --k 2000 \
		--nb 256 --niter 1 --warmup 0 "$@" >"$out" 2>&1
	status=$?
	[ $status -eq 77 ] && { cat "$out"; exit 77; }
	[ $status -eq 124 ] && fail "$name: hung (killed by the timeout)"
	[ $status -eq 0 ] && fail "$name: accepted"
	grep -q "$needle" "$out" || fail "$name: no message saying '$needle'"
	echo "$name: refused (status $status): $(grep -m1 "$needle" "$out")"
}

# Three 2000 x 2000 matrices (the benchmark's A, B, C): 91.6 MiB.
expect "disk node too small" "16.0 MiB of disk node (disk_mib)" 1 \
	--ooc --ram-limit 24 --disk "$dir" --disk-mib 16
expect "RAM budget without disk node" "RAM budget of 24.0 MiB (ram_limit_mib)" 1 \
	--ram-limit 24
# 45.8 MiB per rank fit in 50, not with the 15.3 MiB of A the product receives.
expect "received tiles beyond the budget" "tiles the product receives" 2 \
	--P 1 --Q 2 --ram-limit 50
expect "RAM budget below any plan" "cannot hold one tile" 1 \
	--ooc --ram-limit 1 --disk "$dir" --disk-mib 256
expect "missing disk directory" "is not an existing directory" 1 \
	--ooc --ram-limit 24 --disk "$dir/missing" --disk-mib 256
mkdir -p "$dir/readonly" && chmod 555 "$dir/readonly"
readonly_dir="$dir/readonly"
[ -w "$readonly_dir" ] && readonly_dir=/proc/sys
if [ -d "$readonly_dir" ] && [ ! -w "$readonly_dir" ]; then
	expect "read-only disk directory" "is not writable" 1 \
		--ooc --ram-limit 24 --disk "$readonly_dir" --disk-mib 256
else
	echo "SKIP: read-only disk directory: no directory this user cannot write to"
fi
chmod 755 "$dir/readonly"
# A disk node larger than its file system: refused when stargemm_init() reserves its
# space, not found full mid-product. Tried on /dev/shm when it is a tmpfs with a size
# (tmpfs refuses a reservation beyond its size at once, without allocating; on a disk
# file system the reservation would first take every free block).
shm_kib=$(df -k --output=size /dev/shm 2>/dev/null | tail -n1 | tr -d ' ')
shm_dir=/dev/shm/stargemm-faults.$$
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ "${shm_kib:-0}" -gt 0 ] &&
	mkdir -p "$shm_dir"; then
	expect "disk node beyond its file system" "have that much free space" 1 \
		--ooc --ram-limit 24 --disk "$shm_dir" --disk-mib $((shm_kib / 1024 + 1024))
	rmdir "$shm_dir"
else
	echo "SKIP: disk node beyond its file system: /dev/shm is not a sized tmpfs"
fi
rm -rf "$dir"

# kill_rank R: SIGKILL rank R once the product runs; the job must end, fast, failed.
kill_rank() {
	victim=$1
	rm -f "$BUILDDIR"/tests/faults.pid.*
	# shellcheck disable=SC2016 # $$, $PMI_RANK and $@ are the launched shell's
	TEST_TIMEOUT=300 "$SRCDIR/tests/mpirun.sh" 2 sh -c \
		'echo $$ >"$0.$PMI_RANK"; exec "$@"' "$BUILDDIR/tests/faults.pid" \
		"$bench" --m 3000 --n 3000 --k 3000 --nb 512 --P 1 --Q 2 --niter 100 \
		--warmup 0 >"$out" 2>&1 &
	job=$!
	# The first repetition's CSV line says the product is running.
	waited=0
	until grep -q '^stargemm,' "$out" 2>/dev/null; do
		sleep 1
		waited=$((waited + 1))
		[ $waited -lt 240 ] || { kill $job; fail "the product did not start"; }
		kill -0 $job 2>/dev/null || { wait $job; [ $? -eq 77 ] && exit 77; fail "ended early"; }
	done
	start=$(date +%s)
	kill -9 "$(cat "$BUILDDIR/tests/faults.pid.$victim")"
	wait $job
	status=$?
	took=$(($(date +%s) - start))
	[ $status -eq 0 ] && fail "rank $victim killed, yet the job succeeded"
	[ $status -eq 124 ] && fail "rank $victim killed: the job hung"
	[ $took -le $KILL_LIMIT ] || fail "rank $victim killed: the job took $took s to end"
	grep -qi "signal 9\|killed" "$out" || fail "rank $victim killed: nothing names the signal"
	echo "rank $victim killed: the job ended in $took s (status $status): " \
		"$(grep -m1 -i "signal 9\|killed" "$out")"
}
kill_rank 1
kill_rank 0
rm -f "$BUILDDIR"/tests/faults.pid.*
exit 0
