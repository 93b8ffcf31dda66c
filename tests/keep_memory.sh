#!/bin/sh
# tests/keep_memory.sh — stargemm_init() keeps freed memory for reuse (src/runtime.c,
# keep_memory()): after it, allocations of 1 MiB come from glibc's heap, not each from
# a mapping of its own (test_keep_memory), unless STARGEMM_KEEP_MEMORY=0 or the user
# set glibc's malloc tunables (GLIBC_TUNABLES or MALLOC_MMAP_THRESHOLD_), which it
# leaves alone. A bad STARGEMM_KEEP_MEMORY is refused in tests/bsgemm_bench.sh.
export STARPU_HOME="${STARPU_HOME:-$BUILDDIR/tests/starpu-home}" STARPU_FXT_TRACE=0 STARPU_SILENT=1
mkdir -p "$STARPU_HOME"
prog="$BUILDDIR/tests/test_keep_memory"
# case NAME EXPECTED [VAR=VALUE...]: the count of mapped blocks in that environment.
case_() {
	name=$1 want=$2
	shift 2
	status=0
	got=$(env "$@" timeout 120 "$SRCDIR/tests/mpirun.sh" 1 "$prog") || status=$?
	[ $status -eq 77 ] && { echo "$got"; exit 77; }
	[ $status -eq 0 ] || { echo "FAIL: $name: test_keep_memory failed ($status)"; exit 1; }
	echo "$name: $got"
	[ "$got" = "mapped $want of 8" ] || { echo "FAIL: $name: expected $want of 8 mapped"; exit 1; }
}
case_ "kept (default)" 0 X=1
case_ "STARGEMM_KEEP_MEMORY=0" 8 STARGEMM_KEEP_MEMORY=0
case_ "GLIBC_TUNABLES set by the user" 8 GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456
case_ "MALLOC_MMAP_THRESHOLD_=65536 set by the user" 8 MALLOC_MMAP_THRESHOLD_=65536
echo "freed memory kept unless the user says otherwise: OK"
