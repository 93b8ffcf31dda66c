/*
 * stargemm.h — public API of stargemm, distributed tiled GEMM on StarPU-MPI.
 *
 * stargemm computes C = alpha * op(A) * op(B) + beta * C on tiled matrices that are
 * distributed over a P x Q grid of MPI processes (2D block-cyclic over tiles). The
 * multiplication is expressed as a sequence of StarPU-MPI tasks, one per tile update;
 * StarPU moves the tiles between processes, host memory and GPUs.
 *
 * Conventions
 *  - Every function returning int returns 0 on success or a negative errno value
 *    (-EINVAL bad argument, -ENOMEM out of memory, -ENODEV runtime unavailable,
 *    -EIO communication or runtime failure, -EOVERFLOW a size beyond what a layer
 *    below takes: see "Sizes" below). On failure, stargemm_last_error()
 *    returns a message naming the violated constraint and the offending values.
 *    A product refused before its tasks were submitted leaves C as it was; one that
 *    fails once they run (a kernel error, a task that could not be submitted, a BLAS
 *    or cuBLAS call refused) says so, and C is then undefined. A collective call
 *    returns the same error code on every rank: the ranks that did not fail give the
 *    lowest failing rank's number and message. Arguments of a collective call that
 *    must be alike on every rank (matrices, root, transposes, scalars, options) are
 *    compared before any message of the call: ranks that differ get -EINVAL on every
 *    rank, not a hang.
 *  - Sizes: a tile side and a tile's leading dimension are at most 2^31 - 1 (BLAS's
 *    and cuBLAS's int); on several ranks a tile's leading dimension in bytes, and a
 *    pack's bytes, are at most 2^31 - 1 (MPI's int); a matrix has at most 2^40 tiles
 *    and 2^63 bytes. What does not fit is refused with -EOVERFLOW naming the limit
 *    (stargemm_?gemm() copies an array whose leading dimension exceeds BLAS's int).
 *  - Lifecycle: every call but stargemm_config_init(), stargemm_set_progress(),
 *    stargemm_last_error(), stargemm_plan_compute() and the accessors needs a running
 *    stargemm (stargemm_init() done, stargemm_finalize() not yet) and returns -EINVAL
 *    otherwise.
 *  - Collective functions (marked "collective") must be called by every process of
 *    the communicator, in the same order, with the same arguments.
 *  - Matrices are column-major. A tile is stored contiguously, column-major, with
 *    leading dimension equal to its number of rows.
 *  - Tilings may be irregular: row and column tile sizes are arrays. The regular
 *    constructor accepts any M, N and tile size; the last tile row/column is ragged.
 */
#ifndef STARGEMM_H
#define STARGEMM_H

#include <stdint.h>
#include <stddef.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Runtime configuration, passed to stargemm_init(). Initialise with
 *  stargemm_config_init() then change the fields you need. */
struct stargemm_config {
	/** CPU workers per process (>= -1); -1 = StarPU's STARPU_NCPU if set, else every core
	 *  of the process' affinity mask but one per CUDA worker (its driver thread's),
	 *  at least one (no core is reserved for MPI progress). A value >= 0 wins over
	 *  STARPU_NCPU. */
	int ncpus;
	/** CUDA workers per process (>= -1); -1 = StarPU's default (STARPU_NCUDA or all GPUs). A
	 *  value >= 0 wins over STARPU_NCUDA. */
	int ncuda;
	/** Scheduling policy: "stargemm-ooc" or the name of one of StarPU's policies;
	 *  NULL = STARPU_SCHED if set, else "stargemm-ooc". An unknown name (here or in
	 *  STARPU_SCHED) is refused. */
	const char *sched_policy;
	/** Communicator to use; MPI_COMM_NULL = MPI_COMM_WORLD. MPI is initialised by
	 *  stargemm_init() (MPI_THREAD_SERIALIZED) when the caller has not done it. */
	MPI_Comm comm;
	/** Count what moves (memory-node transfers and MPI bytes, see
	 *  stargemm_transfers_get()); sets STARPU_COMM_STATS=1 for StarPU-MPI, whose report
	 *  at exit stargemm_finalize() keeps off stderr unless the user exported
	 *  STARPU_COMM_STATS. 0 or 1; default 1. */
	int count_transfers;
	/** RAM budget in MiB for StarPU-managed tiles; 0 = none. When > 0 it replaces an
	 *  exported STARPU_LIMIT_CPU_MEM (the explicit setting wins); when 0, an exported
	 *  STARPU_LIMIT_CPU_MEM is left to StarPU. With a budget, every tile a rank's
	 *  live matrices own, and every tile a product receives from other ranks (all in
	 *  core, those of lookahead + 2 chunks out of core), must fit in the budget plus
	 *  the disk node: a matrix creation or a product that would not fit is refused
	 *  (-ENOMEM, with the numbers), since StarPU would wait for room forever. */
	int64_t ram_limit_mib;
	/** Directory for StarPU's disk memory node (the slow memory of CPU out-of-core
	 *  runs); NULL = no disk node. Must exist and be writable: stargemm_init()
	 *  refuses it otherwise (-EINVAL, -EACCES) before starting MPI or StarPU. */
	const char *disk_dir;
	/** Size of the disk node in MiB (>= 16 with disk_dir; never negative). */
	int64_t disk_mib;
};

/** Fill @p cfg with the defaults described in struct stargemm_config. */
void stargemm_config_init(struct stargemm_config *cfg);

/** Start MPI (if needed), StarPU and StarPU-MPI. Collective. @p cfg may be NULL.
 *  Calling it twice without stargemm_finalize() returns -EINVAL. Errors in @p cfg (a
 *  field out of its range, an unknown policy) are found before MPI starts. After a
 *  stargemm_finalize() it starts stargemm again when MPI is still up (the program
 *  initialised MPI itself); when MPI was finalised it returns -EINVAL (MPI cannot
 *  start twice in a process). When StarPU fails to start (e.g. -ENODEV: no worker), MPI,
 *  if this call started it, stays up so that stargemm_init() can be called again (MPI
 *  cannot be started twice); stargemm_finalize() then ends it. With CUDA workers, the
 *  tiles of matrices created from then on take their GPU buffers from one allocation
 *  per GPU, made at its first tile and as large as StarPU's budget of that GPU
 *  (src/pool.c), instead of a cudaMalloc each; the environment variable
 *  STARGEMM_DEVICE_POOL=0 turns that off (any other value >= 0 keeps it; -EINVAL for
 *  a value that is not a number >= 0). StarPU writes FxT traces only when the
 *  environment asks for them (STARPU_FXT_TRACE=1; StarPU 1.3's own default traces
 *  every run). */
