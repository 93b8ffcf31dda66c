/*
 * codelets/smallkernel_algo_complex.c — the kernel for small complex tile products of
 * any shape, C (m x n) = alpha A op(B) + beta C, A not transposed, op(B) = B, B^T or
 * B^H, written once for every precision and instruction set on the vector helpers of a
 * type header. Not compiled alone: a file per precision and instruction set defines
 * SMALLKERNEL_GEMM (the kernel's name), includes its type header, then this file
 * (codelets/smallkernel_avx512_z.c: double complex on AVX-512F, _avx512_c.c: single
 * complex, _avx2_z.c and _avx2_c.c: on AVX2 + FMA); codelets/smallkernel.c calls the
 * one of the widest instruction set the CPU has.
 *
 * Why: libxsmm 1.17 has no complex kernels, so a complex tile product in a batch was one
 * cblas_zgemm or cblas_cgemm call, whose interface and packing cost more than the
 * arithmetic of a small tile (doc/performance.md, "Complex small tiles").
 *
 * How: the real kernel's blocking (codelets/smallkernel_algo_real.c) on interleaved
 * complex numbers, SK_LANES / 2 to a vector (re, im, re, im, ...): C is cut into blocks
 * of at most SK_COMPLEX_MAXV vectors of rows (the last vector of a column masked) by
 * sk_complex_block_columns() columns, one accumulator per vector and column; the
 * blocking is the instruction set's, from its header. For each k the block loads its
 * vectors of A's column, a and the pairs swapped and signed, s = (-im, re, ...) (for
 * B^H: (im, -re, ...)), and for each column broadcasts op(B)'s element's real part r
 * and imaginary part i: acc += a r + s i is the complex a b (or a conj(b)) in two fused
 * multiply-adds. alpha and beta multiply the same way at the end. The block's row and
 * column counts are constants at each call site (the switches below), so the loops
 * unroll and the accumulators stay in registers; a case beyond the instruction set's
 * blocking is never taken and is compiled as a one-vector or one-column block, not
 * indexing past the arrays. beta = 0 does not read C. Depends on nothing else in
 * stargemm (bench/kernels.c compiles the kernel files alone); declared in
 * codelets/smallkernel.h.
 */
#ifndef SMALLKERNEL_GEMM
#error "included by codelets/smallkernel_avx*_[zc].c, after a type header"
#endif

#include <stddef.h>

#ifdef SK_VECTORS

/* The switches below take blocks of up to 4 vectors and 8 columns. */
_Static_assert(SK_COMPLEX_MAXV <= 4 && SK_MAXC <= 8, "a blocking the switches do not cover");

enum { COMPLEX_LANES = SK_LANES / 2 };   /* complex numbers per vector */

/* x's pairs swapped and multiplied by @p sign: (x1 s0, x0 s1, x3 s2, x2 s3, ...). */
static inline __attribute__((always_inline)) SK_TARGET sk_vec swapped(sk_vec x, sk_vec sign)
{
	return sk_mul(sk_swap_pairs(x), sign);
}

/* The complex product x z, z = (re, im) broadcast in @p re and @p im. */
static inline __attribute__((always_inline)) SK_TARGET sk_vec times(sk_vec x, sk_vec re,
								    sk_vec im, sk_vec isign)
{
	return sk_fmadd(swapped(x, isign), im, sk_mul(x, re));
}

/* One block of C: rows [0, rows), COMPLEX_LANES (nv - 1) < rows <= COMPLEX_LANES nv,
 * columns [0, nc), at @p c (reals: element i's real part at c[2 i]), from A's rows at
 * @p a and op(B)'s columns at @p b: op(B)(p, j) is the complex number at
 * b + 2 (p bk + j bj). sign is (-1, 1, ...) for B and B^T, (1, -1, ...) for B^H. */
