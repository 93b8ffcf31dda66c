/*
 * internal.h — definitions shared by stargemm's source files, not installed.
 *
 * The matrix descriptor keeps the tiling as offset arrays, so that regular tilings
 * with a ragged last tile and fully irregular tilings (block-sparse work) are the
 * same object; tile handles may be NULL for tiles that do not exist (sparse shapes).
 * Internal functions shared between files are prefixed stargemm__.
 */
#ifndef STARGEMM_INTERNAL_H
#define STARGEMM_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "contract.h"
#include "distribution.h"
#include "error.h"
#include "pack.h"
#include "pool.h"
#include "stargemm.h"

/* An element type (codelets/element.c): what stargemm needs to know of s, d, c and z,
 * so that one implementation serves the four precisions. Scalars travel as double
 * _Complex (exact for every type: a float widens exactly, a real has imaginary part 0)
 * and each kernel narrows them to its type. op is 'N', 'T' or 'C' (the conjugate
 * transpose; for real types the callers pass 'T'). */
struct stargemm__element {
	char letter;              /* 's', 'd', 'c', 'z' (stargemm_type) */
	const char *name;         /* "single", "double", "single complex", "double complex" */
	size_t size;              /* bytes per element */
	int is_complex;           /* two reals per element */
	double fma_flops;         /* flops of one multiply-add: 2, or 8 when complex */
	/* The cost of one multiply-add relative to a double one, for the performance
	 * models (codelets/model.c): single precision runs twice as many lanes. */
	double model_weight;
	/* C = alpha op(A) op(B) + beta C with the CPU BLAS (cblas_?gemm). */
	void (*cpu_gemm)(char ta, char tb, int m, int n, int k, double _Complex alpha,
			 const void *a, int lda, const void *b, int ldb, double _Complex beta,
			 void *c, int ldc);
	/* The same, op(A) = A, with the type's kernel for small products of every shape
	 * (stargemm__?gemm_any(), below), the scalars narrowed to the type; only where
	 * stargemm__dgemm_any_usable(). */
	void (*any_gemm)(char tb, int m, int n, int k, double _Complex alpha, const void *a,
			 int lda, const void *b, int ldb, double _Complex beta, void *c, int ldc);
	/* The same with cuBLAS (cublas?gemm) on the cublasHandle_t @p handle, returning its
	 * cublasStatus_t (0: success); NULL in builds without CUDA. */
	int (*cuda_gemm)(void *handle, char ta, char tb, int m, int n, int k,
			 double _Complex alpha, const void *a, int lda, const void *b, int ldb,
			 double _Complex beta, void *c, int ldc);
	/* @p count such products at once (cublas?gemmBatched): a, b and c are arrays of
	 * @p count tile addresses, in device memory; NULL in builds without CUDA. */
	int (*cuda_gemm_batched)(void *handle, char ta, char tb, int m, int n, int k,
				 double _Complex alpha, const void *const *a, int lda,
				 const void *const *b, int ldb, double _Complex beta,
				 void *const *c, int ldc, int count);
	/* T = beta T on a rows x cols tile of leading dimension ld (beta = 0 writes zeros
	 * without reading T). */
	void (*scale)(void *t, int64_t ld, int64_t rows, int64_t cols, double _Complex beta);
	/* The Frobenius norm of a tile. */
	double (*norm)(const void *t, int64_t ld, int64_t rows, int64_t cols);
	/* Store re + i im (im ignored for real types) at element @p idx of @p t. */
	void (*store)(void *t, int64_t idx, double re, double im);
	/* The scalar at @p p, of this type, widened. */
	double _Complex (*load)(const void *p);
};
/* The element type of letter @p t ('s', 'd', 'c', 'z'); NULL for any other. */
const struct stargemm__element *stargemm__element(int t);

