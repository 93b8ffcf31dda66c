/*
 * bench/bsgemm.c — the block-sparse GEMM benchmark: stargemm_bsgemm() on the synthetic
 * problems of bench/bsgen.c (Herault et al. 2020 §5.1: tile sizes uniform in [lo, hi],
 * tiles removed at random to a target density; DBCSR's inputs are lo = hi = block
 * size), one CSV line per repetition.
 *
 * C = A B (+ beta C), in any element type (--prec s|d|c|z; the same values, complex
 * ones with an imaginary part, bench/bsgen.c). C's pattern is the symbolic product of
 * A's and B's (stargemm_matrix_create_product(), timed with the product, as libDBCSR
 * computes it inside its multiply) unless --density-c gives one. The rate counts
 * useful flops only: 2 m n k over the tile products computed (8 m n k for complex
 * types). The ratio to dense OpenBLAS is the useful-flop rate over the rate of one
 * dense ?gemm of the type with the same flop count (n = (flops/2)^(1/3), or /8
 * complex), measured in the same run on the same cores (every rank's CPU workers as
 * BLAS threads, summed over ranks).
 *
 * bench/compare_dbcsr.sh runs this program and the libDBCSR peer (bench/dbcsr_peer.c)
 * on the same problem.
 *
 * The progress line of the library is on (rank 0's stderr, when a terminal or
 * STARGEMM_PROGRESS=force) unless --quiet; it is no CSV column, as it changes no
 * result.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "../tests/check.h"
#include "bench.h"
#include "bsgen.h"
#include "stargemm.h"

struct bs_opts {
	struct bsgen_params gen;
	double alpha, beta, eps;   /* real scalars, in the element type */
	char prec;                 /* element type: s, d, c, z */
	int P, Q, ncpus, niter, warmup, check, csv, plan, ooc, balanced, no_dense, quiet;
	char ta;                   /* --transA: 'N', or 'T' / 'C': A stored as A^T / A^H */
	int64_t b, c, d, device_mib, ram_limit_mib, disk_mib;
	int lookahead;
	int stationary;             /* --stationary: 0 (auto), 'A', 'B', 'C' */
	int reuse;                  /* --reuse: the model's hint, A and B alike */
	int generate_b;             /* --generate-b: B made on demand, not stored; 2:
				       --generate-on-gpus, also by a CUDA generator */
	const char *trace_dir, *disk_dir, *sched;
	int *col_proc;   /* --dist balanced: B's and C's tile columns' process columns */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: stargemm_bsgemm [options]   (under mpiexec for several ranks)\n"
		"Block-sparse C = alpha A B + beta C on a synthetic problem; one CSV line per\n"
		"repetition on rank 0.\n"
		"Problem (bench/bsgen.c; the libDBCSR peer takes the same options):\n"
		"  --m M --n N --k K     C is M x N, inner dimension K (default 2000 each)\n"
		"  --lo L --hi H         tile sizes uniform in [L, H] (default 20, 60)\n"
		"  --density-a X         share of A's tiles present (default 0.1)\n"
		"  --density-b X         share of B's tiles present (default 0.1)\n"
		"  --density-c X         C's pattern: a share of tiles, or -1 (default) for the\n"
		"                        symbolic product of A's and B's patterns\n"
		"  --seed S              generator seed (default 1)\n"
		"Product:\n"
		"  --prec T              element type: s, d (default), c or z (complex values\n"
		"                        have imaginary parts)\n"
		"  --alpha X --beta X    (default 1, 0; real, in the element type)\n"
		"  --eps X               norm filtering threshold (default 0: none)\n"
		"  --stationary S        auto (default), A, B or C: the operand kept in place in\n"
		"                        core (columns stationary, model_mpi_mib, mpi_mib)\n"
		"  --reuse N             tell the model that N products read this A and B\n"
		"                        unchanged (reuse_a, reuse_b; default 0: one product;\n"
		"                        the repetitions are warmup + niter)\n"
		"  --generate-b          B not stored but made tile by tile where and when a\n"
		"                        product needs it (stargemm_matrix_create_generated());\n"
		"                        --check then builds a stored B for the reference\n"
		"  --generate-on-gpus    --generate-b, the tiles read on a GPU made there by a\n"
		"                        CUDA generator (stargemm_matrix_set_cuda_generator());\n"
		"                        SimGrid builds only (the benchmark has no device code:\n"
		"                        the simulated generator's time is its model's)\n"
		"  --transA N|T|C        N (default), or A stored as A^T (T) or A^H (C: complex\n"
		"                        types), K x M, and multiplied with op(A) = A^T or A^H:\n"
		"                        the same product, through the transposed path\n"
		"  --P P --Q Q           process grid (default: ranks x 1)\n"
		"  --dist NAME           cyclic (default: 2D block-cyclic) or balanced (B's\n"
		"                        and C's tile columns dealt by flops, paper 000 3.2.1)\n"
		"  --ncpus N             CPU workers per rank (default: all cores)\n"
		"  --sched NAME          StarPU scheduling policy (default stargemm-ooc)\n"
		"  --ooc                 through the out-of-core plan; with --b --c --d\n"
		"                        --lookahead --device-mem MiB (plan overrides),\n"
		"                        --ram-limit MiB, --disk DIR, --disk-mib MiB (CPU RAM\n"
		"                        budget and disk node, as stargemm_pdgemm)\n"
		"Run:\n"
		"  --niter N --warmup N  timed and untimed repetitions (default 3, 1)\n"
		"  --no-dense            skip the dense OpenBLAS rate at the same flop count\n"
		"                        (dense_gflops and ratio_dense 0; on GPU machines,\n"
		"                        whose peer is cuBLAS: bench/compare_gpu.sh)\n"
		"  --check               residual against a dense reference (rank 0; small\n"
		"                        problems; symbolic C, no --eps)\n"
		"  --plan                print the work list's figures (and the plan) to stderr\n"
		"  --trace DIR           FxT trace of the run, merged into DIR/paje.trace (ViTE)\n"
		"  --csv                 print the CSV header first\n"
		"  --quiet               no progress line on rank 0's stderr (shown only when\n"
		"                        stderr is a terminal, or STARGEMM_PROGRESS=force)\n"
		"  --help                this text\n"
		"Columns: impl,ranks,threads,m,n,k,lo,hi,density_a,density_b,density_c,seed,eps,\n"
		"mt,nt,kt,products,iter,seconds,useful_gflop,gflops,residual,skipped,c_removed,\n"
		"symbolic_s,inspect_s,dense_gflops,ratio_dense,dist,pred_loads,loads,\n"
		"loads_ratio,peer_loads,prec,transA,ooc_tasks,unprefetched,late,\n"
		"flops_imbalance,ram_peak_mib,stationary,model_mpi_mib,mpi_mib,model_c_s,\n"
		"model_a_s,model_b_s,generated_b,generated_tiles,rss_peak_mib,\n"
		"generated_on_gpus (residual -1:\n"
		"not checked; pred_loads: the work list's tile loads per device out of core,\n"
		"loads: measured, GPUs or disk -> RAM; rank 0's devices; ooc_tasks: rank 0's\n"
		"out-of-core tasks, unprefetched: those taken with an input not prefetched, late:\n"
		"GPU tasks that became ready with an input loaded to no GPU nor on its way;\n"
		"flops_imbalance: the largest rank's flops over the ranks' mean, from the\n"
		"patterns and C's owners; ram_peak_mib: rank 0's peak of the host memory\n"
		"StarPU allocated, received tiles and the buffers it keeps, with GPUs;\n"
		"generated_tiles: B tiles made by all ranks during the product; rss_peak_mib:\n"
		"the largest rank's peak resident memory since its start, for the process;\n"
		"generated_on_gpus: of generated_tiles, those made on GPUs).\n");
}

