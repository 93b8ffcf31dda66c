/*
 * tests/test_prec.c — the four element types (s, d, c, z) through one implementation:
 * distributed products in core (tile products and batches) and out of core (a forced
 * plan), every op in {N, T, C} (C the conjugate transpose for complex types, the
 * transpose for real ones), complex alpha and beta, beta = 0 on a NaN-filled C, ragged
 * tiles of different sizes per dimension. Each result is gathered on rank 0 and held
 * against cblas_zgemm on the same values widened to double complex, with the scaled
 * residual of check.h in the precision of the type (sg_typed_residual()):
 *   ||C - Cref||_F / ((|alpha| ||A|| ||B|| + |beta| ||C0||) K eps_type) < 10.
 * On one rank also the host calls stargemm_sgemm/_cgemm/_zgemm on plain arrays
 * (padded leading dimensions). Bad input: mixed types, a double call on complex
 * matrices, the double fill on a complex matrix, an unknown type, NULL scalars.
 *
 * Usage: test_prec P Q   (under mpiexec with P*Q processes)
 */
#include <complex.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const stargemm_type types[] = { STARGEMM_S, STARGEMM_D, STARGEMM_C, STARGEMM_Z };

/* The scalar @p v in type @p t (its real part for real types), at @p buf (16 bytes:
 * room for any type). */
static const void *scalar(stargemm_type t, double complex v, void *buf)
{
	sg_put(t, buf, 0, v);
	return buf;
}

static void fill_nan(void *tile, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
		     int64_t col0, void *arg)
{
	stargemm_type t = *(const stargemm_type *)arg;

	for (int64_t j = 0; j < cols; j++)
		for (int64_t i = 0; i < rows; i++)
			sg_put(t, tile, i + j * ld, NAN + NAN * I);
}

/* One distributed product. */
struct prod_case {
	char ta, tb;
	int64_t m, n, k, mb, nb, kb;
	double complex alpha, beta;
	int nan_c, ooc;
};

static int product_case(stargemm_type t, const struct prod_case *pc, int P, int Q)
{
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	struct stargemm_ooc_options opt;
	int64_t ar = pc->ta == 'N' ? pc->m : pc->k, ac = pc->ta == 'N' ? pc->k : pc->m;
	int64_t br = pc->tb == 'N' ? pc->k : pc->n, bc = pc->tb == 'N' ? pc->n : pc->k;
	int64_t arb = pc->ta == 'N' ? pc->mb : pc->kb, acb = pc->ta == 'N' ? pc->kb : pc->mb;
	int64_t brb = pc->tb == 'N' ? pc->kb : pc->nb, bcb = pc->tb == 'N' ? pc->nb : pc->kb;
	double alpha_buf[2], beta_buf[2], r = INFINITY;
	void *a = NULL, *b = NULL, *c0 = NULL, *c = NULL;
	int ret, good;

	ret = stargemm_matrix_create_type(&A, t, ar, ac, arb, acb, P, Q);
	ret = ret ? ret : stargemm_matrix_create_type(&B, t, br, bc, brb, bcb, P, Q);
	ret = ret ? ret : stargemm_matrix_create_type(&C, t, pc->m, pc->n, pc->mb, pc->nb, P, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(A, 11);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 12);
	ret = ret ? ret : pc->nan_c ? stargemm_matrix_fill_elements(C, fill_nan, &t)
				    : stargemm_matrix_fill_random(C, 13);
	if (!ret) {
		a = sg_gather_typed(A);
		b = sg_gather_typed(B);
		c0 = sg_gather_typed(C);
	}
	stargemm_ooc_options_init(&opt);
	opt.b = opt.c = 2;
	opt.d = 1;
	if (!ret)
		ret = pc->ooc ? stargemm_gemm_ooc(pc->ta, pc->tb, scalar(t, pc->alpha, alpha_buf),
						  A, B, scalar(t, pc->beta, beta_buf), C, &opt,
						  NULL)
			      : stargemm_gemm(pc->ta, pc->tb, scalar(t, pc->alpha, alpha_buf), A, B,
					      scalar(t, pc->beta, beta_buf), C);
	if (!ret)
		c = sg_gather_typed(C);
	if (!ret && stargemm_rank() == 0)
		r = a && b && c0 && c ? sg_typed_residual(t, pc->ta, pc->tb, pc->m, pc->n,
							  pc->k, alpha_buf, a, b, beta_buf, c0,
							  c)
				      : INFINITY;
	good = ret == 0 && (stargemm_rank() != 0 || r < SG_RESIDUAL_BOUND);
	if (stargemm_rank() == 0 || !good)
		printf("rank %d: %c %dx%d %c%c %4lld x %4lld x %4lld tiles %lld/%lld/%lld %s%s "
		       "residual %.2e %s%s\n", stargemm_rank(), (char)t, P, Q, pc->ta, pc->tb,
		       (long long)pc->m, (long long)pc->n, (long long)pc->k, (long long)pc->mb,
		       (long long)pc->nb, (long long)pc->kb, pc->ooc ? "out of core" : "in core",
		       pc->nan_c ? " NaN-C" : "", r, good ? "PASS" : "FAIL ",
		       ret ? stargemm_last_error() : "");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	free(a);
	free(b);
	free(c0);
	free(c);
	return good;
}

