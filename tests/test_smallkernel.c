/*
 * tests/test_smallkernel.c — the kernels for small tile products of every shape, double
 * (codelets/smallkernel.c) and single (codelets/smallkernel_single.c), against a plain
 * triple loop in double: no MPI, no StarPU run. TAP output; skipped (exit 77 through
 * the driver: "1..0 # SKIP") on a CPU without AVX-512F, where stargemm never calls them.
 *
 * Properties checked, in both precisions, for op(B) = B and B^T:
 *  - every m in 1..40 (double: the row blocks of 8, 16, 24 and 32 rows; single: of 16
 *    and 32; their masked last vectors), single up to 72 rows too (its blocks of 48 and
 *    64 rows), with every n in 1..24 (every column remainder of the blocks of 6 and 8
 *    columns, up to four blocks) and k in 1..5, 11, 17, ..., 35, and a random sample up
 *    to 256 (the sweep kept small enough for AddressSanitizer's build: about 30 s);
 *  - alpha = 1 and -0.75, beta = 0, 1 and 0.5; beta = 0 overwrites a C of NaN;
 *  - leading dimensions larger than the rows: the elements between (C's padding) are
 *    left as they were;
 *  - k = 0: C = beta C.
 * And the kernel a batched product takes (stargemm__small_choice()): the one kernel for
 * irregular tilings in every type, for every complex product, and for real ones libxsmm
 * declines (alpha != 1, or no libxsmm); libxsmm's on regular real tilings; BLAS for
 * sides above 256; the same for op(A) = A^T and A^H (copied out to A first). Then the
 * whole dispatch (stargemm__small_gemm()) against the type's BLAS, in every type, for
 * op(A) = A^T and A^H (complex), op(B) = B and B^T, regular and irregular tilings,
 * several alpha and beta, and a side above 256.
 */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "internal.h"

static int ntests, nfailed;

static void ok(int cond, const char *name)
{
	ntests++;
	nfailed += !cond;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ntests, name);
}

static uint64_t rng = 0x5eed;

static double uniform(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

struct gemm_case {
	char tb;
	int m, n, k, lda, ldb, ldc;
	double alpha, beta;
	int single;   /* stargemm__sgemm_any(), on the same values rounded to float */
};

/* An element of an operand: a double, or one that a float holds exactly. */
static double element(const struct gemm_case *g)
{
	return g->single ? (double)(float)uniform() : uniform();
}

/* The kernel of g's precision on a, b, c (doubles; in single, copied to floats and C
 * back, exactly). */
static int run_kernel(const struct gemm_case *g, const double *a, size_t na, const double *b,
		      size_t nb, double *c, size_t nc)
{
	float *af, *bf, *cf;

	if (!g->single) {
		stargemm__dgemm_any(g->tb, g->m, g->n, g->k, g->alpha, a, g->lda, b, g->ldb,
				    g->beta, c, g->ldc);
		return 0;
	}
	af = malloc(na * sizeof(*af));
	bf = malloc((nb ? nb : 1) * sizeof(*bf));
	cf = malloc(nc * sizeof(*cf));
	if (af && bf && cf) {
		for (size_t e = 0; e < na; e++)
			af[e] = (float)a[e];
		for (size_t e = 0; e < nb; e++)
			bf[e] = (float)b[e];
		for (size_t e = 0; e < nc; e++)
			cf[e] = (float)c[e];
		stargemm__sgemm_any(g->tb, g->m, g->n, g->k, (float)g->alpha, af, g->lda, bf,
				    g->ldb, (float)g->beta, cf, g->ldc);
		for (size_t e = 0; e < nc; e++)
			c[e] = cf[e];
	}
	free(af);
	free(bf);
	free(cf);
	return af && bf && cf ? 0 : -1;
}

/* Runs one case; 0 when C matches the loop (and the padding is untouched). */
static int check_case(const struct gemm_case *g, char *why, size_t len)
{
	int bcols = g->tb == 'N' ? g->n : g->k;
	size_t na = (size_t)g->lda * (g->k > 0 ? g->k : 1), nb = (size_t)g->ldb * bcols;
	size_t nc = (size_t)g->ldc * g->n;
	double *a = malloc(na * sizeof(*a)), *b = malloc((nb ? nb : 1) * sizeof(*b));
	double *c = malloc(nc * sizeof(*c)), *ref = malloc(nc * sizeof(*ref));
	int bad = !a || !b || !c || !ref;

	double eps = g->single ? 6.0e-8 : 1.1e-16;   /* unit roundoff */

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
			double want = ref[i + (size_t)j * g->ldc], scale = 1.0, err;

			if (i < g->m) {
				double s = 0.0;

				for (int p = 0; p < g->k; p++) {
					double bpj = g->tb == 'N' ? b[p + (size_t)j * g->ldb]
								  : b[j + (size_t)p * g->ldb];

					s += a[i + (size_t)p * g->lda] * bpj;
					scale += fabs(a[i + (size_t)p * g->lda] * bpj);
				}
				want = g->alpha * s + (g->beta == 0.0 ? 0.0 : g->beta * want);
			}
			err = fabs(c[i + (size_t)j * g->ldc] - want);
			if (!(err <= 4.0 * (g->k + 2) * eps * scale) &&
			    !(i >= g->m && memcmp(&c[i + (size_t)j * g->ldc], &want, sizeof(want)) == 0)) {
				snprintf(why, len, "C(%d,%d) = %g, want %g", i, j,
					 c[i + (size_t)j * g->ldc], want);
				bad = 1;
			}
		}
	free(a);
	free(b);
	free(c);
	free(ref);
	return bad;
}

