/*
 * scalapack.c — libstargemm-scalapack: ScaLAPACK's psgemm_, pdgemm_, pcgemm_ and pzgemm_
 * with their exact signatures, so that an unmodified ScaLAPACK program multiplies through
 * stargemm when this library is linked before ScaLAPACK or preloaded (LD_PRELOAD).
 *
 * A call is checked as PBLAS checks it (an error goes to the program's pxerbla_ with
 * PBLAS's INFO: the argument's position, or 100 x the descriptor's position + the
 * entry, 1-based), then runs on
 * stargemm when it can: the three operands are used in place as submatrices of the
 * processes' local arrays (stargemm_matrix_create_submatrix(): IA/JA inside blocks,
 * RSRC/CSRC, LLD), multiplied by stargemm_gemm(), and the matrices dropped, which brings
 * C back. Otherwise the call goes to ScaLAPACK's own routine (the next definition of the
 * symbol, dlsym(RTLD_NEXT)), and the first such call of each reason is reported once on
 * rank 0's stderr. stargemm needs:
 *   - a grid of all the processes of MPI_COMM_WORLD, process (p, q) being rank p Q + q
 *     (BLACS's row-major grid on the default system context);
 *   - operands cut alike where the product joins them (op(A)'s columns and op(B)'s rows
 *     in blocks of the same size from the same offset; C's rows as op(A)'s, C's columns
 *     as op(B)'s), since a tile product multiplies whole tiles;
 *   - MPI started at MPI_THREAD_MULTIPLE, since StarPU-MPI's thread calls MPI while the
 *     program's BLACS calls do. With MPICH, this library asks for it when it is loaded
 *     (MPIR_CVAR_DEFAULT_THREAD_LEVEL, unless the environment sets it).
 * stargemm starts at the first call it runs (stargemm_init() on MPI_COMM_WORLD) and stops
 * in MPI_Finalize(), which this library wraps (the PMPI profiling interface).
 *
 * STARGEMM_SCALAPACK=off sends every call to ScaLAPACK; =count prints, at MPI_Finalize
 * on rank 0, how many calls went each way.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* BLACS and ScaLAPACK, from the program's ScaLAPACK library. */
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
int Cblacs_pnum(int ctxt, int prow, int pcol);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
	    const int *nprocs);
void pxerbla_(const int *ictxt, const char *srname, const int *info, size_t len);

/* The signature shared by the four routines (scalars and arrays of their type). */
typedef void pgemm_fn(const char *ta, const char *tb, const int *m, const int *n,
		      const int *k, const void *alpha, const void *a, const int *ia,
		      const int *ja, const int *desca, const void *b, const int *ib,
		      const int *jb, const int *descb, const void *beta, void *c, const int *ic,
		      const int *jc, const int *descc);

/* ScaLAPACK's descriptor entries (0-based). */
enum { DTYPE_, CTXT_, M_, N_, MB_, NB_, RSRC_, CSRC_, LLD_ };

/* One call, in ScaLAPACK's terms. */
struct pgemm_call {
	const char *name;            /* "PDGEMM" */
	stargemm_type type;
	char ta, tb;
	int m, n, k;
	const void *alpha, *beta;
	const void *a, *b;
	void *c;
	const int *ia, *ja, *desca, *ib, *jb, *descb, *ic, *jc, *descc;
};

/* Why a call went to ScaLAPACK. */
enum fallback { GRID, CUT, THREADS, INIT, SWITCHED_OFF, NFALLBACKS };
static const char *const fallback_why[NFALLBACKS] = {
	"the BLACS grid is not every process of MPI_COMM_WORLD in row-major order",
	"the operands are not cut alike where the product joins them",
	"MPI runs below MPI_THREAD_MULTIPLE",
	"stargemm could not start",
	"STARGEMM_SCALAPACK=off",
};

static struct {
	int started;                 /* stargemm_init() done here */
	int failed;                  /* it failed: every call to ScaLAPACK */
	long long by_stargemm, by_scalapack[NFALLBACKS];
} lib;

/* MPICH reads its default thread level for MPI_Init from the environment: ask for
 * MPI_THREAD_MULTIPLE before the program starts MPI (a setting already there wins). */
__attribute__((constructor)) static void ask_thread_multiple(void)
{
	setenv("MPIR_CVAR_DEFAULT_THREAD_LEVEL", "MPI_THREAD_MULTIPLE", 0);
}

