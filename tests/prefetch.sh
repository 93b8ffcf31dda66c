#!/bin/sh
# tests/prefetch.sh — the CPU batch's prefetches of the next product's tiles are in the
# built library (codelets/batch.c, prefetch_item()): batch_cpu() holds prefetch
# instructions. A prefetch changes no result, so no product test sees it go; and GCC
# drops the calls of a static function that only prefetches (no side effect), which is
# how the first version of it lost them without a warning. x86-64 only (the
# instruction's name), with objdump and the library's symbols; exits 77 otherwise.
lib="$BUILDDIR/.libs/libstargemm.so"
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: not x86-64 ($(uname -m))"; exit 77; }
command -v objdump >/dev/null 2>&1 || { echo "SKIP: no objdump"; exit 77; }
[ -r "$lib" ] || { echo "SKIP: no shared library at $lib"; exit 77; }
code=$(objdump -d --no-show-raw-insn "$lib" | awk '/^[0-9a-f]+ <batch_cpu>:$/ {on = 1; next}
	on && /^$/ {exit} on {print}')
[ -n "$code" ] || { echo "SKIP: no symbol batch_cpu in $lib (stripped?)"; exit 77; }
n=$(printf '%s\n' "$code" | grep -c 'prefetch')
echo "batch_cpu: $n prefetch instructions"
[ "$n" -gt 0 ] || { echo "FAIL: batch_cpu() prefetches nothing (codelets/batch.c, prefetch_item())"; exit 1; }
echo "the CPU batch prefetches the next product's tiles: OK"
