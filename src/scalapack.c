/*
 * scalapack.c — libstargemm-scalapack: ScaLAPACK's psgemm_, pdgemm_, pcgemm_ and pzgemm_
 * with their exact signatures, so that an unmodified ScaLAPACK program multiplies through
 * stargemm when this library is linked before ScaLAPACK or preloaded (LD_PRELOAD).
 *
 * A call is checked as PBLAS checks it (an error goes to PB_Cabort, as in PBLAS, with
 * PBLAS's INFO: minus the argument's position, or minus 100 x the descriptor's
 * position + its entry; ScaLAPACK's PB_Cabort reports it and aborts, its testers'
 * records it), then runs on
 * stargemm when it can: the three operands are used in place as submatrices of the
 * processes' local arrays (stargemm__matrix_create_in_place(): IA/JA inside blocks,
 * RSRC/CSRC, LLD, both descriptor types), multiplied by stargemm_gemm(), and the
 * matrices dropped, which brings C back. A tile product multiplies whole tiles, so two
 * axes the product joins (op(A)'s columns and op(B)'s rows; C's rows and op(A)'s; C's
 * columns and op(B)'s) must be tiled alike: when their blocks differ (other sizes or
 * offsets) each is also cut where the other's blocks end, the pieces staying where
 * their block lies (join()); when both lie on one process, several consecutive blocks
 * make a tile. Otherwise the call goes to ScaLAPACK's own routine (the next definition
 * of the symbol, dlsym(RTLD_NEXT)), and the first such call of each reason is reported
 * once by the grid's process (0, 0) on its stderr. stargemm needs:
 *   - to run on the grid's processes. It starts in MPI_Init() (this library wraps it
 *     and MPI_Init_thread()) on every process, and each grid's calls run on a
 *     communicator of the grid's processes (enter_grid(): made at the grid's first call,
 *     in world rank order, in any shape and order of the grid). With
 *     STARGEMM_SCALAPACK_START=first-call, or when MPI was started otherwise, it starts
 *     at the first call it runs, on that grid's processes (all of MPI_COMM_WORLD or a
 *     communicator of theirs), and a grid of other processes goes to ScaLAPACK; there a
 *     grid of some of the processes needs FxT tracing off (StarPU-MPI 1.3 starts
 *     tracing with a barrier on MPI_COMM_WORLD; stargemm leaves it off unless
 *     STARPU_FXT_TRACE asks for it);
 *   - first blocks IMB/INB no larger than MB/NB (struct stargemm__block_axis);
 *   - MPI started at MPI_THREAD_MULTIPLE, since StarPU-MPI's thread calls MPI while the
 *     program's BLACS calls do. With MPICH, this library asks for it when it is loaded
 *     (MPIR_CVAR_DEFAULT_THREAD_LEVEL, unless the environment sets it).
 * It also sends ScaLAPACK the calls too small to gain from it: fewer flops per process
 * than STARGEMM_SCALAPACK_MIN_FLOPS (src/settings.c), silently.
 * stargemm starts in MPI_Init() (start_everywhere(); or at the first call it runs,
 * start()), each process with its share of the node's cores unless STARPU_NCPU is set,
 * its workers paused between calls, and stops in MPI_Finalize(), which this library
 * wraps too (the PMPI profiling interface).
 *
 * STARGEMM_SCALAPACK=off sends every call to ScaLAPACK; =count prints, at MPI_Finalize
 * on rank 0, how many calls went each way (on the process that made most of them).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "scalapack.h"

/* A descriptor, read from either of PBLAS's layouts: type 1 (9 entries: DTYPE, CTXT, M,
 * N, MB, NB, RSRC, CSRC, LLD) or type 2 (11: IMB and INB, the first block's size, after
 * N). Type 1 reads as IMB = MB, INB = NB. */
enum field { F_DTYPE, F_CTXT, F_M, F_N, F_IMB, F_INB, F_MB, F_NB, F_RSRC, F_CSRC, F_LLD, NFIELDS };
struct desc {
	int v[NFIELDS];
};

/* The 1-based entry of @p f in a descriptor of type @p dtype, for PBLAS's INFO. */
static int entry(int dtype, enum field f)
{
	static const int type1[NFIELDS] = { 1, 2, 3, 4, 5, 6, 5, 6, 7, 8, 9 };

	return dtype == 2 ? (int)f + 1 : type1[f];
}

