/*
 * codelets/transpose.c — op(A) of a small tile copied out as a plain column-major array,
 * for the small-tile kernels, which take op(A) = A only.
 *
 * Why: the kernels for every shape (codelets/smallkernel*.c) and libxsmm's read A's
 * columns as vectors; A^T's columns are A's rows, strided by lda. A product with
 * op(A) = A^T or A^H took one BLAS call instead, far slower than the kernels on small
 * tiles (doc/performance.md, "Small kernels"). Copying op(A) (m x k elements) costs
 * little against the product's m n k multiply-adds once n is more than a few columns.
 *
 * Depends on nothing else in stargemm (bench/kernels.c compiles it alone); declared in
 * src/internal.h.
 */
#include <stddef.h>
#include <stdint.h>

/* Words that may alias the tiles' floats and doubles. */
typedef uint32_t __attribute__((may_alias)) word4;
typedef uint64_t __attribute__((may_alias)) word8;

/* A (k x m, leading dimension lda) transposed into at (m x k, leading dimension m),
 * elements of 4, 8 or 16 bytes: a loop per size, so that each element is one load and
 * one store (16: two), by blocks of B x B elements, so that the columns of at a block
 * writes stay in cache (unblocked, at 128^2 the writes, m elements apart, thrashed the
 * L1 cache: the copy took longer than the product). */
#define B 16

static int min(int x, int y)
{
	return x < y ? x : y;
}

static void transpose4(int m, int k, const word4 *a, int lda, word4 *at)
{
	for (int i0 = 0; i0 < m; i0 += B)
		for (int p0 = 0; p0 < k; p0 += B)
			for (int i = i0, ie = min(i0 + B, m), pe = min(p0 + B, k); i < ie; i++)
				for (int p = p0; p < pe; p++)
					at[i + (size_t)p * m] = a[p + (size_t)i * lda];
}

static void transpose8(int m, int k, const word8 *a, int lda, word8 *at)
{
	for (int i0 = 0; i0 < m; i0 += B)
		for (int p0 = 0; p0 < k; p0 += B)
			for (int i = i0, ie = min(i0 + B, m), pe = min(p0 + B, k); i < ie; i++)
				for (int p = p0; p < pe; p++)
					at[i + (size_t)p * m] = a[p + (size_t)i * lda];
}

static void transpose16(int m, int k, const word8 *a, int lda, word8 *at)
{
	for (int i0 = 0; i0 < m; i0 += B)
		for (int p0 = 0; p0 < k; p0 += B)
			for (int i = i0, ie = min(i0 + B, m), pe = min(p0 + B, k); i < ie; i++)
				for (int p = p0; p < pe; p++) {
					size_t to = 2 * (i + (size_t)p * m);
					size_t from = 2 * (p + (size_t)i * lda);

					at[to] = a[from];
					at[to + 1] = a[from + 1];
				}
}

/* The imaginary parts of @p count complex elements of @p size bytes (8: two floats, 16:
 * two doubles) negated. */
static void conjugate(size_t size, size_t count, void *x)
{
	if (size == 8) {
		float *f = x;

		for (size_t e = 0; e < count; e++)
			f[2 * e + 1] = -f[2 * e + 1];
	} else {
		double *d = x;

		for (size_t e = 0; e < count; e++)
			d[2 * e + 1] = -d[2 * e + 1];
	}
}

void stargemm__op_copy(size_t size, int conj, int m, int k, const void *a, int lda, void *at)
{
	if (size == 4)
		transpose4(m, k, a, lda, at);
	else if (size == 8)
		transpose8(m, k, a, lda, at);
	else
		transpose16(m, k, a, lda, at);
	if (conj)
		conjugate(size, (size_t)m * k, at);
}
