/*
 * tests/test_scalapack.c — a plain ScaLAPACK program (MPI_Init, BLACS grid, descinit_,
 * p?gemm_) linked with libstargemm-scalapack before ScaLAPACK: its calls go to
 * stargemm, and every result must equal
 * ScaLAPACK's own (the routine looked up in the ScaLAPACK library itself, on copies of
 * C), elementwise within the type's rounding, C's elements outside the submatrix
 * untouched. Cases: the four types, ops N/T/C, submatrices starting inside blocks,
 * first blocks off process (0, 0), operands not cut alike where the product joins them
 * (other offsets; other block sizes on all three joins), a one-process axis (blocks
 * merged into tiles: one rank, 1 x Q and P x 1 grids),
 * StarPU's workers paused between calls (idle_between_calls()), and bad arguments
 * reported through PB_Cabort with PBLAS's INFO (minus the argument's position, or minus
 * 100 x the descriptor's position + the entry). The grid's ranks go
 * in row-major order (Cblacs_gridinit's "Row"), column-major order ("Col") or, "map",
 * in reverse row-major order (Cblacs_gridmap): stargemm runs the calls on each. With
 * more processes than P*Q, the grid is made of some of them: the first ones ("Row",
 * "Col") or the last ones in row-major order ("last"), the others idle; the double
 * cases then run once more on a grid of every process (P*Q x 1), which is not the
 * processes stargemm runs on: those calls go to ScaLAPACK, with the same results.
 *
 * Usage: test_scalapack P Q [Row|Col|map|last]   (under mpiexec with P*Q processes or
 * more; Row by default)
 */
#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../src/scalapack.h"
#include "check.h"

/* What the program's PB_Cabort saw last: PBLAS reports a bad argument there (ScaLAPACK's
 * own prints it and aborts; the PBLAS testers define theirs, as this program does). */
static int last_info;
static char last_name[8];

void PB_Cabort(int ictxt, char *rout, int info)
{
	(void)ictxt;
	last_info = info;
	snprintf(last_name, sizeof(last_name), "%s", rout);
}

/* One distributed array and its descriptor. */
struct array {
	int m, n, mb, nb, rsrc, csrc, lld, lrows, lcols;
	int desc[9];
	void *a;
};

static int grid[4];   /* nprow, npcol, myrow, mycol; -1 outside the grid */
static int ctxt;
static MPI_Comm gridcomm;   /* the grid's processes (MPI_COMM_NULL outside) */
static int nprocs;          /* in MPI_COMM_WORLD */

static int array_init(struct array *x, stargemm_type t, int m, int n, int mb, int nb,
		      int rsrc, int csrc, uint64_t seed)
{
	int info;

	*x = (struct array){ .m = m, .n = n, .mb = mb, .nb = nb, .rsrc = rsrc % grid[0],
			     .csrc = csrc % grid[1] };
	x->lrows = numroc_(&x->m, &x->mb, &grid[2], &x->rsrc, &grid[0]);
	x->lcols = numroc_(&x->n, &x->nb, &grid[3], &x->csrc, &grid[1]);
	x->lld = x->lrows + 1;
	descinit_(x->desc, &x->m, &x->n, &x->mb, &x->nb, &x->rsrc, &x->csrc, &ctxt, &x->lld,
		  &info);
	x->a = malloc((size_t)(x->lld * (x->lcols > 0 ? x->lcols : 1)) * stargemm_type_size(t));
	if (info || !x->a)
		return -1;
	for (int j = 0; j < x->lcols; j++)
		for (int i = 0; i < x->lld; i++)
			sg_put(t, x->a, i + (int64_t)j * x->lld,
			       stargemm_random_element(seed, i * 7919 + grid[2], j * 104729 +
							grid[3]) +
				       I * stargemm_random_element(~seed, i, j));
	return 0;
}

/* ScaLAPACK's own routine, from its library. */
static pgemm_fn *scalapack(const char *symbol)
{
	static void *lib;

	if (!lib)
		lib = dlopen("libscalapack-mpich.so", RTLD_NOW | RTLD_GLOBAL);
	return lib ? (pgemm_fn *)dlsym(lib, symbol) : NULL;
}

