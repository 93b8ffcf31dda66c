/*
 * bench/pdgemm.c — the dense PDGEMM benchmark.
 *
 * Runs C = alpha op(A) op(B) + beta C with stargemm (default), with one BLAS dgemm call
 * (--impl blas), with ScaLAPACK pdgemm (--impl scalapack) or, on a GPU node, with one
 * in-core cublasDgemm (--impl cublas) or cublasXtDgemm (--impl cublasxt), and prints one
 * CSV line per timed repetition on rank 0. Option names equal the CSV columns.
 * bench/compare.sh runs the CPU implementations one after the other on the same problem
 * and prints ratios; bench/compare_gpu.sh does the same with the GPU peers.
 *
 * Timing (stargemm): C is refilled before every repetition (untimed), all ranks meet at
 * a barrier, and the time runs until C is complete on its owners. With --check the
 * result of every repetition is gathered and compared with the reference BLAS on rank 0
 * (sg_typed_residual(), in the precision of --prec).
 *
 * stargemm shows its progress line on rank 0's stderr when that is a terminal (or
 * STARGEMM_PROGRESS=force), unless --quiet; it is no CSV column, as it changes no
 * result (like --csv and --check's output).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "../tests/check.h"
#include "bench.h"
#include "config.h"
#include "stargemm.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: stargemm_pdgemm [options]   (run under mpiexec for several ranks)\n"
		"  --impl NAME      stargemm (default), blas (one dgemm call, 1 process),\n"
		"                   host (one stargemm_dgemm call on host arrays, 1 process;\n"
		"                   its tile: STARGEMM_HOST_TILE or the library's default),\n"
		"                   scalapack (pdgemm on the P x Q grid, when built), cublas\n"
		"                   (one in-core cublasDgemm, matrices already on the GPU) or\n"
		"                   cublasxt (cublasXtDgemm on host-resident matrices; --nb is\n"
		"                   its block size); the last two need a GPU and a CUDA build\n"
		"  --m --n --k N    matrix sizes: C is m x n, op(A) m x k (default 4096 each)\n"
		"  --nb N           tile size (stargemm; default the tile stargemm_tile_recommend()\n"
		"                   gives) or block size (ScaLAPACK, cuBLASXt; default 512)\n"
		"  --P --Q N        process grid (default: P = ranks, Q = 1)\n"
		"  --transA --transB N|T|C   op(A), op(B) (default N; C: conjugate transpose)\n"
		"  --alpha --beta X real scalars (default 1 and 1)\n"
		"  --prec s|d|c|z   element type: single, double (default), single complex,\n"
		"                   double complex (stargemm, blas, host, scalapack); GFLOP/s\n"
		"                   count 8 flops per complex multiply-add\n"
		"  --niter N        timed repetitions, one CSV line each (default 3)\n"
		"  --warmup N       untimed repetitions first (default 1)\n"
		"  --check          compare every result with the reference BLAS (residual in\n"
		"                   the type's precision, PASS/FAIL)\n"
		"  --csv            print the CSV header line first\n"
		"  --trace DIR      write FxT traces (stargemm) and merge them into DIR/paje.trace\n"
		"  --peak GFLOPS    stated peak for the pct_peak column (default: measured with\n"
		"                   one local GEMM call of the type per rank,\n"
		"                   n = min(max(m,n,k), 4096))\n"
		"  --ncpus N        CPU workers per rank (stargemm) / BLAS threads (blas)\n"
		"  --ngpus N        GPUs per rank (stargemm: CUDA workers) or for cublasxt\n"
		"                   (default: StarPU's / all visible)\n"
		"  --sched NAME     StarPU scheduling policy (stargemm)\n"
		"  --seed N         random seed (default 1)\n"
		"  --quiet          no progress line on rank 0's stderr (stargemm; shown only\n"
		"                   when stderr is a terminal, or STARGEMM_PROGRESS=force)\n"
		"Out-of-core (stargemm):\n"
		"  --ooc            use the chunked out-of-core algorithm (stargemm_pdgemm_ooc)\n"
		"  --b --c N        local C block in tiles (default: planner)\n"
		"  --d N            chunk depth in tiles (default: planner)\n"
		"  --lookahead N    chunks prefetched ahead (default: 1, or 2 when C is blocked)\n"
		"  --device-mem MIB memory per device given to the planner (default: StarPU's)\n"
		"  --ram-limit MIB  RAM budget for tiles (STARPU_LIMIT_CPU_MEM)\n"
		"  --disk DIR       StarPU disk node in DIR (must exist): RAM overflow goes there\n"
		"  --disk-mib N     size of the disk node (default 4096)\n"
		"  --breakdown      every rank prints where its CPU workers' time went over the\n"
		"                   timed products (StarPU's counters): in tasks, asleep, in\n"
		"                   the runtime; the kernels' rate inside tasks against one\n"
		"                   BLAS call of the tile's side (bench/breakdown.c)\n"
		"  --per-rank       every rank also prints its own line for each timed\n"
		"                   repetition: rank,iter,rank,devices,loads (mean per device),\n"
		"                   loads_min,loads_max,peer_loads,pred_loads,mpi_tiles,\n"
		"                   pred_mpi_tiles,h2d_tiles,d2d_tiles,d2h_tiles,ooc_tasks,\n"
		"                   unprefetched,late,ram_peak_mib\n"
		"CSV columns: the options above, ranks, workers (per rank: StarPU workers,\n"
		"BLAS threads or 1 for ScaLAPACK), iter, time_s, gflops, peak_gflops, pct_peak,\n"
		"residual and check (PASS/FAIL, empty without --check); then, for stargemm,\n"
		"b, c, d, lookahead and case of the out-of-core plan, pred_loads (tiles the\n"
		"model predicts into each device: GPU, or RAM from disk without GPU; C loads\n"
		"excluded when beta = 0), loads (measured, mean per device), loads_ratio,\n"
		"peer_loads (GPU<-GPU), pred_mpi_tiles, mpi_tiles (received per rank, bytes /\n"
		"full tile), mpi_ratio, and the tiles this rank moved host->GPU, GPU->GPU and\n"
		"GPU->host (all GPUs), prec, and the out-of-core tasks rank 0 ran, and of them\n"
		"those taken with an input not prefetched (ooc_tasks, unprefetched), and the\n"
		"GPU tasks that became ready with an input loaded to no GPU nor on its way\n"
		"(late: no load was asked for ahead of time). Plan,\n"
		"prediction and task columns are empty without --ooc.\n"
		"  --help           this text\n");
}

/* The numeric options, each value checked: 0, or -1 after a message naming the
 * option; 1 if @p c is not a numeric option. */
