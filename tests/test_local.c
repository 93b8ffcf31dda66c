/*
 * tests/test_local.c — matrices whose tiles are each process's local array in
 * ScaLAPACK's 2D block-cyclic layout, used in place (stargemm_matrix_create_local()):
 * every rank fills its local arrays from the global element values, the product runs
 * in core (small tiles: batches) and out of core (a forced plan), and every rank
 * checks its own local part of C against cblas_dgemm on the whole matrices, and that
 * the padding rows of its arrays (lld > local rows) kept their values. A gather of an
 * in-place matrix matches too; a bad lld on one rank is refused on every rank.
 * Submatrices (stargemm_matrix_create_submatrix()): ScaLAPACK's IA, JA inside blocks,
 * first blocks on processes other than (0, 0); outside the submatrix C keeps its
 * values.
 *
 * Usage: test_local P Q   (under mpiexec with P*Q processes)
 */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SENTINEL 5e55

/* The whole matrix of values (what every rank knows from the seed). */
static double *global_array(int64_t m, int64_t n, uint64_t seed)
{
	double *g = malloc((size_t)(m * n) * sizeof(*g));

	for (int64_t j = 0; g && j < n; j++)
		for (int64_t i = 0; i < m; i++)
			g[i + j * m] = stargemm_random_element(seed, i, j);
	return g;
}

/* A whole block-cyclic array on the grid, its first block on process (rsrc, csrc). */
struct block_array {
	int64_t m, n, mb, nb, lrows, lcols, lld;
	int rsrc, csrc, p, q, P, Q;
	double *a;
};

/* Global index of local index @p l of process @p p (first block on process src). */
static int64_t global_from(int64_t l, int64_t b, int p, int src, int nproc)
{
	return (l / b * nproc + (p - src + nproc) % nproc) * b + l % b;
}

static int64_t local_count(int64_t n, int64_t b, int p, int src, int nproc)
{
	int64_t extent = 0;

	for (int64_t t = 0; t * b < n; t++)
		if ((t + src) % nproc == p)
			extent += (t + 1) * b <= n ? b : n - t * b;
	return extent;
}

static int block_array_init(struct block_array *x, int64_t m, int64_t n, int64_t mb,
			    int64_t nb, int rsrc, int csrc, int P, int Q, uint64_t seed)
{
	int me = stargemm_rank();

	*x = (struct block_array){ m, n, mb, nb, 0, 0, 0, rsrc % P, csrc % Q, me / Q, me % Q,
				   P, Q, NULL };
	x->lrows = local_count(m, mb, x->p, x->rsrc, P);
	x->lcols = local_count(n, nb, x->q, x->csrc, Q);
	x->lld = x->lrows + 2;
	x->a = malloc((size_t)(x->lld * (x->lcols > 0 ? x->lcols : 1)) * sizeof(double));
	for (int64_t j = 0; x->a && j < x->lcols; j++)
		for (int64_t i = 0; i < x->lld; i++)
			x->a[i + j * x->lld] =
				i < x->lrows
					? stargemm_random_element(
						  seed, global_from(i, mb, x->p, x->rsrc, P),
						  global_from(j, nb, x->q, x->csrc, Q))
					: SENTINEL;
	return x->a ? 0 : -ENOMEM;
}

/* The submatrix of @p x at (i0, j0), rows x cols, in place. */
static int submatrix(struct stargemm_matrix **X, const struct block_array *x, int64_t i0,
		     int64_t j0, int64_t rows, int64_t cols)
{
	return stargemm_matrix_create_submatrix(X, STARGEMM_D, rows, cols, i0, j0, x->mb,
						x->nb, x->rsrc, x->csrc, x->P, x->Q, x->a,
						x->lld);
}

/* Whether C's local array holds @p ref (the whole m x n array, ld m) within the bound
 * of sg_gemm_residual (relative to @p scale) everywhere: a product's new values and,
 * outside a submatrix, the old ones; padding rows untouched. */
static int array_matches(const struct block_array *c, const double *ref, double scale)
{
	double diff = 0.0;

	for (int64_t j = 0; j < c->lcols; j++)
		for (int64_t i = 0; i < c->lld; i++) {
			double v = c->a[i + j * c->lld];

			if (i >= c->lrows) {
				if (v != SENTINEL)
					return 0;
				continue;
			}
			v -= ref[global_from(i, c->mb, c->p, c->rsrc, c->P) +
				 global_from(j, c->nb, c->q, c->csrc, c->Q) * c->m];
			diff += v * v;
		}
	return sqrt(diff) / scale < SG_RESIDUAL_BOUND;
}

