/*
 * tests/check.c — reference GEMM and scaled residual (see check.h).
 */
#include <cblas.h>
#include <complex.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
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

void *sg_gather_typed(const struct stargemm_matrix *X)
{
	int64_t m = stargemm_matrix_m(X), n = stargemm_matrix_n(X);
	size_t es = stargemm_type_size(stargemm_matrix_type(X));
	void *full = stargemm_rank() == 0 ? malloc((size_t)(m * n) * es) : NULL;
	int ok = stargemm_rank() != 0 || full != NULL;

	if (stargemm_matrix_gather(X, full, m, 0) != 0 || !ok) {
		free(full);
		return NULL;
	}
	return full;
}

double complex sg_get(stargemm_type t, const void *x, int64_t e)
{
	switch (t) {
	case STARGEMM_S: return ((const float *)x)[e];
	case STARGEMM_D: return ((const double *)x)[e];
	case STARGEMM_C: return ((const float complex *)x)[e];
	default: return ((const double complex *)x)[e];
	}
}

void sg_put(stargemm_type t, void *x, int64_t e, double complex v)
{
	switch (t) {
	case STARGEMM_S: ((float *)x)[e] = (float)creal(v); break;
	case STARGEMM_D: ((double *)x)[e] = creal(v); break;
	case STARGEMM_C: ((float complex *)x)[e] = (float complex)v; break;
	default: ((double complex *)x)[e] = v; break;
	}
}

static enum CBLAS_TRANSPOSE cblas_op(char t)
{
	return t == 'N' || t == 'n' ? CblasNoTrans : t == 'T' || t == 't' ? CblasTrans
									 : CblasConjTrans;
}

void sg_blas_gemm(stargemm_type t, char ta, char tb, int64_t m, int64_t n, int64_t k,
		  const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
		  const void *beta, void *C, int64_t ldc)
{
	enum CBLAS_TRANSPOSE oa = cblas_op(ta), ob = cblas_op(tb);

	switch (t) {
	case STARGEMM_S:
		cblas_sgemm(CblasColMajor, oa, ob, (int)m, (int)n, (int)k, *(const float *)alpha,
			    A, (int)lda, B, (int)ldb, *(const float *)beta, C, (int)ldc);
		break;
	case STARGEMM_D:
		cblas_dgemm(CblasColMajor, oa, ob, (int)m, (int)n, (int)k, *(const double *)alpha,
			    A, (int)lda, B, (int)ldb, *(const double *)beta, C, (int)ldc);
		break;
	case STARGEMM_C:
		cblas_cgemm(CblasColMajor, oa, ob, (int)m, (int)n, (int)k, alpha, A, (int)lda, B,
			    (int)ldb, beta, C, (int)ldc);
		break;
	default:
		cblas_zgemm(CblasColMajor, oa, ob, (int)m, (int)n, (int)k, alpha, A, (int)lda, B,
			    (int)ldb, beta, C, (int)ldc);
		break;
	}
}

/* A column-major array of @p count elements of type @p t widened (NULL: no memory). */
static double complex *widen(stargemm_type t, const void *x, int64_t count)
{
	double complex *w = malloc((size_t)(count > 0 ? count : 1) * sizeof(*w));

	for (int64_t e = 0; w && e < count; e++)
		w[e] = sg_get(t, x, e);
	return w;
}

static double complex_norm(const double complex *x, int64_t count)
{
	double s = 0.0;

	for (int64_t e = 0; e < count; e++)
		s += creal(x[e] * conj(x[e]));
	return sqrt(s);
}

double sg_typed_residual(stargemm_type t, char ta, char tb, int64_t m, int64_t n,
			 int64_t k, const void *alpha, const void *A, const void *B,
			 const void *beta, const void *C0, const void *C)
{
	int tra = cblas_op(ta) != CblasNoTrans, trb = cblas_op(tb) != CblasNoTrans;
	double complex al = sg_get(t, alpha, 0), be = sg_get(t, beta, 0);
	double complex *a = widen(t, A, m * k), *b = widen(t, B, k * n);
	double complex *ref = be != 0.0 ? widen(t, C0, m * n) : calloc((size_t)(m * n), 16);
	double complex *c = widen(t, C, m * n);
	double eps = t == STARGEMM_S || t == STARGEMM_C ? FLT_EPSILON : DBL_EPSILON;
	double diff = 0.0, scale = INFINITY;

	if (a && b && ref && c) {
		scale = cabs(al) * complex_norm(a, m * k) * complex_norm(b, k * n) +
			(be != 0.0 ? cabs(be) * complex_norm(ref, m * n) : 0.0);
		cblas_zgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), (int)m, (int)n, (int)k,
			    &al, a, (int)(tra ? k : m), b, (int)(trb ? n : k), &be, ref, (int)m);
		for (int64_t e = 0; e < m * n; e++)
			diff += creal((c[e] - ref[e]) * conj(c[e] - ref[e]));
		diff = sqrt(diff);
	}
	free(a);
	free(b);
	free(ref);
	free(c);
	if (scale == 0.0)
		return diff == 0.0 ? 0.0 : INFINITY;
	return isnan(diff) ? INFINITY : diff / (scale * (double)k * eps);
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

int sg_refused(const char *what, int ret, const char *text)
{
	int good = ret == -EINVAL && strstr(stargemm_last_error(), text) != NULL;

	if (stargemm_rank() == 0 || !good)
		printf("rank %d: refused, %-40s \"%s\" %s\n", stargemm_rank(), what,
		       ret ? stargemm_last_error() : "(accepted)", good ? "PASS" : "FAIL");
	return good;
}