static int parse_numeric(int c, struct bench_opts *o)
{
	static const char prog[] = "stargemm_pdgemm";
	int64_t seed;

	switch (c) {
	case 'm': return bench_parse_int(prog, "--m", optarg, 1, INT64_MAX, &o->m);
	case 'n': return bench_parse_int(prog, "--n", optarg, 1, INT64_MAX, &o->n);
	case 'k': return bench_parse_int(prog, "--k", optarg, 1, INT64_MAX, &o->k);
	case 'b': return bench_parse_int(prog, "--nb", optarg, 1, INT64_MAX, &o->nb);
	case 'P': return bench_parse_small(prog, "--P", optarg, 1, &o->P);
	case 'Q': return bench_parse_small(prog, "--Q", optarg, 1, &o->Q);
	case 'a': return bench_parse_double(prog, "--alpha", optarg, &o->alpha);
	case 'e': return bench_parse_double(prog, "--beta", optarg, &o->beta);
	case 't': return bench_parse_small(prog, "--niter", optarg, 1, &o->niter);
	case 'w': return bench_parse_small(prog, "--warmup", optarg, 0, &o->warmup);
	case 'p': return bench_parse_double(prog, "--peak", optarg, &o->peak);
	case 'u': return bench_parse_small(prog, "--ncpus", optarg, 0, &o->ncpus);
	case 'S':
		if (bench_parse_int(prog, "--seed", optarg, 0, INT64_MAX, &seed))
			return -1;
		o->seed = (uint64_t)seed;
		return 0;
	case 1001: return bench_parse_int(prog, "--b", optarg, 0, INT64_MAX, &o->b);
	case 1002: return bench_parse_int(prog, "--c", optarg, 0, INT64_MAX, &o->c);
	case 1003: return bench_parse_int(prog, "--d", optarg, 0, INT64_MAX, &o->d);
	case 1004: return bench_parse_small(prog, "--lookahead", optarg, 0, &o->lookahead);
	case 1005: return bench_parse_int(prog, "--device-mem", optarg, 0, INT64_MAX,
					  &o->device_mib);
	case 1006: return bench_parse_int(prog, "--ram-limit", optarg, 0, INT64_MAX,
					  &o->ram_limit_mib);
	case 1008: return bench_parse_int(prog, "--disk-mib", optarg, 0, INT64_MAX,
					  &o->disk_mib);
	case 1009: return bench_parse_small(prog, "--ngpus", optarg, 0, &o->ngpus);
	default: return 1;
	}
}

