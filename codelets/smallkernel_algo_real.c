/*
 * codelets/smallkernel_algo_real.c — the kernel for small real tile products of any
 * shape, C (m x n) = alpha A op(B) + beta C, A not transposed, written once for every
 * precision and instruction set on the vector helpers of a type header. Not compiled
 * alone: a file per precision and instruction set defines SMALLKERNEL_GEMM (the
 * kernel's name), includes its type header, then this file
 * (codelets/smallkernel_avx512_d.c: double on AVX-512F, _avx512_s.c: single,
 * _avx2_d.c and _avx2_s.c: on AVX2 + FMA); codelets/smallkernel.c calls the one of the
 * widest instruction set the CPU has.
 *
 * Why: libxsmm generates one kernel per shape (m, n, k and leading dimensions). On a
 * regular tiling that is a handful of kernels, hot in the instruction cache, and they
 * are fast. Irregular tilings, the block-sparse case of quantum chemistry (tiles of
 * atoms and shells), give a new shape to nearly every product: libxsmm then generates
 * thousands of kernels, and every product runs one fetched cold from memory, far below
 * the rate of a regular tiling with the same flops (doc/performance.md, "Irregular
 * tiles: one kernel for every shape"). This kernel is one piece of code for every
 * shape: the loops take m, n and k at run time.
 *
 * How: C is cut into blocks of at most SK_REAL_MAXV vectors of rows (the last vector of
 * a column masked) by sk_real_block_columns() columns, one accumulator per vector and
 * column, in registers; for each k the block loads its vectors of A's column and
 * broadcasts op(B)'s row elements, one fused multiply-add per vector and column. The
 * blocking is the instruction set's, from its header (the registers it has: AVX-512F
 * 32, AVX2 16). The block's vector and column counts are constants at each call site
 * (the switches below), so the compiler unrolls the loops over them and keeps the
 * accumulators in registers; a case beyond the instruction set's blocking is never
 * taken and is compiled as a one-vector or one-column block, not indexing past the
 * arrays. beta = 0 does not read C (a C of NaN is overwritten). Depends on nothing else
 * in stargemm (bench/kernels.c compiles the kernel files alone); declared in
 * codelets/smallkernel.h.
 */
#ifndef SMALLKERNEL_GEMM
#error "included by codelets/smallkernel_avx*_[ds].c, after a type header"
#endif

#include <stddef.h>

#ifdef SK_VECTORS

/* The switches below take blocks of up to 4 vectors and 8 columns. */
_Static_assert(SK_REAL_MAXV <= 4 && SK_MAXC <= 8, "a blocking the switches do not cover");

/* One block of C: rows [0, rows), SK_LANES (nv - 1) < rows <= SK_LANES nv, columns
 * [0, nc), at @p c, from A's rows at @p a and op(B)'s columns at @p b: op(B)(p, j) is
 * b[p bk + j bj]. nv and nc are constants at every call site, so the loops over them
 * unroll and the accumulators stay in registers. */
static inline __attribute__((always_inline)) SK_TARGET void
block(int nv, int nc, int rows, int k, sk_real alpha, const sk_real *a, int lda,
      const sk_real *b, ptrdiff_t bk, ptrdiff_t bj, sk_real beta, sk_real *c, int ldc)
{
	sk_mask last = sk_mask_but_last(SK_LANES * nv - rows);
	sk_vec acc[SK_REAL_MAXV][SK_MAXC];

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[v][j] = sk_zero();
	for (int p = 0; p < k; p++) {
		const sk_real *ap = a + (ptrdiff_t)p * lda, *bp = b + p * bk;
		sk_vec av[SK_REAL_MAXV];

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			av[v] = v < nv - 1 ? sk_load(ap + SK_LANES * v)
					   : sk_load_masked(last, ap + SK_LANES * v);
#pragma GCC unroll 8
		for (int j = 0; j < nc; j++) {
			sk_vec bv = sk_set1(bp[j * bj]);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				acc[v][j] = sk_fmadd(av[v], bv, acc[v][j]);
		}
	}
	sk_vec va = sk_set1(alpha), vb = sk_set1(beta);

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++) {
		sk_real *cj = c + (ptrdiff_t)j * ldc;

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			sk_mask mask = v < nv - 1 ? sk_all_lanes : last;
			sk_vec r = sk_mul(va, acc[v][j]);

			if (beta != 0)
				r = sk_fmadd(vb, sk_load_masked(mask, cj + SK_LANES * v), r);
			sk_store_masked(cj + SK_LANES * v, mask, r);
		}
	}
}

/* Rows [0, rows) of C, all its columns, in blocks of nv vectors (a constant below) by
 * sk_real_block_columns(nv) columns; the last, narrower block is its own unrolled copy. */
static inline __attribute__((always_inline)) SK_TARGET void
row_block(int nv, int rows, int n, int k, sk_real alpha, const sk_real *a, int lda,
	  const sk_real *b, ptrdiff_t bk, ptrdiff_t bj, sk_real beta, sk_real *c, int ldc)
{
	const int nc = sk_real_block_columns(nv);
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
	case 4: block(nv, 4 < nc ? 4 : 1, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	case 5: block(nv, 5 < nc ? 5 : 1, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	case 6: block(nv, 6 < nc ? 6 : 1, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	default: block(nv, 7 < nc ? 7 : 1, rows, k, alpha, a, lda, b, bk, bj, beta, c, ldc); break;
	}
}

/* The row blocks' sizes: as few blocks of at most SK_REAL_MAXV vectors as cover m, of
 * equal multiples of SK_LANES rows (doubles on AVX-512F, 40 rows: 24 + 16, not 32 + 8),
 * each by the copy for its vectors. */
SK_TARGET void SMALLKERNEL_GEMM(char tb, int m, int n, int k, sk_real alpha,
				const sk_real *a, int lda, const sk_real *b, int ldb,
				sk_real beta, sk_real *c, int ldc)
{
	/* op(B)(p, j) = B(p, j) = b[p + j ldb], or B(j, p) = b[j + p ldb] */
	ptrdiff_t bk = tb == 'N' ? 1 : ldb, bj = tb == 'N' ? ldb : 1;
	int nblocks = (m + SK_LANES * SK_REAL_MAXV - 1) / (SK_LANES * SK_REAL_MAXV);
	int height = ((m + nblocks - 1) / nblocks + SK_LANES - 1) / SK_LANES * SK_LANES;

	for (int i = 0; i < m; i += height) {
		int rows = m - i < height ? m - i : height;

		switch ((rows + SK_LANES - 1) / SK_LANES) {
		case 4:
			row_block(4 <= SK_REAL_MAXV ? 4 : 1, rows, n, k, alpha, a + i, lda,
				  b, bk, bj, beta, c + i, ldc);
			break;
		case 3:
			row_block(3 <= SK_REAL_MAXV ? 3 : 1, rows, n, k, alpha, a + i, lda,
				  b, bk, bj, beta, c + i, ldc);
			break;
		case 2:
			row_block(2 <= SK_REAL_MAXV ? 2 : 1, rows, n, k, alpha, a + i, lda,
				  b, bk, bj, beta, c + i, ldc);
			break;
		default: row_block(1, rows, n, k, alpha, a + i, lda, b, bk, bj, beta, c + i, ldc); break;
		}
	}
}

#else

/* Without the vector instructions: never called (the type header's sk_usable() is 0). */
void SMALLKERNEL_GEMM(char tb, int m, int n, int k, sk_real alpha, const sk_real *a, int lda,
		      const sk_real *b, int ldb, sk_real beta, sk_real *c, int ldc)
{
}

#endif
