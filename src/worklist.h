/*
 * worklist.h — the plan of a product as an explicit list of work: what the inspector
 * (src/inspect.c) produces and the one executor (src/execute.c) walks.
 *
 * A work list is a sequence of chunks; each chunk is a sequence of tile products
 * C(i,j) += op(A)(i,k) op(B)(k,j), one task each, in insertion order, and belongs to a
 * C block. Around its products a chunk names the tiles to prefetch when it is inserted
 * and the input tiles to let go once it is done; a block names the C tiles to write
 * back after its last chunk and the input tiles to hold on the devices while it runs.
 * Every rank builds the same list (same products, same order), with the devices of its
 * own products filled in: StarPU-MPI needs every rank to insert the same sequence.
 *
 * The inspector is pure (no StarPU, no MPI) and unit-tested (tests/test_inspect.c).
 * The executor adds no decision of its own: it inserts, throttles (chunk n is inserted
 * once this rank's tasks of chunk n - (lookahead + 1) are done), prefetches, holds and
 * releases what the list says, when the list says it.
 */
#ifndef STARGEMM_WORKLIST_H
#define STARGEMM_WORKLIST_H

#include <stdint.h>

#include "contract.h"
#include "distribution.h"
#include "pack.h"
#include "stargemm.h"

/* Operands a tile reference names. */
enum stargemm__operand_id { STARGEMM_OP_A = 0, STARGEMM_OP_B = 1, STARGEMM_OP_C = 2 };

/* One task: C(i, j) += op(A)(i, k) op(B)(k, j) (tile indices of op(A), op(B), C). */
struct stargemm__product {
	struct stargemm_task_info info;   /* device (-1: not this rank's), block, chunk */
	int64_t i, j, k;
	int32_t first;                    /* first update of C(i, j): applies beta */
	int32_t last;                     /* last update of C(i, j) in the list
					   * (stargemm__inspect()) */
};

/* A tile of op(A) (r = i, c = k), op(B) (r = k, c = j) or C (r = i, c = j), with what to
 * do with it: the device to prefetch or hold it on, the prefetch priority, for a
 * chunk's inputs whether a chunk inside the lookahead window reads it again (kept),
 * and for a prefetch whether the tile is another rank's, received over MPI by this
 * rank's tasks of the chunk (its prefetch waits for the receive: src/execute.c). */
struct stargemm__tile_ref {
	int64_t r, c;
	int32_t operand;    /* enum stargemm__operand_id */
	int32_t device;     /* prefetch / hold target (0..G-1) */
	int32_t priority;   /* prefetch priority (StarPU's; larger first) */
	int32_t keep;       /* release list: read again within the window */
	int32_t received;   /* prefetch list: another rank's tile */
};

struct stargemm__chunk {
	int64_t block;                       /* its C block */
	int64_t first, count;                /* products [first, first + count) */
	int64_t prefetch_first, prefetch_count;  /* refs to prefetch ... */
	int prefetch_before;                 /* ... before inserting the products (1) or after */
	int64_t release_first, release_count;    /* inputs to let go once the chunk is done */
	int64_t batch_first, batch_count;    /* its batches, when the list has batches */
};

struct stargemm__block {
	int64_t first_chunk, nchunks;
	int64_t c_first, c_count;            /* this rank's C tiles, written back at the end */
	int64_t hold_first, hold_count;      /* tiles held on the devices (this rank's own) */
};

/* Small tiles: tile products run many per task. Products [first, first + count) of the
 * list are one task, whose buffers are the tiles (or packs) refs[ref_first .. ref_first
 * + nrefs) (each once, the others in R, C's in RW, or in W when the tile's chain starts
 * in the batch with beta = 0: src/insert.c); the list's slots[3p], [3p + 1],
 * [3p + 2] are the buffers of product p's op(A), op(B) and C tiles. The products of a
 * batch write C tiles of one rank, on one device, in list order (a C tile's chain
 * stays in k order), and lie in one chunk; a chunk's batches are consecutive. When the
 * list has batches, every product is in one (the executor inserts the batches).
 * When C is packed, every batch writes one C pack, the scales cover every C pack
 * (beta applied before any product) and no product applies beta. */