struct stargemm_matrix {
	int64_t m, n;             /* size in elements */
	int64_t mt, nt;           /* size in tiles */
	int64_t *row_off;         /* mt + 1 offsets: tile row i spans [row_off[i], row_off[i+1]) */
	int64_t *col_off;         /* nt + 1 offsets, same for tile columns */
	/* The P x Q process grid, and which rank each of its processes is (a copy of the
	 * distribution's map; src/distribution.h). */
	struct stargemm__grid grid;
	/* Tile (i, j) on grid process (rows.proc[i], cols.proc[j]): stargemm_matrix_owner(). */
	struct stargemm__axis rows, cols;
	int64_t tag_base;         /* StarPU-MPI tag of tile (i, j) = tag_base + i + j * mt */
	starpu_data_handle_t *tiles; /* mt * nt handles, tile (i, j) at i + j * mt; NULL
					when absent */
	uint8_t *present;         /* mt * nt flags (block-sparse), or NULL: every tile */
	int64_t npresent;         /* tiles present */
	/* The element type; elem_size = type->size: tile storage, StarPU registration,
	 * copies to and from user arrays and the planner's tile bytes take it from here. */
	const struct stargemm__element *type;
	size_t elem_size;
	void **storage;           /* mt * nt pointers; non-NULL for tiles this rank allocated */
	int64_t stored_bytes;     /* this rank's tiles, counted by stargemm__storage_reserve() */
	/* Packed (src/pack.c): tiles and storage are NULL; each pack of the layout has a
	 * handle in packs (gmt * gnt, pack (I, J) at I + J * gmt; NULL: empty), whose
	 * buffer StarPU allocates; tags are per pack. */
	struct stargemm__packing *pack;
	starpu_data_handle_t *packs;
	/* This process's tiles registered in place in a user's local array: base NULL if
	 * not. The local array holds the process's tiles in their global order along
	 * each axis, after row0 rows and col0 columns that precede the matrix (ScaLAPACK's
	 * layout, of which the matrix may be a submatrix; src/matrix.c, local_offsets()). */
	struct stargemm__local {
		void *base;       /* local element (0, 0) of the user's array */
		int64_t ld;       /* leading dimension, in elements */
		int64_t row0, col0; /* local offset of this process's first tile */
	} local;
	/* A collective call has given every tile a value (a fill, a scatter, a product
	 * into it; packs are zeroed when created). Until then the tiles read as zeros:
	 * stargemm__zero_if_unwritten() before the first read. Same on every rank. */
	int written;
};

/* One axis of a submatrix of a ScaLAPACK 2D block-cyclic array: the n elements from
 * global index first (0-based) of an axis in blocks of b, block 0 on process src (of
 * P or Q). The submatrix's tiles are the blocks it spans, the first and last ones cut
 * to it. */
struct stargemm__block_axis {
	int64_t n, b, first;
	int src;
	/* Elements of block 0 before the array's first one, not stored: an array whose
	 * first block is smaller than the others (ScaLAPACK's IMB < MB) counts from a
	 * block of the usual size, of which it lacks the first lead elements. */
	int64_t lead;
	/* On an axis of one process (P or Q = 1) its blocks lie one after the other in the
	 * local array, so a tile may span several: after the first tile (the submatrix's
	 * part of its first block), tiles of merge blocks. 0 or 1: a tile per block. */
	int64_t merge;
	/* Further ends of tiles: ncuts element offsets from the submatrix's start,
	 * increasing, inside (0, n) (the block ends of the operand that a product joins
	 * this axis with, when its blocks lie elsewhere); a tile they cross is split, its
	 * pieces on its process. NULL: none. */
	const int64_t *cuts;
	int64_t ncuts;
};
/* The side of the tiles that in-place host arrays are cut into (src/host.c): the
 * environment's STARGEMM_HOST_TILE, else 256 without GPUs and 2048 with; -EINVAL with a
 * message for a bad setting. */
int stargemm__host_tile(int64_t *nb);
/* That submatrix (rows x cols) of elements of @p type on a P x Q grid whose process
 * (p, q) is rank grid[p Q + q] (@p grid NULL: p Q + q; else checked as a distribution's
 * map, src/distribution.c), whose local tiles are registered in place in the
 * column-major local array @p base of leading dimension @p ld (checked against the
 * local rows the submatrix reaches, and agreed): nothing is copied. Errors name @p fn
 * (src/matrix.c). */
int stargemm__matrix_create_in_place(struct stargemm_matrix **out, int type,
				     const struct stargemm__block_axis *rows,
				     const struct stargemm__block_axis *cols, int P, int Q,
				     const int *grid, void *base, int64_t ld, const char *fn);
/* With GPUs, copy the latest value of every local tile of an in-place matrix back to
 * its place in the user's array (a read acquisition on host memory); else nothing. */
void stargemm__sync_in_place(const struct stargemm_matrix *A);
/* Record that a product writes in-place matrix @p A (with GPUs): the next
 * stargemm_wait() brings its tiles back to the user's array (src/runtime.c). forget:
 * A is being destroyed (its unregistration brings them back). */