static pgemm_fn *ours(stargemm_type t)
{
	return t == STARGEMM_S ? psgemm_ : t == STARGEMM_D ? pdgemm_ : t == STARGEMM_C ? pcgemm_
										  : pzgemm_;
}

static const char *symbol(stargemm_type t)
{
	return t == STARGEMM_S ? "psgemm_" : t == STARGEMM_D ? "pdgemm_"
				 : t == STARGEMM_C ? "pcgemm_" : "pzgemm_";
}

/* A product case: sub(C) = alpha op(sub(A)) op(sub(B)) + beta sub(C). */
struct pcase {
	char ta, tb;
	int m, n, k;
	int ia, ja, ib, jb, ic, jc;          /* 1-based */
	int amb, anb, bmb, bnb, cmb, cnb;    /* blocks */
	int asrc, bsrc, csrc;                /* first block on process (src, src) */
};

/* Largest difference between the two local arrays of C, relative to the scale. */
static double compare(stargemm_type t, const struct array *c, const void *got,
		      const void *want, double scale)
{
	double diff = 0.0;

	for (int64_t e = 0; e < (int64_t)c->lld * c->lcols; e++)
		diff = fmax(diff, cabs(sg_get(t, got, e) - sg_get(t, want, e)));
	return diff / scale;
}

static int product_case(stargemm_type t, const struct pcase *pc)
{
	struct array a, b, c;
	int am = pc->ta == 'N' ? pc->m : pc->k, an = pc->ta == 'N' ? pc->k : pc->m;
	int bm = pc->tb == 'N' ? pc->k : pc->n, bn = pc->tb == 'N' ? pc->n : pc->k;
	double alpha[2], beta[2], eps = t == STARGEMM_S || t == STARGEMM_C ? FLT_EPSILON
									: DBL_EPSILON;
	double r = INFINITY;
	void *want = NULL;
	pgemm_fn *ref = scalapack(symbol(t));
	size_t bytes;
	int good;

	sg_put(t, alpha, 0, 1.25 - 0.5 * I);
	sg_put(t, beta, 0, 0.5 + 0.25 * I);
	if (!ref || array_init(&a, t, pc->ia - 1 + am + 3, pc->ja - 1 + an + 2, pc->amb, pc->anb,
			       pc->asrc, pc->asrc, 1) ||
	    array_init(&b, t, pc->ib - 1 + bm + 1, pc->jb - 1 + bn + 4, pc->bmb, pc->bnb,
		       pc->bsrc, pc->bsrc, 2) ||
	    array_init(&c, t, pc->ic - 1 + pc->m + 2, pc->jc - 1 + pc->n + 1, pc->cmb, pc->cnb,
		       pc->csrc, pc->csrc, 3)) {
		printf("process (%d, %d): cannot set up the case%s FAIL\n", grid[2], grid[3],
		       ref ? "" : " (ScaLAPACK's routine not found)");
		return 0;
	}
	bytes = (size_t)(c.lld * (c.lcols > 0 ? c.lcols : 1)) * stargemm_type_size(t);
	want = malloc(bytes);
	memcpy(want, c.a, bytes);
	ref(&pc->ta, &pc->tb, &pc->m, &pc->n, &pc->k, alpha, a.a, &pc->ia, &pc->ja, a.desc, b.a,
	    &pc->ib, &pc->jb, b.desc, beta, want, &pc->ic, &pc->jc, c.desc);
	ours(t)(&pc->ta, &pc->tb, &pc->m, &pc->n, &pc->k, alpha, a.a, &pc->ia, &pc->ja, a.desc,
		b.a, &pc->ib, &pc->jb, b.desc, beta, c.a, &pc->ic, &pc->jc, c.desc);
	/* Elements are at most 0.71 in modulus: |alpha| k + |beta| bounds the sums. */
	r = compare(t, &c, c.a, want, (2.0 * pc->k + 1.0) * pc->k * eps);
	MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_DOUBLE, MPI_MAX, gridcomm);
	good = r < 1.0;
	if (grid[2] == 0 && grid[3] == 0)
		printf("%c %c%c %d x %d x %d A(%d,%d) %dx%d src %d, B(%d,%d) %dx%d src %d, "
		       "C(%d,%d) %dx%d src %d: difference to ScaLAPACK %.2e %s\n", (char)t,
		       pc->ta, pc->tb, pc->m, pc->n, pc->k, pc->ia, pc->ja, pc->amb, pc->anb,
		       pc->asrc, pc->ib, pc->jb, pc->bmb, pc->bnb, pc->bsrc, pc->ic, pc->jc,
		       pc->cmb, pc->cnb, pc->csrc, r, good ? "PASS" : "FAIL");
	free(a.a);
	free(b.a);
	free(c.a);
	free(want);
	return good;
}