int stargemm_init(const struct stargemm_config *cfg, int *argc, char ***argv);

/** Wait for all submitted work, shut StarPU-MPI and StarPU down, and finalise MPI
 *  if stargemm_init() initialised it. Collective. Matrices should be destroyed first:
 *  destroying one afterwards frees only its descriptor, with a message.
 *  After a failed stargemm_init() it ends the MPI that call started (returns 0); with
 *  nothing to stop it returns -EINVAL. */
int stargemm_finalize(void);

/** Rank of this process and number of processes in stargemm's communicator
 *  (0 and 1 before stargemm_init()). */
int stargemm_rank(void);
int stargemm_nranks(void);

/** Number of CPU and CUDA workers of this process (valid after stargemm_init()). */
int stargemm_ncpu_workers(void);
int stargemm_ncuda_workers(void);

/** Message describing the last error returned in the calling thread ("" if none). */
const char *stargemm_last_error(void);

/** Progress line of the products (off by default: the library prints nothing unless
 *  asked). With @p on = 1, while products run, rank 0 writes on stderr
 *  "stargemm: T/N tasks S s R GFLOP/s", rewritten in place ('\r') at most 4 times a
 *  second: its own tasks done (T) of those submitted (N) since the line began (at the
 *  first product after a wait), the seconds since then, and the rate estimated as the
 *  products' flops (every rank's) times T/N over the seconds. The next
 *  stargemm_wait() — which the synchronous products make — ends the line with its
 *  final count and a newline, then T = N. Printed only when rank 0's stderr is a
 *  terminal, unless the environment variable STARGEMM_PROGRESS is "force" when this
 *  function is called (under mpiexec the ranks' stderr is a pipe to the launcher).
 *  Costs rank 0's workers a callback per task (an atomic increment, a clock read; one
 *  write(2) every 250 ms). @p on = 0 turns it off. Not collective; may be called before
 *  stargemm_init(). Returns 0, or -EINVAL for @p on other than 0 and 1, or (@p on
 *  = 1) another value of STARGEMM_PROGRESS. */
int stargemm_set_progress(int on);

/* ------------------------------------------------------------------------------ */
/* Tiled, distributed matrices                                                     */
/* ------------------------------------------------------------------------------ */

/** Element types, by BLAS's letters. A matrix has one, given when it is created (the
 *  constructors without a type make double matrices); a product's three matrices must
 *  share it. Complex elements are C's complex types (two reals, real part first: the
 *  layout of Fortran's COMPLEX and of cuComplex). */
typedef enum {
	STARGEMM_S = 's',   /**< float */
	STARGEMM_D = 'd',   /**< double */
	STARGEMM_C = 'c',   /**< float _Complex */
	STARGEMM_Z = 'z',   /**< double _Complex */
} stargemm_type;

/** Bytes of one element of @p type; 0 if @p type is not one of the four. */
size_t stargemm_type_size(stargemm_type type);

/** A tiled matrix distributed 2D block-cyclically over a P x Q process grid:
 *  tile (i, j) belongs to rank (i mod P) * Q + (j mod Q) (a matrix made with
 *  stargemm_matrix_create_distributed() may have other maps, and other ranks for the
 *  grid's processes: struct stargemm_distribution). Opaque. */
struct stargemm_matrix;

/** The tile side stargemm recommends for a dense product of @p type whose C is m x n
 *  (inner size k), with every rank's CPU workers sharing C's tiles: into @p *nb. It is
 *  the side of the fastest tile products measured on this machine (the CPU kernels'
 *  rates by tile side, measured once per machine and kept beside StarPU's performance
 *  models), taking a larger side where it is within 5% of the best, and a smaller one
 *  where too few C tiles would leave workers idle; k does not change it on CPUs (each
 *  C tile's chain of updates is one worker's, however long). 256 when nothing was
 *  measured (STARGEMM_CALIBRATE=0); 2048 with GPUs. The host calls (stargemm_dgemm() and its
 *  kin) and the ScaLAPACK drop-in cut their arrays by it (per process). Returns 0, or
 *  -EINVAL before stargemm_init(), for a type not of the four, a size < 0 or a NULL
 *  @p nb. Local. */
int stargemm_tile_recommend(stargemm_type type, int64_t m, int64_t n, int64_t k, int64_t *nb);

/** Create an M x N matrix of double, tiles of mb x nb (the last tile row and column
 *  may be smaller), on a P x Q grid (P * Q must equal the number of processes).
 *  Storage for the local tiles is allocated (pinned when GPUs are present) — unless
 *  stargemm was initialised with a disk node or a RAM limit: then StarPU allocates the
 *  tiles itself when they are first written, so that they can be evicted to disk
 *  (out-of-core on the host). Until a collective call writes it (a fill, a scatter,
 *  a product into it), a matrix reads as zeros: the first call that reads it (a
 *  product, a gather, its norms) zeroes its tiles first. Collective. */
int stargemm_matrix_create(struct stargemm_matrix **A, int64_t m, int64_t n,
			   int64_t mb, int64_t nb, int P, int Q);

/** stargemm_matrix_create() for elements of @p type (an unknown type is refused with
 *  -EINVAL). Collective. */
int stargemm_matrix_create_type(struct stargemm_matrix **A, stargemm_type type, int64_t m,
				int64_t n, int64_t mb, int64_t nb, int P, int Q);

/** Create an M x N matrix of tiles mb x nb (the last ones ragged), 2D block-cyclic on
 *  a P x Q grid as stargemm_matrix_create(), whose tiles are this process's local
 *  array @p local, used in place (no copy): ScaLAPACK's layout with the first block on
 *  process (0, 0) — the process's tiles one after the other along each axis, in
 *  order, column-major with leading dimension @p lld >= max(1, its local rows). The
 *  array must stay valid until the matrix is destroyed; it holds the matrix's values
 *  whenever no call on the matrix is in progress (with GPUs: once the product that
 *  wrote it has returned, or stargemm_wait() after stargemm_pdgemm_submit()). A
 *  process without local tiles may pass NULL. A bad array or lld on one rank is
 *  refused on every rank (-EINVAL). Collective. */
int stargemm_matrix_create_local(struct stargemm_matrix **A, int64_t m, int64_t n,
				 int64_t mb, int64_t nb, int P, int Q, double *local,
				 int64_t lld);

/** stargemm_matrix_create_local() for elements of @p type: @p local holds them.
 *  Collective. */
int stargemm_matrix_create_local_type(struct stargemm_matrix **A, stargemm_type type,
				      int64_t m, int64_t n, int64_t mb, int64_t nb, int P, int Q,
				      void *local, int64_t lld);

