/*
 * batchlist.c — the inspector's batches: small tile products many per task
 * (codelets/batch.c), as the work list says them (struct stargemm__batch).
 *
 * In core the list of src/inspect.c is made again as batches (stargemm__rebatch()): a
 * batch holds products of C tiles of one rank, cut so that each holds about
 * batch_flops; with C packed, one batch per C pack (stargemm__inspect_packed()). Out of
 * core each chunk's products are regrouped into batches inside the chunk, which keeps
 * everything else of the list (stargemm__batch_ooc()).
 *
 * Pure: no MPI, no StarPU. Unit-tested in tests/test_inspect.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "inspector.h"
#include "settings.h"

/* ---- the CPU kernel of the batches ---------------------------------------------- */

static int cmp_int64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return (a > b) - (a < b);
}

/* The distinct extents of an axis's @p count tiles (tile t spans off[t] to
 * off[t + 1]); -1 when out of memory. */
static int64_t distinct_extents(const int64_t *off, int64_t count)
{
	int64_t *e = malloc((size_t)(count > 0 ? count : 1) * sizeof(*e)), n = 0;

	if (!e)
		return -1;
	for (int64_t t = 0; t < count; t++)
		e[t] = off[t + 1] - off[t];
	qsort(e, (size_t)count, sizeof(*e), cmp_int64);
	for (int64_t t = 0; t < count; t++)
		n += t == 0 || e[t] != e[t - 1];
	free(e);
	return n;
}

int stargemm__kernel_choice(struct stargemm__request *r)
{
	const int64_t *off[3] = { r->row_off, r->col_off, r->k_off };
	const int64_t count[3] = { r->mt, r->nt, r->kt };
	double most, shapes = 1.0;
	int ret = stargemm__setting(STARGEMM__XSMM_SHAPES, &most);

	for (int a = 0; a < 3 && !ret; a++) {
		int64_t d = distinct_extents(off[a], count[a]);

		if (d < 0)
			return stargemm__error(-ENOMEM, "stargemm: out of memory");
		shapes *= (double)d;
	}
	r->one_kernel = !ret && shapes > most && r->any_kernel;
	return ret;
}

/* ---- in core, small tiles: batches ---------------------------------------------- */

/* Flops of the request's average tile product (over every triple of tiles). */
static double average_product(const struct stargemm__request *r)
{
	double cube = (double)r->mt * (double)r->nt * (double)r->kt;

	return cube < 1 ? 0.0 : stargemm__fma_flops(r) * (double)r->row_off[r->mt] *
				(double)r->col_off[r->nt] * (double)r->k_off[r->kt] / cube;
}

/* The cells of a batch of side @p s: s local C rows (at most the @p rows of the rank
 * with the most), as many columns, s steps of the @p kt. */
static double batch_cells(int64_t s, int64_t rows, int64_t cols, int64_t kt)
{
	return (double)(s < rows ? s : rows) * (double)(s < cols ? s : cols) *
	       (double)(s < kt ? s : kt);
}

/* The chains of batches of side @p s on a rank of @p rows x @p cols local C tiles: its
 * runs of s x s C tiles (a C tile's batches run one after the other). */
static int64_t batch_chains(int64_t s, int64_t rows, int64_t cols)
{
	return ((rows + s - 1) / s) * ((cols + s - 1) / s);
}

/* The flops a batch of @p r's in-core list of @p products aims at: batch_flops, at most
 * an eighth of a worker's share; 0 when the list is not batched (an average product of
 * batch_below flops or more, or of that aim or more: too few products to share). */
static double batch_target(const struct stargemm__request *r, double products)
{
	double cube = (double)r->mt * (double)r->nt * (double)r->kt, avg, share, target;

	if (r->batch_below <= 0 || r->batch_flops <= 0 || products < 1 || cube < 1)
		return 0.0;
	avg = average_product(r);
	share = avg * products / (8.0 * (r->workers > 0 ? r->workers : 1));
	target = r->batch_flops < share ? r->batch_flops : share;
	return avg >= r->batch_below || avg >= target ? 0.0 : target;
}