void stargemm__written_in_place(const struct stargemm_matrix *A);
void stargemm__forget_in_place(const struct stargemm_matrix *A);

/* Before a collective call reads @p A: if it was never written, insert tasks that zero
 * its tiles (ordered before the reads by StarPU's data dependencies), and mark it
 * written. A failed insertion is reported by the next stargemm_wait(). Collective. */
void stargemm__zero_if_unwritten(const struct stargemm_matrix *A);

/* Index of tile (i, j) in the tiles/storage arrays. */
static inline int64_t stargemm__tile_index(const struct stargemm_matrix *A, int64_t i,
					   int64_t j)
{
	return i + j * A->mt;
}

static inline starpu_data_handle_t stargemm__tile(const struct stargemm_matrix *A,
						  int64_t i, int64_t j)
{
	return A->tiles[stargemm__tile_index(A, i, j)];
}

/* Bytes of tile (i, j). */
static inline size_t stargemm__tile_bytes(const struct stargemm_matrix *A, int64_t i,
					  int64_t j)
{
	return (size_t)((A->row_off[i + 1] - A->row_off[i]) *
			(A->col_off[j + 1] - A->col_off[j])) * A->elem_size;
}

/* Whether tile (i, j) exists (always, unless the matrix is block-sparse). */
static inline int stargemm__present(const struct stargemm_matrix *A, int64_t i, int64_t j)
{
	return !A->present || A->present[stargemm__tile_index(A, i, j)];
}

/* Remove tile (i, j) from @p A's pattern (its handle and storage go; a dense matrix
 * becomes block-sparse). Every rank must drop the same tiles. */
int stargemm__matrix_drop_tile(struct stargemm_matrix *A, int64_t i, int64_t j);

/* A block-sparse matrix (as stargemm_matrix_create_distributed) of element type
 * @p type, packed only when @p packable; errors name @p fn. */
int stargemm__matrix_create_pattern(struct stargemm_matrix **out, int type, int64_t mt,
				    const int64_t *row_sizes, int64_t nt,
				    const int64_t *col_sizes, int64_t npresent,
				    const int64_t *present,
				    const struct stargemm_distribution *dist, int packable,
				    const char *fn);

/* Largest extent of the @p count tiles described by offsets @p off (count + 1). */
int64_t stargemm__largest_tile(const int64_t *off, int64_t count);

/* Runtime state (runtime.c). */
int stargemm__initialized(void);
/* Before work of the calling thread alone (inspecting, creating matrices): when no task
 * is pending, pause StarPU's workers (returns 1), since StarPU 1.3 keeps its last awake
 * worker polling for tasks and, on the caller's core, that halves the caller's speed
 * (a bound single-core rank: 2x longer inspection). stargemm__quiet_end() resumes them;
 * call it before waiting for tasks. */
int stargemm__quiet_begin(void);
void stargemm__quiet_end(int paused);
/* Tiles are StarPU-allocated (home node -1) so that they can be evicted to disk. */
int stargemm__managed_storage(void);
/* The managed storage (storage.c): a RAM budget, and the disk node behind it, holds
 * every tile of this rank's live matrices, or StarPU 1.3 waits for room forever.
 * reserve() counts a matrix's own tiles (-ENOMEM with the numbers when they do not
 * fit), release() gives them back; both count nothing without managed storage. */
void stargemm__storage_reset(void);
int stargemm__storage_reserve(int64_t bytes, const char *fn);
void stargemm__storage_release(int64_t bytes);
/* MPI calls from the application thread are allowed beside StarPU-MPI's thread. */
int stargemm__mpi_thread_multiple(void);
void stargemm__transfers_shutdown(void);
/* Record the current StarPU-allocated host memory in the peak (stats.c). */
void stargemm__sample_memory(void);
MPI_Comm stargemm__comm(void);
/* Element-wise sum of @p n values over all ranks into @p out (collective; works at any
 * MPI thread level, also in simulation) (collective.c). */
int stargemm__sum_u64(const uint64_t *in, uint64_t *out, int n);
/* The same sum without blocking: begin posts it (a copy of @p in is taken; NULL: out
 * of memory, message set), end waits for it, writes it to @p out and frees it.
 * Collective: every rank begins and ends its sums in the same order. */
