/*
 * tests/test_pdgemm.c — correctness of stargemm_pdgemm on ragged and irregular tilings.
 *
 * Usage: test_pdgemm P Q [ooc]   (run under mpiexec with P*Q processes)
 * With "ooc", every case runs through stargemm_pdgemm_ooc() twice: with a forced plan
 * that cuts C into 1 x 2-tile blocks and K into chunks of one tile (case c2, lookahead
 * 1), and with the planner's own choice under a device memory of 12 tiles.
 * Every case fills A, B and C with seeded random values, gathers them on rank 0, runs
 * the distributed GEMM, and compares the gathered C with cblas_dgemm through the scaled
 * residual of check.h (bound 10). One line per case: name, sizes, residual, PASS/FAIL.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"

int openblas_get_num_threads(void);

struct gemm_case {
	const char *name;
	int64_t m, n, k, tile;
	char ta, tb;
	double alpha, beta;
	int nan_c;      /* fill C with NaN (only meaningful with beta = 0) */
	int irregular;  /* irregular tile sizes derived from the case's sizes */
};

static const struct gemm_case cases[] = {
	{ "ragged NN", 106, 283, 97, 56, 'N', 'N', 1.5, -0.7, 0, 0 },
	{ "ragged TN", 106, 283, 97, 56, 'T', 'N', -1.0, 0.5, 0, 0 },
	{ "ragged NT", 106, 283, 97, 56, 'N', 'T', 0.3, 2.0, 0, 0 },
	{ "ragged TT", 106, 283, 97, 56, 'T', 'T', 2.0, 1.0, 0, 0 },
	{ "M,N < tile", 20, 31, 97, 56, 'N', 'N', 1.0, 1.0, 0, 0 },
	{ "K = 1", 106, 283, 1, 56, 'N', 'T', 1.0, -1.0, 0, 0 },
	{ "beta = 0 on NaN C", 106, 283, 97, 56, 'N', 'N', 2.0, 0.0, 1, 0 },
	{ "beta = 0 on NaN C, TT", 57, 61, 130, 16, 'T', 'T', -0.5, 0.0, 1, 0 },
	{ "alpha = 0", 45, 38, 29, 10, 'N', 'N', 0.0, 3.0, 0, 0 },
	{ "tiny tiles", 13, 11, 9, 2, 'T', 'N', 1.0, 0.25, 0, 0 },
	{ "irregular tiles", 150, 170, 140, 0, 'N', 'N', 1.25, 0.5, 0, 1 },
	{ "irregular tiles TT", 150, 170, 140, 0, 'T', 'T', 1.0, 1.0, 0, 1 },
};

/* Tile sizes cycling through 7, 23, 41, 16, ... up to @p total (last one ragged). */
static int64_t irregular_sizes(int64_t total, int64_t *sizes)
{
	static const int64_t pattern[] = { 7, 23, 41, 16, 30 };
	int64_t count = 0, covered = 0;

	while (covered < total) {
		int64_t s = pattern[count % 5];

		sizes[count++] = covered + s <= total ? s : total - covered;
		covered += sizes[count - 1];
	}
	return count;
}

/* Create a rows x cols matrix with the case's tiling. */
static int make(const struct gemm_case *c, struct stargemm_matrix **X, int64_t rows,
		int64_t cols, int P, int Q)
{
	int64_t rs[256], cs[256], nr, nc;

	if (!c->irregular)
		return stargemm_matrix_create(X, rows, cols, c->tile, c->tile, P, Q);
	nr = irregular_sizes(rows, rs);
	nc = irregular_sizes(cols, cs);
	return stargemm_matrix_create_irregular(X, nr, rs, nc, cs, P, Q);
}

/* How the GEMM of a case is run. */
enum mode { PLAIN, OOC_FORCED, OOC_AUTO };