/** Create the M x N submatrix at global (ia, ja) (0-based: ScaLAPACK's IA - 1, JA - 1)
 *  of a 2D block-cyclic array of blocks mb x nb whose first block lies on process
 *  (rsrc, csrc) of the P x Q grid (process (p, q) is rank p Q + q), used in place in
 *  each process's local array @p local of leading dimension @p lld (ScaLAPACK's
 *  descriptor: MB, NB, RSRC, CSRC, LLD): no copy. Its tiles are the blocks the
 *  submatrix spans, the first and last ones cut to it, so a submatrix starting inside
 *  a block has an irregular first tile row or column; two operands of a product must
 *  then be cut alike along their shared dimension. lld must reach the local rows the
 *  submatrix spans. As stargemm_matrix_create_local() (which is this with ia = ja = 0,
 *  rsrc = csrc = 0) otherwise. Collective. */
int stargemm_matrix_create_submatrix(struct stargemm_matrix **A, stargemm_type type,
				     int64_t m, int64_t n, int64_t ia, int64_t ja, int64_t mb,
				     int64_t nb, int rsrc, int csrc, int P, int Q, void *local,
				     int64_t lld);

/** Create a matrix with an irregular tiling: mt tile rows of heights row_sizes[0..mt-1]
 *  and nt tile columns of widths col_sizes[0..nt-1] (all > 0). Collective. */
int stargemm_matrix_create_irregular(struct stargemm_matrix **A,
				     int64_t mt, const int64_t *row_sizes,
				     int64_t nt, const int64_t *col_sizes, int P, int Q);

/** Create a block-sparse matrix: the tiling of stargemm_matrix_create_irregular(),
 *  of which only the @p npresent tiles listed in @p present exist — tile e is
 *  (present[2e], present[2e + 1]) = (i, j), in any order. Absent tiles have no storage
 *  and no StarPU handle, cost nothing, and read as zeros (gather); fills skip them,
 *  scatter drops the values that fall in them, and a product never writes them: C's
 *  pattern is kept as given (products that would land outside it are dropped). Every
 *  rank passes the same list. npresent = 0 (present may then be NULL) is an empty
 *  matrix. Errors: a tile index out of range, a tile listed twice. Collective.
 *
 *  Small tiles are packed: an axis (tile rows or columns) whose mean tile extent is
 *  below 64 elements (STARGEMM_PACK_BELOW; 0: never) is cut into groups of consecutive
 *  tiles of at least 256 elements (STARGEMM_PACK_EXTENT), and the present tiles of a
 *  row group x column group share one StarPU handle and one owner: tile handles cost
 *  more than tiny tiles' arithmetic. Packs are then dealt 2D block-cyclically
 *  (stargemm_matrix_owner() tells each tile's rank), multiplied by batches, and moved
 *  whole (over MPI, to and from GPUs and a disk node); their tiles start as zeros
 *  (unpacked tiles are undefined until filled). Same results; see doc/design.md,
 *  "Packs". */
int stargemm_matrix_create_sparse(struct stargemm_matrix **A,
				  int64_t mt, const int64_t *row_sizes,
				  int64_t nt, const int64_t *col_sizes,
				  int64_t npresent, const int64_t *present, int P, int Q);

/** Which rank owns each tile: a Cartesian distribution over a P x Q grid (as DBCSR's
 *  row and column distributions). Tile (i, j) belongs to grid process
 *  (row_proc[i], col_proc[j]): a tile row lives on one process row, a tile column
 *  on one process column. NULL arrays mean cyclic (i mod P, j mod Q): 2D
 *  block-cyclic, what every other constructor uses. Process (p, q) is rank
 *  grid[p * Q + q], or rank p * Q + q (row-major, what every other constructor uses)
 *  when grid is NULL: so tile (i, j) belongs to rank grid[row_proc[i] * Q +
 *  col_proc[j]]. A column-major grid (BLACS's "Col" order) is grid[p * Q + q] =
 *  q * P + p. Initialisers that stop before grid leave it NULL. */
struct stargemm_distribution {
	int P, Q;
	const int *row_proc;      /**< mt entries in [0, P), or NULL */
	const int *col_proc;      /**< nt entries in [0, Q), or NULL */
	/** P * Q entries, the rank of process (p, q) at p * Q + q: each rank of
	 *  [0, P * Q) once. NULL: row-major. */
	const int *grid;
};

/** Create a matrix on the tiling of stargemm_matrix_create_irregular() with the
 *  distribution @p dist (copied, its arrays too): block-sparse with the @p npresent
 *  tiles of @p present as in stargemm_matrix_create_sparse(), or dense when
 *  npresent < 0. Errors as the other constructors, a process index out of [0, P) or
 *  [0, Q), and a grid that is not a permutation of the ranks (a rank out of [0, P Q)
 *  or listed twice). Operands of one product may have different distributions (the
 *  runtime moves the tiles); they must share the grid: the same P x Q and the same
 *  rank for each process (p, q). Collective. */
int stargemm_matrix_create_distributed(struct stargemm_matrix **A,
				       int64_t mt, const int64_t *row_sizes,
				       int64_t nt, const int64_t *col_sizes,
				       int64_t npresent, const int64_t *present,
				       const struct stargemm_distribution *dist);

/** stargemm_matrix_create_distributed() for an element type @p type (STARGEMM_S, _D,
 *  _C or _Z): block-sparse (npresent >= 0) or dense, any tiling and distribution.
 *  Multiply such matrices with stargemm_bsgemm_type() (or stargemm_gemm()); fill them
 *  as stargemm_matrix_create_type()'s. Errors as stargemm_matrix_create_distributed(),
 *  and an unknown type. Collective. */
int stargemm_matrix_create_distributed_type(struct stargemm_matrix **A, stargemm_type type,
					    int64_t mt, const int64_t *row_sizes, int64_t nt,
					    const int64_t *col_sizes, int64_t npresent,
					    const int64_t *present,
					    const struct stargemm_distribution *dist);

/** A tile generator: write the rows x cols tile whose top-left element is at global
 *  (row0, col0) into @p tile (elements of the matrix's type, leading dimension @p ld)
 *  and return 0, or a nonzero status: the product that needed the tile then fails on
 *  every rank with a message naming the tile and the status. Called concurrently from
 *  StarPU's CPU workers, on every rank whose tasks read the tile, as often as the
 *  product makes it (src/generate.c): must be thread-safe and give the same values
 *  each time. */
typedef int (*stargemm_generate_fn)(void *tile, int64_t ld, int64_t rows, int64_t cols,
				    int64_t row0, int64_t col0, void *arg);

