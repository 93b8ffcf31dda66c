/*
 * codelets/smallkernel_avx2_s.h — the vector type the kernels for small tile products
 * are written on, for floats on AVX2 + FMA: vectors of 8 floats, masks as vectors of 8
 * 32-bit integers (a lane is touched when its sign bit is set), the same names as
 * codelets/smallkernel_avx512_d.h (which says what and why) and
 * codelets/smallkernel_avx2_d.h (why masks as vectors). Included by
 * codelets/smallkernel_avx2_s.c and codelets/smallkernel_avx2_c.c.
 */
#ifndef STARGEMM_SMALLKERNEL_AVX2_S_H
#define STARGEMM_SMALLKERNEL_AVX2_S_H

typedef float sk_real;    /* an element of a real matrix; each part of a complex one */

#include "smallkernel_avx2.h"

#ifdef SK_VECTORS

typedef __m256 sk_vec;
typedef __m256i sk_mask;    /* which lanes a load or store touches: those all ones */
enum { SK_LANES = 8 };      /* sk_real per sk_vec */

SK_INLINE sk_vec sk_zero(void) { return _mm256_setzero_ps(); }
SK_INLINE sk_vec sk_set1(sk_real x) { return _mm256_set1_ps(x); }
SK_INLINE sk_vec sk_load(const sk_real *p) { return _mm256_loadu_ps(p); }
/* Every lane but the last n, 0 <= n < SK_LANES: a masked load gives 0 in those and does
 * not read them, a masked store does not write them. */
SK_INLINE sk_mask sk_mask_but_last(int n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(SK_LANES - n),
				  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static const sk_mask sk_all_lanes = { -1, -1, -1, -1 };
SK_INLINE sk_vec sk_load_masked(sk_mask m, const sk_real *p)
{
	return _mm256_maskload_ps(p, m);
}
/* A whole vector stored plainly, as in codelets/smallkernel_avx2_d.h. */
SK_INLINE void sk_store_masked(sk_real *p, sk_mask m, sk_vec x)
{
	if (_mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xff)
		_mm256_storeu_ps(p, x);
	else
		_mm256_maskstore_ps(p, m, x);
}
/* x y + z, rounded once */
SK_INLINE sk_vec sk_fmadd(sk_vec x, sk_vec y, sk_vec z) { return _mm256_fmadd_ps(x, y, z); }
SK_INLINE sk_vec sk_mul(sk_vec x, sk_vec y) { return _mm256_mul_ps(x, y); }
SK_INLINE sk_vec sk_add(sk_vec x, sk_vec y) { return _mm256_add_ps(x, y); }
/* (x1, x0, x3, x2, ...): a complex number's parts exchanged */
SK_INLINE sk_vec sk_swap_pairs(sk_vec x) { return _mm256_permute_ps(x, 0xb1); }
/* (s, -s, s, -s, ...), s = 1 or -1 */
SK_INLINE sk_vec sk_alternate(int s)
{
	sk_real e = s > 0 ? 1.0f : -1.0f;

	return _mm256_set_ps(-e, e, -e, e, -e, e, -e, e);
}

#endif
#endif
