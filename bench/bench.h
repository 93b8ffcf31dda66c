/*
 * bench/bench.h — options and helpers shared by the implementations the dense PDGEMM
 * benchmark runs side by side (stargemm, one BLAS dgemm call, ScaLAPACK pdgemm).
 */
#ifndef STARGEMM_BENCH_H
#define STARGEMM_BENCH_H

#include <stdint.h>

struct bench_opts {
	const char *impl;      /* stargemm | blas | scalapack */
	int64_t m, n, k, nb;
	int P, Q;
	char transA, transB;
	double alpha, beta;
	int niter, warmup, check, csv_header;
	const char *trace_dir; /* NULL: no trace */
	double peak;           /* GFLOP/s; <= 0: measure */
	int ncpus;             /* CPU workers (stargemm) or BLAS threads (blas); -1 = all */
	const char *sched;     /* StarPU scheduling policy; NULL = default */
	uint64_t seed;
};

/* One CSV result line (rank 0 only). residual < 0 means "not checked". */
void bench_print_row(const struct bench_opts *o, int nranks, int workers, int iter,
		     double seconds, double peak, double residual);
void bench_print_header(void);

/* Wall-clock seconds. */
double bench_now(void);

/* GFLOP count of one GEMM of the benchmark's size. */
double bench_gflop(const struct bench_opts *o);

/* Rate (GFLOP/s) of one local dgemm call of size n^3 with @p threads BLAS threads. */
double bench_local_dgemm_rate(int64_t n, int threads);

/* Set the number of BLAS threads (OpenBLAS only; no-op otherwise). */
void bench_set_blas_threads(int threads);

/* Implementations; each prints its CSV rows and returns 0, or 1 on failure. */
int bench_run_blas(const struct bench_opts *o);
int bench_run_scalapack(const struct bench_opts *o);

#endif