static int parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "impl", 1, 0, 'i' }, { "m", 1, 0, 'm' }, { "n", 1, 0, 'n' }, { "k", 1, 0, 'k' },
		{ "nb", 1, 0, 'b' }, { "P", 1, 0, 'P' }, { "Q", 1, 0, 'Q' },
		{ "transA", 1, 0, 'A' }, { "transB", 1, 0, 'B' }, { "alpha", 1, 0, 'a' },
		{ "beta", 1, 0, 'e' }, { "niter", 1, 0, 't' }, { "warmup", 1, 0, 'w' },
		{ "check", 0, 0, 'c' }, { "csv", 0, 0, 'v' }, { "trace", 1, 0, 'r' },
		{ "peak", 1, 0, 'p' }, { "ncpus", 1, 0, 'u' }, { "sched", 1, 0, 's' },
		{ "seed", 1, 0, 'S' }, { "help", 0, 0, 'h' }, { "ooc", 0, 0, 'O' },
		{ "b", 1, 0, 1001 }, { "c", 1, 0, 1002 }, { "d", 1, 0, 1003 },
		{ "lookahead", 1, 0, 1004 }, { "device-mem", 1, 0, 1005 },
		{ "ram-limit", 1, 0, 1006 }, { "disk", 1, 0, 1007 }, { "disk-mib", 1, 0, 1008 },
		{ "ngpus", 1, 0, 1009 }, { "quiet", 0, 0, 'q' }, { "prec", 1, 0, 1010 },
		{ "per-rank", 0, 0, 1011 }, { "breakdown", 0, 0, 1012 },
		{ 0, 0, 0, 0 }
	};
	int c;

	*o = (struct bench_opts){ .impl = "stargemm", .m = 4096, .n = 4096, .k = 4096,
				  .nb = 0, .P = -1, .Q = -1, .transA = 'N', .transB = 'N',
				  .alpha = 1.0, .beta = 1.0, .niter = 3, .warmup = 1,
				  .ncpus = -1, .ngpus = -1, .seed = 1, .disk_mib = 4096,
				  .prec = STARGEMM_D };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int num = parse_numeric(c, o);

		if (num < 0)
			return -1;
		if (num == 0)
			continue;
		switch (c) {
		case 'i': o->impl = optarg; break;
		case 'A': o->transA = optarg[0]; break;
		case 'B': o->transB = optarg[0]; break;
		case 'c': o->check = 1; break;
		case 'v': o->csv_header = 1; break;
		case 'r': o->trace_dir = optarg; break;
		case 's': o->sched = optarg; break;
		case 'O': o->ooc = 1; break;
		case 'q': o->quiet = 1; break;
		case 1007: o->disk_dir = optarg; break;
		case 1011: o->per_rank = 1; break;
		case 1012: o->breakdown = 1; break;
		case 1010:
			if (strlen(optarg) != 1 || !stargemm_type_size((stargemm_type)optarg[0])) {
				fprintf(stderr, "stargemm_pdgemm: --prec needs s, d, c or z, got "
					"'%s'\n", optarg);
				return -1;
			}
			o->prec = (stargemm_type)optarg[0];
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "stargemm_pdgemm: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->nb == 0 && strcmp(o->impl, "stargemm") != 0)
		o->nb = 512;   /* stargemm's: its recommendation, once it runs */
	if (o->transA == 't' || o->transA == 'n' || o->transA == 'c')
		o->transA -= 32;
	if (o->transB == 't' || o->transB == 'n' || o->transB == 'c')
		o->transB -= 32;
	return 0;
}

