#!/bin/sh
# tests/bench_check.sh — the benchmark's CSV output and --check on small ragged runs:
# every repetition line must end in PASS, and the peers must run when built (the GPU
# peers exit 77 where no GPU is visible, as on CI); bench/sweep_cpu.sh --quick prints
# its summaries.
set -e
out="$BUILDDIR/tests/bench_check.out"
: >"$out"
bench="$BUILDDIR/bench/stargemm_pdgemm"
"$SRCDIR/tests/mpirun.sh" 2 "$bench" --m 300 --n 257 --k 190 --nb 64 --P 1 --Q 2 \
	--transA T --beta 0.5 --niter 2 --warmup 1 --check --csv --peak 10 >>"$out"
"$SRCDIR/tests/mpirun.sh" 1 "$bench" --m 200 --n 100 --k 150 --nb 48 --transB T \
	--niter 1 --warmup 0 --check >>"$out"
"$SRCDIR/tests/mpirun.sh" 1 "$bench" --impl blas --m 200 --n 100 --k 150 --niter 1 >>"$out"
STARGEMM_HOST_TILE=64 "$SRCDIR/tests/mpirun.sh" 1 "$bench" --impl host --m 200 --n 100 \
	--k 150 --transA T --beta 0.5 --niter 2 --warmup 0 --check --peak 10 >>"$out"
# --prec: the other element types, checked in their precision (op C: conjugate).
"$SRCDIR/tests/mpirun.sh" 2 "$bench" --prec z --m 150 --n 131 --k 97 --nb 40 --transA C \
	--beta 0.5 --niter 1 --warmup 0 --check --peak 10 >>"$out"
"$SRCDIR/tests/mpirun.sh" 1 "$bench" --prec s --m 150 --n 131 --k 97 --nb 40 --ooc \
	--b 2 --c 2 --d 1 --transB T --niter 1 --warmup 0 --check --peak 10 >>"$out"
STARGEMM_HOST_TILE=64 "$SRCDIR/tests/mpirun.sh" 1 "$bench" --impl host --prec c --m 200 \
	--n 100 --k 150 --transB C --niter 1 --warmup 0 --check --peak 10 >>"$out"
"$SRCDIR/tests/mpirun.sh" 1 "$bench" --impl blas --prec z --m 200 --n 100 --k 150 \
	--niter 1 --peak 10 >>"$out"
# Bad numeric values are refused before anything runs, naming the option and the
# constraint (exit 2): "OPTION VALUE|expected message".
while IFS='|' read -r bad msg; do
	# shellcheck disable=SC2086 # option and value
	if "$bench" --impl blas $bad --niter 1 2>"$out.err"; then
		echo "accepted $bad"; exit 1
	fi
	grep -q -e "$msg" "$out.err" || { echo "no clear error for $bad"; cat "$out.err"; exit 1; }
