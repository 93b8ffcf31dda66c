/*
 * codelets/smallkernel_complex_single.c — the single-complex kernel for small tile
 * products of any shape, C (m x n) = alpha A op(B) + beta C, A not transposed, op(B) =
 * B, B^T or B^H, on CPUs with AVX-512: codelets/smallkernel_complex.c's kernel for
 * complex floats.
 *
 * Why: as in double complex, libxsmm 1.17 has no complex kernels and a cblas_cgemm call
 * per tile product costs more than the arithmetic of a small tile: stargemm was only
 * 1.08x libDBCSR on tiles of 23 in single complex (doc/performance.md).
 *
 * How: the double-complex kernel's blocking with vectors of 8 complex floats: C is cut
 * into blocks of at most 4 vectors (32 rows; the last vector of a column masked) by 5 to
 * 8 columns, one accumulator per vector and column; for each k, a (A's column) and s (its
 * pairs swapped and signed) times the real and imaginary parts of op(B)'s element,
 * broadcast, in two fused multiply-adds. beta = 0 does not read C. Compiled for AVX-512F
 * through a target attribute; stargemm__dgemm_any_usable() says whether the CPU has it.
 * Declared in src/internal.h.
 */
#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define MAXV 4	/* vectors of 8 complex floats in a block's column: at most 32 rows */
#define MAXC 8	/* columns in a block */

#define AVX512 __attribute__((target("avx512f")))

/* The columns of a block of nv vectors: nv * columns accumulators and 2 nv vectors of A
 * (a and s) leave two registers for the broadcasts among the 32. */
static inline __attribute__((always_inline)) int block_columns(int nv)
{
	return nv == 4 ? 5 : nv == 3 ? 6 : 8;
}

/* (even, -even, even, -even, ...) */
static inline __attribute__((always_inline)) AVX512 __m512 signs(float even)
{
	return _mm512_mask_blend_ps(0x5555, _mm512_set1_ps(-even), _mm512_set1_ps(even));
}

/* x's pairs swapped and multiplied by @p sign: (x1 s0, x0 s1, x3 s2, x2 s3, ...). */
static inline __attribute__((always_inline)) AVX512 __m512 swapped(__m512 x, __m512 sign)
{
	return _mm512_mul_ps(_mm512_permute_ps(x, 0xb1), sign);
}

/* The complex product x z, z = (re, im) broadcast in @p re and @p im. */
static inline __attribute__((always_inline)) AVX512 __m512 times(__m512 x, __m512 re,
								  __m512 im, __m512 isign)
{
	return _mm512_fmadd_ps(swapped(x, isign), im, _mm512_mul_ps(x, re));
}

/* One block of C: rows [0, rows), 8 (nv - 1) < rows <= 8 nv, columns [0, nc), at @p c
 * (floats: element i's real part at c[2 i]), from A's rows at @p a and op(B)'s columns
 * at @p b: op(B)(p, j) is the complex number at b + 2 (p bk + j bj). sign is
 * (-1, 1, ...) for B and B^T, (1, -1, ...) for B^H. */
