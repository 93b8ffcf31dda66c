/*
 * bench/cublas.c — the GPU peers of the dense benchmark, for side-by-side runs on a GPU
 * node (bench/compare_gpu.sh):
 *   --impl cublas    one in-core cublasDgemm on matrices already in the memory of one
 *                    GPU: the kernel's rate, the ceiling an out-of-core GEMM is held to.
 *                    Only the call is timed (CUDA events); the copies are not.
 *   --impl cublasxt  cublasXtDgemm on host-resident matrices (pinned with
 *                    cudaHostRegister, untimed): NVIDIA's own out-of-core tiled GEMM,
 *                    on --ngpus GPUs (default: all visible), block size --nb.
 * Both use the matrices stargemm fills (stargemm_random_element), print the common CSV
 * row per timed repetition, restore C before each one (untimed) and, with --check,
 * compare every result with cblas_dgemm. Without a visible GPU they return 77.
 */
#include <cublasXt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/check.h"
#include "bench.h"

/* Operands of one benchmark problem on the host: A, B, C and, with --check, C0. */
struct host_operands {
	int64_t am, an, bm, bn;
	double *a, *b, *c, *c0;
};

static int cuda_ok(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 1;
	fprintf(stderr, "%s: %s (%s)\n", what, cudaGetErrorString(e), cudaGetErrorName(e));
	return 0;
}

static int cublas_ok(cublasStatus_t s, const char *what)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return 1;
	fprintf(stderr, "%s: %s\n", what, cublasGetStatusString(s));
	return 0;
}

/* Number of visible GPUs; 0 (with the reason on stderr) when there is none. */
static int visible_gpus(const char *impl)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);

	if (e != cudaSuccess || count == 0) {
		fprintf(stderr, "%s: no CUDA device visible (%s); skipped\n", impl,
			e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		return 0;
	}
	return count;
}

/* cuBLAS takes int sizes and leading dimensions. */
static int sizes_fit_int(const struct bench_opts *o)
{
	if (o->m > INT_MAX || o->n > INT_MAX || o->k > INT_MAX || o->nb > INT_MAX) {
		fprintf(stderr, "%s: m, n, k and nb must be at most %d for cuBLAS\n", o->impl,
			INT_MAX);
		return 0;
	}
	return 1;
}

static void free_operands(struct host_operands *h)
{
	free(h->a);
	free(h->b);
	free(h->c);
	free(h->c0);
	memset(h, 0, sizeof(*h));
}

/* A, B and C as stargemm fills them; C0, a copy of C, only with --check (at the sizes
 * out-of-core runs use, a fourth matrix may not fit: C is then refilled instead). */
static int make_operands(const struct bench_opts *o, struct host_operands *h)
{
	int ta = o->transA == 'T', tb = o->transB == 'T';
	size_t sc = (size_t)(o->m * o->n) * sizeof(double);

	h->am = ta ? o->k : o->m;
	h->an = ta ? o->m : o->k;
	h->bm = tb ? o->n : o->k;
	h->bn = tb ? o->k : o->n;
	h->a = bench_random_array(STARGEMM_D, h->am, h->an, o->seed);
	h->b = bench_random_array(STARGEMM_D, h->bm, h->bn, o->seed + 1);
	h->c = bench_random_array(STARGEMM_D, o->m, o->n, o->seed + 2);
	if (h->c && o->check && (h->c0 = malloc(sc)))
		memcpy(h->c0, h->c, sc);
	if (!h->a || !h->b || !h->c || (o->check && !h->c0)) {
		fprintf(stderr, "%s: cannot allocate the matrices on the host (%.1f GiB)\n",
			o->impl, (double)(h->am * h->an + h->bm * h->bn + (1 + o->check) *
			o->m * o->n) * 8.0 / (1 << 30));
		free_operands(h);
		return 0;
	}
	return 1;
}

/* Put C back to its initial values before repetition @p it (untimed). */
static void restore_c(const struct bench_opts *o, const struct host_operands *h, int it)
{
	if (h->c0)
		memcpy(h->c, h->c0, (size_t)(o->m * o->n) * sizeof(double));
	else if (it > -o->warmup)
		bench_fill_random(STARGEMM_D, h->c, o->m, o->n, o->seed + 2);
}