/* The host call of type @p t on padded arrays (one process). */
static int host_case(stargemm_type t, char ta, char tb, int64_t m, int64_t n, int64_t k)
{
	size_t es = stargemm_type_size(t);
	int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
	int64_t br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
	int64_t lda = ar + 3, ldb = br + 1, ldc = m + 2;
	double complex alpha = 0.75 - 0.5 * I, beta = -0.5 + 0.25 * I;
	char *a = malloc((size_t)(lda * ac) * es), *b = malloc((size_t)(ldb * bc) * es);
	char *c = malloc((size_t)(ldc * n) * es), *pa = malloc((size_t)(ar * ac) * es);
	char *pb = malloc((size_t)(br * bc) * es), *pc0 = malloc((size_t)(m * n) * es);
	char *pc = malloc((size_t)(m * n) * es);
	double alpha_buf[2], beta_buf[2], r;
	int ret, good, pad_ok = 1;

	for (int64_t j = 0; j < ac; j++)
		for (int64_t i = 0; i < lda; i++)
			sg_put(t, a, i + j * lda, stargemm_random_element(21, i, j) +
						       I * stargemm_random_element(~21ULL, i, j));
	for (int64_t j = 0; j < bc; j++)
		for (int64_t i = 0; i < ldb; i++)
			sg_put(t, b, i + j * ldb, stargemm_random_element(22, i, j) +
						       I * stargemm_random_element(~22ULL, i, j));
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < ldc; i++)
			sg_put(t, c, i + j * ldc, i < m ? stargemm_random_element(23, i, j) : 99.0);
	for (int64_t j = 0; j < ac; j++)
		memcpy(pa + (size_t)(j * ar) * es, a + (size_t)(j * lda) * es, (size_t)ar * es);
	for (int64_t j = 0; j < bc; j++)
		memcpy(pb + (size_t)(j * br) * es, b + (size_t)(j * ldb) * es, (size_t)br * es);
	for (int64_t j = 0; j < n; j++)
		memcpy(pc0 + (size_t)(j * m) * es, c + (size_t)(j * ldc) * es, (size_t)m * es);
	scalar(t, alpha, alpha_buf);
	scalar(t, beta, beta_buf);
	switch (t) {
	case STARGEMM_S:
		ret = stargemm_sgemm(ta, tb, m, n, k, (float)creal(alpha), (float *)a, lda,
				     (float *)b, ldb, (float)creal(beta), (float *)c, ldc);
		break;
	case STARGEMM_D:
		ret = stargemm_dgemm(ta, tb, m, n, k, alpha_buf[0], (double *)a, lda, (double *)b,
				     ldb, beta_buf[0], (double *)c, ldc);
		break;
	case STARGEMM_C:
		ret = stargemm_cgemm(ta, tb, m, n, k, alpha_buf, a, lda, b, ldb, beta_buf, c, ldc);
		break;
	default:
		ret = stargemm_zgemm(ta, tb, m, n, k, alpha_buf, a, lda, b, ldb, beta_buf, c, ldc);
		break;
	}
	for (int64_t j = 0; j < n; j++) {
		memcpy(pc + (size_t)(j * m) * es, c + (size_t)(j * ldc) * es, (size_t)m * es);
		for (int64_t i = m; i < ldc; i++)
			pad_ok &= sg_get(t, c, i + j * ldc) == 99.0;
	}
	r = ret ? INFINITY : sg_typed_residual(t, ta, tb, m, n, k, alpha_buf, pa, pb, beta_buf,
					       pc0, pc);
	good = ret == 0 && r < SG_RESIDUAL_BOUND && pad_ok;
	printf("host stargemm_%cgemm %c%c %lld x %lld x %lld residual %.2e%s %s%s\n", (char)t, ta,
	       tb, (long long)m, (long long)n, (long long)k, r, pad_ok ? "" : " (padding written)",
	       good ? "PASS" : "FAIL ", ret ? stargemm_last_error() : "");
	free(a);
	free(b);
	free(c);
	free(pa);
	free(pb);
	free(pc0);
	free(pc);
	return good;
}

/* A refusal: @p ret must be -EINVAL with @p text in the message. */
static void fill_doubles(double *t, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
			 int64_t col0, void *arg)
{
}