static inline __attribute__((always_inline)) AVX512 void
block(int nv, int nc, int rows, int k, const float *alpha, const float *a, int lda,
      const float *b, ptrdiff_t bk, ptrdiff_t bj, __m512 sign, const float *beta, float *c,
      int ldc)
{
	__mmask16 last = (__mmask16)(0xffffu >> (2 * (8 * nv - rows)));
	__m512 acc[MAXV][MAXC];

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[v][j] = _mm512_setzero_ps();
	for (int p = 0; p < k; p++) {
		const float *ap = a + 2 * (ptrdiff_t)p * lda, *bp = b + 2 * p * bk;
		__m512 av[MAXV], sv[MAXV];

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			av[v] = v < nv - 1 ? _mm512_loadu_ps(ap + 16 * v)
					   : _mm512_maskz_loadu_ps(last, ap + 16 * v);
			sv[v] = swapped(av[v], sign);
		}
#pragma GCC unroll 8
		for (int j = 0; j < nc; j++) {
			__m512 re = _mm512_set1_ps(bp[2 * j * bj]);
			__m512 im = _mm512_set1_ps(bp[2 * j * bj + 1]);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				acc[v][j] = _mm512_fmadd_ps(sv[v], im,
							    _mm512_fmadd_ps(av[v], re, acc[v][j]));
		}
	}
	/* For alpha and beta the sign of the plain product: (-1, 1, ...). */
	__m512 isign = signs(-1.0f);
	__m512 ar = _mm512_set1_ps(alpha[0]), ai = _mm512_set1_ps(alpha[1]);
	__m512 br = _mm512_set1_ps(beta[0]), bi = _mm512_set1_ps(beta[1]);
	int read_c = beta[0] != 0.0f || beta[1] != 0.0f;

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++) {
		float *cj = c + 2 * (ptrdiff_t)j * ldc;

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			__mmask16 mask = v < nv - 1 ? 0xffff : last;
			__m512 r = times(acc[v][j], ar, ai, isign);

			if (read_c)
				r = _mm512_add_ps(r, times(_mm512_maskz_loadu_ps(mask, cj + 16 * v),
							   br, bi, isign));
			_mm512_mask_storeu_ps(cj + 16 * v, mask, r);
		}
	}
}

/* Rows [0, rows) of C, all its columns, in blocks of nv vectors (a constant below) by
 * block_columns(nv) columns; the last, narrower block is its own unrolled copy. */
static inline __attribute__((always_inline)) AVX512 void
row_block(int nv, int rows, int n, int k, const float *alpha, const float *a, int lda,
	  const float *b, ptrdiff_t bk, ptrdiff_t bj, __m512 sign, const float *beta,
	  float *c, int ldc)
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

/* The row blocks' sizes: as few blocks of at most 32 rows as cover m, of equal
 * multiples of 8, each by the copy for its vectors. @p alpha and @p beta are complex
 * numbers as (re, im) pairs; a, b and c hold interleaved complex floats. */
AVX512 void stargemm__cgemm_any(char tb, int m, int n, int k, const float *alpha,
				const void *a, int lda, const void *b, int ldb,
				const float *beta, void *c, int ldc)
{
	/* op(B)(p, j) = B(p, j) = b[p + j ldb], or B(j, p) = b[j + p ldb] (conjugated for 'C') */
	ptrdiff_t bk = tb == 'N' ? 1 : ldb, bj = tb == 'N' ? ldb : 1;
	__m512 sign = signs(tb == 'C' ? 1.0f : -1.0f);
	int nblocks = (m + 8 * MAXV - 1) / (8 * MAXV);
	int height = ((m + nblocks - 1) / nblocks + 7) / 8 * 8;
	const float *ad = a, *bd = b;
	float *cd = c;

	for (int i = 0; i < m; i += height) {
		int rows = m - i < height ? m - i : height;
		const float *ai = ad + 2 * i;
		float *ci = cd + 2 * i;

		switch ((rows + 7) / 8) {
		case 4: row_block(4, rows, n, k, alpha, ai, lda, bd, bk, bj, sign, beta, ci, ldc); break;
		case 3: row_block(3, rows, n, k, alpha, ai, lda, bd, bk, bj, sign, beta, ci, ldc); break;
		case 2: row_block(2, rows, n, k, alpha, ai, lda, bd, bk, bj, sign, beta, ci, ldc); break;
		default: row_block(1, rows, n, k, alpha, ai, lda, bd, bk, bj, sign, beta, ci, ldc); break;
		}
	}
}

#else

void stargemm__cgemm_any(char tb, int m, int n, int k, const float *alpha, const void *a,
			 int lda, const void *b, int ldb, const float *beta, void *c, int ldc)
{
}

#endif
