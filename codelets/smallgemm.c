/*
 * codelets/smallgemm.c — one small tile product C = alpha op(A) op(B) + beta C on the
 * CPU, for the batch codelet (codelets/batch.c) and the single tile task
 * (codelets/gemm.c), by the kernel measured fastest on this machine among those that
 * take it (codelets/calibrate.c; doc/design.md, "Kernel rates measured on the
 * machine"). Three kernels: stargemm's one kernel for every shape (the element type's
 * any_gemm, codelets/smallkernel.c: AVX-512F or AVX2 + FMA), libxsmm's JIT kernel for
 * the shape (libxsmm 1.17: alpha = 1, beta in {0, 1}, op(A) = A, single and double;
 * other beta values scale C first), and the type's BLAS, which takes everything. Sides
 * above 256 (SMALL_SIDE_MAX: the largest calibrated) go to BLAS.
 *
 * A kernel per shape is fast while the shapes are few. Irregular tilings give a shape
 * to nearly every product, and libxsmm's kernels then run from cold code: a batch whose
 * tilings give more than STARGEMM_XSMM_SHAPES shapes (the geometry's one_kernel,
 * src/product.c) leaves libxsmm out where the one kernel takes the product (the
 * calibration measures libxsmm on one shape repeated, which is not that case).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"
#include "calibrate.h"

/* The largest side calibrated (codelets/calibrate.c): the one kernel and libxsmm's
 * take products up to it, BLAS alone beyond. */
#define SMALL_SIDE_MAX 256

#ifdef HAVE_LIBXSMM

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
 * op(A) = A, alpha = 1, sides up to SMALL_SIDE_MAX); -1 when libxsmm has no kernel. */
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
 * to it) with sides up to SMALL_SIDE_MAX where the CPU has its instruction set
 * (AVX-512F or AVX2 + FMA). */
static int one_kernel_takes(int m, int n, int k)
{
	return m <= SMALL_SIDE_MAX && n <= SMALL_SIDE_MAX && k <= SMALL_SIDE_MAX &&
	       stargemm__dgemm_any_usable();
}

/* The kernels that take a product, a bit (1 << kernel) each. libxsmm's takes real
 * products with alpha = 1 and sides up to SMALL_SIDE_MAX, but not a batch of
 * irregular tilings (@p one_kernel) where the one kernel takes it: a JIT kernel per
 * shape is then fetched cold for nearly every product (STARGEMM_XSMM_SHAPES). BLAS
 * takes every product. */
static unsigned takers(const struct stargemm__element *t, int m, int n, int k,
		       double _Complex alpha, int one_kernel)
{
	unsigned can = 1u << STARGEMM__SMALL_BLAS;
	int one = one_kernel_takes(m, n, k);

	if (one)
		can |= 1u << STARGEMM__SMALL_ONE;
#ifdef HAVE_LIBXSMM
	if (!t->is_complex && alpha == 1.0 && m <= SMALL_SIDE_MAX && n <= SMALL_SIDE_MAX &&
	    k <= SMALL_SIDE_MAX && !(one_kernel && one))
		can |= 1u << STARGEMM__SMALL_XSMM;
#else
	(void)t, (void)alpha;
#endif
	return can;
}

enum stargemm__small_kernel stargemm__small_pick(const double *rate, unsigned can)
{
	int best = -1;

	for (int kn = 0; kn < STARGEMM__SMALL_NKERNELS; kn++)
		if ((can >> kn & 1u) && (best < 0 || rate[kn] > rate[best]))
			best = kn;
	return best < 0 ? STARGEMM__SMALL_BLAS : (enum stargemm__small_kernel)best;
}

/* Without measurements (SimGrid, STARGEMM_CALIBRATE=0): the one kernel for irregular
 * tilings and complex products, else libxsmm's, else the one kernel, else BLAS. */
static enum stargemm__small_kernel built_in_order(const struct stargemm__element *t,
						  unsigned can, int one_kernel)
{
	if ((can >> STARGEMM__SMALL_ONE & 1u) && (one_kernel || t->is_complex))
		return STARGEMM__SMALL_ONE;
	if (can >> STARGEMM__SMALL_XSMM & 1u)
		return STARGEMM__SMALL_XSMM;
	return can >> STARGEMM__SMALL_ONE & 1u ? STARGEMM__SMALL_ONE : STARGEMM__SMALL_BLAS;
}

