/*
 * codelets/smallkernel_avx512_c.c — stargemm__cgemm_any_avx512(), the kernel for small
 * complex tile products of any shape (codelets/smallkernel_algo_complex.c) in single
 * complex on AVX-512F (codelets/smallkernel_avx512_s.h, compiled for it whatever the
 * build's flags); only where stargemm__small_isa_usable(STARGEMM__ISA_AVX512).
 *
 * Why a file per precision and instruction set: each algorithm is written once, on a
 * type header's vector helpers; this file gives it its type, its instruction set and its
 * name. stargemm__cgemm_any() (codelets/smallkernel.c) calls the one of the widest
 * instruction set the CPU has. Depends on nothing else in stargemm (bench/kernels.c
 * compiles it alone); declared in codelets/smallkernel.h.
 */
#include "smallkernel.h"

#define SMALLKERNEL_GEMM stargemm__cgemm_any_avx512
#include "smallkernel_avx512_s.h"
#include "smallkernel_algo_complex.c"
