/*
 * tests/test_disagree.c — a collective call that is wrong on one rank only, or whose
 * ranks pass different arguments, fails on every rank with the same error code and
 * the faulty rank's message, without a hang; a correct product follows each case.
 * Run on 2 ranks (tests/disagree_2ranks.sh): each rank prints "ok"/"not ok" lines
 * prefixed with its rank, and exits 1 if one of its cases failed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stargemm.h"

static int failures, ntests;

/* This rank's result of a collective call: @p expected on every rank, with a message
 * that mentions @p needle. */
static void expect(int got, int expected, const char *needle, const char *what)
{
	const char *msg = stargemm_last_error();
	int ok = got == expected && strstr(msg, needle) != NULL;

	printf("rank %d: %s %d - %s\n", stargemm_rank(), ok ? "ok" : "not ok", ++ntests, what);
	if (!ok)
		printf("rank %d: #   returned %d (expected %d), message \"%s\" (must mention "
		       "\"%s\")\n", stargemm_rank(), got, expected, msg, needle);
	failures += !ok;
}

static struct stargemm_matrix *matrix(int64_t m, int64_t n)
{
	struct stargemm_matrix *X = NULL;

	if (stargemm_matrix_create(&X, m, n, 8, 8, 1, 2) || stargemm_matrix_fill_random(X, m + n))
		printf("rank %d: # setup failed: %s\n", stargemm_rank(), stargemm_last_error());
	return X;
}

/* A product on ragged tiles over both ranks, checked on rank 0 against BLAS; every
 * rank learns the verdict through the next gather's agreement being fine. */
static void product_follows(const char *after)
{
	struct stargemm_matrix *A = matrix(37, 29), *B = matrix(29, 23), *C = matrix(37, 23);
	double *a = sg_gather_new(A), *b = sg_gather_new(B), *c0 = sg_gather_new(C), *c = NULL;
	double res = 0.0;
	int ret = stargemm_pdgemm('N', 'N', 0.5, A, B, 2.0, C);
	char what[160];

	if (!ret)
		c = sg_gather_new(C);
	if (stargemm_rank() == 0)
		res = c ? sg_gemm_residual('N', 'N', 37, 23, 29, 0.5, a, b, 2.0, c0, c) : INFINITY;
	snprintf(what, sizeof(what), "after %s, a product succeeds%s (residual %.2g)", after,
		 stargemm_rank() == 0 ? " and is correct" : "", res);
	printf("rank %d: %s %d - %s\n", stargemm_rank(),
	       !ret && res < SG_RESIDUAL_BOUND ? "ok" : "not ok", ++ntests, what);
	failures += ret || res >= SG_RESIDUAL_BOUND;
	sg_free_case(a, b, c0, c, A, B, C);
}

/* In-place matrices whose local array is wrong on rank 1 only. */
static void bad_local_on_one_rank(void)
{
	double local[64 * 64];
	struct stargemm_matrix *X = NULL;
	int one = stargemm_rank() == 1;

	expect(stargemm_matrix_create_local(&X, 64, 64, 8, 8, 1, 2, local, one ? 10 : 64),
	       -EINVAL, "is below its", "create_local with a too small lld on rank 1");
	expect(stargemm_matrix_create_local(&X, 64, 64, 8, 8, 1, 2, one ? NULL : local, 64),
	       -EINVAL, "the local array is NULL on rank 1",
	       "create_local with a NULL array on rank 1");
	expect(stargemm_matrix_create_local(&X, 64, 64, 8, 8, 1, 2, local,
					    one ? (int64_t)1 << 33 : 64),
	       -EOVERFLOW, "at most 2^31 - 1", "create_local with lld = 2^33 on rank 1");
	product_follows("bad local arrays on one rank");
}