static const char prog[] = "stargemm_bsgemm";

/* --generate-on-gpus: accepted in SimGrid builds only. */
static int generate_on_gpus(struct bs_opts *o)
{
#ifdef STARPU_SIMGRID
	o->generate_b = 2;
	return 0;
#else
	(void)o;
	fprintf(stderr, "%s: --generate-on-gpus: this benchmark has no CUDA generator (no "
		"device code); it is for SimGrid builds, where the model times it\n", prog);
	return -1;
#endif
}


static int parse_double(const char *name, const char *arg, double *out)
{
	return bench_parse_double(prog, name, arg, out);
}

static int parse_int(const char *name, const char *arg, int64_t min, int64_t *out)
{
	return bench_parse_int(prog, name, arg, min, INT64_MAX, out);
}

static int parse_prec(const char *arg, char *prec)
{
	*prec = arg[0];
	if (arg[0] && !arg[1] && bsgen_prec_valid(arg[0]))
		return 0;
	fprintf(stderr, "stargemm_bsgemm: --prec must be s, d, c or z, got '%s'\n", arg);
	return -1;
}

static int parse_trans(const char *arg, char *op)
{
	*op = arg[0];
	if ((arg[0] == 'N' || arg[0] == 'T' || arg[0] == 'C') && !arg[1])
		return 0;
	fprintf(stderr, "stargemm_bsgemm: --transA must be N, T or C, got '%s'\n", arg);
	return -1;
}

static int parse_dist(const char *arg, int *balanced)
{
	*balanced = strcmp(arg, "balanced") == 0;
	if (*balanced || strcmp(arg, "cyclic") == 0)
		return 0;
	fprintf(stderr, "stargemm_bsgemm: --dist must be cyclic or balanced, got '%s'\n", arg);
	return -1;
}

static int parse_stationary(const char *arg, int *stationary)
{
	*stationary = 0;
	if (strcmp(arg, "auto") == 0)
		return 0;
	if ((arg[0] == 'A' || arg[0] == 'B' || arg[0] == 'C') && !arg[1]) {
		*stationary = arg[0];
		return 0;
	}
	fprintf(stderr, "stargemm_bsgemm: --stationary must be auto, A, B or C, got '%s'\n",
		arg);
	return -1;
}

