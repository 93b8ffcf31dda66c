/*
 * tests/test_host.c — stargemm_dgemm(), the BLAS-like call on host arrays tiled in
 * place (src/host.c), against cblas_dgemm on copies of the same arrays:
 *   * ragged sizes, every transposition ('C' = 'T'), alpha and beta of both signs,
 *     leading dimensions larger than the rows, with the default tile and with
 *     STARGEMM_HOST_TILE of 100 (many ragged tiles, batched) and 1000 (one task per
 *     tile product);
 *   * the padding rows between the columns of C (ldc > m) keep their values;
 *   * beta = 0 with NaN in C; A and B the same array;
 *   * k = 0 and alpha = 0 (C = beta C), m = 0 (nothing);
 *   * bad arguments refused with the BLAS position of the argument, C overlapping A,
 *     a bad STARGEMM_HOST_TILE;
 *   * the default tile without GPUs, from synthetic calibrations (src/host.c): 256 when
 *     the small kernels at 256 a side measure twice BLAS, 512 to 2048 when BLAS at 512
 *     measures five times them, never a tile whose C leaves workers idle (2048 on a
 *     C of 2048 with several workers), 256 with nothing measured, and
 *     STARGEMM_HOST_TILE over all of them.
 * With the argument "refuse" (run on 2 processes): every rank refuses the call.
 */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "internal.h"
#include "../codelets/calibrate.h"

#define PAD 5          /* extra rows of every array: ld = rows + PAD */
#define SENTINEL 7e77  /* in C's padding rows */

struct hcase {
	char ta, tb;
	int64_t m, n, k;
	double alpha, beta;
	const char *tile;  /* STARGEMM_HOST_TILE, NULL: default */
	int nan_c, same_ab;
};

static double *random_array(int64_t rows, int64_t cols, int64_t ld, uint64_t seed)
{
	double *a = malloc((size_t)(ld * (cols > 0 ? cols : 1)) * sizeof(*a));

	for (int64_t j = 0; a && j < cols; j++)
		for (int64_t i = 0; i < ld; i++)
			a[i + j * ld] = i < rows ? stargemm_random_element(seed, i, j) : SENTINEL;
	return a;
}

/* ||C - R||_F over the m x n part, scaled as sg_gemm_residual() does; -1 when a
 * padding element of C changed. */
static double residual(const struct hcase *c, const double *a, int64_t lda, const double *b,
		       int64_t ldb, const double *c0, const double *C, const double *R,
		       int64_t ldc)
{
	double diff = 0.0, na = 0.0, nb = 0.0, nc = 0.0;
	int64_t ar = c->ta == 'N' ? c->m : c->k, ac = c->ta == 'N' ? c->k : c->m;
	int64_t br = c->tb == 'N' ? c->k : c->n, bc = c->tb == 'N' ? c->n : c->k;

	for (int64_t j = 0; j < c->n; j++)
		for (int64_t i = 0; i < ldc; i++) {
			double d = C[i + j * ldc] - R[i + j * ldc];

			if (i >= c->m && C[i + j * ldc] != SENTINEL)
				return -1.0;
			if (i < c->m) {
				diff += d * d;
				nc += c->nan_c ? 0.0 : c0[i + j * ldc] * c0[i + j * ldc];
			}
		}
	for (int64_t j = 0; j < ac; j++)
		for (int64_t i = 0; i < ar; i++)
			na += a[i + j * lda] * a[i + j * lda];
	for (int64_t j = 0; j < bc; j++)
		for (int64_t i = 0; i < br; i++)
			nb += b[i + j * ldb] * b[i + j * ldb];
	return sqrt(diff) / ((fabs(c->alpha) * sqrt(na) * sqrt(nb) + fabs(c->beta) * sqrt(nc)) *
			     (double)(c->k > 0 ? c->k : 1) * 2.2e-16 + 1e-300);
}

