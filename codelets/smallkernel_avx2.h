/*
 * codelets/smallkernel_avx2.h — what the AVX2 + FMA type headers of the kernels for
 * small tile products share (codelets/smallkernel_avx2_d.h, _s.h): the target attribute
 * the kernels are compiled with, whatever the build's flags; sk_usable(), whether the
 * CPU running the program has AVX2 and FMA; and the register blocking for its 16 vector
 * registers, which the algorithms (codelets/smallkernel_algo_real.c, _algo_complex.c)
 * take from here. The same names as codelets/smallkernel_avx512.h, which says why.
 *
 * Why AVX2 too: AMD's Zen 2 and Zen 3 and many Intel parts have no AVX-512; without
 * these kernels their small products of irregular tilings would go to libxsmm's kernel
 * per shape or to BLAS. stargemm__small_isa() (codelets/smallkernel.c) takes the widest
 * instruction set the CPU has.
 */
#ifndef STARGEMM_SMALLKERNEL_AVX2_H
#define STARGEMM_SMALLKERNEL_AVX2_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SK_VECTORS 1   /* the kernels are compiled (else empty) */
#define SK_TARGET __attribute__((target("avx2,fma")))
#define SK_INLINE static inline __attribute__((always_inline)) SK_TARGET

static inline int sk_usable(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* A block of C is at most SK_*_MAXV vectors of rows by sk_*_block_columns(nv) <= SK_MAXC
 * columns, nv its vectors, within 16 registers. Real: nv * columns accumulators, nv
 * vectors of A and a broadcast: 3 x 4, 2 x 6, 1 x 8. Complex: the accumulators, 2 nv
 * vectors of A (a and its pairs swapped) and two broadcasts: 2 x 5, 1 x 8. */
enum { SK_MAXC = 8, SK_REAL_MAXV = 3, SK_COMPLEX_MAXV = 2 };

static inline __attribute__((always_inline)) int sk_real_block_columns(int nv)
{
	return nv == 3 ? 4 : nv == 2 ? 6 : 8;
}

static inline __attribute__((always_inline)) int sk_complex_block_columns(int nv)
{
	return nv == 2 ? 5 : 8;
}

#else

static inline int sk_usable(void)
{
	return 0;
}

#endif
#endif