int stargemm__in_core_batched(const struct stargemm__request *r, double products)
{
	return batch_target(r, products) > 0.0;
}

/* Side s of the batches: s x s local C tiles of one rank (fewer where the rank has
 * fewer rows or columns: a tall and skinny C) and s steps of k, the smallest whose
 * expected flops (at the list's density of products) reach the target, and at most
 * what leaves every worker 8 batches and 3 chains (on 4 x 4 simulated ranks of 4 CPU
 * workers, C of 4 tile columns: runs of 59 rows left 3 chains a rank, 0.101 s; 2 a
 * worker 0.072 s, 3 0.067 s). 1: no batching (products of batch_below flops or more on
 * average, or too few to share). */
static int64_t batch_side(const struct inspector *in, double products)
{
	const struct stargemm__request *r = in->r;
	double cube = (double)r->mt * (double)r->nt * (double)r->kt, avg = average_product(r);
	double target = batch_target(r, products);
	int64_t s = 1, rows = in->crow->maxlocal, cols = in->ccol->maxlocal;
	int64_t per_rank = r->workers / ((int64_t)r->c.grid.P * r->c.grid.Q);

	if (target <= 0.0)
		return 1;
	while (batch_cells(s, rows, cols, r->kt) * avg * (products / cube) < target &&
	       (s < rows || s < cols || s < r->kt))
		s++;
	while (s > 2 && batch_chains(s, rows, cols) < 3 * (per_rank > 0 ? per_rank : 1))
		s--;
	return s;
}

/* Rows of op(A) present in each column k, in grid order: by C's process row p, then
 * by local index (row i has key p L + l, l its local index, L the most rows of one
 * process row), so that the rows of one rank's run of s local rows are a contiguous
 * range of keys. */
struct grid_columns {
	int64_t *start, *key;
	int64_t L;
};

static int grid_columns(const struct stargemm__request *r, const struct stargemm__axis *crow,
			struct grid_columns *gc)
{
	int P = crow->nproc;
	int64_t n = 0;

	gc->L = crow->maxlocal;
	gc->start = malloc((size_t)(r->kt + 1) * sizeof(int64_t));
	gc->key = malloc((size_t)(r->mt * r->kt > 0 ? r->mt * r->kt : 1) * sizeof(int64_t));
	if (!gc->start || !gc->key)
		return -ENOMEM;
	for (int64_t k = 0; k < r->kt; k++) {
		gc->start[k] = n;
		for (int p = 0; p < P; p++)
			for (int64_t l = 0; crow->start[p] + l < crow->start[p + 1]; l++)
				if (stargemm__operand_present(&r->a, crow->at[crow->start[p] + l], k))
					gc->key[n++] = p * gc->L + l;
	}
	gc->start[r->kt] = n;
	return 0;
}

/* First entry of column k with key >= @p key. */
static int64_t lower_bound(const struct grid_columns *gc, int64_t k, int64_t key)
{
	return stargemm__first_at_least(gc->key, gc->start[k], gc->start[k + 1], key);
}

/* The unit of tile (r, c) of op(X) — the tile, or the pack holding it — in op(X)'s
 * coordinates, as a linear index over op(X)'s units (@p rows tiles per column). */
static int64_t operand_unit(const struct stargemm__operand *x, int64_t rows, int64_t r,
			    int64_t c, int64_t *ur, int64_t *uc)
{
	const struct stargemm__packing *pk = x->pack;

	if (!pk) {
		*ur = r;
		*uc = c;
		return r + c * rows;
	}
	*ur = x->trans ? pk->col_group[r] : pk->row_group[r];
	*uc = x->trans ? pk->row_group[c] : pk->col_group[c];
	return *ur + *uc * (x->trans ? pk->gnt : pk->gmt);
}

