/*
 * codelets/smallkernel_single.c — the single-precision kernel for small tile products of
 * any shape, C (m x n) = alpha A op(B) + beta C, A not transposed, on CPUs with
 * AVX-512: codelets/smallkernel.c's kernel for floats.
 *
 * Why: as in double (codelets/smallkernel.c), libxsmm's kernel per shape is fast on a
 * regular tiling and slow on an irregular one, where nearly every product has a shape
 * of its own and runs a kernel fetched cold from memory. In single precision libDBCSR
 * was 1.14x slower than stargemm on tiles of 20-60 with libxsmm's kernels
 * (doc/performance.md), against about 2.3x in double with the one kernel.
 *
 * How: the double kernel's blocking with vectors of 16 floats: C is cut into blocks of
 * at most 4 vectors (64 rows; the last vector of a column masked) by 6 or 8 columns, the
 * accumulators in registers; for each k the block loads its vectors of A's column and
 * broadcasts op(B)'s row elements. The block's row and column counts are constants at
 * each call site (the switches below), so the loops unroll. beta = 0 does not read C.
 * Compiled for AVX-512F through a target attribute; stargemm__dgemm_any_usable() says
 * whether the CPU has it (the same test for both kernels). Declared in src/internal.h.
 */
#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define MAXV 4	/* vectors of 16 floats in a block's column: blocks of at most 64 rows */
#define MAXC 8	/* columns in a block */

#define AVX512 __attribute__((target("avx512f")))

/* The columns of a block of nv vectors: nv * columns accumulators, at most 24, leave
 * registers for A's nv vectors among the 32. */
static inline __attribute__((always_inline)) int block_columns(int nv)
{
	return nv == 4 ? 6 : 8;
}

/* One block of C: rows [0, rows), 16 (nv - 1) < rows <= 16 nv, columns [0, nc), at @p c,
 * from A's rows at @p a and op(B)'s columns at @p b: op(B)(p, j) is b[p bk + j bj]. */
static inline __attribute__((always_inline)) AVX512 void block(int nv, int nc, int rows, int k,
							       float alpha, const float *a,
							       int lda, const float *b,
							       ptrdiff_t bk, ptrdiff_t bj,
							       float beta, float *c, int ldc)
{
	__mmask16 last = (__mmask16)(0xffffu >> (16 * nv - rows));
	__m512 acc[MAXV][MAXC];

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[v][j] = _mm512_setzero_ps();
	for (int p = 0; p < k; p++) {
		const float *ap = a + (ptrdiff_t)p * lda, *bp = b + p * bk;
		__m512 av[MAXV];

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			av[v] = v < nv - 1 ? _mm512_loadu_ps(ap + 16 * v)
					   : _mm512_maskz_loadu_ps(last, ap + 16 * v);
#pragma GCC unroll 8
		for (int j = 0; j < nc; j++) {
			__m512 bv = _mm512_set1_ps(bp[j * bj]);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				acc[v][j] = _mm512_fmadd_ps(av[v], bv, acc[v][j]);
		}
	}
	__m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++) {
		float *cj = c + (ptrdiff_t)j * ldc;

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			__mmask16 mask = v < nv - 1 ? 0xffff : last;
			__m512 r = _mm512_mul_ps(va, acc[v][j]);

			if (beta != 0.0f)
				r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask, cj + 16 * v), r);
			_mm512_mask_storeu_ps(cj + 16 * v, mask, r);
		}
	}
}

/* Rows [0, rows) of C, all its columns, in blocks of nv vectors (a constant below) by
 * block_columns(nv) columns; the last, narrower block is its own unrolled copy. */
static inline __attribute__((always_inline)) AVX512 void row_block(int nv, int rows, int n,
								   int k, float alpha,
								   const float *a, int lda,
								   const float *b, ptrdiff_t bk,
								   ptrdiff_t bj, float beta,
								   float *c, int ldc)
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

/* The row blocks' sizes: as few blocks of at most 64 rows as cover m, of equal
 * multiples of 16, each by the copy for its vectors. */
AVX512 void stargemm__sgemm_any(char tb, int m, int n, int k, float alpha, const float *a,
				int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
	/* op(B)(p, j) = B(p, j) = b[p + j ldb], or B(j, p) = b[j + p ldb] */
	ptrdiff_t bk = tb == 'N' ? 1 : ldb, bj = tb == 'N' ? ldb : 1;
	int nblocks = (m + 16 * MAXV - 1) / (16 * MAXV);
	int height = ((m + nblocks - 1) / nblocks + 15) / 16 * 16;

	for (int i = 0; i < m; i += height) {
		int rows = m - i < height ? m - i : height;

		switch ((rows + 15) / 16) {
		case 4: row_block(4, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		case 3: row_block(3, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		case 2: row_block(2, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		default: row_block(1, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		}
	}
}

#else

void stargemm__sgemm_any(char tb, int m, int n, int k, float alpha, const float *a, int lda,
			 const float *b, int ldb, float beta, float *c, int ldc)
{
}

#endif