/* Scatter and gather: the root's bad array, and ranks that name different roots. */
static void bad_io(void)
{
	struct stargemm_matrix *X = matrix(20, 20), *Y = matrix(20, 20);
	double full[400];
	int me = stargemm_rank();

	expect(stargemm_matrix_scatter(X, full, me == 0 ? 19 : 20, 0), -EINVAL,
	       "ld=19 must be >= M=20", "scatter with ld < M on the root");
	expect(stargemm_matrix_scatter(X, me == 0 ? NULL : full, 20, 0), -EINVAL,
	       "NULL on the root", "scatter from a NULL array on the root");
	expect(stargemm_matrix_gather(X, full, 20, me == 0 ? 19 : 0), -EINVAL,
	       "root rank 19 is not in", "gather with a root out of range on rank 0");
	expect(stargemm_matrix_gather(X, full, 20, me), -EINVAL,
	       "rank 1 passed other a matrix or root than rank 0",
	       "gather whose ranks pass different roots (hung before)");
	expect(stargemm_matrix_scatter(me == 0 ? X : Y, full, 20, 0), -EINVAL,
	       "rank 1 passed other a matrix or root than rank 0",
	       "scatter whose ranks pass different matrices");
	stargemm_matrix_destroy(X);
	stargemm_matrix_destroy(Y);
	product_follows("bad scatters and gathers");
}

/* Products whose ranks pass different arguments, or one rank a bad one. */
static void bad_products(void)
{
	struct stargemm_matrix *A = matrix(24, 24), *B = matrix(24, 24), *C = matrix(24, 24),
			       *D = matrix(24, 24);
	struct stargemm_ooc_options o;
	struct stargemm_bsgemm_options bo;
	int me = stargemm_rank();
	const char *differ = "rank 1 passed other transposes, scalars, matrices or options";

	expect(stargemm_pdgemm(me ? 'T' : 'N', 'N', 1.0, A, B, 0.0, C), -EINVAL, differ,
	       "a product whose ranks pass different transposes");
	expect(stargemm_pdgemm('N', 'N', me ? 2.0 : 1.0, A, B, 0.0, C), -EINVAL, differ,
	       "a product whose ranks pass different alphas");
	expect(stargemm_pdgemm('N', 'N', 1.0, A, me ? D : B, 0.0, C), -EINVAL, differ,
	       "a product whose ranks pass different B matrices");
	expect(stargemm_pdgemm('N', 'N', 1.0, A, B, 0.0, me ? NULL : C), -EINVAL,
	       "matrix C is NULL", "a product with C NULL on rank 1");
	expect(stargemm_pdgemm('N', me ? 'X' : 'N', 1.0, A, B, 0.0, C), -EINVAL,
	       "must be 'N', 'T' or 'C'", "a product with a bad transpose on rank 1");
	stargemm_ooc_options_init(&o);
	if (me)
		o.d = 1;
	expect(stargemm_pdgemm_ooc('N', 'N', 1.0, A, B, 0.0, C, &o, NULL), -EINVAL, differ,
	       "an out-of-core product whose ranks pass different options");
	stargemm_ooc_options_init(&o);
	if (me)
		o.device_bytes = -1;
	expect(stargemm_pdgemm_ooc('N', 'N', 1.0, A, B, 0.0, C, &o, NULL), -EINVAL,
	       "device_bytes must be >= 0", "an out-of-core option out of range on rank 1");
	stargemm_bsgemm_options_init(&bo);
	if (me)
		bo.filter_eps = 1e-3;
	expect(stargemm_bsgemm('N', 'N', 1.0, A, B, 0.0, C, &bo, NULL), -EINVAL, differ,
	       "a block-sparse product whose ranks pass different filters");
	stargemm_bsgemm_options_init(&bo);
	if (me)
		bo.reuse_a = -1;
	expect(stargemm_bsgemm('N', 'N', 1.0, A, B, 0.0, C, &bo, NULL), -EINVAL,
	       "reuse_a and reuse_b must be >= 0", "a block-sparse option out of range on rank 1");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	stargemm_matrix_destroy(D);
	product_follows("products whose ranks disagree");
}

int main(int argc, char **argv)
{
	if (stargemm_init(NULL, &argc, &argv) != 0) {
		printf("Bail out! stargemm_init failed: %s\n", stargemm_last_error());
		return 1;
	}
	if (stargemm_nranks() != 2) {
		printf("Bail out! run on exactly two processes\n");
		stargemm_finalize();
		return 1;
	}
	bad_local_on_one_rank();
	bad_io();
	bad_products();
	printf("rank %d: %d of %d cases failed\n", stargemm_rank(), failures, ntests);
	stargemm_finalize();
	return failures != 0;
}