struct stargemm__batch {
	int64_t first, count;
	int64_t ref_first, nrefs;
	/* C packed: the first batch to write its C pack, which no scale wrote before.
	 * Every present tile of the pack then starts its chain in this batch or later,
	 * each first update applying beta; with beta = 0 the batch only writes the pack
	 * (W): a tile it leaves is overwritten by its own first update later. */
	int opens_c;
};

/* Where a batch's tiles are (codelets/batch.c): a product's sizes come from the
 * tilings; tile (i, j) of the stored operand o (op(A)'s A, op(B)'s B, C) starts
 * offset[o][i + j * ld[o]] elements into its buffer when the operand is packed
 * (offset[o] NULL: a buffer per tile, offset 0). Arrays of the request's matrices. */
struct stargemm__batch_geometry {
	const int64_t *row_off, *col_off, *k_off;
	const int64_t *offset[3];
	int64_t ld[3];
	int trans[3];
	int one_kernel;         /* the request's (on the CPU) */
	int64_t a_tile_max;     /* elements of op(A)'s largest tile: most rows x most k */
};

/* How a C tile that no task of the list writes again goes back to host memory, once
 * its last writer is done (src/execute.c, release_c()): marked "won't use" only, and
 * StarPU copies it back as an idle request; also copied back by a prefetch request;
 * or by a fetch request. */
enum stargemm__write_back { STARGEMM__BACK_IDLE, STARGEMM__BACK_PREFETCH,
			    STARGEMM__BACK_FETCH };

struct stargemm__worklist {
	int64_t nproducts, nchunks, nblocks, nrefs;
	struct stargemm__product *products;
	struct stargemm__chunk *chunks;
	struct stargemm__block *blocks;
	struct stargemm__tile_ref *refs;
	/* C tiles that no product updates (every rank's): C = beta C, inserted first. */
	int64_t scale_first, scale_count;
	int64_t nbatches;       /* > 0: the products run as these batches */
	struct stargemm__batch *batches;
	int32_t *slots;         /* 3 per product when batched */
	struct stargemm__batch_geometry geometry;
	int64_t nskipped;       /* products the norm filter left out (every rank's) */
	double flops;           /* of the listed products (every rank's) */
	int lookahead;          /* chunks in flight beyond the current one */
	int ndevices;           /* G */
	int gpus;               /* devices are GPUs (GEMMs go to CUDA workers only) */
	int throttled;          /* 0: insert every product and return (in core) */
	int holds;              /* blocks hold tiles (see execute.c, hold_block()) */
	int mixed_shapes;       /* an axis has tiles of several sizes before its last */
	/* What becomes of C tiles that no task writes again, and of the device memory the
	 * plan leaves: decided by stargemm__worklist_decide(), done by src/execute.c. */
	enum stargemm__write_back write_back;
	int early_release;      /* C tiles go when their last update is done (GPU, sparse) */
	int reserve_unplanned;  /* one C block on GPUs: keep the unused memory from StarPU */
	/* Device memory the plan fills and may fill, in bytes (0: unknown): with one C
	 * block, the executor keeps the rest away from StarPU's allocator. */
	int64_t need_bytes, budget_bytes;
	/* Packed operands out of core (src/packlist.c): the list over packs this one
	 * expands, whose products are the pack products (the load model's); NULL
	 * otherwise. Owned. */
	struct stargemm__worklist *units;
};

/* Who owns tile (r, c) of op(X) when X is distributed over a P x Q grid, and whether
 * it exists. */
struct stargemm__operand {
	/* X's grid: P x Q, and the rank of each process (src/distribution.h; the
	 * matrix's arrays, borrowed). */
	struct stargemm__grid grid;
	int trans;              /* op(X) = X^T: tile (r, c) of op(X) is tile (c, r) of X */
	const uint8_t *present; /* X's pattern, tile (i, j) of X at i + j * ld; NULL: dense */
	int64_t ld;
	const double *norm;     /* X's tile norms, same layout; NULL: no filtering */
	/* X's distribution (tile (i, j) of X on grid process (rows->proc[i],
	 * cols->proc[j])); NULL: cyclic, i mod P and j mod Q. */
	const struct stargemm__axis *rows, *cols;
	/* X's packs (src/pack.c), NULL: one handle per tile. The list's references to a
	 * packed operand's tiles name its packs, in op(X)'s coordinates. */
	const struct stargemm__packing *pack;
	/* Elements of each tile of X (X's layout, ld), NULL: its rows times its columns.
	 * Set for the packs of a problem over packs (src/packlist.c), where a tile is a
	 * pack of present tiles, for the footprint (stargemm__worklist_footprint_of()). */
	const int64_t *elems;
	/* X is made on demand on each rank whose tasks read it (src/generate.c): its
	 * tiles never move over MPI, and every rank lists them as its own. */
	int generated;
};

