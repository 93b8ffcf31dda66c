/*
 * codelets/smallkernel_avx512_s.h — the vector type the kernels for small tile products
 * are written on, for floats on AVX-512F: vectors of 16 floats, masks of 16 bits, the
 * same names as codelets/smallkernel_avx512_d.h (which says what and why) for doubles.
 * Included by codelets/smallkernel_avx512_s.c and codelets/smallkernel_avx512_c.c.
 */
#ifndef STARGEMM_SMALLKERNEL_AVX512_S_H
#define STARGEMM_SMALLKERNEL_AVX512_S_H

typedef float sk_real;    /* an element of a real matrix; each part of a complex one */

#include "smallkernel_avx512.h"

#ifdef SK_VECTORS

typedef __m512 sk_vec;
typedef __mmask16 sk_mask;  /* which lanes a load or store touches */
enum { SK_LANES = 16 };     /* sk_real per sk_vec */

SK_INLINE sk_vec sk_zero(void) { return _mm512_setzero_ps(); }
SK_INLINE sk_vec sk_set1(sk_real x) { return _mm512_set1_ps(x); }
SK_INLINE sk_vec sk_load(const sk_real *p) { return _mm512_loadu_ps(p); }
/* Every lane but the last n, 0 <= n < SK_LANES: a masked load gives 0 in those and does
 * not read them, a masked store does not write them. */
SK_INLINE sk_mask sk_mask_but_last(int n) { return (sk_mask)(0xffffu >> n); }
static const sk_mask sk_all_lanes = 0xffff;
SK_INLINE sk_vec sk_load_masked(sk_mask m, const sk_real *p)
{
	return _mm512_maskz_loadu_ps(m, p);
}
SK_INLINE void sk_store_masked(sk_real *p, sk_mask m, sk_vec x)
{
	_mm512_mask_storeu_ps(p, m, x);
}
/* x y + z, rounded once */
SK_INLINE sk_vec sk_fmadd(sk_vec x, sk_vec y, sk_vec z) { return _mm512_fmadd_ps(x, y, z); }
SK_INLINE sk_vec sk_mul(sk_vec x, sk_vec y) { return _mm512_mul_ps(x, y); }
SK_INLINE sk_vec sk_add(sk_vec x, sk_vec y) { return _mm512_add_ps(x, y); }
/* (x1, x0, x3, x2, ...): a complex number's parts exchanged */
SK_INLINE sk_vec sk_swap_pairs(sk_vec x) { return _mm512_permute_ps(x, 0xb1); }
/* (s, -s, s, -s, ...), s = 1 or -1 */
SK_INLINE sk_vec sk_alternate(int s)
{
	sk_real e = s > 0 ? 1.0f : -1.0f;

	return _mm512_mask_blend_ps(0x5555, _mm512_set1_ps(-e), _mm512_set1_ps(e));
}

#endif
#endif