/* Units of op(X) of @p rows x @p cols tiles. */
static int64_t operand_units(const struct stargemm__operand *x, int64_t rows, int64_t cols)
{
	return x->pack ? x->pack->gmt * x->pack->gnt : rows * cols;
}

/* Batches under construction: per operand and unit, its slot in the current batch,
 * valid when its stamp is the batch's number. */
struct batcher {
	int64_t s;
	int32_t *slot[3];
	int64_t *stamp[3];
	int64_t id;                  /* the current batch */
	int64_t kg, i0, j0;          /* k of its first step; local row, column of its corner */
	int device;                  /* of its products on this rank */
	const struct stargemm__axis *rows, *cols;   /* C's distribution */
};

static int batcher_init(struct batcher *bt, const struct stargemm__request *r)
{
	const struct stargemm__operand *x[3] = { &r->a, &r->b, &r->c };
	const int64_t rows[3] = { r->mt, r->kt, r->mt }, cols[3] = { r->kt, r->nt, r->nt };

	bt->id = 0;
	for (int o = 0; o < 3; o++) {
		int64_t n = operand_units(x[o], rows[o], cols[o]);

		bt->slot[o] = malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
		bt->stamp[o] = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
		if (!bt->slot[o] || !bt->stamp[o])
			return -ENOMEM;
		for (int64_t u = 0; u < n; u++)
			bt->stamp[o][u] = -1;
	}
	return 0;
}

static void batcher_free(struct batcher *bt)
{
	for (int o = 0; o < 3; o++) {
		free(bt->slot[o]);
		free(bt->stamp[o]);
	}
}

/* The buffer of a tile of the batch (its unit's), appended to its refs the first
 * time. */
static int batch_slot(struct inspector *in, struct batcher *bt, struct stargemm__batch *b,
		      int operand, int64_t row, int64_t col, int32_t *out)
{
	const struct stargemm__request *r = in->r;
	const struct stargemm__operand *x = operand == STARGEMM_OP_A ? &r->a
					    : operand == STARGEMM_OP_B ? &r->b : &r->c;
	int64_t ur, uc, u = operand_unit(x, operand == STARGEMM_OP_B ? r->kt : r->mt, row, col,
					 &ur, &uc);

	if (bt->stamp[operand][u] != bt->id) {
		bt->stamp[operand][u] = bt->id;
		bt->slot[operand][u] = (int32_t)b->nrefs++;
		if (stargemm__add_ref(&in->bd, operand, ur, uc, 0, 0))
			return -ENOMEM;
	}
	*out = bt->slot[operand][u];
	return 0;
}

/* Products [b->first, end) get their slots; the next batch starts afresh. */
static int close_batch(struct inspector *in, struct batcher *bt, struct stargemm__batch *b,
		       int64_t end, int64_t *cap_slots)
{
	struct stargemm__worklist *wl = in->bd.wl;
	int ret = 0;

	b->count = end - b->first;
	if (b->count == 0)
		return 0;
	if (stargemm__grow((void **)&wl->slots, cap_slots, 3 * wl->nproducts, sizeof(int32_t)))
		return -ENOMEM;
	for (int64_t p = b->first; p < end && !ret; p++) {
		const struct stargemm__product *x = &wl->products[p];
		int32_t *sl = &wl->slots[3 * p];

		ret = batch_slot(in, bt, b, STARGEMM_OP_A, x->i, x->k, &sl[0]);
		ret = ret ? ret : batch_slot(in, bt, b, STARGEMM_OP_B, x->k, x->j, &sl[1]);
		ret = ret ? ret : batch_slot(in, bt, b, STARGEMM_OP_C, x->i, x->j, &sl[2]);
	}
	bt->id++;
	return ret;
}

/* The products of one batch: steps [kg, kg + s) of k, local columns [j0, j0 + s) of
 * process column q, local rows [i0, i0 + s) of process row p; k outer. */