static int run_case(const struct hcase *c)
{
	int64_t ar = c->ta == 'N' ? c->m : c->k, ac = c->ta == 'N' ? c->k : c->m;
	int64_t br = c->tb == 'N' ? c->k : c->n, bc = c->tb == 'N' ? c->n : c->k;
	int64_t lda = ar + PAD, ldb = br + PAD, ldc = c->m + PAD;
	double *a = random_array(ar, ac, lda, 1), *b = c->same_ab ? a : random_array(br, bc, ldb, 2);
	double *c0 = random_array(c->m, c->n, ldc, 3), *C, *R, res;
	size_t bytes = (size_t)(ldc * c->n) * sizeof(double);
	int ret, good;

	if (c->same_ab)
		ldb = lda;
	for (int64_t j = 0; c->nan_c && j < c->n; j++)
		for (int64_t i = 0; i < c->m; i++)
			c0[i + j * ldc] = NAN;
	C = malloc(bytes);
	R = malloc(bytes);
	memcpy(C, c0, bytes);
	memcpy(R, c0, bytes);
	if (c->tile)
		setenv("STARGEMM_HOST_TILE", c->tile, 1);
	ret = stargemm_dgemm(c->ta, c->tb, c->m, c->n, c->k, c->alpha, a, lda, b, ldb, c->beta,
			     C, ldc);
	unsetenv("STARGEMM_HOST_TILE");
	cblas_dgemm(CblasColMajor, c->ta == 'N' ? CblasNoTrans : CblasTrans,
		    c->tb == 'N' ? CblasNoTrans : CblasTrans, (int)c->m, (int)c->n, (int)c->k,
		    c->alpha, a, (int)lda, b, (int)ldb, c->beta, R, (int)ldc);
	res = ret ? -2.0 : residual(c, a, lda, b, ldb, c0, C, R, ldc);
	good = ret == 0 && res >= 0.0 && res < SG_RESIDUAL_BOUND;
	printf("%c%c %5lld x %5lld x %5lld alpha %5.2f beta %5.2f tile %-7s%s%s residual "
	       "%-9.2e %s%s\n", c->ta, c->tb, (long long)c->m, (long long)c->n, (long long)c->k,
	       c->alpha, c->beta, c->tile ? c->tile : "default", c->nan_c ? " NaN-C" : "",
	       c->same_ab ? " A=B" : "", res, good ? "PASS" : "FAIL ",
	       good ? "" : ret ? stargemm_last_error() : res == -1.0 ? "(padding of C changed)"
								    : "");
	free(a);
	if (!c->same_ab)
		free(b);
	free(c0);
	free(C);
	free(R);
	return good;
}

static int bad_calls(void)
{
	double a[64] = { 0 }, b[64] = { 0 }, c[64] = { 0 };
	int good = 1;

	good &= sg_refused("transa X", stargemm_dgemm('X', 'N', 4, 4, 4, 1, a, 4, b, 4, 0, c, 4),
			"argument 1 (transa)");
	good &= sg_refused("transb 0", stargemm_dgemm('N', 0, 4, 4, 4, 1, a, 4, b, 4, 0, c, 4),
			"argument 2 (transb)");
	good &= sg_refused("m < 0", stargemm_dgemm('N', 'N', -1, 4, 4, 1, a, 4, b, 4, 0, c, 4),
			"argument 3 (m)");
	good &= sg_refused("k < 0", stargemm_dgemm('N', 'N', 4, 4, -2, 1, a, 4, b, 4, 0, c, 4),
			"argument 5 (k)");
	good &= sg_refused("lda < m", stargemm_dgemm('N', 'N', 6, 4, 4, 1, a, 5, b, 4, 0, c, 6),
			"argument 8 (lda) = 5");
	good &= sg_refused("ldb < n for B^T", stargemm_dgemm('N', 'T', 4, 6, 4, 1, a, 4, b, 4, 0,
							  c, 4), "argument 10 (ldb) = 4");
	good &= sg_refused("ldc < m", stargemm_dgemm('N', 'N', 4, 4, 4, 1, a, 4, b, 4, 0, c, 3),
			"argument 13 (ldc) = 3");
	good &= sg_refused("C NULL", stargemm_dgemm('N', 'N', 4, 4, 4, 1, a, 4, b, 4, 0, NULL, 4),
			"argument 12 (C) is NULL");
	good &= sg_refused("C overlaps A", stargemm_dgemm('N', 'N', 4, 4, 4, 1, a, 4, b, 4, 0,
						       a + 8, 4), "C overlaps A");
	setenv("STARGEMM_HOST_TILE", "0", 1);
	good &= sg_refused("STARGEMM_HOST_TILE=0", stargemm_dgemm('N', 'N', 4, 4, 4, 1, a, 4, b, 4,
							       0, c, 4), "STARGEMM_HOST_TILE");
	unsetenv("STARGEMM_HOST_TILE");
	return good;
}

static const struct hcase cases[] = {
	{ 'N', 'N', 700, 650, 900, 1.5, 0.5, NULL, 0, 0 },
	{ 'T', 'N', 513, 300, 257, -1.0, 1.0, NULL, 0, 0 },
	{ 'N', 'T', 300, 513, 257, 0.5, -2.0, "100", 0, 0 },
	{ 'C', 'C', 333, 222, 444, 1.0, 0.0, "100", 1, 0 },
	{ 'N', 'N', 1100, 1050, 1200, 1.0, 1.0, "1000", 0, 0 },
	{ 'T', 'T', 1001, 999, 1003, -0.5, 0.25, "1000", 0, 0 },
	{ 'N', 'T', 400, 400, 350, 1.0, 0.0, NULL, 1, 1 },
	{ 'N', 'N', 1, 1, 1, 2.0, 3.0, NULL, 0, 0 },
	{ 'N', 'N', 37, 41, 0, 2.0, -1.5, NULL, 0, 0 },
	{ 'N', 'N', 37, 41, 29, 0.0, 0.0, NULL, 1, 0 },
	{ 'N', 'N', 0, 41, 29, 1.0, 1.0, NULL, 0, 0 },
};

