/*
 * bench/reference.c — the practical limit: one multithreaded BLAS dgemm call on full
 * arrays in one process, and the CSV output shared by all implementations.
 */
#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "config.h"
#include "stargemm.h"
#include <starpu.h>

#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
void openblas_set_num_threads(int nthreads);
#endif

int bench_parse_int(const char *prog, const char *name, const char *arg, int64_t min,
		    int64_t max, int64_t *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end != '\0' || v < min || v > max) {
		if (max == INT64_MAX)
			fprintf(stderr, "%s: %s needs an integer >= %lld, got '%s'\n", prog, name,
				(long long)min, arg);
		else
			fprintf(stderr, "%s: %s needs an integer in [%lld, %lld], got '%s'\n", prog,
				name, (long long)min, (long long)max, arg);
		return -1;
	}
	*out = v;
	return 0;
}

int bench_parse_small(const char *prog, const char *name, const char *arg, int min,
		      int *out)
{
	int64_t v;

	if (bench_parse_int(prog, name, arg, min, INT_MAX, &v))
		return -1;
	*out = (int)v;
	return 0;
}

int bench_parse_double(const char *prog, const char *name, const char *arg, double *out)
{
	char *end = NULL;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end != '\0' || !isfinite(*out)) {
		fprintf(stderr, "%s: %s needs a number, got '%s'\n", prog, name, arg);
		return -1;
	}
	return 0;
}

void bench_mean_loads(const struct stargemm_transfer_stats *st, double *loads,
		      double *peer_loads)
{
	uint64_t all = 0, peer = 0;
	int ngpus = stargemm_ncuda_workers();

	for (int g = 0; g < st->ndevices; g++) {
		all += st->device_loads[g];
		peer += st->device_peer_loads[g];
	}
	*loads = ngpus > 0 ? (double)all / ngpus : (double)st->disk_read_tiles;
	*peer_loads = ngpus > 0 ? (double)peer / ngpus : 0.0;
}

