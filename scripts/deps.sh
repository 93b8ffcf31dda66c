#!/usr/bin/env bash
# scripts/deps.sh — install and build everything stargemm needs, from Debian only.
#
# Usage: scripts/deps.sh [native|simgrid|tsan]      (default: native)
# Prints, as its last line of output, the StarPU install prefix to use.
#
# Why a script: Debian's binary libstarpu-dev is built on Open MPI, without FxT and
# without CUDA, so stargemm builds StarPU 1.3.10 itself from Debian's source package,
# on MPICH, with FxT, and with CUDA + cuBLAS when nvcc is present (CUDA 13 needs the
# small compatibility patch kept next to this script). The result is cached outside the
# work tree, under $STARGEMM_CACHE (default ~/.cache/stargemm), in a directory whose name
# carries the version, the flavour and a hash of the patch and the configure flags: an
# unchanged recipe reuses the cache, a changed one builds anew.
#
# Flavours:
#   native   StarPU-MPI (MPICH) + FxT (+ CUDA when /usr/local/cuda/bin/nvcc exists).
#   simgrid  StarPU in SimGrid simulation mode (simulated CUDA workers, SMPI for MPI,
#            static libraries), for the tests of the GPU scheduling logic on machines
#            without a GPU.
#   tsan     StarPU-MPI (MPICH) built with -fsanitize=thread, no CUDA, for the
#            ThreadSanitizer checks of scripts/tsan.sh.
set -euo pipefail

flavour=${1:-native}
here=$(cd "$(dirname "$0")" && pwd)
cache=${STARGEMM_CACHE:-$HOME/.cache/stargemm}
starpu_version=1.3.10
patch_file=$here/starpu-$starpu_version-cuda13.patch
# Simulation only: StarPU-MPI waits for each MPI request in a SimGrid actor that nobody
# joins, and StarPU kept a reference to it, so every ended actor and its stack stayed
# for the whole run (6 GiB for a 2 x 2 grid at N = 16384, the OOM of 3 x 3 at 24576).
sim_patch_file=$here/starpu-$starpu_version-simgrid-actors.patch
cuda_dir=${CUDA_DIR:-/usr/local/cuda}

log() { echo "[deps] $*" >&2; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

packages=(build-essential pkg-config autoconf automake libtool libtool-bin dpkg-dev
	libmpich-dev mpich libfxt-dev fxt-tools libhwloc-dev libopenblas-dev
	libscalapack-mpich-dev vite)
[ "$flavour" = simgrid ] && packages+=(libsimgrid-dev xsltproc)
# The libDBCSR peer of the block-sparse benchmark (Open MPI; stargemm keeps MPICH, named
# explicitly everywhere, whatever the system's default MPI alternative becomes).
[ "$flavour" = native ] && packages+=(libdbcsr-dev libopenmpi-dev)
# libxsmm's kernels for batches of small tile products (codelets/smallgemm.c).
[ "$flavour" = native ] && packages+=(libxsmm-dev)
# A Fortran compiler for the Fortran module (fortran/stargemm.f90) and its driver.
[ "$flavour" = native ] && packages+=(gfortran)
# gnuplot for bench/plot.sh's figures of the benchmarks' CSV (tests/plot.sh).
[ "$flavour" = native ] && packages+=(gnuplot-nox)
# ScaLAPACK's PBLAS testers, built with MPICH, run with libstargemm-scalapack in front
# (tests/pblas.sh).
[ "$flavour" = native ] && packages+=(scalapack-mpi-test)

install_packages() {
	local missing=()
	for p in "${packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing Debian packages: ${missing[*]}"
	as_root apt-get update -q >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >&2
}

# apt-get source needs a deb-src entry for bookworm main.
ensure_deb_src() {
	if grep -rqs '^\(Types:.*deb-src\|deb-src\)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	log "adding a deb-src entry for bookworm main"
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
		as_root tee /etc/apt/sources.list.d/stargemm-src.sources >/dev/null
	as_root apt-get update -q >&2
}

common_flags=(--disable-build-examples --disable-build-tests --disable-build-doc
	--disable-opencl --disable-fortran --disable-socl --disable-starpufft
	--disable-openmp --disable-hdf5 --disable-leveldb --disable-starpurm
	--disable-glpk --enable-maxcpus=64)

configure_flags() {
	case "$flavour" in
	native)
		echo "${common_flags[@]}" --enable-mpi --with-mpicc=/usr/bin/mpicc.mpich \
			--with-mpiexec=/usr/bin/mpiexec.mpich --with-fxt
		if [ -x "$cuda_dir/bin/nvcc" ]; then
			echo --enable-cuda --with-cuda-dir="$cuda_dir" --enable-maxcudadev=8
		else
			echo --disable-cuda
		fi
		;;
	tsan)
		# Instrumented for ThreadSanitizer (scripts/tsan.sh): StarPU's own locks are
		# compare-and-swap code that an uninstrumented build hides from it. No CUDA,
		# no FxT: the checks run on CPU workers.
		echo "${common_flags[@]}" --enable-mpi --with-mpicc=/usr/bin/mpicc.mpich \
			--with-mpiexec=/usr/bin/mpiexec.mpich --disable-cuda \
			CFLAGS=-fsanitize=thread LDFLAGS=-fsanitize=thread
		;;
	simgrid)
		# SimGrid's SMPI stands in for MPI; simulated programs are static.
		echo "${common_flags[@]}" --enable-simgrid --enable-maxcudadev=8 --disable-cuda \
			--enable-mpi --with-mpicc=/usr/bin/smpicc --disable-shared
		;;
	*)
		echo "deps.sh: unknown flavour '$flavour' (expected native, simgrid or tsan)" >&2
		exit 2
		;;
	esac
}