struct stargemm__sum;
struct stargemm__sum *stargemm__sum_begin(const uint64_t *in, int n);
int stargemm__sum_end(struct stargemm__sum *s, uint64_t *out);
/* Error agreement, for a collective call whose failure may be one rank's only (memory,
 * environment): every rank passes its status; returns it, or -ECANCELED with the
 * message of the lowest failing rank when this rank succeeded and another did not, so
 * that all ranks give up together instead of some waiting for the others' messages.
 * Collective. */
int stargemm__agree(int ret);
/* What the ranks learn of a failure: how many failed, the lowest one and its message. */
#define STARGEMM__FAILURE_MSG 512
struct stargemm__failure {
	uint64_t count;
	int rank;                         /* the lowest failing rank, -1 if none */
	char msg[STARGEMM__FAILURE_MSG];  /* its message (truncated) */
};
/* Every rank passes whether it failed and its message; every rank gets @p f.
 * Collective; returns 0 or an error of the reduction itself. */
int stargemm__share_failure(int failed, const char *msg, struct stargemm__failure *f);
/* Give every rank the @p n values of which each rank knows its own entries and holds
 * +0.0 for the others' (non-negative values, one owner per entry). Collective. */
int stargemm__share_owned_f64(double *v, int64_t n);
/* Take the reductions' own StarPU-MPI traffic out of per-destination byte counts. */
void stargemm__reduction_bytes(size_t *sent);
void stargemm__reduction_shutdown(void);
/* Reserve @p count consecutive StarPU-MPI tags; identical on every rank as long as
 * matrices are created collectively in the same order. */
int64_t stargemm__reserve_tags(int64_t count);

/* Record a task that failed after the call's arguments were accepted: a kernel that
 * reports a failure it cannot return (cuBLAS status), or a task of a product that could
 * not be inserted (src/execute.c). The next stargemm_wait() returns -EIO with @p msg on
 * every rank (stargemm__check_task_failures()). Thread-safe. */
void stargemm__task_failed(const char *msg);
/* Whether this rank recorded a failed task since the last check. */
int stargemm__task_failures(void);
/* Collective: -EIO on every rank if any rank recorded a failed task since the last
 * call, with the message of the lowest such rank; else 0. Clears the record. */
int stargemm__check_task_failures(void);

/* Fault injection for the tests (src/fault.c): STARGEMM_FAULT="WHAT:RANK:N". */
enum stargemm__fault { STARGEMM_FAULT_INSERT = 0, STARGEMM_FAULT_KERNEL = 1,
		       STARGEMM_FAULT_SCRATCH = 2 };
/* Read STARGEMM_FAULT for rank @p rank (stargemm_init()); -EINVAL if it does not parse. */
int stargemm__fault_setup(int rank);
/* Whether this event of kind @p kind is the one to fail (thread-safe). */
int stargemm__fault(enum stargemm__fault kind);
/* Wait for every submitted task (collective, as stargemm_wait()). @p ret != 0: an
 * error already recorded, returned with its message kept (stargemm_wait() would
 * clear it) and the wait's own failure appended; 0: stargemm_wait()'s status. */
int stargemm__wait_after(int ret);

/* Check that @p A is usable (non-NULL, runtime up); returns 0 or an error. */
int stargemm__check_matrix(const struct stargemm_matrix *A, const char *name);

/* A GEMM problem C = alpha op(A) op(B) + beta C (pdgemm.c). */
struct stargemm__gemm {
	char ta, tb;
	double _Complex alpha, beta;   /* widened from the matrices' type */
	const struct stargemm_matrix *A, *B;
	struct stargemm_matrix *C;
	/* The public call, for messages ("stargemm_pdgemm" if NULL), and the element type
	 * it takes alpha and beta in: 'd' for the double calls, 0 for any type (then the
	 * scalars are read by stargemm__gemm_scalars() once the matrices are checked); a
	 * double call refusing other types names its call of any type, @p typed
	 * ("stargemm_gemm()" if NULL). */
	const char *fn;
	char want;
	const char *typed;
	const struct stargemm__element *type;  /* the matrices', set by stargemm__gemm_check() */
	int64_t kt;   /* tiles of the inner dimension, set by stargemm__gemm_check() */
	/* Workers that may run the GEMMs (STARPU_CPU | STARPU_CUDA, set by
	 * stargemm__gemm_check(); the out-of-core executor narrows it to STARPU_CUDA). */
	uint32_t where;
	/* Norm filtering (src/bsgemm.c): every rank's tile norms of A and B (layout of the
	 * tiles array), NULL = none, and the threshold. */
	const double *norm_a, *norm_b;
	double eps;
	/* Set by the executor once one of the product's insertions failed on this rank: the
	 * inserts then insert the tasks as no-ops (codelets/noop.c, src/execute.c). */
	int skip;
};