double bench_now(void)
{
#ifdef STARPU_SIMGRID
	/* Simulated time: what the simulated machine would take. */
	return 1e-6 * starpu_timing_now();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

double bench_gflop(const struct bench_opts *o)
{
	return 2.0 * (double)o->m * (double)o->n * (double)o->k * 1e-9;
}

void bench_set_blas_threads(int threads)
{
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
	openblas_set_num_threads(threads);
#else
	(void)threads;
#endif
}

void bench_print_header(void)
{
	printf("impl,m,n,k,nb,P,Q,transA,transB,alpha,beta,ranks,workers,iter,time_s,gflops,"
	       "peak_gflops,pct_peak,residual,check,b,c,d,lookahead,case,pred_loads,loads,"
	       "loads_ratio,peer_loads,pred_mpi_tiles,mpi_tiles,mpi_ratio,h2d_tiles,d2d_tiles,"
	       "d2h_tiles\n");
}

static void print_moves(const struct bench_moves *mv)
{
	if (!mv) {
		printf(",,,,,,,,,,,,,,\n");
		return;
	}
	if (mv->planned)
		printf("%lld,%lld,%lld,%d,%s,%.0f,", mv->b, mv->c, mv->d, mv->lookahead, mv->regime,
		       mv->pred_loads);
	else
		printf(",,,,,,");
	printf("%.0f,", mv->loads);
	if (mv->planned && mv->pred_loads > 0)
		printf("%.3f,", mv->loads / mv->pred_loads);
	else
		printf(",");
	printf("%.0f,", mv->peer_loads);
	if (mv->planned)
		printf("%.0f,", mv->pred_mpi);
	else
		printf(",");
	printf("%.0f,", mv->mpi);
	if (mv->planned && mv->pred_mpi > 0)
		printf("%.3f,", mv->mpi / mv->pred_mpi);
	else
		printf(",");
	printf("%.0f,%.0f,%.0f\n", mv->h2d, mv->d2d, mv->d2h);
}

void bench_print_row(const struct bench_opts *o, int nranks, int workers, int iter,
		     double seconds, double peak, double residual,
		     const struct bench_moves *moves)
{
	double rate = bench_gflop(o) / seconds;

	printf("%s,%lld,%lld,%lld,%lld,%d,%d,%c,%c,%g,%g,%d,%d,%d,%.4f,%.2f,%.2f,%.1f,",
	       o->impl, (long long)o->m, (long long)o->n, (long long)o->k, (long long)o->nb,
	       o->P, o->Q, o->transA, o->transB, o->alpha, o->beta, nranks, workers, iter,
	       seconds, rate, peak, peak > 0 ? 100.0 * rate / peak : 0.0);
	if (residual < 0)
		printf(",,");
	else
		printf("%.3e,%s,", residual, residual < 10.0 ? "PASS" : "FAIL");
	print_moves(moves);
	fflush(stdout);
}

/* Columns [first, last) of one array, filled by one thread of bench_fill_random(). */
struct fill_part {
	double *x;
	int64_t rows, first, last;
	uint64_t seed;
};

static void *fill_columns(void *arg)
{
	const struct fill_part *p = arg;

	for (int64_t j = p->first; j < p->last; j++)
		for (int64_t i = 0; i < p->rows; i++)
			p->x[i + j * p->rows] = stargemm_random_element(p->seed, i, j);
	return NULL;
}

/* One thread per core, each a range of columns: the GPU benchmarks fill matrices of
 * tens of GiB, 5 ns an element on one core. A thread that cannot start leaves its
 * columns to the caller. */
void bench_fill_random(double *x, int64_t rows, int64_t cols, uint64_t seed)
{
	enum { MAX_THREADS = 64 };
	struct fill_part part[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	int started[MAX_THREADS] = { 0 };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int nt = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;

	if ((int64_t)nt > cols)
		nt = cols > 0 ? (int)cols : 1;
	for (int t = 0; t < nt; t++) {
		part[t] = (struct fill_part){ x, rows, cols * t / nt, cols * (t + 1) / nt, seed };
		started[t] = t > 0 && pthread_create(&tid[t], NULL, fill_columns, &part[t]) == 0;
	}
	for (int t = 0; t < nt; t++)
		if (!started[t])
			fill_columns(&part[t]);
	for (int t = 1; t < nt; t++)
		if (started[t])
			pthread_join(tid[t], NULL);
}

double *bench_random_array(int64_t rows, int64_t cols, uint64_t seed)
{
	double *x = malloc((size_t)(rows * cols) * sizeof(double));

	if (x)
		bench_fill_random(x, rows, cols, seed);
	return x;
}

double bench_local_dgemm_rate(int64_t n, int threads)
{
	double *a = bench_random_array(n, n, 1), *b = bench_random_array(n, n, 2);
	double *c = bench_random_array(n, n, 3);
	double t = 0.0;

	if (threads <= 0)
		threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (a && b && c) {
		bench_set_blas_threads(threads);
		t = bench_now();
		cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n,
			    1.0, a, (int)n, b, (int)n, 0.0, c, (int)n);
		t = bench_now() - t;
	}
	free(a);
	free(b);
	free(c);
	return t > 0 ? 2.0 * (double)n * (double)n * (double)n * 1e-9 / t : 0.0;
}

int bench_run_blas(const struct bench_opts *o)
{
	int ta = o->transA == 'T', tb = o->transB == 'T';
	int64_t am = ta ? o->k : o->m, an = ta ? o->m : o->k;
	int64_t bm = tb ? o->n : o->k, bn = tb ? o->k : o->n;
	double *a = bench_random_array(am, an, o->seed);
	double *b = bench_random_array(bm, bn, o->seed + 1);
	double *c = bench_random_array(o->m, o->n, o->seed + 2);
	int threads = o->ncpus > 0 ? o->ncpus : 0;

	if (!a || !b || !c) {
		fprintf(stderr, "blas: cannot allocate the matrices\n");
		free(a);
		free(b);
		free(c);
		return 1;
	}
	if (threads == 0)
		threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	bench_set_blas_threads(threads);
	for (int it = -o->warmup; it < o->niter; it++) {
		double t = bench_now();

		cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans,
			    tb ? CblasTrans : CblasNoTrans, (int)o->m, (int)o->n, (int)o->k,
			    o->alpha, a, (int)am, b, (int)bm, o->beta, c, (int)o->m);
		t = bench_now() - t;
		if (it >= 0)
			bench_print_row(o, 1, threads, it, t, o->peak, -1.0, NULL);
	}
	free(a);
	free(b);
	free(c);
	return 0;
}
