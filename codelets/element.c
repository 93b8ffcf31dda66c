/*
 * codelets/element.c — the element-type table: single, double, single complex and
 * double complex (BLAS's s, d, c, z), with the kernels that differ by type.
 *
 * Everything else in stargemm is written once and asks this table what it needs: the
 * element size (storage, transfers, the planner's bytes), the flops of a multiply-add
 * (2, or 8 for complex types), the CPU GEMMs (BLAS, and stargemm's kernel for small
 * products of every shape), the cuBLAS GEMMs (one tile, or a batch of tiles), a tile's
 * scaling, linear combination and Frobenius norm, and how to store a value. Each
 * entry's functions are a few lines that call the routine of their type; scalars
 * arrive as double _Complex (see struct stargemm__element) and are narrowed here.
 */
#include <cblas.h>
#include <complex.h>
#include <math.h>
#include <string.h>

#include "../src/internal.h"

#if defined(STARPU_USE_CUDA) && !defined(STARPU_SIMGRID)
#include <cublas_v2.h>
#define HAVE_CUBLAS 1
#endif

static enum CBLAS_TRANSPOSE cblas_op(char t)
{
	return t == 'N' ? CblasNoTrans : t == 'C' ? CblasConjTrans : CblasTrans;
}

/* ---- CPU GEMM --------------------------------------------------------------------- */

static void sgemm_cpu(char ta, char tb, int m, int n, int k, double _Complex alpha,
		      const void *a, int lda, const void *b, int ldb, double _Complex beta,
		      void *c, int ldc)
{
	cblas_sgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, (float)creal(alpha),
		    a, lda, b, ldb, (float)creal(beta), c, ldc);
}

static void dgemm_cpu(char ta, char tb, int m, int n, int k, double _Complex alpha,
		      const void *a, int lda, const void *b, int ldb, double _Complex beta,
		      void *c, int ldc)
{
	cblas_dgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, creal(alpha), a, lda,
		    b, ldb, creal(beta), c, ldc);
}

static void cgemm_cpu(char ta, char tb, int m, int n, int k, double _Complex alpha,
		      const void *a, int lda, const void *b, int ldb, double _Complex beta,
		      void *c, int ldc)
{
	float _Complex al = (float _Complex)alpha, be = (float _Complex)beta;

	cblas_cgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, &al, a, lda, b, ldb,
		    &be, c, ldc);
}

static void zgemm_cpu(char ta, char tb, int m, int n, int k, double _Complex alpha,
		      const void *a, int lda, const void *b, int ldb, double _Complex beta,
		      void *c, int ldc)
{
	cblas_zgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, &alpha, a, lda, b, ldb,
		    &beta, c, ldc);
}

/* ---- the kernels for small products of every shape (codelets/smallkernel*.c) ------ */

static void sgemm_any(char tb, int m, int n, int k, double _Complex alpha, const void *a,
		      int lda, const void *b, int ldb, double _Complex beta, void *c, int ldc)
{
	stargemm__sgemm_any(tb, m, n, k, (float)creal(alpha), a, lda, b, ldb, (float)creal(beta),
			    c, ldc);
}

static void dgemm_any(char tb, int m, int n, int k, double _Complex alpha, const void *a,
		      int lda, const void *b, int ldb, double _Complex beta, void *c, int ldc)
{
	stargemm__dgemm_any(tb, m, n, k, creal(alpha), a, lda, b, ldb, creal(beta), c, ldc);
}

