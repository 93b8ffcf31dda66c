/*
 * tests/test_soak.c — many consecutive products in one process: matrices created,
 * filled, multiplied (in core, out of core with a forced plan, block-sparse) and
 * destroyed, over and over. The resident memory must stay flat: nothing may leak per
 * product. Every hundredth result must match cblas_dgemm, and nothing may run out
 * (StarPU-MPI tags: each matrix takes a fresh range).
 *
 * Usage: test_soak P Q ITERATIONS [MAX_KIB]   (under mpiexec with P*Q processes)
 * Each rank samples its resident memory after every product. The first tenth of the
 * products is a warm-up (StarPU's and the allocator's pools fill); then the median
 * over a window of products just after it (a thirtieth of them, whole cycles of the
 * three kinds) is held against the median over the last window, and their difference
 * divided by the products between the windows' centres is the growth per product.
 * Each rank prints its samples at every tenth and that growth, and fails when it
 * exceeds MAX_KIB KiB per product (default 2: a 32 x 32 tile of doubles, 8 KiB,
 * leaked per product measured 8.1 and 8.5 on 2 ranks; without it 0.05 to 0.08 over
 * 1000 and 3000 products, StarPU's own lists of requesters, 48 bytes a node; 0.27 to
 * 0.53 when every matrix took fresh tags: StarPU-MPI keeps an entry per tag it
 * waited for, src/process.c).
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

/* The median of the @p n values from @p x (sorted in place). */
static double median(double *x, int64_t n)
{
	for (int64_t i = 1; i < n; i++)   /* insertion sort: a few dozen values */
		for (int64_t j = i; j > 0 && x[j - 1] > x[j]; j--) {
			double t = x[j];

			x[j] = x[j - 1];
			x[j - 1] = t;
		}
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

int main(int argc, char **argv)
{
	int P = argc > 3 ? atoi(argv[1]) : 1, Q = argc > 3 ? atoi(argv[2]) : 1;
	int64_t iterations = argc > 3 ? atoll(argv[3]) : 100, it, warm, window;
	double limit = argc > 4 ? atof(argv[4]) : 2.0, *rss, first, last, growth = 0.0;
	int ret = 0, rank, sampled = 1;

	if (iterations < 30) {
		fprintf(stderr, "test_soak: at least 30 iterations\n");
		return 1;
	}
	/* Warm-up: the first tenth; windows: a thirtieth, whole cycles of the 3 kinds. */
	warm = iterations / 10;
	window = 3 * (iterations / 90) > 3 ? 3 * (iterations / 90) : 3;
	if (!(rss = malloc((size_t)iterations * sizeof(*rss)))) {
		fprintf(stderr, "test_soak: out of memory\n");
		return 1;
	}
	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		free(rss);
		return ret == -ENODEV ? 77 : 1;
	}
	rank = stargemm_rank();
	for (it = 0; it < iterations && ret == 0; it++) {
		ret = one_product(it, P, Q, it % 100 == 0);
		sampled &= (rss[it] = resident_mib()) >= 0.0;
	}
	if (ret)
		printf("rank %d: iteration %lld failed (%d): %s\n", rank, (long long)it - 1, ret,
		       ret == -EDOM ? "residual above the bound" : stargemm_last_error());
	else if (!sampled)
		printf("rank %d: no resident memory figure (/proc/self/statm)\n", rank);
	if (!ret && sampled) {
		char line[1024];
		int n = snprintf(line, sizeof(line), "rank %d: resident MiB at every tenth:", rank);

		for (int t = 1; t <= 10 && n < (int)sizeof(line); t++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %.1f",
				      rss[t * iterations / 10 - 1]);
		first = median(rss + warm, window);
		last = median(rss + iterations - window, window);
		growth = (last - first) * 1024.0 / (double)(iterations - window - warm);
		printf("%s\nrank %d: %lld products, median resident %.2f MiB after the warm-up "
		       "(%lld), %.2f MiB at the end: %.3f KiB per product (limit %.3f)\n", line,
		       rank, (long long)it, first, (long long)warm, last, growth, limit);
	}
	fflush(stdout);
	free(rss);
	stargemm_finalize();
	return ret || !sampled || growth > limit ? 1 : 0;
}
