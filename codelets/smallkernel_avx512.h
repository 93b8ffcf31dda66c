/*
 * codelets/smallkernel_avx512.h — what the AVX-512F type headers of the kernels for
 * small tile products share (codelets/smallkernel_avx512_d.h, _s.h): the target
 * attribute the kernels are compiled with, whatever the build's flags, and
 * sk_usable(), whether the CPU running the program has AVX-512F.
 *
 * Why apart: the instruction set is one choice, the precision another; a header per
 * precision holds only its vector type and operations. Without x86-64 and GCC's
 * intrinsics SK_VECTORS is not defined and sk_usable() is 0: the kernels are then empty
 * functions stargemm never calls.
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

#else

static inline int sk_usable(void)
{
	return 0;
}

#endif
#endif
