/*
 * tests/test_unwritten.c — a matrix that no call has written reads as zeros
 * (stargemm__zero_if_unwritten(), src/matrix.c), whether its tiles were allocated by
 * the library or, with a RAM budget, are allocated by StarPU at their first write
 * (which StarPU 1.3 would otherwise refuse to read, stopping the program):
 *   * a product into a C never written, beta = 1: C = alpha A B;
 *   * a product with an A never written: C = beta C;
 *   * the same out of core, with a forced plan of single-tile blocks;
 *   * a gather and the tile norms of a matrix never written, dense and block-sparse:
 *     zeros;
 *   * a symbolic product (stargemm_matrix_create_product() without an old C, whose
 *     tiles under a RAM budget are left to their first read): gathered and measured as
 *     zeros, and C = S S + 1 C into one, in core and out of core, gives S S.
 * Sizes are ragged (tiles of 32 on 97 x 83 x 71). Every rank judges what it can see:
 * its own return codes, and rank 0 the gathered results.
 *
 * Usage: test_unwritten P Q [RAM_LIMIT_MIB]   (under mpiexec with P*Q processes)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

enum { M = 97, N = 83, K = 71, NB = 32 };

/* Whether every element of rank 0's gathered copy of @p X is zero (1 on other ranks
 * when the gather succeeded). */
static int gathers_zeros(const struct stargemm_matrix *X)
{
	double *x = sg_gather_new(X);
	int64_t count = stargemm_matrix_m(X) * stargemm_matrix_n(X);
	int zero = stargemm_rank() != 0 || x != NULL;

	for (int64_t e = 0; x && e < count; e++)
		zero &= x[e] == 0.0;
	free(x);
	return zero;
}

/* Whether every tile norm of @p X is zero, on this rank. */
static int norms_zero(const struct stargemm_matrix *X)
{
	int64_t count = stargemm_matrix_mt(X) * stargemm_matrix_nt(X);
	double *norms = malloc((size_t)count * sizeof(*norms));
	int zero = norms && stargemm_matrix_norms(X, norms) == 0;

	for (int64_t e = 0; zero && e < count; e++)
		zero = norms[e] == 0.0;
	free(norms);
	return zero;
}

/* C = 1.5 A B + beta C with A never written (@p a_unwritten) or C never written; out
 * of core when @p ooc. */
static int product_case(int P, int Q, int a_unwritten, int ooc)
{
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	struct stargemm_ooc_options opt;
	double beta = a_unwritten ? 0.5 : 1.0, *a = NULL, *b = NULL, *c0 = NULL, *c = NULL;
	int ret, good;

	ret = stargemm_matrix_create(&A, M, K, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&B, K, N, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&C, M, N, NB, NB, P, Q);
	if (!ret && !a_unwritten)
		ret = stargemm_matrix_fill_random(A, 1);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 2);
	if (!ret && a_unwritten)
		ret = stargemm_matrix_fill_random(C, 3);
	if (!ret && a_unwritten)
		c0 = sg_gather_new(C);
	else if (!ret && stargemm_rank() == 0)
		c0 = calloc((size_t)(M * N), sizeof(*c0));
	stargemm_ooc_options_init(&opt);
	opt.b = opt.c = opt.d = 1;
	if (!ret)
		ret = ooc ? stargemm_pdgemm_ooc('N', 'N', 1.5, A, B, beta, C, &opt, NULL)
			  : stargemm_pdgemm('N', 'N', 1.5, A, B, beta, C);
	/* Gathered after the product: A never written is gathered as the zeros it was. */
	if (!ret) {
		a = sg_gather_new(A);
		b = sg_gather_new(B);
		c = sg_gather_new(C);
	}
	good = ret == 0 && (stargemm_rank() != 0 ||
			    (a && b && c0 && c &&
			     sg_gemm_residual('N', 'N', M, N, K, 1.5, a, b, beta, c0, c) <
			     SG_RESIDUAL_BOUND));
	printf("rank %d: %-32s %s%s%s\n", stargemm_rank(),
	       a_unwritten ? "A never written" : "C never written, beta = 1",
	       ooc ? "(out of core) " : "", good ? "PASS" : "FAIL: ",
	       good ? "" : (ret ? stargemm_last_error() : "residual above the bound"));
	sg_free_case(a, b, c0, c, A, B, C);
	return good;
}

