/*
 * tests/test_smallkernel_complex.c — the complex kernels for small tile products of every
 * shape, double (codelets/smallkernel_complex.c) and single
 * (codelets/smallkernel_complex_single.c), against a plain triple loop in double: no
 * MPI, no StarPU run. TAP output; skipped ("1..0 # SKIP") on a CPU without AVX-512F, where
 * stargemm never calls it.
 *
 * Properties checked, in both precisions, for op(B) = B, B^T and B^H (conjugated):
 *  - every m in 1..36 (double: the row blocks of 4, 8, 12 and 16 rows, their masked
 *    last vectors, two and three blocks; single: of 8, 16, 24 and 32 rows), single up to
 *    72 rows too (two and three blocks), n in 1..17 (every column remainder of the blocks
 *    of 5, 6 and 8 columns) and k in 1..5, 9, 13 and 20, and a random sample up to 256;
 *  - alpha = 1 and 0.5 - 0.75i, beta = 0, 1 and -0.25 + 0.5i; beta = 0 overwrites a C
 *    of NaN;
 *  - leading dimensions larger than the rows: the elements between (C's padding) are
 *    left as they were;
 *  - k = 0: C = beta C.
 */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int ntests, nfailed;

static void ok(int cond, const char *name)
{
	ntests++;
	nfailed += !cond;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ntests, name);
}

static uint64_t rng = 0xc0ffee;

