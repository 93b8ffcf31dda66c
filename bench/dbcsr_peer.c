/*
 * bench/dbcsr_peer.c — the libDBCSR peer of the block-sparse benchmark: multiplies the
 * very problem bench/bsgen.c generates (same tilings, patterns and values as stargemm's
 * block-sparse benchmark) with c_dbcsr_multiply_{s,d,c,z} (--prec), and prints the same
 * CSV columns, so that bench/compare_dbcsr.sh can set the two side by side as ratios.
 *
 * Built apart from stargemm: Debian's libdbcsr is a static Fortran library built with
 * Open MPI and OpenMP, stargemm uses MPICH. bsgen.c has no MPI, so both link it.
 *
 * Build (Debian 12: libdbcsr-dev, libopenmpi-dev), from the source tree's root:
 *
 *   mpicc.openmpi -std=gnu11 -O2 -fopenmp -Wall -Wextra -Ibench -c bench/dbcsr_peer.c \
 *       -o /tmp/dbcsr-work/dbcsr_peer.o
 *   mpicc.openmpi -std=gnu11 -O2 -Wall -Wextra -c bench/bsgen.c \
 *       -o /tmp/dbcsr-work/bsgen.o
 *   mpifort.openmpi -fopenmp -o /tmp/dbcsr-work/stargemm_dbcsr_peer \
 *       /tmp/dbcsr-work/dbcsr_peer.o /tmp/dbcsr-work/bsgen.o \
 *       -ldbcsr_c -ldbcsr -llapack -lblas -lm
 *
 * libdbcsr_c.a (the C API) must come before libdbcsr.a. The Fortran driver adds the
 * Open MPI Fortran bindings (libmpi_mpifh) and libgfortran that libdbcsr.a needs; to
 * link with mpicc.openmpi instead, add -lmpi_mpifh -lgfortran. -fopenmp links libgomp.
 * dbcsr.h: it uses C++'s nullptr (defined to NULL below), and its inline wrappers
 * (c_dbcsr_init_lib, c_dbcsr_distribution_new) have no external definition under C99
 * inline rules; this file calls the functions they wrap instead, so it needs no
 * -fgnu89-inline.
 *
 * What is timed, per repetition: MPI_Barrier, c_dbcsr_multiply_?(C = 1 A B + 0 C),
 * MPI_Barrier; the wall clock is the maximum over the ranks. Before the first
 * repetition C holds its bsgen pattern (the symbolic product A·B when --density-c < 0)
 * filled with bsgen's C values, so that every repetition, warm-up included, starts from
 * the same C and beta = 0 must wipe those values. With --density-c >= 0, C's pattern is
 * fixed (retain_sparsity true: only the products whose C tile is present are made);
 * with --density-c < 0, retain_sparsity is false and DBCSR lays C's pattern itself,
 * which is the symbolic product, so C keeps the same pattern. --eps > 0 passes
 * filter_eps (DBCSR then also skips products whose norm bound is below eps).
 * The rate counts the USEFUL flops, bsgen_flops() (times 4 for complex types: 8 flops
 * per complex multiply-add), whatever DBCSR actually does.
 *
 * Distribution: a Cartesian process grid from MPI_Dims_create; block rows and columns
 * are dealt cyclically over the grid's rows and columns (A's k blocks over the grid's
 * columns, B's over its rows). Every rank builds the problem and puts only the blocks
 * DBCSR says it stores (c_dbcsr_get_stored_coordinates).
 *
 * --check: each rank compares its local blocks of C with a reference made from the
 * densified A and B (zeros for absent tiles; only tiles in C's pattern), and the
 * partial squared errors are summed: residual = ||C - Cref||_F /
 * (||A||_F ||B||_F k eps), eps the type's unit roundoff; the reference is computed in
 * double complex from the values in the type. Exit status 1 if above 10.
 */
#define nullptr NULL   /* dbcsr.h is written for C++ too */
#include <complex.h>
#include <dbcsr.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsgen.h"

#define CHECK_MAX_ELEMENTS (1LL << 25)   /* densified A + B (double complex): 512 MiB */
#define RESIDUAL_LIMIT 10.0