static int run_gemm(const struct gemm_case *c, enum mode mode, struct stargemm_matrix *A,
		    struct stargemm_matrix *B, struct stargemm_matrix *C, char *plan_text,
		    size_t len)
{
	struct stargemm_ooc_options opt;
	struct stargemm_plan plan;
	int64_t t = c->irregular ? 41 : c->tile;
	int ret;

	snprintf(plan_text, len, "plain");
	if (mode == PLAIN)
		return stargemm_pdgemm(c->ta, c->tb, c->alpha, A, B, c->beta, C);
	stargemm_ooc_options_init(&opt);
	if (mode == OOC_FORCED) {
		opt.b = 1;
		opt.c = stargemm_matrix_nt(C) > 1 ? 2 : 1;
		opt.d = 1;
		opt.lookahead = 1;
	}
	opt.device_bytes = 12 * t * t * (int64_t)sizeof(double);
	if (mode == OOC_FORCED)
		opt.device_bytes *= 4;
	ret = stargemm_pdgemm_ooc(c->ta, c->tb, c->alpha, A, B, c->beta, C, &opt, &plan);
	if (!ret)
		snprintf(plan_text, len, "b=%lld c=%lld d=%lld l=%d %s",
			 (long long)plan.b, (long long)plan.c, (long long)plan.d, plan.lookahead,
			 stargemm_plan_case_name(plan.regime));
	return ret;
}

/* Run one case; returns 1 if it passes (on every rank: the verdict is rank 0's). */
static int run_case(const struct gemm_case *c, int P, int Q, enum mode mode)
{
	char plan_text[96];
	int ta = c->ta == 'T', tb = c->tb == 'T';
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	double *a = NULL, *b = NULL, *c0 = NULL, *cr = NULL, res = INFINITY;
	int ret;

	ret = make(c, &A, ta ? c->k : c->m, ta ? c->m : c->k, P, Q);
	ret = ret ? ret : make(c, &B, tb ? c->n : c->k, tb ? c->k : c->n, P, Q);
	ret = ret ? ret : make(c, &C, c->m, c->n, P, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(A, 11);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 22);
	ret = ret ? ret : c->nan_c ? stargemm_matrix_fill(C, sg_fill_nan, NULL)
				   : stargemm_matrix_fill_random(C, 33);
	if (!ret) {
		a = sg_gather_new(A);
		b = sg_gather_new(B);
		c0 = sg_gather_new(C);
		ret = run_gemm(c, mode, A, B, C, plan_text, sizeof(plan_text));
	}
	if (!ret)
		cr = sg_gather_new(C);
	if (ret && stargemm_rank() == 0)
		fprintf(stderr, "  error %d: %s\n", ret, stargemm_last_error());
	if (stargemm_rank() == 0 && !ret && a && b && c0 && cr)
		res = sg_gemm_residual(c->ta, c->tb, c->m, c->n, c->k, c->alpha, a, b, c->beta,
				       c0, cr);
	if (stargemm_rank() == 0)
		printf("%-24s %dx%d M=%-4lld N=%-4lld K=%-4lld tile=%-3lld %c%c alpha=%5.2f "
		       "beta=%5.2f [%s] residual=%9.3e %s\n", c->name, P, Q, (long long)c->m,
		       (long long)c->n, (long long)c->k, (long long)c->tile, c->ta, c->tb,
		       c->alpha, c->beta, ret ? "error" : plan_text, res,
		       res < SG_RESIDUAL_BOUND ? "PASS" : "FAIL");
	sg_free_case(a, b, c0, cr, A, B, C);
	return res < SG_RESIDUAL_BOUND;
}

int main(int argc, char **argv)
{
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1;
	int ooc = argc > 3 && !strcmp(argv[3], "ooc");
	int failures = 0, ncases = 0, ret;

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
	if (openblas_get_num_threads() != 1) {
		fprintf(stderr, "stargemm_init left OpenBLAS with %d threads; each StarPU worker "
			"must call a single-threaded BLAS\n", openblas_get_num_threads());
		failures++;
	}
#endif
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!ooc) {
			failures += !run_case(&cases[i], P, Q, PLAIN);
			ncases++;
			continue;
		}
		failures += !run_case(&cases[i], P, Q, OOC_FORCED);
		failures += !run_case(&cases[i], P, Q, OOC_AUTO);
		ncases += 2;
	}
	if (stargemm_rank() == 0)
		printf("%d of %d cases failed\n", failures, ncases);
	/* Rank 0 holds the verdict; the others report success so mpiexec relays it. */
	ret = stargemm_rank() == 0 && failures ? 1 : 0;
	stargemm_finalize();
	return ret;
}
