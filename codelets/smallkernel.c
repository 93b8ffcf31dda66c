/*
 * codelets/smallkernel.c — one double-precision kernel for small tile products of any
 * shape, C (m x n) = alpha A op(B) + beta C, A not transposed, on CPUs with AVX-512.
 *
 * Why: libxsmm generates one kernel per shape (m, n, k and leading dimensions). On a
 * regular tiling that is a handful of kernels, hot in the instruction cache, and they
 * are fast. Irregular tilings, the block-sparse case of quantum chemistry (tiles of
 * atoms and shells), give a new shape to nearly every product: tiles of 20-60 rows
 * made libxsmm generate about 7000 kernels (74 MB of code) for 11,000 products, and
 * every product ran a kernel fetched cold from memory, at half the rate of a regular
 * tiling with the same flops (doc/performance.md). This kernel is one piece of code
 * for every shape: the loops take m, n and k at run time.
 *
 * How: C is cut into blocks of 16 rows (two vectors of 8 doubles; the last vector of
 * a column masked) by NR = 6 columns, 12 accumulators in registers; for each k the
 * block loads two vectors of A's column and broadcasts six elements of op(B)'s row.
 * A block of at most 8 rows uses one vector. The block's row and column counts are
 * constants at each call site below (the switch in column_block()), so the compiler
 * unrolls the column loop and keeps the accumulators in registers. beta = 0 does not
 * read C (a C of NaN is overwritten). Compiled for AVX-512F through a target
 * attribute, whatever the build's flags: stargemm__dgemm_any_usable() says whether the
 * CPU running the program has it. Depends on nothing else in stargemm (bench/kernels.c
 * compiles it alone); declared in src/internal.h.
 */
#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define MAXV 4	/* vectors of 8 doubles in a block's column: blocks of at most 32 rows */
#define MAXC 8	/* columns in a block */

#define AVX512 __attribute__((target("avx512f")))

/* The columns of a block of nv vectors: nv * columns accumulators, at most 24, leave
 * registers for A's nv vectors among the 32. */
static inline __attribute__((always_inline)) int block_columns(int nv)
{
	return nv == 4 ? 6 : 8;
}

/* One block of C: rows [0, rows), 8 (nv - 1) < rows <= 8 nv, columns [0, nc), at @p c,
 * from A's rows at @p a and op(B)'s columns at @p b: op(B)(p, j) is b[p bk + j bj]. nv
 * and nc are constants at every call site, so the loops over them unroll and the
 * accumulators stay in registers. */
static inline __attribute__((always_inline)) AVX512 void block(int nv, int nc, int rows, int k,
							       double alpha, const double *a,
							       int lda, const double *b,
							       ptrdiff_t bk, ptrdiff_t bj,
							       double beta, double *c, int ldc)
{
	__mmask8 last = (__mmask8)(0xffu >> (8 * nv - rows));
	__m512d acc[MAXV][MAXC];

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[v][j] = _mm512_setzero_pd();
	for (int p = 0; p < k; p++) {
		const double *ap = a + (ptrdiff_t)p * lda, *bp = b + p * bk;
		__m512d av[MAXV];

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			av[v] = v < nv - 1 ? _mm512_loadu_pd(ap + 8 * v)
					   : _mm512_maskz_loadu_pd(last, ap + 8 * v);
#pragma GCC unroll 8
		for (int j = 0; j < nc; j++) {
			__m512d bv = _mm512_set1_pd(bp[j * bj]);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				acc[v][j] = _mm512_fmadd_pd(av[v], bv, acc[v][j]);
		}
	}
	__m512d va = _mm512_set1_pd(alpha), vb = _mm512_set1_pd(beta);

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++) {
		double *cj = c + (ptrdiff_t)j * ldc;

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			__mmask8 mask = v < nv - 1 ? 0xff : last;
			__m512d r = _mm512_mul_pd(va, acc[v][j]);

			if (beta != 0.0)
				r = _mm512_fmadd_pd(vb, _mm512_maskz_loadu_pd(mask, cj + 8 * v), r);
			_mm512_mask_storeu_pd(cj + 8 * v, mask, r);
		}
	}
}

/* Rows [0, rows) of C, all its columns, in blocks of nv vectors (a constant below) by
 * block_columns(nv) columns; the last, narrower block is its own unrolled copy. */
static inline __attribute__((always_inline)) AVX512 void row_block(int nv, int rows, int n,
								   int k, double alpha,
								   const double *a, int lda,
								   const double *b, ptrdiff_t bk,
								   ptrdiff_t bj, double beta,
								   double *c, int ldc)
{
	const int nc = block_columns(nv);
	int j = 0;

	for (; j + nc <= n; j += nc)
		block(nv, nc, rows, k, alpha, a, lda, b + j * bj, bk, bj, beta,
		      c + (ptrdiff_t)j * ldc, ldc);
	b += j * bj;
	c += (ptrdiff_t)j * ldc;
	switch (n - j) {
	case 0: break;
	case 1: block(nv, 1, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	case 2: block(nv, 2, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	case 3: block(nv, 3, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	case 4: block(nv, 4, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	case 5: block(nv, 5, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	case 6: block(nv, 6 < nc ? 6 : 1, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	default: block(nv, 7 < nc ? 7 : 1, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	}
}

/* The row blocks' sizes: as few blocks of at most 32 rows as cover m, of equal
 * multiples of 8 (40 rows: 24 + 16, not 32 + 8), each by the copy for its vectors. */
AVX512 void stargemm__dgemm_any(char tb, int m, int n, int k, double alpha, const double *a,
				int lda, const double *b, int ldb, double beta, double *c,
				int ldc)
{
	/* op(B)(p, j) = B(p, j) = b[p + j ldb], or B(j, p) = b[j + p ldb] */
	ptrdiff_t bk = tb == 'N' ? 1 : ldb, bj = tb == 'N' ? ldb : 1;
	int nblocks = (m + 8 * MAXV - 1) / (8 * MAXV);
	int height = ((m + nblocks - 1) / nblocks + 7) / 8 * 8;

	for (int i = 0; i < m; i += height) {
		int rows = m - i < height ? m - i : height;

		switch ((rows + 7) / 8) {
		case 4: row_block(4, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		case 3: row_block(3, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		case 2: row_block(2, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		default: row_block(1, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		}
	}
}

int stargemm__dgemm_any_usable(void)
{
	return __builtin_cpu_supports("avx512f") != 0;   /* 0 or 1 */
}

#else

void stargemm__dgemm_any(char tb, int m, int n, int k, double alpha, const double *a, int lda,
			 const double *b, int ldb, double beta, double *c, int ldc)
{
}

int stargemm__dgemm_any_usable(void)
{
	return 0;
}

#endif
