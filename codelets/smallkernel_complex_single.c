/*
 * codelets/smallkernel_complex_single.c — stargemm__cgemm_any(), the kernel for small
 * complex tile products of any shape (codelets/smallkernel_algo_complex.c) in single
 * complex on AVX-512F (codelets/smallkernel_avx512_s.h); usable where
 * stargemm__dgemm_any_usable() (codelets/smallkernel.c).
 *
 * Why a file per precision: the algorithm is written once, on a type header's vector
 * helpers; this file gives it its type and its name. Declared in src/internal.h.
 */
#define SMALLKERNEL_GEMM stargemm__cgemm_any
#include "smallkernel_avx512_s.h"
#include "smallkernel_algo_complex.c"