/* Sum over ranks of each rank's local dgemm rate with @p threads threads, all at once. */
static double measure_peak(const struct bench_opts *o, int threads)
{
	int64_t n = o->m > o->n ? o->m : o->n;
	double local, total = 0.0;

	n = o->k > n ? o->k : n;
	n = n < 4096 ? n : 4096;
	MPI_Barrier(MPI_COMM_WORLD);
	local = bench_local_gemm_rate(o->prec, n, threads);
	MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return total;
}

static int create_operands(const struct bench_opts *o, struct stargemm_matrix **A,
			   struct stargemm_matrix **B, struct stargemm_matrix **C)
{
	int ta = o->transA != 'N', tb = o->transB != 'N';
	int ret;

	ret = stargemm_matrix_create_type(A, o->prec, ta ? o->k : o->m, ta ? o->m : o->k, o->nb,
					  o->nb, o->P, o->Q);
	ret = ret ? ret : stargemm_matrix_create_type(B, o->prec, tb ? o->n : o->k,
						      tb ? o->k : o->n, o->nb, o->nb, o->P, o->Q);
	ret = ret ? ret : stargemm_matrix_create_type(C, o->prec, o->m, o->n, o->nb, o->nb, o->P,
						      o->Q);
	ret = ret ? ret : stargemm_matrix_fill_random(*A, o->seed);
	ret = ret ? ret : stargemm_matrix_fill_random(*B, o->seed + 1);
	return ret;
}

static void fill_zero(void *t, int64_t ld, int64_t rows, int64_t cols, int64_t r0,
		      int64_t c0, void *arg)
{
	size_t es = *(const size_t *)arg;

	for (int64_t j = 0; j < cols; j++)
		memset((char *)t + (size_t)(j * ld) * es, 0, (size_t)rows * es);
}

/* Bytes of a full tile. */
static double tile_bytes(const struct bench_opts *o)
{
	return (double)(o->nb * o->nb) * (double)stargemm_type_size(o->prec);
}

/* With a disk node, push the operands out of RAM before timing, so that the run starts
 * with its data in the slow memory (as the paper's runs start in host memory): write a
 * scratch matrix as large as the RAM budget, then drop it. */
static int flush_ram(const struct bench_opts *o)
{
	struct stargemm_matrix *S = NULL;
	int64_t tiles = (int64_t)((double)o->ram_limit_mib * 1024 * 1024 / tile_bytes(o)) + 1;
	size_t es = stargemm_type_size(o->prec);
	int ret;

	if (!o->disk_dir || o->ram_limit_mib <= 0)
		return 0;
	ret = stargemm_matrix_create_type(&S, o->prec, o->nb * o->P,
					  o->nb * ((tiles + o->P - 1) / o->P) * o->Q, o->nb, o->nb,
					  o->P, o->Q);
	ret = ret ? ret : stargemm_matrix_fill_elements(S, fill_zero, &es);
	stargemm_matrix_destroy(S);
	return ret;
}

/* The GEMM itself, plain or out-of-core; fills the plan part of @p mv. */
static int gemm(const struct bench_opts *o, struct stargemm_matrix *A,
		struct stargemm_matrix *B, struct stargemm_matrix *C, struct bench_moves *mv)
{
	struct stargemm_ooc_options opt;
	struct stargemm_plan plan;
	double alpha[2], beta[2];
	int ret;