static int parse_option(int c, struct bs_opts *o)
{
	int64_t v = 0;
	int bad = 0;

	switch (c) {
	case 'm': bad = parse_int("--m", optarg, 0, &o->gen.m); break;
	case 'n': bad = parse_int("--n", optarg, 0, &o->gen.n); break;
	case 'k': bad = parse_int("--k", optarg, 0, &o->gen.k); break;
	case 'l': bad = parse_int("--lo", optarg, 1, &o->gen.lo); break;
	case 'h': bad = parse_int("--hi", optarg, 1, &o->gen.hi); break;
	case 'A': bad = parse_double("--density-a", optarg, &o->gen.density_a); break;
	case 'B': bad = parse_double("--density-b", optarg, &o->gen.density_b); break;
	case 'C': bad = parse_double("--density-c", optarg, &o->gen.density_c); break;
	case 'S': bad = parse_int("--seed", optarg, 0, &v); o->gen.seed = (uint64_t)v; break;
	case 'a': bad = parse_double("--alpha", optarg, &o->alpha); break;
	case 'e': bad = parse_double("--beta", optarg, &o->beta); break;
	case 'E': bad = parse_double("--eps", optarg, &o->eps); break;
	case 'P': bad = bench_parse_small(prog, "--P", optarg, 1, &o->P); break;
	case 'Q': bad = bench_parse_small(prog, "--Q", optarg, 1, &o->Q); break;
	case 'u': bad = bench_parse_small(prog, "--ncpus", optarg, -1, &o->ncpus); break;
	case 't': bad = bench_parse_small(prog, "--niter", optarg, 1, &o->niter); break;
	case 'w': bad = bench_parse_small(prog, "--warmup", optarg, 0, &o->warmup); break;
	case 'c': o->check = 1; break;
	case 'N': o->no_dense = 1; break;
	case 'T': bad = parse_trans(optarg, &o->ta); break;
	case 'v': o->csv = 1; break;
	case 'p': o->plan = 1; break;
	case 'O': o->ooc = 1; break;
	case 'q': o->quiet = 1; break;
	case 'r': o->trace_dir = optarg; break;
	case 's': o->sched = optarg; break;
	case 'D': bad = parse_dist(optarg, &o->balanced); break;
	case 1001: bad = parse_int("--b", optarg, 0, &o->b); break;
	case 1002: bad = parse_int("--c", optarg, 0, &o->c); break;
	case 1003: bad = parse_int("--d", optarg, 0, &o->d); break;
	case 1004: bad = bench_parse_small(prog, "--lookahead", optarg, 0, &o->lookahead); break;
	case 1005: bad = parse_int("--device-mem", optarg, 0, &o->device_mib); break;
	case 1006: bad = parse_int("--ram-limit", optarg, 0, &o->ram_limit_mib); break;
	case 1007: o->disk_dir = optarg; break;
	case 1008: bad = parse_int("--disk-mib", optarg, 16, &o->disk_mib); break;
	case 1009: bad = parse_prec(optarg, &o->prec); break;
	case 1010: bad = parse_stationary(optarg, &o->stationary); break;
	case 1011: o->generate_b = o->generate_b ? o->generate_b : 1; break;
	case 1012: bad = generate_on_gpus(o); break;
	case 1013: bad = bench_parse_small(prog, "--reuse", optarg, 0, &o->reuse); break;
	default: usage(stderr); return -1;
	}
	return bad;
}

static int parse(int argc, char **argv, struct bs_opts *o)
{
	static const struct option longopts[] = {
		{ "m", 1, 0, 'm' }, { "n", 1, 0, 'n' }, { "k", 1, 0, 'k' }, { "lo", 1, 0, 'l' },
		{ "hi", 1, 0, 'h' }, { "density-a", 1, 0, 'A' }, { "density-b", 1, 0, 'B' },
		{ "density-c", 1, 0, 'C' }, { "seed", 1, 0, 'S' }, { "alpha", 1, 0, 'a' },
		{ "beta", 1, 0, 'e' }, { "eps", 1, 0, 'E' }, { "P", 1, 0, 'P' },
		{ "Q", 1, 0, 'Q' }, { "ncpus", 1, 0, 'u' }, { "niter", 1, 0, 't' },
		{ "warmup", 1, 0, 'w' }, { "check", 0, 0, 'c' }, { "csv", 0, 0, 'v' },
		{ "plan", 0, 0, 'p' }, { "ooc", 0, 0, 'O' }, { "trace", 1, 0, 'r' },
		{ "sched", 1, 0, 's' }, { "b", 1, 0, 1001 }, { "c", 1, 0, 1002 },
		{ "d", 1, 0, 1003 }, { "lookahead", 1, 0, 1004 }, { "device-mem", 1, 0, 1005 },
		{ "ram-limit", 1, 0, 1006 }, { "disk", 1, 0, 1007 }, { "disk-mib", 1, 0, 1008 },
		{ "dist", 1, 0, 'D' }, { "prec", 1, 0, 1009 }, { "no-dense", 0, 0, 'N' },
		{ "quiet", 0, 0, 'q' }, { "transA", 1, 0, 'T' }, { "help", 0, 0, 'H' },
		{ "stationary", 1, 0, 1010 }, { "generate-b", 0, 0, 1011 },
		{ "generate-on-gpus", 0, 0, 1012 }, { "reuse", 1, 0, 1013 },
		{ 0, 0, 0, 0 }
	};
	int c;

	*o = (struct bs_opts){ .gen = { 2000, 2000, 2000, 20, 60, 0.1, 0.1, -1.0, 1 },
			       .alpha = 1.0, .prec = 'd', .ta = 'N', .ncpus = -1, .niter = 3,
			       .warmup = 1, .disk_mib = 4096 };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'H') {
			usage(stdout);
			exit(0);
		}
		if (parse_option(c, o))
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "stargemm_bsgemm: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->check && (o->eps > 0 || o->gen.density_c >= 0)) {
		fprintf(stderr, "stargemm_bsgemm: --check compares with the dense product: it "
			"needs the symbolic C pattern (--density-c -1) and no --eps\n");
		return -1;
	}
	return 0;
}