/* Out of core, the ranks agree whether a task failed about every STARGEMM_AGREE_FLOPS
 * of each rank's work (src/execute.c, abandoned()): 1e10, a tenth of a second of a
 * 100 GFLOP/s CPU rank, so that a failure stops every rank within a second or so of
 * such work while the sums cost well under 1%. The environment variable of the same
 * name overrides it (a number >= 0; 0: at every ell + 1 chunks). */
#define STARGEMM_AGREE_FLOPS 1e10

/* Batches of small tile products (src/inspect.c, codelets/batch.c), in core, on the
 * CPU workers or the GPUs. The thresholds were measured on CPUs; on GPUs they are the
 * same until measured there.
 * Tile products below STARGEMM_BATCH_BELOW flops are batched: 2 * 256^3, the size up
 * to which batching (libxsmm, no task per product) was measured faster than one BLAS
 * task per product (doc/performance.md). A batch holds about STARGEMM_BATCH_FLOPS
 * (~5 ms of one core): a task then costs < 0.1% of its work, and larger batches
 * were measured no faster. The environment variables of the same names override
 * them (0 turns batching off); a value that is not a number >= 0 is refused. */
#define STARGEMM_BATCH_BELOW 3.4e7
#define STARGEMM_BATCH_FLOPS 5e8
/* Batched tile products take libxsmm's kernels, one per tile shape, while the tilings
 * of C and of the inner dimension give at most STARGEMM_XSMM_SHAPES shapes (m, n, k);
 * beyond, the kernels' code no longer stays in cache and one kernel for every shape
 * (codelets/smallkernel.c, AVX-512) is faster: measured crossover at 64 shapes,
 * doc/performance.md. */
#define STARGEMM_XSMM_SHAPES 64
int stargemm__batch_settings(double *below, double *flops);

/* A setting from the environment variable @p name (a number >= 0), or @p dflt when
 * unset; anything else is refused with a message (src/product.c). */
int stargemm__env_setting(const char *name, double dflt, double *value);

/* Packs: small tiles stored several per StarPU handle (src/pack.c). An axis (tile rows
 * or columns) of a block-sparse matrix is packed when its mean tile extent is below
 * STARGEMM_PACK_BELOW elements, into groups of consecutive tiles of at least
 * STARGEMM_PACK_EXTENT elements; the environment variables of the same names override
 * them (STARGEMM_PACK_BELOW=0: never pack). Measured in doc/performance.md. */
#define STARGEMM_PACK_BELOW 64
#define STARGEMM_PACK_EXTENT 256
int stargemm__pack_settings(double *below, double *extent);

/* The rank that owns pack (gi, gj) of a packed matrix: its first tile's. */
static inline int stargemm__pack_owner(const struct stargemm_matrix *A, int64_t gi,
				       int64_t gj)
{
	return stargemm_matrix_owner(A, A->pack->row_first[gi], A->pack->col_first[gj]);
}

/* Call @p visit(tile, i, j, arg) for each present tile (i, j) of pack (gi, gj) of @p A,
 * whose buffer is @p base (tile: its first element, column-major, leading dimension
 * its row count). */
typedef void (*stargemm__tile_visit)(void *tile, int64_t i, int64_t j, void *arg);
void stargemm__pack_walk(const struct stargemm_matrix *A, int64_t gi, int64_t gj, void *base,
			 stargemm__tile_visit visit, void *arg);

/* Whether an operand of the problem is packed (src/pack.c): it is then multiplied in
 * core, by batches on CPU workers, also when out of core was asked for. */
static inline int stargemm__gemm_packed(const struct stargemm__gemm *g)
{
	return g->A->pack || g->B->pack || g->C->pack;
}

/* Validate a problem (sizes, tilings, grids, aliasing, element types); sets p->kt and
 * p->type. */
int stargemm__gemm_check(struct stargemm__gemm *p);
/* Read the scalars at @p alpha and @p beta in the type of the checked problem @p p
 * (-EINVAL when one is NULL). */
int stargemm__gemm_scalars(struct stargemm__gemm *p, const void *alpha, const void *beta);
/* The op letter the kernels get for op(X) = @p t of problem @p p: 'N', 'T', or 'C' for
 * a complex conjugate transpose. */
