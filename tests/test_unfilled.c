/*
 * tests/test_unfilled.c — a matrix read before anything wrote it reads as zeros, on a
 * runtime whose tiles StarPU allocates (a RAM budget and a disk node: home node -1,
 * codelets/first_value.c), where StarPU 1.3 otherwise stops with an assertion.
 *
 *   test_unfilled P Q DISK_DIR
 *
 * On a P x Q grid, ragged tiles: an unfilled matrix gathers as zeros; C = A B with A
 * never filled gives zeros over a NaN-filled C (beta = 0); C never filled with beta = 1
 * gives A B; out of core too. Exit status 0 when every case passes on every rank.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stargemm.h"

#define M 300
#define N 260
#define K 230
#define NB 64

static int report(const char *what, int ret, int good)
{
	good = good && ret == 0;
	if (stargemm_rank() == 0)
		printf("%-44s %s%s%s\n", what, good ? "PASS" : "FAIL", ret ? ": " : "",
		       ret ? stargemm_last_error() : "");
	return good;
}

/* Every element of the gathered @p X is @p v (rank 0; the others agree). */
static int all_equal(const struct stargemm_matrix *X, double v)
{
	double *x = sg_gather_new(X);
	int good = stargemm_rank() != 0 || x != NULL;

	for (int64_t e = 0; x && e < stargemm_matrix_m(X) * stargemm_matrix_n(X); e++)
		good &= x[e] == v;
	free(x);
	return good;
}

/* C = A B with C never written, beta = 1: C is A B (residual against C0 = 0). */
static int unfilled_c(int P, int Q, int ooc)
{
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	struct stargemm_ooc_options opt;
	struct stargemm_plan plan;
	double *a, *b, *c, *zero = NULL;
	int ret, good;

	ret = stargemm_matrix_create(&A, M, K, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&B, K, N, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&C, M, N, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(A, 1);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 2);
	stargemm_ooc_options_init(&opt);
	if (!ret)
		ret = ooc ? stargemm_pdgemm_ooc('N', 'N', 1.0, A, B, 1.0, C, &opt, &plan)
			  : stargemm_pdgemm('N', 'N', 1.0, A, B, 1.0, C);
	a = ret ? NULL : sg_gather_new(A);
	b = ret ? NULL : sg_gather_new(B);
	c = ret ? NULL : sg_gather_new(C);
	if (stargemm_rank() == 0 && c)
		zero = calloc(M * N, sizeof(*zero));
	good = stargemm_rank() != 0 ||
	       (zero && sg_gemm_residual('N', 'N', M, N, K, 1.0, a, b, 1.0, zero, c) <
			SG_RESIDUAL_BOUND);
	free(zero);
	sg_free_case(a, b, NULL, c, A, B, C);
	return report(ooc ? "C unfilled, beta = 1, out of core: C = A B"
			  : "C unfilled, beta = 1: C = A B", ret, good);
}

/* C = A B with A never written, beta = 0 over NaNs: C is zeros. */
static int unfilled_a(int P, int Q)
{
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	int ret, good = 0;

	ret = stargemm_matrix_create(&A, M, K, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&B, K, N, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&C, M, N, NB, NB, P, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 2);
	ret = ret ? ret : stargemm_matrix_fill(C, sg_fill_nan, NULL);
	ret = ret ? ret : stargemm_pdgemm('N', 'N', 1.0, A, B, 0.0, C);
	if (!ret)
		good = all_equal(C, 0.0);
	sg_free_case(NULL, NULL, NULL, NULL, A, B, C);
	return report("A unfilled, beta = 0 over NaNs: C = 0", ret, good);
}

static int unfilled_gather(int P, int Q)
{
	struct stargemm_matrix *X = NULL;
	int ret, good = 0;

	ret = stargemm_matrix_create(&X, M, N, NB, NB, P, Q);
	if (!ret)
		good = all_equal(X, 0.0);
	stargemm_matrix_destroy(X);
	return report("gathered before any fill: zeros", ret, good);
}

int main(int argc, char **argv)
{
	struct stargemm_config cfg;
	int P, Q, good = 1, ret;

	if (argc != 4) {
		fprintf(stderr, "usage: %s P Q DISK_DIR\n", argv[0]);
		return 2;
	}
	P = atoi(argv[1]);
	Q = atoi(argv[2]);
	stargemm_config_init(&cfg);
	cfg.ram_limit_mib = 4;   /* the matrices (2.3 MiB) and the product's inputs fit */
	cfg.disk_dir = argv[3];
	cfg.disk_mib = 64;
	if ((ret = stargemm_init(&cfg, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return 1;
	}
	good &= unfilled_gather(P, Q);
	good &= unfilled_a(P, Q);
	good &= unfilled_c(P, Q, 0);
	good &= unfilled_c(P, Q, 1);
	stargemm_finalize();
	return good ? 0 : 1;
}
