/*
 * codelets/smallkernel_avx2_d.h — the vector type the kernels for small tile products
 * are written on, for doubles on AVX2 + FMA: vectors of 4 doubles, masks as vectors of 4
 * 64-bit integers (a lane is touched when its sign bit is set), the same names as
 * codelets/smallkernel_avx512_d.h (which says what and why). Included by
 * codelets/smallkernel_avx2_d.c and codelets/smallkernel_avx2_z.c.
 *
 * Why masks as vectors: AVX2 has no mask registers; _mm256_maskload_pd and
 * _mm256_maskstore_pd neither read nor write the lanes the mask leaves out (no fault
 * past the end of a column, C's padding left as it is).
 */
#ifndef STARGEMM_SMALLKERNEL_AVX2_D_H
#define STARGEMM_SMALLKERNEL_AVX2_D_H

typedef double sk_real;   /* an element of a real matrix; each part of a complex one */

#include "smallkernel_avx2.h"

#ifdef SK_VECTORS

typedef __m256d sk_vec;
typedef __m256i sk_mask;    /* which lanes a load or store touches: those all ones */
enum { SK_LANES = 4 };      /* sk_real per sk_vec */

SK_INLINE sk_vec sk_zero(void) { return _mm256_setzero_pd(); }
SK_INLINE sk_vec sk_set1(sk_real x) { return _mm256_set1_pd(x); }
SK_INLINE sk_vec sk_load(const sk_real *p) { return _mm256_loadu_pd(p); }
/* Every lane but the last n, 0 <= n < SK_LANES: a masked load gives 0 in those and does
 * not read them, a masked store does not write them. */
SK_INLINE sk_mask sk_mask_but_last(int n)
{
	return _mm256_cmpgt_epi64(_mm256_set1_epi64x(SK_LANES - n),
				  _mm256_setr_epi64x(0, 1, 2, 3));
}
static const sk_mask sk_all_lanes = { -1, -1, -1, -1 };
SK_INLINE sk_vec sk_load_masked(sk_mask m, const sk_real *p)
{
	return _mm256_maskload_pd(p, m);
}
/* A whole vector (sk_all_lanes, where the test folds away, or a last vector that is
 * whole) is stored plainly: GCC does not make a plain store of a masked one with an
 * all-ones mask (it does on AVX-512), and a masked store can be much slower on AMD's Zen
 * CPUs. */
SK_INLINE void sk_store_masked(sk_real *p, sk_mask m, sk_vec x)
{
	if (_mm256_movemask_pd(_mm256_castsi256_pd(m)) == 0xf)
		_mm256_storeu_pd(p, x);
	else
		_mm256_maskstore_pd(p, m, x);
}
/* x y + z, rounded once */
SK_INLINE sk_vec sk_fmadd(sk_vec x, sk_vec y, sk_vec z) { return _mm256_fmadd_pd(x, y, z); }
SK_INLINE sk_vec sk_mul(sk_vec x, sk_vec y) { return _mm256_mul_pd(x, y); }
SK_INLINE sk_vec sk_add(sk_vec x, sk_vec y) { return _mm256_add_pd(x, y); }
/* (x1, x0, x3, x2): a complex number's parts exchanged */
SK_INLINE sk_vec sk_swap_pairs(sk_vec x) { return _mm256_permute_pd(x, 0x5); }
/* (s, -s, s, -s), s = 1 or -1 */
SK_INLINE sk_vec sk_alternate(int s)
{
	return s > 0 ? _mm256_set_pd(-1, 1, -1, 1) : _mm256_set_pd(1, -1, 1, -1);
}

#endif
#endif