static int is_trans(char t)
{
	return t == 'T' || t == 't' || t == 'C' || t == 'c';
}

static int valid_trans(char t)
{
	return t == 'N' || t == 'n' || is_trans(t);
}

/* PBLAS's check of a descriptor and of the submatrix (i, j) of rows x cols in it, for
 * the operand at argument position @p pos (its descriptor at pos + 3): 0, or INFO. */
static int check_operand(int pos, int rows, int cols, int i, int j, const int *desc, int ctxt)
{
	int nprow, npcol, myrow, mycol, lrows;

	Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
	if (desc[DTYPE_] != 1)
		return -((pos + 3) * 100 + DTYPE_ + 1);
	if (desc[CTXT_] != ctxt)
		return -((pos + 3) * 100 + CTXT_ + 1);
	if (desc[M_] < 0)
		return -((pos + 3) * 100 + M_ + 1);
	if (desc[N_] < 0)
		return -((pos + 3) * 100 + N_ + 1);
	if (desc[MB_] < 1)
		return -((pos + 3) * 100 + MB_ + 1);
	if (desc[NB_] < 1)
		return -((pos + 3) * 100 + NB_ + 1);
	if (desc[RSRC_] < 0 || desc[RSRC_] >= nprow)
		return -((pos + 3) * 100 + RSRC_ + 1);
	if (desc[CSRC_] < 0 || desc[CSRC_] >= npcol)
		return -((pos + 3) * 100 + CSRC_ + 1);
	lrows = numroc_(&desc[M_], &desc[MB_], &myrow, &desc[RSRC_], &nprow);
	if (desc[LLD_] < (lrows > 1 ? lrows : 1))
		return -((pos + 3) * 100 + LLD_ + 1);
	if (i < 1)
		return -(pos + 1);
	if (j < 1)
		return -(pos + 2);
	if (rows > 0 && cols > 0 && (i + rows - 1 > desc[M_] || j + cols - 1 > desc[N_]))
		return -(i + rows - 1 > desc[M_] ? pos + 1 : pos + 2);
	return 0;
}

/* PBLAS's argument checks, in argument order: 0, or INFO for pxerbla_. */
static int check_call(const struct pgemm_call *p)
{
	int ctxt = p->descc[CTXT_], info;
	int am = is_trans(p->ta) ? p->k : p->m, an = is_trans(p->ta) ? p->m : p->k;
	int bm = is_trans(p->tb) ? p->n : p->k, bn = is_trans(p->tb) ? p->k : p->n;

	if (!valid_trans(p->ta))
		return -1;
	if (!valid_trans(p->tb))
		return -2;
	if (p->m < 0)
		return -3;
	if (p->n < 0)
		return -4;
	if (p->k < 0)
		return -5;
	if ((info = check_operand(7, am, an, *p->ia, *p->ja, p->desca, ctxt)) ||
	    (info = check_operand(11, bm, bn, *p->ib, *p->jb, p->descb, ctxt)) ||
	    (info = check_operand(16, p->m, p->n, *p->ic, *p->jc, p->descc, ctxt)))
		return info;
	return 0;
}

/* Whether the grid is every process of MPI_COMM_WORLD, process (p, q) being rank
 * p Q + q: stargemm's grid. */
static int world_grid(int ctxt, int *P, int *Q)
{
	int myrow, mycol, size;

	Cblacs_gridinfo(ctxt, P, Q, &myrow, &mycol);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (*P * *Q != size)
		return 0;
	for (int p = 0; p < *P; p++)
		for (int q = 0; q < *Q; q++)
			if (Cblacs_pnum(ctxt, p, q) != p * *Q + q)
				return 0;
	return 1;
}

/* The offset of submatrix index @p i (1-based) in its block of @p b, and the block
 * size: two axes are cut alike when both agree. */
static int cut_alike(int i1, int b1, int i2, int b2)
{
	return b1 == b2 && (i1 - 1) % b1 == (i2 - 1) % b2;
}

/* Whether stargemm's tiles of the three submatrices join: op(A)'s columns as op(B)'s
 * rows, C's rows as op(A)'s, C's columns as op(B)'s (a single tile needs no more). */