/** A tile generator run by a CUDA worker: as stargemm_generate_fn, with @p tile in
 *  the GPU's memory and @p stream the worker's CUDA stream (a cudaStream_t), on which
 *  it queues its work (kernels, asynchronous copies) without waiting for it: StarPU
 *  synchronises the stream before any task reads the tile. It returns the status of
 *  queueing the work (0, or a nonzero status as stargemm_generate_fn); a kernel's own
 *  failure shows at that synchronisation, where StarPU aborts. */
typedef int (*stargemm_generate_cuda_fn)(void *tile, int64_t ld, int64_t rows, int64_t cols,
					 int64_t row0, int64_t col0, void *stream, void *arg);

/** Create a matrix whose tiles are not stored but made on demand by @p generate
 *  (paper 000's B "too large to store"; on GPUs by a CUDA generator too,
 *  stargemm_matrix_set_cuda_generator()): the tiling and pattern of
 *  stargemm_matrix_create_distributed_type() (dense when npresent < 0; never packed),
 *  no storage on any rank. A product that reads it as A or B makes each tile on the
 *  rank that runs the tasks reading it (no MPI message carries it), before its first
 *  use in a chunk of the product's work list, and lets it go after that chunk's last
 *  use (in core: once per product, let go at the next stargemm_wait()); with GPUs the
 *  tile is made in host memory and copied to its device when its first GEMM there
 *  becomes ready (it is not prefetched). @p dist places the tiles for
 *  stargemm_matrix_norms() (each tile made on its owner for its norm, so that filtered
 *  products work) and for the stationary choices that run products where op(A) or
 *  op(B) lies. Every other use is refused by name: as C of a product, a fill, scatter,
 *  gather, copy, add, scale, add_diagonal or trace, and as the old C of
 *  stargemm_matrix_create_product(). @p arg must stay valid until the matrix is
 *  destroyed. Errors as stargemm_matrix_create_distributed_type(), and a NULL
 *  @p generate. Collective. */
int stargemm_matrix_create_generated(struct stargemm_matrix **A, stargemm_type type,
				     int64_t mt, const int64_t *row_sizes, int64_t nt,
				     const int64_t *col_sizes, int64_t npresent,
				     const int64_t *present,
				     const struct stargemm_distribution *dist,
				     stargemm_generate_fn generate, void *arg);

/** 1 if @p A was made by stargemm_matrix_create_generated(), else 0. */
int stargemm_matrix_is_generated(const struct stargemm_matrix *A);

/** Give generated matrix @p A a CUDA generator (NULL: none, the default). On a rank
 *  with CUDA workers, a tile that a product's task on a GPU reads is then made on that
 *  GPU by @p cuda, with the arg given at creation — written in the device's memory,
 *  with no host buffer and no copy to the device — while the host generator still
 *  makes the tiles read on the host (CPU workers, stargemm_matrix_norms()): both must
 *  give the same values. Not collective: each rank's own (set it on every rank).
 *  Errors: @p A NULL or not generated (-EINVAL). */
int stargemm_matrix_set_cuda_generator(struct stargemm_matrix *A,
				       stargemm_generate_cuda_fn cuda);

/** A block-sparse pattern: mt x nt tiles of the given sizes, of which the npresent
 *  listed in present (pairs (i, j), as stargemm_matrix_create_sparse()) exist. */
struct stargemm_pattern {
	int64_t mt, nt;
	const int64_t *row_sizes, *col_sizes;
	int64_t npresent;
	const int64_t *present;
};

/** The load-balanced column distribution of C = A B (paper 000 §3.2.1): each tile
 *  column j of C (and B) weighs the flops of its tile products, from the patterns
 *  of A and B; the columns, sorted by weight, are dealt to the Q process columns in
 *  mirrored cyclic order (0, 1, .., Q-1, Q-1, .., 0, 0, ..). Writes B->nt entries of
 *  @p col_proc, for the col_proc of C's and B's distributions. Errors: tilings of A's
 *  columns and B's rows that differ, a listed tile out of range, Q < 1. Not
 *  collective; every rank computes the same map. */
int stargemm_balanced_columns(const struct stargemm_pattern *A,
			      const struct stargemm_pattern *B, int Q, int *col_proc);

/** Number of present tiles (mt * nt for a matrix that is not block-sparse). */
int64_t stargemm_matrix_present_count(const struct stargemm_matrix *A);

/** 1 if tile (i, j) exists, 0 if it is absent or out of range. */
int stargemm_matrix_tile_present(const struct stargemm_matrix *A, int64_t i, int64_t j);

/** Release a matrix and its tiles (waits for the tasks that use it). Collective: every
 *  rank destroys its matrices in the same order (their StarPU-MPI tags are given to
 *  the matrices made next). NULL is accepted and ignored. After the stargemm_finalize() of the runtime that
 *  made it, only its descriptor is freed (StarPU, which held its tiles, is gone) and
 *  stargemm_last_error() says so. */
void stargemm_matrix_destroy(struct stargemm_matrix *A);

/** Sizes: rows, columns, tile rows, tile columns. */
int64_t stargemm_matrix_m(const struct stargemm_matrix *A);
int64_t stargemm_matrix_n(const struct stargemm_matrix *A);
int64_t stargemm_matrix_mt(const struct stargemm_matrix *A);
int64_t stargemm_matrix_nt(const struct stargemm_matrix *A);

/** The element type (STARGEMM_D for a NULL matrix). */
stargemm_type stargemm_matrix_type(const struct stargemm_matrix *A);

/** Height of tile row i, width of tile column j, and their global offsets. */
int64_t stargemm_matrix_tile_rows(const struct stargemm_matrix *A, int64_t i);
int64_t stargemm_matrix_tile_cols(const struct stargemm_matrix *A, int64_t j);
int64_t stargemm_matrix_row_offset(const struct stargemm_matrix *A, int64_t i);
int64_t stargemm_matrix_col_offset(const struct stargemm_matrix *A, int64_t j);

/** MPI rank owning tile (i, j). */
int stargemm_matrix_owner(const struct stargemm_matrix *A, int64_t i, int64_t j);

/** Per-tile fill function: write the rows x cols tile whose top-left element is at
 *  global (row0, col0) into @p tile (leading dimension @p ld). Called concurrently
 *  from several threads, on the owner of each tile; must be thread-safe. */
typedef void (*stargemm_fill_fn)(double *tile, int64_t ld, int64_t rows, int64_t cols,
				 int64_t row0, int64_t col0, void *arg);

/** The fill function of a matrix of any element type: @p tile points to elements of
 *  the matrix's type (stargemm_matrix_type()); otherwise as stargemm_fill_fn. */
typedef void (*stargemm_fill_elements_fn)(void *tile, int64_t ld, int64_t rows,
					  int64_t cols, int64_t row0, int64_t col0, void *arg);

