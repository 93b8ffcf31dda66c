#!/bin/sh
# tests/compare_gpu.sh — bench/compare_gpu.sh's sequence and summary, with a stand-in
# benchmark printing known rates (in-core cuBLAS 50,000 GFLOP/s, cuBLASXt 30,000,
# stargemm 45,000: 90.0% and 1.50x), and that stargemm runs out of core under the GPU
# memory limit; then the real benchmark: a result on a GPU node, 77 elsewhere.
set -e
dir="$BUILDDIR/tests/compare_gpu.d"
rm -rf "$dir" && mkdir -p "$dir"
fake="$dir/stargemm_pdgemm"
cat >"$fake" <<'FAKE'
#!/bin/sh
impl=stargemm ooc=0
for a in "$@"; do
	case "$prev" in --impl) impl=$a ;; esac
	[ "$a" = --ooc ] && ooc=1
	[ "$a" = --csv ] && echo "impl,m,n,k,nb,P,Q,transA,transB,alpha,beta,ranks,workers,iter,time_s,gflops,peak_gflops,pct_peak,residual,check,b,c,d,lookahead,case,pred_loads,loads,loads_ratio,peer_loads,pred_mpi_tiles,mpi_tiles,mpi_ratio,h2d_tiles,d2d_tiles,d2h_tiles"
	prev=$a
done
row() { echo "$1,8192,8192,8192,2048,1,1,N,N,1,1,1,1,0,1.0,$2,0,0,,,$3"; }
case $impl in
blas) row blas 1 ;;
cublas) row cublas 50000 ;;
cublasxt) row cublasxt 30000 ;;
stargemm)
	[ "$ooc" = 1 ] && [ "$STARPU_LIMIT_CUDA_MEM" = 2048 ] || { echo "stargemm not out of core under the limit" >&2; exit 1; }
	row stargemm 44000 "2,2,2,2,c2,64,64,1.000,0,,0,,64,0,16"
	row stargemm 45000 "2,2,2,2,c2,64,65,1.016,0,,0,,65,0,16" ;;
esac
FAKE
chmod +x "$fake"
STARGEMM_BENCH="$fake" "$SRCDIR/bench/compare_gpu.sh" --device-mem 2048 -- --niter 2 \
	>"$dir/out"
cat "$dir/out"
grep -q "^stargemm / in-core cublasDgemm: 90.0%$" "$dir/out"
grep -q "^stargemm / cublasXtDgemm: 1.50x$" "$dir/out"
grep -q "^stargemm loads / model: 1.016$" "$dir/out"

set +e
STARGEMM_BENCH="$BUILDDIR/bench/stargemm_pdgemm" "$SRCDIR/bench/compare_gpu.sh" \
	--kernel-n 512 --device-mem 64 -- --m 1000 --n 900 --k 700 --nb 128 --niter 1 \
	--check >"$dir/real" 2>&1
rc=$?
set -e
cat "$dir/real"
case $rc in
0) grep -q "^stargemm / cublasXtDgemm: " "$dir/real" ;;
77) grep -q "no GPU run possible here" "$dir/real"
    echo "SKIP: compare_gpu.sh on the real benchmark: no GPU visible" ;;
*) echo "compare_gpu.sh failed ($rc)"; exit 1 ;;
esac
echo "compare_gpu.sh OK"