/* A dense and a block-sparse matrix never written: gathered and measured as zeros. */
static int read_case(int P, int Q)
{
	static const int64_t sizes[] = { 30, 41, 26 }, present[] = { 0, 0, 2, 1, 1, 2 };
	struct stargemm_matrix *D = NULL, *S = NULL;
	int ret, good;

	ret = stargemm_matrix_create(&D, M, N, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_create_sparse(&S, 3, sizes, 3, sizes, 3, present,
							P, Q);
	good = ret == 0 && gathers_zeros(D) && norms_zero(D);
	good = good && gathers_zeros(S) && norms_zero(S);
	printf("rank %d: %-32s %s%s\n", stargemm_rank(), "gather and norms never written",
	       good ? "PASS" : "FAIL: ", good ? "" : stargemm_last_error());
	stargemm_matrix_destroy(D);
	stargemm_matrix_destroy(S);
	return good;
}

/* C = S S + C on a symbolic C never written (@p ooc: out of core). */
static int symbolic_product(struct stargemm_matrix *S, int ooc)
{
	struct stargemm_matrix *C = NULL;
	struct stargemm_bsgemm_options opt;
	int64_t n = stargemm_matrix_m(S);
	double *s = NULL, *c0 = NULL, *c = NULL;
	int ret, good;

	stargemm_bsgemm_options_init(&opt);
	opt.out_of_core = ooc;
	opt.ooc.b = opt.ooc.c = opt.ooc.d = 1;
	ret = stargemm_matrix_create_product(&C, 'N', 'N', S, S, NULL);
	ret = ret ? ret : stargemm_bsgemm('N', 'N', 1.0, S, S, 1.0, C, &opt, NULL);
	if (!ret) {
		s = sg_gather_new(S);
		c = sg_gather_new(C);
	}
	if (!ret && stargemm_rank() == 0)
		c0 = calloc((size_t)(n * n), sizeof(*c0));
	good = ret == 0 && (stargemm_rank() != 0 ||
			    (s && c0 && c &&
			     sg_gemm_residual('N', 'N', n, n, n, 1.0, s, s, 1.0, c0, c) <
			     SG_RESIDUAL_BOUND));
	printf("rank %d: %-32s %s%s%s\n", stargemm_rank(), "symbolic C never written, beta = 1",
	       ooc ? "(out of core) " : "", good ? "PASS" : "FAIL: ",
	       good ? "" : (ret ? stargemm_last_error() : "residual above the bound"));
	free(s);
	free(c0);
	free(c);
	stargemm_matrix_destroy(C);
	return good;
}

/* A symbolic product never written: zeros when read, and the sum of a product. */
static int symbolic_case(int P, int Q)
{
	static const int64_t sizes[] = { 30, 41, 26 }, present[] = { 0, 0, 2, 1, 1, 2 };
	struct stargemm_matrix *S = NULL, *X = NULL;
	int ret, good;

	ret = stargemm_matrix_create_sparse(&S, 3, sizes, 3, sizes, 3, present, P, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(S, 4);
	ret = ret ? ret : stargemm_matrix_create_product(&X, 'N', 'N', S, S, NULL);
	good = ret == 0 && stargemm_matrix_present_count(X) == 3 && gathers_zeros(X) &&
	       norms_zero(X);
	printf("rank %d: %-32s %s%s\n", stargemm_rank(), "symbolic C never written, read",
	       good ? "PASS" : "FAIL: ", good ? "" : stargemm_last_error());
	good = good && symbolic_product(S, 0) && symbolic_product(S, 1);
	stargemm_matrix_destroy(X);
	stargemm_matrix_destroy(S);
	return good;
}

int main(int argc, char **argv)
{
	struct stargemm_config cfg;
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1, ret, good;

	stargemm_config_init(&cfg);
	cfg.ram_limit_mib = argc > 3 ? atoll(argv[3]) : 0;
	if ((ret = stargemm_init(&cfg, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	sg_allow_packs(0);
	good = product_case(P, Q, 0, 0);
	good &= product_case(P, Q, 1, 0);
	good &= product_case(P, Q, 0, 1);
	good &= product_case(P, Q, 1, 1);
	good &= read_case(P, Q);
	good &= symbolic_case(P, Q);
	fflush(stdout);
	stargemm_finalize();
	return good ? 0 : 1;
}