/** Fill every local tile of a double matrix with @p fn (as parallel tasks) and wait; a
 *  matrix of another type is refused (-EINVAL): use stargemm_matrix_fill_elements().
 *  Collective. */
int stargemm_matrix_fill(struct stargemm_matrix *A, stargemm_fill_fn fn, void *arg);

/** Fill every local tile of a matrix of any type with @p fn and wait. Collective. */
int stargemm_matrix_fill_elements(struct stargemm_matrix *A, stargemm_fill_elements_fn fn,
				  void *arg);

/** Fill with pseudo-random values uniform in [-0.5, 0.5), a pure function of
 *  (seed, global row, global column): independent of tiling and distribution. A
 *  single-precision element is the double value rounded; a complex element has real
 *  part stargemm_random_element(seed, row, col) and imaginary part
 *  stargemm_random_element(~seed, row, col), rounded for single complex. */
int stargemm_matrix_fill_random(struct stargemm_matrix *A, uint64_t seed);

/** The value stargemm_matrix_fill_random() puts at global (row, col) for @p seed. */
double stargemm_random_element(uint64_t seed, int64_t row, int64_t col);

/** Copy a full column-major M x N array of the matrix's element type (leading
 *  dimension ld >= M), significant on rank @p root only, into the distributed tiles.
 *  Collective. */
int stargemm_matrix_scatter(struct stargemm_matrix *A, const void *full, int64_t ld,
			    int root);

/** Gather the distributed tiles into a full column-major array of the matrix's
 *  element type (ld >= M) on rank @p root; @p full is ignored on other ranks.
 *  Collective. */
int stargemm_matrix_gather(const struct stargemm_matrix *A, void *full, int64_t ld,
			   int root);

/* ------------------------------------------------------------------------------ */
/* GEMM                                                                            */
/* ------------------------------------------------------------------------------ */

/** op(X) selector: 'N' (or 'n') for X, 'T' (or 't') for X^T, 'C' (or 'c') for the
 *  conjugate transpose X^H (X^T for real types). */
typedef char stargemm_trans;

/** C = alpha * op(A) * op(B) + beta * C for matrices of any element type (the three
 *  must share it): @p alpha and @p beta point to scalars of that type (float, double,
 *  float _Complex, double _Complex). Otherwise as stargemm_pdgemm(). Collective. */
int stargemm_gemm(stargemm_trans transa, stargemm_trans transb, const void *alpha,
		  const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		  const void *beta, struct stargemm_matrix *C);

/** stargemm_gemm() returning once the tasks are submitted; stargemm_wait() before
 *  reading C. Collective. */
int stargemm_gemm_submit(stargemm_trans transa, stargemm_trans transb, const void *alpha,
			 const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			 const void *beta, struct stargemm_matrix *C);

/** C = alpha * op(A) * op(B) + beta * C on double matrices (a matrix of another type
 *  is refused: use stargemm_gemm()), collective and synchronous: returns when C
 *  holds the result on its owners. op(A) is M x K, op(B) is K x N, C is M x N; the
 *  tilings must agree (C's row tiling = op(A)'s row tiling, C's column tiling =
 *  op(B)'s column tiling, op(A)'s column tiling = op(B)'s row tiling) and all three
 *  matrices must live on the same P x Q grid. beta is applied exactly once to every
 *  element of C; beta = 0 overwrites C without reading it (NaNs in C are ignored).
 *  Each C tile is computed by its owner, as a chain of K-tile updates. */
int stargemm_pdgemm(stargemm_trans transa, stargemm_trans transb, double alpha,
		    const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		    double beta, struct stargemm_matrix *C);

/** The BLAS dgemm call on this process's column-major host arrays:
 *  C = alpha op(A) op(B) + beta C, C m x n, op(A) m x k, op(B) k x n, op 'N', 'T' or 'C'
 *  (= 'T' for real data), leading dimensions lda, ldb, ldc >= max(1, rows stored), as
 *  in BLAS (beta = 0 overwrites C without reading it; m or n = 0: nothing; k = 0 or
 *  alpha = 0: C = beta C, A and B not read). The arrays are tiled in place, not copied
 *  (tiles of STARGEMM_HOST_TILE elements a side if set, else 2048 with GPUs, else a
 *  side chosen from the CPU kernels measured on the machine and the problem's size:
 *  README, "Kernels measured on the machine"); the product runs on every worker of the process — out of core, with the
 *  planner's plan, when the three arrays do not fit in the GPUs' memory — and C holds
 *  the result when the call returns. With GPUs, the arrays are page-locked for the
 *  call. Needs stargemm_init() and a communicator of one process (-EINVAL otherwise:
 *  distributed matrices go through stargemm_pdgemm()). Bad arguments are refused with
 *  -EINVAL and a message naming the argument by its BLAS position (1 = transa); C must
 *  not overlap A or B. */
int stargemm_dgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
		   const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
		   double *C, int64_t ldc);

/** BLAS's sgemm, cgemm and zgemm as stargemm_dgemm(): same arguments, in the type of
 *  their letter; the complex ones take alpha and beta by address (as CBLAS), float
 *  _Complex or double _Complex, and op 'C' is the conjugate transpose. */
int stargemm_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
		   const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
		   float *C, int64_t ldc);
int stargemm_cgemm(char transa, char transb, int64_t m, int64_t n, int64_t k,
		   const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
		   const void *beta, void *C, int64_t ldc);
int stargemm_zgemm(char transa, char transb, int64_t m, int64_t n, int64_t k,
		   const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
		   const void *beta, void *C, int64_t ldc);

/** Same as stargemm_pdgemm() but returns as soon as the tasks are submitted; call
 *  stargemm_wait() before reading C. */
int stargemm_pdgemm_submit(stargemm_trans transa, stargemm_trans transb, double alpha,
			   const struct stargemm_matrix *A,
			   const struct stargemm_matrix *B, double beta,
			   struct stargemm_matrix *C);

/** Wait for every task and communication submitted by this process. Collective. */
int stargemm_wait(void);

/* ------------------------------------------------------------------------------ */
/* Counting what moves                                                             */
/* ------------------------------------------------------------------------------ */

/** GPUs per rank that stargemm drives and counts: stargemm_init() refuses a
 *  configuration with more CUDA workers, the products more devices. */
#define STARGEMM_MAX_DEVICES 16

/** Transfers made by this process since the last stargemm_transfers_reset(), as
 *  counted by StarPU (memory nodes) and StarPU-MPI (bytes sent between ranks). A
 *  "device" is a CUDA memory node; with no GPU, "loads" counts disk -> RAM. */