/* ---- problem --------------------------------------------------------------------- */

struct fill_arg {
	uint64_t seed;
	int which;
	char prec;
	char op;   /* 'N', or the tile of A^T ('T': element (r, c) is A(c, r)) or A^H ('C') */
};

/* The complex number at @p x conjugated (type 'c' or 'z'). */
static void conjugate(char prec, void *x)
{
	if (prec == 'c')
		((float *)x)[1] = -((float *)x)[1];
	else
		((double *)x)[1] = -((double *)x)[1];
}

static void fill(void *t, int64_t ld, int64_t rows, int64_t cols, int64_t r0, int64_t c0,
		 void *arg)
{
	const struct fill_arg *f = arg;
	size_t size = f->prec == 's' ? 4 : f->prec == 'z' ? 16 : 8;
	char *tmp, *dst = t;

	if (f->op == 'N') {
		bsgen_fill_elements(f->prec, t, ld, rows, cols, r0, c0, f->seed, f->which);
		return;
	}
	/* A's tile (cols x rows) generated, then transposed into the tile */
	tmp = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * size);
	if (!tmp) {
		fprintf(stderr, "stargemm_bsgemm: out of memory filling a tile\n");
		exit(1);
	}
	bsgen_fill_elements(f->prec, tmp, cols, cols, rows, c0, r0, f->seed, f->which);
	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			memcpy(dst + (size_t)(r + c * ld) * size, tmp + (size_t)(c + r * cols) * size,
			       size);
	free(tmp);
	/* conjugated (for a real type, C is the transpose, as in BLAS) */
	for (int64_t c = 0; c < cols && f->op == 'C' && (f->prec == 'c' || f->prec == 'z'); c++)
		for (int64_t r = 0; r < rows; r++)
			conjugate(f->prec, dst + (size_t)(r + c * ld) * size);
}

/* --generate-b: B's tiles made on demand, the values fill() would store. */
static int generate(void *t, int64_t ld, int64_t rows, int64_t cols, int64_t r0, int64_t c0,
		    void *arg)
{
	fill(t, ld, rows, cols, r0, c0, arg);
	return 0;
}

/* The pattern of a generated matrix, for stargemm_balanced_columns(). */
static struct stargemm_pattern pattern_of(const struct bsgen_matrix *x)
{
	return (struct stargemm_pattern){ x->mt, x->nt, x->rows, x->cols, x->npresent,
					  x->pairs };
}

/* --dist balanced: the process columns of B's and C's tile columns, once per run. */
static int balanced_columns(struct bs_opts *o, const struct bsgen_problem *pb)
{
	struct stargemm_pattern pa = pattern_of(&pb->a), pbb = pattern_of(&pb->b);

	if (!o->balanced)
		return 0;
	o->col_proc = malloc((size_t)(pb->nt > 0 ? pb->nt : 1) * sizeof(*o->col_proc));
	if (!o->col_proc)
		return -ENOMEM;
	return stargemm_balanced_columns(&pa, &pbb, o->Q, o->col_proc);
}

#ifdef STARPU_SIMGRID
/* --generate-on-gpus: never called (SimGrid runs no kernel; the model times it). */
static int simulated_cuda_generate(void *t, int64_t ld, int64_t rows, int64_t cols,
				   int64_t r0, int64_t c0, void *stream, void *arg)
{
	return 0;
}
#endif

/* B made on demand (--generate-b), by fill()'s values of @p f (which must outlive
 * it); with a CUDA generator too for --generate-on-gpus. */
static int create_generated_b(const struct bs_opts *o, const struct bsgen_problem *pb,
			      struct fill_arg *f, struct stargemm_matrix **X)
{
	struct stargemm_distribution dist = { o->P, o->Q, NULL, o->col_proc, NULL };
	const struct bsgen_matrix *x = &pb->b;

	int ret;

	*f = (struct fill_arg){ o->gen.seed, 1, o->prec, 'N' };
	ret = stargemm_matrix_create_generated(X, (stargemm_type)o->prec, x->mt, x->rows, x->nt,
					       x->cols, x->npresent, x->pairs, &dist, generate, f);
#ifdef STARPU_SIMGRID
	if (!ret && o->generate_b == 2)
		ret = stargemm_matrix_set_cuda_generator(*X, simulated_cuda_generate);
#endif
	return ret;
}

