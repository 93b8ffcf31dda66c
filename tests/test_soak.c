/*
 * tests/test_soak.c — many consecutive products in one process: matrices created,
 * filled, multiplied (in core, out of core with a forced plan, block-sparse) and
 * destroyed, over and over. The resident memory must stay flat (nothing leaks per
 * product), every hundredth result must match cblas_dgemm, and nothing may run out
 * (StarPU-MPI tags: each matrix takes a fresh range).
 *
 * Usage: test_soak P Q ITERATIONS [MAX_GROWTH_MIB]   (under mpiexec with P*Q processes)
 * Prints the resident memory of rank 0 after the first tenth of the iterations and at
 * the end; fails when it grew by more than MAX_GROWTH_MIB (default 8) on any rank.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

/* Resident set size of this process in MiB (/proc/self/statm), or -1. */
static double resident_mib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1.0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1.0 : (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

/* One product of iteration @p it: 0 on success (and, when @p check, a residual below
 * the bound), else the library's error code or -EDOM. */
static int one_product(int64_t it, int P, int Q, int check)
{
	static const int64_t present[] = { 0, 0, 1, 1, 2, 0, 0, 2, 2, 2 };
	int64_t m = 97 + it % 5, n = 83, k = 71, sizes[3] = { 32, 32, k - 64 };
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	struct stargemm_ooc_options opt;
	double *a = NULL, *b = NULL, *c0 = NULL, *c = NULL;
	int ret, mode = (int)(it % 3);

	/* mode 2: A block-sparse (5 of its 3 x 3 tiles of 32, 32, k - 64 rows) */
	if (mode == 2) {
		m = k;
		ret = stargemm_matrix_create_sparse(&A, 3, sizes, 3, sizes, 5, present, P, Q);
	} else {
		ret = stargemm_matrix_create(&A, m, k, 32, 32, P, Q);
	}
	ret = ret ? ret : stargemm_matrix_create(&B, k, n, 32, 32, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&C, m, n, 32, 32, P, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(A, (uint64_t)it);
	ret = ret ? ret : stargemm_matrix_fill_random(B, (uint64_t)it + 1);
	ret = ret ? ret : stargemm_matrix_fill_random(C, (uint64_t)it + 2);
	if (!ret && check) {
		a = sg_gather_new(A);
		b = sg_gather_new(B);
		c0 = sg_gather_new(C);
	}
	stargemm_ooc_options_init(&opt);
	opt.b = 1;
	opt.c = 1;
	opt.d = 1;
	opt.lookahead = 1;
	if (!ret)
		ret = mode == 1 ? stargemm_pdgemm_ooc('N', 'N', 1.5, A, B, 0.5, C, &opt, NULL)
				: stargemm_pdgemm('N', 'N', 1.5, A, B, 0.5, C);
	if (!ret && check) {
		c = sg_gather_new(C);
		if (stargemm_rank() == 0 && (!a || !b || !c0 || !c ||
					     sg_gemm_residual('N', 'N', m, n, k, 1.5, a, b, 0.5, c0,
							      c) >= SG_RESIDUAL_BOUND))
			ret = -EDOM;
	}
	sg_free_case(a, b, c0, c, A, B, C);
	return ret;
}

int main(int argc, char **argv)
{
	int P = argc > 3 ? atoi(argv[1]) : 1, Q = argc > 3 ? atoi(argv[2]) : 1;
	int64_t iterations = argc > 3 ? atoll(argv[3]) : 100, it;
	double limit = argc > 4 ? atof(argv[4]) : 8.0, early = -1.0, late;
	int ret = 0, rank;

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	rank = stargemm_rank();
	for (it = 0; it < iterations && ret == 0; it++) {
		ret = one_product(it, P, Q, it % 100 == 0);
		if (it + 1 == iterations / 10)
			early = resident_mib();
	}
	late = resident_mib();
	if (ret)
		printf("rank %d: iteration %lld failed (%d): %s\n", rank, (long long)it - 1, ret,
		       ret == -EDOM ? "residual above the bound" : stargemm_last_error());
	printf("rank %d: %lld products, resident %.1f MiB after %lld, %.1f MiB at the end "
	       "(growth %.1f MiB, limit %.1f)\n", rank, (long long)it, early,
	       (long long)(iterations / 10), late, late - early, limit);
	fflush(stdout);
	stargemm_finalize();
	return ret || early < 0 || late - early > limit ? 1 : 0;
}