struct opts {
	struct bsgen_params p;
	int niter, warmup, check, csv;
	double eps;
	char prec;   /* element type: s, d, c, z */
};

struct grid {
	MPI_Comm cart;
	int rank, size, dims[2];
};

/* One DBCSR operand: its distribution and matrix handle. */
struct operand {
	dbcsr_distribution dist;
	dbcsr_matrix mat;
};

/* The problem in DBCSR's terms: int block sizes and element offsets of each tile. */
struct peer {
	struct bsgen_problem pb;
	int *msz, *nsz, *ksz;
	int64_t *moff, *noff, *koff;
	struct operand a, b, c;
};

static int rank0(void)
{
	int r = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r == 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: stargemm_dbcsr_peer [options]\n"
		"libDBCSR peer of stargemm's block-sparse benchmark: C = A B on bsgen's problem.\n"
		"  --m M, --n N, --k K   C is M x N, inner dimension K (default 2000 each)\n"
		"  --lo L, --hi H        tile sizes uniform in [L, H] (default 20, 60)\n"
		"  --density-a D         share of present tiles of A (default 0.1)\n"
		"  --density-b D         share of present tiles of B (default 0.1)\n"
		"  --density-c D         C's pattern; < 0: the symbolic product A B (default -1)\n"
		"  --seed S              generator seed (default 1)\n"
		"  --prec T              element type: s, d (default), c or z\n"
		"  --niter N             timed repetitions, one CSV line each (default 3)\n"
		"  --warmup W            untimed repetitions first (default 1)\n"
		"  --eps E               DBCSR filter_eps; 0 = no filtering (default 0)\n"
		"  --check               compare C with a dense reference (small problems)\n"
		"  --csv                 print the CSV header line first\n"
		"  --help                this text\n"
		"Columns: impl,ranks,threads,m,n,k,lo,hi,density_a,density_b,density_c,seed,eps,\n"
		"mt,nt,kt,products,iter,seconds,useful_gflop,gflops,residual,prec (gflops = useful\n"
		"flops of the products whose three tiles are present / max seconds over ranks).\n"
		"Threads: OMP_NUM_THREADS; set OPENBLAS_NUM_THREADS=1 to keep BLAS serial.\n");
}

