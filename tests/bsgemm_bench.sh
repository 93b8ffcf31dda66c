#!/bin/sh
# tests/bsgemm_bench.sh — the block-sparse benchmark: CSV header and rows, --check on
# 1 and 2 ranks (residual on rank 0 only), in single and complex precision too (batches
# of small tiles: libxsmm in single, the complex kernels in complex), A stored as A^H
# (--transA C: the transposed path, the same product), a given C pattern with
# filtering, --plan, B made on demand (--generate-b),
# out of core on disk with its loads against the work list's, no StarPU-MPI statistics
# on stderr unless asked for, and bad options refused before anything runs with a
# message naming the constraint.
set -e
out="$BUILDDIR/tests/bsgemm_bench.out"
err="$out.err"
: >"$out"
bench="$BUILDDIR/bench/stargemm_bsgemm"
small="--m 300 --n 250 --k 280 --lo 5 --hi 40 --density-a 0.5 --density-b 0.5"
# shellcheck disable=SC2086 # $small is a list of options
"$SRCDIR/tests/mpirun.sh" 2 "$bench" $small --niter 2 --warmup 1 --check --csv >>"$out"
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 1 "$bench" $small --beta 0.5 --niter 1 --warmup 0 --check \
	--plan >>"$out" 2>"$err"
grep -q "products" "$err" || { echo "--plan printed nothing"; cat "$err"; exit 1; }
# No noise: the counters turn StarPU-MPI's statistics on, but their report at exit
# appears only when the user asked for it (STARPU_COMM_STATS=1).
if grep -q "starpu_comm_stats" "$err"; then
	echo "StarPU-MPI's statistics printed though not asked for"; cat "$err"; exit 1
fi
# shellcheck disable=SC2086
STARPU_COMM_STATS=1 "$SRCDIR/tests/mpirun.sh" 1 "$bench" $small --niter 1 --warmup 0 \
	>/dev/null 2>"$err"
grep -q "starpu_comm_stats" "$err" ||
	{ echo "STARPU_COMM_STATS=1 printed no statistics"; cat "$err"; exit 1; }
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 2 "$bench" $small --density-c 0.3 --eps 30 --beta 1 \
	--niter 1 --warmup 0 >>"$out"
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 2 "$bench" $small --P 1 --Q 2 --dist balanced --beta 0.5 \
	--niter 1 --warmup 0 --check >>"$out"
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 2 "$bench" $small --prec c --beta 0.5 --alpha 2 --niter 1 \
	--warmup 0 --check >>"$out"
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 1 "$bench" $small --prec s --beta 0.5 --niter 1 --warmup 0 \
	--check >>"$out"
# shellcheck disable=SC2086
"$SRCDIR/tests/mpirun.sh" 2 "$bench" $small --prec z --transA C --beta 0.5 --niter 1 \
	--warmup 0 --check >>"$out"
# Out of core on the CPU (RAM budget, disk node): the disk loads are counted, within
# [0.85, 1.10] of the work list's prediction (0.93-0.97 measured with the plan fitted
# to the list, src/fit.c; more would be a scheduling bug, fewer a plan that leaves RAM
# unused).
dir="$BUILDDIR/tests/bsgemm_bench.dir"
rm -rf "$dir" && mkdir -p "$dir"
"$SRCDIR/tests/mpirun.sh" 1 "$bench" --m 2000 --n 1900 --k 2100 --lo 150 --hi 400 \
	--density-a 0.6 --density-b 0.6 --beta 0.5 --ooc --ram-limit 24 --disk "$dir" \
	--disk-mib 256 --niter 1 --warmup 0 --check --no-dense >>"$out"
rm -rf "$dir"
cat "$out"
tail -n1 "$out" | awk -F, '{ if (!($30 > 0 && $31 > 0 && $32 <= 1.10 && $32 >= 0.85 && $27 == 0 && $36 > 0 && $37 <= $36)) exit 1 }' ||
	{ echo "out of core: no predicted or measured loads, loads outside [0.85, 1.10] of the prediction, a dense rate despite --no-dense, or no out-of-core task counted"; exit 1; }
head -n1 "$out" | grep -q "^impl,ranks,threads,m,n,k,lo,hi,density_a,density_b,density_c,seed,eps,mt,nt,kt,products,iter,seconds,useful_gflop,gflops,residual,skipped,c_removed,symbolic_s,inspect_s,dense_gflops,ratio_dense,dist,pred_loads,loads,loads_ratio,peer_loads,prec,transA,ooc_tasks,unprefetched,late,flops_imbalance,ram_peak_mib,stationary,model_mpi_mib,mpi_mib,model_c_s,model_a_s,model_b_s,generated_b,generated_tiles,rss_peak_mib,generated_on_gpus$"
[ "$(grep -c '^stargemm,' "$out")" -eq 9 ] || { echo "expected 9 rows"; exit 1; }
[ "$(grep -c '^stargemm,.*,c,N,0,0,0,[0-9.]*,[0-9.]*,[ABC],' "$out")" -eq 1 ] && [ "$(grep -c '^stargemm,.*,s,N,0,0,0,[0-9.]*,[0-9.]*,[ABC],' "$out")" -eq 1 ] ||
	{ echo "expected one row in single and one in single complex"; exit 1; }
