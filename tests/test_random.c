/*
 * tests/test_random.c — randomized calls: a seeded stream of small products, each drawn
 * from every dimension a user can vary (sizes, regular ragged or irregular tilings,
 * transposes, alpha and beta including 0, dense or block-sparse A and B, in core or
 * out of core with a forced plan), and of invalid calls (tilings that do not match, a
 * bad transpose, a negative plan override, a missing operand).
 *
 * Usage: test_random P Q SEED COUNT   (under mpiexec with P*Q processes)
 * Every rank draws the same cases (the stream depends on SEED and the case number
 * only). A valid call must match cblas_dgemm on the gathered operands (scaled residual
 * of tests/check.h); an invalid one must be refused with a message and leave C as it
 * was. One line per failure, then a summary; rank 0 holds the verdict (it checks every
 * rank's tiles through the gathers).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The case's random stream: stargemm's counter-based generator, so that every rank
 * draws the same values. */
struct draw {
	uint64_t seed;
	int64_t n;
};

static double uniform(struct draw *d)
{
	return stargemm_random_element(d->seed, d->n++, 7) + 0.5;   /* [0, 1) */
}

static int64_t pick(struct draw *d, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(uniform(d) * (double)(hi - lo + 1));
}

/* A tiling of @p total: regular with a ragged last tile, or irregular sizes. */
static int64_t tiling(struct draw *d, int64_t total, int64_t *sizes)
{
	int64_t count = 0, regular = pick(d, 0, 1) ? pick(d, 1, 25) : 0;

	for (int64_t left = total; left > 0; count++) {
		int64_t s = regular ? regular : pick(d, 1, 20);

		sizes[count] = s < left ? s : left;
		left -= sizes[count];
	}
	return count;
}

struct axis {
	int64_t n, t, sizes[64];
};

/* An operand with tilings @p rows x @p cols, dense or with a share of its tiles. */
static int operand(struct draw *d, const struct axis *rows, const struct axis *cols,
		   double density, int P, int Q, struct stargemm_matrix **X)
{
	int64_t *list, count = 0;
	int ret;

	if (density >= 1.0)
		return stargemm_matrix_create_irregular(X, rows->t, rows->sizes, cols->t,
							cols->sizes, P, Q);
	list = malloc((size_t)(2 * rows->t * cols->t + 2) * sizeof(*list));
	for (int64_t j = 0; list && j < cols->t; j++)
		for (int64_t i = 0; i < rows->t; i++)
			if (uniform(d) < density) {
				list[2 * count] = i;
				list[2 * count + 1] = j;
				count++;
			}
	ret = list ? stargemm_matrix_create_sparse(X, rows->t, rows->sizes, cols->t, cols->sizes,
						   count, list, P, Q)
		   : -ENOMEM;
	free(list);
	return ret;
}

/* The ways a call can be wrong; NONE: a valid call. */
enum fault { NONE, INNER_TILING, BAD_TRANS, NEGATIVE_PLAN, NO_OPERAND, NFAULTS };

static const char *const fault_name[] = { "valid", "inner dimensions differ", "transpose 'X'",
					  "plan override b = -1", "A is NULL" };

struct call {
	char ta, tb;
	double alpha, beta;
	int ooc;
	struct stargemm_ooc_options opt;
	enum fault fault;
};

static double scalar(struct draw *d)
{
	static const double common[] = { 0.0, 1.0, -1.0, 0.5 };
	int64_t i = pick(d, 0, 4);

	return i < 4 ? common[i] : 4.0 * uniform(d) - 2.0;
}