static int batch_products(struct inspector *in, const struct grid_columns *gc,
			  const struct batcher *bt, int p, int q)
{
	const struct stargemm__request *r = in->r;
	int ret = 0;

	/* the keys of this rank's rows [i0, i0 + s), not past its last local row */
	int64_t first = p * gc->L + bt->i0;
	int64_t end = p * gc->L + (bt->i0 + bt->s < gc->L ? bt->i0 + bt->s : gc->L);

	for (int64_t k = bt->kg; k < bt->kg + bt->s && k < r->kt && !ret; k++) {
		int64_t e0 = lower_bound(gc, k, first);

		for (int64_t lj = bt->j0; lj < bt->j0 + bt->s && !ret; lj++) {
			const struct stargemm__axis *cols = bt->cols;
			int64_t j;

			if (cols->start[q] + lj >= cols->start[q + 1])
				break;
			j = cols->at[cols->start[q] + lj];
			if (!stargemm__operand_present(&r->b, k, j))
				continue;
			for (int64_t e = e0; e < gc->start[k + 1] && !ret; e++) {
				int64_t key = gc->key[e], i;

				if (key >= end)
					break;
				i = bt->rows->at[bt->rows->start[p] + key % gc->L];
				ret = stargemm__add_product(&in->bd, i, j, k, stargemm__is_local(r, i, j) ? bt->device : -1,
						  STARGEMM_PREFETCH_ALL, -1, 0);
			}
		}
	}
	return ret;
}

/* Products [b->first, end) become a batch of the list (none: no batch). */
static int end_batch(struct inspector *in, struct batcher *bt, struct stargemm__batch *b,
		     int64_t end, int64_t *cap_batches, int64_t *cap_slots)
{
	struct stargemm__worklist *wl = in->bd.wl;
	int ret = close_batch(in, bt, b, end, cap_slots);

	if (ret || b->count == 0)
		return ret;
	if (stargemm__grow((void **)&wl->batches, cap_batches, wl->nbatches + 1, sizeof(*b)))
		return -ENOMEM;
	wl->batches[wl->nbatches++] = *b;
	return 0;
}

static int add_batch(struct inspector *in, const struct grid_columns *gc, struct batcher *bt,
		     int p, int q, int64_t *cap_batches, int64_t *cap_slots)
{
	struct stargemm__worklist *wl = in->bd.wl;
	struct stargemm__batch b = { .first = wl->nproducts, .ref_first = wl->nrefs };
	int ret = batch_products(in, gc, bt, p, q);

	return ret ? ret : end_batch(in, bt, &b, wl->nproducts, cap_batches, cap_slots);
}

/* In core with batches of side s. The devices (GPUs) are dealt runs of s local C
 * columns in turn (or of s local rows, stargemm__in_core_by_rows()), so that the
 * batches of a C tile, one per s steps of k, run on one device, and the devices share
 * the columns (rows) as in the in-core list. */
static int inspect_batched(struct inspector *in, int64_t s)
{
	const struct stargemm__request *r = in->r;
	struct stargemm__worklist *wl = in->bd.wl;
	struct grid_columns gc = { NULL, NULL, 0 };
	struct batcher bt = { .s = s, .rows = in->crow, .cols = in->ccol };
	int64_t cap_batches = 0, cap_slots = 0, nloc = in->ccol->maxlocal;
	int ret = grid_columns(r, in->crow, &gc), by_rows = stargemm__in_core_by_rows(in);

	if (!ret)
		ret = batcher_init(&bt, r);
	for (bt.kg = 0; bt.kg < r->kt && !ret; bt.kg += s)
		for (int q = 0; q < r->c.grid.Q && !ret; q++)
			for (bt.j0 = 0; bt.j0 < nloc && !ret; bt.j0 += s) {
				bt.device = (int)((bt.j0 / s) % r->ndevices);
				for (int p = 0; p < r->c.grid.P && !ret; p++)
					for (bt.i0 = 0; bt.i0 < gc.L && !ret; bt.i0 += s) {
						if (by_rows)
							bt.device = (int)((bt.i0 / s) %
									  r->ndevices);
						ret = add_batch(in, &gc, &bt, p, q, &cap_batches,
								&cap_slots);
					}
			}
	wl->chunks[0].count = wl->nproducts;
	batcher_free(&bt);
	free(gc.start);
	free(gc.key);
	return ret;
}