/* Matrix @p which (0 A, 1 B, 2 C) of the problem, filled; B and C on o->col_proc's
 * process columns when set, A cyclic. */
static int create(const struct bs_opts *o, const struct bsgen_problem *pb, int which,
		  struct stargemm_matrix **X)
{
	const struct bsgen_matrix *x = which == 0 ? &pb->a : which == 1 ? &pb->b : &pb->c;
	struct stargemm_distribution dist = { o->P, o->Q, NULL, which > 0 ? o->col_proc : NULL,
					      NULL };
	struct fill_arg f = { o->gen.seed, which, o->prec, which == 0 ? o->ta : 'N' };
	int64_t *pairs = x->pairs;
	int ret;

	if (f.op != 'N') {   /* A^T or A^H: tilings swapped, every (i, j) as (j, i) */
		pairs = malloc((size_t)(x->npresent > 0 ? 2 * x->npresent : 1) * sizeof(*pairs));
		if (!pairs)
			return -ENOMEM;
		for (int64_t e = 0; e < x->npresent; e++) {
			pairs[2 * e] = x->pairs[2 * e + 1];
			pairs[2 * e + 1] = x->pairs[2 * e];
		}
		ret = stargemm_matrix_create_distributed_type(X, (stargemm_type)o->prec, x->nt,
							      x->cols, x->mt, x->rows,
							      x->npresent, pairs, &dist);
		free(pairs);
	} else {
		ret = stargemm_matrix_create_distributed_type(X, (stargemm_type)o->prec, x->mt,
							      x->rows, x->nt, x->cols,
							      x->npresent, pairs, &dist);
	}
	return ret ? ret : stargemm_matrix_fill_elements(*X, fill, &f);
}

/* C for one repetition: the symbolic pattern (zeros, timed in *symbolic_s) or the
 * generator's (filled). */
static int make_c(const struct bs_opts *o, const struct bsgen_problem *pb,
		  const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		  struct stargemm_matrix **C, double *symbolic_s)
{
	double t;
	int ret;

	*symbolic_s = 0.0;
	if (o->gen.density_c >= 0)
		return create(o, pb, 2, C);
	stargemm_wait();
	t = bench_now();
	ret = stargemm_matrix_create_product(C, o->ta, 'N', A, B, NULL);
	*symbolic_s = bench_now() - t;
	return ret;
}

/* ---- one repetition -------------------------------------------------------------- */

struct result {
	double seconds, symbolic_s, residual;
	double loads, peer_loads;   /* measured tile loads per device (bench_mean_loads) */
	uint64_t ooc_tasks, unprefetched, late;   /* stargemm_transfer_stats' */
	double ram_peak_mib;        /* StarPU-allocated host memory's peak (received tiles) */
	double imbalance;           /* flops_imbalance() */
	double mpi_mib;             /* received over MPI by all ranks during the product */
	int64_t generated;          /* B tiles made by all ranks during the product */
	int64_t generated_on_gpus;  /* of which on GPUs */
	double rss_mib;             /* the largest rank's peak resident memory so far */
	struct stargemm_bsgemm_info info;
};

static void options_of(const struct bs_opts *o, struct stargemm_bsgemm_options *opt)
{
	stargemm_bsgemm_options_init(opt);
	opt->filter_eps = o->eps;
	opt->out_of_core = o->ooc;
	opt->ooc.b = o->b;
	opt->ooc.c = o->c;
	opt->ooc.d = o->d;
	opt->ooc.lookahead = o->lookahead;
	opt->ooc.device_bytes = o->device_mib << 20;
	opt->stationary = o->stationary;
	opt->reuse_a = opt->reuse_b = o->reuse;
}

/* Residual of C against the dense alpha A B + beta C0 (rank 0), in the type's
 * precision. With the symbolic pattern, C's absent tiles are exactly those no product
 * reaches: zero in both. */
static double check(const struct bs_opts *o, const struct bsgen_problem *pb,
		    const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		    const struct stargemm_matrix *C, const void *c0)
{
	stargemm_type t = (stargemm_type)o->prec;
	struct stargemm_matrix *stored = NULL;
	void *a = sg_gather_typed(A), *b = NULL, *c = sg_gather_typed(C);

	/* a generated B cannot be gathered: its stored twin (the same values) */
	if (stargemm_matrix_is_generated(B) && !create(o, pb, 1, &stored))
		B = stored;
	b = sg_gather_typed(B);
	stargemm_matrix_destroy(stored);
	double res = 1e300, alpha[2], beta[2];

	if (stargemm_rank() == 0 && a && b && c && c0)
		res = sg_typed_residual(t, o->ta, 'N', o->gen.m, o->gen.n, o->gen.k,
					bench_scalar(t, o->alpha, alpha), a, b,
					bench_scalar(t, o->beta, beta), c0, c);
	free(a);
	free(b);
	free(c);
	return res;
}