struct stargemm_transfer_stats {
	uint64_t h2d_tiles, h2d_bytes;   /**< host RAM -> GPU */
	uint64_t d2d_tiles, d2d_bytes;   /**< GPU -> GPU (peer copies) */
	uint64_t d2h_tiles, d2h_bytes;   /**< GPU -> host RAM */
	uint64_t disk_read_tiles, disk_read_bytes;   /**< disk -> RAM */
	uint64_t disk_write_tiles, disk_write_bytes; /**< RAM -> disk */
	int ndevices;                                /**< GPUs counted below */
	uint64_t device_loads[STARGEMM_MAX_DEVICES]; /**< tiles into each GPU (host+peer) */
	uint64_t device_peer_loads[STARGEMM_MAX_DEVICES]; /**< of which from another GPU */
	uint64_t mpi_recv_bytes;   /**< bytes this rank received from other ranks */
	uint64_t mpi_sent_bytes;   /**< bytes this rank sent */
	/** Peak of host memory allocated by StarPU (tiles received over MPI, and every
	 *  tile when StarPU manages the storage), sampled as stargemm_pdgemm_ooc() tasks
	 *  complete; 0 when no out-of-core GEMM ran since the reset. With a host budget
	 *  (ram_limit_mib, STARPU_LIMIT_CPU_MEM) StarPU's count, which includes freed
	 *  buffers it keeps for reuse; else, with CUDA workers, the live buffers of the
	 *  pinned host pool (STARGEMM_HOST_POOL, src/hostpool.c). */
	uint64_t ram_peak_bytes;
	/** Tasks of the out-of-core product (a C block's) that the stargemm-ooc policy
	 *  gave to workers, and of those the ones taken with an input neither on their
	 *  device nor on its way there: its prefetch was never made, or the tile was
	 *  evicted since, and its copy starts only when the task is taken. Prefetching
	 *  that works keeps the second near 0. Counted only with
	 *  stargemm_config.count_transfers (the default); zero under other policies. */
	uint64_t ooc_tasks, unprefetched_tasks;
	/** Tasks of the out-of-core product on GPUs that became ready (could run) with an
	 *  input they only read (an A or B tile) on none of the rank's GPUs and on its way
	 *  to none: no load was asked for ahead of time, and the task waits for its copy
	 *  from host memory. Tiles of this rank and tiles received over MPI are both
	 *  prefetched within the lookahead, so this stays near 0 when the lookahead
	 *  covers the transfers. Counted as ooc_tasks are. */
	uint64_t late_tasks;
};

/** Start counting from zero. Collective (MPI byte counts are exchanged). */
int stargemm_transfers_reset(void);

/** Counts since the last reset. Collective. Waits for no task: call it after
 *  stargemm_wait() (or stargemm_pdgemm()) for complete figures. */
int stargemm_transfers_get(struct stargemm_transfer_stats *stats);

/* ------------------------------------------------------------------------------ */
/* Out-of-core planning (Herault et al. 2019, sections 2-3)                        */
/* ------------------------------------------------------------------------------ */

/** Which regime of the paper's communication model a plan falls in (Eq. 1, §3.2.3).
 *  The paper's case (b) (c/G full columns of B kept on the device across C blocks) is
 *  not planned: stargemm's executor does not pin B columns, so such a problem is
 *  planned, and its transfers predicted, as case (c2). */
enum stargemm_plan_case {
	STARGEMM_CASE_A,  /**< (a) the device holds all the A, B and C tiles it needs */
	STARGEMM_CASE_C1, /**< (c1) all of this rank's C stays resident; A and B cycle */
	STARGEMM_CASE_C2, /**< (c2) C itself is cut into several blocks */
};

/** What the planner is given. Sizes are in tiles; the tile footprint is that of the
 *  largest tile (ragged tilings are planned conservatively). */
struct stargemm_plan_request {
	int64_t mt, nt, kt;     /**< C is mt x nt tiles, the inner dimension kt tiles */
	int64_t tile_bytes;     /**< bytes of one (largest) tile, > 0 */
	int P, Q;               /**< process grid */
	int devices;            /**< compute devices per rank sharing the C columns (G) */
	int64_t device_bytes;   /**< memory each device may use */
	/* Overrides: 0 = let the planner choose. */
	int64_t b, c;           /**< local C block: b tile rows x c tile columns per rank */
	int64_t d;              /**< chunk depth in tiles of k */
	int lookahead;          /**< chunks prefetched ahead (ell) */
	double c_fraction;      /**< share of device memory for the C block (0 = 0.75) */
};

/** The planner's answer. */
struct stargemm_plan {
	int64_t b, c, d;        /**< local block and chunk depth */
	int lookahead;          /**< ell */
	int64_t mloc, nloc;     /**< largest local C size in tiles (ceil(mt/P), ceil(nt/Q)) */
	int64_t X, Y, Z;        /**< blocks in each dimension, chunks per block */
	enum stargemm_plan_case regime;
	int64_t capacity;       /**< tiles one device can hold */
	int64_t tiles_needed;   /**< the most tiles a device needs: its C tiles + (ell + 1)
				     (its A rows + its B columns) d; with whole columns
				     b ceil(c/G) + (ell + 1)(b + ceil(c/G)) d */
	/* Predicted tile loads into each device over the whole product (Eq. 1, averaged
	 * over the devices when the last columns of a block are split), and the tiles
	 * the busiest rank receives over MPI (§3.2.1, counted for each rank of the cyclic
	 * grid; on an even grid every rank receives as many). */
	double loads_a, loads_b, loads_c, loads_total;
	double mpi_tiles;
	/** Bytes the planner counted per tile: the request's tile_bytes, or for a product
	 *  of irregular tiles or block-sparse operands the smaller unit its work list was
	 *  fitted with (capacity and tiles_needed are in this unit). */
	int64_t tile_bytes;
	/** The most bytes a device needs for the product's work list (its C block's tiles
	 *  and lookahead + 1 chunks of A and B tiles); 0 from stargemm_plan_compute(),
	 *  which sees no list. */
	int64_t footprint_bytes;
};

/** Name of a regime: "a", "c1" or "c2". */
const char *stargemm_plan_case_name(enum stargemm_plan_case regime);

/** Choose b, c, d and ell as §3.2.3 does (largest C block within c_fraction of the
 *  device memory, square on each device — b x c/G, the paper's per-GPU block — when
 *  possible, even blocks; then the largest d such that the C
 *  block and ell + 1 chunks of A and B fit; ell = 1 when C stays resident, 2 when C
 *  blocks change), classify the regime and predict the transfers. Every field of the
 *  request that is non-zero is used as given and checked. A pure function: it needs
 *  neither MPI nor StarPU. Returns -EINVAL, with a message giving the constraint and
 *  the numbers, when no plan fits or an override is invalid. */