/* ---- in core, C packed: one batch per C pack ---------------------------------- */

/* The products of C pack (I, J): k outer, then C's columns, then op(A)'s present rows
 * of the pack (@p start, @p rows: by column, increasing). */
static int pack_products(struct inspector *in, int64_t I, int64_t J, const int64_t *start,
			 const int64_t *rows, int device)
{
	const struct stargemm__request *r = in->r;
	const struct stargemm__packing *pk = r->c.pack;
	int64_t i0 = pk->row_first[I], i1 = pk->row_first[I + 1];
	int local = stargemm__operand_owner(&r->c, i0, pk->col_first[J]) == r->me;
	int ret = 0;

	for (int64_t k = 0; k < r->kt && !ret; k++) {
		int64_t e0 = start[k];

		while (e0 < start[k + 1] && rows[e0] < i0)   /* few rows per column: linear */
			e0++;
		for (int64_t j = pk->col_first[J]; j < pk->col_first[J + 1] && !ret; j++) {
			if (!stargemm__operand_present(&r->b, k, j))
				continue;
			for (int64_t e = e0; e < start[k + 1] && rows[e] < i1 && !ret; e++)
				ret = stargemm__add_product(&in->bd, rows[e], j, k, local ? device : -1,
						  STARGEMM_PREFETCH_ALL, -1, 0);
		}
	}
	return ret;
}

static int add_pack_batch(struct inspector *in, struct batcher *bt, int64_t I, int64_t J,
			  const int64_t *start, const int64_t *rows, int64_t *cap_batches,
			  int64_t *cap_slots)
{
	struct stargemm__worklist *wl = in->bd.wl;
	struct stargemm__batch b = { .first = wl->nproducts, .ref_first = wl->nrefs };
	int ret = pack_products(in, I, J, start, rows, bt->device);

	return ret ? ret : end_batch(in, bt, &b, wl->nproducts, cap_batches, cap_slots);
}

/* In core with C packed: one batch per C pack (every rank's) with all its products,
 * k outer: as many tasks as C packs, which is what can run in parallel (the products of
 * a pack all write its one handle). Ranges of k per batch made tasks of a few products
 * each (doc/design.md, Decisions, "One batch per C pack"). A C tile's first update
 * applies beta, except in the packs add_pack_scales() scales. With several devices (GPUs),
 * a process column's C pack columns are dealt to them in turn. */
int stargemm__inspect_packed(struct inspector *in)
{
	const struct stargemm__request *r = in->r;
	const struct stargemm__packing *pk = r->c.pack;
	struct stargemm__worklist *wl = in->bd.wl;
	struct batcher bt = { .s = 1 };
	int64_t cap_batches = 0, cap_slots = 0, *start = NULL, *rows = NULL;
	int64_t *seen = calloc((size_t)r->c.grid.Q, sizeof(*seen));
	int ret = seen ? stargemm__operand_columns(&r->a, r->mt, r->kt, &start, &rows) : -ENOMEM;

	if (!ret)
		ret = batcher_init(&bt, r);
	for (int64_t J = 0; J < pk->gnt && !ret; J++) {
		int q = in->ccol->proc[pk->col_first[J]];

		bt.device = (int)(seen[q]++ % r->ndevices);
		for (int64_t I = 0; I < pk->gmt && !ret; I++)
			ret = add_pack_batch(in, &bt, I, J, start, rows, &cap_batches, &cap_slots);
	}
	free(seen);
	wl->chunks[0].count = wl->nproducts;
	batcher_free(&bt);
	free(start);
	free(rows);
	return ret;
}

/* With several devices per rank, at most the side that gives each device of every
 * rank a run of local C columns, or rows (inspect_batched() deals the runs to the
 * devices), but not below 2 (below, batches of one product: none). */