char stargemm__kernel_op(const struct stargemm__gemm *p, char t);

/* The k-th tile of row i of op(A), and of column j of op(B). */
starpu_data_handle_t stargemm__gemm_a_tile(const struct stargemm__gemm *p, int64_t i, int64_t k);
starpu_data_handle_t stargemm__gemm_b_tile(const struct stargemm__gemm *p, int64_t k, int64_t j);

/* The handle a work list's reference names: tile (r, c) of op(A) (@p operand
 * STARGEMM_OP_A), op(B) or C, or for a packed operand its pack (r, c) in op(X)'s
 * coordinates (src/worklist.h). */
starpu_data_handle_t stargemm__ref_handle(const struct stargemm__gemm *p, int operand,
					  int64_t r, int64_t c);

/* Whether a transposition character means op(X) = X^T. */
int stargemm__is_trans(char t);

/* Insert the update of C(i, j) by the k-th tiles of op(A) and op(B) (beta applied when
 * @p first: the first update of the tile's chain), with a StarPU priority, the policy's task info (src/contract.h; may be NULL)
 * and an optional callback run on the rank that executes it. */
int stargemm__gemm_insert(const struct stargemm__gemm *p, int64_t i, int64_t j, int64_t k,
			  int first, int priority, struct stargemm_task_info *info,
			  void (*callback)(void *), void *callback_arg);
/* Insert one batch of tile products of a work list (the products' op(A), op(B) and C
 * tiles are the batch's refs, the buffers of the task, described in @p descr: room for
 * the largest batch's refs), with a StarPU priority (the task info is its first
 * product's) and an optional callback run on the rank that executes it. */
struct stargemm__worklist;
int stargemm__batch_insert(const struct stargemm__gemm *p, const struct stargemm__worklist *wl,
			   int64_t batch, struct starpu_data_descr *descr, int priority,
			   void (*callback)(void *), void *callback_arg);
/* Once the CUDA workers run (stargemm_init()): what the batches' CUDA codelet needs
 * of each device (codelets/batch.c: its memory pool keeps the tile addresses' arrays).
 * Nothing without CUDA workers or in SimGrid mode. */
void stargemm__batch_cuda_setup(void);
/* Insert C(i, j) = beta C(i, j), for a C tile that no product updates (for a packed C:
 * its pack (i, j), every tile).
 * The three inserts return -EIO with a message when the task cannot be inserted (or
 * STARGEMM_FAULT injects that); with p->skip they insert the task as a no-op. */
int stargemm__scale_insert(const struct stargemm__gemm *p, int64_t i, int64_t j);

/* The device (0..G-1) of a split tile of a C block (src/plan.c): the last L mod G
 * local columns of a block of L are not given whole to devices; their (L mod G) x R
 * tiles, taken column by column, are dealt out in G ranges of equal weight. @p before:
 * the weight of the split tiles before this one, @p total: of all of them. The
 * planner's model weighs every tile 1; the inspector weighs a tile by its area (its
 * share of the work). */
int stargemm__split_device(int64_t before, int64_t total, int G);

/* The executor (src/execute.c). new: what the walk of the work list @p wl of problem
 * @p gemm needs, allocated before the product's agreement (-ENOMEM, or -EINVAL for a
 * bad STARGEMM_AGREE_FLOPS); execute: walk it, returning when the tasks are inserted
 * (in core: 0) or done (out of core: stargemm_wait()'s status). A task that cannot be
 * inserted is reported by the next stargemm_wait() on every rank. The executor may be
 * freed once execute returns. */
struct stargemm__worklist;
struct stargemm__executor;
int stargemm__executor_new(struct stargemm__gemm *gemm, const struct stargemm__worklist *wl,
			   struct stargemm__executor **out);
int stargemm__execute(struct stargemm__executor *ex);
void stargemm__executor_free(struct stargemm__executor *ex);
/* A product (dense or block-sparse operands) through the inspector and the executor
 * (src/product.c); @p pr NULL: in core, else out of core with the plan of that request
 * fitted to the list (src/fit.c), which @p plan (may be NULL) receives. @p info (may
 * be NULL) receives the list's products, skips, flops and the inspection time. */
int stargemm__run_product(struct stargemm__gemm *g, const struct stargemm_plan_request *pr,
			  struct stargemm_plan *plan, struct stargemm_bsgemm_info *info);
