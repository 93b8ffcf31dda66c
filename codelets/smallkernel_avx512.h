/*
 * codelets/smallkernel_avx512.h — what the AVX-512F type headers of the kernels for
 * small tile products share (codelets/smallkernel_avx512_d.h, _s.h): the target
 * attribute the kernels are compiled with, whatever the build's flags; sk_usable(),
 * whether the CPU running the program has AVX-512F; and the register blocking for its
 * 32 vector registers (SK_REAL_MAXV, sk_real_block_columns(), the complex ones), which
 * the algorithms (codelets/smallkernel_algo_real.c, _algo_complex.c) take from here.
 *
 * Why apart: the instruction set is one choice, the precision another; a header per
 * precision holds only its vector type and operations. The blocking depends on the
 * number of registers, so on the instruction set (AVX2 + FMA has 16:
 * codelets/smallkernel_avx2.h, the same names). Without x86-64 and GCC's intrinsics
 * SK_VECTORS is not defined and sk_usable() is 0: the kernels are then empty functions
 * stargemm never calls.
 */
#ifndef STARGEMM_SMALLKERNEL_AVX512_H
#define STARGEMM_SMALLKERNEL_AVX512_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SK_VECTORS 1   /* the kernels are compiled (else empty) */
#define SK_TARGET __attribute__((target("avx512f")))
#define SK_INLINE static inline __attribute__((always_inline)) SK_TARGET

static inline int sk_usable(void)
{
	return __builtin_cpu_supports("avx512f") != 0;   /* 0 or 1 */
}

/* A block of C is at most SK_*_MAXV vectors of rows by sk_*_block_columns(nv) <= SK_MAXC
 * columns, nv its vectors. Real: nv * columns accumulators, at most 24, leave registers
 * for A's nv vectors and the broadcast. Complex: the accumulators and 2 nv vectors of A
 * (a and its pairs swapped) leave two for the broadcasts. */
enum { SK_MAXC = 8, SK_REAL_MAXV = 4, SK_COMPLEX_MAXV = 4 };

static inline __attribute__((always_inline)) int sk_real_block_columns(int nv)
{
	return nv == 4 ? 6 : 8;
}

static inline __attribute__((always_inline)) int sk_complex_block_columns(int nv)
{
	return nv == 4 ? 5 : nv == 3 ? 6 : 8;
}

#else

static inline int sk_usable(void)
{
	return 0;
}

#endif
#endif
