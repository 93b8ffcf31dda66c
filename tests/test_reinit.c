/*
 * tests/test_reinit.c — stargemm started and stopped several times in one process
 * whose MPI the program initialised itself: each round's stargemm_init() succeeds, a
 * checked product runs, stargemm_finalize() leaves MPI up for the next round. A matrix
 * kept past a round's finalize is refused by the next round's product and freed by
 * destroy, with a message. Prints one "ok"/"not ok" line per case and rank; exits 1 if
 * a case failed (tests/reinit.sh, on 1 and 2 ranks).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "stargemm.h"

static int failures, ntests, me;

static void check(int cond, const char *what)
{
	printf("rank %d: %s %d - %s\n", me, cond ? "ok" : "not ok", ++ntests, what);
	if (!cond)
		printf("rank %d: #   last error: \"%s\"\n", me, stargemm_last_error());
	failures += !cond;
}

/* A product on ragged tiles over every rank (a 1 x nranks grid), checked on rank 0;
 * returns its C, which the caller destroys (or keeps past the finalize). */
static struct stargemm_matrix *checked_product(int round)
{
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	int Q = stargemm_nranks(), ret;
	double *a, *b, *c0, *c = NULL, res = 0.0;
	char what[120];

	ret = stargemm_matrix_create(&A, 41, 33, 8, 8, 1, Q);
	ret = ret ? ret : stargemm_matrix_create(&B, 33, 27, 8, 8, 1, Q);
	ret = ret ? ret : stargemm_matrix_create(&C, 41, 27, 8, 8, 1, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(A, 11 + round);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 12 + round);
	ret = ret ? ret : stargemm_matrix_fill_random(C, 13 + round);
	a = sg_gather_new(A);
	b = sg_gather_new(B);
	c0 = sg_gather_new(C);
	ret = ret ? ret : stargemm_pdgemm('N', 'N', 1.5, A, B, -1.0, C);
	if (!ret)
		c = sg_gather_new(C);
	if (me == 0)
		res = c ? sg_gemm_residual('N', 'N', 41, 27, 33, 1.5, a, b, -1.0, c0, c) : INFINITY;
	snprintf(what, sizeof(what), "round %d: a product succeeds%s (residual %.2g)", round,
		 me == 0 ? " and is correct" : "", res);
	check(!ret && res < SG_RESIDUAL_BOUND, what);
	sg_free_case(a, b, c0, c, A, B, NULL);
	return C;
}

int main(int argc, char **argv)
{
	struct stargemm_matrix *kept = NULL;
	int provided, finalized;
	char what[120];

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	for (int round = 0; round < 3; round++) {
		struct stargemm_matrix *C;

		snprintf(what, sizeof(what), "round %d: stargemm_init succeeds", round);
		check(stargemm_init(NULL, &argc, &argv) == 0, what);
		if (kept) {
			check(stargemm_pdgemm('N', 'N', 1.0, kept, kept, 0.0, kept) == -EINVAL,
			      "a matrix of the previous round is refused by this round's product");
			stargemm_matrix_destroy(kept);
			check(strstr(stargemm_last_error(), "outlived") != NULL,
			      "and destroying it frees its descriptor, with a message");
			kept = NULL;
		}
		C = checked_product(round);
		if (round == 0)
			kept = C;   /* kept past the finalize */
		else
			stargemm_matrix_destroy(C);
		snprintf(what, sizeof(what), "round %d: stargemm_finalize succeeds", round);
		check(stargemm_finalize() == 0, what);
		MPI_Finalized(&finalized);
		check(!finalized, "and leaves the program's MPI up");
	}
	printf("rank %d: %d of %d cases failed\n", me, failures, ntests);
	MPI_Finalize();
	return failures != 0;
}