static void name_of(const struct gemm_case *g, char *buf, size_t len)
{
	snprintf(buf, len, "%s tb=%c m=%d n=%d k=%d ld=%d,%d,%d alpha=%g beta=%g",
		 g->single ? "single" : "double", g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc,
		 g->alpha, g->beta);
}

/* Every m up to @p rows, n up to 24, k up to 35 (all to 5, then every 6th), one TAP
 * line per (precision, tb, alpha, beta) with the first failure named. */
static void exhaustive(int single, char tb, double alpha, double beta, int rows)
{
	char name[200], why[96] = "", first[160] = "";
	int bad = 0;

	for (int m = 1; m <= rows; m++)
		for (int n = 1; n <= 24; n++)
			for (int k = 1; k <= 35; k += (k < 5 ? 1 : 6)) {
				struct gemm_case g = { tb, m, n, k, m + 3, (tb == 'N' ? k : n) + 1,
						       m + 2, alpha, beta, single };

				if (check_case(&g, why, sizeof(why)) && !bad++)
					name_of(&g, first, sizeof(first));
			}
	snprintf(name, sizeof(name), "%s, every shape up to %d x 24 x 35, tb=%c alpha=%g "
		 "beta=%g%s%s%s", single ? "single" : "double", rows, tb, alpha,
		 beta, bad ? ": first failure " : "", first, bad ? why : "");
	ok(!bad, name);
}

/* One TAP line: the kernel chosen for type @p letter's product is @p want. */
static void choice(char letter, char ta, int side, double alpha, int one_kernel,
		   enum stargemm__small_kernel want)
{
	static const char *const names[] = { "one kernel", "libxsmm", "BLAS" };
	enum stargemm__small_kernel got = stargemm__small_choice(stargemm__element(letter), ta,
								 side, side, side, alpha,
								 one_kernel);
	char name[160];

	snprintf(name, sizeof(name), "kernel of a %c product, op(A)=%c, %d^3, alpha=%g, %s "
		 "tiling: %s (want %s)", letter, ta, side, alpha, one_kernel ? "irregular" :
		 "regular", names[got], names[want]);
	ok(got == want, name);
}

static void choices(void)
{
#ifdef HAVE_LIBXSMM
	const enum stargemm__small_kernel regular = STARGEMM__SMALL_XSMM;
#else
	const enum stargemm__small_kernel regular = STARGEMM__SMALL_ONE;
#endif
	const char letters[4] = { 's', 'd', 'c', 'z' };

	for (int t = 0; t < 4; t++) {
		int complex_type = letters[t] == 'c' || letters[t] == 'z';

		choice(letters[t], 'N', 40, 1.0, 1, STARGEMM__SMALL_ONE);
		choice(letters[t], 'N', 40, 1.0, 0, complex_type ? STARGEMM__SMALL_ONE : regular);
		choice(letters[t], 'N', 40, -0.5, 0, STARGEMM__SMALL_ONE);
		choice(letters[t], 'N', 256, 1.0, 1, STARGEMM__SMALL_ONE);
		choice(letters[t], 'T', 40, 1.0, 1, STARGEMM__SMALL_ONE);
		choice(letters[t], 'T', 40, 1.0, 0, complex_type ? STARGEMM__SMALL_ONE : regular);
		choice(letters[t], 'N', 257, 1.0, 1, STARGEMM__SMALL_BLAS);
	}
}

/* Uniform values in [-0.5, 0.5) (complex: both parts) in @p count elements of type t. */
static void fill_typed(const struct stargemm__element *t, void *x, size_t count)
{
	for (size_t e = 0; e < count; e++) {
		double re = uniform();

		t->store(x, (int64_t)e, re, uniform());
	}
}

struct dispatch_case {
	char ta, tb;
	int m, n, k, one_kernel;
	double _Complex alpha, beta;
};

/* stargemm__small_gemm() against t->cpu_gemm on the same operands; 0 when C matches
 * within the type's rounding (message in @p why otherwise). */