static int bad_input(int P, int Q)
{
	struct stargemm_matrix *S = NULL, *D = NULL, *D2 = NULL, *Z = NULL, *Z2 = NULL;
	struct stargemm_matrix *X = (struct stargemm_matrix *)1;
	double one[2] = { 1.0, 0.0 };
	int good = 1;

	if (stargemm_matrix_create_type(&S, STARGEMM_S, 40, 40, 16, 16, P, Q) ||
	    stargemm_matrix_create_type(&D, STARGEMM_D, 40, 40, 16, 16, P, Q) ||
	    stargemm_matrix_create(&D2, 40, 40, 16, 16, P, Q) ||
	    stargemm_matrix_create_type(&Z, STARGEMM_Z, 40, 40, 16, 16, P, Q) ||
	    stargemm_matrix_create_type(&Z2, STARGEMM_Z, 40, 40, 16, 16, P, Q)) {
		printf("rank %d: creating the matrices failed: %s FAIL\n", stargemm_rank(),
		       stargemm_last_error());
		good = 0;
		goto out;
	}
	good &= stargemm_matrix_type(D2) == STARGEMM_D && stargemm_matrix_type(Z) == STARGEMM_Z;
	good &= sg_refused("mixed types", stargemm_gemm('N', 'N', one, S, D, one, D2),
			"one element type");
	good &= sg_refused("stargemm_pdgemm on complex matrices",
			stargemm_pdgemm('N', 'N', 1.0, Z, Z2, 1.0, D), "one element type");
	{
		struct stargemm_matrix *Z3 = NULL;

		if (stargemm_matrix_create_type(&Z3, STARGEMM_Z, 40, 40, 16, 16, P, Q) == 0) {
			good &= sg_refused("stargemm_pdgemm on double complex",
					stargemm_pdgemm('N', 'N', 1.0, Z, Z2, 0.0, Z3),
					"use stargemm_gemm()");
			good &= sg_refused("stargemm_pdgemm_ooc on double complex",
					stargemm_pdgemm_ooc('N', 'N', 1.0, Z, Z2, 0.0, Z3, NULL,
							    NULL),
					"use stargemm_gemm_ooc()");
			good &= sg_refused("a NULL alpha",
					stargemm_gemm('N', 'N', NULL, Z, Z2, one, Z3),
					"alpha is NULL");
		} else {
			good = 0;
		}
		stargemm_matrix_destroy(Z3);
	}
	good &= sg_refused("the double fill on a complex matrix",
			stargemm_matrix_fill(Z, fill_doubles, NULL), "fill_elements");
	good &= sg_refused("an unknown element type",
			stargemm_matrix_create_type(&X, (stargemm_type)'x', 40, 40, 16, 16, P, Q),
			"unknown element type");
	good &= X == NULL && stargemm_type_size((stargemm_type)'q') == 0 &&
		stargemm_type_size(STARGEMM_C) == 8 && stargemm_type_size(STARGEMM_Z) == 16;
out:
	stargemm_matrix_destroy(S);
	stargemm_matrix_destroy(D);
	stargemm_matrix_destroy(D2);
	stargemm_matrix_destroy(Z);
	stargemm_matrix_destroy(Z2);
	return good;
}

int main(int argc, char **argv)
{
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1, ret, good = 1;
	const double complex al = 1.25 - 0.75 * I, be = 0.5 + 0.25 * I;
	/* Ragged tiles of different sizes per dimension; the small ones are batched. */
	const struct prod_case cases[] = {
		{ 'N', 'N', 61, 47, 53, 16, 12, 10, al, be, 0, 0 },
		{ 'C', 'T', 61, 47, 53, 16, 12, 10, al, be, 0, 0 },
		{ 'T', 'C', 50, 70, 33, 7, 9, 11, -al, be, 0, 0 },
		{ 'C', 'C', 45, 39, 60, 13, 8, 17, al, 0.0, 1, 0 },
		{ 'N', 'C', 130, 120, 150, 64, 48, 40, al, be, 0, 0 },
		{ 'C', 'N', 130, 120, 150, 40, 48, 64, al, be, 0, 1 },
		{ 'N', 'T', 97, 88, 79, 32, 32, 32, al, 0.0, 1, 1 },
	};

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			good &= product_case(types[t], &cases[c], P, Q);
	if (stargemm_nranks() == 1)
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			good &= host_case(types[t], 'N', 'N', 300, 280, 260);
			good &= host_case(types[t], 'C', 'T', 129, 257, 300);
			good &= host_case(types[t], 'T', 'C', 1, 77, 513);
		}
	good &= bad_input(P, Q);
	fflush(stdout);
	stargemm_finalize();
	return good ? 0 : 1;
}
