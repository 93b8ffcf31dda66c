/*
 * tests/check.c — reference GEMM and scaled residual (see check.h).
 */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

double *sg_gather_new(const struct stargemm_matrix *X)
{
	int64_t m = stargemm_matrix_m(X), n = stargemm_matrix_n(X);
	double *full = NULL;
	int ok = 1;

	if (stargemm_rank() == 0) {
		full = malloc((size_t)(m * n) * sizeof(double));
		ok = full != NULL;
	}
	/* Every rank takes part; a failed allocation on rank 0 gathers into nothing. */
	if (stargemm_matrix_gather(X, full, m, 0) != 0 || !ok) {
		free(full);
		return NULL;
	}
	return full;
}

static double frobenius(const double *x, int64_t count)
{
	double s = 0.0;

	for (int64_t i = 0; i < count; i++)
		s += x[i] * x[i];
	return sqrt(s);
}

double sg_gemm_residual(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
			const double *A, const double *B, double beta, const double *C0,
			const double *C)
{
	int tra = ta == 'T' || ta == 't', trb = tb == 'T' || tb == 't';
	int64_t lda = tra ? k : m, ldb = trb ? n : k;
	double *ref = malloc((size_t)(m * n) * sizeof(double));
	double diff = 0.0, scale;

	if (!ref)
		return INFINITY;
	memcpy(ref, C0, (size_t)(m * n) * sizeof(double));
	cblas_dgemm(CblasColMajor, tra ? CblasTrans : CblasNoTrans,
		    trb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, A, (int)lda,
		    B, (int)ldb, beta, ref, (int)m);
	for (int64_t i = 0; i < m * n; i++)
		diff += (C[i] - ref[i]) * (C[i] - ref[i]);
	diff = sqrt(diff);
	scale = fabs(alpha) * frobenius(A, m * k) * frobenius(B, k * n);
	if (beta != 0.0)
		scale += fabs(beta) * frobenius(C0, m * n);
	free(ref);
	if (scale == 0.0)
		return diff == 0.0 ? 0.0 : INFINITY;
	/* NaN compares false against the bound: report it as infinite. */
	return isnan(diff) ? INFINITY : diff / (scale * (double)k * DBL_EPSILON);
}

void sg_free_case(double *a, double *b, double *c0, double *c, struct stargemm_matrix *A,
		  struct stargemm_matrix *B, struct stargemm_matrix *C)
{
	free(a);
	free(b);
	free(c0);
	free(c);
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
}

void sg_allow_packs(int allow)
{
	if (allow)
		unsetenv("STARGEMM_PACK_BELOW");
	else
		setenv("STARGEMM_PACK_BELOW", "0", 1);
}

void sg_fill_nan(double *t, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
		 int64_t col0, void *arg)
{
	for (int64_t j = 0; j < cols; j++)
		for (int64_t i = 0; i < rows; i++)
			t[i + j * ld] = NAN;
}
