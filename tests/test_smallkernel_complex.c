/*
 * tests/test_smallkernel_complex.c — the complex kernels for small tile products of every
 * shape, double and single (codelets/smallkernel_algo_complex.c), of every instruction
 * set the CPU running the test has (AVX-512F: codelets/smallkernel_avx512_[zc].c; AVX2 +
 * FMA: codelets/smallkernel_avx2_[zc].c), each called by its name, against a plain triple
 * loop in double: no MPI, no StarPU run. TAP output; skipped ("1..0 # SKIP") only on a CPU
 * with neither, where stargemm never calls them.
 *
 * Properties checked, for each instruction set, in both precisions, for op(B) = B, B^T
 * and B^H (conjugated) (one TAP line per instruction set, precision, op(B) and sweep, the
 * first failure named):
 *  - every m and n in 1..64 with k = 1, 2 and 6 (the row blocks of every blocking,
 *    their masked last vectors, several blocks; every column remainder of the blocks of
 *    5, 6 and 8 columns), every k in 1..64 on a few m x n, every m in 65..160 (several
 *    row blocks of equal height) on a few n, and a random sample up to 256;
 *  - alpha = 1 and 0.5 - 0.75i, beta = 0, 1 and -0.25 + 0.5i in turn over the shapes;
 *    beta = 0 overwrites a C of NaN;
 *  - leading dimensions equal to the rows or larger, odd and even: the elements of C
 *    between (its padding) are left as they were;
 *  - k = 0: C = beta C;
 *  - stargemm__zgemm_any() and stargemm__cgemm_any() give what the kernels of
 *    stargemm__small_isa() give, to the bit.
 * The sweeps take about 4 s of a -O2 build (dev, both instruction sets).
 */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"



static uint64_t rng = 0xc0ffee;

