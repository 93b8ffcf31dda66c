/*
 * codelets/smallgemm.c — one small tile product C = alpha op(A) op(B) + beta C on the
 * CPU, for the batch codelet (codelets/batch.c). Below ~100 rows a BLAS call spends
 * more time in its interface and packing than in arithmetic; libxsmm's JIT kernels,
 * generated once per shape, do not (bench/kernels.c: 3.6x OpenBLAS at 23^3, 7x at 5^3,
 * doc/performance.md). libxsmm 1.17 generates kernels for alpha = 1, beta in {0, 1},
 * op(A) = A; other beta values scale C first, and alpha != 1 or op(A) = A^T take BLAS.
 * Sides above LIBXSMM_SIDE_MAX take BLAS too: libxsmm was measured faster up to 256
 * (doc/performance.md), not beyond. Without libxsmm (configure) every product takes
 * BLAS.
 *
 * A batch usually repeats few shapes, so the caller keeps the last kernel in a
 * struct stargemm__small_cache and the registry is consulted on a change of shape only.
 */
#include "config.h"

#include <cblas.h>
#ifdef HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include "../src/internal.h"

#ifdef HAVE_LIBXSMM
#define LIBXSMM_SIDE_MAX 256

/* libxsmm's kernel for this shape, from the cache or the registry; NULL when libxsmm
 * has none (the caller then takes BLAS). */
static libxsmm_dmmfunction kernel(struct stargemm__small_cache *cache, char tb, int m,
				  int n, int k, int lda, int ldb, int ldc, int beta_one)
{
	const int key[8] = { m, n, k, lda, ldb, ldc, beta_one, tb == 'T' };
	double alpha = 1.0, beta = beta_one ? 1.0 : 0.0;
	int flags = LIBXSMM_GEMM_FLAGS('N', tb), prefetch = LIBXSMM_PREFETCH_NONE;
	int same = cache->fn != NULL;

	for (int i = 0; i < 8 && same; i++)
		same = cache->key[i] == key[i];
	if (same)
		return (libxsmm_dmmfunction)cache->fn;
	for (int i = 0; i < 8; i++)
		cache->key[i] = key[i];
	cache->fn = (void (*)(void))libxsmm_dmmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha,
							 &beta, &flags, &prefetch);
	return (libxsmm_dmmfunction)cache->fn;
}

/* C *= beta over the m x n tile (libxsmm knows beta 0 and 1 only). */
static void scale_tile(double *c, int ldc, int m, int n, double beta)
{
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++)
			c[i + (int64_t)j * ldc] *= beta;
}

static int by_libxsmm(struct stargemm__small_cache *cache, char ta, char tb, int m, int n,
		      int k, double alpha, const double *a, int lda, const double *b, int ldb,
		      double beta, double *c, int ldc)
{
	libxsmm_dmmfunction fn;
	int beta_one = beta != 0.0;

	if (ta != 'N' || alpha != 1.0 || m > LIBXSMM_SIDE_MAX || n > LIBXSMM_SIDE_MAX ||
	    k > LIBXSMM_SIDE_MAX)
		return -1;
	fn = kernel(cache, tb, m, n, k, lda, ldb, ldc, beta_one);
	if (!fn)
		return -1;
	if (beta != 0.0 && beta != 1.0)
		scale_tile(c, ldc, m, n, beta);
	fn(a, b, c);
	return 0;
}
#endif

void stargemm__small_dgemm(struct stargemm__small_cache *cache, char ta, char tb, int m,
			   int n, int k, double alpha, const double *a, int lda,
			   const double *b, int ldb, double beta, double *c, int ldc)
{
#ifdef HAVE_LIBXSMM
	if (by_libxsmm(cache, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == 0)
		return;
#else
	(void)cache;
#endif
	cblas_dgemm(CblasColMajor, ta == 'N' ? CblasNoTrans : CblasTrans,
		    tb == 'N' ? CblasNoTrans : CblasTrans, m, n, k, alpha, a, lda, b, ldb, beta,
		    c, ldc);
}

/* libxsmm initialises itself on first use, and its initialisation calls putenv():
 * from a worker thread, while StarPU-MPI's thread reads the environment inside MPI,
 * that crashed (glibc's environment is not thread-safe). So it is done here, before
 * StarPU starts its threads. */
void stargemm__small_init(void)
{
#ifdef HAVE_LIBXSMM
	libxsmm_init();
#endif
}