static int operands_cut_alike(const struct pgemm_call *p)
{
	int ta = is_trans(p->ta), tb = is_trans(p->tb);
	/* op(A) rows: A's rows, or its columns when transposed; likewise the others. */
	int ar_i = ta ? *p->ja : *p->ia, ar_b = ta ? p->desca[NB_] : p->desca[MB_];
	int ac_i = ta ? *p->ia : *p->ja, ac_b = ta ? p->desca[MB_] : p->desca[NB_];
	int br_i = tb ? *p->jb : *p->ib, br_b = tb ? p->descb[NB_] : p->descb[MB_];
	int bc_i = tb ? *p->ib : *p->jb, bc_b = tb ? p->descb[MB_] : p->descb[NB_];

	return cut_alike(ac_i, ac_b, br_i, br_b) && cut_alike(ar_i, ar_b, *p->ic, p->descc[MB_]) &&
	       cut_alike(bc_i, bc_b, *p->jc, p->descc[NB_]);
}

/* Where the call goes: -1 to stargemm, else the reason it goes to ScaLAPACK. */
static int route(const struct pgemm_call *p, int *P, int *Q)
{
	const char *env = getenv("STARGEMM_SCALAPACK");
	int provided;

	if (env && !strcmp(env, "off"))
		return SWITCHED_OFF;
	if (lib.failed)
		return INIT;
	if (!world_grid(p->descc[CTXT_], P, Q))
		return GRID;
	if (!operands_cut_alike(p))
		return CUT;
	MPI_Query_thread(&provided);
	if (provided < MPI_THREAD_MULTIPLE)
		return THREADS;
	return -1;
}

/* stargemm on the program's MPI, started once. */
static int start(void)
{
	struct stargemm_config cfg;

	if (lib.started)
		return 0;
	stargemm_config_init(&cfg);
	cfg.comm = MPI_COMM_WORLD;
	cfg.count_transfers = 0;
	if (stargemm_init(&cfg, NULL, NULL)) {
		fprintf(stderr, "stargemm-scalapack: rank %d: %s; ScaLAPACK runs every call\n",
			stargemm_rank(), stargemm_last_error());
		lib.failed = 1;
		return -1;
	}
	lib.started = 1;
	return 0;
}

/* One operand as a submatrix in place. */
static int operand(struct stargemm_matrix **X, stargemm_type type, int rows, int cols,
		   int i, int j, const int *desc, int P, int Q, const void *local)
{
	return stargemm_matrix_create_submatrix(X, type, rows, cols, i - 1, j - 1, desc[MB_],
						desc[NB_], desc[RSRC_], desc[CSRC_], P, Q,
						(void *)local, desc[LLD_]);
}

static int by_stargemm(const struct pgemm_call *p, int P, int Q)
{
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	int ta = is_trans(p->ta), tb = is_trans(p->tb), ret;

	ret = operand(&A, p->type, ta ? p->k : p->m, ta ? p->m : p->k, *p->ia, *p->ja,
		      p->desca, P, Q, p->a);
	ret = ret ? ret : operand(&B, p->type, tb ? p->n : p->k, tb ? p->k : p->n, *p->ib,
				  *p->jb, p->descb, P, Q, p->b);
	ret = ret ? ret : operand(&C, p->type, p->m, p->n, *p->ic, *p->jc, p->descc, P, Q, p->c);
	ret = ret ? ret : stargemm_gemm(p->ta, p->tb, p->alpha, A, B, p->beta, C);
	/* Dropping the matrices brings C's tiles back to the arrays (with GPUs). */
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	return ret;
}

static int world_rank(void)
{
	int rank;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	return rank;
}

static void report_fallback(int why)
{
	if (lib.by_scalapack[why]++ == 0 && world_rank() == 0 && why != SWITCHED_OFF)
		fprintf(stderr, "stargemm-scalapack: a call goes to ScaLAPACK: %s (said once)\n",
			fallback_why[why]);
}

/* ScaLAPACK's own routine of this name. */
static pgemm_fn *scalapack_routine(const char *symbol)
{
	return (pgemm_fn *)dlsym(RTLD_NEXT, symbol);
}