/* The flops of each rank's C tiles (their owner computes them: paper 000's work per
 * rank), the largest over the ranks' mean; from the patterns, filtering left aside.
 * op(A)'s tile (i, l) is A's (l, i) when A is stored transposed. 0: out of memory. */
static double flops_imbalance(const struct bs_opts *o, const struct stargemm_matrix *A,
			      const struct stargemm_matrix *B, const struct stargemm_matrix *C)
{
	int nr = stargemm_nranks();
	double *work = calloc((size_t)nr, sizeof(*work)), most = 0, sum = 0;
	int64_t mt = stargemm_matrix_mt(C), nt = stargemm_matrix_nt(C);
	int64_t kt = stargemm_matrix_mt(B);

	if (!work)
		return 0.0;
	for (int64_t j = 0; j < nt; j++)
		for (int64_t i = 0; i < mt; i++) {
			double rows = (double)stargemm_matrix_tile_rows(C, i);
			double cols = (double)stargemm_matrix_tile_cols(C, j);

			if (!stargemm_matrix_tile_present(C, i, j))
				continue;
			for (int64_t l = 0; l < kt; l++)
				if ((o->ta == 'N' ? stargemm_matrix_tile_present(A, i, l)
						  : stargemm_matrix_tile_present(A, l, i)) &&
				    stargemm_matrix_tile_present(B, l, j))
					work[stargemm_matrix_owner(C, i, j)] +=
						2.0 * rows * cols * (double)stargemm_matrix_tile_rows(B, l);
		}
	for (int r = 0; r < nr; r++) {
		sum += work[r];
		most = work[r] > most ? work[r] : most;
	}
	free(work);
	return sum > 0 ? most / (sum / nr) : 1.0;
}

/* The element-wise sum (@p max: the maximum) of @p v[0..n) over the ranks, into @p v
 * on every rank. In SimGrid builds the application's thread may not call MPI (SMPI
 * refuses, "MPI_Init was not called"): the values go through StarPU-MPI, every rank's
 * to rank 0, which reduces them and sends the result back, on tags far above the
 * library's (which count up from 1). */
static void reduce_over_ranks(double *v, int n, int max)
{
#ifdef STARPU_SIMGRID
	const starpu_mpi_tag_t tag = (starpu_mpi_tag_t)1 << 60;
	int me = stargemm_rank(), nr = stargemm_nranks();
	double *got = malloc((size_t)n * sizeof(*got));
	starpu_data_handle_t h;

	for (int r = 1; got && r < nr; r++) {
		if (me != 0 && me != r)
			continue;
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)(me == 0 ? got : v),
					    (uint32_t)n, sizeof(*v));
		if (me == 0)
			starpu_mpi_recv(h, r, tag + r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else
			starpu_mpi_send(h, 0, tag + r, MPI_COMM_WORLD);
		starpu_data_unregister(h);
		for (int i = 0; me == 0 && i < n; i++)
			v[i] = max ? fmax(v[i], got[i]) : v[i] + got[i];
	}
	for (int r = 1; got && r < nr; r++) {
		if (me != 0 && me != r)
			continue;
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v, (uint32_t)n,
					    sizeof(*v));
		if (me == 0)
			starpu_mpi_send(h, r, tag + nr + r, MPI_COMM_WORLD);
		else
			starpu_mpi_recv(h, 0, tag + nr + r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		starpu_data_unregister(h);
	}
	free(got);
#else
	MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
#endif
}

/* Tiles loaded into the devices during the product (counted since the reset). */
static int measure_loads(struct result *r)
{
	struct stargemm_transfer_stats st;
	int ret = stargemm_transfers_get(&st);

	if (ret == 0) {
		bench_mean_loads(&st, &r->loads, &r->peer_loads);
		r->ooc_tasks = st.ooc_tasks;
		r->unprefetched = st.unprefetched_tasks;
		r->late = st.late_tasks;
		r->ram_peak_mib = (double)st.ram_peak_bytes / (1024.0 * 1024.0);
		double sums[3] = { (double)st.mpi_recv_bytes / (1024.0 * 1024.0),
				   (double)r->info.generated_tiles,
				   (double)r->info.generated_on_gpus };
		double most = bench_peak_rss_mib();

		reduce_over_ranks(sums, 3, 0);
		reduce_over_ranks(&most, 1, 1);
		r->mpi_mib = sums[0];
		r->generated = (int64_t)sums[1];
		r->generated_on_gpus = (int64_t)sums[2];
		r->rss_mib = most;
	}
	return ret;
}

static int repetition(const struct bs_opts *o, const struct bsgen_problem *pb,
		      const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		      struct result *r)
{
	struct stargemm_bsgemm_options opt;
	struct stargemm_matrix *C = NULL;
	stargemm_type type = (stargemm_type)o->prec;
	double alpha[2], beta[2], t;
	void *c0 = NULL;
	int ret;

	options_of(o, &opt);
	r->residual = -1.0;
	ret = make_c(o, pb, A, B, &C, &r->symbolic_s);
	if (!ret && o->check)
		c0 = sg_gather_typed(C);
	if (!ret)
		r->imbalance = flops_imbalance(o, A, B, C);
	if (!ret) {
		stargemm_wait();
		ret = stargemm_transfers_reset();
	}
	if (!ret) {
		t = bench_now();
		ret = stargemm_bsgemm_type(o->ta, 'N', bench_scalar(type, o->alpha, alpha), A, B,
					   bench_scalar(type, o->beta, beta), C, &opt, &r->info);
		r->seconds = bench_now() - t + r->symbolic_s;
	}
	if (!ret)
		ret = measure_loads(r);
	if (!ret && o->check)
		r->residual = check(o, pb, A, B, C, c0);
	free(c0);
	stargemm_matrix_destroy(C);
	return ret;
}