done <<'EOF'
--m 0|--m needs an integer >= 1, got '0'
--n abc|--n needs an integer >= 1, got 'abc'
--k 12x|--k needs an integer >= 1, got '12x'
--nb -4|--nb needs an integer >= 1, got '-4'
--device-mem abc|--device-mem needs an integer >= 0, got 'abc'
--b 1.5|--b needs an integer >= 0
--P 0|--P needs an integer in \[1, 2147483647\]
--lookahead -1|--lookahead needs an integer in \[0,
--niter 0|--niter needs an integer in \[1,
--alpha x|--alpha needs a number, got 'x'
--beta 1e999|--beta needs a number
--seed -3|--seed needs an integer >= 0
--prec q|--prec needs s, d, c or z, got 'q'
EOF
rm -f "$out.err"
set +e
"$SRCDIR/tests/mpirun.sh" 2 "$bench" --impl scalapack --m 200 --n 100 --k 150 --nb 32 \
	--niter 1 >>"$out" &&
	"$SRCDIR/tests/mpirun.sh" 2 "$bench" --impl scalapack --prec c --m 200 --n 100 \
		--k 150 --nb 32 --niter 1 >>"$out"
scalapack=$?
"$SRCDIR/tests/mpirun.sh" 1 "$bench" --impl cublas --m 200 --n 100 --k 150 --transA T \
	--beta 0.5 --niter 2 --warmup 1 --check >>"$out" 2>"$out.cublas"
cublas=$?
"$SRCDIR/tests/mpirun.sh" 1 "$bench" --impl cublasxt --m 300 --n 257 --k 190 --nb 64 \
	--transB T --niter 1 --warmup 1 --check >>"$out" 2>"$out.cublasxt"
cublasxt=$?
cat "$out.cublas" "$out.cublasxt" >&2
set -e
cat "$out"
head -n1 "$out" | grep -q "^impl,m,n,k,nb,P,Q,transA,transB,alpha,beta,ranks,workers,iter,time_s,gflops,peak_gflops,pct_peak,residual,check,b,c,d,lookahead,case,pred_loads,loads,loads_ratio,peer_loads,pred_mpi_tiles,mpi_tiles,mpi_ratio,h2d_tiles,d2d_tiles,d2h_tiles,prec,ooc_tasks,unprefetched,late$"
[ "$(grep -c "^stargemm,.*,PASS," "$out")" -eq 5 ] || { echo "expected 5 checked PASS lines"; exit 1; }
grep -q "^stargemm,150,131,97,40,2,1,C,N,.*,PASS,.*,z,,,$" "$out" || { echo "no checked z line"; exit 1; }
# out of core: the tasks the policy ran (positive), those not prefetched and those late
# (no more; late is 0 without GPUs)
grep "^stargemm,150,131,97,40,1,1,N,T,.*,PASS,2,2,1,.*,s,[0-9]*,[0-9]*,[0-9]*$" "$out" |
	awk -F, '{ n++; if (!($(NF - 2) > 0 && $(NF - 1) <= $(NF - 2) && $NF == 0)) bad = 1 }
		 END { exit bad || !n }' ||
	{ echo "no s ooc line"; exit 1; }
grep -q "^host,.*,N,C,.*,PASS,.*,c,,,$" "$out" || { echo "no checked host c line"; exit 1; }
! grep -q FAIL "$out"
[ "$(grep -c '^blas,' "$out")" -eq 2 ]
if [ $scalapack -eq 0 ]; then
	[ "$(grep -c '^scalapack,' "$out")" -eq 2 ]
elif [ $scalapack -ne 77 ]; then
	echo "scalapack run failed ($scalapack)"; exit 1
else
	echo "SKIP: the ScaLAPACK peer: not built"
fi
# GPU peers: 77 without a GPU or without a CUDA build, else checked results.
for peer in cublas:$cublas:2 cublasxt:$cublasxt:1; do
	name=${peer%%:*} rest=${peer#*:}; rc=${rest%%:*} lines=${rest#*:}
	if [ "$rc" -eq 0 ]; then
		[ "$(grep -c "^$name,.*,PASS," "$out")" -eq "$lines" ] ||
			{ echo "expected $lines checked $name lines"; exit 1; }
	elif [ "$rc" -ne 77 ]; then
		echo "$name run failed ($rc)"; exit 1
	else
		echo "SKIP: the $name peer: $(sed -n "s/^$name: //p" "$out.$name" | head -n 1 |
			sed 's/; skipped$//')"
	fi
done
rm -f "$out.cublas" "$out.cublasxt"
# The CPU sweep (bench/sweep_cpu.sh) at its small sizes, dense and host parts: its
# summaries name every tile and size with a ratio.
sweep="$BUILDDIR/tests/bench_check.sweep"
rm -rf "$sweep"
BENCH_DIR="$BUILDDIR/bench" bash "$SRCDIR/bench/sweep_cpu.sh" --quick --rounds 1 \
	--parts dense,host --out "$sweep" >"$out.sweep" 2>&1 || { cat "$out.sweep"; exit 1; }
[ "$(grep -c '^dense N=512 nb=[0-9]*: stargemm [0-9.]* GFLOP/s.*ratio [0-9.]*$' "$out.sweep")" -eq 2 ] &&
	[ "$(grep -c '^host N=[0-9]*: stargemm_dgemm [0-9.]* GFLOP/s.*ratio [0-9.]*$' "$out.sweep")" -eq 2 ] ||
	{ cat "$out.sweep"; echo "bench/sweep_cpu.sh --quick: summaries missing"; exit 1; }
rm -rf "$sweep" "$out.sweep"
echo "benchmark output OK"