static int parse_int64(const char *s, const char *name, int64_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s == '\0' || *end != '\0') {
		if (rank0())
			fprintf(stderr, "dbcsr_peer: --%s wants an integer, got '%s'\n", name, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_double(const char *s, const char *name, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == '\0' || *end != '\0' || !isfinite(v)) {
		if (rank0())
			fprintf(stderr, "dbcsr_peer: --%s wants a number, got '%s'\n", name, s);
		return -1;
	}
	*out = v;
	return 0;
}

static const struct option long_opts[] = {
	{ "m", 1, 0, 'm' }, { "n", 1, 0, 'n' }, { "k", 1, 0, 'k' },
	{ "lo", 1, 0, 'l' }, { "hi", 1, 0, 'h' },
	{ "density-a", 1, 0, 'A' }, { "density-b", 1, 0, 'B' }, { "density-c", 1, 0, 'C' },
	{ "seed", 1, 0, 's' }, { "niter", 1, 0, 't' }, { "warmup", 1, 0, 'w' },
	{ "eps", 1, 0, 'e' }, { "check", 0, 0, 'c' }, { "csv", 0, 0, 'v' },
	{ "prec", 1, 0, 'p' }, { "help", 0, 0, 'H' }, { 0, 0, 0, 0 }
};

/* One option into @p o; returns 0, -1 on a bad value, 1 for --help. */
static int apply_opt(int c, const char *arg, struct opts *o)
{
	struct bsgen_params *p = &o->p;
	int64_t v = 0;
	int ret = 0;

	switch (c) {
	case 'm': ret = parse_int64(arg, "m", &p->m); break;
	case 'n': ret = parse_int64(arg, "n", &p->n); break;
	case 'k': ret = parse_int64(arg, "k", &p->k); break;
	case 'l': ret = parse_int64(arg, "lo", &p->lo); break;
	case 'h': ret = parse_int64(arg, "hi", &p->hi); break;
	case 'A': ret = parse_double(arg, "density-a", &p->density_a); break;
	case 'B': ret = parse_double(arg, "density-b", &p->density_b); break;
	case 'C': ret = parse_double(arg, "density-c", &p->density_c); break;
	case 's': ret = parse_int64(arg, "seed", &v); p->seed = (uint64_t)v; break;
	case 't': ret = parse_int64(arg, "niter", &v); o->niter = (int)v; break;
	case 'w': ret = parse_int64(arg, "warmup", &v); o->warmup = (int)v; break;
	case 'e': ret = parse_double(arg, "eps", &o->eps); break;
	case 'p': o->prec = arg[0] && !arg[1] ? arg[0] : '?'; break;
	case 'c': o->check = 1; break;
	case 'v': o->csv = 1; break;
	case 'H': return 1;
	default: return -1;   /* getopt_long said why */
	}
	return ret;
}

static int check_opts(const struct opts *o)
{
	const char *why = NULL;

	if (o->niter < 1 || o->warmup < 0)
		why = "--niter must be >= 1 and --warmup >= 0";
	else if (o->eps < 0)
		why = "--eps must be >= 0";
	else if (!bsgen_prec_valid(o->prec))
		why = "--prec must be s, d, c or z";
	else if (o->p.m < 1 || o->p.n < 1 || o->p.k < 1)
		why = "--m, --n and --k must be >= 1";
	else if (o->p.m > INT32_MAX || o->p.n > INT32_MAX || o->p.k > INT32_MAX)
		why = "dimensions must fit DBCSR's int";
	if (why && rank0())
		fprintf(stderr, "dbcsr_peer: %s\n", why);
	return why ? -1 : 0;
}

/* Returns 0 to run, 1 for --help, -1 on an error. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c, ret;

	*o = (struct opts){ .p = { .m = 2000, .n = 2000, .k = 2000, .lo = 20, .hi = 60,
				   .density_a = 0.1, .density_b = 0.1, .density_c = -1,
				   .seed = 1 },
			    .niter = 3, .warmup = 1, .prec = 'd' };
	opterr = rank0();
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1)
		if ((ret = apply_opt(c, optarg, o)))
			return ret;
	if (optind < argc) {
		if (rank0())
			fprintf(stderr, "dbcsr_peer: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return check_opts(o);
}

/* ---- element types ------------------------------------------------------------- */

static int is_complex(char prec)
{
	return prec == 'c' || prec == 'z';
}

static size_t element_size(char prec)
{
	return prec == 's' ? 4 : prec == 'z' ? 16 : 8;
}

/* Element e of an array of type @p prec, widened. */
static double _Complex get(char prec, const void *x, int64_t e)
{
	switch (prec) {
	case 's': return ((const float *)x)[e];
	case 'd': return ((const double *)x)[e];
	case 'c': return ((const float _Complex *)x)[e];
	default: return ((const double _Complex *)x)[e];
	}
}

static int dbcsr_type(char prec)
{
	switch (prec) {
	case 's': return dbcsr_type_real_4;
	case 'd': return dbcsr_type_real_8;
	case 'c': return dbcsr_type_complex_4;
	default: return dbcsr_type_complex_8;
	}
}

static void put_block(char prec, dbcsr_matrix mat, int i, int j, const void *tile, int rows,
		      int cols)
{
	const bool sum = false;

	switch (prec) {
	case 's': c_dbcsr_put_block2d_s(mat, i, j, tile, rows, cols, &sum, NULL); break;
	case 'd': c_dbcsr_put_block2d_d(mat, i, j, tile, rows, cols, &sum, NULL); break;
	case 'c': c_dbcsr_put_block2d_c(mat, i, j, tile, rows, cols, &sum, NULL); break;
	default: c_dbcsr_put_block2d_z(mat, i, j, tile, rows, cols, &sum, NULL); break;
	}
}

/* C = A B (alpha 1, beta 0) in type @p prec. */
static void multiply_typed(char prec, dbcsr_matrix a, dbcsr_matrix b, dbcsr_matrix c,
			   const bool *retain, const double *eps, long long *flop)
{
	const char n = dbcsr_no_transpose;

	switch (prec) {
	case 's': c_dbcsr_multiply_s(n, n, 1.0f, a, b, 0.0f, c, NULL, NULL, NULL, NULL, NULL,
				     NULL, retain, eps, flop); break;
	case 'd': c_dbcsr_multiply_d(n, n, 1.0, a, b, 0.0, c, NULL, NULL, NULL, NULL, NULL,
				     NULL, retain, eps, flop); break;
	case 'c': c_dbcsr_multiply_c(n, n, 1.0f, a, b, 0.0f, c, NULL, NULL, NULL, NULL, NULL,
				     NULL, retain, eps, flop); break;
	default: c_dbcsr_multiply_z(n, n, 1.0, a, b, 0.0, c, NULL, NULL, NULL, NULL, NULL,
				    NULL, retain, eps, flop); break;
	}
}

/* The next block of an iterator over a matrix of type @p prec. */
static const void *next_block(char prec, dbcsr_iterator it, int *i, int *j, bool *tr)
{
	int nb, rs, cs, ro, co;
	float *s;
	double *d;
	float _Complex *c;
	double _Complex *z;

	switch (prec) {
	case 's': c_dbcsr_iterator_next_2d_block_s(it, i, j, &s, tr, &nb, &rs, &cs, &ro, &co);
		return s;
	case 'd': c_dbcsr_iterator_next_2d_block_d(it, i, j, &d, tr, &nb, &rs, &cs, &ro, &co);
		return d;
	case 'c': c_dbcsr_iterator_next_2d_block_c(it, i, j, &c, tr, &nb, &rs, &cs, &ro, &co);
		return c;
	default: c_dbcsr_iterator_next_2d_block_z(it, i, j, &z, tr, &nb, &rs, &cs, &ro, &co);
		return z;
	}
}

/* ---- problem ------------------------------------------------------------------- */

static int make_grid(struct grid *g)
{
	int periods[2] = { 0, 0 };

	MPI_Comm_size(MPI_COMM_WORLD, &g->size);
	g->dims[0] = g->dims[1] = 0;
	MPI_Dims_create(g->size, 2, g->dims);
	if (MPI_Cart_create(MPI_COMM_WORLD, 2, g->dims, periods, 0, &g->cart) != MPI_SUCCESS)
		return -1;
	MPI_Comm_rank(g->cart, &g->rank);
	return 0;
}

/* DBCSR's int copy of @p n tile sizes, and their element offsets. */
static int convert_sizes(const int64_t *sizes, int64_t n, int **isz, int64_t **off)
{
	*isz = malloc((size_t)n * sizeof(**isz));
	*off = malloc((size_t)n * sizeof(**off));
	if (!*isz || !*off)
		return -1;
	for (int64_t i = 0, o = 0; i < n; o += sizes[i], i++) {
		(*isz)[i] = (int)sizes[i];
		(*off)[i] = o;
	}
	return 0;
}

/* Block i goes to process row (or column) i mod nproc. */
static int *cyclic(int64_t n, int nproc)
{
	int *d = malloc((size_t)n * sizeof(*d));

	for (int64_t i = 0; d && i < n; i++)
		d[i] = (int)(i % nproc);
	return d;
}

static int make_dist(const struct grid *g, int64_t nrows, int64_t ncols,
		     dbcsr_distribution *dist)
{
	int *rd = cyclic(nrows, g->dims[0]), *cd = cyclic(ncols, g->dims[1]);

	if (!rd || !cd) {
		free(rd);
		free(cd);
		return -1;
	}
	*dist = NULL;
	c_dbcsr_distribution_new_aux(dist, &(MPI_Fint){ MPI_Comm_c2f(g->cart) }, rd,
				     (int)nrows, cd, (int)ncols);
	free(rd);   /* DBCSR keeps its own copies */
	free(cd);
	return 0;
}

static void create_matrix(char prec, struct operand *x, const char *name, int *rsz,
			  int64_t nr, int *csz, int64_t nc)
{
	const int type = dbcsr_type(prec);

	x->mat = NULL;
	c_dbcsr_create_new(&x->mat, name, x->dist, dbcsr_type_no_symmetry, rsz, (int)nr, csz,
			   (int)nc, NULL, &type, NULL, NULL, NULL, NULL);
}

static int64_t largest(const int64_t *sizes, int64_t n)
{
	int64_t big = 1;

	for (int64_t i = 0; i < n; i++)
		big = sizes[i] > big ? sizes[i] : big;
	return big;
}

/* Put the tiles of @p x that this rank stores, with bsgen's values; then finalize. */
static int fill_matrix(const struct grid *g, char prec, dbcsr_matrix mat,
		       const struct bsgen_matrix *x, const int64_t *roff, const int64_t *coff,
		       uint64_t seed, int which)
{
	int64_t cap = largest(x->rows, x->mt) * largest(x->cols, x->nt);
	void *tile = malloc((size_t)cap * element_size(prec));

	if (!tile)
		return -1;
	for (int64_t e = 0; e < x->npresent; e++) {
		int i = (int)x->pairs[2 * e], j = (int)x->pairs[2 * e + 1], owner = -1;

		c_dbcsr_get_stored_coordinates(mat, i, j, &owner);
		if (owner != g->rank)
			continue;
		bsgen_fill_elements(prec, tile, x->rows[i], x->rows[i], x->cols[j], roff[i],
				    coff[j], seed, which);
		put_block(prec, mat, i, j, tile, (int)x->rows[i], (int)x->cols[j]);
	}
	free(tile);
	c_dbcsr_finalize(mat);
	return 0;
}

static int setup(const struct grid *g, const struct opts *o, struct peer *pr)
{
	struct bsgen_problem *pb = &pr->pb;
	uint64_t s = o->p.seed;

	memset(pr, 0, sizeof(*pr));
	if (bsgen_make(&o->p, pb))
		return -1;
	if (convert_sizes(pb->msizes, pb->mt, &pr->msz, &pr->moff) ||
	    convert_sizes(pb->nsizes, pb->nt, &pr->nsz, &pr->noff) ||
	    convert_sizes(pb->ksizes, pb->kt, &pr->ksz, &pr->koff) ||
	    make_dist(g, pb->mt, pb->kt, &pr->a.dist) ||
	    make_dist(g, pb->kt, pb->nt, &pr->b.dist) ||
	    make_dist(g, pb->mt, pb->nt, &pr->c.dist))
		return -1;
	create_matrix(o->prec, &pr->a, "A", pr->msz, pb->mt, pr->ksz, pb->kt);
	create_matrix(o->prec, &pr->b, "B", pr->ksz, pb->kt, pr->nsz, pb->nt);
	create_matrix(o->prec, &pr->c, "C", pr->msz, pb->mt, pr->nsz, pb->nt);
	if (fill_matrix(g, o->prec, pr->a.mat, &pb->a, pr->moff, pr->koff, s, 0) ||
	    fill_matrix(g, o->prec, pr->b.mat, &pb->b, pr->koff, pr->noff, s, 1) ||
	    fill_matrix(g, o->prec, pr->c.mat, &pb->c, pr->moff, pr->noff, s, 2))
		return -1;
	return 0;
}

static void teardown(struct peer *pr)
{
	struct operand *ops[] = { &pr->a, &pr->b, &pr->c };

	for (int i = 0; i < 3; i++) {
		if (ops[i]->mat)
			c_dbcsr_release(&ops[i]->mat);
		if (ops[i]->dist)
			c_dbcsr_distribution_release(&ops[i]->dist);
	}
	free(pr->msz);
	free(pr->nsz);
	free(pr->ksz);
	free(pr->moff);
	free(pr->noff);
	free(pr->koff);
	bsgen_free(&pr->pb);
}

/* One C = A B; returns the wall clock, maximum over the ranks; *flop: DBCSR's count,
 * summed over the ranks (c_dbcsr_multiply_? returns this rank's). */
static double multiply(const struct grid *g, const struct opts *o, struct peer *pr,
		       long long *flop)
{
	const bool retain = o->p.density_c >= 0;
	const double eps = o->eps;
	double t, tmax;

	*flop = 0;
	MPI_Barrier(g->cart);
	t = MPI_Wtime();
	multiply_typed(o->prec, pr->a.mat, pr->b.mat, pr->c.mat, &retain, eps > 0 ? &eps : NULL,
		       flop);
	MPI_Barrier(g->cart);
	t = MPI_Wtime() - t;
	MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, g->cart);
	MPI_Allreduce(MPI_IN_PLACE, flop, 1, MPI_LONG_LONG, MPI_SUM, g->cart);
	return tmax;
}