/* A PASS or FAIL line for @p what; returns @p cond. */
static int said(int cond, const char *what)
{
	printf("%s %s\n", cond ? "PASS" : "FAIL", what);
	return cond;
}

/* The tile stargemm__host_tile() gives a d product with a C of m x m under @p cal. */
static int64_t tile_under(const struct stargemm__calibration *cal, int64_t m)
{
	int64_t nb = -1;

	stargemm__calibration_set(cal);
	if (stargemm__host_tile(stargemm__element('d'), m, m, 1.0, &nb) != 0)
		return -1;
	return nb;
}

static int default_tiles(void)
{
	const struct stargemm__calibration saved = *stargemm__calibration();
	struct stargemm__calibration small, big;
	int d = stargemm__cal_type('d'), workers = stargemm_ncpu_workers(), good = 1;
	int64_t t;
	char *env = getenv("STARGEMM_HOST_TILE") ? strdup(getenv("STARGEMM_HOST_TILE")) : NULL;

	if (stargemm_ncuda_workers() > 0) {
		printf("default tiles: skipped (CUDA workers: the tile is the GPUs')\n");
		free(env);
		return 1;
	}
	unsetenv("STARGEMM_HOST_TILE");
	memset(&small, 0, sizeof(small));
	small.measured = 1;
	for (int ti = 0; ti < STARGEMM__CAL_TYPES; ti++) {
		for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
			for (int k = 0; k < STARGEMM__SMALL_NKERNELS; k++)
				small.small[ti][si][k] = 10.0;
		for (int bi = 0; bi < STARGEMM__CAL_BIG; bi++)
			small.big[ti][bi] = 50.0;
	}
	big = small;
	for (int k = 0; k < STARGEMM__SMALL_NKERNELS; k++)
		small.small[d][STARGEMM__CAL_SIDES - 1][k] = 100.0;   /* side 256 */
	good &= said(tile_under(&small, 6144) == 256,
			 "default tile: 256 where the kernels at 256 measure twice BLAS at 512");
	good &= said((t = tile_under(&big, 6144)) >= 512 && t <= 2048,
			 "default tile: 512 to 2048 where BLAS at 512 measures five times them");
	good &= said(workers < 2 || tile_under(&big, 2048) < 2048,
			 "default tile: not one C tile for several workers");
	for (int bi = 0; bi < STARGEMM__CAL_BIG; bi++)
		big.big[d][bi] = 50.0 + 15.0 * bi;   /* 512: 50, 1024: 65, 2048: 80 */
	good &= said(tile_under(&big, 16384) == 2048,
		     "default tile: 2048 where BLAS measures 1.6 times its rate at 512 there");
	good &= said(tile_under(NULL, 6144) == 256, "default tile: 256 with nothing measured");
	good &= said(stargemm_tile_recommend(STARGEMM_D, 6144, 6144, 6144, &t) == 0 && t == 256,
		     "recommended tile: the host call's without measurements (one rank)");
	good &= said(stargemm_tile_recommend((stargemm_type)'q', 1, 1, 1, &t) == -EINVAL &&
		     strstr(stargemm_last_error(), "not one of"),
		     "recommended tile: a type not of the four is refused");
	good &= said(stargemm_tile_recommend(STARGEMM_D, 10, -1, 10, &t) == -EINVAL &&
		     strstr(stargemm_last_error(), "n = -1 must be >= 0"),
		     "recommended tile: a negative size is refused");
	good &= said(stargemm_tile_recommend(STARGEMM_D, 10, 10, 10, NULL) == -EINVAL,
		     "recommended tile: a NULL nb is refused");
	setenv("STARGEMM_HOST_TILE", "333", 1);
	good &= said(tile_under(&small, 6144) == 333, "default tile: STARGEMM_HOST_TILE first");
	if (env)
		setenv("STARGEMM_HOST_TILE", env, 1);
	else
		unsetenv("STARGEMM_HOST_TILE");
	free(env);
	stargemm__calibration_set(&saved);
	return good;
}

int main(int argc, char **argv)
{
	int refuse = argc > 1 && strcmp(argv[1], "refuse") == 0, good = 1, ret;
	double x[4] = { 0 };

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	if (refuse) {
		good = sg_refused("more than one process",
			       stargemm_dgemm('N', 'N', 2, 2, 2, 1, x, 2, x, 2, 0, x + 2, 2),
			       "use stargemm_pdgemm()");
	} else {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			good &= run_case(&cases[i]);
		good &= bad_calls();
		good &= default_tiles();
	}
	fflush(stdout);
	stargemm_finalize();
	return good ? 0 : 1;
}
