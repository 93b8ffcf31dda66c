/*
 * inspector.h — what the two files of the inspector share: src/inspect.c (the list of
 * products, chunks, blocks, prefetches, releases and holds) and src/batchlist.c (the
 * same list as batches of small tile products). Not for the other modules, which see
 * the inspector through src/worklist.h. Planning floor: pure.
 */
#ifndef STARGEMM_INSPECTOR_H
#define STARGEMM_INSPECTOR_H

#include "error.h"
#include "plan.h"
#include "worklist.h"

/* Growable arrays of the list under construction. */
struct builder {
	struct stargemm__worklist *wl;
	const struct stargemm__request *r;
	int64_t cap_products, cap_refs;
	uint8_t *started;       /* per C tile: a product was listed */
};

/* One block being inspected: its global rows and columns, and per tile the device. */
struct block {
	int64_t *rows, *cols, nrows, ncols;
	int *device;            /* nrows x ncols (ii * ncols + jj); -1: not this rank's */
};

struct inspector {
	const struct stargemm__request *r;
	const struct stargemm_plan *plan;
	struct builder bd;
	struct block blk;
	int64_t pinned_k;       /* the held K tile, or -1 */
	int serpentine;         /* walk blocks and chunks back and forth (block_at) */
	int reverse;            /* the current block walks its k chunks backwards */
	/* C's distribution: the request's, or the cyclic one built in own_rows/own_cols */
	const struct stargemm__axis *crow, *ccol;
	struct stargemm__axis own_rows, own_cols;
};

/* ---- src/inspect.c ------------------------------------------------------------------ */

/* Append product C(i,j) += op(A)(i,k) op(B)(k,j) if it exists, and a tile reference. */
int stargemm__add_product(struct builder *bd, int64_t i, int64_t j, int64_t k, int device,
			  int prefetch, int64_t block, int64_t chunk);
int stargemm__add_ref(struct builder *bd, int operand, int64_t r, int64_t c, int device,
		      int priority);
/* In core, whether the devices (GPUs) of a rank are dealt its local C tile rows rather
 * than its local C tile columns: when the ranks have fewer local columns than devices
 * and more local rows than columns (C = A X with X tall and skinny). */
int stargemm__in_core_by_rows(const struct inspector *in);
/* Flops of one multiply-add of the request's elements. */
double stargemm__fma_flops(const struct stargemm__request *r);
/* Whether C(i, j) exists and is this rank's. */
int stargemm__is_local(const struct stargemm__request *r, int64_t i, int64_t j);
/* Global tile indices of block @p blk of @p size local indices along one axis. */
int64_t stargemm__block_indices(int64_t blk, int64_t size, const struct stargemm__axis *ax,
				int64_t *out);
/* Block @p id's position (x, y) in the walk (serpentine or not). */
void stargemm__block_at(const struct inspector *in, int64_t id, int64_t *x, int64_t *y);
/* The device of each C tile of block @p b that rank @p rank owns, into @p dev. */
void stargemm__deal_rank(const struct stargemm__request *r, const struct stargemm__axis *cols,
			 const struct block *b, int rank, int *dev);

/* ---- src/batchlist.c ---------------------------------------------------------------- */

/* In core, small tiles: the list again, as batches. */
int stargemm__rebatch(struct inspector *in);
/* In core with C packed: one batch per C pack. */
int stargemm__inspect_packed(struct inspector *in);
/* Out of core: whether the tile products are batched; then every chunk's as batches. */
int stargemm__ooc_batched(const struct stargemm__request *r,
			  const struct stargemm__worklist *wl);
int stargemm__batch_ooc(struct inspector *in);

#endif