/* C = 1.5 op(A) B + 0.5 C, in core or out of core with a forced plan (2 x 2 blocks,
 * chunks of one k). */
static int product(char ta, int ooc, const struct stargemm_matrix *A,
		   const struct stargemm_matrix *B, struct stargemm_matrix *C)
{
	struct stargemm_ooc_options opt;

	if (!ooc)
		return stargemm_pdgemm(ta, 'N', 1.5, A, B, 0.5, C);
	stargemm_ooc_options_init(&opt);
	opt.b = opt.c = 2;
	opt.d = 1;
	return stargemm_pdgemm_ooc(ta, 'N', 1.5, A, B, 0.5, C, &opt, NULL);
}

static int product_case(int P, int Q, int ooc, char ta)
{
	const int64_t m = 301, n = 257, k = 199, b = 64;
	struct block_array la, lb, lc;
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
	double *ga = global_array(ar, ac, 1), *gb = global_array(k, n, 2);
	double *ref = global_array(m, n, 3), *gathered = NULL, scale;
	int ret, good;

	ret = block_array_init(&la, ar, ac, b, b, 0, 0, P, Q, 1);
	ret = ret ? ret : block_array_init(&lb, k, n, b, b, 0, 0, P, Q, 2);
	ret = ret ? ret : block_array_init(&lc, m, n, b, b, 0, 0, P, Q, 3);
	ret = ret ? ret : stargemm_matrix_create_local(&A, ar, ac, b, b, P, Q, la.a, la.lld);
	ret = ret ? ret : stargemm_matrix_create_local(&B, k, n, b, b, P, Q, lb.a, lb.lld);
	ret = ret ? ret : stargemm_matrix_create_local(&C, m, n, b, b, P, Q, lc.a, lc.lld);
	if (!ret)
		ret = product(ta, ooc, A, B, C);
	if (!ret && stargemm_rank() == 0)
		gathered = malloc((size_t)(m * n) * sizeof(*gathered));
	if (!ret)
		ret = stargemm_matrix_gather(C, gathered, m, 0);
	cblas_dgemm(CblasColMajor, ta == 'N' ? CblasNoTrans : CblasTrans, CblasNoTrans,
		    (int)m, (int)n, (int)k, 1.5, ga, (int)ar, gb, (int)k, 0.5, ref, (int)m);
	scale = (1.5 * sqrt((double)(ar * ac)) * sqrt((double)(k * n)) +
		 0.5 * sqrt((double)(m * n))) * (double)k * 2.2e-16;
	good = ret == 0 && array_matches(&lc, ref, scale);
	for (int64_t e = 0; good && gathered && e < m * n; e++)
		good = fabs(gathered[e] - ref[e]) < 1e-10 * (1.0 + fabs(ref[e]));
	printf("rank %d: %dx%d %c%c %s: %s%s\n", stargemm_rank(), P, Q, ta, 'N',
	       ooc ? "out of core" : "in core", good ? "PASS" : "FAIL ",
	       good ? "" : ret ? stargemm_last_error() : "(values or padding)");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	free(la.a);
	free(lb.a);
	free(lc.a);
	free(ga);
	free(gb);
	free(ref);
	free(gathered);
	return good;
}

/* sub(C) = 1.5 op(sub(A)) sub(B) + 0.5 sub(C) on submatrices that start inside blocks,
 * with first blocks on other processes than (0, 0), cut alike along K as a product
 * needs (A's column offset in its blocks = B's row offset in its blocks). */
