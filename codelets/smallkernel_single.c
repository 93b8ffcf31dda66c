/*
 * codelets/smallkernel_single.c — stargemm__sgemm_any(), the kernel for small tile
 * products of any shape (codelets/smallkernel_algo_real.c) in single precision on
 * AVX-512F (codelets/smallkernel_avx512_s.h); usable where stargemm__dgemm_any_usable()
 * (codelets/smallkernel.c).
 *
 * Why a file per precision: the algorithm is written once, on a type header's vector
 * helpers; this file gives it its type and its name. Declared in src/internal.h.
 */
#define SMALLKERNEL_GEMM stargemm__sgemm_any
#include "smallkernel_avx512_s.h"
#include "smallkernel_algo_real.c"