static cublasOperation_t op(char t)
{
	return t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* Residual of the result @p c (host) when --check, else -1. */
static double residual_of(const struct bench_opts *o, const struct host_operands *h,
			  const double *c)
{
	if (!o->check)
		return -1.0;
	return sg_gemm_residual(o->transA, o->transB, o->m, o->n, o->k, o->alpha, h->a, h->b,
				o->beta, h->c0, c);
}

/* ---- in-core cublasDgemm ------------------------------------------------------ */

struct device_operands {
	double *a, *b, *c;
};

static void free_device(struct device_operands *d)
{
	cudaFree(d->a);
	cudaFree(d->b);
	cudaFree(d->c);
}

/* Allocate A, B, C on the current GPU and copy A and B; refuse sizes that do not fit. */
static int to_device(const struct bench_opts *o, const struct host_operands *h,
		     struct device_operands *d)
{
	size_t sa = (size_t)(h->am * h->an) * sizeof(double);
	size_t sb = (size_t)(h->bm * h->bn) * sizeof(double);
	size_t sc = (size_t)(o->m * o->n) * sizeof(double);
	size_t free_b = 0, total_b = 0;

	if (!cuda_ok(cudaMemGetInfo(&free_b, &total_b), "cublas: cudaMemGetInfo"))
		return 0;
	if (sa + sb + sc > free_b) {
		fprintf(stderr, "cublas: in-core cublasDgemm needs A, B and C on the GPU: "
			"%.2f GiB, but %.2f GiB of %.2f GiB are free; use a smaller size for the "
			"kernel's rate\n", (double)(sa + sb + sc) / (1 << 30),
			(double)free_b / (1 << 30), (double)total_b / (1 << 30));
		return 0;
	}
	return cuda_ok(cudaMalloc((void **)&d->a, sa), "cublas: cudaMalloc A") &&
	       cuda_ok(cudaMalloc((void **)&d->b, sb), "cublas: cudaMalloc B") &&
	       cuda_ok(cudaMalloc((void **)&d->c, sc), "cublas: cudaMalloc C") &&
	       cuda_ok(cudaMemcpy(d->a, h->a, sa, cudaMemcpyHostToDevice), "cublas: copy A") &&
	       cuda_ok(cudaMemcpy(d->b, h->b, sb, cudaMemcpyHostToDevice), "cublas: copy B");
}

/* One timed cublasDgemm on device-resident operands; C is restored first (untimed). */
static int incore_repetition(const struct bench_opts *o, cublasHandle_t handle,
			     const struct host_operands *h, const struct device_operands *d,
			     cudaEvent_t ev[2], double *seconds)
{
	size_t sc = (size_t)(o->m * o->n) * sizeof(double);
	float ms = 0.0f;

	/* h->c holds C0 unless --check copied a result into it; then C0 is kept apart. */
	const double *c0 = h->c0 ? h->c0 : h->c;

	if (!cuda_ok(cudaMemcpy(d->c, c0, sc, cudaMemcpyHostToDevice), "cublas: copy C") ||
	    !cuda_ok(cudaEventRecord(ev[0], 0), "cublas: cudaEventRecord"))
		return 0;
	if (!cublas_ok(cublasDgemm(handle, op(o->transA), op(o->transB), (int)o->m, (int)o->n,
				   (int)o->k, &o->alpha, d->a, (int)h->am, d->b, (int)h->bm,
				   &o->beta, d->c, (int)o->m), "cublasDgemm"))
		return 0;
	if (!cuda_ok(cudaEventRecord(ev[1], 0), "cublas: cudaEventRecord") ||
	    !cuda_ok(cudaEventSynchronize(ev[1]), "cublas: cudaEventSynchronize") ||
	    !cuda_ok(cudaGetLastError(), "cublas: after cublasDgemm") ||
	    !cuda_ok(cudaEventElapsedTime(&ms, ev[0], ev[1]), "cublas: cudaEventElapsedTime"))
		return 0;
	*seconds = 1e-3 * (double)ms;
	return 1;
}

static int incore_loop(const struct bench_opts *o, cublasHandle_t handle,
		       const struct host_operands *h, const struct device_operands *d)
{
	cudaEvent_t ev[2] = { 0, 0 };
	int ok = cuda_ok(cudaEventCreate(&ev[0]), "cublas: cudaEventCreate") &&
		 cuda_ok(cudaEventCreate(&ev[1]), "cublas: cudaEventCreate");
	int failed = 0;

	for (int it = -o->warmup; ok && it < o->niter; it++) {
		double seconds = 0.0, residual = -1.0;

		ok = incore_repetition(o, handle, h, d, ev, &seconds);
		if (ok && o->check)
			ok = cuda_ok(cudaMemcpy(h->c, d->c, (size_t)(o->m * o->n) * sizeof(double),
						cudaMemcpyDeviceToHost), "cublas: copy C back");
		if (ok && it >= 0) {
			residual = residual_of(o, h, h->c);
			bench_print_row(o, 1, 1, it, seconds, o->peak, residual, NULL);
			failed |= residual >= SG_RESIDUAL_BOUND;
		}
	}
	cudaEventDestroy(ev[0]);
	cudaEventDestroy(ev[1]);
	return !ok || failed;
}

int bench_run_cublas(const struct bench_opts *o)
{
	struct host_operands h = { 0 };
	struct device_operands d = { 0 };
	cublasHandle_t handle = NULL;
	int ret = 1;

	if (!visible_gpus("cublas"))
		return 77;
	if (!sizes_fit_int(o) || !make_operands(o, &h))
		return 1;
	if (to_device(o, &h, &d) && cublas_ok(cublasCreate(&handle), "cublasCreate"))
		ret = incore_loop(o, handle, &h, &d);
	if (handle)
		cublasDestroy(handle);
	free_device(&d);
	free_operands(&h);
	return ret;
}

/* ---- cublasXtDgemm on host-resident matrices ---------------------------------- */

/* Select the first --ngpus visible GPUs (all by default) and the block size --nb. */
static int xt_setup(const struct bench_opts *o, int visible, cublasXtHandle_t handle,
		    int *ngpus)
{
	int ids[64];

	*ngpus = o->ngpus > 0 ? o->ngpus : visible;
	if (*ngpus > visible || *ngpus > 64) {
		fprintf(stderr, "cublasxt: --ngpus %d, but %d GPUs are visible\n", o->ngpus,
			visible);
		return 0;
	}
	for (int i = 0; i < *ngpus; i++)
		ids[i] = i;
	return cublas_ok(cublasXtDeviceSelect(handle, *ngpus, ids), "cublasXtDeviceSelect") &&
	       cublas_ok(cublasXtSetBlockDim(handle, (int)o->nb), "cublasXtSetBlockDim");
}

/* Pin the host operands (untimed), as stargemm's tiles are; cuBLASXt runs unpinned
 * too, only slower, so a refusal is reported and the run goes on. */
static void pin(const struct bench_opts *o, const struct host_operands *h, int on)
{
	double *arr[3] = { h->a, h->b, h->c };
	size_t bytes[3] = { (size_t)(h->am * h->an) * 8, (size_t)(h->bm * h->bn) * 8,
			    (size_t)(o->m * o->n) * 8 };

	for (int i = 0; i < 3; i++) {
		cudaError_t e = on ? cudaHostRegister(arr[i], bytes[i], cudaHostRegisterDefault)
				   : cudaHostUnregister(arr[i]);

		if (e != cudaSuccess && on)
			fprintf(stderr, "cublasxt: cudaHostRegister failed (%s); the matrices "
				"stay pageable\n", cudaGetErrorString(e));
		if (e != cudaSuccess)
			(void)cudaGetLastError(); /* not sticky: clear it */
	}
}

static int xt_loop(const struct bench_opts *o, cublasXtHandle_t handle,
		   const struct host_operands *h, int ngpus)
{
	int failed = 0;

	for (int it = -o->warmup; it < o->niter; it++) {
		double t, residual;

		restore_c(o, h, it);
		t = bench_now();
		if (!cublas_ok(cublasXtDgemm(handle, op(o->transA), op(o->transB), o->m, o->n,
					     o->k, &o->alpha, h->a, h->am, h->b, h->bm, &o->beta,
					     h->c, o->m), "cublasXtDgemm") ||
		    !cuda_ok(cudaDeviceSynchronize(), "cublasxt: cudaDeviceSynchronize"))
			return 1;
		t = bench_now() - t;
		if (it >= 0) {
			residual = residual_of(o, h, h->c);
			bench_print_row(o, 1, ngpus, it, t, o->peak, residual, NULL);
			failed |= residual >= SG_RESIDUAL_BOUND;
		}
	}
	return failed;
}

int bench_run_cublasxt(const struct bench_opts *o)
{
	struct host_operands h = { 0 };
	cublasXtHandle_t handle = NULL;
	int visible = visible_gpus("cublasxt"), ngpus = 0, ret = 1;

	if (!visible)
		return 77;
	if (!sizes_fit_int(o) || !make_operands(o, &h))
		return 1;
	if (cublas_ok(cublasXtCreate(&handle), "cublasXtCreate") &&
	    xt_setup(o, visible, handle, &ngpus)) {
		pin(o, &h, 1);
		ret = xt_loop(o, handle, &h, ngpus);
		pin(o, &h, 0);
	}
	if (handle)
		cublasXtDestroy(handle);
	free_operands(&h);
	return ret;
}