/* The plan stargemm__run_product() would run request @p pr with (collective when it
 * inspects, see src/fit.c). */
int stargemm__product_plan(struct stargemm__gemm *g, const struct stargemm_plan_request *pr,
			   struct stargemm_plan *plan);
/* The out-of-core plan request of a problem on this rank's devices (src/ooc.c):
 * tilings, grid, the largest tile, the device budget and @p opt's overrides; checks
 * the problem first. */
int stargemm__ooc_request(struct stargemm__gemm *g, const struct stargemm_ooc_options *opt,
			  struct stargemm_plan_request *pr);
/* Keep an in-core work list until the next stargemm_wait() (runtime.c): its tasks
 * read it. */
void stargemm__keep_until_wait(struct stargemm__worklist *wl);

/* The progress line (progress.c, stargemm_set_progress()). Whether this process prints
 * it (asked for, rank 0, stderr a terminal or STARGEMM_PROGRESS=force); then, before
 * inserting a product, count its @p tasks local tasks and @p flops (every rank's):
 * returns 1 if they are counted, and each must then call
 * stargemm__progress_task_done() (a StarPU callback) when it ends. The next wait
 * (stargemm_wait(), once every task is done) ends the line. */
int stargemm__progress_wanted(void);
int stargemm__progress_begin(int64_t tasks, double flops);
void stargemm__progress_task_done(void *unused);
void stargemm__progress_end(void);

/* The out-of-core scheduling policy (sched/ooc.c). */
extern struct starpu_sched_policy stargemm_ooc_policy;

/* Codelets (codelets/). */
extern struct starpu_codelet stargemm_gemm_cl;            /* C = a op(A) op(B) + b C, C in RW */
extern struct starpu_codelet stargemm_gemm_overwrite_cl;  /* same with beta = 0, C in W */
extern struct starpu_codelet stargemm_fill_cl;            /* tile filled by a user function */
extern struct starpu_codelet stargemm_scale_cl;           /* C = beta C, C in RW */
extern struct starpu_codelet stargemm_zero_cl;            /* C = 0, C in W */
extern struct starpu_codelet stargemm_norm_cl;            /* *out = ||A||_F, A in R */
extern struct starpu_codelet stargemm_copy_cl;            /* B = A, A in R, B in W */
extern struct starpu_codelet stargemm_batch_cl;           /* many tile products */
extern struct starpu_codelet stargemm_pack_fill_cl;       /* a pack's tiles, user function */
extern struct starpu_codelet stargemm_pack_norm_cl;       /* a pack's tile norms */
extern struct starpu_codelet stargemm_pack_copy_cl;       /* a pack from another's */
extern struct starpu_codelet stargemm_noop_cl;            /* nothing: a skipped task */
/* The tile-wise codelets' models, shared with their pack versions (a regression on the
 * elements of the buffer: a pack's are its tiles'). */
extern struct starpu_perfmodel stargemm_fill_model, stargemm_norm_model, stargemm_copy_model;

/* The disk node's backend (src/disk.c): one file, its space carved into ranges. */
extern struct starpu_disk_ops stargemm_disk_ops;

/* What the codelets' regression models are indexed by (codelets/model.c): the default
 * footprint (tile shapes), and the work as size: m n k for a tile product (weighed by
 * the element type's model_weight), the elements of the last tile for a tile-wise
 * codelet. */
uint32_t stargemm__model_footprint(struct starpu_task *task);
/* The same with the element type of the task (its first argument) mixed in, for the
 * typed codelets (gemm, batch); equal to the default for double. */
uint32_t stargemm__model_typed_footprint(struct starpu_task *task);
size_t stargemm__model_gemm_work(struct starpu_task *task, unsigned nimpl);
size_t stargemm__model_tile_elements(struct starpu_task *task, unsigned nimpl);

/* One small tile product of type @p t on the CPU (codelets/smallgemm.c), by the kernel
 * stargemm__small_choice() names (below): the one kernel for every shape, libxsmm's JIT
 * kernel, or the type's BLAS; op(A) = A^T or A^H is copied out to the cache's buffer
 * first for the first two. The cache holds the last shape's libxsmm kernel for each
 * beta and that buffer; start it zeroed, one per thread, and free it with
 * stargemm__small_cache_free(). */
