/*
 * codelets/smallgemm.c — one small tile product C = alpha op(A) op(B) + beta C on the
 * CPU, for the batch codelet (codelets/batch.c), by the fastest kernel that takes it.
 * Below ~100 rows a BLAS call spends more time in its interface and packing than in
 * arithmetic; libxsmm's JIT kernels, generated once per shape, do not (bench/kernels.c;
 * doc/performance.md). libxsmm 1.17 generates kernels for alpha = 1, beta in {0, 1},
 * op(A) = A, in single and double precision; other beta values scale C first. Sides
 * above LIBXSMM_SIDE_MAX are not given to libxsmm: it was measured faster up to there
 * (doc/performance.md), not beyond.
 *
 * A kernel per shape is fast while the shapes are few. Irregular tilings give a shape
 * to nearly every product, and then stargemm's one AVX-512 kernel for every shape (the
 * element type's any_gemm: codelets/smallkernel*.c) is faster: a batch whose tilings
 * give more than STARGEMM_XSMM_SHAPES shapes (the geometry's one_kernel, src/product.c)
 * takes it first for what it covers (op(A) = A, sides up to 256). It also takes the
 * real products libxsmm declines (alpha != 1) or all of them without libxsmm
 * (configure), where it beats BLAS, and every complex product it covers (libxsmm has no
 * complex kernels, and a BLAS call per tile was slower from 8^3 to 256^3:
 * bench/kernels.c --complex, doc/performance.md). What none takes goes to the type's
 * BLAS.
 *
 * The kernels take op(A) = A: for op(A) = A^T or A^H, op(A) is copied out first
 * (codelets/transpose.c, into the cache's buffer), rather than leaving the product to
 * BLAS. The batch codelet copies the A tiles that several of its products read once
 * itself (codelets/batch.c) and passes the copies as op(A) = A.
 *
 * A batch usually repeats few shapes, so the caller keeps the last kernel for each beta
 * in a struct stargemm__small_cache and the registry is consulted on a change of shape
 * only.
 */
#include "config.h"

#ifdef HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include <complex.h>
#include <stdlib.h>

#include "../src/internal.h"

#ifdef HAVE_LIBXSMM
#define LIBXSMM_SIDE_MAX 256

/* libxsmm's kernel for this shape in type @p letter ('s' or 'd'), from the cache or
 * the registry; NULL when libxsmm has none (the caller then takes BLAS). The cache
 * keeps one shape per beta (0 and 1): a C tile's first update (beta 0) and the others
 * alternate, and each change went to the registry (tiles of 5: 7% of a repetition). */