	bench_scalar(o->prec, o->alpha, alpha);
	bench_scalar(o->prec, o->beta, beta);
	if (!o->ooc)
		return stargemm_gemm(o->transA, o->transB, alpha, A, B, beta, C);
	stargemm_ooc_options_init(&opt);
	opt.b = o->b;
	opt.c = o->c;
	opt.d = o->d;
	opt.lookahead = o->lookahead;
	opt.device_bytes = o->device_mib * 1024 * 1024;
	ret = stargemm_gemm_ooc(o->transA, o->transB, alpha, A, B, beta, C, &opt, &plan);
	if (ret)
		return ret;
	mv->planned = 1;
	mv->b = plan.b;
	mv->c = plan.c;
	mv->d = plan.d;
	mv->lookahead = plan.lookahead;
	mv->regime = stargemm_plan_case_name(plan.regime);
	/* beta = 0: C is written without being read, so the model's C loads vanish. */
	mv->pred_loads = plan.loads_a + plan.loads_b + (o->beta != 0.0 ? plan.loads_c : 0.0);
	mv->pred_mpi = plan.mpi_tiles;
	return 0;
}

/* Measured moves: per device tile loads (GPUs: mean over devices; no GPU: disk -> RAM)
 * and tiles received over MPI (bytes / bytes of a full tile). */
static int measure_moves(const struct bench_opts *o, struct bench_moves *mv)
{
	struct stargemm_transfer_stats st;
	int ret = stargemm_transfers_get(&st);

	if (ret)
		return ret;
	bench_mean_loads(&st, &mv->loads, &mv->peer_loads);
	mv->mpi = (double)st.mpi_recv_bytes / tile_bytes(o);
	mv->h2d = (double)st.h2d_tiles;
	mv->d2d = (double)st.d2d_tiles;
	mv->d2h = (double)st.d2h_tiles;
	mv->ooc_tasks = (double)st.ooc_tasks;
	mv->unprefetched = (double)st.unprefetched_tasks;
	mv->late = (double)st.late_tasks;
	mv->ram_peak_mib = (double)st.ram_peak_bytes / (1024.0 * 1024.0);
	/* The GPUs' loads; no GPU: the one "device" is the RAM (loads from disk). */
	mv->loads_min = mv->loads_max = mv->loads;
	for (int g = 0; g < st.ndevices && stargemm_ncuda_workers() > 0; g++) {
		double l = (double)st.device_loads[g];

		mv->loads_min = g == 0 || l < mv->loads_min ? l : mv->loads_min;
		mv->loads_max = g == 0 || l > mv->loads_max ? l : mv->loads_max;
	}
	return 0;
}

/* The share of C's elements this rank owns: its share of the product's flops. */
static double local_share(const struct stargemm_matrix *C)
{
	double mine = 0.0;

	for (int64_t j = 0; j < stargemm_matrix_nt(C); j++)
		for (int64_t i = 0; i < stargemm_matrix_mt(C); i++)
			if (stargemm_matrix_owner(C, i, j) == stargemm_rank())
				mine += (double)stargemm_matrix_tile_rows(C, i) *
					(double)stargemm_matrix_tile_cols(C, j);
	return mine / ((double)stargemm_matrix_m(C) * (double)stargemm_matrix_n(C));
}

/* The breakdown of the timed products (--breakdown): every rank's line, in rank order,
 * beside one BLAS call of the tile's side on one thread (StarPU paused meanwhile). */
static void print_breakdown(const struct bench_opts *o)
{
	struct bench_breakdown b;
	double call;

	bench_breakdown_take(&b);
	starpu_pause();
	bench_set_blas_threads(1);
	call = bench_local_gemm_rate(o->prec, o->nb, 1);
	call = fmax(call, bench_local_gemm_rate(o->prec, o->nb, 1));
	starpu_resume();
	for (int r = 0; r < stargemm_nranks(); r++) {
		starpu_mpi_barrier(MPI_COMM_WORLD);
		if (r == stargemm_rank()) {
			bench_breakdown_print(&b, r, stargemm_ncpu_workers(), o->nb, call);
			fflush(stdout);
		}
	}
}