int stargemm__operand_owner(const struct stargemm__operand *x, int64_t r, int64_t c);
int stargemm__operand_present(const struct stargemm__operand *x, int64_t r, int64_t c);

/* The present tiles of op(X) (@p rows x @p cols tiles) column by column: rows
 * idx[start[c] .. start[c + 1]) of column c, increasing. Returns 0 or -ENOMEM; the
 * caller frees *start and *idx. */
int stargemm__operand_columns(const struct stargemm__operand *x, int64_t rows, int64_t cols,
			      int64_t **start, int64_t **idx);

/* A product to inspect (dense or block-sparse operands). Offsets: mt + 1 rows of C,
 * nt + 1 columns of C, kt + 1 of the inner dimension. */
struct stargemm__request {
	int64_t mt, nt, kt;
	const int64_t *row_off, *col_off, *k_off;
	struct stargemm__operand a, b, c;  /* owners of op(A), op(B), C tiles */
	int me;                 /* this rank */
	int ndevices;           /* G >= 1 */
	int gpus;               /* the devices are GPUs (not the host RAM) */
	/* On GPUs, list the tiles this rank's products receive over MPI among the chunks'
	 * prefetches, marked received (STARGEMM_PREFETCH_RECEIVED; src/execute.c,
	 * land_received()). */
	int prefetch_received;
	int beta_zero;          /* beta = 0: the first update only writes C */
	int is_complex;         /* complex elements: 8 flops per multiply-add, not 2 */
	/* Norm filtering: a product is skipped when ||op(A)(i,k)|| ||op(B)(k,j)|| < eps
	 * (a.norm and b.norm set; eps = 0: nothing is skipped). */
	double eps;
	/* Blocks, chunks, lookahead (src/plan.c); NULL: in core — one chunk of every
	 * product, k outer, not throttled, no prefetch or release. */
	const struct stargemm_plan *plan;
	int64_t tile_bytes;     /* the plan's tile footprint (need_bytes, budget_bytes) */
	/* Products are batched when an average tile product holds fewer than
	 * @p batch_below flops (0: one task per product); a batch then holds about
	 * @p batch_flops, in core at most 1/8 of a worker's share, out of core at most 1/4
	 * of a worker's share of its chunk. @p workers: workers over all ranks (CPU
	 * workers, or one per GPU). */
	double batch_below, batch_flops;
	int workers;
	/* The CPU has the one kernel for every shape (codelets/smallkernel.c; set by the
	 * caller, src/product.c). CPU batches multiply every tile shape with it rather
	 * than libxsmm's kernel per shape when the tilings give more tile shapes than
	 * STARGEMM_XSMM_SHAPES (stargemm__kernel_choice() sets one_kernel). */
	int any_kernel;
	int one_kernel;
};

/* Build the work list of a product of 2D block-cyclic operands, dense or block-sparse
 * (a product exists when its three tiles do and the norm filter keeps it; C's pattern
 * is kept): Algorithm 3 of
 * Herault et al. 2019 (blocks y outer, x inner, chunks of depth d; see inspect.c for
 * the device deal, prefetch order and holds). Returns 0, or -ENOMEM (with a message). */
int stargemm__inspect(const struct stargemm__request *r,
			    struct stargemm__worklist *wl);

/* Whether the in-core list of @p r, @p products tile products of all ranks, runs as
 * batches (src/batchlist.c): an average tile product below batch_below flops and below
 * what a batch aims at. */
int stargemm__in_core_batched(const struct stargemm__request *r, double products);

/* Whether the norm filter of request @p r leaves product C(i,j) += op(A)(i,k)
 * op(B)(k,j) out (||op(A)(i,k)|| ||op(B)(k,j)|| < eps), and that product's flops. */
int stargemm__product_filtered(const struct stargemm__request *r, int64_t i, int64_t j,
				int64_t k);
double stargemm__product_flops(const struct stargemm__request *r, int64_t i, int64_t j,
			       int64_t k);

