#!/usr/bin/env bash
# bench/sim_cluster.sh — the out-of-core product on simulated GPU clusters (StarPU's
# SimGrid mode over SMPI, stargemm's real code): paper 003's Figure 3 experiment, weak
# scaling, the plain product and StarPU's dmdas beside it, and paper 000's irregular
# block-sparse product with load-balanced columns. Each rank is half a
# Summit-like node (3 V100 of 7200 GFLOP/s, perfmodels/sampling/bus/summit.*), as in
# the paper's runs (two processes per node).
#
# Usage: sim_cluster.sh [--out DIR] [--jobs N] [--large] [--only RE] [--plot] EXPERIMENT...
#   fig3   per-GPU efficiency against N, lookahead 1 and 2, on 2 x 2 and 3 x 3 grids
#          (and 4 x 4 with --large), N across the point where C outgrows the GPUs
#   weak   N = 12,288 g on g x g grids, g = 1, 2, 3 (and 4 with --large): 12 tiles a
#          side per rank (blocks that divide them), A + B + C 3.8 times the GPUs'
#          memory at every g
#   peers  on 2 x 2 at 16,384 (C fits in the GPUs) and 24,576 (it does not): the
#          out-of-core product, the plain product (stargemm_pdgemm_dist through the
#          stargemm-ooc policy) and the plain product under StarPU's dmdas; time, tiles
#          moved, peak host memory of received tiles
#   sparse an irregular block-sparse product (stargemm_bsgemm: tiles of 512 to 2048,
#          densities 0.3, C the symbolic product) on 2 x 2 at 30,000 (and 4 x 4 at
#          40,000 and 60,000 with --large: about 20 GiB of this machine's memory, one
#          at a time; with STARGEMM_HOST_POOL=0 the balanced 60,000 stops on a deadlock,
#          doc/out-of-core.md), out of core, B's and C's columns 2D block-cyclic against dealt
#          by flops (--dist balanced, paper 000 3.2.1): time, the largest rank's flops
#          over the mean, per-GPU efficiency, rank 0's kept host buffers
#   --out DIR   where the CSV files go (default sim-cluster.out)
#   --jobs N    simulations run at once (default 1; the simulated times do not depend
#               on it, the simulation being deterministic)
#   --large     add the 4 x 4 grid (fig3: 24 to 48 tiles a side; 40,960: about 20
#               minutes of wall time per run, 9 GiB of memory)
#   --only RE   only the runs whose name (e.g. fig3_l2_3x3_18432, weak_2x2, peers_ooc_16384)
#               matches the extended regular expression RE
#   --plot      then draw DIR/*.csv with bench/plot.sh (gnuplot)
# Environment: BUILDDIR (a SimGrid build, default build-sim), SRCDIR (default the
# source tree), MPIEXEC (starpu_smpirun; default from scripts/deps.sh simgrid).
#
# Scaling (doc/out-of-core.md, "Simulated clusters"): the GPUs have 300 MiB instead of
# 16 GiB, tiles are 1024 as in the paper, so that C outgrows the GPUs at sizes the
# simulator runs in minutes (a 3 x 3 run of 24,576^3: 2 minutes of wall time). Flops
# per byte received grow as the square root of the GPU memory a C block fills, so the
# network is scaled by sqrt(16384 / 300): 12.5 GB/s per rank becomes 90
# (perfmodels/smpi/scaled.xml). Every run does one untimed repetition first: the
# first product of a process pins the host buffers of its received tiles (StarPU's
# simulated cudaHostAlloc, 5.2 ms per tile), later ones reuse them (src/runtime.c,
# keep_host_buffers()).
#
# Memory: the simulating process holds the folded matrices (one shared block of 64 MiB,
# tests/simrun.sh) and every rank's received tiles and StarPU's structures: 5 GiB for
# 3 x 3 at 24,576 (its resident size reads 18 GiB, the folded pages counted once per
# mapping). It needs the simulation build of scripts/deps.sh, whose patch lets SimGrid
# free the actor StarPU-MPI starts for each MPI request (without it: +0.9 MiB per
# request, 6 GiB more for 2 x 2 at 16,384, 3 x 3 at 24,576 killed at 24 GiB). The
# received tiles' buffers StarPU keeps for reuse are capped, per simulated rank, at
# half this machine's memory over the ranks (src/runtime.c, memory_shares()):
# block-sparse tiles rarely share a shape, and without the cap each rank kept every
# tile it received (4 x 4 at 40,000 passed 15 GiB).
#
# Output: DIR/fig3_l1.csv and fig3_l2.csv, DIR/weak.csv, DIR/peers_*.csv (the CSV of
# stargemm_pdgemm, one file per configuration, for plot.sh --by-file), DIR/sparse.csv
# (stargemm_bsgemm's CSV), and with each
# DIR/*_ranks.csv, every rank's line (stargemm_pdgemm --per-rank): loads and MPI
# tiles against the model, checked on every rank by the summary at the end.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=sim-cluster.out
jobs=1
large=0
plot=0
only=.
die() { echo "sim_cluster.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
	--jobs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a number >= 1"; jobs=$2; shift 2 ;;
	--large) large=1; shift ;;
	--plot) plot=1; shift ;;
	--only) [ $# -ge 2 ] || die "--only needs a regular expression"; only=$2; shift 2 ;;
	--help|-h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "no experiment given: fig3, weak or peers (see --help)"
for e in "$@"; do
	case "$e" in
	fig3|weak|peers|sparse) ;;
	*) die "unknown experiment '$e' (fig3, weak, peers, sparse)" ;;
	esac
