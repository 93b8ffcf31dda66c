/*
 * bench/bsgen.c — synthetic block-sparse problems shared by the block-sparse benchmark
 * and its libDBCSR peer (see bsgen.h for what is generated and why).
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsgen.h"

/* splitmix64: one step of a counter-based generator, good enough to draw sizes and
 * patterns and to make values. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Uniform in [0, 1) from 53 bits of a hash. */
static double unit(uint64_t h)
{
	return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

double bsgen_value(uint64_t seed, int which, int64_t row, int64_t col)
{
	uint64_t h = mix(mix(mix(seed ^ (0x51ed27ULL * (uint64_t)(which + 1))) ^
			     (uint64_t)col) ^ (uint64_t)row);

	return unit(h) - 0.5;
}


int bsgen_prec_valid(char prec)
{
	return prec == 's' || prec == 'd' || prec == 'c' || prec == 'z';
}

/* Element (r, c) of a tile in type @p prec, from its real and imaginary parts. */
static void put(char prec, void *tile, int64_t e, double re, double im)
{
	switch (prec) {
	case 's': ((float *)tile)[e] = (float)re; break;
	case 'd': ((double *)tile)[e] = re; break;
	case 'c': ((float _Complex *)tile)[e] = (float)re + (float)im * I; break;
	default: ((double _Complex *)tile)[e] = re + im * I; break;
	}
}

void bsgen_fill_elements(char prec, void *tile, int64_t ld, int64_t rows, int64_t cols,
			 int64_t row0, int64_t col0, uint64_t seed, int which)
{
	int complex_type = prec == 'c' || prec == 'z';

	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			put(prec, tile, r + c * ld, bsgen_value(seed, which, row0 + r, col0 + c),
			    complex_type ? bsgen_value(seed, which + 3, row0 + r, col0 + c)
					 : 0.0);
}

void bsgen_fill_tile(double *tile, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
		     int64_t col0, uint64_t seed, int which)
{
	bsgen_fill_elements('d', tile, ld, rows, cols, row0, col0, seed, which);
}

/* Tile sizes uniform in [lo, hi] covering @p n; returns the count (0 if n = 0) or -1. */
static int64_t tiling(int64_t n, int64_t lo, int64_t hi, uint64_t *state, int64_t **out)
{
	int64_t cap = n / lo + 1, count = 0;
	int64_t *s = malloc((size_t)cap * sizeof(*s));

	if (!s)
		return -1;
	for (int64_t covered = 0; covered < n; count++) {
		int64_t size = lo + (int64_t)((*state = mix(*state)) % (uint64_t)(hi - lo + 1));

		s[count] = size < n - covered ? size : n - covered;
		covered += s[count];
	}
	*out = s;
	return count;
}

/* Keep round(density * mt * nt) tiles chosen at random, listed column-major. */
static int pattern(struct bsgen_matrix *x, double density, uint64_t *state)
{
	int64_t total = x->mt * x->nt, keep = (int64_t)llround(density * (double)total);
	int64_t *idx = malloc((size_t)(total ? total : 1) * sizeof(*idx));
	uint8_t *mark = calloc((size_t)(total ? total : 1), 1);

	x->pairs = malloc((size_t)(keep ? 2 * keep : 1) * sizeof(*x->pairs));
	if (!idx || !mark || !x->pairs) {
		free(idx);
		free(mark);
		return -1;
	}
	for (int64_t e = 0; e < total; e++)
		idx[e] = e;
	for (int64_t e = 0; e < keep; e++) {   /* partial Fisher-Yates */
		int64_t f = e + (int64_t)((*state = mix(*state)) % (uint64_t)(total - e));
		int64_t t = idx[e];

		idx[e] = idx[f];
		idx[f] = t;
		mark[idx[e]] = 1;
	}
	x->npresent = 0;
	for (int64_t e = 0; e < total; e++)
		if (mark[e]) {
			x->pairs[2 * x->npresent] = e % x->mt;
			x->pairs[2 * x->npresent + 1] = e / x->mt;
			x->npresent++;
		}
	free(idx);
	free(mark);
	return 0;
}

/* Dense flags (i + j * mt) of a matrix's present tiles. */
static uint8_t *flags(const struct bsgen_matrix *x)
{
	int64_t total = x->mt * x->nt;
	uint8_t *f = calloc((size_t)(total > 0 ? total : 1), 1);

	for (int64_t e = 0; f && e < x->npresent; e++)
		f[x->pairs[2 * e] + x->pairs[2 * e + 1] * x->mt] = 1;
	return f;
}

/* Visit every product (i, j, l) with A(i,l), B(l,j) present (and C(i,j) if cflags):
 * fn(i, j, l). Column lists of A make it O(products). */
static int each_product(const struct bsgen_problem *pb, const uint8_t *cflags,
			void (*fn)(const struct bsgen_problem *, int64_t, int64_t, int64_t,
				   void *), void *arg)
{
	uint8_t *af = flags(&pb->a), *bf = flags(&pb->b);

	if (!af || !bf) {
		free(af);
		free(bf);
		return -1;
	}
	for (int64_t j = 0; j < pb->nt; j++)
		for (int64_t l = 0; l < pb->kt; l++) {
			if (!bf[l + j * pb->kt])
				continue;
			for (int64_t i = 0; i < pb->mt; i++)
				if (af[i + l * pb->mt] && (!cflags || cflags[i + j * pb->mt]))
					fn(pb, i, j, l, arg);
		}
	free(af);
	free(bf);
	return 0;
}

static void mark_c(const struct bsgen_problem *pb, int64_t i, int64_t j, int64_t l,
		   void *arg)
{
	(void)l;
	((uint8_t *)arg)[i + j * pb->mt] = 1;
}

/* C's pattern: every tile A·B reaches. */
static int symbolic(struct bsgen_problem *pb)
{
	struct bsgen_matrix *c = &pb->c;
	int64_t total = pb->mt * pb->nt;
	uint8_t *mark = calloc((size_t)(total ? total : 1), 1);

	if (!mark || each_product(pb, NULL, mark_c, mark)) {
		free(mark);
		return -1;
	}
	c->npresent = 0;
	for (int64_t e = 0; e < total; e++)
		c->npresent += mark[e];
	c->pairs = malloc((size_t)(c->npresent ? 2 * c->npresent : 1) * sizeof(*c->pairs));
	if (!c->pairs) {
		free(mark);
		return -1;
	}
	for (int64_t e = 0, n = 0; e < total; e++)
		if (mark[e]) {
			c->pairs[2 * n] = e % pb->mt;
			c->pairs[2 * n + 1] = e / pb->mt;
			n++;
		}
	free(mark);
	return 0;
}

static int check_params(const struct bsgen_params *p)
{
	const char *why = NULL;

	if (p->m < 0 || p->n < 0 || p->k < 0)
		why = "m, n and k must be >= 0";
	else if (p->lo < 1 || p->hi < p->lo)
		why = "tile sizes need 1 <= lo <= hi";
	else if (!(p->density_a >= 0 && p->density_a <= 1) ||
		 !(p->density_b >= 0 && p->density_b <= 1) || !(p->density_c <= 1))
		why = "densities must lie in [0, 1] (C's may be < 0: symbolic)";
	if (why)
		fprintf(stderr, "bsgen: %s (m=%lld n=%lld k=%lld lo=%lld hi=%lld)\n", why,
			(long long)p->m, (long long)p->n, (long long)p->k, (long long)p->lo,
			(long long)p->hi);
	return why ? -1 : 0;
}

int bsgen_make(const struct bsgen_params *p, struct bsgen_problem *pb)
{
	uint64_t state = mix(p->seed);

	memset(pb, 0, sizeof(*pb));
	if (check_params(p))
		return -1;
	if ((pb->mt = tiling(p->m, p->lo, p->hi, &state, &pb->msizes)) < 0 ||
	    (pb->nt = tiling(p->n, p->lo, p->hi, &state, &pb->nsizes)) < 0 ||
	    (pb->kt = tiling(p->k, p->lo, p->hi, &state, &pb->ksizes)) < 0)
		goto oom;
	pb->a = (struct bsgen_matrix){ pb->mt, pb->kt, pb->msizes, pb->ksizes, 0, NULL };
	pb->b = (struct bsgen_matrix){ pb->kt, pb->nt, pb->ksizes, pb->nsizes, 0, NULL };
	pb->c = (struct bsgen_matrix){ pb->mt, pb->nt, pb->msizes, pb->nsizes, 0, NULL };
	if (pattern(&pb->a, p->density_a, &state) || pattern(&pb->b, p->density_b, &state) ||
	    (p->density_c < 0 ? symbolic(pb) : pattern(&pb->c, p->density_c, &state)))
		goto oom;
	return 0;
oom:
	fprintf(stderr, "bsgen: out of memory\n");
	bsgen_free(pb);
	return -1;
}

void bsgen_free(struct bsgen_problem *pb)
{
	free(pb->msizes);
	free(pb->nsizes);
	free(pb->ksizes);
	free(pb->a.pairs);
	free(pb->b.pairs);
	free(pb->c.pairs);
	memset(pb, 0, sizeof(*pb));
}

struct tally {
	double flops;
	int64_t count;
};

static void add_product(const struct bsgen_problem *pb, int64_t i, int64_t j, int64_t l,
			void *arg)
{
	struct tally *t = arg;

	t->flops += 2.0 * (double)pb->msizes[i] * (double)pb->nsizes[j] * (double)pb->ksizes[l];
	t->count++;
}

static struct tally tally(const struct bsgen_problem *pb)
{
	struct tally t = { 0, 0 };
	uint8_t *cf = flags(&pb->c);

	if (!cf || each_product(pb, cf, add_product, &t))
		t.count = -1;
	free(cf);
	return t;
}

double bsgen_flops(const struct bsgen_problem *pb)
{
	return tally(pb).flops;
}

int64_t bsgen_products(const struct bsgen_problem *pb)
{
	return tally(pb).count;
}