int stargemm_plan_compute(const struct stargemm_plan_request *req,
			  struct stargemm_plan *plan);

/* ------------------------------------------------------------------------------ */
/* Out-of-core GEMM (Algorithm 3 of Herault et al. 2019)                           */
/* ------------------------------------------------------------------------------ */

/** Options of stargemm_pdgemm_ooc(); initialise with stargemm_ooc_options_init(). */
struct stargemm_ooc_options {
	int64_t b, c, d;        /**< overrides of the plan (>= 0; 0 = planner's choice) */
	int lookahead;          /**< ell override (>= 0; 0 = planner's choice) */
	double c_fraction;      /**< device share for the C block, in [0, 1) (0 = 0.75) */
	/** Memory one device may use, in bytes (>= 0); 0 = StarPU's size of the device's memory
	 *  node (which honours STARPU_LIMIT_CUDA_MEM, or STARPU_LIMIT_CPU_MEM / the RAM
	 *  budget of struct stargemm_config when there is no GPU), times usable_fraction. */
	int64_t device_bytes;
	/** Share of StarPU's device memory the plan may fill when device_bytes is 0,
	 *  in [0, 1] (0 = 0.9): the runtime needs some slack to evict and write back without
	 *  reloading tiles the plan keeps resident. */
	double usable_fraction;
};

void stargemm_ooc_options_init(struct stargemm_ooc_options *opt);

/** The plan stargemm_pdgemm_ooc() would use for this problem on this process (devices
 *  = its CUDA workers, or its RAM when it has none): stargemm_plan_compute()'s, fitted
 *  to the product's work list when its tiles are irregular or its operands
 *  block-sparse (fewer bytes per tile, until the list fills the device; see
 *  stargemm_plan.tile_bytes). Collective: every rank inspects the product and the
 *  ranks agree on the largest footprint. Errors as stargemm_pdgemm() and
 *  stargemm_plan_compute(). */
int stargemm_pdgemm_plan(stargemm_trans transa, stargemm_trans transb,
			 const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			 const struct stargemm_matrix *C,
			 const struct stargemm_ooc_options *opt, struct stargemm_plan *plan);

/** C = alpha op(A) op(B) + beta C with the chunked, blocked outer product: blocks of
 *  b x c local C tiles one after the other (y outer, x inner), each block's k range in
 *  chunks of depth d, and at most lookahead + 1 chunks submitted (hence requested over
 *  MPI and prefetched) at any time. A plan that does not fit is refused before any task
 *  is submitted. Collective and synchronous. @p plan (may be NULL) receives the plan.
 *  Block-sparse matrices with small tiles pack their tiles several per StarPU handle
 *  (doc/design.md, "Packs"); the plan of a product of packed operands is then over
 *  packs: its tiles are the packs, its blocks and chunks groups of them (overrides of
 *  b, c and d count packs, capped at the packs there are), and the planning unit the
 *  largest group (so the device must hold a few packs). When the operands' groups do not line up (distributions that cut A's
 *  columns and B's rows differently) the product runs in core (the options are still
 *  checked; @p plan receives stargemm_plan_compute()'s plan, not fitted to a list). */
int stargemm_pdgemm_ooc(stargemm_trans transa, stargemm_trans transb, double alpha,
			const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			double beta, struct stargemm_matrix *C,
			const struct stargemm_ooc_options *opt, struct stargemm_plan *plan);

/** stargemm_pdgemm_ooc() for matrices of any element type, the scalars by address as
 *  stargemm_gemm(). Collective. */
int stargemm_gemm_ooc(stargemm_trans transa, stargemm_trans transb, const void *alpha,
		      const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		      const void *beta, struct stargemm_matrix *C,
		      const struct stargemm_ooc_options *opt, struct stargemm_plan *plan);

/* ------------------------------------------------------------------------------ */
/* Block-sparse GEMM: patterns, norms, filtering                                   */
/* ------------------------------------------------------------------------------ */

/** Create @p C with the symbolic pattern of op(A) op(B): every tile some product
 *  reaches, united with the pattern of @p Cold when it is not NULL (DBCSR's product
 *  without "retain sparsity"). C has op(A)'s row tiling, op(B)'s column tiling and A's
 *  grid; it takes Cold's values on Cold's tiles and zeros on the others, so that a
 *  product into C computes alpha op(A) op(B) + beta Cold with nothing dropped. Cold is
 *  only read: it may be A or B (the sign step X (3I - X X) / 2 takes X as both).
 *  Errors as stargemm_pdgemm() (tilings, grids). Collective. */
int stargemm_matrix_create_product(struct stargemm_matrix **C, stargemm_trans transa,
				   stargemm_trans transb, const struct stargemm_matrix *A,
				   const struct stargemm_matrix *B,
				   const struct stargemm_matrix *Cold);

/** Frobenius norm of every tile into norms[i + j * mt] (mt * nt entries, 0 for absent
 *  tiles), on every rank: computed by tasks on the tiles' owners, then shared.
 *  Collective. */
int stargemm_matrix_norms(const struct stargemm_matrix *A, double *norms);

/** Drop the tiles of @p A whose Frobenius norm is below @p eps (finite, >= 0; 0 drops
 *  nothing): they become absent, as if never listed. @p removed (may be NULL) receives
 *  their number. Collective. */
int stargemm_matrix_filter(struct stargemm_matrix *A, double eps, int64_t *removed);

/* ------------------------------------------------------------------------------ */
/* Matrix operations (what an iteration needs besides the product)                */
/* ------------------------------------------------------------------------------ */
/* Dense or block-sparse matrices of any element type; scalars by address in the
 * matrix's type (as stargemm_gemm()). Each is collective and synchronous, and refuses
 * bad input on every rank with a message (stargemm_last_error()). */

/** Create @p B, a copy of @p A: its type, tilings, distribution, pattern and values. */
int stargemm_matrix_copy(struct stargemm_matrix **B, const struct stargemm_matrix *A);

/** A = alpha A (alpha = 0 writes zeros: NaNs do not survive). */
int stargemm_matrix_scale(struct stargemm_matrix *A, const void *alpha);

/** Create @p C = alpha A + beta B. Its pattern is the union of A's and B's (a tile that
 *  one of them lacks reads as zeros; C is dense when both are); it has A's tilings and
 *  distribution (B's tiles move to their owners, B may be distributed otherwise; A and
 *  B may be the same matrix). Errors: A and B of different element types, sizes or
 *  tilings, one packed and the other not (small tiles, stargemm_matrix_create_sparse()),
 *  a NULL scalar. To update A in place, add, then destroy A and keep C. */
int stargemm_matrix_add(struct stargemm_matrix **C, const void *alpha,
			const struct stargemm_matrix *A, const void *beta,
			const struct stargemm_matrix *B);