/* 0, or -1 for a DTYPE that is neither 1 nor 2. */
static int read_desc(const int *d, struct desc *x)
{
	static const enum field type1[9] = { F_DTYPE, F_CTXT, F_M, F_N, F_MB, F_NB, F_RSRC,
					     F_CSRC, F_LLD };

	memset(x, 0, sizeof(*x));
	x->v[F_DTYPE] = d[0];
	if (d[0] == 2) {
		for (int f = 0; f < NFIELDS; f++)
			x->v[f] = d[f];
		return 0;
	}
	if (d[0] != 1)
		return -1;
	for (int e = 0; e < 9; e++)
		x->v[type1[e]] = d[e];
	x->v[F_IMB] = x->v[F_MB];
	x->v[F_INB] = x->v[F_NB];
	return 0;
}

/* The context of a descriptor of either type (entry 2). */
static int desc_ctxt(const int *d)
{
	return d[1];
}

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
	struct desc da, db, dc;      /* the descriptors, read (once checked) */
};

/* The tag of MPI_Comm_create_group() for the communicator of a grid of some of the
 * processes (grid_comm()). */
#define COMM_TAG 0x5347

/* Why a call went to ScaLAPACK. */
enum fallback { SMALL, SETTING, GRID, TRACED, FIRST_BLOCK, THREADS, INIT, REFUSED,
		SWITCHED_OFF, NFALLBACKS };
static const char *const fallback_why[NFALLBACKS] = {
	"fewer flops per process than STARGEMM_SCALAPACK_MIN_FLOPS",
	"STARGEMM_SCALAPACK_MIN_FLOPS is not a number >= 0",
	"the BLACS grid's processes are not those stargemm runs on (the first grid it ran on)",
	"FxT tracing on (STARPU_FXT_TRACE) and a grid of some of the processes: StarPU-MPI "
	"would start with a barrier on MPI_COMM_WORLD",
	"a first block is larger than the others (IMB > MB or INB > NB)",
	"MPI runs below MPI_THREAD_MULTIPLE",
	"stargemm could not start",
	"stargemm refused the call",
	"STARGEMM_SCALAPACK=off",
};

/* The communicator of a grid's processes (stargemm started on every process): made at
 * the grid's first call, kept until MPI_Finalize(). */
struct grid_comm {
	int n, *members;             /* the processes' world ranks, increasing */
	MPI_Comm comm;               /* theirs, in that order (MPI_COMM_WORLD: all) */
	int64_t tag_base;            /* its first StarPU-MPI tag (grid_tags()) */
};

static struct {
	int started;                 /* stargemm_init() done here */
	int failed;                  /* it failed here or elsewhere: every call to ScaLAPACK */
	int everywhere;              /* started on every process, in MPI_Init() */
	MPI_Comm comm;               /* stargemm's communicator, once started */
	struct grid_comm *grids;     /* with everywhere: the grids' communicators */
	int ngrids;
	long long by_stargemm, by_scalapack[NFALLBACKS];
} lib = { .comm = MPI_COMM_NULL };

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

/* The elements of an axis of @p n in blocks of @p b (the first of @p b0) that process
 * @p p holds, the first block on process @p src of @p nproc (ScaLAPACK's NUMROC with
 * a first block of its own size). */
static int64_t local_count(int64_t n, int64_t b0, int64_t b, int p, int src, int nproc)
{
	int64_t count = 0, lo = 0;

	for (int64_t t = 0; lo < n; t++) {
		int64_t size = t == 0 ? b0 : b;

		if (lo + size > n)
			size = n - lo;
		if ((src + t) % nproc == p)
			count += size;
		lo += size;
	}
	return count;
}

/* PBLAS's check of a descriptor and of the submatrix (i, j) of rows x cols in it, for
 * the operand at argument position @p pos (i at pos + 1, j at pos + 2, the descriptor
 * at pos + 3): 0, or INFO (negative). Fills @p x. */
static int check_operand(int pos, int rows, int cols, int i, int j, const int *d, int ctxt,
			 struct desc *x)
{
	int nprow, npcol, myrow, mycol, code = -(pos + 3) * 100;
	int64_t lrows;