/* The list's decisions beyond its products, for request @p r (wl->write_back,
 * early_release, reserve_unplanned): set by the inspector once the list is complete
 * (stargemm__inspect(), stargemm__pack_expand()), so that the executor adds none. */
void stargemm__worklist_decide(const struct stargemm__request *r,
			       struct stargemm__worklist *wl);

/* Largest extent of the @p count tiles described by offsets @p off (count + 1). */
int64_t stargemm__largest_tile(const int64_t *off, int64_t count);

/* Where a list's batches find their tiles (wl->geometry) for request @p r. */
void stargemm__worklist_geometry(const struct stargemm__request *r,
				 struct stargemm__worklist *wl);

/* Packed operands out of core (src/packlist.c): the problem over packs. */
struct stargemm__units {
	struct stargemm__request r;        /* its tiles are the packs; no norms, no packs */
	int64_t n[3];                      /* units of C's rows, C's columns, k */
	int64_t *first[3];                 /* their first tiles (n + 1 each) */
	int64_t *off[3];                   /* their element offsets (n + 1 each) */
	uint8_t *present[3];               /* A's, B's, C's packs present (packed ones) */
	struct stargemm__axis axes[3][2];  /* A's, B's, C's packs' rows and columns */
};

/* The problem over packs of request @p r (whose plan is ignored) into @p u: returns 1
 * when the operands' groups line up (u set; free it with stargemm__pack_units_free()),
 * 0 when they do not or no operand is packed (nothing to free), or -ENOMEM. */
int stargemm__pack_units(const struct stargemm__request *r, struct stargemm__units *u);
void stargemm__pack_units_free(struct stargemm__units *u);

/* The dense plan request @p fine (of the tiles) restated over @p u's units, whose
 * largest is the planning unit; overrides of b, c and d are capped at the units there
 * are (a block or chunk of every pack). */
void stargemm__pack_plan_request(const struct stargemm_plan_request *fine,
				 const struct stargemm__units *u, size_t elem,
				 struct stargemm_plan_request *out);

/* The executor's list of @p r from @p units, the list over packs of u->r: every pack
 * product a batch of its tile products (see src/packlist.c). @p units moves into
 * wl->units (emptied). Returns 0 or -ENOMEM (with a message). */
int stargemm__pack_expand(const struct stargemm__request *r, const struct stargemm__units *u,
			  struct stargemm__worklist *units, struct stargemm__worklist *wl);

/* Tiles each device loads if every tile a device reads is loaded once per block (C)
 * and once per run of consecutive chunks that read it (A, B): @p loads has ndevices
 * entries. @p c_read 0 (beta = 0): C tiles are written without being read, and not
 * counted. The model of the list, to hold against the planner's Eq. (1) and the
 * measured loads. A list over packed operands (wl->units) counts its packs. Returns 0
 * or -ENOMEM. */
int stargemm__worklist_loads(const struct stargemm__worklist *wl, int c_read, double *loads);

/* Memory each device needs to run an out-of-core list (blocks), in bytes: the most,
 * over the chunks, of the C tiles the chunk's block updates on the device plus the
 * tiles the block holds on it plus the op(A) and op(B) tiles it reads in the
 * lookahead + 1 chunks of the block that end there (the chunks in flight at once; a
 * tile read by two of them is counted twice, a held tile with its block only). As the
 * planner's model, it leaves out the block changes, where the last chunks of a block
 * are in flight with the first ones of the next: the finished C tiles are written
 * back and marked "won't use" (src/execute.c), the first buffers StarPU frees.
 * Tiles are sized from the tilings (@p row_off: C's rows, @p col_off: C's columns,
 * @p k_off: the inner dimension) and @p elem. Only this rank's devices are counted.
 * @p peak has ndevices entries. Returns 0 or -ENOMEM. */
int stargemm__worklist_footprint(const struct stargemm__worklist *wl, const int64_t *row_off,
				 const int64_t *col_off, const int64_t *k_off, size_t elem,
				 int64_t *peak);

/* Whether, with beta = 0, the batch that opens a C pack only writes it (W): yes but
 * out of core on GPUs, where a C pack is read (zeroed first if never written) and
 * prefetched with its block; only written, its allocation on the GPU waited for the
 * batch (src/product.c). */
int stargemm__worklist_opens_write(const struct stargemm__worklist *wl);

