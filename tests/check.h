/*
 * tests/check.h — verification of distributed GEMM results against reference BLAS,
 * shared by the tests and the benchmark's --check.
 */
#ifndef STARGEMM_TESTS_CHECK_H
#define STARGEMM_TESTS_CHECK_H

#include <stdint.h>
#include "stargemm.h"

/* Gather @p X into a newly allocated full array on rank 0 (NULL on other ranks, and
 * on rank 0 if allocation or the gather fails). */
double *sg_gather_new(const struct stargemm_matrix *X);

/* The end of a test case: free the four gathered arrays (A, B, C before and after;
 * NULL allowed) and destroy the three matrices. */
void sg_free_case(double *a, double *b, double *c0, double *c, struct stargemm_matrix *A,
		  struct stargemm_matrix *B, struct stargemm_matrix *C);

/* Scaled residual of C against the reference cblas_dgemm on rank 0:
 *   ||C - (alpha op(A) op(B) + beta C0)||_F / ((|alpha| ||A|| ||B|| + |beta| ||C0||) K eps)
 * (the beta term is dropped when beta = 0, so that NaNs in C0 are ignored). A, B, C0
 * and C are full column-major arrays with leading dimensions equal to their rows. */
double sg_gemm_residual(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
			const double *A, const double *B, double beta, const double *C0,
			const double *C);

/* Element e of a column-major array of type @p t, widened; and the store back (the
 * imaginary part dropped for real types, rounded for single precision). */
double _Complex sg_get(stargemm_type t, const void *x, int64_t e);
void sg_put(stargemm_type t, void *x, int64_t e, double _Complex v);

/* C = alpha op(A) op(B) + beta C with the reference BLAS of type @p t (cblas_?gemm),
 * op 'N', 'T' or 'C'; alpha and beta point to scalars of the type. */
void sg_blas_gemm(stargemm_type t, char ta, char tb, int64_t m, int64_t n, int64_t k,
		  const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
		  const void *beta, void *C, int64_t ldc);

/* sg_gemm_residual() for arrays of type @p t, in that type's precision: the reference
 * is cblas_zgemm on the values widened to double complex, the bound scaled by the
 * type's unit roundoff (FLT_EPSILON or DBL_EPSILON). alpha and beta point to scalars of
 * the type; @p C0 is ignored when beta = 0. */
double sg_typed_residual(stargemm_type t, char ta, char tb, int64_t m, int64_t n,
			 int64_t k, const void *alpha, const void *A, const void *B,
			 const void *beta, const void *C0, const void *C);

/* Gather @p X (any type) into a new array on rank 0, as sg_gather_new(). */
void *sg_gather_typed(const struct stargemm_matrix *X);

/* Whether block-sparse matrices created from now on may pack their small tiles
 * several per StarPU handle (src/pack.c): the default; 0 sets STARGEMM_PACK_BELOW=0,
 * for the out-of-core cases, which need a handle per tile. */
void sg_allow_packs(int allow);

/* A stargemm_fill_fn that writes NaNs: C filled with it must not survive beta = 0. */
void sg_fill_nan(double *t, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
		 int64_t col0, void *arg);

/* Whether a call was refused as bad input: @p ret is -EINVAL and the message contains
 * @p text. Prints a PASS/FAIL line named @p what (on rank 0, and on any rank that
 * fails). */
int sg_refused(const char *what, int ret, const char *text);

/* Residual bound used by every check. */
#define SG_RESIDUAL_BOUND 10.0

#endif
