/*
 * codelets/smallkernel_avx512_d.c — stargemm__dgemm_any_avx512(), the kernel for small
 * tile products of any shape (codelets/smallkernel_algo_real.c) in double precision on
 * AVX-512F (codelets/smallkernel_avx512_d.h, compiled for it whatever the build's
 * flags), and stargemm__small_avx512_usable(), whether the CPU running the program has
 * AVX-512F: the one test for the four kernels of the instruction set.
 *
 * Why a file per precision and instruction set: each algorithm is written once, on a
 * type header's vector helpers; this file gives it its type, its instruction set and its
 * name. stargemm__dgemm_any() (codelets/smallkernel.c) calls the one of the widest
 * instruction set the CPU has. Depends on nothing else in stargemm (bench/kernels.c
 * compiles it alone); declared in codelets/smallkernel.h.
 */
#include "smallkernel.h"

#define SMALLKERNEL_GEMM stargemm__dgemm_any_avx512
#include "smallkernel_avx512_d.h"
#include "smallkernel_algo_real.c"

int stargemm__small_avx512_usable(void)
{
	return sk_usable();
}