/* A rows x cols dense column-major copy of @p x in double complex, from its values in
 * type @p prec (zeros for absent tiles). */
static double _Complex *densify(char prec, const struct bsgen_matrix *x,
				const int64_t *roff, const int64_t *coff, int64_t rows,
				int64_t cols, uint64_t seed, int which)
{
	double _Complex *d = calloc((size_t)(rows * cols), sizeof(*d));
	int64_t cap = largest(x->rows, x->mt) * largest(x->cols, x->nt);
	void *tile = malloc((size_t)cap * element_size(prec));

	for (int64_t e = 0; d && tile && e < x->npresent; e++) {
		int64_t i = x->pairs[2 * e], j = x->pairs[2 * e + 1], tr = x->rows[i];

		bsgen_fill_elements(prec, tile, tr, tr, x->cols[j], roff[i], coff[j], seed,
				    which);
		for (int64_t c = 0; c < x->cols[j]; c++)
			for (int64_t r = 0; r < tr; r++)
				d[roff[i] + r + (coff[j] + c) * rows] = get(prec, tile, r + c * tr);
	}
	if (!tile) {
		free(d);
		d = NULL;
	}
	free(tile);
	return d;
}

static double frobenius2(const double _Complex *x, int64_t n)
{
	double s = 0;

	for (int64_t i = 0; i < n; i++)
		s += creal(x[i] * conj(x[i]));
	return s;
}

