/*
 * tests/test_smallkernel.c — the kernels for small tile products of every shape, double
 * and single (codelets/smallkernel_algo_real.c), of every instruction set the CPU running
 * the test has (AVX-512F: codelets/smallkernel_avx512_[ds].c; AVX2 + FMA:
 * codelets/smallkernel_avx2_[ds].c), each called by its name, against a plain triple loop
 * in double: no MPI, no StarPU run. TAP output; skipped (exit 77 through the driver:
 * "1..0 # SKIP") only on a CPU with neither, where stargemm never calls them.
 *
 * Properties checked, for each instruction set, in both precisions, for op(B) = B and
 * B^T (one TAP line per instruction set, precision, op(B) and sweep, the first failure
 * named):
 *  - every m and n in 1..64 with k = 1, 2, 7 and 16 (the row blocks of every blocking,
 *    their masked last vectors, several blocks; every column remainder of the blocks of
 *    4, 6 and 8 columns), every k in 1..64 on a few m x n, every m in 65..256 (several
 *    row blocks of equal height) on a few n, and a random sample up to 256;
 *  - alpha = 1 and -0.75, beta = 0, 1 and 0.5 in turn over the shapes; beta = 0
 *    overwrites a C of NaN;
 *  - leading dimensions equal to the rows or larger, odd and even: the elements of C
 *    between (its padding) are left as they were;
 *  - k = 0: C = beta C;
 *  - stargemm__small_isa() is the widest instruction set the CPU has, its name, and
 *    stargemm__dgemm_any() and stargemm__sgemm_any() give what its kernels give, to the
 *    bit.
 * The sweeps take about 3 s of a -O2 build (dev, both instruction sets).
 *
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
#include "tap.h"



static uint64_t rng = 0x5eed;

static double uniform(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

/* The instruction sets with kernels, widest first, and their kernels by name. */
static const struct isa_kernels {
	enum stargemm__isa isa;
	void (*d)(char, int, int, int, double, const double *, int, const double *, int,
		  double, double *, int);
	void (*s)(char, int, int, int, float, const float *, int, const float *, int, float,
		  float *, int);
} isas[] = {
	{ STARGEMM__ISA_AVX512, stargemm__dgemm_any_avx512, stargemm__sgemm_any_avx512 },
	{ STARGEMM__ISA_AVX2, stargemm__dgemm_any_avx2, stargemm__sgemm_any_avx2 },
};

struct gemm_case {
	char tb;
	int m, n, k, lda, ldb, ldc;
	double alpha, beta;
	int single;   /* stargemm__sgemm_any_*(), on the same values rounded to float */
	const struct isa_kernels *kern;   /* NULL: stargemm__dgemm_any() or _sgemm_any() */
};

/* An element of an operand: a double, or one that a float holds exactly. */
static double element(const struct gemm_case *g)
{
	return g->single ? (double)(float)uniform() : uniform();
}

/* The kernel of g's precision and instruction set on a, b, c (doubles; in single, copied
 * to floats and C back, exactly). */
static int run_kernel(const struct gemm_case *g, const double *a, size_t na, const double *b,
		      size_t nb, double *c, size_t nc)
{
	float *af, *bf, *cf;

	if (!g->single) {
		(g->kern ? g->kern->d : stargemm__dgemm_any)(g->tb, g->m, g->n, g->k, g->alpha,
							      a, g->lda, b, g->ldb, g->beta, c,
							      g->ldc);
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
		(g->kern ? g->kern->s : stargemm__sgemm_any)(g->tb, g->m, g->n, g->k,
							      (float)g->alpha, af, g->lda, bf,
							      g->ldb, (float)g->beta, cf, g->ldc);
		for (size_t e = 0; e < nc; e++)
			c[e] = cf[e];
	}
	free(af);
	free(bf);
	free(cf);
	return af && bf && cf ? 0 : -1;
}

/* Elements after C's last column, which the kernel must not write either. */
enum { GUARD = 16 };