enum stargemm__small_kernel stargemm__small_choice(const struct stargemm__element *t, char ta,
						   int m, int n, int k, double _Complex alpha,
						   int one_kernel)
{
	const struct stargemm__calibration *cal = stargemm__calibration();
	unsigned can = takers(t, m, n, k, alpha, one_kernel);

	(void)ta;   /* op(A) = A^T and A^H are copied out to A first */
	if (!cal->measured)
		return built_in_order(t, can, one_kernel);
	return stargemm__small_pick(
		cal->small[stargemm__cal_type(t->letter)][stargemm__cal_class(m, n, k)], can);
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

void stargemm__small_gemm_by(struct stargemm__small_cache *cache,
			     enum stargemm__small_kernel how, const struct stargemm__element *t,
			     char ta, char tb, int m, int n, int k, double _Complex alpha,
			     const void *a, int lda, const void *b, int ldb,
			     double _Complex beta, void *c, int ldc)
{
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

_Static_assert(sizeof(((struct stargemm__small_cache *)0)->how) == STARGEMM__CAL_SIDES,
	       "a kernel per side class");
_Static_assert(SMALL_SIDE_MAX == 4 << (STARGEMM__CAL_SIDES - 1),
	       "the kernels take the sides calibrated");

/* The cache's kernel per side class for type @p t and this alpha (its cube side's). */
static void small_choices(struct stargemm__small_cache *cache,
			  const struct stargemm__element *t, double _Complex alpha)
{
	for (int i = 0; i < STARGEMM__CAL_SIDES; i++)
		cache->how[i] = (signed char)stargemm__small_choice(t, 'N', 4 << i, 4 << i,
								    4 << i, alpha,
								    cache->one_kernel);
	cache->how_key[0] = t->letter;
	cache->how_key[1] = alpha == 1.0;
	cache->how_key[2] = cache->one_kernel;
}

void stargemm__small_gemm(struct stargemm__small_cache *cache,
			  const struct stargemm__element *t, char ta, char tb, int m, int n,
			  int k, double _Complex alpha, const void *a, int lda, const void *b,
			  int ldb, double _Complex beta, void *c, int ldc)
{
	int alpha_one = alpha == 1.0;
	enum stargemm__small_kernel how = STARGEMM__SMALL_BLAS;

	/* Of the sides up to 256 every kernel takes a product of the cache's type, alpha
	 * and tiling or none does: the choice depends on the side class only, and is made
	 * once per class rather than per product (irregular tilings change shape at nearly
	 * every product). Above 256 only BLAS takes it. */
	if (cache->how_key[0] != t->letter || cache->how_key[1] != alpha_one ||
	    cache->how_key[2] != cache->one_kernel)
		small_choices(cache, t, alpha);
	if (m <= SMALL_SIDE_MAX && n <= SMALL_SIDE_MAX && k <= SMALL_SIDE_MAX)
		how = (enum stargemm__small_kernel)cache->how[stargemm__cal_class(m, n, k)];
	stargemm__small_gemm_by(cache, how, t, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta,
				c, ldc);
}


/* libxsmm initialises itself on first use, and its initialisation calls putenv():
 * from a worker thread, while StarPU-MPI's thread reads the environment inside MPI,
 * that crashed (glibc's environment is not thread-safe). So it is done here, before
 * StarPU starts its threads. */
void stargemm__small_init(void)
{
	const char *isa = stargemm__setting_text(STARGEMM__KERNEL_ISA);
	int limit = STARGEMM__ISA_AVX512;

#ifdef HAVE_LIBXSMM
	libxsmm_init();
#endif
	for (int i = STARGEMM__ISA_NONE; isa && i <= STARGEMM__ISA_AVX512; i++)
		if (strcmp(isa, stargemm__small_isa_name(i)) == 0)
			limit = i;
	if (isa && strcmp(isa, stargemm__small_isa_name(limit)) != 0)
		fprintf(stderr, "stargemm: STARGEMM_KERNEL_ISA='%s': expected avx512, avx2 or "
			"none; the CPU's widest serves\n", isa);
	stargemm__small_isa_limit(limit);
	stargemm__calibrate();
}