/* Whether the executor asks for @p wl's chunk loads as fetches, which evict released
 * tiles, rather than as prefetches, which do not: on one GPU per rank, with tiles of
 * several shapes and a task per tile product (src/worklist.c says why). */
int stargemm__worklist_fetches_ahead(const struct stargemm__worklist *wl);

/* Which CPU kernel multiplies @p r's batched tiles (codelets/smallgemm.c; in
 * src/batchlist.c): libxsmm's,
 * one per tile shape, while the tilings give at most STARGEMM_XSMM_SHAPES shapes
 * (distinct extents of C's rows x C's columns x k; default 64, the measured crossover);
 * the one kernel for every shape beyond, where the CPU has it (r->any_kernel; sets
 * r->one_kernel).
 * Returns 0, or -EINVAL for a setting that is not a number >= 0, -ENOMEM (with a
 * message). */
int stargemm__kernel_choice(struct stargemm__request *r);

/* stargemm__worklist_footprint() of request @p r's list: its tilings, and each tile
 * sized by its operand's elems where the operand has them (packs). */
int stargemm__worklist_footprint_of(const struct stargemm__worklist *wl,
				    const struct stargemm__request *r, size_t elem, int64_t *peak);

/* Sizing an out-of-core plan by its list's footprint (src/fit.c). */
struct stargemm__fit {
	const struct stargemm_plan_request *pr;  /* the dense request: largest tile, budget */
	struct stargemm__request *r;             /* the inspector's; its plan is set */
	size_t elem;                             /* element size (tile bytes) */
	/* The largest of @p value over the ranks, in place (NULL: one rank). Collective. */
	int (*max_over_ranks)(int64_t *value, void *arg);
	void *arg;
	int batched;             /* the list's units run as batches once expanded (packs) */
	int tries;               /* out: lists inspected */
	int fitted;              /* out: the plan is not the dense one */
	int64_t footprint;       /* out: the kept list's footprint (bytes per device) */
};

/* Plan f->pr, inspect f->r under the plan into @p wl, and when the list needs less
 * than 90% of what the plan counted (irregular tiles, block-sparse operands) plan
 * again with a smaller planning unit, so that the list fills the device budget
 * (f->pr->device_bytes) — not beyond it —, and keep that plan if its list loads fewer
 * tiles; on GPUs, with the planner's lookahead of two, the same fit with a lookahead
 * of one is kept when its list loads at most 95% of the tiles; on one GPU with tiles
 * of several shapes, a fitted plan's blocks are taken with chunks one k deep when that
 * list loads at most 5% more tiles, and, unbatched, with the longest lookahead up to 4
 * that fits and loads no more. Plans with overridden b, c or d are kept; a whole
 * plan given (b, c and d) that the planner's count of largest tiles refuses is taken
 * if its list fits the budget (-EINVAL naming both otherwise).
 * @p plan receives the plan (its footprint_bytes set), f->r->plan points to it, @p wl
 * its list (need_bytes at least the footprint). Collective through f->max_over_ranks.
 * Returns 0, or the planner's or the inspector's error. */
int stargemm__fit_plan(struct stargemm__fit *f, struct stargemm_plan *plan,
		       struct stargemm__worklist *wl);

/* Whether the tiles of other ranks the list's products receive fit in the managed
 * storage beside the live matrices (src/storage.c), or without managed storage in
 * StarPU's host budget alone (with GPUs, this rank's share of the machine): all of
 * them in core, those of lookahead + 2 consecutive chunks out of core. Returns 0 or
 * -ENOMEM with a message naming @p fn and the numbers; 0 when there is no bound. */
int stargemm__storage_check_list(const struct stargemm__worklist *wl,
				 const struct stargemm__request *r, size_t elem, const char *fn);

void stargemm__worklist_free(struct stargemm__worklist *wl);

/* The lists' growable arrays: *p holds *cap elements of @p size bytes; make room for
 * @p need (doubling). Returns 0 or -ENOMEM (*p kept). */
int stargemm__grow(void **p, int64_t *cap, int64_t need, size_t size);
/* The first index of [lo, hi) whose value in the increasing @p v is >= @p key (hi: none). */
int64_t stargemm__first_at_least(const int64_t *v, int64_t lo, int64_t hi, int64_t key);

#endif /* STARGEMM_WORKLIST_H */
