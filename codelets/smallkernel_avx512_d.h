/*
 * codelets/smallkernel_avx512_d.h — the vector type the kernels for small tile products
 * are written on, for doubles on AVX-512F: vectors of 8 doubles, masks of 8 bits, and
 * the few operations the kernels use, each a one-line static inline function. Included
 * by codelets/smallkernel_avx512_d.c and codelets/smallkernel_avx512_z.c.
 *
 * Why: the kernels' algorithms (codelets/smallkernel_algo_real.c and
 * codelets/smallkernel_algo_complex.c) are written once on these names; a file per
 * precision and instruction set includes one such header, then an algorithm. Another
 * precision or instruction set is another header with the same names
 * (codelets/smallkernel_avx512_s.h; codelets/smallkernel_avx2_d.h: AVX2 + FMA, 4 doubles
 * a vector and a vector as mask). Functions, not macros, so that a debugger steps
 * through them. The instruction set's part (target attribute, sk_usable(), the register
 * blocking) is codelets/smallkernel_avx512.h.
 */
#ifndef STARGEMM_SMALLKERNEL_AVX512_D_H
#define STARGEMM_SMALLKERNEL_AVX512_D_H

typedef double sk_real;   /* an element of a real matrix; each part of a complex one */

#include "smallkernel_avx512.h"

#ifdef SK_VECTORS

typedef __m512d sk_vec;
typedef __mmask8 sk_mask;   /* which lanes a load or store touches */
enum { SK_LANES = 8 };      /* sk_real per sk_vec */

SK_INLINE sk_vec sk_zero(void) { return _mm512_setzero_pd(); }
SK_INLINE sk_vec sk_set1(sk_real x) { return _mm512_set1_pd(x); }
SK_INLINE sk_vec sk_load(const sk_real *p) { return _mm512_loadu_pd(p); }
/* Every lane but the last n, 0 <= n < SK_LANES: a masked load gives 0 in those and does
 * not read them, a masked store does not write them. */
SK_INLINE sk_mask sk_mask_but_last(int n) { return (sk_mask)(0xffu >> n); }
static const sk_mask sk_all_lanes = 0xff;
SK_INLINE sk_vec sk_load_masked(sk_mask m, const sk_real *p)
{
	return _mm512_maskz_loadu_pd(m, p);
}
SK_INLINE void sk_store_masked(sk_real *p, sk_mask m, sk_vec x)
{
	_mm512_mask_storeu_pd(p, m, x);
}
/* x y + z, rounded once */
SK_INLINE sk_vec sk_fmadd(sk_vec x, sk_vec y, sk_vec z) { return _mm512_fmadd_pd(x, y, z); }
SK_INLINE sk_vec sk_mul(sk_vec x, sk_vec y) { return _mm512_mul_pd(x, y); }
SK_INLINE sk_vec sk_add(sk_vec x, sk_vec y) { return _mm512_add_pd(x, y); }
/* (x1, x0, x3, x2, ...): a complex number's parts exchanged */
SK_INLINE sk_vec sk_swap_pairs(sk_vec x) { return _mm512_permute_pd(x, 0x55); }
/* (s, -s, s, -s, ...), s = 1 or -1 */
SK_INLINE sk_vec sk_alternate(int s)
{
	return s > 0 ? _mm512_set_pd(-1, 1, -1, 1, -1, 1, -1, 1)
		     : _mm512_set_pd(1, -1, 1, -1, 1, -1, 1, -1);
}

#endif
#endif