static int dispatch_case(const struct stargemm__element *t, const struct dispatch_case *d,
			 char *why, size_t len)
{
	int lda = (d->ta == 'N' ? d->m : d->k) + 1, ldb = (d->tb == 'N' ? d->k : d->n) + 2;
	int ldc = d->m + 3;
	size_t na = (size_t)lda * (d->ta == 'N' ? d->k : d->m);
	size_t nb = (size_t)ldb * (d->tb == 'N' ? d->n : d->k), nc = (size_t)ldc * d->n;
	char *a = malloc(na * t->size), *b = malloc(nb * t->size);
	char *c = malloc(nc * t->size), *ref = malloc(nc * t->size);
	struct stargemm__small_cache cache = { .one_kernel = d->one_kernel };
	double eps = t->letter == 's' || t->letter == 'c' ? 6.0e-8 : 1.1e-16;
	int bad = !a || !b || !c || !ref;

	if (!bad) {
		fill_typed(t, a, na);
		fill_typed(t, b, nb);
		fill_typed(t, c, nc);
		memcpy(ref, c, nc * t->size);
		stargemm__small_gemm(&cache, t, d->ta, d->tb, d->m, d->n, d->k, d->alpha, a, lda,
				     b, ldb, d->beta, c, ldc);
		t->cpu_gemm(d->ta, d->tb, d->m, d->n, d->k, d->alpha, a, lda, b, ldb, d->beta,
			    ref, ldc);
		stargemm__small_cache_free(&cache);
	}
	for (size_t e = 0; e < nc && !bad; e++) {
		double _Complex got = t->load(c + e * t->size), want = t->load(ref + e * t->size);

		if (cabs(got - want) > 16.0 * (d->k + 2) * eps) {
			snprintf(why, len, ": C element %zu = %g%+gi, BLAS %g%+gi", e, creal(got),
				 cimag(got), creal(want), cimag(want));
			bad = 1;
		}
	}
	free(a);
	free(b);
	free(c);
	free(ref);
	return bad;
}

/* One TAP line per type, op(A) and op(B): the shapes, tilings and scalars below. */
static void dispatch(char letter, char ta, char tb)
{
	const struct stargemm__element *t = stargemm__element(letter);
	const int shapes[4][3] = { { 7, 5, 9 }, { 23, 23, 23 }, { 37, 6, 50 }, { 260, 3, 4 } };
	const double _Complex alphas[2] = { 1.0, t->is_complex ? 0.5 - 0.25 * I : 0.5 };
	const double _Complex betas[3] = { 0.0, 1.0, t->is_complex ? -0.5 + 0.75 * I : -0.5 };
	char name[200], why[120] = "";
	int bad = 0;

	for (int s = 0; s < 4 && !bad; s++)
		for (int one = 0; one < 2 && !bad; one++)
			for (int x = 0; x < 2 && !bad; x++)
				for (int y = 0; y < 3 && !bad; y++) {
					struct dispatch_case d = { ta, tb, shapes[s][0],
								   shapes[s][1], shapes[s][2],
								   one, alphas[x], betas[y] };

					bad = dispatch_case(t, &d, why, sizeof(why));
					if (bad)
						snprintf(name, sizeof(name), "%d x %d x %d, %s "
							 "tiling, alpha %d, beta %d", d.m, d.n,
							 d.k, one ? "irregular" : "regular", x, y);
				}
	snprintf(name + (bad ? strlen(name) : 0), sizeof(name) - (bad ? strlen(name) : 0),
		 "%s", bad ? why : "");
	{
		char line[400];

		snprintf(line, sizeof(line), "%s products through the dispatch, op(A)=%c "
			 "op(B)=%c, against BLAS%s%s", t->name, ta, tb, bad ? ": " : "",
			 bad ? name : "");
		ok(!bad, line);
	}
}

int main(void)
{
	const double alphas[2] = { 1.0, -0.75 }, betas[3] = { 0.0, 1.0, 0.5 };
	const char tbs[2] = { 'N', 'T' };
	char name[200], why[96];

	if (!stargemm__dgemm_any_usable()) {
		printf("1..0 # SKIP this CPU has no AVX-512F (the kernel is not used)\n");
		return 0;
	}
	choices();
	for (int t = 0; t < 4; t++) {
		const char letter = "sdcz"[t];

		for (int b = 0; b < 2; b++) {
			dispatch(letter, 'N', "NT"[b]);
			dispatch(letter, 'T', "NT"[b]);
			if (letter == 'c' || letter == 'z')
				dispatch(letter, 'C', "NT"[b]);
		}
	}
	for (int single = 0; single < 2; single++)
		for (int t = 0; t < 2; t++)
			for (int x = 0; x < 2; x++)
				for (int y = 0; y < 3; y++)
					exhaustive(single, tbs[t], alphas[x], betas[y],
						   single ? 72 : 40);
	for (int s = 0; s < 120; s++) {
		struct gemm_case g = { tbs[s % 2], 1 + (int)((uniform() + 0.5) * 256),
				       1 + (int)((uniform() + 0.5) * 256),
				       1 + (int)((uniform() + 0.5) * 256), 0, 0, 0,
				       alphas[s % 2], betas[s % 3], s >= 60 };

		g.m = g.m > 256 ? 256 : g.m;
		g.n = g.n > 256 ? 256 : g.n;
		g.k = g.k > 256 ? 256 : g.k;
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
		struct gemm_case g = { 'N', 17, 9, 0, 17, 1, 19, 1.0, betas[y % 3], y >= 3 };

		why[0] = 0;
		name_of(&g, name, sizeof(name));
		ok(!check_case(&g, why, sizeof(why)), name);
	}
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