/* One repetition: refill C, time the GEMM, count what moved, check it if asked. */
static int repetition(const struct bench_opts *o, struct stargemm_matrix *A,
		      struct stargemm_matrix *B, struct stargemm_matrix *C, const void *a,
		      const void *b, const void *c0, double *seconds, double *residual,
		      struct bench_moves *mv)
{
	double t;
	int ret;

	*residual = -1.0;
	if ((ret = stargemm_matrix_fill_random(C, o->seed + 2)) || (ret = flush_ram(o)) ||
	    (ret = stargemm_transfers_reset()))
		return ret;
	starpu_mpi_barrier(MPI_COMM_WORLD);
	if (o->breakdown)
		bench_breakdown_begin();
	t = bench_now();
	ret = gemm(o, A, B, C, mv);
	*seconds = bench_now() - t;
	if (o->breakdown)
		bench_breakdown_end(bench_gflop(o) * local_share(C));
	if (ret || (ret = measure_moves(o, mv)) || !o->check)
		return ret;
	void *c = sg_gather_typed(C);
	double alpha[2], beta[2];

	if (stargemm_rank() == 0)
		*residual = c ? sg_typed_residual(o->prec, o->transA, o->transB, o->m, o->n, o->k,
						  bench_scalar(o->prec, o->alpha, alpha), a, b,
						  bench_scalar(o->prec, o->beta, beta), c0, c)
			      : 1e300;
	free(c);
	return 0;
}

static int run_stargemm(struct bench_opts *o)
{
	struct stargemm_config cfg;
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	void *a = NULL, *b = NULL, *c0 = NULL;
	int ret, failed = 0;

	stargemm_config_init(&cfg);
	cfg.ncpus = o->ncpus;
	cfg.ncuda = o->ngpus;
	cfg.sched_policy = o->sched;
	cfg.ram_limit_mib = o->ram_limit_mib;
	cfg.disk_dir = o->disk_dir;
	cfg.disk_mib = o->disk_mib;
	if (stargemm_set_progress(!o->quiet)) {
		fprintf(stderr, "stargemm_pdgemm: %s\n", stargemm_last_error());
		return 1;
	}
	if ((ret = stargemm_init(&cfg, NULL, NULL))) {
		fprintf(stderr, "stargemm_pdgemm: %s\n", stargemm_last_error());
		return 1;
	}
	if (o->P < 0 && o->Q < 0) {
		o->P = stargemm_nranks();
		o->Q = 1;
	}
	if (o->nb == 0 &&
	    (ret = stargemm_tile_recommend(o->prec, o->m, o->n, o->k, &o->nb))) {
		fprintf(stderr, "stargemm_pdgemm: %s\n", stargemm_last_error());
		stargemm_finalize();
		return 1;
	}
	if (o->csv_header_after_init && stargemm_rank() == 0)
		bench_print_header();
	if (o->peak <= 0) {
		starpu_pause();
		o->peak = measure_peak(o, stargemm_ncpu_workers());
		bench_set_blas_threads(1);
		starpu_resume();
	}
	ret = create_operands(o, &A, &B, &C);
	if (!ret && o->check) {
		a = sg_gather_typed(A);
		b = sg_gather_typed(B);
		ret = stargemm_matrix_fill_random(C, o->seed + 2);
		c0 = ret ? NULL : sg_gather_typed(C);
	}
	for (int it = -o->warmup; !ret && it < o->niter; it++) {
		double seconds = 0.0, residual = -1.0;
		struct bench_moves mv = { 0 };

		ret = repetition(o, A, B, C, a, b, c0, &seconds, &residual, &mv);
		if (it < 0 && o->breakdown) {   /* the warm-up's counts go */
			struct bench_breakdown warm;

			bench_breakdown_take(&warm);
		}
		if (!ret && it >= 0 && stargemm_rank() == 0)
			bench_print_row(o, stargemm_nranks(),
					stargemm_ncpu_workers() + stargemm_ncuda_workers(), it,
					seconds, o->peak, residual, &mv);
		if (!ret && it >= 0 && o->per_rank)
			bench_print_rank(it, stargemm_rank(), stargemm_ncuda_workers(), &mv);
		failed |= residual >= SG_RESIDUAL_BOUND;
	}
	if (!ret && o->breakdown)
		print_breakdown(o);
	/* Every rank's error: the same code on every rank, each rank's message. */
	if (ret)
		fprintf(stderr, "stargemm_pdgemm: rank %d: %s\n", stargemm_rank(),
			stargemm_last_error());
	free(a);
	free(b);
	free(c0);
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	stargemm_finalize();
	return ret || failed;
}

