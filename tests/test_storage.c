/*
 * tests/test_storage.c — what a RAM budget holds is counted and given back
 * (src/storage.c): with ram_limit_mib = 48 and no disk node, each rank holding
 * 11 MiB per dense matrix,
 *   * creating and destroying three matrices eight times succeeds (destroy gives their
 *     bytes back; without it the second round would exceed the budget);
 *   * a fifth live matrix is refused with -ENOMEM, naming the budget, on every rank;
 *   * a block-sparse matrix of 22 MiB per rank whose filter drops half its tiles
 *     leaves room for three dense matrices (44 MiB with the dropped tiles given back,
 *     55 without).
 * Every rank judges its own results.
 *
 * Usage: test_storage P Q   (under mpiexec with P*Q processes)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { SIDE = 1200, TILE = 600 };

/* Values of order 1, or 1e-20 on the tiles with i + j odd (the filter drops them). */
static void half_tiny(double *t, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
		      int64_t col0, void *arg)
{
	double scale = (row0 / TILE + col0 / TILE) % 2 ? 1e-20 : 1.0;

	(void)arg;
	for (int64_t j = 0; j < cols; j++)
		for (int64_t i = 0; i < rows; i++)
			t[i + j * ld] = scale * (1.0 + (double)((row0 + i + col0 + j) % 7));
}

static int dense(struct stargemm_matrix **X, int P, int Q)
{
	int ret = stargemm_matrix_create(X, SIDE * P, SIDE * Q, TILE, TILE, P, Q);

	return ret ? ret : stargemm_matrix_fill_random(*X, 1);
}

static int report(const char *name, int good)
{
	printf("rank %d: %-40s %s%s\n", stargemm_rank(), name, good ? "PASS" : "FAIL: ",
	       good ? "" : stargemm_last_error());
	return good;
}

static int destroy_gives_back(int P, int Q)
{
	struct stargemm_matrix *X[3];
	int ret = 0;

	for (int round = 0; round < 8 && !ret; round++) {
		for (int e = 0; e < 3; e++)
			X[e] = NULL;
		for (int e = 0; e < 3 && !ret; e++)
			ret = dense(&X[e], P, Q);
		for (int e = 0; e < 3; e++)
			stargemm_matrix_destroy(X[e]);
	}
	return report("8 rounds of 3 matrices created, destroyed", ret == 0);
}

static int beyond_refused(int P, int Q)
{
	struct stargemm_matrix *X[5] = { NULL };
	int ret = 0, e;

	for (e = 0; e < 5 && !ret; e++)
		ret = dense(&X[e], P, Q);
	for (int f = 0; f < 5; f++)
		stargemm_matrix_destroy(X[f]);
	return report("a fifth live matrix refused",
		      ret == -ENOMEM && e == 5 &&
		      strstr(stargemm_last_error(), "ram_limit_mib") != NULL);
}

static int filter_gives_back(int P, int Q)
{
	struct stargemm_matrix *S = NULL, *X[3] = { NULL };
	int64_t removed = 0;
	int ret = stargemm_matrix_create(&S, 2 * SIDE * P, SIDE * Q, TILE, TILE, P, Q);

	ret = ret ? ret : stargemm_matrix_fill(S, half_tiny, NULL);
	ret = ret ? ret : stargemm_matrix_filter(S, 1e-10, &removed);
	for (int e = 0; e < 3 && !ret; e++)
		ret = dense(&X[e], P, Q);
	for (int e = 0; e < 3; e++)
		stargemm_matrix_destroy(X[e]);
	stargemm_matrix_destroy(S);
	return report("filtered tiles give their bytes back",
		      ret == 0 && removed == 4 * P * Q);
}

int main(int argc, char **argv)
{
	struct stargemm_config cfg;
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1, ret, good;

	stargemm_config_init(&cfg);
	cfg.ram_limit_mib = 48;
	if ((ret = stargemm_init(&cfg, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	good = destroy_gives_back(P, Q);
	good &= beyond_refused(P, Q);
	good &= filter_gives_back(P, Q);
	fflush(stdout);
	stargemm_finalize();
	return good ? 0 : 1;
}