	if (read_desc(d, x))
		return code - 1;
	Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
	if (x->v[F_CTXT] != ctxt)
		return code - entry(d[0], F_CTXT);
	for (enum field f = F_M; f <= F_N; f++)
		if (x->v[f] < 0)
			return code - entry(d[0], f);
	for (enum field f = F_IMB; f <= F_NB; f++)
		if (x->v[f] < 1)
			return code - entry(d[0], f);
	if (x->v[F_RSRC] < 0 || x->v[F_RSRC] >= nprow)
		return code - entry(d[0], F_RSRC);
	if (x->v[F_CSRC] < 0 || x->v[F_CSRC] >= npcol)
		return code - entry(d[0], F_CSRC);
	lrows = local_count(x->v[F_M], x->v[F_IMB], x->v[F_MB], myrow, x->v[F_RSRC], nprow);
	if (x->v[F_LLD] < (lrows > 1 ? lrows : 1))
		return code - entry(d[0], F_LLD);
	if (i < 1)
		return -(pos + 1);
	if (j < 1)
		return -(pos + 2);
	if (rows > 0 && cols > 0 && (i + rows - 1 > x->v[F_M] || j + cols - 1 > x->v[F_N]))
		return -(i + rows - 1 > x->v[F_M] ? pos + 1 : pos + 2);
	return 0;
}

/* PBLAS's argument checks, in argument order: 0, or INFO for PB_Cabort (negative).
 * Fills the call's descriptors. */
static int check_call(struct pgemm_call *p)
{
	int ctxt = desc_ctxt(p->desca), info;
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
	if ((info = check_operand(7, am, an, *p->ia, *p->ja, p->desca, ctxt, &p->da)) ||
	    (info = check_operand(11, bm, bn, *p->ib, *p->jb, p->descb, ctxt, &p->db)) ||
	    (info = check_operand(16, p->m, p->n, *p->ic, *p->jc, p->descc, ctxt, &p->dc)))
		return info;
	return 0;
}

/* A BLACS grid as stargemm takes it: P x Q, process (p, q) being rank rank[p Q + q]
 * of stargemm's communicator (the operands' grid map, src/distribution.c); world[p Q +
 * q] is its rank in MPI_COMM_WORLD. */
struct blacs_grid {
	int P, Q;
	int *rank, *world;
};

static void grid_free(struct blacs_grid *g)
{
	free(g->rank);
	free(g->world);
	g->rank = g->world = NULL;
}

static int world_rank(void)
{
	int rank;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	return rank;
}

static int world_size(void)
{
	int size;

	MPI_Comm_size(MPI_COMM_WORLD, &size);
	return size;
}

/* The ranks in @p comm of the grid's processes (g->world), into g->rank: 0, or -1 when
 * they are not all of its processes. */
static int ranks_in(MPI_Comm comm, struct blacs_grid *g)
{
	MPI_Group world, ours;
	int n = g->P * g->Q, size, ok = 1;

	MPI_Comm_size(comm, &size);
	if (size != n)
		return -1;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Comm_group(comm, &ours);
	MPI_Group_translate_ranks(world, n, g->world, ours, g->rank);
	MPI_Group_free(&world);
	MPI_Group_free(&ours);
	for (int x = 0; x < n; x++)
		ok &= g->rank[x] != MPI_UNDEFINED;
	return ok ? 0 : -1;
}

/* The grid of @p ctxt, into @p g (grid_free() it), and whether stargemm can run on it:
 * -1 if so, else the reason it cannot. Collective over the grid's processes, which
 * learn each other's world ranks and whether stargemm started or failed on them (one
 * BLACS sum: BLACS has no call for a grid process's rank, and Cblacs_pnum() numbers
 * the grid's processes in row-major order whatever their ranks; MPICH's ScaLAPACK 2.2
 * gives p Q + q on a "Col" grid too). Started on every process (in MPI_Init()),
 * stargemm runs any grid, on a communicator of its processes (enter_grid()). Else it
 * runs on the processes of the first grid it ran on (stargemm_init() on their
 * communicator): a grid of exactly those processes, in any shape and order, runs on it;
 * another grid goes to ScaLAPACK. Every process of the grid comes to the same answer:
 * they all see the same sums, and the processes where stargemm started started
 * together, on one set. */