done
export SRCDIR=${SRCDIR:-$top}
export BUILDDIR=${BUILDDIR:-$top/build-sim}
if [ -z "${MPIEXEC:-}" ]; then
	MPIEXEC=$("$top/scripts/deps.sh" simgrid | tail -n1)/bin/starpu_smpirun
fi
export MPIEXEC
[ -x "$MPIEXEC" ] || die "no starpu_smpirun at '$MPIEXEC' (a SimGrid build of StarPU)"
bench="$BUILDDIR/bench/stargemm_pdgemm"
bsbench="$BUILDDIR/bench/stargemm_bsgemm"
[ -x "$bench" ] && [ -x "$bsbench" ] ||
	die "no $bench or $bsbench: build the SimGrid tree first (scripts/quickstart.sh check)"
export SIM_NETWORK="$SRCDIR/perfmodels/smpi/scaled.xml"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One simulated run: NAME G N [options of the program]; writes $work/NAME.csv (rank
# 0's header and line) and $work/NAME.ranks (every rank's line, dense runs). Runs named
# sparse_* are of stargemm_bsgemm, the others of stargemm_pdgemm.
sim() {
	local name=$1 g=$2 n=$3 prog args
	shift 3
	case "$name" in
	sparse_*) prog=$bsbench args=(--lo 512 --hi 2048 --density-a 0.3 --density-b 0.3
		--no-dense --ooc) ;;
	*) prog=$bench args=(--nb 1024 --per-rank --peak $((g * g * 3 * 7200))) ;;
	esac
	env STARPU_NCPU=1 STARPU_NCUDA=3 STARPU_LIMIT_CUDA_MEM=300 TEST_TIMEOUT=7200 \
		"$SRCDIR/tests/simrun.sh" summit $((g * g)) "$prog" "${args[@]}" --niter 1 \
		--warmup 1 --csv --quiet --P "$g" --Q "$g" --m "$n" --n "$n" --k "$n" "$@" \
		>"$work/$name.log" 2>&1 || true
	grep -E '^(impl|stargemm),' "$work/$name.log" >"$work/$name.csv" || true
	grep -E '^rank,' "$work/$name.log" | sed "s/^rank,/$name,/" >"$work/$name.ranks" || true
	if ! grep -q '^stargemm,' "$work/$name.csv"; then
		echo "sim_cluster.sh: $name did not finish (a kill by the system's OOM killer" \
			"reads 'Killed', code 137); its last lines:" >&2
		grep -v -e '/INFO]' -e 'MPI_Init_thread level' -e 'simgrid_update_xml' \
			-e '^$' "$work/$name.log" | tail -n 5 >&2
	fi
}

# The runs, as lines "NAME G N OPTIONS...", then run $jobs at a time.
: >"$work/runs"
add() { echo "$*" >>"$work/runs"; }
grids="2 3"
[ $large -eq 0 ] || grids="2 3 4"
for e in "$@"; do
	case "$e" in
	fig3)
		for g in $grids; do
			# C fills the grid's GPUs (g^2 x 900 MiB) at about N = 9,700 g; from
			# 0.6 to 1.7 times that, at most 32 tiles a side (48 with --large).
			for t in 6 8 10 12 16; do
				n=$((t * 1024 * g))
				[ $((n / 1024)) -le $((large ? 48 : 32)) ] || continue
				for l in 1 2; do add "fig3_l${l}_${g}x${g}_$n $g $n --ooc --lookahead $l"; done
			done
		done ;;
	weak)
		for g in 1 $grids; do add "weak_${g}x${g} $g $((12288 * g)) --ooc"; done ;;
	peers)
		for n in 16384 24576; do
			add "peers_ooc_$n 2 $n --ooc"
			add "peers_plain_$n 2 $n"
			add "peers_dmdas_$n 2 $n --sched dmdas"
		done ;;
	sparse)
		sgrids=2
		[ $large -eq 0 ] || sgrids="2 4"
		for g in $sgrids; do
			# 4 x 4 also at 40,000: 2 / 3 of the per-rank side of 2 x 2 at 30,000
			sizes=$((15000 * g))
			[ "$g" -ne 4 ] || sizes="40000 60000"
			for n in $sizes; do
				for dist in cyclic balanced; do
					add "sparse_${dist}_${g}x${g}_$n $g $n --dist $dist"
				done
			done
		done ;;
	esac
