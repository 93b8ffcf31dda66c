/*
 * element.h — the element types s, d, c, z as data (codelets/element.c): what each
 * kernel needs to know of a type, so that one implementation serves the four
 * precisions. Kernels floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_ELEMENT_H
#define STARGEMM_ELEMENT_H

#include <stddef.h>
#include <stdint.h>

/* An element type (codelets/element.c): what stargemm needs to know of s, d, c and z,
 * so that one implementation serves the four precisions. Scalars travel as double
 * _Complex (exact for every type: a float widens exactly, a real has imaginary part 0)
 * and each kernel narrows them to its type. op is 'N', 'T' or 'C' (the conjugate
 * transpose; for real types the callers pass 'T'). */
struct stargemm__element {
	char letter;              /* 's', 'd', 'c', 'z' (stargemm_type) */
	const char *name;         /* "single", "double", "single complex", "double complex" */
	size_t size;              /* bytes per element */
	int is_complex;           /* two reals per element */
	double fma_flops;         /* flops of one multiply-add: 2, or 8 when complex */
	/* The cost of one multiply-add relative to a double one, for the performance
	 * models (codelets/model.c): single precision runs twice as many lanes. */
	double model_weight;
	/* C = alpha op(A) op(B) + beta C with the CPU BLAS (cblas_?gemm). */
	void (*cpu_gemm)(char ta, char tb, int m, int n, int k, double _Complex alpha,
			 const void *a, int lda, const void *b, int ldb, double _Complex beta,
			 void *c, int ldc);
	/* The same, op(A) = A, with the type's kernel for small products of every shape
	 * (stargemm__?gemm_any(), below), the scalars narrowed to the type; only where
	 * stargemm__dgemm_any_usable(). */
	void (*any_gemm)(char tb, int m, int n, int k, double _Complex alpha, const void *a,
			 int lda, const void *b, int ldb, double _Complex beta, void *c, int ldc);
	/* The same with cuBLAS (cublas?gemm) on the cublasHandle_t @p handle, returning its
	 * cublasStatus_t (0: success); NULL in builds without CUDA. */
	int (*cuda_gemm)(void *handle, char ta, char tb, int m, int n, int k,
			 double _Complex alpha, const void *a, int lda, const void *b, int ldb,
			 double _Complex beta, void *c, int ldc);
	/* @p count such products at once (cublas?gemmBatched): a, b and c are arrays of
	 * @p count tile addresses, in device memory; NULL in builds without CUDA. */
	int (*cuda_gemm_batched)(void *handle, char ta, char tb, int m, int n, int k,
				 double _Complex alpha, const void *const *a, int lda,
				 const void *const *b, int ldb, double _Complex beta,
				 void *const *c, int ldc, int count);
	/* T = beta T on a rows x cols tile of leading dimension ld (beta = 0 writes zeros
	 * without reading T). */
	void (*scale)(void *t, int64_t ld, int64_t rows, int64_t cols, double _Complex beta);
	/* D = alpha A + beta B on rows x cols tiles of leading dimensions ldd, lda, ldb;
	 * B NULL: D = alpha A. D may be B itself (element by element), not overlap A. */
	void (*combine)(void *d, int64_t ldd, const void *a, int64_t lda, double _Complex alpha,
			const void *b, int64_t ldb, double _Complex beta, int64_t rows,
			int64_t cols);
	/* The Frobenius norm of a tile. */
	double (*norm)(const void *t, int64_t ld, int64_t rows, int64_t cols);
	/* Store re + i im (im ignored for real types) at element @p idx of @p t. */
	void (*store)(void *t, int64_t idx, double re, double im);
	/* The scalar at @p p, of this type, widened. */
	double _Complex (*load)(const void *p);
};
/* The element type of letter @p t ('s', 'd', 'c', 'z'); NULL for any other. */
const struct stargemm__element *stargemm__element(int t);

#endif