static int grid_of(int ctxt, struct blacs_grid *g)
{
	int myrow, mycol, n, *sum, started, failed, ok = 1;

	Cblacs_gridinfo(ctxt, &g->P, &g->Q, &myrow, &mycol);
	n = g->P * g->Q;
	g->rank = malloc((size_t)n * sizeof(*g->rank));
	g->world = malloc((size_t)n * sizeof(*g->world));
	sum = calloc((size_t)n + 2, sizeof(*sum));
	if (!g->rank || !g->world || !sum) {   /* the others are in the BLACS sum */
		fprintf(stderr, "stargemm-scalapack: out of memory for a grid of %d processes\n", n);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	sum[myrow * g->Q + mycol] = world_rank() + 1;
	sum[n] = lib.started;
	sum[n + 1] = lib.failed;
	Cigsum2d(ctxt, "All", " ", n + 2, 1, sum, n + 2, -1, 0);
	for (int x = 0; x < n; x++) {
		g->world[x] = sum[x] - 1;
		ok &= sum[x] >= 1;   /* n processes: a place claimed twice leaves one at 0 */
	}
	started = sum[n];
	failed = sum[n + 1];
	free(sum);
	if (failed)
		return INIT;
	if (!ok)
		return GRID;
	if (started == 0)
		return n < world_size() && stargemm__fxt_tracing() ? TRACED : -1;
	if (lib.everywhere)   /* started on all, together: the same on every process */
		return -1;
	if (started < n || ranks_in(lib.comm, g))
		return GRID;
	return -1;
}

/* Whether every operand's first blocks are no larger than the others (struct
 * stargemm__block_axis counts a smaller first block among blocks of the usual size). */
static int first_blocks_fit(const struct pgemm_call *p)
{
	const struct desc *d[3] = { &p->da, &p->db, &p->dc };

	for (int x = 0; x < 3; x++)
		if (d[x]->v[F_IMB] > d[x]->v[F_MB] || d[x]->v[F_INB] > d[x]->v[F_NB])
			return 0;
	return 1;
}

/* Whether the call is too small for stargemm on its @p nprocs processes (the same
 * answer on every process: m, n and k are the call's); -1 when
 * STARGEMM_SCALAPACK_MIN_FLOPS does not parse. */
static int is_small(const struct pgemm_call *p, int nprocs)
{
	const struct stargemm__element *e = stargemm__element(p->type);
	double least, flops = e->fma_flops * (double)p->m * (double)p->n * (double)p->k;

	if (stargemm__setting(STARGEMM__SCALAPACK_MIN_FLOPS, &least))
		return -1;
	return flops / nprocs < least;
}

/* Where the call of @p nprocs processes goes: -1 to stargemm (on grid @p g), else the
 * reason it goes to ScaLAPACK (grid_free(g) either way). The checks that each process
 * can make alone come first; grid_of(), collective over the grid, last. */
static int route(const struct pgemm_call *p, int nprocs, struct blacs_grid *g)
{
	const char *env = stargemm__setting_text(STARGEMM__SCALAPACK);
	int provided, small;

	if (env && !strcmp(env, "off"))
		return SWITCHED_OFF;
	if ((small = is_small(p, nprocs)))
		return small > 0 ? SMALL : SETTING;
	if (!first_blocks_fit(p))
		return FIRST_BLOCK;
	MPI_Query_thread(&provided);
	if (provided < MPI_THREAD_MULTIPLE)
		return THREADS;
	return grid_of(desc_ctxt(p->descc), g);
}

/* The processes of @p comm share the node's cores: unless STARPU_NCPU says otherwise,
 * each takes its share of them (at least one), unbound when they are more processes
 * than cores (StarPU would pin them all from core 0, and spinning workers of several
 * processes on one core starve each other). */
static int cpu_share(MPI_Comm comm)
{
	MPI_Comm node;
	int local = 1;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	if (stargemm__setting_text(STARGEMM__STARPU_NCPU))
		return -1;
	if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
				&node) == MPI_SUCCESS) {
		MPI_Comm_size(node, &local);
		MPI_Comm_free(&node);
	}
	if (local > cores)
		setenv("STARPU_WORKERS_NOBIND", "1", 0);
	return cores / local > 1 ? (int)(cores / local) : 1;
}

static int by_world_rank(const void *x, const void *y)
{
	return *(const int *)x - *(const int *)y;
}

/* The world ranks of grid @p g's processes, increasing (a new array). Out of memory: the
 * job is aborted (the other processes of the grid would wait in the call). */