/* ---- output ---------------------------------------------------------------------- */

static void print_header(void)
{
	printf("impl,ranks,threads,m,n,k,lo,hi,density_a,density_b,density_c,seed,eps,mt,nt,"
	       "kt,products,iter,seconds,useful_gflop,gflops,residual,skipped,c_removed,"
	       "symbolic_s,inspect_s,dense_gflops,ratio_dense,dist,pred_loads,loads,"
	       "loads_ratio,peer_loads,prec,transA,ooc_tasks,unprefetched,late,"
	       "flops_imbalance,ram_peak_mib,stationary,model_mpi_mib,mpi_mib,model_c_s,model_a_s,model_b_s,"
	       "generated_b,generated_tiles,rss_peak_mib,generated_on_gpus\n");
}

static void print_row(const struct bs_opts *o, const struct bsgen_problem *pb, int iter,
		      const struct result *r, double dense)
{
	double gflop = r->info.flops * 1e-9, rate = r->seconds > 0 ? gflop / r->seconds : 0;

	printf("stargemm,%d,%d,%lld,%lld,%lld,%lld,%lld,%g,%g,%g,%llu,%g,%lld,%lld,%lld,%lld,"
	       "%d,%.6f,%.6f,%.3f,%.3g,%lld,%lld,%.6f,%.6f,%.3f,%.4f,%s,%.0f,%.0f,%.4f,%.0f,"
	       "%c,%c,%llu,%llu,%llu,%.4f,%.0f,%c,%.3f,%.3f,%.6f,%.6f,%.6f,%d,%lld,%.1f,%lld\n",
	       stargemm_nranks(),
	       stargemm_ncpu_workers() + stargemm_ncuda_workers(), (long long)o->gen.m,
	       (long long)o->gen.n, (long long)o->gen.k, (long long)o->gen.lo,
	       (long long)o->gen.hi, o->gen.density_a, o->gen.density_b, o->gen.density_c,
	       (unsigned long long)o->gen.seed, o->eps, (long long)pb->mt, (long long)pb->nt,
	       (long long)pb->kt, (long long)r->info.products, iter, r->seconds, gflop, rate,
	       r->residual, (long long)r->info.skipped, (long long)r->info.c_removed,
	       r->symbolic_s, r->info.inspect_seconds, dense, dense > 0 ? rate / dense : 0.0,
	       o->balanced ? "balanced" : "cyclic", r->info.pred_loads, r->loads,
	       r->info.pred_loads > 0 ? r->loads / r->info.pred_loads : 0.0, r->peer_loads,
	       o->prec, o->ta, (unsigned long long)r->ooc_tasks,
	       (unsigned long long)r->unprefetched, (unsigned long long)r->late, r->imbalance,
	       r->ram_peak_mib, r->info.stationary ? r->info.stationary : 'C',
	       r->info.model_mpi_bytes / (1024.0 * 1024.0), r->mpi_mib,
	       r->info.model_seconds[0], r->info.model_seconds[1], r->info.model_seconds[2],
	       o->generate_b, (long long)r->generated, r->rss_mib,
	       (long long)r->generated_on_gpus);
	fflush(stdout);
}

static void print_plan(const struct result *r)
{
	const struct stargemm_bsgemm_info *in = &r->info;

	fprintf(stderr, "plan: %lld tile products (%.3f GFLOP), %lld skipped by the filter, "
		"inspector %.6f s (%.3f s per 10^6 products), symbolic pattern %.6f s\n",
		(long long)in->products, in->flops * 1e-9, (long long)in->skipped,
		in->inspect_seconds,
		in->products ? in->inspect_seconds * 1e6 / (double)in->products : 0.0,
		r->symbolic_s);
	if (in->planned)
		fprintf(stderr, "plan: out of core, regime %s, b=%lld c=%lld d=%lld "
			"lookahead=%d, blocks %lld x %lld, %lld chunks per block, capacity %lld "
			"tiles of %.2f MiB, needs %lld; the list needs %.1f MiB per device\n",
			stargemm_plan_case_name(in->plan.regime),
			(long long)in->plan.b, (long long)in->plan.c, (long long)in->plan.d,
			in->plan.lookahead, (long long)in->plan.X, (long long)in->plan.Y,
			(long long)in->plan.Z, (long long)in->plan.capacity,
			(double)in->plan.tile_bytes / 1048576.0, (long long)in->plan.tiles_needed,
			(double)in->plan.footprint_bytes / 1048576.0);
}

