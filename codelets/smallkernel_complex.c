/*
 * codelets/smallkernel_complex.c — stargemm__zgemm_any(), the kernel for small complex
 * tile products of any shape (codelets/smallkernel_algo_complex.c) in double complex on
 * AVX-512F (codelets/smallkernel_avx512_d.h); usable where stargemm__dgemm_any_usable()
 * (codelets/smallkernel.c).
 *
 * Why a file per precision: the algorithm is written once, on a type header's vector
 * helpers; this file gives it its type and its name. Depends on nothing else in
 * stargemm (bench/kernels.c compiles it alone); declared in src/internal.h.
 */
#define SMALLKERNEL_GEMM stargemm__zgemm_any
#include "smallkernel_avx512_d.h"
#include "smallkernel_algo_complex.c"
