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

/* Whether block-sparse matrices created from now on may pack their small tiles
 * several per StarPU handle (src/pack.c): the default; 0 sets STARGEMM_PACK_BELOW=0,
 * for the out-of-core cases, which need a handle per tile. */
void sg_allow_packs(int allow);

/* A stargemm_fill_fn that writes NaNs: C filled with it must not survive beta = 0. */
void sg_fill_nan(double *t, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
		 int64_t col0, void *arg);

/* Residual bound used by every check. */
#define SG_RESIDUAL_BOUND 10.0

#endif