/* Runs one case; 0 when C matches the loop (and the padding is untouched). */
static int check_case(const struct gemm_case *g, char *why, size_t len)
{
	int bcols = g->tb == 'N' ? g->n : g->k;
	size_t na = (size_t)g->lda * (g->k > 0 ? g->k : 1), nb = (size_t)g->ldb * bcols;
	size_t nc = (size_t)g->ldc * g->n;
	double *a = malloc(na * sizeof(*a)), *b = malloc((nb ? nb : 1) * sizeof(*b));
	double *c = malloc((nc + GUARD) * sizeof(*c));
	double *ref = malloc((nc + GUARD) * sizeof(*ref));
	int bad = !a || !b || !c || !ref;

	double eps = g->single ? 6.0e-8 : 1.1e-16;   /* unit roundoff */

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
	snprintf(buf, len, "%s %s tb=%c m=%d n=%d k=%d ld=%d,%d,%d alpha=%g beta=%g",
		 g->kern ? stargemm__small_isa_name(g->kern->isa) : "dispatched",
		 g->single ? "single" : "double", g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc,
		 g->alpha, g->beta);
}

static const double alphas[2] = { 1.0, -0.75 }, betas[3] = { 0.0, 1.0, 0.5 };

/* A case of shape m x n x k: the scalars the @p turn-th of the 6 pairs (alpha, beta),
 * leading dimensions m to m + 3 and rows to rows + 2 by @p turn too (odd and even). */
static struct gemm_case shape_case(const struct isa_kernels *kern, int single, char tb,
				   int m, int n, int k, int turn)
{
	struct gemm_case g = { tb, m, n, k, m + turn % 4, (tb == 'N' ? k : n) + turn % 3,
			       m + (turn + 1) % 4, alphas[turn % 2], betas[turn / 2 % 3],
			       single, kern };

	return g;
}

/* One TAP line: the cases of a sweep, the first failure named. */
struct sweep {
	int count, bad;
	char first[240];
};

static void sweep_case(struct sweep *w, const struct gemm_case *g)
{
	char why[96] = "";

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
	char name[400];

	snprintf(name, sizeof(name), "%s %s tb=%c, %s: %d cases%s%s",
		 stargemm__small_isa_name(kern->isa), single ? "single" : "double", tb, what,
		 w->count, w->bad ? ", first failure " : "", w->bad ? w->first : "");
	tap_ok(!w->bad, name);
}

/* The sweeps of one instruction set's kernel of one precision and op(B), a TAP line
 * each. */
static void sweeps(const struct isa_kernels *kern, int single, char tb)
{
	static const int grid_k[4] = { 1, 2, 7, 16 };
	static const int k_shapes[4][2] = { { 1, 1 }, { 13, 7 }, { 37, 22 }, { 64, 64 } };
	static const int tall_n[3] = { 1, 5, 11 };
	struct sweep grid = { 0 }, ks = { 0 }, tall = { 0 }, sample = { 0 }, empty = { 0 };
	struct gemm_case g;

	for (int m = 1; m <= 64; m++)
		for (int n = 1; n <= 64; n++)
			for (int x = 0; x < 4; x++) {
				g = shape_case(kern, single, tb, m, n, grid_k[x], m + n + x);
				sweep_case(&grid, &g);
			}
	sweep_line(&grid, kern, single, tb, "every m, n in 1..64, k = 1, 2, 7, 16");
	for (int s = 0; s < 4; s++)
		for (int k = 1; k <= 64; k++) {
			g = shape_case(kern, single, tb, k_shapes[s][0], k_shapes[s][1], k, k + s);
			sweep_case(&ks, &g);
		}
	sweep_line(&ks, kern, single, tb, "every k in 1..64, m x n = 1 x 1, 13 x 7, 37 x 22, "
		   "64 x 64");
	for (int m = 65; m <= 256; m++)
		for (int x = 0; x < 3; x++) {
			g = shape_case(kern, single, tb, m, tall_n[x], 3, m + x);
			sweep_case(&tall, &g);
		}
	sweep_line(&tall, kern, single, tb, "every m in 65..256, n = 1, 5, 11, k = 3");
	for (int x = 0; x < 40; x++) {
		int m = 1 + (int)((uniform() + 0.5) * 256), n = 1 + (int)((uniform() + 0.5) * 256);
		int k = 1 + (int)((uniform() + 0.5) * 256);

		g = shape_case(kern, single, tb, m > 256 ? 256 : m, n > 256 ? 256 : n,
			       k > 256 ? 256 : k, x);
		sweep_case(&sample, &g);
	}
	sweep_line(&sample, kern, single, tb, "random m, n, k in 1..256");
	for (int y = 0; y < 3; y++) {
		g = (struct gemm_case){ tb, 17, 9, 0, 17, tb == 'N' ? 1 : 9, 19, 1.0, betas[y],
					single, kern };
		sweep_case(&empty, &g);
	}
	sweep_line(&empty, kern, single, tb, "k = 0, 17 x 9, beta = 0, 1, 0.5: C = beta C");
}