/* Dense operands of the reference and which C tiles the reference holds. */
struct reference {
	double _Complex *a, *b;
	int64_t m, n, k;
	uint8_t *cpat;   /* i + j * mt */
	uint8_t *seen;   /* C tiles this rank found in DBCSR's C */
};

/* Squared error of one DBCSR block of C (rows x cols, transposed if tr) of type @p prec. */
static double block_error2(char prec, const struct peer *pr, const struct reference *r,
			   int i, int j, const void *blk, bool tr)
{
	int64_t rows = pr->msz[i], cols = pr->nsz[j], r0 = pr->moff[i], c0 = pr->noff[j];
	bool in = r->cpat[i + (int64_t)j * pr->pb.mt];
	double err2 = 0;

	for (int64_t c = 0; c < cols; c++)
		for (int64_t q = 0; q < rows; q++) {
			double _Complex ref = 0, got = get(prec, blk, tr ? c + q * cols : q + c * rows);

			for (int64_t p = 0; in && p < r->k; p++)
				ref += r->a[r0 + q + p * r->m] * r->b[p + (c0 + c) * r->k];
			err2 += creal((got - ref) * conj(got - ref));
		}
	return err2;
}

/* Squared norm of the reference tile (i, j): what a missing DBCSR block loses. */
static double missing_error2(const struct peer *pr, const struct reference *r, int i, int j)
{
	int64_t rows = pr->msz[i], cols = pr->nsz[j], r0 = pr->moff[i], c0 = pr->noff[j];
	double err2 = 0;

	for (int64_t c = 0; c < cols; c++)
		for (int64_t q = 0; q < rows; q++) {
			double _Complex ref = 0;

			for (int64_t p = 0; p < r->k; p++)
				ref += r->a[r0 + q + p * r->m] * r->b[p + (c0 + c) * r->k];
			err2 += creal(ref * conj(ref));
		}
	return err2;
}