/** A = A + alpha I: alpha is added to A(r, r) for r < min(m, n). The pattern does not
 *  grow: a tile that holds diagonal elements and is absent is an error naming it (make
 *  A with its diagonal tiles, or stargemm_matrix_add() a matrix that has them). */
int stargemm_matrix_add_diagonal(struct stargemm_matrix *A, const void *alpha);

/** The trace of A (the sum of A(r, r), r < min(m, n); absent tiles count as zeros),
 *  into *trace, a scalar of A's type, on every rank (the same value). */
int stargemm_matrix_trace(const struct stargemm_matrix *A, void *trace);

/** The Frobenius norm of A into *norm on every rank (per tile:
 *  stargemm_matrix_norms()). */
int stargemm_matrix_norm(const struct stargemm_matrix *A, double *norm);

/** Options of stargemm_bsgemm(); initialise with stargemm_bsgemm_options_init(). */
struct stargemm_bsgemm_options {
	/** Norm filtering threshold (finite, >= 0; 0 = none): a tile product
	 *  C(i,j) += op(A)(i,k) op(B)(k,j) is skipped when
	 *  ||op(A)(i,k)||_F ||op(B)(k,j)||_F < filter_eps, and after the product the C
	 *  tiles whose norm is below filter_eps are dropped from C's pattern. */
	double filter_eps;
	/** 1: run through the out-of-core plan of stargemm_pdgemm_ooc(), with @p ooc
	 *  (packed operands: planned over packs, as stargemm_pdgemm_ooc() says); 0: in
	 *  core. Other values are refused. */
	int out_of_core;
	struct stargemm_ooc_options ooc;
	/** In core, the operand that stays where it lives (Selvitopi et al.; see
	 *  doc/design.md, "Which operand stays in place"): 'C' (each product on its C
	 *  tile's owner, the tiles of A and B sent there), 'A' (on the owner of A's tile,
	 *  B's tile sent there, each rank's partial C tile sent to C's owner and added),
	 *  'B' (the same with B's tile), or 0: STARGEMM_STATIONARY, else the model's
	 *  choice (the busiest rank's flops, MPI bytes and, on ranks with GPUs, bytes
	 *  between host and GPUs and the cost of its tile-product tasks, not counting
	 *  the tiles already in place; C unless another takes under 0.58 of its time). 'A' and 'B' are refused out of core and
	 *  with packed operands. */
	int stationary;
	/** A hint to the model's choice (stationary 0): how many products, this one
	 *  first, will read this A (reuse_a) and this B (reuse_b) with their values
	 *  unchanged and the same work (a Chebyshev filter's H: the polynomial's degree;
	 *  a product repeated: the repetitions). The model then takes each choice's mean
	 *  time over those products: this one with what is in place now, the next ones
	 *  with the unchanged operands' tiles where this choice moves them (StarPU-MPI's
	 *  cache; in core, on the GPUs that read them) — a choice that moves A's tiles
	 *  once may pay over the run where it does not over one product. The same value
	 *  at every call of the run is right: what an earlier call left in place counts
	 *  as such. 0 or 1: this product only (the default); negative: an error. */
	int reuse_a, reuse_b;
};

void stargemm_bsgemm_options_init(struct stargemm_bsgemm_options *opt);

/** What stargemm_bsgemm() did (the same on every rank). */
struct stargemm_bsgemm_info {
	int64_t products;        /**< tile products computed, over all ranks */
	int64_t skipped;         /**< products the norm filter left out */
	int64_t c_removed;       /**< C tiles dropped after the product (norm < eps) */
	double flops;            /**< useful flops: 2 m n k over the computed products */
	double inspect_seconds;  /**< time this rank spent building the work list */
	/** Out of core: tiles the work list makes each of this rank's devices load (GPU,
	 *  or RAM from disk without GPU), mean over the devices — A and B once per run
	 *  of consecutive chunks that read them, C once per block unless beta = 0; hold
	 *  it against stargemm_transfer_stats.device_loads. 0 in core. */
	double pred_loads;
	int planned;             /**< out of core: @p plan is the plan used */
	struct stargemm_plan plan;
	/** The operand that stayed in place: 'C', 'A' or 'B' (stargemm_bsgemm_options) */
	int stationary;
	/** Bytes the stationary model counts over MPI for that choice, all ranks (each
	 *  tile once per rank that receives it, unless an earlier product left it in
	 *  StarPU-MPI's cache there; partial C tiles included; hold it against the sum
	 *  over ranks of stargemm_transfer_stats.mpi_recv_bytes). 0 on one rank and out
	 *  of core. */
	double model_mpi_bytes;
	/** The model's seconds of keeping C, A and B in place, in that order, when it
	 *  chose (in core, several ranks, tiles of 64 a side or more); else 0. With reuse_a or
	 *  reuse_b above 1, the mean per product over those products. */
	double model_seconds[3];
	/** Tiles of generated operands (stargemm_matrix_create_generated()) that this rank
	 *  made for the call, their norms' included. */
	int64_t generated_tiles;
	/** Of those, the tiles made on this rank's GPUs by the CUDA generator
	 *  (stargemm_matrix_set_cuda_generator()). */
	int64_t generated_on_gpus;
};

/** C = alpha op(A) op(B) + beta C on block-sparse (or dense) matrices, with norm
 *  filtering, in core or out of core; C's pattern is kept (create C with
 *  stargemm_matrix_create_product() for the symbolic one). Collective and synchronous.
 *  @p opt may be NULL (no filtering, in core); @p info may be NULL. Errors as
 *  stargemm_pdgemm() and stargemm_pdgemm_ooc(), and a negative or non-finite
 *  filter_eps. */
int stargemm_bsgemm(stargemm_trans transa, stargemm_trans transb, double alpha,
		    const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		    double beta, struct stargemm_matrix *C,
		    const struct stargemm_bsgemm_options *opt,
		    struct stargemm_bsgemm_info *info);

/** stargemm_bsgemm() for matrices of any element type (one type for A, B and C), the
 *  scalars by address in that type as stargemm_gemm(); op 'C' is the conjugate
 *  transpose for complex types. The tile norms (filtering) are Frobenius norms in
 *  double whatever the type. Errors as stargemm_bsgemm() and stargemm_gemm().
 *  Collective and synchronous. */
int stargemm_bsgemm_type(stargemm_trans transa, stargemm_trans transb, const void *alpha,
			 const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			 const void *beta, struct stargemm_matrix *C,
			 const struct stargemm_bsgemm_options *opt,
			 struct stargemm_bsgemm_info *info);

#ifdef __cplusplus
}
#endif
#endif /* STARGEMM_H */
