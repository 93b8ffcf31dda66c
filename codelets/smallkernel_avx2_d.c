/*
 * codelets/smallkernel_avx2_d.c — stargemm__dgemm_any_avx2(), the kernel for small tile
 * products of any shape (codelets/smallkernel_algo_real.c) in double precision on AVX2 +
 * FMA (codelets/smallkernel_avx2_d.h, compiled for it whatever the build's flags), and
 * stargemm__small_avx2_usable(), whether the CPU running the program has AVX2 + FMA: the
 * one test for the four kernels of the instruction set.
 *
 * Why a file per precision and instruction set: each algorithm is written once, on a
 * type header's vector helpers; this file gives it its type, its instruction set and its
 * name. stargemm__dgemm_any() (codelets/smallkernel.c) calls the one of the widest
 * instruction set the CPU has. Depends on nothing else in stargemm (bench/kernels.c
 * compiles it alone); declared in codelets/smallkernel.h.
 */
#include "smallkernel.h"

#define SMALLKERNEL_GEMM stargemm__dgemm_any_avx2
#include "smallkernel_avx2_d.h"
#include "smallkernel_algo_real.c"

int stargemm__small_avx2_usable(void)
{
	return sk_usable();
}
