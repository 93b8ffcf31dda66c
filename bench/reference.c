/*
 * bench/reference.c — the practical limit: one multithreaded BLAS GEMM call (of the
 * element type of --prec) on full arrays in one process, and the CSV output and
 * helpers shared by all implementations.
 */
#include <complex.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../tests/check.h"
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

double bench_peak_rss_mib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0.0;
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
	double fma = o->prec == STARGEMM_C || o->prec == STARGEMM_Z ? 8.0 : 2.0;

	return fma * (double)o->m * (double)o->n * (double)o->k * 1e-9;
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
	       "d2h_tiles,prec,ooc_tasks,unprefetched,late\n");
}

static void print_moves(const struct bench_moves *mv)
{
	if (!mv) {
		printf(",,,,,,,,,,,,,,");
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
	printf("%.0f,%.0f,%.0f", mv->h2d, mv->d2d, mv->d2h);
}

void bench_print_row(const struct bench_opts *o, int nranks, int workers, int iter,
		     double seconds, double peak, double residual,
		     const struct bench_moves *moves)
{
	double rate = bench_gflop(o) / seconds;

	printf("%s,%lld,%lld,%lld,%lld,%d,%d,%c,%c,%g,%g,%d,%d,%d,%.6f,%.2f,%.2f,%.1f,",
	       o->impl, (long long)o->m, (long long)o->n, (long long)o->k, (long long)o->nb,
	       o->P, o->Q, o->transA, o->transB, o->alpha, o->beta, nranks, workers, iter,
	       seconds, rate, peak, peak > 0 ? 100.0 * rate / peak : 0.0);
	if (residual < 0)
		printf(",,");
	else
		printf("%.3e,%s,", residual, residual < 10.0 ? "PASS" : "FAIL");
	print_moves(moves);
	printf(",%c,", (char)o->prec);
	if (moves && moves->planned)
		printf("%.0f,%.0f,%.0f\n", moves->ooc_tasks, moves->unprefetched, moves->late);
	else
		printf(",,\n");
	fflush(stdout);
}

void bench_print_rank(int iter, int rank, int devices, const struct bench_moves *mv)
{
	printf("rank,%d,%d,%d,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,"
	       "%.1f\n", iter, rank, devices, mv->loads, mv->loads_min, mv->loads_max,
	       mv->peer_loads, mv->pred_loads, mv->mpi, mv->pred_mpi, mv->h2d, mv->d2d, mv->d2h,
	       mv->ooc_tasks, mv->unprefetched, mv->late, mv->ram_peak_mib);
	fflush(stdout);
}

/* Columns [first, last) of one array, filled by one thread of bench_fill_random(). */
struct fill_part {
	stargemm_type t;
	void *x;
	int64_t rows, first, last;
	uint64_t seed;
};

static void *fill_columns(void *arg)
{
	const struct fill_part *p = arg;
	int cplx = p->t == STARGEMM_C || p->t == STARGEMM_Z;

	for (int64_t j = p->first; j < p->last; j++)
		for (int64_t i = 0; i < p->rows; i++)
			sg_put(p->t, p->x, i + j * p->rows,
			       stargemm_random_element(p->seed, i, j) +
				       (cplx ? I * stargemm_random_element(~p->seed, i, j) : 0.0));
	return NULL;
}

/* One thread per core, each a range of columns: the GPU benchmarks fill matrices of
 * tens of GiB, 5 ns an element on one core. A thread that cannot start leaves its
 * columns to the caller. */
void bench_fill_random(stargemm_type t, void *x, int64_t rows, int64_t cols, uint64_t seed)
{
	enum { MAX_THREADS = 64 };
	struct fill_part part[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	int started[MAX_THREADS] = { 0 };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int nt = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;

	if ((int64_t)nt > cols)
		nt = cols > 0 ? (int)cols : 1;
	for (int p = 0; p < nt; p++) {
		part[p] = (struct fill_part){ t, x, rows, cols * p / nt, cols * (p + 1) / nt, seed };
		started[p] = p > 0 && pthread_create(&tid[p], NULL, fill_columns, &part[p]) == 0;
	}
	for (int p = 0; p < nt; p++)
		if (!started[p])
			fill_columns(&part[p]);
	for (int p = 1; p < nt; p++)
		if (started[p])
			pthread_join(tid[p], NULL);
}

void *bench_random_array(stargemm_type t, int64_t rows, int64_t cols, uint64_t seed)
{
	void *x = malloc((size_t)(rows * cols) * stargemm_type_size(t));

	if (x)
		bench_fill_random(t, x, rows, cols, seed);
	return x;
}

const void *bench_scalar(stargemm_type t, double v, void *buf)
{
	sg_put(t, buf, 0, v);
	return buf;
}

double bench_local_gemm_rate(stargemm_type t, int64_t n, int threads)
{
	void *a = bench_random_array(t, n, n, 1), *b = bench_random_array(t, n, n, 2);
	void *c = bench_random_array(t, n, n, 3);
	double one[2], zero[2], time = 0.0, fma = t == STARGEMM_C || t == STARGEMM_Z ? 8.0 : 2.0;

	if (threads <= 0)
		threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (a && b && c) {
		bench_set_blas_threads(threads);
		time = bench_now();
		sg_blas_gemm(t, 'N', 'N', n, n, n, bench_scalar(t, 1.0, one), a, n, b, n,
			     bench_scalar(t, 0.0, zero), c, n);
		time = bench_now() - time;
	}
	free(a);
	free(b);
	free(c);
	return time > 0 ? fma * (double)n * (double)n * (double)n * 1e-9 / time : 0.0;
}

int bench_run_blas(const struct bench_opts *o)
{
	int ta = o->transA != 'N', tb = o->transB != 'N';
	int64_t am = ta ? o->k : o->m, an = ta ? o->m : o->k;
	int64_t bm = tb ? o->n : o->k, bn = tb ? o->k : o->n;
	void *a = bench_random_array(o->prec, am, an, o->seed);
	void *b = bench_random_array(o->prec, bm, bn, o->seed + 1);
	void *c = bench_random_array(o->prec, o->m, o->n, o->seed + 2);
	double alpha[2], beta[2];
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
	bench_scalar(o->prec, o->alpha, alpha);
	bench_scalar(o->prec, o->beta, beta);
	for (int it = -o->warmup; it < o->niter; it++) {
		double t = bench_now();

		sg_blas_gemm(o->prec, o->transA, o->transB, o->m, o->n, o->k, alpha, a, am, b, bm,
			     beta, c, o->m);
		t = bench_now() - t;
		if (it >= 0)
			bench_print_row(o, 1, threads, it, t, o->peak, -1.0, NULL);
	}
	free(a);
	free(b);
	free(c);
	return 0;
}