done
awk -v re="$only" '$1 ~ re' "$work/runs" >"$work/chosen"
[ -s "$work/chosen" ] || die "--only '$only' matches no run"
export -f sim
export bench bsbench work
xargs -P "$jobs" -L 1 bash -c 'sim "$@"' _ <"$work/chosen"

# Files per experiment: fig3 by lookahead, weak, peers by configuration.
gather() { # file pattern
	local f=$1 pat=$2 first=1 c
	: >"$out/$f.csv"
	: >"$out/${f}_ranks.csv"
	for c in "$work"/$pat.csv; do
		[ -f "$c" ] || continue
		if [ $first -eq 1 ] && grep -q '^impl,' "$c"; then
			head -n1 "$c" >>"$out/$f.csv"
			first=0
		fi
		grep '^stargemm,' "$c" >>"$out/$f.csv" || true
		cat "${c%.csv}.ranks" >>"$out/${f}_ranks.csv"
	done
	[ -s "$out/$f.csv" ] || rm -f "$out/$f.csv" "$out/${f}_ranks.csv"
}
gather fig3_l1 'fig3_l1_*'
gather fig3_l2 'fig3_l2_*'
gather weak 'weak_*'
gather peers_ooc 'peers_ooc_*'
gather peers_plain 'peers_plain_*'
gather peers_dmdas 'peers_dmdas_*'
gather sparse 'sparse_*'
cp "$work"/*.log "$out/" 2>/dev/null || true

# Summary: per-GPU efficiency of every run; every rank's loads and MPI tiles against
# the model (the per-rank columns: 5 loads, 9 pred_loads, 10 mpi, 11 pred_mpi).
echo "run,grid,N,lookahead,case,b,c,d,time_s,pct_peak,late"
for c in "$out"/*.csv; do
	case "$c" in *_ranks.csv|*/sparse.csv) continue ;; esac
	awk -F, -v f="$(basename "$c" .csv)" '
		/^impl,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ printf "%s,%sx%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", f, $col["P"], $col["Q"], $col["m"],
			$col["lookahead"], $col["case"], $col["b"], $col["c"], $col["d"],
			$col["time_s"], $col["pct_peak"], $col["late"] }' "$c"
done
if [ -f "$out/sparse.csv" ]; then
	echo "sparse run,ranks,N,dist,seconds,pct_peak,flops_imbalance,loads_ratio,late," \
		"ram_peak_mib"
	awk -F, '
		/^impl,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ printf "%s,%s,%s,%s,%s,%.1f,%s,%s,%s,%s\n", "sparse", $col["ranks"], $col["m"],
			$col["dist"], $col["seconds"], 100 * $col["gflops"] / ($col["ranks"] * 3 * 7200),
			$col["flops_imbalance"], $col["loads_ratio"], $col["late"],
			$col["ram_peak_mib"] }' "$out/sparse.csv"
fi
cat "$out"/*_ranks.csv 2>/dev/null | awk -F, '
	$10 > 0 || $9 > 0 {
		n++
		if ($9 > 0 && ($5 < 0.90 * $9 || $5 > 1.05 * $9)) { bad++; print "loads outside [0.90, 1.05] of the model: " $0 }
		if ($11 > 0 && ($10 < 0.90 * $11 || $10 > 1.05 * $11)) { bad++; print "MPI tiles outside [0.90, 1.05] of the model: " $0 }
	}
	END { printf "%d rank lines out of core, %d outside the band\n", n, bad + 0 }'
if [ $plot -eq 1 ]; then
	"$SRCDIR/bench/plot.sh" --out "$out" --by-file --plots size --name fig3 \
		"$out"/fig3_l1.csv "$out"/fig3_l2.csv || true
fi
