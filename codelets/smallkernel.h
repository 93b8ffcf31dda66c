/*
 * codelets/smallkernel.h — the kernels for small tile products of every shape, C = alpha
 * A op(B) + beta C with A not transposed, in the four precisions: the ones stargemm
 * calls, which take the widest instruction set the CPU has (codelets/smallkernel.c),
 * each instruction set's own (codelets/smallkernel_avx512_[dszc].c,
 * codelets/smallkernel_avx2_[dszc].c), and the choice between them.
 *
 * Why a header apart from codelets/codelets.h (which includes it): it needs nothing of
 * StarPU, so that the kernel files and bench/kernels.c, compiled alone, declare the
 * kernels with the library's own prototypes.
 */
#ifndef STARGEMM_SMALLKERNEL_H
#define STARGEMM_SMALLKERNEL_H

/* The instruction sets the kernels are compiled for, narrowest first. */
enum stargemm__isa { STARGEMM__ISA_NONE, STARGEMM__ISA_AVX2, STARGEMM__ISA_AVX512 };
/* The widest instruction set of the CPU running the program, within the limit below:
 * its kernels are the ones stargemm__dgemm_any() and the others call. Found once, then
 * cached; thread-safe. */
int stargemm__small_isa(void);
/* Whether the CPU has @p isa (enum stargemm__isa), so that its kernels can be called; 0
 * for STARGEMM__ISA_NONE, which has no kernels. */
int stargemm__small_isa_usable(int isa);
/* The kernels use no instruction set wider than @p isa from now on (STARGEMM_KERNEL_ISA,
 * read by stargemm_init() before StarPU's threads start; by default none narrower than
 * the CPU's widest). */
void stargemm__small_isa_limit(int isa);
/* "none", "avx2", "avx512" (and "unknown" for another value). */
const char *stargemm__small_isa_name(int isa);
/* Whether the four kernels below run: stargemm__small_isa() is not STARGEMM__ISA_NONE
 * (never on a build for another CPU than x86-64 or by another compiler than GCC's kind;
 * the products then go to libxsmm or BLAS). */
int stargemm__dgemm_any_usable(void);

/* Double precision (codelets/smallkernel_algo_real.c on doubles), on the widest
 * instruction set; only where stargemm__dgemm_any_usable(). The element table's any_gemm
 * (struct stargemm__element) calls these four. */
void stargemm__dgemm_any(char tb, int m, int n, int k, double alpha, const double *a,
			 int lda, const double *b, int ldb, double beta, double *c, int ldc);
/* The same on floats. */
void stargemm__sgemm_any(char tb, int m, int n, int k, float alpha, const float *a, int lda,
			 const float *b, int ldb, float beta, float *c, int ldc);
/* Double complex (codelets/smallkernel_algo_complex.c on doubles), op(B) = B, B^T or
 * B^H ('C'); alpha and beta as (re, im) pairs, the arrays of interleaved complex
 * doubles. */
void stargemm__zgemm_any(char tb, int m, int n, int k, const double *alpha, const void *a,
			 int lda, const void *b, int ldb, const double *beta, void *c, int ldc);
/* And single complex. */
void stargemm__cgemm_any(char tb, int m, int n, int k, const float *alpha, const void *a,
			 int lda, const void *b, int ldb, const float *beta, void *c, int ldc);

/* The same four on AVX-512F, only where stargemm__small_isa_usable(STARGEMM__ISA_AVX512)
 * (tests and benchmarks call them by name). */
void stargemm__dgemm_any_avx512(char tb, int m, int n, int k, double alpha, const double *a,
				int lda, const double *b, int ldb, double beta, double *c,
				int ldc);
void stargemm__sgemm_any_avx512(char tb, int m, int n, int k, float alpha, const float *a,
				int lda, const float *b, int ldb, float beta, float *c, int ldc);
void stargemm__zgemm_any_avx512(char tb, int m, int n, int k, const double *alpha,
				const void *a, int lda, const void *b, int ldb,
				const double *beta, void *c, int ldc);
void stargemm__cgemm_any_avx512(char tb, int m, int n, int k, const float *alpha,
				const void *a, int lda, const void *b, int ldb,
				const float *beta, void *c, int ldc);
/* And on AVX2 + FMA, only where stargemm__small_isa_usable(STARGEMM__ISA_AVX2). */
void stargemm__dgemm_any_avx2(char tb, int m, int n, int k, double alpha, const double *a,
			      int lda, const double *b, int ldb, double beta, double *c, int ldc);
void stargemm__sgemm_any_avx2(char tb, int m, int n, int k, float alpha, const float *a,
			      int lda, const float *b, int ldb, float beta, float *c, int ldc);
void stargemm__zgemm_any_avx2(char tb, int m, int n, int k, const double *alpha,
			      const void *a, int lda, const void *b, int ldb, const double *beta,
			      void *c, int ldc);
void stargemm__cgemm_any_avx2(char tb, int m, int n, int k, const float *alpha,
			      const void *a, int lda, const void *b, int ldb, const float *beta,
			      void *c, int ldc);

/* Each instruction set's test of the CPU, from its header's sk_usable() (defined in its
 * double-precision file); stargemm__small_isa_usable() is the one to call. */
int stargemm__small_avx512_usable(void);
int stargemm__small_avx2_usable(void);

#endif
