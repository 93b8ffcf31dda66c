#!/usr/bin/env bash
# scripts/quickstart.sh — from a fresh Debian 12 machine to a checked stargemm run.
#
#   scripts/quickstart.sh          install what is missing, build, run the dense PDGEMM
#                                  benchmark beside OpenBLAS and ScaLAPACK (checked)
#   scripts/quickstart.sh check    install what is missing, build, run `make check`, then
#                                  build against StarPU's SimGrid flavour (build-sim/)
#                                  and run the simulated GPU tests there
#
# Dependencies come from scripts/deps.sh (Debian packages + StarPU built from Debian's
# source package, cached in ~/.cache/stargemm). The build is out of tree, in
# $STARGEMM_BUILD (default: build/ at the top of the source tree).
set -euo pipefail

mode=${1:-bench}
top=$(cd "$(dirname "$0")/.." && pwd)
build=${STARGEMM_BUILD:-$top/build}

prefix=$("$top/scripts/deps.sh" native | tail -n1)
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
	[ "$top/Makefile.am" -nt "$top/Makefile.in" ]; then
	(cd "$top" && mkdir -p m4 && autoreconf -fi)
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ] ||
	! grep -q "$prefix" config.log 2>/dev/null; then
	"$top/configure" --prefix="${STARGEMM_PREFIX:-$HOME/.local}"
fi
make -j"$(nproc)"

# The simulated build: the same sources against StarPU's SimGrid flavour (simulated
# CUDA workers, SMPI), for the tests of the GPU logic without a GPU.
build_simulated() {
	local sim_prefix sim_build=${STARGEMM_SIM_BUILD:-$top/build-sim}

	sim_prefix=$("$top/scripts/deps.sh" simgrid | tail -n1)
	mkdir -p "$sim_build"
	cd "$sim_build"
	if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ] ||
		! grep -q "$sim_prefix" config.log 2>/dev/null; then
		# smpicc-built programs only run under smpirun: configure must not try.
		SMPI_PRETEND_CC=1 PKG_CONFIG_PATH="$sim_prefix/lib/pkgconfig" CC=smpicc LD=ld \
			"$top/configure" --disable-shared --enable-static
	fi
	make -j"$(nproc)"
}

case "$mode" in
check)
	make check
	build_simulated
	make check
	;;
bench)
	cores=$(nproc)
	# About 137 GFLOP per GEMM up to 4 cores: a few seconds per repetition.
	n=4096
	[ "$cores" -le 4 ] || n=8192
	STARGEMM_BENCH="$build/bench/stargemm_pdgemm" "$top/bench/compare.sh" -- \
		--m $n --n $n --k $n --niter 3 --warmup 1 --check
	;;
*)
	echo "usage: $0 [check]" >&2
	exit 2
	;;
esac