/* This rank's squared error: its DBCSR blocks, then the reference tiles it lacks. */
static double local_error2(const struct grid *g, char prec, const struct peer *pr,
			   struct reference *r)
{
	const struct bsgen_matrix *c = &pr->pb.c;
	const bool ro = true;
	dbcsr_iterator it = NULL;
	double err2 = 0;

	c_dbcsr_iterator_start(&it, pr->c.mat, NULL, NULL, NULL, NULL, &ro);
	while (c_dbcsr_iterator_blocks_left(it)) {
		int i, j;
		bool tr = false;
		const void *blk = next_block(prec, it, &i, &j, &tr);

		err2 += block_error2(prec, pr, r, i, j, blk, tr);
		r->seen[i + (int64_t)j * pr->pb.mt] = 1;
	}
	c_dbcsr_iterator_stop(&it);
	for (int64_t e = 0; e < c->npresent; e++) {
		int i = (int)c->pairs[2 * e], j = (int)c->pairs[2 * e + 1], owner = -1;

		c_dbcsr_get_stored_coordinates(pr->c.mat, i, j, &owner);
		if (owner == g->rank && !r->seen[i + (int64_t)j * pr->pb.mt])
			err2 += missing_error2(pr, r, i, j);
	}
	return err2;
}

static int make_reference(const struct opts *o, const struct peer *pr, struct reference *r)
{
	const struct bsgen_problem *pb = &pr->pb;
	int64_t tiles = pb->mt * pb->nt;

	r->m = o->p.m;
	r->n = o->p.n;
	r->k = o->p.k;
	r->a = densify(o->prec, &pb->a, pr->moff, pr->koff, r->m, r->k, o->p.seed, 0);
	r->b = densify(o->prec, &pb->b, pr->koff, pr->noff, r->k, r->n, o->p.seed, 1);
	r->cpat = calloc((size_t)tiles, 1);
	r->seen = calloc((size_t)tiles, 1);
	if (!r->a || !r->b || !r->cpat || !r->seen)
		return -1;
	for (int64_t e = 0; e < pb->c.npresent; e++)
		r->cpat[pb->c.pairs[2 * e] + pb->c.pairs[2 * e + 1] * pb->mt] = 1;
	return 0;
}

