/*
 * codelets/smallkernel_complex.c — one double-complex kernel for small tile products of
 * any shape, C (m x n) = alpha A op(B) + beta C, A not transposed, op(B) = B, B^T or
 * B^H, on CPUs with AVX-512.
 *
 * Why: libxsmm 1.17 has no complex kernels, so a complex tile product in a batch was one
 * cblas_zgemm call, whose interface and packing cost more than the arithmetic of a tile
 * of 23: stargemm was only 1.1-1.2x libDBCSR there (doc/performance.md), against 2.7x in
 * double with the real kernels (codelets/smallkernel.c).
 *
 * How: the real kernel's blocking on interleaved complex numbers. A vector holds 4
 * complex doubles (re, im, re, im, ...); C is cut into blocks of at most 4 vectors
 * (16 rows; the last vector of a column masked) by 5 to 8 columns, one accumulator per
 * vector and column. For each k the block loads its vectors of A's column, a and the
 * pairs swapped and signed, s = (-im, re, ...) (for B^H: (im, -re, ...)), and for each
 * column broadcasts op(B)'s element's real part r and imaginary part i:
 * acc += a r + s i is the complex a b (or a conj(b)) in two fused multiply-adds. alpha
 * and beta multiply the same way at the end. The block's row and column counts are
 * constants at each call site (the switches below), so the loops unroll and the
 * accumulators stay in registers. beta = 0 does not read C. Compiled for AVX-512F
 * through a target attribute; stargemm__dgemm_any_usable() says whether the CPU has it
 * (the same test for every kernel). Declared in src/internal.h.
 */
#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define MAXV 4	/* vectors of 4 complex doubles in a block's column: at most 16 rows */
#define MAXC 8	/* columns in a block */

#define AVX512 __attribute__((target("avx512f")))

/* The columns of a block of nv vectors: nv * columns accumulators and 2 nv vectors of A
 * (a and s) leave two registers for the broadcasts among the 32. */
static inline __attribute__((always_inline)) int block_columns(int nv)
{
	return nv == 4 ? 5 : nv == 3 ? 6 : 8;
}

/* x's pairs swapped and multiplied by @p sign: (x1 s0, x0 s1, x3 s2, x2 s3, ...). */
static inline __attribute__((always_inline)) AVX512 __m512d swapped(__m512d x, __m512d sign)
{
	return _mm512_mul_pd(_mm512_permute_pd(x, 0x55), sign);
}

/* The complex product x z, z = (re, im) broadcast in @p re and @p im. */
static inline __attribute__((always_inline)) AVX512 __m512d times(__m512d x, __m512d re,
								  __m512d im, __m512d isign)
{
	return _mm512_fmadd_pd(swapped(x, isign), im, _mm512_mul_pd(x, re));
}

/* One block of C: rows [0, rows), 4 (nv - 1) < rows <= 4 nv, columns [0, nc), at @p c
 * (doubles: element i's real part at c[2 i]), from A's rows at @p a and op(B)'s columns
 * at @p b: op(B)(p, j) is the complex number at b + 2 (p bk + j bj). sign is
 * (-1, 1, ...) for B and B^T, (1, -1, ...) for B^H. */
static inline __attribute__((always_inline)) AVX512 void
block(int nv, int nc, int rows, int k, const double *alpha, const double *a, int lda,
      const double *b, ptrdiff_t bk, ptrdiff_t bj, __m512d sign, const double *beta, double *c,
      int ldc)
{
	__mmask8 last = (__mmask8)(0xffu >> (2 * (4 * nv - rows)));
	__m512d acc[MAXV][MAXC];

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[v][j] = _mm512_setzero_pd();
	for (int p = 0; p < k; p++) {
		const double *ap = a + 2 * (ptrdiff_t)p * lda, *bp = b + 2 * p * bk;
		__m512d av[MAXV], sv[MAXV];

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			av[v] = v < nv - 1 ? _mm512_loadu_pd(ap + 8 * v)
					   : _mm512_maskz_loadu_pd(last, ap + 8 * v);
			sv[v] = swapped(av[v], sign);
		}
#pragma GCC unroll 8
		for (int j = 0; j < nc; j++) {
			__m512d re = _mm512_set1_pd(bp[2 * j * bj]);
			__m512d im = _mm512_set1_pd(bp[2 * j * bj + 1]);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				acc[v][j] = _mm512_fmadd_pd(sv[v], im,
							    _mm512_fmadd_pd(av[v], re, acc[v][j]));
		}
	}
	/* For alpha and beta the sign of the plain product: (-1, 1, ...). */
	__m512d isign = _mm512_set_pd(1, -1, 1, -1, 1, -1, 1, -1);
	__m512d ar = _mm512_set1_pd(alpha[0]), ai = _mm512_set1_pd(alpha[1]);
	__m512d br = _mm512_set1_pd(beta[0]), bi = _mm512_set1_pd(beta[1]);
	int read_c = beta[0] != 0.0 || beta[1] != 0.0;

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++) {
		double *cj = c + 2 * (ptrdiff_t)j * ldc;

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			__mmask8 mask = v < nv - 1 ? 0xff : last;
			__m512d r = times(acc[v][j], ar, ai, isign);

			if (read_c)
				r = _mm512_add_pd(r, times(_mm512_maskz_loadu_pd(mask, cj + 8 * v),
							   br, bi, isign));
			_mm512_mask_storeu_pd(cj + 8 * v, mask, r);
		}
	}
}

