/*
 * sizes.h — the integer widths of the layers below stargemm, and the one place that
 * holds sizes against them (src/sizes.c). stargemm's own sizes are int64_t; what it
 * hands down is narrower: StarPU 1.3's matrix interface takes uint32_t sides and
 * leading dimensions, BLAS and cuBLAS take int, MPI (and StarPU-MPI's datatypes,
 * MPI_Type_vector over bytes) int counts and strides. A size that does not fit is
 * refused here with the limit named (-EOVERFLOW), never truncated on the way down
 * (doc/design.md, "Sizes and the layers below").
 *
 * Leaf floor: calls only src/error.c.
 */
#ifndef STARGEMM_SIZES_H
#define STARGEMM_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* The largest m, n, k or leading dimension BLAS and cuBLAS take (their int), hence the
 * largest tile side and tile leading dimension (StarPU's uint32_t holds it). */
#define STARGEMM__BLAS_INT_MAX INT32_MAX
/* The largest count or stride, in bytes, of an MPI datatype (int): a tile that moves
 * between ranks has its rows and its leading dimension in bytes below it. */
#define STARGEMM__MPI_INT_MAX INT32_MAX
/* The most tiles a matrix may have: tile indices, tags and descriptors stay far from
 * int64 overflow. */
#define STARGEMM__MAX_TILES ((int64_t)1 << 40)

/* a * b and a + b of non-negative sizes, saturated at INT64_MAX: a need that overflows
 * compares above any capacity. */
int64_t stargemm__mul_sat(int64_t a, int64_t b);
int64_t stargemm__add_sat(int64_t a, int64_t b);

/* a * b into *out; 0, or -EOVERFLOW (no message) when it does not fit in int64_t. */
int stargemm__mul_checked(int64_t a, int64_t b, int64_t *out);

/* A tile of rows x cols elements of @p elem bytes with leading dimension @p ld, as
 * StarPU, the kernels and (when @p may_move: the tile may be sent to another rank)
 * MPI will see it: 0, or -EOVERFLOW with a message "@p fn: @p what ..." naming the
 * limit. rows, cols >= 1 and ld >= rows are the caller's to check. */
int stargemm__check_tile(int64_t rows, int64_t cols, int64_t ld, size_t elem, int may_move,
			 const char *fn, const char *what);

/* A matrix of m x n elements of @p elem bytes in mt x nt tiles: its tile count within
 * STARGEMM__MAX_TILES and its bytes within int64_t. 0, or -EOVERFLOW with the limit. */
int stargemm__check_matrix_size(int64_t m, int64_t n, int64_t mt, int64_t nt, size_t elem,
				const char *fn);

/* A buffer of @p elems elements of @p elem bytes sent whole between ranks (a pack):
 * within MPI's int count of bytes. 0, or -EOVERFLOW with the limit. */
int stargemm__check_message(int64_t elems, size_t elem, const char *fn, const char *what);

#endif