/* ---- main ------------------------------------------------------------------------ */

/* The dense OpenBLAS rate of type @p t at the same flop count, every rank's CPU
 * workers at once. */
static double dense_rate(stargemm_type t, double flops)
{
	int64_t n = (int64_t)cbrt(flops / (t == STARGEMM_C || t == STARGEMM_Z ? 8.0 : 2.0));
	double local, total = 0.0;

	if (n < 64)
		return 0.0;
	starpu_pause();
	MPI_Barrier(MPI_COMM_WORLD);
	/* the better of two calls: the first one also pays for page faults */
	local = bench_local_gemm_rate(t, n, stargemm_ncpu_workers());
	local = fmax(local, bench_local_gemm_rate(t, n, stargemm_ncpu_workers()));
	MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	bench_set_blas_threads(1);
	starpu_resume();
	return total;
}

static int init(const struct bs_opts *o)
{
	struct stargemm_config cfg;

	stargemm_config_init(&cfg);
	cfg.ncpus = o->ncpus;
	cfg.sched_policy = o->sched;
	cfg.ram_limit_mib = o->ram_limit_mib;
	cfg.disk_dir = o->disk_dir;
	cfg.disk_mib = o->disk_mib;
	if (stargemm_set_progress(!o->quiet)) {
		fprintf(stderr, "stargemm_bsgemm: %s\n", stargemm_last_error());
		return -1;
	}
	if (stargemm_init(&cfg, NULL, NULL)) {
		fprintf(stderr, "stargemm_bsgemm: %s\n", stargemm_last_error());
		return -1;
	}
	return 0;
}

static int run(struct bs_opts *o, const struct bsgen_problem *pb)
{
	struct stargemm_matrix *A = NULL, *B = NULL;
	struct fill_arg gen_arg;
	double dense = 0.0;
	int ret, failed = 0;

	if (o->P == 0 && o->Q == 0) {
		o->P = stargemm_nranks();
		o->Q = 1;
	}
	ret = balanced_columns(o, pb);
	ret = ret ? ret : create(o, pb, 0, &A);
	if (!ret && o->generate_b)
		ret = create_generated_b(o, pb, &gen_arg, &B);
	else if (!ret)
		ret = create(o, pb, 1, &B);
	for (int it = -o->warmup; !ret && it < o->niter; it++) {
		struct result r = { 0 };

		if ((ret = repetition(o, pb, A, B, &r)))
			break;
		if (dense == 0.0 && !o->no_dense)
			dense = dense_rate((stargemm_type)o->prec, r.info.flops);
		if (o->plan && it == -o->warmup && stargemm_rank() == 0)
			print_plan(&r);
		if (it >= 0 && stargemm_rank() == 0)
			print_row(o, pb, it, &r, dense);
		/* Only rank 0 holds the gathered reference; others have no residual. */
		if (stargemm_rank() == 0)
			failed |= r.residual >= SG_RESIDUAL_BOUND;
	}
	/* Every rank's error: the same code on every rank, each rank's message. */
	if (ret)
		fprintf(stderr, "stargemm_bsgemm: rank %d: %s\n", stargemm_rank(),
			stargemm_last_error());
	if (failed && stargemm_rank() == 0)
		fprintf(stderr, "stargemm_bsgemm: residual above %g\n", SG_RESIDUAL_BOUND);
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	free(o->col_proc);
	return ret || failed;
}

#ifdef STARPU_SIMGRID
/* Simulation (StarPU's SimGrid mode): StarPU-MPI's thread is the simulated MPI rank and
 * initialises MPI itself, so this main makes no MPI call (MPI_Init here crashes SMPI).
 * Kernels do not run: no dense OpenBLAS rate, no --check; no trace. */
static int simulated_main(struct bs_opts *o, struct bsgen_problem *pb)
{
	int ret = 1;

	if (o->check || o->trace_dir) {
		fprintf(stderr, "stargemm_bsgemm: --check and --trace are not available in "
			"simulation (kernels are not run)\n");
		bsgen_free(pb);
		return 2;
	}
	o->no_dense = 1;
	if (!init(o)) {
		if (o->csv && stargemm_rank() == 0)
			print_header();
		ret = run(o, pb);
		stargemm_finalize();
	}
	bsgen_free(pb);
	return ret;
}
#endif

int main(int argc, char **argv)
{
	struct bs_opts o;
	struct bsgen_problem pb;
	int provided, rank, nranks, ret;

	if (parse(argc, argv, &o))
		return 2;
	if (bsgen_make(&o.gen, &pb))
		return 2;
#ifdef STARPU_SIMGRID
	(void)provided;
	(void)rank;
	(void)nranks;
	return simulated_main(&o, &pb);
#endif
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	bench_trace_setup(o.trace_dir);
	if (rank == 0 && o.csv)
		print_header();
	if (init(&o)) {
		ret = 1;
	} else {
		ret = run(&o, &pb);
		stargemm_finalize();
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (o.trace_dir && rank == 0 && ret == 0)
		ret = bench_trace_merge(o.trace_dir, nranks);
	bsgen_free(&pb);
	MPI_Finalize();
	return ret;
}