[ "$(grep -c '^stargemm,.*,z,C,0,0,0,[0-9.]*,[0-9.]*,[ABC],' "$out")" -eq 1 ] ||
	{ echo "expected one row with A stored as A^H"; exit 1; }
[ "$(grep -c ',balanced,' "$out")" -eq 1 ] || { echo "no balanced row"; exit 1; }
# The largest rank's flops over the mean: 1 on one rank, at least 1 on two.
awk -F, '/^stargemm,/ && ($39 < 1 || ($2 == 1 && $39 != 1)) { bad = 1 } END { exit bad }' "$out" ||
	{ echo "a flops_imbalance below 1, or not 1 on one rank"; exit 1; }
# Checked rows: a residual >= 0 (the run itself fails above the bound).
[ "$(grep -c '^stargemm,[12],' "$out")" -eq 9 ]
awk -F, '/^stargemm,/ && $13 == 0 && $22 < 0 { bad = 1 } END { exit bad }' "$out" ||
	{ echo "a checked row has no residual"; exit 1; }
# The filtered row skipped some products: values are uniform in [-0.5, 0.5], so a
# product of two 5x5 tiles has a norm product near 2, of two 40x40 near 130.
awk -F, '/^stargemm,/ && $13 > 0 && $23 > 0 && $17 > 0 { ok = 1 } END { exit !ok }' "$out" ||
	{ echo "filtering skipped nothing, or everything"; exit 1; }
# B made on demand (--generate-b) on 2 ranks, in core and out of core: one row each,
# checked (the run fails above the bound; --check builds a stored B for the reference),
# generated_b 1, tiles made and a peak resident memory counted.
gen="$out.gen"
for mode in "" --ooc; do
	# shellcheck disable=SC2086 # $small and $mode are lists of options
	"$SRCDIR/tests/mpirun.sh" 2 "$bench" $small $mode --generate-b --niter 1 --warmup 0 \
		--check --no-dense --csv >"$gen"
	awk -F, '/^stargemm,/ { rows++; if (!($47 == 1 && $48 > 0 && $49 > 0 && $22 >= 0)) bad = 1 }
		END { exit bad || rows != 1 }' "$gen" ||
		{ cat "$gen"; echo "--generate-b $mode: no checked row with tiles made"; exit 1; }
	echo "--generate-b $mode: $(grep '^stargemm,' "$gen" | cut -d, -f22,47-49)"
done
rm -f "$gen"
# Bad options: exit 2 and a message naming the option or the constraint.
. "$SRCDIR/tests/refuse.sh"
bad() {
	msg=$1
	shift
	refuse "$err" "$msg" "$bench" --niter 1 --warmup 0 "$@"
}
bad "--lo needs an integer >= 1" --lo abc
bad "--m needs an integer >= 0" --m 12x
bad "densities must lie in \[0, 1\]" --density-a 1.5
bad "1 <= lo <= hi" --lo 10 --hi 5
bad "filter_eps must be finite and >= 0" --m 100 --n 100 --k 100 --eps -1
bad "needs the symbolic C pattern" --check --eps 1e-3
bad "unexpected argument" --m 100 extra
bad "--dist must be cyclic or balanced" --dist blocked
bad "--prec must be s, d, c or z" --prec q
bad "--transA must be N, T or C" --transA X
# A bad batching or kernel setting is refused by the product itself (exit 1), and its
# message survives the wait for the tasks already submitted; a bad packing setting by
# the matrix creation; a bad device pool or memory setting by stargemm_init() (read
# with or without GPUs), and a bad disk backend setting by it when there is a disk node.
mkdir -p "$dir"
for var in STARGEMM_BATCH_FLOPS STARGEMM_BATCH_BELOW STARGEMM_PACK_BELOW \
	STARGEMM_PACK_EXTENT STARGEMM_DEVICE_POOL STARGEMM_HOST_POOL STARGEMM_XSMM_SHAPES \
	STARGEMM_KEEP_MEMORY \
	STARGEMM_DISK_ONE_FILE; do
	for value in abc -1; do
		if env "$var=$value" "$bench" --m 100 --n 100 --k 100 --niter 1 --warmup 0 \
			--ooc --ram-limit 64 --disk "$dir" >/dev/null 2>"$err"; then
			echo "accepted $var=$value"; exit 1
		fi
		grep -q "$var='$value': expected a number >= 0" "$err" ||
			{ echo "no clear error for $var=$value"; cat "$err"; exit 1; }
	done
done
rm -rf "$err" "$dir"
echo "block-sparse benchmark OK"
