/*
 * codelets/smallkernel.c — stargemm__dgemm_any(), the kernel for small tile products of
 * any shape (codelets/smallkernel_algo_real.c) in double precision on AVX-512F
 * (codelets/smallkernel_avx512_d.h), and stargemm__dgemm_any_usable(), whether the CPU
 * running the program has AVX-512F: the one test for the four kernels (double, single,
 * double complex, single complex), which are compiled for it whatever the build's
 * flags.
 *
 * Why a file per precision: each algorithm is written once, on a type header's vector
 * helpers; this file gives it its type and its name. Depends on nothing else in
 * stargemm (bench/kernels.c compiles it alone); declared in src/internal.h.
 */
#define SMALLKERNEL_GEMM stargemm__dgemm_any
#include "smallkernel_avx512_d.h"
#include "smallkernel_algo_real.c"

int stargemm__dgemm_any_usable(void)
{
	return sk_usable();
}