/* One call: checked, then run by stargemm or by ScaLAPACK's @p symbol. */
static void pgemm(const struct pgemm_call *p, const char *symbol)
{
	int ctxt = p->descc[CTXT_], nprow, npcol, myrow, mycol, P, Q, info, why;
	const struct stargemm__element *e = stargemm__element(p->type);
	pgemm_fn *next;

	Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
	if (myrow < 0 || mycol < 0)   /* not in the grid: nothing to do, as PBLAS */
		return;
	if ((info = check_call(p))) {
		info = -info;
		pxerbla_(&ctxt, p->name, &info, strlen(p->name));
		return;
	}
	if (p->m == 0 || p->n == 0 ||
	    ((p->k == 0 || e->load(p->alpha) == 0.0) && e->load(p->beta) == 1.0))
		return;
	why = route(p, &P, &Q);
	if (why < 0 && start() == 0) {
		int ret = by_stargemm(p, P, Q);

		if (ret == 0) {
			lib.by_stargemm++;
			return;
		}
		/* Tasks failed: C is undefined, and the call has no status to return. */
		if (ret == -EIO) {
			fprintf(stderr, "stargemm-scalapack: %s: %s\n", p->name,
				stargemm_last_error());
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		/* Refused before any task (C intact), on every rank alike. */
		if (stargemm_rank() == 0)
			fprintf(stderr, "stargemm-scalapack: %s: %s; ScaLAPACK runs it\n", p->name,
				stargemm_last_error());
		why = INIT;
	} else if (why < 0) {
		why = INIT;
	}
	report_fallback(why);
	next = scalapack_routine(symbol);
	if (!next) {
		fprintf(stderr, "stargemm-scalapack: %s not found after this library: link "
			"ScaLAPACK after it\n", symbol);
		abort();
	}
	next(&p->ta, &p->tb, &p->m, &p->n, &p->k, p->alpha, p->a, p->ia, p->ja, p->desca, p->b,
	     p->ib, p->jb, p->descb, p->beta, p->c, p->ic, p->jc, p->descc);
}

/* The four entry points: ScaLAPACK's signatures (Fortran: arguments by address). */
void psgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
	     const void *alpha, const void *a, const int *ia, const int *ja, const int *desca,
	     const void *b, const int *ib, const int *jb, const int *descb, const void *beta,
	     void *c, const int *ic, const int *jc, const int *descc)
{
	struct pgemm_call p = { "PSGEMM", STARGEMM_S, *ta, *tb, *m, *n, *k, alpha, beta, a, b,
				c, ia, ja, desca, ib, jb, descb, ic, jc, descc };

	pgemm(&p, "psgemm_");
}

void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
	     const void *alpha, const void *a, const int *ia, const int *ja, const int *desca,
	     const void *b, const int *ib, const int *jb, const int *descb, const void *beta,
	     void *c, const int *ic, const int *jc, const int *descc)
{
	struct pgemm_call p = { "PDGEMM", STARGEMM_D, *ta, *tb, *m, *n, *k, alpha, beta, a, b,
				c, ia, ja, desca, ib, jb, descb, ic, jc, descc };

	pgemm(&p, "pdgemm_");
}

void pcgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
	     const void *alpha, const void *a, const int *ia, const int *ja, const int *desca,
	     const void *b, const int *ib, const int *jb, const int *descb, const void *beta,
	     void *c, const int *ic, const int *jc, const int *descc)
{
	struct pgemm_call p = { "PCGEMM", STARGEMM_C, *ta, *tb, *m, *n, *k, alpha, beta, a, b,
				c, ia, ja, desca, ib, jb, descb, ic, jc, descc };

	pgemm(&p, "pcgemm_");
}

void pzgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
	     const void *alpha, const void *a, const int *ia, const int *ja, const int *desca,
	     const void *b, const int *ib, const int *jb, const int *descb, const void *beta,
	     void *c, const int *ic, const int *jc, const int *descc)
{
	struct pgemm_call p = { "PZGEMM", STARGEMM_Z, *ta, *tb, *m, *n, *k, alpha, beta, a, b,
				c, ia, ja, desca, ib, jb, descb, ic, jc, descc };

	pgemm(&p, "pzgemm_");
}

/* stargemm stops before MPI does; with STARGEMM_SCALAPACK=count rank 0 says how the
 * calls went. */
int MPI_Finalize(void)
{
	const char *env = getenv("STARGEMM_SCALAPACK");

	if (env && !strcmp(env, "count") && world_rank() == 0) {
		fprintf(stderr, "stargemm-scalapack: %lld calls by stargemm", lib.by_stargemm);
		for (int w = 0; w < NFALLBACKS; w++)
			if (lib.by_scalapack[w])
				fprintf(stderr, ", %lld by ScaLAPACK (%s)", lib.by_scalapack[w],
					fallback_why[w]);
		fprintf(stderr, "\n");
	}
	if (lib.started) {
		stargemm_finalize();
		lib.started = 0;
	}
	return PMPI_Finalize();
}