static double uniform(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

struct zcase {
	char tb;
	int m, n, k, lda, ldb, ldc;
	double _Complex alpha, beta;
	int single;   /* stargemm__cgemm_any(), on the same values rounded to float */
};

/* An element of an operand: a complex double, or one that a complex float holds exactly. */
static double _Complex element(const struct zcase *g)
{
	double re = uniform(), im = uniform();

	if (g->single)
		re = (float)re, im = (float)im;
	return re + im * I;
}

/* The kernel of g's precision on a, b, c (complex doubles; in single, copied to complex
 * floats and C back, exactly). */
static int run_kernel(const struct zcase *g, const double _Complex *a, size_t na,
		      const double _Complex *b, size_t nb, double _Complex *c, size_t nc)
{
	const double za[2] = { creal(g->alpha), cimag(g->alpha) };
	const double zb[2] = { creal(g->beta), cimag(g->beta) };
	const float ca[2] = { (float)za[0], (float)za[1] }, cb[2] = { (float)zb[0], (float)zb[1] };
	float _Complex *af, *bf, *cf;

	if (!g->single) {
		stargemm__zgemm_any(g->tb, g->m, g->n, g->k, za, a, g->lda, b, g->ldb, zb, c,
				    g->ldc);
		return 0;
	}
	af = malloc(na * sizeof(*af));
	bf = malloc((nb ? nb : 1) * sizeof(*bf));
	cf = malloc(nc * sizeof(*cf));
	if (af && bf && cf) {
		for (size_t e = 0; e < na; e++)
			af[e] = (float _Complex)a[e];
		for (size_t e = 0; e < nb; e++)
			bf[e] = (float _Complex)b[e];
		for (size_t e = 0; e < nc; e++)
			cf[e] = (float _Complex)c[e];
		stargemm__cgemm_any(g->tb, g->m, g->n, g->k, ca, af, g->lda, bf, g->ldb, cb, cf,
				    g->ldc);
		for (size_t e = 0; e < nc; e++)
			c[e] = cf[e];
	}
	free(af);
	free(bf);
	free(cf);
	return af && bf && cf ? 0 : -1;
}

/* op(B)(p, j) */
static double _Complex op_b(const struct zcase *g, const double _Complex *b, int p, int j)
{
	if (g->tb == 'N')
		return b[p + (size_t)j * g->ldb];
	if (g->tb == 'T')
		return b[j + (size_t)p * g->ldb];
	return conj(b[j + (size_t)p * g->ldb]);
}

/* C(i, j)'s expected value from the old @p cij, and the sum of the magnitudes for the
 * error bound in @p scale. */
static double _Complex expected(const struct zcase *g, const double _Complex *a,
				const double _Complex *b, double _Complex cij, int i, int j,
				double *scale)
{
	double _Complex s = 0.0;

	*scale = 1.0;
	for (int p = 0; p < g->k; p++) {
		double _Complex x = a[i + (size_t)p * g->lda] * op_b(g, b, p, j);

		s += x;
		*scale += fabs(creal(x)) + fabs(cimag(x));
	}
	return g->alpha * s + (g->beta == 0.0 ? 0.0 : g->beta * cij);
}

/* Runs one case; 0 when C matches the loop (and the padding is untouched). */
static int check_case(const struct zcase *g, char *why, size_t len)
{
	int bcols = g->tb == 'N' ? g->n : g->k;
	size_t na = (size_t)g->lda * (g->k > 0 ? g->k : 1), nb = (size_t)g->ldb * bcols;
	size_t nc = (size_t)g->ldc * g->n;
	double _Complex *a = malloc(na * sizeof(*a)), *b = malloc((nb ? nb : 1) * sizeof(*b));
	double _Complex *c = malloc(nc * sizeof(*c)), *ref = malloc(nc * sizeof(*ref));
	double eps = g->single ? 6.0e-8 : 1.1e-16;   /* unit roundoff */
	int bad = !a || !b || !c || !ref;

	for (size_t e = 0; e < na && !bad; e++)
		a[e] = element(g);
	for (size_t e = 0; e < nb && !bad; e++)
		b[e] = element(g);
	for (size_t e = 0; e < nc && !bad; e++)
		c[e] = (int)(e % (size_t)g->ldc) < g->m && g->beta == 0.0 ? NAN : element(g);
	if (!bad) {
		memcpy(ref, c, nc * sizeof(*c));
		bad = run_kernel(g, a, na, b, nb, c, nc);
	}
	for (int j = 0; j < g->n && !bad; j++)
		for (int i = 0; i < g->ldc && !bad; i++) {
			double _Complex got = c[i + (size_t)j * g->ldc];
			double _Complex want = ref[i + (size_t)j * g->ldc];
			double scale = 1.0;

			if (i < g->m)
				want = expected(g, a, b, want, i, j, &scale);
			if (!(cabs(got - want) <= 8.0 * (g->k + 2) * eps * scale) &&
			    !(i >= g->m && memcmp(&got, &want, sizeof(want)) == 0)) {
				snprintf(why, len, "C(%d,%d) = %g%+gi, want %g%+gi", i, j,
					 creal(got), cimag(got), creal(want), cimag(want));
				bad = 1;
			}
		}
	free(a);
	free(b);
	free(c);
	free(ref);
	return bad;
}

static void name_of(const struct zcase *g, char *buf, size_t len)
{
	snprintf(buf, len, "%s tb=%c m=%d n=%d k=%d ld=%d,%d,%d alpha=%g%+gi beta=%g%+gi",
		 g->single ? "single complex" : "double complex", g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc, creal(g->alpha),
		 cimag(g->alpha), creal(g->beta), cimag(g->beta));
}

/* Every m up to @p rows, n and k up to 20, one TAP line per (precision, tb, alpha, beta)
 * with the first failure named. */
static void exhaustive(int single, char tb, double _Complex alpha, double _Complex beta,
		       int rows)
{
	char name[240], why[120] = "", first[160] = "";
	int bad = 0;

	for (int m = 1; m <= rows; m++)
		for (int n = 1; n <= 17; n++)
			for (int k = 1; k <= 20; k += (k < 5 ? 1 : k < 13 ? 4 : 7)) {
				struct zcase g = { tb, m, n, k, m + 3, (tb == 'N' ? k : n) + 1,
						   m + 2, alpha, beta, single };

				if (check_case(&g, why, sizeof(why)) && !bad++)
					name_of(&g, first, sizeof(first));
			}
	snprintf(name, sizeof(name), "%s, every shape up to %d x 17 x 20, tb=%c "
		 "alpha=%g%+gi beta=%g%+gi%s%s%s", single ? "single complex" : "double complex",
		 rows, tb, creal(alpha), cimag(alpha), creal(beta),
		 cimag(beta), bad ? ": first failure " : "", first, bad ? why : "");
	ok(!bad, name);
}

static int side(void)
{
	int s = 1 + (int)((uniform() + 0.5) * 256);

	return s > 256 ? 256 : s;
}

int main(void)
{
	const double _Complex alphas[2] = { 1.0, 0.5 - 0.75 * I };
	const double _Complex betas[3] = { 0.0, 1.0, -0.25 + 0.5 * I };
	const char tbs[3] = { 'N', 'T', 'C' };
	char name[240], why[120];

	if (!stargemm__dgemm_any_usable()) {
		printf("1..0 # SKIP this CPU has no AVX-512F (the kernel is not used)\n");
		return 0;
	}
	for (int single = 0; single < 2; single++)
		for (int t = 0; t < 3; t++)
			for (int x = 0; x < 2; x++)
				for (int y = 0; y < 3; y++)
					exhaustive(single, tbs[t], alphas[x], betas[y],
						   single ? 72 : 36);
	for (int s = 0; s < 120; s++) {
		struct zcase g = { tbs[s % 3], side(), side(), side(), 0, 0, 0, alphas[s % 2],
				   betas[s % 3], s >= 60 };

		g.lda = g.m + s % 5;
		g.ldb = (g.tb == 'N' ? g.k : g.n) + s % 3;
		g.ldc = g.m + s % 4;
		why[0] = 0;
		name_of(&g, name, sizeof(name));
		if (check_case(&g, why, sizeof(why)))
			strncat(name, why, sizeof(name) - strlen(name) - 1);
		ok(!why[0], name);
	}
	for (int y = 0; y < 6; y++) {
		struct zcase g = { 'N', 13, 9, 0, 13, 1, 15, 1.0, betas[y % 3], y >= 3 };

		why[0] = 0;
		name_of(&g, name, sizeof(name));
		ok(!check_case(&g, why, sizeof(why)), name);
	}
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