static int64_t device_side(const struct inspector *in, int64_t s)
{
	const struct stargemm__axis *ax = stargemm__in_core_by_rows(in) ? in->crow : in->ccol;
	int64_t fewest = INT64_MAX, cap;
	int G = in->r->ndevices;

	if (G < 2)
		return s;
	for (int q = 0; q < ax->nproc; q++)
		if (ax->start[q + 1] - ax->start[q] < fewest)
			fewest = ax->start[q + 1] - ax->start[q];
	cap = fewest / G > 2 ? fewest / G : 2;
	return s < cap ? s : cap;
}

/* ---- out of core, small tiles: batches within each chunk ------------------------- */

/* Batches per worker and chunk, out of core (each at most batch_flops): fewer, larger
 * batches cost less; four keep the CPU workers of a host RAM device balanced within a
 * chunk and let a GPU fetch one batch while it runs the one before. One, four and
 * sixteen were measured: doc/design.md, Decisions, "Four batches per worker and chunk
 * out of core". */
#define CHUNK_BATCHES 4.0

/* Out of core, the chunks stay as inspected (the same products, prefetches, releases and
 * holds); when tile products are small they are regrouped inside each chunk into
 * batches: the C tiles of each rank's device, walked as the block (columns outer, rows
 * inner), are cut into runs of about the target flops, and a run's batch holds all the
 * chunk's products of its tiles, k outer. The batches of a chunk write distinct C
 * tiles and may run side by side; a C tile's chain goes from its batch in one chunk to
 * its batch in the next. Every rank deals every rank's tiles (stargemm__deal_rank()), so that all
 * list the same batches. */
struct chunk_batcher {
	struct batcher bt;
	int *dev;              /* per block tile (ii * ncols + jj): its owner's device */
	int64_t *run;          /* per block tile: its batch in the chunk */
	double *flops;         /* per block tile: its products' flops in the chunk */
	int64_t *row_pos, *col_pos;   /* ii of each row of C, jj of each column, in the block */
	int64_t *open;         /* per (rank, device): the batch being filled, or -1 */
	double *open_flops;    /* ... and its flops */
	int64_t *start;        /* per batch of the chunk: where its products go */
	struct stargemm__product *sorted;
	int64_t cap_batches, cap_slots, cap_start, cap_sorted;
	int groups;            /* ranks x devices */
};

/* Out of core: whether tile products are batched: an average one below batch_below,
 * and an average chunk's batches (chunk_runs()) would hold two of them or more. */
int stargemm__ooc_batched(const struct stargemm__request *r, const struct stargemm__worklist *wl)
{
	double avg = average_product(r), share;

	if (r->batch_below <= 0 || r->batch_flops <= 0 || avg <= 0 || avg >= r->batch_below ||
	    wl->nchunks < 1)
		return 0;
	share = wl->flops / (double)wl->nchunks /
		(CHUNK_BATCHES * (r->workers > 0 ? r->workers : 1));
	return 2.0 * avg <= (share < r->batch_flops ? share : r->batch_flops);
}

static int chunk_batcher_init(struct inspector *in, struct chunk_batcher *cb)
{
	const struct stargemm__request *r = in->r;
	int64_t tiles = in->plan->b * r->c.grid.P * in->plan->c * r->c.grid.Q;

	tiles = tiles > 0 ? tiles : 1;
	cb->groups = r->c.grid.P * r->c.grid.Q * r->ndevices;
	cb->dev = malloc((size_t)tiles * sizeof(*cb->dev));
	cb->run = malloc((size_t)tiles * sizeof(*cb->run));
	cb->flops = calloc((size_t)tiles, sizeof(*cb->flops));
	cb->row_pos = malloc((size_t)(r->mt > 0 ? r->mt : 1) * sizeof(*cb->row_pos));
	cb->col_pos = malloc((size_t)(r->nt > 0 ? r->nt : 1) * sizeof(*cb->col_pos));
	cb->open = malloc((size_t)cb->groups * sizeof(*cb->open));
	cb->open_flops = malloc((size_t)cb->groups * sizeof(*cb->open_flops));
	if (!cb->dev || !cb->run || !cb->flops || !cb->row_pos || !cb->col_pos || !cb->open ||
	    !cb->open_flops)
		return -ENOMEM;
	return batcher_init(&cb->bt, r);
}

