/*
 * bench/bench.h — options and helpers shared by the implementations the dense PDGEMM
 * benchmark runs side by side (stargemm, one BLAS dgemm call, ScaLAPACK pdgemm).
 */
#ifndef STARGEMM_BENCH_H
#define STARGEMM_BENCH_H

#include <stdint.h>

#include "stargemm.h"

struct bench_opts {
	const char *impl;      /* stargemm | blas | scalapack | cublas | cublasxt */
	int64_t m, n, k, nb;
	int P, Q;
	char transA, transB;
	double alpha, beta;    /* real scalars, in the element type */
	stargemm_type prec;    /* element type: s, d, c, z (default d) */
	int niter, warmup, check, csv_header;
	int quiet;             /* no progress line (stargemm_set_progress()) */
	int csv_header_after_init; /* simulation: header once stargemm knows its rank */
	const char *trace_dir; /* NULL: no trace */
	double peak;           /* GFLOP/s; <= 0: measure */
	int ncpus;             /* CPU workers (stargemm) or BLAS threads (blas); -1 = all */
	int ngpus;             /* GPUs (stargemm, cublasxt); -1 = StarPU's / all visible */
	const char *sched;     /* StarPU scheduling policy; NULL = default */
	uint64_t seed;
	/* Out-of-core (stargemm only). */
	int ooc;               /* use stargemm_pdgemm_ooc() */
	int64_t b, c, d;       /* plan overrides, 0 = planner */
	int lookahead;
	int64_t device_mib;    /* memory per device for the planner, 0 = StarPU's */
	int64_t ram_limit_mib; /* RAM budget (STARPU_LIMIT_CPU_MEM), 0 = none */
	const char *disk_dir;  /* StarPU disk node directory (slow memory), NULL = none */
	int64_t disk_mib;
	int per_rank;          /* every rank prints its own "rank," line (bench_print_rank) */
	int breakdown;         /* every rank prints where its workers' time went */
};

/* What one repetition moved, beside the model's prediction (CSV columns). */
struct bench_moves {
	int planned;           /* a plan exists (out-of-core run) */
	long long b, c, d;
	int lookahead;
	const char *regime;
	double pred_loads, loads, peer_loads;  /* tiles per device */
	double pred_mpi, mpi;                  /* tiles received per rank */
	double h2d, d2d, d2h;                  /* tiles moved on this rank, all devices */
	double ooc_tasks, unprefetched, late;  /* stargemm_transfer_stats' on this rank */
	double loads_min, loads_max;           /* tiles loaded into this rank's devices */
	double ram_peak_mib;                   /* host memory StarPU allocated, peak */
};

/* One CSV result line (rank 0 only). residual < 0 means "not checked". */
void bench_print_row(const struct bench_opts *o, int nranks, int workers, int iter,
		     double seconds, double peak, double residual,
		     const struct bench_moves *moves);
void bench_print_header(void);
/* This rank's own line (every rank, with --per-rank): "rank,ITER,RANK,DEVICES,LOADS,
 * LOADS_MIN,LOADS_MAX,PEER_LOADS,PRED_LOADS,MPI_TILES,PRED_MPI_TILES,H2D,D2D,D2H,
 * OOC_TASKS,UNPREFETCHED,LATE,RAM_PEAK_MIB" (loads per device of this rank). */
void bench_print_rank(int iter, int rank, int devices, const struct bench_moves *mv);

/* Command-line values, checked: an integer in [min, max] (max INT64_MAX: no upper
 * bound), or a finite number. On error: "PROG: NAME needs an integer >= MIN, got 'ARG'"
 * (or "in [MIN, MAX]", "a number") on stderr, and -1. */
int bench_parse_int(const char *prog, const char *name, const char *arg, int64_t min,
		    int64_t max, int64_t *out);
int bench_parse_double(const char *prog, const char *name, const char *arg, double *out);
/* The same for an int option: an integer in [min, INT_MAX]. */
int bench_parse_small(const char *prog, const char *name, const char *arg, int min,
		      int *out);

/* Wall-clock seconds. */
double bench_now(void);

/* This process's peak resident memory since it started, in MiB (getrusage()). */
double bench_peak_rss_mib(void);

/* Tiles loaded into each device, mean over the devices (GPUs: host and peer copies,
 * and in *peer_loads those from another GPU; no GPU: disk -> RAM, *peer_loads 0). */
void bench_mean_loads(const struct stargemm_transfer_stats *st, double *loads,
		      double *peer_loads);

/* GFLOP count of one GEMM of the benchmark's size and type (8 flops per complex
 * multiply-add). */
double bench_gflop(const struct bench_opts *o);

/* Rate (GFLOP/s) of one local GEMM call of type @p t and size n^3 with @p threads BLAS
 * threads. */
double bench_local_gemm_rate(stargemm_type t, int64_t n, int threads);

/* A newly allocated rows x cols column-major array of type @p t holding the values
 * stargemm_matrix_fill_random() gives the same matrix (real part
 * stargemm_random_element(seed, i, j), imaginary part the same of ~seed); NULL if out
 * of memory. */
void *bench_random_array(stargemm_type t, int64_t rows, int64_t cols, uint64_t seed);
void bench_fill_random(stargemm_type t, void *x, int64_t rows, int64_t cols,
		       uint64_t seed);

/* The real scalar @p v in type @p t, at @p buf (room for 16 bytes). */
const void *bench_scalar(stargemm_type t, double v, void *buf);

/* Tracing (bench/trace.c): before StarPU starts, send FxT files to @p dir (NULL: no
 * trace); after it stopped, merge the @p nranks files into dir/paje.trace (rank 0). */
int bench_trace_setup(const char *dir);
int bench_trace_merge(const char *dir, int nranks);

/* Where the CPU workers' time went (bench/breakdown.c), summed over the timed
 * products: seconds of worker time in all, in tasks, asleep; tasks run; GFLOP done. */
struct bench_breakdown {
	double total_s, exec_s, sleep_s, gflop;
	long long tasks;
};
/* Around each timed product: reset StarPU's worker counters (profiling on), then add
 * them (and the product's @p gflop) to the sum. */
void bench_breakdown_begin(void);
void bench_breakdown_end(double gflop);
/* The sum so far into @p b, and a new sum. */
void bench_breakdown_take(struct bench_breakdown *b);
/* The "# breakdown" line of rank @p rank: shares of the workers' time, the kernels'
 * rate inside tasks against @p call_rate (one BLAS call of side @p nb, one thread),
 * the runtime's time per task. */
void bench_breakdown_print(const struct bench_breakdown *b, int rank, int workers,
			   int64_t nb, double call_rate);

/* Set the number of BLAS threads (OpenBLAS only; no-op otherwise). */
void bench_set_blas_threads(int threads);

/* Implementations; each prints its CSV rows and returns 0, or 1 on failure. */
int bench_run_blas(const struct bench_opts *o);
/* stargemm_dgemm() on host arrays, one process (bench/host.c). */
int bench_run_host(const struct bench_opts *o);
int bench_run_scalapack(const struct bench_opts *o);
/* GPU peers (bench/cublas.c, built with CUDA): one in-core cublasDgemm on device-resident
 * matrices, and cublasXtDgemm on host-resident ones. Return 77 when no GPU is visible. */
int bench_run_cublas(const struct bench_opts *o);
int bench_run_cublasxt(const struct bench_opts *o);

#endif
