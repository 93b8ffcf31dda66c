/*
 * bench/host.c — --impl host: stargemm_dgemm() (or _sgemm, _cgemm, _zgemm with
 * --prec; src/host.c), the BLAS-like call on one process's host arrays, on the same problem and seeds as --impl blas, so that
 * bench/compare.sh can put it beside one OpenBLAS dgemm call (and, on a GPU node,
 * beside --impl cublasxt on the same host arrays). Its tile size is its own
 * (STARGEMM_HOST_TILE, or stargemm_tile_recommend()'s), not --nb; the CSV row shows it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "stargemm.h"
#include "../tests/check.h"

/* The host call of the benchmark's type. */
static int host_gemm(const struct bench_opts *o, const void *alpha, const void *a, int64_t lda,
		     const void *b, int64_t ldb, const void *beta, void *c)
{
	switch (o->prec) {
	case STARGEMM_S:
		return stargemm_sgemm(o->transA, o->transB, o->m, o->n, o->k, *(const float *)alpha,
				      a, lda, b, ldb, *(const float *)beta, c, o->m);
	case STARGEMM_D:
		return stargemm_dgemm(o->transA, o->transB, o->m, o->n, o->k,
				      *(const double *)alpha, a, lda, b, ldb,
				      *(const double *)beta, c, o->m);
	case STARGEMM_C:
		return stargemm_cgemm(o->transA, o->transB, o->m, o->n, o->k, alpha, a, lda, b,
				      ldb, beta, c, o->m);
	default:
		return stargemm_zgemm(o->transA, o->transB, o->m, o->n, o->k, alpha, a, lda, b,
				      ldb, beta, c, o->m);
	}
}

int bench_run_host(const struct bench_opts *given)
{
	struct bench_opts shown = *given, *o = &shown;   /* the row shows the call's tile */
	struct stargemm_config cfg;
	int ta = o->transA != 'N', tb = o->transB != 'N', failed = 0;
	int64_t am = ta ? o->k : o->m, an = ta ? o->m : o->k;
	int64_t bm = tb ? o->n : o->k, bn = tb ? o->k : o->n;
	size_t bytes = (size_t)(o->m * o->n) * stargemm_type_size(o->prec);
	void *a = bench_random_array(o->prec, am, an, o->seed);
	void *b = bench_random_array(o->prec, bm, bn, o->seed + 1);
	void *c = bench_random_array(o->prec, o->m, o->n, o->seed + 2);
	void *c0 = o->check && c ? malloc(bytes) : NULL;
	double alpha[2], beta[2];

	stargemm_config_init(&cfg);
	cfg.ncpus = o->ncpus;
	cfg.ncuda = o->ngpus;
	cfg.sched_policy = o->sched;
	if (!a || !b || !c || (o->check && !c0) || stargemm_init(&cfg, NULL, NULL)) {
		fprintf(stderr, "host: %s\n", a && b && c ? stargemm_last_error()
							  : "cannot allocate the matrices");
		free(a);
		free(b);
		free(c);
		free(c0);
		return 1;
	}
	bench_scalar(o->prec, o->alpha, alpha);
	bench_scalar(o->prec, o->beta, beta);
	if (getenv("STARGEMM_HOST_TILE"))
		shown.nb = atoll(getenv("STARGEMM_HOST_TILE"));
	else if (stargemm_tile_recommend(o->prec, o->m, o->n, o->k, &shown.nb))
		shown.nb = 0;
	for (int it = -o->warmup; it < o->niter && !failed; it++) {
		double t, residual = -1.0;

		if (c0)
			memcpy(c0, c, bytes);
		t = bench_now();
		failed = host_gemm(o, alpha, a, am, b, bm, beta, c);
		t = bench_now() - t;
		if (failed) {
			fprintf(stderr, "host: %s\n", stargemm_last_error());
			break;
		}
		if (c0)
			residual = sg_typed_residual(o->prec, o->transA, o->transB, o->m, o->n, o->k,
						     alpha, a, b, beta, c0, c);
		failed = residual >= SG_RESIDUAL_BOUND;
		if (it >= 0)
			bench_print_row(o, 1, stargemm_ncpu_workers() + stargemm_ncuda_workers(),
					it, t, o->peak, residual, NULL);
	}
	stargemm_finalize();
	free(a);
	free(b);
	free(c);
	free(c0);
	return failed != 0;
}