/* --impl cublas | cublasxt: one process, rank 0; 77 when not built with the peers. */
static int run_gpu_peer(const struct bench_opts *o)
{
#ifdef HAVE_GPU_PEERS
	if (o->prec != STARGEMM_D) {
		fprintf(stderr, "stargemm_pdgemm: --impl %s runs double precision only "
			"(--prec d)\n", o->impl);
		return 2;
	}
	return !strcmp(o->impl, "cublas") ? bench_run_cublas(o) : bench_run_cublasxt(o);
#else
	fprintf(stderr, "stargemm_pdgemm: --impl %s needs a CUDA build of StarPU and cuBLASXt "
		"(this build has none); skipped\n", o->impl);
	return 77;
#endif
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int provided, rank, nranks, ret;

	if (parse(argc, argv, &o))
		return 2;
#ifdef STARPU_SIMGRID
	/* Simulation: only stargemm runs; StarPU-MPI owns the (simulated) MPI rank. */
	(void)provided;
	(void)nranks;
	if (strcmp(o.impl, "stargemm") != 0) {
		fprintf(stderr, "stargemm_pdgemm: only --impl stargemm is simulated\n");
		return 2;
	}
	rank = 0;
	o.csv_header_after_init = o.csv_header;
	return run_stargemm(&o);
#endif
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (rank == 0 && o.csv_header)
		bench_print_header();
	bench_trace_setup(o.trace_dir);
	if (!strcmp(o.impl, "stargemm")) {
		ret = run_stargemm(&o);
	} else if (!strcmp(o.impl, "blas") || !strcmp(o.impl, "host")) {
		/* One process's arrays: one dgemm call, or one stargemm_dgemm call. */
		if (o.peak <= 0)
			o.peak = bench_local_gemm_rate(o.prec, o.m < 4096 ? o.m : 4096,
						       o.ncpus > 0 ? o.ncpus : 0);
		o.P = o.Q = 1;
		if (!strcmp(o.impl, "blas"))
			ret = rank == 0 ? bench_run_blas(&o) : 0;
		else
			ret = nranks == 1 ? bench_run_host(&o) : 2;
		if (nranks != 1 && rank == 0)
			fprintf(stderr, "stargemm_pdgemm: --impl host runs on 1 process\n");
	} else if (!strcmp(o.impl, "scalapack")) {
#ifdef HAVE_SCALAPACK
		ret = bench_run_scalapack(&o);
#else
		if (rank == 0)
			fprintf(stderr, "stargemm_pdgemm: built without ScaLAPACK "
				"(install libscalapack-mpich-dev and reconfigure)\n");
		ret = 77;
#endif
	} else if (!strcmp(o.impl, "cublas") || !strcmp(o.impl, "cublasxt")) {
		o.P = o.Q = 1;
		ret = rank == 0 ? run_gpu_peer(&o) : 0;
	} else {
		if (rank == 0)
			fprintf(stderr, "stargemm_pdgemm: unknown --impl '%s' (stargemm, blas, "
				"host, scalapack, cublas, cublasxt)\n", o.impl);
		ret = 2;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (o.trace_dir && !strcmp(o.impl, "stargemm") && rank == 0 && ret == 0)
		ret = bench_trace_merge(o.trace_dir, nranks);
	MPI_Finalize();
	return ret;
}