static void chunk_batcher_free(struct chunk_batcher *cb)
{
	batcher_free(&cb->bt);
	free(cb->dev);
	free(cb->run);
	free(cb->flops);
	free(cb->row_pos);
	free(cb->col_pos);
	free(cb->open);
	free(cb->open_flops);
	free(cb->start);
	free(cb->sorted);
}

/* Block @p id's rows and columns in in->blk, their positions, and every rank's deal. */
static void batch_block(struct inspector *in, struct chunk_batcher *cb, int64_t id)
{
	const struct stargemm__request *r = in->r;
	struct block *b = &in->blk;
	int64_t x, y;

	stargemm__block_at(in, id, &x, &y);
	b->ncols = stargemm__block_indices(y, in->plan->c, in->ccol, b->cols);
	b->nrows = stargemm__block_indices(x, in->plan->b, in->crow, b->rows);
	for (int64_t ii = 0; ii < b->nrows; ii++)
		cb->row_pos[b->rows[ii]] = ii;
	for (int64_t jj = 0; jj < b->ncols; jj++)
		cb->col_pos[b->cols[jj]] = jj;
	for (int64_t e = 0; e < b->nrows * b->ncols; e++)
		cb->dev[e] = -1;
	for (int p = 0; p < r->c.grid.P; p++)
		for (int q = 0; q < r->c.grid.Q; q++)
			stargemm__deal_rank(r, in->ccol, b, stargemm__grid_rank(&r->c.grid, p, q), cb->dev);
}

static int64_t block_tile(const struct chunk_batcher *cb, const struct block *b,
			  const struct stargemm__product *x)
{
	return cb->row_pos[x->i] * b->ncols + cb->col_pos[x->j];
}

/* The chunk's C tiles cut into runs (see above); returns their number. */
static int64_t chunk_runs(struct inspector *in, struct chunk_batcher *cb,
			  const struct stargemm__chunk *ch)
{
	const struct stargemm__request *r = in->r;
	const struct stargemm__worklist *wl = in->bd.wl;
	const struct block *b = &in->blk;
	double total = 0.0, target;
	int64_t nruns = 0;

	for (int64_t q = ch->first; q < ch->first + ch->count; q++) {
		const struct stargemm__product *x = &wl->products[q];
		double f = stargemm__product_flops(r, x->i, x->j, x->k);

		cb->flops[block_tile(cb, b, x)] += f;
		total += f;
	}
	/* About CHUNK_BATCHES batches per worker and chunk, none above batch_flops. */
	target = total / (CHUNK_BATCHES * (r->workers > 0 ? r->workers : 1));
	target = target < r->batch_flops ? target : r->batch_flops;
	for (int g = 0; g < cb->groups; g++)
		cb->open[g] = -1;
	for (int64_t jj = 0; jj < b->ncols; jj++)
		for (int64_t ii = 0; ii < b->nrows; ii++) {
			int64_t t = ii * b->ncols + jj;
			int g;

			if (cb->flops[t] <= 0.0)
				continue;
			g = stargemm__operand_owner(&r->c, b->rows[ii], b->cols[jj]) * r->ndevices +
			    cb->dev[t];
			if (cb->open[g] < 0 || cb->open_flops[g] >= target) {
				cb->open[g] = nruns++;
				cb->open_flops[g] = 0.0;
			}
			cb->run[t] = cb->open[g];
			cb->open_flops[g] += cb->flops[t];
			cb->flops[t] = 0.0;
		}
	return nruns;
}

/* The chunk's products in the order of their runs, each run's in list order; the
 * first product of run u at ch->first + cb->start[u] (u < nruns; start[nruns]: the end). */