# Whether the install in $1 has StarPU-MPI's library: shared natively, static in
# simulation (with old_library set in its .la, which libtool reads when linking).
install_ok() {
	if [ "$flavour" = simgrid ]; then
		[ -f "$1/lib/libstarpumpi-1.3.a" ] &&
			grep -q "^old_library='libstarpumpi-1.3.a'" "$1/lib/libstarpumpi-1.3.la"
	else
		[ -f "$1/lib/libstarpumpi-1.3.so" ]
	fi
}

build_starpu() {
	local flags key prefix src
	flags=$(configure_flags)
	key=$( (cat "$patch_file"; [ "$flavour" != simgrid ] || cat "$sim_patch_file"
		echo "$flags") | sha256sum | cut -c1-12)
	prefix=$cache/starpu-$starpu_version-$flavour-$key
	if [ -f "$prefix/.stargemm-complete" ] && install_ok "$prefix"; then
		log "StarPU $starpu_version ($flavour) cached in $prefix"
		echo "$prefix"
		return 0
	fi
	if [ -d "$prefix" ]; then
		log "the cached StarPU in $prefix is incomplete or lacks StarPU-MPI's library:" \
			"building it again"
		rm -rf "$prefix"
	fi
	src=$cache/src-$flavour-$key
	rm -rf "$src" && mkdir -p "$src"
	log "fetching the Debian source package of StarPU into $src"
	(cd "$src" && apt-get source -q "starpu=$starpu_version+dfsg-2" >&2 2>&1 ||
		apt-get source -q starpu >&2)
	local dir
	dir=$(find "$src" -maxdepth 1 -type d -name "starpu-$starpu_version*" | head -n1)
	[ -n "$dir" ] || { log "apt-get source starpu produced no source tree"; exit 1; }
	log "patching StarPU for CUDA 13 ($patch_file)"
	(cd "$dir" && patch -p1 -s <"$patch_file")
	if [ "$flavour" = simgrid ]; then
		log "patching StarPU's simulated threads ($sim_patch_file)"
		(cd "$dir" && patch -p1 -s <"$sim_patch_file")
	fi
	log "configuring StarPU ($flavour): $flags"
	mkdir -p "$dir/build"
	# VERBOSE=1 (exported by .ci/run for Automake's test logs) makes smpicc print its
	# command line, which StarPU's configure then took for the MPI link flags: with
	# "-shared" among them, libtool made no static StarPU-MPI library. So it is unset
	# for StarPU's build.
	# shellcheck disable=SC2086
	(cd "$dir/build" && env -u VERBOSE ../configure --prefix="$prefix" $flags \
		>configure.log 2>&1) || { tail -n 30 "$dir/build/configure.log" >&2; exit 1; }
	log "building StarPU (a few minutes)"
	(cd "$dir/build" && env -u VERBOSE make -j"$(nproc)" >make.log 2>&1 &&
		env -u VERBOSE make install >install.log 2>&1) ||
		{ tail -n 40 "$dir/build/make.log" >&2; exit 1; }
	install_ok "$prefix" || { log "StarPU's install in $prefix lacks StarPU-MPI's library"
		exit 1; }
	touch "$prefix/.stargemm-complete"
	rm -rf "$src"
	log "StarPU $starpu_version ($flavour) installed in $prefix"
	echo "$prefix"
}

install_packages
ensure_deb_src
build_starpu