static int *sorted_members(const struct blacs_grid *g)
{
	int n = g->P * g->Q, *members = malloc((size_t)n * sizeof(*members));

	if (!members) {
		fprintf(stderr, "stargemm-scalapack: out of memory for a grid of %d processes\n", n);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memcpy(members, g->world, (size_t)n * sizeof(*members));
	qsort(members, (size_t)n, sizeof(*members), by_world_rank);
	return members;
}

/* The communicator of the @p n processes @p members (world ranks, increasing):
 * MPI_COMM_WORLD when they are all of them, else one of their own, in that order
 * (MPI_Comm_create_group(), collective over them only: the other processes are not in
 * the call). */
static MPI_Comm comm_of(const int *members, int n)
{
	MPI_Comm comm = MPI_COMM_WORLD;
	MPI_Group world, group;

	if (n == world_size())
		return comm;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, n, members, &group);
	MPI_Comm_create_group(MPI_COMM_WORLD, group, COMM_TAG, &comm);
	MPI_Group_free(&group);
	MPI_Group_free(&world);
	return comm;
}

/* stargemm_init() on lib.comm's processes, collective over them; whether it started on
 * all of them. Between calls StarPU's workers are paused (pgemm() resumes them for the
 * call it runs): an idle StarPU 1.3 keeps a worker polling for tasks, on the cores the
 * program computes on between its calls (measured with tests/test_scalapack.c:
 * doc/design.md, Decisions, "Workers paused between calls"). The processes agree on
 * the outcome: where stargemm_init() failed on one, the calls go to ScaLAPACK on all
 * (lib.failed), those that started stopping in MPI_Finalize(). */
static int init_on_comm(void)
{
	struct stargemm_config cfg;
	int ok;

	stargemm_config_init(&cfg);
	cfg.comm = lib.comm;
	cfg.count_transfers = 0;
	cfg.ncpus = cpu_share(lib.comm);
	lib.started = ok = stargemm_init(&cfg, NULL, NULL) == 0;
	if (!ok)
		fprintf(stderr, "stargemm-scalapack: rank %d: %s; ScaLAPACK runs every call\n",
			world_rank(), stargemm_last_error());
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, lib.comm);
	if (lib.started)
		starpu_pause();
	lib.failed = !ok;
	return ok;
}

static int enter_grid(struct blacs_grid *g);

/* stargemm ready for a call on grid @p g, g->rank filled: started in MPI_Init(), the
 * grid's communicator entered (enter_grid()); else started once, at the first call
 * that runs, on that grid's processes (grid_of() fills g->rank on later calls). */
static int start(struct blacs_grid *g)
{
	int *members;

	if (lib.everywhere)
		return enter_grid(g);
	if (lib.started)
		return 0;
	members = sorted_members(g);
	lib.comm = comm_of(members, g->P * g->Q);
	free(members);
	/* the grid's processes are the communicator's */
	return init_on_comm() ? ranks_in(lib.comm, g) : -1;
}

/* MPI has just started (MPI_Init(), MPI_Init_thread()): stargemm on every process, so
 * that any grid the program makes can run on it — unless STARGEMM_SCALAPACK=off (the
 * calls go to ScaLAPACK), STARGEMM_SCALAPACK_START=first-call (start() at the first
 * call, on its grid), or MPI runs below MPI_THREAD_MULTIPLE (route() sends the calls to
 * ScaLAPACK). */
static void start_everywhere(void)
{
	const char *env = stargemm__setting_text(STARGEMM__SCALAPACK);
	const char *when = stargemm__setting_text(STARGEMM__SCALAPACK_START);
	int provided;

	MPI_Query_thread(&provided);
	if ((env && !strcmp(env, "off")) || (when && !strcmp(when, "first-call")) ||
	    provided < MPI_THREAD_MULTIPLE)
		return;
	lib.comm = MPI_COMM_WORLD;
	lib.everywhere = init_on_comm();
}

/* A tag base that the processes @p members (n world ranks, increasing) agree on, apart
 * from other sets' (a hash of the set, in the 2^20 ranges of 2^40 tags above the
 * first, which stargemm_init()'s communicator uses): StarPU-MPI 1.3 finds a handle by
 * its tag alone, so two grids' live handles must not share one. */
static int64_t grid_tags(const int *members, int n)
{
	uint64_t h = 1469598103934665603ull;

	for (int x = 0; x < n; x++)
		h = (h ^ (uint64_t)members[x]) * 1099511628211ull;
	return (int64_t)(1 + h % ((uint64_t)1 << 20)) << 40;
}

/* The communicator of grid @p g's processes, made (collective over them) at its first
 * call. Out of memory: the job is aborted (the other processes of the grid would wait
 * in the call). */
static struct grid_comm *grid_comm_of(const struct blacs_grid *g)
{
	int n = g->P * g->Q, *members = sorted_members(g);
	struct grid_comm *grown;

