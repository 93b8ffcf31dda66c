/*
 * codelets/smallkernel.c — the kernels for small tile products of every shape that
 * stargemm calls, stargemm__dgemm_any(), stargemm__sgemm_any(), stargemm__zgemm_any()
 * and stargemm__cgemm_any(): each calls its precision's kernel of the widest instruction
 * set the CPU running the program has, stargemm__small_isa() (AVX-512F, else AVX2 +
 * FMA, else none: stargemm__dgemm_any_usable() is then 0 and the products go to libxsmm
 * or BLAS).
 *
 * Why a choice at run time: the kernels of every instruction set are compiled into the
 * library whatever the build's flags (target attributes; codelets/smallkernel_avx512_*.c,
 * codelets/smallkernel_avx2_*.c), so that one build runs at its best on a CPU with
 * AVX-512 and on one with AVX2 only (AMD Zen 2 and 3, many Intel parts). The test of the
 * CPU is made once and cached: a kernel call costs one load and a switch more. Tests and
 * benchmarks call an instruction set's kernels by their names (codelets/smallkernel.h).
 * Depends on nothing else in stargemm (bench/kernels.c compiles it alone, with the
 * kernel files).
 */
#include <stdatomic.h>

#include "smallkernel.h"

int stargemm__small_isa_usable(int isa)
{
	switch (isa) {
	case STARGEMM__ISA_AVX512: return stargemm__small_avx512_usable();
	case STARGEMM__ISA_AVX2: return stargemm__small_avx2_usable();
	default: return 0;
	}
}

/* The widest instruction set the kernels may use (stargemm__small_isa_limit()). */
static atomic_int limit = STARGEMM__ISA_AVX512;

void stargemm__small_isa_limit(int isa)
{
	atomic_store_explicit(&limit, isa, memory_order_relaxed);
}

int stargemm__small_isa(void)
{
	/* -1 until found; several threads finding it at once find the same */
	static atomic_int widest = -1;
	int isa = atomic_load_explicit(&widest, memory_order_relaxed);
	int most = atomic_load_explicit(&limit, memory_order_relaxed);

	if (isa < 0) {
		isa = stargemm__small_isa_usable(STARGEMM__ISA_AVX512) ? STARGEMM__ISA_AVX512 :
		      stargemm__small_isa_usable(STARGEMM__ISA_AVX2) ? STARGEMM__ISA_AVX2 :
		      STARGEMM__ISA_NONE;
		atomic_store_explicit(&widest, isa, memory_order_relaxed);
	}
	return isa < most ? isa : most;
}

const char *stargemm__small_isa_name(int isa)
{
	static const char *const names[] = { "none", "avx2", "avx512" };

	return isa >= STARGEMM__ISA_NONE && isa <= STARGEMM__ISA_AVX512 ? names[isa] : "unknown";
}

int stargemm__dgemm_any_usable(void)
{
	return stargemm__small_isa() != STARGEMM__ISA_NONE;
}

/* Without an instruction set (the default cases below) the kernels are never called. */

void stargemm__dgemm_any(char tb, int m, int n, int k, double alpha, const double *a,
			 int lda, const double *b, int ldb, double beta, double *c, int ldc)
{
	switch (stargemm__small_isa()) {
	case STARGEMM__ISA_AVX512:
		stargemm__dgemm_any_avx512(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		break;
	case STARGEMM__ISA_AVX2:
		stargemm__dgemm_any_avx2(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		break;
	default: break;
	}
}

void stargemm__sgemm_any(char tb, int m, int n, int k, float alpha, const float *a, int lda,
			 const float *b, int ldb, float beta, float *c, int ldc)
{
	switch (stargemm__small_isa()) {
	case STARGEMM__ISA_AVX512:
		stargemm__sgemm_any_avx512(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		break;
	case STARGEMM__ISA_AVX2:
		stargemm__sgemm_any_avx2(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		break;
	default: break;
	}
}

void stargemm__zgemm_any(char tb, int m, int n, int k, const double *alpha, const void *a,
			 int lda, const void *b, int ldb, const double *beta, void *c, int ldc)
{
	switch (stargemm__small_isa()) {
	case STARGEMM__ISA_AVX512:
		stargemm__zgemm_any_avx512(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		break;
	case STARGEMM__ISA_AVX2:
		stargemm__zgemm_any_avx2(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		break;
	default: break;
	}
}

void stargemm__cgemm_any(char tb, int m, int n, int k, const float *alpha, const void *a,
			 int lda, const void *b, int ldb, const float *beta, void *c, int ldc)
{
	switch (stargemm__small_isa()) {
	case STARGEMM__ISA_AVX512:
		stargemm__cgemm_any_avx512(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		break;
	case STARGEMM__ISA_AVX2:
		stargemm__cgemm_any_avx2(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		break;
	default: break;
	}
}