struct stargemm__small_cache {
	int key[2][8];          /* the last shape with beta 0, with beta 1 */
	void (*fn[2])(void);
	int one_kernel;   /* the batch's geometry's: the one kernel for every shape first */
	void *opa;        /* op(A) copied out for op(A) = A^T or A^H (codelets/transpose.c) */
	size_t opa_bytes;
};
/* What a cache allocated (its op(A) buffer), freed; the cache can be used again. */
void stargemm__small_cache_free(struct stargemm__small_cache *cache);
void stargemm__small_gemm(struct stargemm__small_cache *cache,
			  const struct stargemm__element *t, char ta, char tb, int m, int n,
			  int k, double _Complex alpha, const void *a, int lda, const void *b,
			  int ldb, double _Complex beta, void *c, int ldc);
void stargemm__small_init(void);   /* before StarPU's threads start (stargemm_init) */
/* The kernel stargemm__small_gemm() takes for a product (@p one_kernel: the cache's):
 * the one kernel for every shape, libxsmm's (which falls back to the one kernel, or to
 * BLAS where that does not apply, when libxsmm has no kernel for the shape), or BLAS.
 * The kernels take op(A) = A: for A^T or A^H, op(A) is copied out first. */
enum stargemm__small_kernel { STARGEMM__SMALL_ONE, STARGEMM__SMALL_XSMM, STARGEMM__SMALL_BLAS };
enum stargemm__small_kernel stargemm__small_choice(const struct stargemm__element *t, char ta,
						   int m, int n, int k, double _Complex alpha,
						   int one_kernel);

/* One kernel for double-precision products of every shape, C = alpha A op(B) + beta C
 * (codelets/smallkernel.c: codelets/smallkernel_algo_real.c on doubles); only where
 * stargemm__dgemm_any_usable() (AVX-512F), which holds for the four kernels. The element
 * table's any_gemm (struct stargemm__element) calls them. */
void stargemm__dgemm_any(char tb, int m, int n, int k, double alpha, const double *a,
			 int lda, const double *b, int ldb, double beta, double *c, int ldc);
int stargemm__dgemm_any_usable(void);
/* The same on floats (codelets/smallkernel_single.c). */
void stargemm__sgemm_any(char tb, int m, int n, int k, float alpha, const float *a, int lda,
			 const float *b, int ldb, float beta, float *c, int ldc);
/* Double complex (codelets/smallkernel_complex.c: codelets/smallkernel_algo_complex.c on
 * doubles), op(B) = B, B^T or B^H ('C'); alpha and beta as (re, im) pairs, the arrays
 * of interleaved complex doubles. */
void stargemm__zgemm_any(char tb, int m, int n, int k, const double *alpha, const void *a,
			 int lda, const void *b, int ldb, const double *beta, void *c, int ldc);
/* And single complex (codelets/smallkernel_complex_single.c). */
void stargemm__cgemm_any(char tb, int m, int n, int k, const float *alpha, const void *a,
			 int lda, const void *b, int ldb, const float *beta, void *c, int ldc);

/* op(A) of an A of @p size-byte elements stored k x m (leading dimension @p lda) copied
 * to @p at as an m x k array (leading dimension m): A^T, or A^H with @p conj (complex
 * sizes 8 and 16 only). codelets/transpose.c. */
void stargemm__op_copy(size_t size, int conj, int m, int k, const void *a, int lda, void *at);

/* One tile product of a batch, where its tiles lie (codelets/batch.c): C (m x n) =
 * alpha op(A) op(B) + (first ? beta : 1) C, inner dimension k. Products with the same
 * @p c update the same C tile. */
struct stargemm__batch_item {
	int m, n, k;
	int lda, ldb, ldc;
	int first;
	const void *a, *b;
	void *c;
};
/* A batched call: the products items[order[start .. start + count)], all of this shape
 * and beta (first: beta, else 1), none updating the same C tile. */
struct stargemm__batch_call {
	int m, n, k, lda, ldb, ldc, first;
	int64_t start, count;
};
/* The batched calls that run the @p n items of a batch in a correct order
 * (codelets/batch_calls.c): fills order[] (n entries: the items, call after call) and
 * calls[] (at most n), in the order they must run. The updates of one C tile go to
 * successive calls, in list order. Returns the number of calls, or -ENOMEM. */
int64_t stargemm__batch_calls(const struct stargemm__batch_item *items, int64_t n,
			      int64_t *order, struct stargemm__batch_call *calls);

#endif /* STARGEMM_INTERNAL_H */