/* stargemm__small_isa(): the widest instruction set usable, named; the kernels stargemm
 * calls give what that instruction set's kernels give, to the bit (one case each). */
static void widest(void)
{
	int isa = stargemm__small_isa(), want = STARGEMM__ISA_NONE;
	char name[200];

	for (int i = (int)(sizeof(isas) / sizeof(isas[0])) - 1; i >= 0; i--)
		if (stargemm__small_isa_usable(isas[i].isa))
			want = isas[i].isa;
	snprintf(name, sizeof(name), "stargemm__small_isa() is %s (want %s), named %s",
		 stargemm__small_isa_name(isa), stargemm__small_isa_name(want),
		 stargemm__small_isa_name(isa));
	tap_ok(isa == want && isa == stargemm__small_isa() && stargemm__dgemm_any_usable() &&
	   !stargemm__small_isa_usable(STARGEMM__ISA_NONE) &&
	   strcmp(stargemm__small_isa_name(STARGEMM__ISA_AVX2), "avx2") == 0 &&
	   strcmp(stargemm__small_isa_name(STARGEMM__ISA_AVX512), "avx512") == 0 &&
	   strcmp(stargemm__small_isa_name(STARGEMM__ISA_NONE), "none") == 0, name);
	for (int single = 0; single < 2; single++) {
		const struct isa_kernels *kern = NULL;
		double c1[41 * 30], c2[41 * 30], a[41 * 50], b[50 * 30];
		struct gemm_case g = { 'N', 37, 30, 50, 41, 50, 41, 0.5, 0.25, single, NULL };

		for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]); i++)
			if ((int)isas[i].isa == isa)
				kern = &isas[i];
		for (size_t e = 0; e < sizeof(a) / sizeof(a[0]); e++)
			a[e] = element(&g);
		for (size_t e = 0; e < sizeof(b) / sizeof(b[0]); e++)
			b[e] = element(&g);
		for (size_t e = 0; e < sizeof(c1) / sizeof(c1[0]); e++)
			c1[e] = c2[e] = element(&g);
		run_kernel(&g, a, sizeof(a) / sizeof(a[0]), b, sizeof(b) / sizeof(b[0]), c1,
			   sizeof(c1) / sizeof(c1[0]));
		g.kern = kern;
		run_kernel(&g, a, sizeof(a) / sizeof(a[0]), b, sizeof(b) / sizeof(b[0]), c2,
			   sizeof(c2) / sizeof(c2[0]));
		snprintf(name, sizeof(name), "stargemm__%cgemm_any() gives what the %s kernel "
			 "gives, to the bit", single ? 's' : 'd', stargemm__small_isa_name(isa));
		tap_ok(kern && memcmp(c1, c2, sizeof(c1)) == 0, name);
	}
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
	tap_ok(got == want, name);
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
		tap_ok(!bad, line);
	}
}

int main(void)
{
	const char tbs[2] = { 'N', 'T' };

	if (!stargemm__dgemm_any_usable()) {
		printf("1..0 # SKIP this CPU has neither AVX-512F nor AVX2 + FMA (the kernels "
		       "are not used)\n");
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
	widest();
	for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]); i++) {
		if (!stargemm__small_isa_usable(isas[i].isa)) {
			printf("# %s: not on this CPU, its kernels not tested\n",
			       stargemm__small_isa_name(isas[i].isa));
			continue;
		}
		for (int single = 0; single < 2; single++)
			for (int t = 0; t < 2; t++)
				sweeps(&isas[i], single, tbs[t]);
	}
	return tap_done();
}