	for (int e = 0; e < lib.ngrids; e++)
		if (lib.grids[e].n == n &&
		    !memcmp(lib.grids[e].members, members, (size_t)n * sizeof(*members))) {
			free(members);
			return &lib.grids[e];
		}
	if (!(grown = realloc(lib.grids, (size_t)(lib.ngrids + 1) * sizeof(*grown)))) {
		fprintf(stderr, "stargemm-scalapack: out of memory for a grid of %d processes\n", n);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	lib.grids = grown;
	lib.grids[lib.ngrids] = (struct grid_comm){ n, members, comm_of(members, n),
						    grid_tags(members, n) };
	return &lib.grids[lib.ngrids++];
}

/* Started on every process: grid @p g's communicator made stargemm's for the call
 * (leave_grid() after it), g->rank filled with its processes' ranks there. */
static int enter_grid(struct blacs_grid *g)
{
	struct grid_comm *c = grid_comm_of(g);
	int rank, size;

	MPI_Comm_rank(c->comm, &rank);
	MPI_Comm_size(c->comm, &size);
	if (stargemm__process_use_comm(c->comm, rank, size, c->tag_base)) {
		fprintf(stderr, "stargemm-scalapack: %s\n", stargemm_last_error());
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return ranks_in(c->comm, g);
}

/* After a call on a grid: stargemm back on MPI_COMM_WORLD (nothing otherwise). */
static void leave_grid(void)
{
	if (lib.everywhere)
		stargemm__process_use_comm(MPI_COMM_WORLD, 0, 0, 0);
}

/* One axis of an operand's submatrix in place: @p n elements from index @p i (1-based)
 * of the rows (or columns) of @p d; a first block smaller than the others counts as
 * many elements before the array's start in a block of the usual size. */
static struct stargemm__block_axis axis_of(int64_t n, int64_t i, const struct desc *d,
					   int rows)
{
	int64_t b = d->v[rows ? F_MB : F_NB], lead = b - d->v[rows ? F_IMB : F_INB];

	return (struct stargemm__block_axis){ n, b, i - 1 + lead, (int)d->v[rows ? F_RSRC
										  : F_CSRC],
					      lead, 0, NULL, 0 };
}

/* Where the blocks of axis @p x end inside it (offsets from its start): a new array. */
static int64_t *block_ends(const struct stargemm__block_axis *x, int64_t *count)
{
	int64_t head = x->b - x->first % x->b, *ends;

	*count = head < x->n ? (x->n - 1 - head) / x->b + 1 : 0;
	ends = malloc((size_t)(*count > 0 ? *count : 1) * sizeof(*ends));
	for (int64_t e = 0; ends && e < *count; e++)
		ends[e] = head + e * x->b;
	return ends;
}

/* Two axes that the product joins (op(A)'s columns and op(B)'s rows, say), on @p px and
 * @p py processes. Cut alike (the same blocks from the same place), they keep them, or
 * merge them about @p tile a side where both lie on one process (a ScaLAPACK array
 * holds one process's blocks one after the other). Else each is also cut where the
 * other's blocks end (x->cuts and y->cuts, to free): their tiles then join, each piece
 * on its block's process, in place all the same. */
static int join(struct stargemm__block_axis *x, int px, struct stargemm__block_axis *y,
		int py, int64_t tile)
{
	if (x->b == y->b && x->first % x->b == y->first % y->b) {
		x->merge = y->merge = px == 1 && py == 1 && tile > x->b ? tile / x->b : 1;
		return 0;
	}
	x->cuts = block_ends(y, &x->ncuts);
	y->cuts = block_ends(x, &y->ncuts);
	return x->cuts && y->cuts ? 0 : -ENOMEM;
}

static int by_stargemm(const struct pgemm_call *p, const struct blacs_grid *g)
{
	int ta = is_trans(p->ta), tb = is_trans(p->tb), P = g->P, Q = g->Q, ret;
	/* The six axes: A's rows and columns, B's, C's. */
	struct stargemm__block_axis x[6] = {
		axis_of(ta ? p->k : p->m, *p->ia, &p->da, 1),
		axis_of(ta ? p->m : p->k, *p->ja, &p->da, 0),
		axis_of(tb ? p->n : p->k, *p->ib, &p->db, 1),
		axis_of(tb ? p->k : p->n, *p->jb, &p->db, 0),
		axis_of(p->m, *p->ic, &p->dc, 1), axis_of(p->n, *p->jc, &p->dc, 0),
	};
	const struct desc *d[3] = { &p->da, &p->db, &p->dc };
	void *local[3] = { (void *)p->a, (void *)p->b, p->c };
	struct stargemm_matrix *X[3] = { NULL, NULL, NULL };   /* A, B, C */
	int64_t tile;

	/* the tile of a host call on each process's share of C */
	if ((ret = stargemm__host_tile(stargemm__element(p->type), (p->m + P - 1) / P,
				       (p->n + Q - 1) / Q, stargemm__element(p->type)->load(p->alpha),
				       &tile)))
		return ret;
	/* op(A)'s rows are A's rows, or its columns when transposed; the same for B. C's
	 * rows join op(A)'s, C's columns op(B)'s, op(A)'s columns op(B)'s rows. */
	ret = join(&x[4], P, &x[ta ? 1 : 0], ta ? Q : P, tile);
	ret = ret ? ret : join(&x[5], Q, &x[tb ? 2 : 3], tb ? P : Q, tile);
	ret = ret ? ret : join(&x[ta ? 0 : 1], ta ? P : Q, &x[tb ? 3 : 2], tb ? Q : P, tile);
	if (ret)
		ret = stargemm__error(ret, "stargemm-scalapack: out of memory");
	for (int o = 0; o < 3 && !ret; o++)
		ret = stargemm__matrix_create_in_place(&X[o], p->type, &x[2 * o], &x[2 * o + 1],
						       P, Q, g->rank, local[o], d[o]->v[F_LLD],
						       "stargemm-scalapack");
	for (int e = 0; e < 6; e++)
		free((void *)x[e].cuts);
	ret = ret ? ret : stargemm_gemm(p->ta, p->tb, p->alpha, X[0], X[1], p->beta, X[2]);
	/* Dropping the matrices brings C's tiles back to the arrays (with GPUs). */
	for (int o = 0; o < 3; o++)
		stargemm_matrix_destroy(X[o]);
	return ret;
}

/* Counts a call sent to ScaLAPACK for reason @p why; grid process (0, 0) (@p first)
 * says why, the first time. */
static void report_fallback(int why, int first)
{
	/* Calls sent on purpose are not news. */
	if (lib.by_scalapack[why]++ == 0 && first && why != SWITCHED_OFF && why != SMALL)
		fprintf(stderr, "stargemm-scalapack: a call goes to ScaLAPACK: %s (said once)\n",
			fallback_why[why]);
}

/* ScaLAPACK's own routine of this name. */
static pgemm_fn *scalapack_routine(const char *symbol)
{
	return (pgemm_fn *)dlsym(RTLD_NEXT, symbol);
}

/* One call: checked, then run by stargemm or by ScaLAPACK's @p symbol. */
static void pgemm(struct pgemm_call *p, const char *symbol)
{
	int ctxt = desc_ctxt(p->desca), nprow, npcol, myrow, mycol, info, why;
	const struct stargemm__element *e = stargemm__element(p->type);
	struct blacs_grid g = { 0, 0, NULL, NULL };
	pgemm_fn *next;

	/* As PBLAS: A's context first (a process outside it sees nprow = -1 too), then the
	 * arguments in order. */
	Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
	info = nprow == -1 ? -(10 * 100 + entry(p->desca[0], F_CTXT)) : check_call(p);
	if (info) {   /* ScaLAPACK's report (and, there, its abort) */
		PB_Cabort(ctxt, (char *)p->name, info);
		return;
	}
	if (p->m == 0 || p->n == 0 ||
	    ((p->k == 0 || e->load(p->alpha) == 0.0) && e->load(p->beta) == 1.0))
		return;
	why = route(p, nprow * npcol, &g);
	if (why < 0 && start(&g) == 0) {
		int ret;

		starpu_resume();
		ret = by_stargemm(p, &g);
		starpu_pause();
		leave_grid();

		grid_free(&g);
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
		if (myrow == 0 && mycol == 0)
			fprintf(stderr, "stargemm-scalapack: %s: %s; ScaLAPACK runs it\n", p->name,
				stargemm_last_error());
		why = REFUSED;
	} else if (why < 0) {
		leave_grid();
		why = INIT;
	}
	grid_free(&g);
	report_fallback(why, myrow == 0 && mycol == 0);
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
				c, ia, ja, desca, ib, jb, descb, ic, jc, descc,
				{ { 0 } }, { { 0 } }, { { 0 } } };

	pgemm(&p, "psgemm_");
}

void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
	     const void *alpha, const void *a, const int *ia, const int *ja, const int *desca,
	     const void *b, const int *ib, const int *jb, const int *descb, const void *beta,
	     void *c, const int *ic, const int *jc, const int *descc)
{
	struct pgemm_call p = { "PDGEMM", STARGEMM_D, *ta, *tb, *m, *n, *k, alpha, beta, a, b,
				c, ia, ja, desca, ib, jb, descb, ic, jc, descc,
				{ { 0 } }, { { 0 } }, { { 0 } } };

	pgemm(&p, "pdgemm_");
}

void pcgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
	     const void *alpha, const void *a, const int *ia, const int *ja, const int *desca,
	     const void *b, const int *ib, const int *jb, const int *descb, const void *beta,
	     void *c, const int *ic, const int *jc, const int *descc)
{
	struct pgemm_call p = { "PCGEMM", STARGEMM_C, *ta, *tb, *m, *n, *k, alpha, beta, a, b,
				c, ia, ja, desca, ib, jb, descb, ic, jc, descc,
				{ { 0 } }, { { 0 } }, { { 0 } } };

	pgemm(&p, "pcgemm_");
}

void pzgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
	     const void *alpha, const void *a, const int *ia, const int *ja, const int *desca,
	     const void *b, const int *ib, const int *jb, const int *descb, const void *beta,
	     void *c, const int *ic, const int *jc, const int *descc)
{
	struct pgemm_call p = { "PZGEMM", STARGEMM_Z, *ta, *tb, *m, *n, *k, alpha, beta, a, b,
				c, ia, ja, desca, ib, jb, descb, ic, jc, descc,
				{ { 0 } }, { { 0 } }, { { 0 } } };

	pgemm(&p, "pzgemm_");
}

/* stargemm stops before MPI does; with STARGEMM_SCALAPACK=count rank 0 says how the
 * calls went (on the process that made most of them each way). StarPU-MPI 1.3 stops
 * with a barrier on MPI_COMM_WORLD: where stargemm started on some of the processes,
 * the others join it here. */