/* Rows [0, rows) of C, all its columns, in blocks of nv vectors (a constant below) by
 * block_columns(nv) columns; the last, narrower block is its own unrolled copy. */
static inline __attribute__((always_inline)) AVX512 void
row_block(int nv, int rows, int n, int k, const double *alpha, const double *a, int lda,
	  const double *b, ptrdiff_t bk, ptrdiff_t bj, __m512d sign, const double *beta,
	  double *c, int ldc)
{
	const int nc = block_columns(nv);
	int j = 0;

	for (; j + nc <= n; j += nc)
		block(nv, nc, rows, k, alpha, a, lda, b + 2 * j * bj, bk, bj, sign, beta,
		      c + 2 * (ptrdiff_t)j * ldc, ldc);
	b += 2 * j * bj;
	c += 2 * (ptrdiff_t)j * ldc;
	switch (n - j) {
	case 0: break;
	case 1: block(nv, 1, rows, k, alpha, a, lda, b, bk, bj, sign, beta, c, ldc); break;
	case 2: block(nv, 2, rows, k, alpha, a, lda, b, bk, bj, sign, beta, c, ldc); break;
	case 3: block(nv, 3, rows, k, alpha, a, lda, b, bk, bj, sign, beta, c, ldc); break;
	case 4: block(nv, 4, rows, k, alpha, a, lda, b, bk, bj, sign, beta, c, ldc); break;
	case 5: block(nv, 5 < nc ? 5 : 1, rows, k, alpha, a, lda, b, bk, bj, sign, beta, c, ldc); break;
	case 6: block(nv, 6 < nc ? 6 : 1, rows, k, alpha, a, lda, b, bk, bj, sign, beta, c, ldc); break;
	default: block(nv, 7 < nc ? 7 : 1, rows, k, alpha, a, lda, b, bk, bj, sign, beta, c, ldc); break;
	}
}

/* The row blocks' sizes: as few blocks of at most 16 rows as cover m, of equal
 * multiples of 4, each by the copy for its vectors. @p alpha and @p beta are complex
 * numbers as (re, im) pairs; a, b and c hold interleaved complex doubles. */
AVX512 void stargemm__zgemm_any(char tb, int m, int n, int k, const double *alpha,
				const void *a, int lda, const void *b, int ldb,
				const double *beta, void *c, int ldc)
{
	/* op(B)(p, j) = B(p, j) = b[p + j ldb], or B(j, p) = b[j + p ldb] (conjugated for 'C') */
	ptrdiff_t bk = tb == 'N' ? 1 : ldb, bj = tb == 'N' ? ldb : 1;
	__m512d sign = tb == 'C' ? _mm512_set_pd(-1, 1, -1, 1, -1, 1, -1, 1)
				 : _mm512_set_pd(1, -1, 1, -1, 1, -1, 1, -1);
	int nblocks = (m + 4 * MAXV - 1) / (4 * MAXV);
	int height = ((m + nblocks - 1) / nblocks + 3) / 4 * 4;
	const double *ad = a, *bd = b;
	double *cd = c;

	for (int i = 0; i < m; i += height) {
		int rows = m - i < height ? m - i : height;
		const double *ai = ad + 2 * i;
		double *ci = cd + 2 * i;

		switch ((rows + 3) / 4) {
		case 4: row_block(4, rows, n, k, alpha, ai, lda, bd, bk, bj, sign, beta, ci, ldc); break;
		case 3: row_block(3, rows, n, k, alpha, ai, lda, bd, bk, bj, sign, beta, ci, ldc); break;
		case 2: row_block(2, rows, n, k, alpha, ai, lda, bd, bk, bj, sign, beta, ci, ldc); break;
		default: row_block(1, rows, n, k, alpha, ai, lda, bd, bk, bj, sign, beta, ci, ldc); break;
		}
	}
}

#else

void stargemm__zgemm_any(char tb, int m, int n, int k, const double *alpha, const void *a,
			 int lda, const void *b, int ldb, const double *beta, void *c, int ldc)
{
}

#endif