static inline __attribute__((always_inline)) SK_TARGET void
block(int nv, int nc, int rows, int k, const sk_real *alpha, const sk_real *a, int lda,
      const sk_real *b, ptrdiff_t bk, ptrdiff_t bj, sk_vec sign, const sk_real *beta,
      sk_real *c, int ldc)
{
	sk_mask last = sk_mask_but_last(2 * (COMPLEX_LANES * nv - rows));
	sk_vec acc[SK_COMPLEX_MAXV][SK_MAXC];

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[v][j] = sk_zero();
	for (int p = 0; p < k; p++) {
		const sk_real *ap = a + 2 * (ptrdiff_t)p * lda, *bp = b + 2 * p * bk;
		sk_vec av[SK_COMPLEX_MAXV], sv[SK_COMPLEX_MAXV];

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			av[v] = v < nv - 1 ? sk_load(ap + SK_LANES * v)
					   : sk_load_masked(last, ap + SK_LANES * v);
			sv[v] = swapped(av[v], sign);
		}
#pragma GCC unroll 8
		for (int j = 0; j < nc; j++) {
			sk_vec re = sk_set1(bp[2 * j * bj]);
			sk_vec im = sk_set1(bp[2 * j * bj + 1]);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				acc[v][j] = sk_fmadd(sv[v], im, sk_fmadd(av[v], re, acc[v][j]));
		}
	}
	/* For alpha and beta the sign of the plain product: (-1, 1, ...). */
	sk_vec isign = sk_alternate(-1);
	sk_vec ar = sk_set1(alpha[0]), ai = sk_set1(alpha[1]);
	sk_vec br = sk_set1(beta[0]), bi = sk_set1(beta[1]);
	int read_c = beta[0] != 0 || beta[1] != 0;

#pragma GCC unroll 8
	for (int j = 0; j < nc; j++) {
		sk_real *cj = c + 2 * (ptrdiff_t)j * ldc;

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			sk_mask mask = v < nv - 1 ? sk_all_lanes : last;
			sk_vec r = times(acc[v][j], ar, ai, isign);

			if (read_c)
				r = sk_add(r, times(sk_load_masked(mask, cj + SK_LANES * v), br, bi,
						    isign));
			sk_store_masked(cj + SK_LANES * v, mask, r);
		}
	}
}

/* Rows [0, rows) of C, all its columns, in blocks of nv vectors (a constant below) by
 * sk_complex_block_columns(nv) columns; the last, narrower block is its own unrolled
 * copy. */
static inline __attribute__((always_inline)) SK_TARGET void
row_block(int nv, int rows, int n, int k, const sk_real *alpha, const sk_real *a, int lda,
	  const sk_real *b, ptrdiff_t bk, ptrdiff_t bj, sk_vec sign, const sk_real *beta,
	  sk_real *c, int ldc)
{
	const int nc = sk_complex_block_columns(nv);
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

/* The row blocks' sizes: as few blocks of at most SK_COMPLEX_MAXV vectors as cover m, of
 * equal multiples of COMPLEX_LANES rows, each by the copy for its vectors. @p alpha and
 * @p beta are complex numbers as (re, im) pairs; a, b and c hold interleaved complex
 * numbers. */
SK_TARGET void SMALLKERNEL_GEMM(char tb, int m, int n, int k, const sk_real *alpha,
				const void *a, int lda, const void *b, int ldb,
				const sk_real *beta, void *c, int ldc)
{
	/* op(B)(p, j) = B(p, j) = b[p + j ldb], or B(j, p) = b[j + p ldb] (conjugated for 'C') */
	ptrdiff_t bk = tb == 'N' ? 1 : ldb, bj = tb == 'N' ? ldb : 1;
	sk_vec sign = sk_alternate(tb == 'C' ? 1 : -1);
	int most = COMPLEX_LANES * SK_COMPLEX_MAXV;   /* rows in a block, at most */
	int nblocks = (m + most - 1) / most;
	int height = ((m + nblocks - 1) / nblocks + COMPLEX_LANES - 1) / COMPLEX_LANES *
		     COMPLEX_LANES;
	const sk_real *ar = a, *br = b;
	sk_real *cr = c;

	for (int i = 0; i < m; i += height) {
		int rows = m - i < height ? m - i : height;
		const sk_real *ai = ar + 2 * i;
		sk_real *ci = cr + 2 * i;

		switch ((rows + COMPLEX_LANES - 1) / COMPLEX_LANES) {
		case 4:
			row_block(4 <= SK_COMPLEX_MAXV ? 4 : 1, rows, n, k, alpha, ai, lda,
				  br, bk, bj, sign, beta, ci, ldc);
			break;
		case 3:
			row_block(3 <= SK_COMPLEX_MAXV ? 3 : 1, rows, n, k, alpha, ai, lda,
				  br, bk, bj, sign, beta, ci, ldc);
			break;
		case 2:
			row_block(2 <= SK_COMPLEX_MAXV ? 2 : 1, rows, n, k, alpha, ai, lda,
				  br, bk, bj, sign, beta, ci, ldc);
			break;
		default: row_block(1, rows, n, k, alpha, ai, lda, br, bk, bj, sign, beta, ci, ldc); break;
		}
	}
}

#else

/* Without the vector instructions: never called (the type header's sk_usable() is 0). */
void SMALLKERNEL_GEMM(char tb, int m, int n, int k, const sk_real *alpha, const void *a,
		      int lda, const void *b, int ldb, const sk_real *beta, void *c, int ldc)
{
}

#endif