int MPI_Init(int *argc, char ***argv)
{
	int ret = PMPI_Init(argc, argv);

	if (ret == MPI_SUCCESS)
		start_everywhere();
	return ret;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int ret = PMPI_Init_thread(argc, argv, required, provided);

	if (ret == MPI_SUCCESS)
		start_everywhere();
	return ret;
}

int MPI_Finalize(void)
{
	const char *env = stargemm__setting_text(STARGEMM__SCALAPACK);
	long long most[NFALLBACKS + 2];

	most[0] = lib.started;
	most[1] = lib.by_stargemm;
	for (int w = 0; w < NFALLBACKS; w++)
		most[2 + w] = lib.by_scalapack[w];
	MPI_Allreduce(MPI_IN_PLACE, most, NFALLBACKS + 2, MPI_LONG_LONG, MPI_MAX,
		      MPI_COMM_WORLD);
	if (env && !strcmp(env, "count") && world_rank() == 0) {
		char line[1024];
		size_t n = (size_t)snprintf(line, sizeof(line), "stargemm-scalapack: %lld calls "
					    "by stargemm", most[1]);

		for (int w = 0; w < NFALLBACKS && n < sizeof(line); w++)
			if (most[2 + w])
				n += (size_t)snprintf(line + n, sizeof(line) - n,
						      ", %lld by ScaLAPACK (%s)", most[2 + w],
						      fallback_why[w]);
		fprintf(stderr, "%s\n", line);   /* one write: its lines are not interleaved */
		fflush(stderr);
	}
	if (lib.started) {
		starpu_resume();
		stargemm_finalize();
		lib.started = 0;
	} else if (most[0]) {
		PMPI_Barrier(MPI_COMM_WORLD);
	}
	if (lib.comm != MPI_COMM_NULL && lib.comm != MPI_COMM_WORLD)
		MPI_Comm_free(&lib.comm);
	for (int e = 0; e < lib.ngrids; e++) {
		if (lib.grids[e].comm != MPI_COMM_WORLD)
			MPI_Comm_free(&lib.grids[e].comm);
		free(lib.grids[e].members);
	}
	free(lib.grids);
	lib.grids = NULL;
	lib.ngrids = 0;
	return PMPI_Finalize();
}