static int sort_chunk(struct inspector *in, struct chunk_batcher *cb,
		      const struct stargemm__chunk *ch, int64_t nruns)
{
	struct stargemm__worklist *wl = in->bd.wl;
	const struct block *b = &in->blk;

	if (stargemm__grow((void **)&cb->start, &cb->cap_start, nruns + 1, sizeof(*cb->start)) ||
	    stargemm__grow((void **)&cb->sorted, &cb->cap_sorted, ch->count, sizeof(*cb->sorted)))
		return -ENOMEM;
	memset(cb->start, 0, (size_t)(nruns + 1) * sizeof(*cb->start));
	for (int64_t q = ch->first; q < ch->first + ch->count; q++)
		cb->start[cb->run[block_tile(cb, b, &wl->products[q])] + 1]++;
	for (int64_t u = 0; u < nruns; u++)
		cb->start[u + 1] += cb->start[u];
	for (int64_t q = ch->first; q < ch->first + ch->count; q++) {
		struct stargemm__product *x = &wl->products[q];

		x->info.prefetch = STARGEMM_PREFETCH_ALL;
		cb->sorted[cb->start[cb->run[block_tile(cb, b, x)]]++] = *x;
	}
	if (ch->count)   /* an empty chunk may have no sort buffer yet */
		memcpy(wl->products + ch->first, cb->sorted,
		       (size_t)ch->count * sizeof(*cb->sorted));
	for (int64_t u = nruns; u > 0; u--)   /* the cursors ended at the next run's start */
		cb->start[u] = cb->start[u - 1];
	cb->start[0] = 0;
	return 0;
}

/* Chunk @p n's products as its batches. */
static int batch_chunk(struct inspector *in, struct chunk_batcher *cb, int64_t n)
{
	struct stargemm__worklist *wl = in->bd.wl;
	struct stargemm__chunk *ch = &wl->chunks[n];
	int64_t nruns = chunk_runs(in, cb, ch);
	int ret = sort_chunk(in, cb, ch, nruns);

	ch->batch_first = wl->nbatches;
	for (int64_t u = 0; u < nruns && !ret; u++) {
		struct stargemm__batch b = { .first = ch->first + cb->start[u],
					     .ref_first = wl->nrefs };

		ret = end_batch(in, &cb->bt, &b, ch->first + cb->start[u + 1], &cb->cap_batches,
				&cb->cap_slots);
	}
	ch->batch_count = wl->nbatches - ch->batch_first;
	return ret;
}

/* Out of core, small tiles: every chunk's products as batches. */
int stargemm__batch_ooc(struct inspector *in)
{
	struct stargemm__worklist *wl = in->bd.wl;
	struct chunk_batcher cb = { 0 };
	int ret = chunk_batcher_init(in, &cb);

	for (int64_t id = 0; id < wl->nblocks && !ret; id++) {
		const struct stargemm__block *bk = &wl->blocks[id];

		batch_block(in, &cb, id);
		for (int64_t n = bk->first_chunk; n < bk->first_chunk + bk->nchunks && !ret; n++)
			ret = batch_chunk(in, &cb, n);
	}
	chunk_batcher_free(&cb);
	return ret;
}

/* Small tiles: the in-core list again, as batches (its product count sets their size);
 * always when an operand is packed (its tiles have no handle of their own). */
int stargemm__rebatch(struct inspector *in)
{
	const struct stargemm__request *r = in->r;
	struct stargemm__worklist *wl = in->bd.wl;
	int packed = r->a.pack || r->b.pack || r->c.pack;
	int64_t s = device_side(in, batch_side(in, (double)wl->nproducts));

	if (s <= 1 && !packed)
		return 0;
	wl->nproducts = 0;
	wl->nskipped = 0;
	wl->flops = 0.0;
	memset(in->bd.started, 0, (size_t)(r->mt * r->nt));
	return r->c.pack ? stargemm__inspect_packed(in) : inspect_batched(in, s);
}