/* Normalized residual of C against the dense reference (collective); < 0 on failure. */
static double residual(const struct grid *g, const struct opts *o, const struct peer *pr)
{
	struct reference r = { 0 };
	double local[2] = { 0, 1 }, sum[2], na, nb, scale;   /* squared error, failed */

	if (!make_reference(o, pr, &r)) {
		local[0] = local_error2(g, o->prec, pr, &r);
		local[1] = 0;
	}
	MPI_Allreduce(local, sum, 2, MPI_DOUBLE, MPI_SUM, g->cart);
	na = r.a ? sqrt(frobenius2(r.a, r.m * r.k)) : 0;
	nb = r.b ? sqrt(frobenius2(r.b, r.k * r.n)) : 0;
	free(r.a);
	free(r.b);
	free(r.cpat);
	free(r.seen);
	if (sum[1] > 0) {
		if (g->rank == 0)
			fprintf(stderr, "dbcsr_peer: --check: out of memory\n");
		return -1;
	}
	scale = na * nb * (double)o->p.k *
		(o->prec == 's' || o->prec == 'c' ? FLT_EPSILON : DBL_EPSILON);
	if (scale == 0)
		return sum[0] == 0 ? 0 : INFINITY;
	return sqrt(sum[0]) / scale;
}

static void print_header(void)
{
	printf("impl,ranks,threads,m,n,k,lo,hi,density_a,density_b,density_c,seed,eps,"
	       "mt,nt,kt,products,iter,seconds,useful_gflop,gflops,residual,prec\n");
}