static int submatrix_case(int P, int Q, char ta, int ooc)
{
	const int64_t m = 201, n = 170, k = 150;
	struct block_array a, b, c;
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	/* A is 310 x 250 (blocks 32 x 24) at (37, 13), or transposed 250 x 310 (24 x 32)
	 * at (13, 37); B 200 x 300 (24 x 40) at (37, 55); C 260 x 230 (32 x 40) at (5, 15). */
	int64_t am = ta == 'N' ? 310 : 250, an = ta == 'N' ? 250 : 310;
	int64_t amb = ta == 'N' ? 32 : 24, anb = ta == 'N' ? 24 : 32;
	int64_t ai = ta == 'N' ? 37 : 13, aj = ta == 'N' ? 13 : 37;
	double *ga = global_array(am, an, 5), *gb = global_array(200, 300, 6);
	double *ref = global_array(260, 230, 7), scale;
	int ret, good;

	ret = block_array_init(&a, am, an, amb, anb, 1, 0, P, Q, 5);
	ret = ret ? ret : block_array_init(&b, 200, 300, 24, 40, 0, 1, P, Q, 6);
	ret = ret ? ret : block_array_init(&c, 260, 230, 32, 40, 1, 1, P, Q, 7);
	ret = ret ? ret : submatrix(&A, &a, ai, aj, ta == 'N' ? m : k, ta == 'N' ? k : m);
	ret = ret ? ret : submatrix(&B, &b, 37, 55, k, n);
	ret = ret ? ret : submatrix(&C, &c, 5, 15, m, n);
	if (!ret)
		ret = product(ta, ooc, A, B, C);
	/* Destroyed before checking: with GPUs the arrays are then up to date. */
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	cblas_dgemm(CblasColMajor, ta == 'N' ? CblasNoTrans : CblasTrans, CblasNoTrans,
		    (int)m, (int)n, (int)k, 1.5, ga + ai + aj * am, (int)am, gb + 37 + 55 * 200,
		    200, 0.5, ref + 5 + 15 * 260, 260);
	scale = (1.5 * sqrt((double)(m * k)) * sqrt((double)(k * n)) +
		 0.5 * sqrt((double)(m * n))) * (double)k * 2.2e-16;
	good = ret == 0 && array_matches(&c, ref, scale);
	printf("rank %d: %dx%d %c%c submatrices at (%lld,%lld) (37,55) (5,15) %s: %s%s\n",
	       stargemm_rank(), P, Q, ta, 'N', (long long)ai, (long long)aj,
	       ooc ? "out of core" : "in core", good ? "PASS" : "FAIL ",
	       good ? "" : ret ? stargemm_last_error() : "(values, outside values or padding)");
	free(a.a);
	free(b.a);
	free(c.a);
	free(ga);
	free(gb);
	free(ref);
	return good;
}

/* The last rank passes an lld one below its local rows: every rank refuses, with the
 * last rank's message. */
static int bad_lld(int P, int Q)
{
	struct block_array x;
	struct stargemm_matrix *X = NULL;
	int last = stargemm_nranks() - 1, ret, good;

	if (block_array_init(&x, 130, 70, 32, 32, 0, 0, P, Q, 4))
		return 0;
	ret = stargemm_matrix_create_local(&X, 130, 70, 32, 32, P, Q, x.a,
					   stargemm_rank() == last ? x.lrows - 1 : x.lld);
	/* The last rank's own error; the others', the same code, with its message. */
	good = ret == -EINVAL && X == NULL &&
	       strstr(stargemm_last_error(), "is below its") != NULL;
	printf("rank %d: %dx%d bad lld on rank %d refused: %s (%s)\n", stargemm_rank(), P, Q,
	       last, good ? "PASS" : "FAIL", stargemm_last_error());
	stargemm_matrix_destroy(X);
	free(x.a);
	return good;
}

/* Bad submatrix arguments are refused with a message naming them, on every rank. */
static int bad_submatrix(int P, int Q)
{
	struct { const char *what, *text; int64_t ia; int rsrc; int64_t lld; } cases[] = {
		{ "a negative IA", "offsets >= 0", -1, 0, 100 },
		{ "RSRC outside the grid", "outside the", 0, P, 100 },
		{ "an LLD below the rows reached", "is below its", 40, 0, 1 },
	};
	double *a = calloc(100 * 100, sizeof(*a));
	int good = a != NULL;

	for (size_t c = 0; a && c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct stargemm_matrix *X = (struct stargemm_matrix *)1;
		int ret = stargemm_matrix_create_submatrix(&X, STARGEMM_D, 50, 30, cases[c].ia, 0,
							   16, 16, cases[c].rsrc, 0, P, Q, a,
							   cases[c].lld);
		int ok = ret != 0 && X == NULL &&
			 strstr(stargemm_last_error(), cases[c].text) != NULL;

		printf("rank %d: %dx%d submatrix with %s refused: %s (%s)\n", stargemm_rank(), P, Q,
		       cases[c].what, ok ? "PASS" : "FAIL", stargemm_last_error());
		good &= ok;
	}
	free(a);
	return good;
}

int main(int argc, char **argv)
{
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1, ret, good;

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	good = product_case(P, Q, 0, 'N');
	good &= product_case(P, Q, 0, 'T');
	good &= product_case(P, Q, 1, 'N');
	good &= product_case(P, Q, 1, 'T');
	good &= submatrix_case(P, Q, 'N', 0);
	good &= submatrix_case(P, Q, 'T', 0);
	good &= submatrix_case(P, Q, 'N', 1);
	good &= bad_lld(P, Q);
	good &= bad_submatrix(P, Q);
	fflush(stdout);
	stargemm_finalize();
	return good ? 0 : 1;
}
