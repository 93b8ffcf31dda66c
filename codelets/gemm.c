/*
 * codelets/gemm.c — one tile update C = alpha op(A) op(B) + beta C, on CPU and CUDA, in
 * the element type of the task (codelets/element.c: s, d, c or z).
 *
 * CPU: the kernel measured fastest on this machine for a tile of its size
 * (codelets/smallgemm.c, codelets/calibrate.c): above 256 a side, and wherever it was
 * measured faster, the type's cblas_?gemm (one BLAS thread per StarPU worker). CUDA: its
 * cublas?gemm on the worker's cuBLAS handle and stream, asynchronous
 * (STARPU_CUDA_ASYNC); every status is checked and a failure is reported to the caller
 * of stargemm_wait() as -EIO rather than aborting. Two codelets share the kernels and
 * one performance model (a regression on the multiply-adds weighed by type,
 * codelets/model.c, so that simulated runs know tiles of any shape): the usual one with
 * C in RW mode, and the overwrite one (beta = 0) with C in W mode so that StarPU
 * neither transfers nor reads the old C. The model's rate is read back for the
 * stationary choice: a GPU's, and a CPU core's when no kernel was measured
 * (stargemm__gemm_model_rate()).
 *
 * Arguments (STARPU_VALUE, in order): char type (its letter; first, as the model reads
 * it), char transa, char transb ('N', 'T' or 'C'), double _Complex alpha, beta. Tile
 * dimensions come from the data interfaces.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/internal.h"

#if defined(STARPU_USE_CUDA) && !defined(STARPU_SIMGRID)
#include <starpu_cublas_v2.h>
#endif

struct gemm_args {
	const struct stargemm__element *type;
	char ta, tb;
	double _Complex alpha, beta;
	int m, n, k;
	int lda, ldb, ldc;
};

static void unpack(void *buffers[], void *cl_arg, struct gemm_args *g)
{
	char type;

	starpu_codelet_unpack_args(cl_arg, &type, &g->ta, &g->tb, &g->alpha, &g->beta);
	g->type = stargemm__element(type);
	g->m = (int)STARPU_MATRIX_GET_NX(buffers[2]);
	g->n = (int)STARPU_MATRIX_GET_NY(buffers[2]);
	g->k = (int)(g->ta == 'N' ? STARPU_MATRIX_GET_NY(buffers[0])
				  : STARPU_MATRIX_GET_NX(buffers[0]));
	g->lda = (int)STARPU_MATRIX_GET_LD(buffers[0]);
	g->ldb = (int)STARPU_MATRIX_GET_LD(buffers[1]);
	g->ldc = (int)STARPU_MATRIX_GET_LD(buffers[2]);
}

/* Whether this kernel is the one STARGEMM_FAULT fails (src/fault.c); if so its failure
 * is reported as that of the library's call @p prefix, @p letter, "gemm". */
static int injected_fault(const char *prefix, char letter)
{
	char msg[80];

	if (!stargemm__fault(STARGEMM_FAULT_KERNEL))
		return 0;
	snprintf(msg, sizeof(msg), "%s%cgemm: injected fault (STARGEMM_FAULT)", prefix, letter);
	stargemm__task_failed(msg);
	return 1;
}

static void gemm_cpu(void *buffers[], void *cl_arg)
{
	struct stargemm__small_cache cache = { 0 };   /* a regular tiling: one_kernel 0 */
	struct gemm_args g;

	unpack(buffers, cl_arg, &g);
	if (injected_fault("cblas_", g.type->letter) ||
	    stargemm__blas_refuses("cblas_", g.type->letter, buffers, g.ta, g.tb, g.m, g.n, g.k))
		return;
	if (stargemm__fault(STARGEMM_FAULT_BLAS)) {   /* a call BLAS refuses: lda = 0 */
		g.type->cpu_gemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha,
				 (const void *)STARPU_MATRIX_GET_PTR(buffers[0]), 0,
				 (const void *)STARPU_MATRIX_GET_PTR(buffers[1]), g.ldb, g.beta,
				 (void *)STARPU_MATRIX_GET_PTR(buffers[2]), g.ldc);
		return;
	}
	stargemm__small_gemm(&cache, g.type, g.ta, g.tb, g.m, g.n, g.k, g.alpha,
			     (const void *)STARPU_MATRIX_GET_PTR(buffers[0]), g.lda,
			     (const void *)STARPU_MATRIX_GET_PTR(buffers[1]), g.ldb, g.beta,
			     (void *)STARPU_MATRIX_GET_PTR(buffers[2]), g.ldc);
	stargemm__small_cache_free(&cache);
}

#if defined(STARPU_SIMGRID)
/* In SimGrid mode kernels are not run: the task lasts what the performance model
 * says. StarPU 1.3 still needs a CUDA function to consider CUDA workers. */
