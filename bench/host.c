/*
 * bench/host.c — --impl host: stargemm_dgemm() (src/host.c), the BLAS-like call on
 * one process's host arrays, on the same problem and seeds as --impl blas, so that
 * bench/compare.sh can put it beside one OpenBLAS dgemm call (and, on a GPU node,
 * beside --impl cublasxt on the same host arrays). Its tile size is its own
 * (STARGEMM_HOST_TILE, or the library's default), not --nb.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "stargemm.h"
#include "../tests/check.h"

int bench_run_host(const struct bench_opts *o)
{
	struct stargemm_config cfg;
	int ta = o->transA == 'T', tb = o->transB == 'T', failed = 0;
	int64_t am = ta ? o->k : o->m, an = ta ? o->m : o->k;
	int64_t bm = tb ? o->n : o->k, bn = tb ? o->k : o->n;
	double *a = bench_random_array(am, an, o->seed);
	double *b = bench_random_array(bm, bn, o->seed + 1);
	double *c = bench_random_array(o->m, o->n, o->seed + 2);
	double *c0 = o->check && c ? malloc((size_t)(o->m * o->n) * sizeof(*c0)) : NULL;

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
	for (int it = -o->warmup; it < o->niter && !failed; it++) {
		double t, residual = -1.0;

		if (c0)
			memcpy(c0, c, (size_t)(o->m * o->n) * sizeof(*c0));
		t = bench_now();
		failed = stargemm_dgemm(o->transA, o->transB, o->m, o->n, o->k, o->alpha, a, am,
					b, bm, o->beta, c, o->m);
		t = bench_now() - t;
		if (failed) {
			fprintf(stderr, "host: %s\n", stargemm_last_error());
			break;
		}
		if (c0)
			residual = sg_gemm_residual(o->transA, o->transB, o->m, o->n, o->k,
						    o->alpha, a, b, o->beta, c0, c);
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
