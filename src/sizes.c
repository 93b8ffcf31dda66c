/*
 * sizes.c — sizes held against the integer widths of StarPU, BLAS, cuBLAS and MPI
 * (src/sizes.h): every size stargemm hands down passes here first, so that one that
 * does not fit is an error naming the limit instead of a silently truncated value.
 */
#include <errno.h>
#include <inttypes.h>

#include "error.h"
#include "sizes.h"

int64_t stargemm__mul_sat(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t stargemm__add_sat(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int stargemm__mul_checked(int64_t a, int64_t b, int64_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -EOVERFLOW : 0;
}

int stargemm__check_tile(int64_t rows, int64_t cols, int64_t ld, size_t elem, int may_move,
			 const char *fn, const char *what)
{
	int64_t bytes;

	if (rows > STARGEMM__BLAS_INT_MAX || cols > STARGEMM__BLAS_INT_MAX)
		return stargemm__error(-EOVERFLOW, "%s: %s of %" PRId64 " x %" PRId64 " elements: "
				       "a tile side is at most 2^31 - 1 (BLAS's and cuBLAS's int)",
				       fn, what, rows, cols);
	if (ld > STARGEMM__BLAS_INT_MAX)
		return stargemm__error(-EOVERFLOW, "%s: %s has leading dimension %" PRId64 ": at "
				       "most 2^31 - 1 (BLAS's and cuBLAS's int lda)", fn, what, ld);
	if (stargemm__mul_checked(rows, cols, &bytes) ||
	    stargemm__mul_checked(bytes, (int64_t)elem, &bytes))
		return stargemm__error(-EOVERFLOW, "%s: %s of %" PRId64 " x %" PRId64 " elements "
				       "has more than 2^63 bytes", fn, what, rows, cols);
	if (may_move && (ld > STARGEMM__MPI_INT_MAX / (int64_t)elem))
		return stargemm__error(-EOVERFLOW, "%s: %s may move between ranks, and its "
				       "leading dimension of %" PRId64 " elements of %zu bytes "
				       "exceeds MPI's int stride of 2^31 - 1 bytes", fn, what, ld,
				       elem);
	return 0;
}

int stargemm__check_matrix_size(int64_t m, int64_t n, int64_t mt, int64_t nt, size_t elem,
				const char *fn)
{
	int64_t tiles, bytes;

	if (stargemm__mul_checked(mt, nt, &tiles) || tiles > STARGEMM__MAX_TILES)
		return stargemm__error(-EOVERFLOW, "%s: %" PRId64 " x %" PRId64 " tiles exceed the "
				       "limit of 2^40 tiles per matrix", fn, mt, nt);
	if (stargemm__mul_checked(m, n, &bytes) ||
	    stargemm__mul_checked(bytes, (int64_t)elem, &bytes))
		return stargemm__error(-EOVERFLOW, "%s: a matrix of %" PRId64 " x %" PRId64
				       " elements of %zu bytes has more than 2^63 bytes", fn, m, n,
				       elem);
	return 0;
}

int stargemm__check_message(int64_t elems, size_t elem, const char *fn, const char *what)
{
	if (elems > STARGEMM__MPI_INT_MAX / (int64_t)elem)
		return stargemm__error(-EOVERFLOW, "%s: %s of %" PRId64 " elements of %zu bytes "
				       "may move between ranks and exceeds MPI's int count of "
				       "2^31 - 1 bytes", fn, what, elems, elem);
	return 0;
}