/* The complex kernels take alpha and beta as (re, im) pairs. */
static void cgemm_any(char tb, int m, int n, int k, double _Complex alpha, const void *a,
		      int lda, const void *b, int ldb, double _Complex beta, void *c, int ldc)
{
	const float al[2] = { (float)creal(alpha), (float)cimag(alpha) };
	const float be[2] = { (float)creal(beta), (float)cimag(beta) };

	stargemm__cgemm_any(tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
}

static void zgemm_any(char tb, int m, int n, int k, double _Complex alpha, const void *a,
		      int lda, const void *b, int ldb, double _Complex beta, void *c, int ldc)
{
	const double al[2] = { creal(alpha), cimag(alpha) };
	const double be[2] = { creal(beta), cimag(beta) };

	stargemm__zgemm_any(tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
}

/* ---- cuBLAS GEMM ------------------------------------------------------------------ */

#ifdef HAVE_CUBLAS
static cublasOperation_t cublas_op(char t)
{
	return t == 'N' ? CUBLAS_OP_N : t == 'C' ? CUBLAS_OP_C : CUBLAS_OP_T;
}

static int sgemm_cuda(void *handle, char ta, char tb, int m, int n, int k,
		      double _Complex alpha, const void *a, int lda, const void *b, int ldb,
		      double _Complex beta, void *c, int ldc)
{
	float al = (float)creal(alpha), be = (float)creal(beta);

	return (int)cublasSgemm(handle, cublas_op(ta), cublas_op(tb), m, n, k, &al, a, lda, b,
				ldb, &be, c, ldc);
}

static int dgemm_cuda(void *handle, char ta, char tb, int m, int n, int k,
		      double _Complex alpha, const void *a, int lda, const void *b, int ldb,
		      double _Complex beta, void *c, int ldc)
{
	double al = creal(alpha), be = creal(beta);

	return (int)cublasDgemm(handle, cublas_op(ta), cublas_op(tb), m, n, k, &al, a, lda, b,
				ldb, &be, c, ldc);
}

/* cuComplex and cuDoubleComplex have the layout of C's complex types. */
static int cgemm_cuda(void *handle, char ta, char tb, int m, int n, int k,
		      double _Complex alpha, const void *a, int lda, const void *b, int ldb,
		      double _Complex beta, void *c, int ldc)
{
	cuComplex al = make_cuComplex((float)creal(alpha), (float)cimag(alpha));
	cuComplex be = make_cuComplex((float)creal(beta), (float)cimag(beta));

	return (int)cublasCgemm(handle, cublas_op(ta), cublas_op(tb), m, n, k, &al, a, lda, b,
				ldb, &be, c, ldc);
}

static int zgemm_cuda(void *handle, char ta, char tb, int m, int n, int k,
		      double _Complex alpha, const void *a, int lda, const void *b, int ldb,
		      double _Complex beta, void *c, int ldc)
{
	cuDoubleComplex al = make_cuDoubleComplex(creal(alpha), cimag(alpha));
	cuDoubleComplex be = make_cuDoubleComplex(creal(beta), cimag(beta));

	return (int)cublasZgemm(handle, cublas_op(ta), cublas_op(tb), m, n, k, &al, a, lda, b,
				ldb, &be, c, ldc);
}

/* Batched: the same, on @p count tiles whose addresses are arrays in device memory. */
static int sgemm_batched(void *handle, char ta, char tb, int m, int n, int k,
			 double _Complex alpha, const void *const *a, int lda,
			 const void *const *b, int ldb, double _Complex beta, void *const *c,
			 int ldc, int count)
{
	float al = (float)creal(alpha), be = (float)creal(beta);

	return (int)cublasSgemmBatched(handle, cublas_op(ta), cublas_op(tb), m, n, k, &al,
				       (const float *const *)a, lda, (const float *const *)b,
				       ldb, &be, (float *const *)c, ldc, count);
}

static int dgemm_batched(void *handle, char ta, char tb, int m, int n, int k,
			 double _Complex alpha, const void *const *a, int lda,
			 const void *const *b, int ldb, double _Complex beta, void *const *c,
			 int ldc, int count)
{
	double al = creal(alpha), be = creal(beta);

	return (int)cublasDgemmBatched(handle, cublas_op(ta), cublas_op(tb), m, n, k, &al,
				       (const double *const *)a, lda, (const double *const *)b,
				       ldb, &be, (double *const *)c, ldc, count);
}

static int cgemm_batched(void *handle, char ta, char tb, int m, int n, int k,
			 double _Complex alpha, const void *const *a, int lda,
			 const void *const *b, int ldb, double _Complex beta, void *const *c,
			 int ldc, int count)
{
	cuComplex al = make_cuComplex((float)creal(alpha), (float)cimag(alpha));
	cuComplex be = make_cuComplex((float)creal(beta), (float)cimag(beta));

	return (int)cublasCgemmBatched(handle, cublas_op(ta), cublas_op(tb), m, n, k, &al,
				       (const cuComplex *const *)a, lda,
				       (const cuComplex *const *)b, ldb, &be,
				       (cuComplex *const *)c, ldc, count);
}

static int zgemm_batched(void *handle, char ta, char tb, int m, int n, int k,
			 double _Complex alpha, const void *const *a, int lda,
			 const void *const *b, int ldb, double _Complex beta, void *const *c,
			 int ldc, int count)
{
	cuDoubleComplex al = make_cuDoubleComplex(creal(alpha), cimag(alpha));
	cuDoubleComplex be = make_cuDoubleComplex(creal(beta), cimag(beta));

	return (int)cublasZgemmBatched(handle, cublas_op(ta), cublas_op(tb), m, n, k, &al,
				       (const cuDoubleComplex *const *)a, lda,
				       (const cuDoubleComplex *const *)b, ldb, &be,
				       (cuDoubleComplex *const *)c, ldc, count);
}
#else
#define sgemm_cuda NULL
#define dgemm_cuda NULL
#define cgemm_cuda NULL
#define zgemm_cuda NULL
#define sgemm_batched NULL
#define dgemm_batched NULL
#define cgemm_batched NULL
#define zgemm_batched NULL
#endif

/* ---- scaling: beta = 0 writes zeros without reading (NaNs do not survive) ---------- */

static int zero_columns(void *t, int64_t ld, int64_t rows, int64_t cols, size_t size,
			double _Complex beta)
{
	if (beta != 0.0)
		return 0;
	for (int64_t c = 0; c < cols; c++)
		memset((char *)t + (size_t)(c * ld) * size, 0, (size_t)rows * size);
	return 1;
}

static void sscale(void *t, int64_t ld, int64_t rows, int64_t cols, double _Complex beta)
{
	float *x = t, be = (float)creal(beta);

	if (!zero_columns(t, ld, rows, cols, sizeof(*x), beta))
		for (int64_t c = 0; c < cols; c++)
			for (int64_t r = 0; r < rows; r++)
				x[r + c * ld] *= be;
}

static void dscale(void *t, int64_t ld, int64_t rows, int64_t cols, double _Complex beta)
{
	double *x = t, be = creal(beta);

	if (!zero_columns(t, ld, rows, cols, sizeof(*x), beta))
		for (int64_t c = 0; c < cols; c++)
			for (int64_t r = 0; r < rows; r++)
				x[r + c * ld] *= be;
}

static void cscale(void *t, int64_t ld, int64_t rows, int64_t cols, double _Complex beta)
{
	float _Complex *x = t, be = (float _Complex)beta;

	if (!zero_columns(t, ld, rows, cols, sizeof(*x), beta))
		for (int64_t c = 0; c < cols; c++)
			for (int64_t r = 0; r < rows; r++)
				x[r + c * ld] *= be;
}

static void zscale(void *t, int64_t ld, int64_t rows, int64_t cols, double _Complex beta)
{
	double _Complex *x = t;

	if (!zero_columns(t, ld, rows, cols, sizeof(*x), beta))
		for (int64_t c = 0; c < cols; c++)
			for (int64_t r = 0; r < rows; r++)
				x[r + c * ld] *= beta;
}

/* ---- D = alpha A + beta B (B NULL: D = alpha A), for the matrix operations ---------- */

static void scombine(void *d, int64_t ldd, const void *a, int64_t lda, double _Complex alpha,
		     const void *b, int64_t ldb, double _Complex beta, int64_t rows, int64_t cols)
{
	const float *x = a, *y = b, al = (float)creal(alpha), be = (float)creal(beta);
	float *z = d;

	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			z[r + c * ldd] = al * x[r + c * lda] + (y ? be * y[r + c * ldb] : 0.0f);
}

static void dcombine(void *d, int64_t ldd, const void *a, int64_t lda, double _Complex alpha,
		     const void *b, int64_t ldb, double _Complex beta, int64_t rows, int64_t cols)
{
	const double *x = a, *y = b, al = creal(alpha), be = creal(beta);
	double *z = d;

	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			z[r + c * ldd] = al * x[r + c * lda] + (y ? be * y[r + c * ldb] : 0.0);
}

static void ccombine(void *d, int64_t ldd, const void *a, int64_t lda, double _Complex alpha,
		     const void *b, int64_t ldb, double _Complex beta, int64_t rows, int64_t cols)
{
	const float _Complex *x = a, *y = b;
	float _Complex *z = d, al = (float _Complex)alpha, be = (float _Complex)beta;

	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			z[r + c * ldd] = al * x[r + c * lda] + (y ? be * y[r + c * ldb] : 0.0f);
}

static void zcombine(void *d, int64_t ldd, const void *a, int64_t lda, double _Complex alpha,
		     const void *b, int64_t ldb, double _Complex beta, int64_t rows, int64_t cols)
{
	const double _Complex *x = a, *y = b;
	double _Complex *z = d;

	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			z[r + c * ldd] = alpha * x[r + c * lda] + (y ? beta * y[r + c * ldb] : 0.0);
}

/* ---- Frobenius norms: BLAS's scaled column norms (no overflow), joined by hypot ---- */

static double snorm(const void *t, int64_t ld, int64_t rows, int64_t cols)
{
	double norm = 0.0;

	for (int64_t c = 0; c < cols; c++)
		norm = hypot(norm, cblas_snrm2((int)rows, (const float *)t + c * ld, 1));
	return norm;
}

static double dnorm(const void *t, int64_t ld, int64_t rows, int64_t cols)
{
	double norm = 0.0;

	for (int64_t c = 0; c < cols; c++)
		norm = hypot(norm, cblas_dnrm2((int)rows, (const double *)t + c * ld, 1));
	return norm;
}

static double cnorm(const void *t, int64_t ld, int64_t rows, int64_t cols)
{
	double norm = 0.0;

	for (int64_t c = 0; c < cols; c++)
		norm = hypot(norm, cblas_scnrm2((int)rows, (const float _Complex *)t + c * ld, 1));
	return norm;
}

static double znorm(const void *t, int64_t ld, int64_t rows, int64_t cols)
{
	double norm = 0.0;

	for (int64_t c = 0; c < cols; c++)
		norm = hypot(norm, cblas_dznrm2((int)rows, (const double _Complex *)t + c * ld, 1));
	return norm;
}

/* ---- values ------------------------------------------------------------------------ */

static void sstore(void *t, int64_t idx, double re, double im)
{
	((float *)t)[idx] = (float)re;
}

static void dstore(void *t, int64_t idx, double re, double im)
{
	((double *)t)[idx] = re;
}

static void cstore(void *t, int64_t idx, double re, double im)
{
	((float *)t)[2 * idx] = (float)re;
	((float *)t)[2 * idx + 1] = (float)im;
}

static void zstore(void *t, int64_t idx, double re, double im)
{
	((double *)t)[2 * idx] = re;
	((double *)t)[2 * idx + 1] = im;
}

static double _Complex sload(const void *p)
{
	return *(const float *)p;
}

static double _Complex dload(const void *p)
{
	return *(const double *)p;
}

static double _Complex cload(const void *p)
{
	return *(const float _Complex *)p;
}

static double _Complex zload(const void *p)
{
	return *(const double _Complex *)p;
}

static const struct stargemm__element elements[] = {
	{ 's', "single", sizeof(float), 0, 2.0, 0.5, sgemm_cpu, sgemm_any, sgemm_cuda,
	  sgemm_batched, sscale, scombine, snorm, sstore, sload },
	{ 'd', "double", sizeof(double), 0, 2.0, 1.0, dgemm_cpu, dgemm_any, dgemm_cuda,
	  dgemm_batched, dscale, dcombine, dnorm, dstore, dload },
	{ 'c', "single complex", sizeof(float _Complex), 1, 8.0, 2.0, cgemm_cpu, cgemm_any,
	  cgemm_cuda, cgemm_batched, cscale, ccombine, cnorm, cstore,
	  cload },
	{ 'z', "double complex", sizeof(double _Complex), 1, 8.0, 4.0, zgemm_cpu, zgemm_any,
	  zgemm_cuda, zgemm_batched, zscale, zcombine, znorm, zstore,
	  zload },
};

const struct stargemm__element *stargemm__element(int t)
{
	for (size_t e = 0; e < sizeof(elements) / sizeof(elements[0]); e++)
		if (elements[e].letter == t)
			return &elements[e];
	return NULL;
}