static void gemm_cuda(void *buffers[], void *cl_arg)
{
}
#define HAVE_GEMM_CUDA 1
#elif defined(STARPU_USE_CUDA)
#define HAVE_GEMM_CUDA 1
static void gemm_cuda(void *buffers[], void *cl_arg)
{
	struct gemm_args g;
	int st;

	unpack(buffers, cl_arg, &g);
	if (injected_fault("cublas", g.type->letter - 'a' + 'A') ||
	    stargemm__blas_refuses("cublas", g.type->letter - 'a' + 'A', buffers, g.ta, g.tb,
				   g.m, g.n, g.k))
		return;
	st = g.type->cuda_gemm(starpu_cublas_get_local_handle(), g.ta, g.tb, g.m, g.n, g.k,
			       g.alpha, (const void *)STARPU_MATRIX_GET_PTR(buffers[0]), g.lda,
			       (const void *)STARPU_MATRIX_GET_PTR(buffers[1]), g.ldb, g.beta,
			       (void *)STARPU_MATRIX_GET_PTR(buffers[2]), g.ldc);
	if (st != 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "cublas%cgemm(%c%c, %d x %d x %d) returned status %d",
			 g.type->letter - 'a' + 'A', g.ta, g.tb, g.m, g.n, g.k, st);
		stargemm__task_failed(msg);
	}
}
#endif

/* Duration a * (m n k)^b + c, or the history of the tile shapes (codelets/model.c). */
static struct starpu_perfmodel gemm_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_dgemm",
	.size_base = stargemm__model_gemm_work,
	.footprint = stargemm__model_typed_footprint,
};

/* The regressions of StarPU's stored model of the tile product, as last read from
 * its file (StarPU writes the file when it shuts down: one read per change, where
 * each device's rate read it again at every choosing product). Index 0: a CPU
 * worker; 1 + d: CUDA device d. Used from the thread that calls stargemm only. */
#define STORED_ARCHS (1 + STARPU_MAXCUDADEVS)
static struct {
	int loaded;
	char path[1024];
	struct timespec mtime;
	off_t size;
	int valid[STORED_ARCHS];
	double a[STORED_ARCHS], b[STORED_ARCHS], c[STORED_ARCHS];
} stored;

/* Read the stored model into @p stored when its file @p path changed; 0, or -1 when
 * there is none. */
static int read_stored(const char *path)
{
	struct starpu_perfmodel model;
	struct stat st;

	if (stat(path, &st) != 0 || access(path, R_OK) != 0)
		return -1;
	if (stored.loaded && !strcmp(path, stored.path) && st.st_size == stored.size &&
	    st.st_mtim.tv_sec == stored.mtime.tv_sec && st.st_mtim.tv_nsec == stored.mtime.tv_nsec)
		return 0;
	memset(&model, 0, sizeof(model));
	if (starpu_perfmodel_load_symbol(gemm_model.symbol, &model) != 0)
		return -1;
	for (int x = 0; x < STORED_ARCHS; x++) {
		struct starpu_perfmodel_per_arch *arch = starpu_perfmodel_get_model_per_devices(
			&model, 0, x == 0 ? STARPU_CPU_WORKER : STARPU_CUDA_WORKER,
			x == 0 ? 0 : x - 1, 1, -1);

		stored.valid[x] = arch && arch->regression.nl_valid;
		stored.a[x] = stored.valid[x] ? arch->regression.a : 0.0;
		stored.b[x] = stored.valid[x] ? arch->regression.b : 0.0;
		stored.c[x] = stored.valid[x] ? arch->regression.c : 0.0;
	}
	starpu_perfmodel_unload_model(&model);
	stored.loaded = 1;
	snprintf(stored.path, sizeof(stored.path), "%s", path);
	stored.mtime = st.st_mtim;
	stored.size = st.st_size;
	return 0;
}

/* The flops per second of one CPU worker (@p cuda_device < 0) or of CUDA device
 * @p cuda_device on an m x n x k tile product of @p t as StarPU's performance model of
 * the tile product (gemm_model, stored under its symbol) predicts it from its
 * non-linear regression, 0 when there is no stored model or no valid regression for
 * that device. The file is read again only when it changed, without a message when
 * it is missing; for the stationary model's rank rate (src/choice.c). */
double stargemm__gemm_model_rate(const struct stargemm__element *t, int cuda_device, double m,
				 double n, double k)
{
	char path[1024];
	double work = m * n * k * t->model_weight, us;
	int x = cuda_device < 0 ? 0 : 1 + cuda_device;

	starpu_perfmodel_get_model_path(gemm_model.symbol, path, sizeof(path));
	if (x >= STORED_ARCHS || read_stored(path) != 0 || !stored.valid[x] || work <= 0.0)
		return 0.0;
	us = stored.a[x] * pow(work, stored.b[x]) + stored.c[x];
	return us > 0.0 ? t->fma_flops * m * n * k / (us * 1e-6) : 0.0;
}

struct starpu_codelet stargemm_gemm_cl = {
	.name = "dgemm",
	.cpu_funcs = { gemm_cpu },
#ifdef HAVE_GEMM_CUDA
	.cuda_funcs = { gemm_cuda },
	.cuda_flags = { STARPU_CUDA_ASYNC },
#endif
	.nbuffers = 3,
	.modes = { STARPU_R, STARPU_R, STARPU_RW },
	.model = &gemm_model,
};

struct starpu_codelet stargemm_gemm_overwrite_cl = {
	.name = "dgemm",
	.cpu_funcs = { gemm_cpu },
#ifdef HAVE_GEMM_CUDA
	.cuda_funcs = { gemm_cuda },
	.cuda_flags = { STARPU_CUDA_ASYNC },
#endif
	.nbuffers = 3,
	.modes = { STARPU_R, STARPU_R, STARPU_W },
	.model = &gemm_model,
};