static void print_row(const struct opts *o, const struct peer *pr, int ranks,
		      long long products, double gflop, int iter, double sec, double res)
{
	const struct bsgen_params *p = &o->p;
	const struct bsgen_problem *pb = &pr->pb;

	printf("dbcsr,%d,%d,%lld,%lld,%lld,%lld,%lld,%g,%g,%g,%llu,%g,%lld,%lld,%lld,%lld,"
	       "%d,%.6f,%.6f,%.3f,", ranks, omp_get_max_threads(), (long long)p->m,
	       (long long)p->n, (long long)p->k, (long long)p->lo, (long long)p->hi,
	       p->density_a, p->density_b, p->density_c, (unsigned long long)p->seed, o->eps,
	       (long long)pb->mt, (long long)pb->nt, (long long)pb->kt, products, iter, sec,
	       gflop, sec > 0 ? gflop / sec : 0.0);
	if (res < 0)
		printf("-1,%c\n", o->prec);
	else
		printf("%.3e,%c\n", res, o->prec);
	fflush(stdout);
}

/* DBCSR's own flop count should equal the useful flops when nothing is filtered. */
static void compare_flops(const struct opts *o, double useful, long long flop)
{
	if (o->eps == 0 && fabs((double)flop - useful) > 1e-6 * useful)
		fprintf(stderr, "dbcsr_peer: warning: DBCSR counted %lld flops, bsgen %.0f\n",
			flop, useful);
}

/* Warm-up and timed repetitions; the residual (if --check) is of the last product. */
static int run(const struct grid *g, const struct opts *o, struct peer *pr)
{
	double useful = bsgen_flops(&pr->pb) * (is_complex(o->prec) ? 4.0 : 1.0), res = -1, *sec;
	long long products = (long long)bsgen_products(&pr->pb), flop;
	int status = 0;

	sec = malloc((size_t)o->niter * sizeof(*sec));
	if (!sec || products < 0)
		return -1;
	for (int it = -o->warmup; it < o->niter; it++) {
		double t = multiply(g, o, pr, &flop);

		if (it >= 0)
			sec[it] = t;
		if (it == -o->warmup && g->rank == 0)
			compare_flops(o, useful, flop);
	}
	if (o->check) {
		res = residual(g, o, pr);
		status = res < 0 || !(res <= RESIDUAL_LIMIT);
	}
	if (g->rank == 0) {
		if (o->csv)
			print_header();
		for (int it = 0; it < o->niter; it++)
			print_row(o, pr, g->size, products, useful * 1e-9, it, sec[it], res);
		if (status)
			fprintf(stderr, "dbcsr_peer: check FAILED: residual %g (limit %g)\n",
				res, RESIDUAL_LIMIT);
	}
	free(sec);
	return status;
}

static int check_size(const struct opts *o)
{
	const struct bsgen_params *p = &o->p;

	if (o->check && p->m * p->k + p->k * p->n > CHECK_MAX_ELEMENTS) {
		if (rank0())
			fprintf(stderr, "dbcsr_peer: --check densifies A and B: %lld elements "
				"is too many (limit %lld); use a smaller problem\n",
				(long long)(p->m * p->k + p->k * p->n), CHECK_MAX_ELEMENTS);
		return -1;
	}
	return 0;
}

static int peer_main(const struct opts *o)
{
	struct grid g;
	struct peer pr;
	int ret, ok, all_ok;

	if (make_grid(&g)) {
		fprintf(stderr, "dbcsr_peer: MPI_Cart_create failed\n");
		return 1;
	}
	c_dbcsr_init_lib_internal(&(MPI_Fint){ MPI_Comm_c2f(MPI_COMM_WORLD) }, NULL);
	ok = setup(&g, o, &pr) == 0;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, g.cart);
	if (!all_ok) {
		if (g.rank == 0)
			fprintf(stderr, "dbcsr_peer: setting the problem up failed\n");
		ret = 1;
	} else {
		ret = run(&g, o, &pr) ? 1 : 0;
	}
	teardown(&pr);
	c_dbcsr_finalize_lib();
	MPI_Comm_free(&g.cart);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o;
	int provided, ret;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	ret = parse_opts(argc, argv, &o);
	if (ret == 1 && rank0())
		usage(stdout);
	else if (ret < 0 && rank0())
		fprintf(stderr, "dbcsr_peer: see --help\n");
	if (ret == 0)
		ret = check_size(&o) ? 1 : peer_main(&o);
	else
		ret = ret < 0 ? 1 : 0;
	MPI_Finalize();
	return ret;
}
