#!/bin/sh
# scripts/gpu_bundle.sh — pack a native CUDA build of stargemm into one compressed file
# that runs on a bare GPU machine which has the NVIDIA driver and the CUDA toolkit but
# none of stargemm's other dependencies and no network (the GPU machines lent to this
# project). The file holds the dense and block-sparse benchmarks, the GEMM tests, MPICH's
# launcher, every shared
# library they load except glibc's and CUDA's, and scripts/gpu_check.sh, which runs the
# GPU checks there.
#
# Usage: scripts/gpu_bundle.sh [BUILDDIR [OUTFILE]]
#   BUILDDIR  a configured and built native tree with CUDA (default: build)
#   OUTFILE   default: gpu-bundle/stargemm-gpu.tar.xz (gpu-bundle/ is git-ignored)
# On the GPU machine: tar xJf stargemm-gpu.tar.xz -C /tmp && /tmp/stargemm-gpu/gpu_check.sh
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
outfile=${2:-$top/gpu-bundle/stargemm-gpu.tar.xz}
grep -q '^#define HAVE_GPU_PEERS 1' "$build/config.h" ||
	{ echo "gpu_bundle.sh: $build is not a CUDA build with the cuBLAS peers" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
dest=$stage/stargemm-gpu
mkdir -p "$dest/bin" "$dest/lib" "$dest/bench" "$dest/tests"

# Real executables (not libtool's wrappers).
for p in bench/stargemm_pdgemm bench/stargemm_bsgemm tests/test_pdgemm tests/test_ooc_model \
	tests/test_bsgemm tests/test_bsfilter; do
	exe="$build/$(dirname "$p")/.libs/$(basename "$p")"
	[ -x "$exe" ] || exe="$build/$p"
	cp "$exe" "$dest/bin/"
done
hydra=$(command -v mpiexec.hydra || command -v mpiexec.mpich || true)
[ -n "$hydra" ] && cp "$(readlink -f "$hydra")" "$dest/bin/mpiexec"
# hydra starts each rank through its proxy, looked for beside mpiexec
proxy=$(command -v hydra_pmi_proxy || true)
[ -n "$proxy" ] && cp "$(readlink -f "$proxy")" "$dest/bin/"

# Shared libraries: everything ldd resolves, but the C library's and CUDA's, which the
# GPU machine has in versions matching its driver.
skip='^(ld-linux|libc|libm|libdl|libpthread|librt|libutil|libresolv|libcuda|libcublas|libcublasLt|libcudart|libcusparse|libnvJitLink|libnvidia-)\.so'
for exe in "$dest"/bin/* "$build"/.libs/libstargemm.so.0; do
	ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r soname path; do
	echo "$soname" | grep -Eq "$skip" && continue
	cp -L "$path" "$dest/lib/$soname"
done
cp -L "$build/.libs/libstargemm.so.0" "$dest/lib/"
strip --strip-unneeded "$dest"/lib/*.so* "$dest"/bin/* 2>/dev/null || true

cp "$top/bench/compare_gpu.sh" "$dest/bench/"
cp "$top/scripts/gpu_check.sh" "$dest/"
chmod +x "$dest/gpu_check.sh" "$dest/bench/compare_gpu.sh"
(cd "$top" && git describe --always --dirty 2>/dev/null || echo unknown) >"$dest/COMMIT"

mkdir -p "$(dirname "$outfile")"
tar -C "$stage" -cJf "$outfile" stargemm-gpu
echo "gpu_bundle.sh: $outfile ($(du -h "$outfile" | cut -f1)), commit $(cat "$dest/COMMIT")"