static void (*kernel(struct stargemm__small_cache *cache, char letter, char tb, int m,
		     int n, int k, int lda, int ldb, int ldc, int beta_one))(void)
{
	const int key[8] = { m, n, k, lda, ldb, ldc, tb == 'T', letter };
	int flags = LIBXSMM_GEMM_FLAGS('N', tb), prefetch = LIBXSMM_PREFETCH_NONE;
	int *kept = cache->key[beta_one];
	int same = cache->fn[beta_one] != NULL;

	for (int i = 0; i < 8 && same; i++)
		same = kept[i] == key[i];
	if (same)
		return cache->fn[beta_one];
	for (int i = 0; i < 8; i++)
		kept[i] = key[i];
	if (letter == 'd') {
		double alpha = 1.0, beta = beta_one ? 1.0 : 0.0;

		cache->fn[beta_one] = (void (*)(void))libxsmm_dmmdispatch(
			m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
	} else {
		float alpha = 1.0f, beta = beta_one ? 1.0f : 0.0f;

		cache->fn[beta_one] = (void (*)(void))libxsmm_smmdispatch(
			m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
	}
	return cache->fn[beta_one];
}

/* The product by libxsmm's kernel, for a case stargemm__small_choice() gave it (real,
 * op(A) = A, alpha = 1, sides up to LIBXSMM_SIDE_MAX); -1 when libxsmm has no kernel. */
static int by_libxsmm(struct stargemm__small_cache *cache, const struct stargemm__element *t,
		      char tb, int m, int n, int k, const void *a, int lda, const void *b,
		      int ldb, double beta, void *c, int ldc)
{
	void (*fn)(void);
	int beta_one = beta != 0.0;

	fn = kernel(cache, t->letter, tb, m, n, k, lda, ldb, ldc, beta_one);
	if (!fn)
		return -1;
	/* libxsmm knows beta 0 and 1 only: other values scale C first. */
	if (beta != 0.0 && beta != 1.0)
		t->scale(c, ldc, m, n, beta);
	if (t->letter == 'd')
		((libxsmm_dmmfunction)fn)(a, b, c);
	else
		((libxsmm_smmfunction)fn)(a, b, c);
	return 0;
}
#endif

/* The one kernel for every shape takes products of every type (op(A) = A, or copied out
 * to it) with sides up to SMALL_SIDE_MAX (measured as fast as libxsmm's kernels up to
 * there, and faster than OpenBLAS: doc/performance.md), on CPUs with AVX-512. */
#define SMALL_SIDE_MAX 256

static int one_kernel_takes(int m, int n, int k)
{
	return m <= SMALL_SIDE_MAX && n <= SMALL_SIDE_MAX && k <= SMALL_SIDE_MAX &&
	       stargemm__dgemm_any_usable();
}

enum stargemm__small_kernel stargemm__small_choice(const struct stargemm__element *t, char ta,
						   int m, int n, int k, double _Complex alpha,
						   int one_kernel)
{
	int one = one_kernel_takes(m, n, k);

	(void)ta;   /* op(A) = A^T and A^H are copied out to A first */
	if (one && (one_kernel || t->is_complex))
		return STARGEMM__SMALL_ONE;
#ifdef HAVE_LIBXSMM
	if (!t->is_complex && alpha == 1.0 && m <= LIBXSMM_SIDE_MAX &&
	    n <= LIBXSMM_SIDE_MAX && k <= LIBXSMM_SIDE_MAX)
		return STARGEMM__SMALL_XSMM;
#endif
	return one ? STARGEMM__SMALL_ONE : STARGEMM__SMALL_BLAS;
}

/* op(A) (@p ta 'T' or 'C') of the k x m A at @p a copied to the cache's buffer as an
 * m x k array; NULL when out of memory. */
static const void *copied_op(struct stargemm__small_cache *cache,
			     const struct stargemm__element *t, char ta, int m, int k,
			     const void *a, int lda)
{
	size_t bytes = (size_t)m * (size_t)k * t->size;

	if (bytes > cache->opa_bytes) {
		free(cache->opa);
		cache->opa = stargemm__fault(STARGEMM_FAULT_SCRATCH) ? NULL : malloc(bytes);
		cache->opa_bytes = cache->opa ? bytes : 0;
		if (!cache->opa)
			return NULL;
	}
	stargemm__op_copy(t->size, ta == 'C' && t->is_complex, m, k, a, lda, cache->opa);
	return cache->opa;
}

void stargemm__small_cache_free(struct stargemm__small_cache *cache)
{
	free(cache->opa);
	cache->opa = NULL;
	cache->opa_bytes = 0;
}

void stargemm__small_gemm(struct stargemm__small_cache *cache,
			  const struct stargemm__element *t, char ta, char tb, int m, int n,
			  int k, double _Complex alpha, const void *a, int lda, const void *b,
			  int ldb, double _Complex beta, void *c, int ldc)
{
	enum stargemm__small_kernel how = stargemm__small_choice(t, ta, m, n, k, alpha,
								 cache->one_kernel);
	const void *opa = how == STARGEMM__SMALL_BLAS || ta == 'N' ? a
			  : copied_op(cache, t, ta, m, k, a, lda);

	if (!opa)   /* no memory for op(A): BLAS takes it as it is */
		how = STARGEMM__SMALL_BLAS;
	else if (opa != a)
		a = opa, lda = m, ta = 'N';
#ifdef HAVE_LIBXSMM
	if (how == STARGEMM__SMALL_XSMM &&
	    by_libxsmm(cache, t, tb, m, n, k, a, lda, b, ldb, creal(beta), c, ldc) == 0)
		return;
#endif
	/* the one kernel, also for a shape libxsmm has no kernel for, where it applies */
	if (how != STARGEMM__SMALL_BLAS && one_kernel_takes(m, n, k))
		t->any_gemm(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
	else
		t->cpu_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