/* Between two calls the library keeps StarPU's workers paused: while the program
 * sleeps, its process uses at most a quarter of the time in CPU (an idle StarPU worker
 * polls for tasks and alone would use all of it). Checked on every process. */
static int idle_between_calls(void)
{
	const struct timespec nap = { 0, 200000000 };
	struct rusage before, after;
	double wall = MPI_Wtime(), cpu;
	int good;

	getrusage(RUSAGE_SELF, &before);
	nanosleep(&nap, NULL);
	getrusage(RUSAGE_SELF, &after);
	wall = MPI_Wtime() - wall;
	cpu = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
	      (double)(after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
	      1e-6 * (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) +
	      1e-6 * (double)(after.ru_stime.tv_usec - before.ru_stime.tv_usec);
	good = cpu <= 0.25 * wall;
	printf("process (%d, %d) between calls: %.3f s of CPU in %.3f s %s\n", grid[2],
	       grid[3], cpu, wall, good ? "PASS" : "FAIL");
	return good;
}

/* A bad argument: the program's pxerbla_ gets PBLAS's INFO, C is untouched. */
static int bad_case(const char *what, char ta, int lld_a, int mb_b, int ia, int expect)
{
	struct array a, b, c;
	int m = 40, n = 30, k = 20, one = 1, good;
	double alpha = 1.0, beta = 0.0;

	if (array_init(&a, STARGEMM_D, m, k, 8, 8, 0, 0, 4) ||
	    array_init(&b, STARGEMM_D, k, n, 8, 8, 0, 0, 5) ||
	    array_init(&c, STARGEMM_D, m, n, 8, 8, 0, 0, 6))
		return 0;
	a.desc[8] = lld_a ? lld_a : a.desc[8];
	b.desc[4] = mb_b ? mb_b : b.desc[4];
	last_info = 0;
	pdgemm_(&ta, "N", &m, &n, &k, &alpha, a.a, &ia, &one, a.desc, b.a, &one, &one, b.desc,
		&beta, c.a, &one, &one, c.desc);
	good = last_info == expect && !strcmp(last_name, "PDGEMM");
	if (grid[2] == 0 && grid[3] == 0)
		printf("bad argument, %-34s PB_Cabort(\"%s\", %d) (expected %d) %s\n", what,
		       last_name, last_info, expect, good ? "PASS" : "FAIL");
	free(a.a);
	free(b.a);
	free(c.a);
	return good;
}

/* The rank of grid process (p, q) in @p order, on a P x Q grid. */
static int order_rank(const char *order, int p, int q, int P, int Q)
{
	if (!strcmp(order, "Col"))
		return q * P + p;
	if (!strcmp(order, "last"))
		return nprocs - P * Q + p * Q + q;
	return !strcmp(order, "map") ? P * Q - 1 - (p * Q + q) : p * Q + q;
}

/* The P x Q BLACS grid in @p order, on processes of MPI_COMM_WORLD (the default system
 * context), and gridcomm: 1 if each process of the grid is where @p order puts its
 * rank. Collective over MPI_COMM_WORLD. */
static int grid_init(const char *order, int P, int Q)
{
	int *map = malloc((size_t)(P * Q) * sizeof(*map)), rank, good = 1;

	Cblacs_get(-1, 0, &ctxt);
	if (!strcmp(order, "map") || !strcmp(order, "last")) {
		/* usermap is column-major: (p, q) at p + q P */
		for (int p = 0; p < P; p++)
			for (int q = 0; q < Q; q++)
				map[p + q * P] = order_rank(order, p, q, P, Q);
		Cblacs_gridmap(&ctxt, map, P, P, Q);
	} else {
		Cblacs_gridinit(&ctxt, order, P, Q);
	}
	free(map);
	Cblacs_gridinfo(ctxt, &grid[0], &grid[1], &grid[2], &grid[3]);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (grid[2] >= 0)
		good = rank == order_rank(order, grid[2], grid[3], P, Q);
	MPI_Comm_split(MPI_COMM_WORLD, grid[2] >= 0 ? 0 : MPI_UNDEFINED, rank, &gridcomm);
	if (!good)
		printf("rank %d: process (%d, %d) of the %s grid is not where expected FAIL\n",
		       rank, grid[2], grid[3], order);
	return good;
}

/* Every case of every type on the grid, then the process checks (its own process). */
static int grid_cases(const struct pcase *cases, int ncases)
{
	const stargemm_type types[] = { STARGEMM_S, STARGEMM_D, STARGEMM_C, STARGEMM_Z };
	int good = 1;

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (int c = 0; c < ncases; c++)
			good &= product_case(types[t], &cases[c]);
	good &= idle_between_calls();
	good &= bad_case("transa 'X'", 'X', 0, 0, 1, -1);
	good &= bad_case("LLD of A below its local rows", 'N', 1, 0, 1, -(10 * 100 + 9));
	good &= bad_case("MB of B < 1", 'N', 0, -1, 1, -(14 * 100 + 5));
	good &= bad_case("IA beyond A", 'N', 0, 0, 3, -8);
	return good;
}

static void grid_exit(void)
{
	if (grid[2] >= 0) {
		Cblacs_gridexit(ctxt);
		MPI_Comm_free(&gridcomm);
	}
}

int main(int argc, char **argv)
{
	/* Cut alike but the last two: other offsets, then other block sizes everywhere. */
	const struct pcase cases[] = {
		{ 'N', 'N', 97, 83, 71, 1, 1, 1, 1, 1, 1, 16, 16, 16, 16, 16, 16, 0, 0, 0 },
		{ 'N', 'N', 97, 83, 71, 5, 11, 3, 8, 17, 15, 12, 8, 8, 7, 12, 7, 1, 0, 1 },
		{ 'T', 'C', 64, 90, 77, 6, 2, 9, 6, 2, 9, 5, 8, 8, 5, 8, 8, 1, 1, 0 },
		{ 'C', 'N', 50, 61, 45, 4, 7, 4, 1, 7, 7, 6, 6, 6, 6, 6, 6, 0, 1, 1 },
		{ 'N', 'T', 60, 50, 40, 2, 3, 5, 7, 1, 1, 10, 10, 10, 10, 10, 10, 0, 0, 0 },
		{ 'T', 'N', 70, 55, 63, 3, 4, 2, 5, 6, 2, 9, 7, 5, 11, 6, 8, 1, 0, 1 },
	};
	const int ncases = (int)(sizeof(cases) / sizeof(cases[0]));
	const char *order = argc > 3 ? argv[3] : "Row";
	int provided, P, Q, good;

	MPI_Init(&argc, &argv);
	MPI_Query_thread(&provided);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	P = argc > 2 ? atoi(argv[1]) : nprocs;
	Q = argc > 2 ? atoi(argv[2]) : 1;
	good = grid_init(order, P, Q);
	if (grid[2] == 0 && grid[3] == 0)
		printf("%dx%d grid in %s order on %d of %d processes (process (0, 0) is rank %d), "
		       "MPI thread level %d (MPI_THREAD_MULTIPLE = %d)\n", P, Q, order, P * Q,
		       nprocs, order_rank(order, 0, 0, P, Q), provided, MPI_THREAD_MULTIPLE);
	if (grid[2] >= 0)
		good &= grid_cases(cases, ncases);
	grid_exit();
	if (P * Q < nprocs) {   /* a grid of other processes: ScaLAPACK's */
		good &= grid_init("Row", nprocs, 1);
		if (grid[2] == 0)
			printf("then a %dx1 grid of every process:\n", nprocs);
		for (int c = 0; c < ncases; c++)
			good &= product_case(STARGEMM_D, &cases[c]);
		grid_exit();
	}
	MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	MPI_Finalize();
	return good ? 0 : 1;
}