static double uniform(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

/* The instruction sets with kernels, widest first, and their kernels by name. */
static const struct isa_kernels {
	enum stargemm__isa isa;
	void (*z)(char, int, int, int, const double *, const void *, int, const void *, int,
		  const double *, void *, int);
	void (*c)(char, int, int, int, const float *, const void *, int, const void *, int,
		  const float *, void *, int);
} isas[] = {
	{ STARGEMM__ISA_AVX512, stargemm__zgemm_any_avx512, stargemm__cgemm_any_avx512 },
	{ STARGEMM__ISA_AVX2, stargemm__zgemm_any_avx2, stargemm__cgemm_any_avx2 },
};

struct zcase {
	char tb;
	int m, n, k, lda, ldb, ldc;
	double _Complex alpha, beta;
	int single;   /* stargemm__cgemm_any_*(), on the same values rounded to float */
	const struct isa_kernels *kern;   /* NULL: stargemm__zgemm_any() or _cgemm_any() */
};

/* An element of an operand: a complex double, or one that a complex float holds exactly. */
static double _Complex element(const struct zcase *g)
{
	double re = uniform(), im = uniform();

	if (g->single)
		re = (float)re, im = (float)im;
	return re + im * I;
}

/* The kernel of g's precision and instruction set on a, b, c (complex doubles; in single,
 * copied to complex floats and C back, exactly). */
static int run_kernel(const struct zcase *g, const double _Complex *a, size_t na,
		      const double _Complex *b, size_t nb, double _Complex *c, size_t nc)
{
	const double za[2] = { creal(g->alpha), cimag(g->alpha) };
	const double zb[2] = { creal(g->beta), cimag(g->beta) };
	const float ca[2] = { (float)za[0], (float)za[1] }, cb[2] = { (float)zb[0], (float)zb[1] };
	float _Complex *af, *bf, *cf;

	if (!g->single) {
		(g->kern ? g->kern->z : stargemm__zgemm_any)(g->tb, g->m, g->n, g->k, za, a,
							      g->lda, b, g->ldb, zb, c, g->ldc);
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
		(g->kern ? g->kern->c : stargemm__cgemm_any)(g->tb, g->m, g->n, g->k, ca, af,
							      g->lda, bf, g->ldb, cb, cf, g->ldc);
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

/* Complex elements after C's last column, which the kernel must not write either. */
enum { GUARD = 8 };

/* Runs one case; 0 when C matches the loop (and the padding is untouched). */
static int check_case(const struct zcase *g, char *why, size_t len)
{
	int bcols = g->tb == 'N' ? g->n : g->k;
	size_t na = (size_t)g->lda * (g->k > 0 ? g->k : 1), nb = (size_t)g->ldb * bcols;
	size_t nc = (size_t)g->ldc * g->n;
	double _Complex *a = malloc(na * sizeof(*a)), *b = malloc((nb ? nb : 1) * sizeof(*b));
	double _Complex *c = malloc((nc + GUARD) * sizeof(*c));
	double _Complex *ref = malloc((nc + GUARD) * sizeof(*ref));
	double eps = g->single ? 6.0e-8 : 1.1e-16;   /* unit roundoff */
	int bad = !a || !b || !c || !ref;

	for (size_t e = 0; e < na && !bad; e++)
		a[e] = element(g);
	for (size_t e = 0; e < nb && !bad; e++)
		b[e] = element(g);
	for (size_t e = 0; e < nc + GUARD && !bad; e++)
		c[e] = e < nc && (int)(e % (size_t)g->ldc) < g->m && g->beta == 0.0 ? NAN
										 : element(g);
	if (!bad) {
		memcpy(ref, c, (nc + GUARD) * sizeof(*c));
		bad = run_kernel(g, a, na, b, nb, c, nc + GUARD);
	}
	if (!bad && memcmp(c + nc, ref + nc, GUARD * sizeof(*c)) != 0) {
		snprintf(why, len, "an element after C's last column written");
		bad = 1;
	}
	for (int j = 0; j < g->n && !bad; j++)
		for (int i = 0; i < g->ldc && !bad; i++) {
			double _Complex got = c[i + (size_t)j * g->ldc];
			double _Complex want = ref[i + (size_t)j * g->ldc];
			double scale = 1.0, err;

			if (i < g->m)
				want = expected(g, a, b, want, i, j, &scale);
			err = fabs(creal(got - want)) + fabs(cimag(got - want));   /* >= |got - want| */
			if (!(err <= 8.0 * (g->k + 2) * eps * scale) &&
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
	snprintf(buf, len, "%s %s tb=%c m=%d n=%d k=%d ld=%d,%d,%d alpha=%g%+gi beta=%g%+gi",
		 g->kern ? stargemm__small_isa_name(g->kern->isa) : "dispatched",
		 g->single ? "single complex" : "double complex", g->tb, g->m, g->n, g->k, g->lda,
		 g->ldb, g->ldc, creal(g->alpha), cimag(g->alpha), creal(g->beta),
		 cimag(g->beta));
}

static const double _Complex alphas[2] = { 1.0, 0.5 - 0.75 * I };
static const double _Complex betas[3] = { 0.0, 1.0, -0.25 + 0.5 * I };

/* A case of shape m x n x k: the scalars the @p turn-th of the 6 pairs (alpha, beta),
 * leading dimensions m to m + 3 and rows to rows + 2 by @p turn too (odd and even). */
static struct zcase shape_case(const struct isa_kernels *kern, int single, char tb, int m,
			       int n, int k, int turn)
{
	struct zcase g = { tb, m, n, k, m + turn % 4, (tb == 'N' ? k : n) + turn % 3,
			   m + (turn + 1) % 4, alphas[turn % 2], betas[turn / 2 % 3], single,
			   kern };

	return g;
}

/* One TAP line: the cases of a sweep, the first failure named. */
struct sweep {
	int count, bad;
	char first[280];
};

static void sweep_case(struct sweep *w, const struct zcase *g)
{
	char why[120] = "";

	w->count++;
	if (check_case(g, why, sizeof(why)) && !w->bad++) {
		name_of(g, w->first, sizeof(w->first));
		strncat(w->first, ": ", sizeof(w->first) - strlen(w->first) - 1);
		strncat(w->first, why, sizeof(w->first) - strlen(w->first) - 1);
	}
}

static void sweep_line(const struct sweep *w, const struct isa_kernels *kern, int single,
		       char tb, const char *what)
{
	char name[440];

	snprintf(name, sizeof(name), "%s %s tb=%c, %s: %d cases%s%s",
		 stargemm__small_isa_name(kern->isa), single ? "single complex" : "double complex",
		 tb, what, w->count, w->bad ? ", first failure " : "", w->bad ? w->first : "");
	tap_ok(!w->bad, name);
}

static int side(void)
{
	int s = 1 + (int)((uniform() + 0.5) * 256);

	return s > 256 ? 256 : s;
}

/* The sweeps of one instruction set's kernel of one precision and op(B), a TAP line
 * each. */
static void sweeps(const struct isa_kernels *kern, int single, char tb)
{
	static const int grid_k[3] = { 1, 2, 6 };
	static const int k_shapes[4][2] = { { 1, 1 }, { 13, 7 }, { 37, 22 }, { 64, 64 } };
	static const int tall_n[3] = { 1, 5, 9 };
	struct sweep grid = { 0 }, ks = { 0 }, tall = { 0 }, sample = { 0 }, empty = { 0 };
	struct zcase g;

	for (int m = 1; m <= 64; m++)
		for (int n = 1; n <= 64; n++)
			for (int x = 0; x < 3; x++) {
				g = shape_case(kern, single, tb, m, n, grid_k[x], m + n + x);
				sweep_case(&grid, &g);
			}
	sweep_line(&grid, kern, single, tb, "every m, n in 1..64, k = 1, 2, 6");
	for (int s = 0; s < 4; s++)
		for (int k = 1; k <= 64; k++) {
			g = shape_case(kern, single, tb, k_shapes[s][0], k_shapes[s][1], k, k + s);
			sweep_case(&ks, &g);
		}
	sweep_line(&ks, kern, single, tb, "every k in 1..64, m x n = 1 x 1, 13 x 7, 37 x 22, "
		   "64 x 64");
	for (int m = 65; m <= 160; m++)
		for (int x = 0; x < 3; x++) {
			g = shape_case(kern, single, tb, m, tall_n[x], 3, m + x);
			sweep_case(&tall, &g);
		}
	sweep_line(&tall, kern, single, tb, "every m in 65..160, n = 1, 5, 9, k = 3");
	for (int x = 0; x < 6; x++) {
		int m = side(), n = side(), k = side();

		g = shape_case(kern, single, tb, m, n, k, x);
		sweep_case(&sample, &g);
	}
	sweep_line(&sample, kern, single, tb, "random m, n, k in 1..256");
	for (int y = 0; y < 3; y++) {
		g = (struct zcase){ tb, 13, 9, 0, 13, tb == 'N' ? 1 : 9, 15, 1.0, betas[y], single,
				    kern };
		sweep_case(&empty, &g);
	}
	sweep_line(&empty, kern, single, tb, "k = 0, 13 x 9, three beta: C = beta C");
}

/* The kernels stargemm calls give what the kernels of stargemm__small_isa() give, to the
 * bit (one case each; tests/test_smallkernel.c checks stargemm__small_isa() itself). */
static void widest(void)
{
	int isa = stargemm__small_isa();
	const struct isa_kernels *kern = NULL;
	char name[200];

	for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]); i++)
		if ((int)isas[i].isa == isa)
			kern = &isas[i];
	for (int single = 0; single < 2; single++) {
		double _Complex c1[27 * 20], c2[27 * 20], a[27 * 30], b[30 * 20];
		struct zcase g = { 'C', 25, 20, 30, 27, 20, 27, 0.5 + 0.25 * I, -0.25 + 1.0 * I,
				   single, NULL };

		for (size_t e = 0; e < sizeof(a) / sizeof(a[0]); e++)
			a[e] = element(&g);
		for (size_t e = 0; e < sizeof(b) / sizeof(b[0]); e++)
			b[e] = element(&g);
		for (size_t e = 0; e < sizeof(c1) / sizeof(c1[0]); e++)
			c1[e] = c2[e] = element(&g);
		run_kernel(&g, a, sizeof(a) / sizeof(a[0]), b, sizeof(b) / sizeof(b[0]), c1,
			   sizeof(c1) / sizeof(c1[0]));
		g.kern = kern;
		if (kern)
			run_kernel(&g, a, sizeof(a) / sizeof(a[0]), b, sizeof(b) / sizeof(b[0]), c2,
				   sizeof(c2) / sizeof(c2[0]));
		snprintf(name, sizeof(name), "stargemm__%cgemm_any() gives what the %s kernel "
			 "gives, to the bit", single ? 'c' : 'z', stargemm__small_isa_name(isa));
		tap_ok(kern && memcmp(c1, c2, sizeof(c1)) == 0, name);
	}
}

int main(void)
{
	const char tbs[3] = { 'N', 'T', 'C' };

	if (!stargemm__dgemm_any_usable()) {
		printf("1..0 # SKIP this CPU has neither AVX-512F nor AVX2 + FMA (the kernels "
		       "are not used)\n");
		return 0;
	}
	widest();
	for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]); i++) {
		if (!stargemm__small_isa_usable(isas[i].isa)) {
			printf("# %s: not on this CPU, its kernels not tested\n",
			       stargemm__small_isa_name(isas[i].isa));
			continue;
		}
		for (int single = 0; single < 2; single++)
			for (int t = 0; t < 3; t++)
				sweeps(&isas[i], single, tbs[t]);
	}
	return tap_done();
}