static int64_t at_most(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* A call on C of @p mt x @p nt tiles, inner dimension @p kt tiles, over P x Q: the
 * plan overrides stay within this rank's share (larger ones are refused, rightly). */
static void draw_call(struct draw *d, struct call *c, int64_t mt, int64_t nt, int64_t kt,
		      int P, int Q)
{
	c->ta = pick(d, 0, 1) ? 'T' : 'N';
	c->tb = pick(d, 0, 1) ? 'T' : 'N';
	c->alpha = scalar(d);
	c->beta = scalar(d);
	c->ooc = pick(d, 0, 1);
	stargemm_ooc_options_init(&c->opt);
	c->opt.b = pick(d, 1, at_most(3, mt / P > 0 ? mt / P : 1));
	c->opt.c = pick(d, 1, at_most(3, nt / Q > 0 ? nt / Q : 1));
	c->opt.d = pick(d, 1, at_most(3, kt));
	c->opt.lookahead = (int)pick(d, 1, 2);
	c->fault = pick(d, 0, 4) ? NONE : (enum fault)pick(d, 1, NFAULTS - 1);
	if (c->fault == BAD_TRANS)
		c->ta = 'X';
	if (c->fault == NEGATIVE_PLAN) {
		c->ooc = 1;
		c->opt.b = -1;
	}
}

static int product(const struct call *c, const struct stargemm_matrix *A,
		   const struct stargemm_matrix *B, struct stargemm_matrix *C)
{
	if (c->ooc)
		return stargemm_pdgemm_ooc(c->ta, c->tb, c->alpha, c->fault == NO_OPERAND ? NULL : A,
					   B, c->beta, C, &c->opt, NULL);
	return stargemm_pdgemm(c->ta, c->tb, c->alpha, c->fault == NO_OPERAND ? NULL : A, B,
			       c->beta, C);
}

/* One case: 1 if it behaved, else 0 after a line saying what went wrong. */
static int run_case(uint64_t seed, int64_t number, int P, int Q)
{
	struct draw d = { seed * 1000003 + (uint64_t)number, 0 };
	struct axis m, n, k, k2;
	struct call c;
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	double *a = NULL, *b = NULL, *c0 = NULL, *cr = NULL, res = -1.0;
	char msg[512] = "";
	int ret, good;

	m.n = pick(&d, 1, 60);
	n.n = pick(&d, 1, 60);
	k.n = pick(&d, 1, 60);
	m.t = tiling(&d, m.n, m.sizes);
	n.t = tiling(&d, n.n, n.sizes);
	k.t = tiling(&d, k.n, k.sizes);
	draw_call(&d, &c, m.t, n.t, k.t, P, Q);
	k2 = k;
	if (c.fault == INNER_TILING) {   /* B's inner dimension one longer */
		k2.n = k.n + 1;
		k2.t = tiling(&d, k2.n, k2.sizes);
	}
	ret = operand(&d, c.ta == 'T' ? &k : &m, c.ta == 'T' ? &m : &k,
		      pick(&d, 0, 2) ? 1.0 : 0.5, P, Q, &A);
	ret = ret ? ret : operand(&d, c.tb == 'T' ? &n : &k2, c.tb == 'T' ? &k2 : &n,
				  pick(&d, 0, 2) ? 1.0 : 0.5, P, Q, &B);
	ret = ret ? ret : stargemm_matrix_create_irregular(&C, m.t, m.sizes, n.t, n.sizes, P, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(A, seed + 1);
	ret = ret ? ret : stargemm_matrix_fill_random(B, seed + 2);
	ret = ret ? ret : stargemm_matrix_fill_random(C, seed + 3);
	if (ret) {
		if (stargemm_rank() == 0)
			printf("case %lld: setup failed: %s\n", (long long)number,
			       stargemm_last_error());
		good = 0;
		goto out;
	}
	a = sg_gather_new(A);
	b = sg_gather_new(B);
	c0 = sg_gather_new(C);
	ret = product(&c, A, B, C);
	snprintf(msg, sizeof(msg), "%s", stargemm_last_error());
	cr = sg_gather_new(C);
	if (c.fault != NONE) {
		/* refused, with a message, C untouched */
		good = ret < 0 && msg[0] != '\0';
		for (int64_t e = 0; good && cr && e < m.n * n.n; e++)
			good &= cr[e] == c0[e];
	} else {
		good = ret == 0;
		if (good && stargemm_rank() == 0) {
			res = sg_gemm_residual(c.ta, c.tb, m.n, n.n, k.n, c.alpha, a, b, c.beta, c0,
					       cr);
			good = res < SG_RESIDUAL_BOUND;
		}
	}
	if (!good && stargemm_rank() == 0)
		printf("case %lld FAIL: %s, %lld x %lld x %lld (%lld x %lld x %lld tiles) %c%c "
		       "alpha %g beta %g %s: returned %d, residual %.3g, message \"%s\"\n",
		       (long long)number, fault_name[c.fault], (long long)m.n, (long long)n.n,
		       (long long)k.n, (long long)m.t, (long long)n.t, (long long)k.t, c.ta,
		       c.tb, c.alpha, c.beta, c.ooc ? "out of core" : "in core", ret, res, msg);
out:
	sg_free_case(a, b, c0, cr, A, B, C);
	return good || stargemm_rank() != 0;
}

int main(int argc, char **argv)
{
	int P = argc > 4 ? atoi(argv[1]) : 1, Q = argc > 4 ? atoi(argv[2]) : 1;
	uint64_t seed = argc > 4 ? strtoull(argv[3], NULL, 10) : 1;
	int64_t count = argc > 4 ? atoll(argv[4]) : 100, failures = 0;
	int ret, rank;

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	for (int64_t i = 0; i < count; i++)
		failures += !run_case(seed, i, P, Q);
	rank = stargemm_rank();
	if (rank == 0)
		printf("%lld of %lld random cases failed (seed %llu, %dx%d)\n", (long long)failures,
		       (long long)count, (unsigned long long)seed, P, Q);
	stargemm_finalize();
	return rank == 0 && failures ? 1 : 0;
}
