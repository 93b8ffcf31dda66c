/*
 * inspect.c — the inspector of a product of 2D block-cyclic operands: the plan of
 * src/plan.c written out as a work list (src/worklist.h) for the executor.
 *
 * Operands may be block-sparse: a product C(i,j) += op(A)(i,k) op(B)(k,j) is listed
 * only when its three tiles exist (C's pattern is kept: products outside it are
 * dropped), the first one of a C tile's chain applies beta, and a C tile that no
 * product updates gets C = beta C on its own. Absent tiles are never prefetched, held
 * or released. The blocks and chunks are still those of the dense plan: a sparse
 * problem's footprint is below the dense one, so the plan fits, conservatively.
 *
 * Out of core, Algorithm 3 of Herault et al. 2019: blocks of C (b x c local tiles per
 * rank) one after the other, y (columns) outer and x (rows) inner; inside a block, k
 * runs in chunks of depth d. With a block-sparse operand on GPUs (its loads predicted
 * from this list) the walk is serpentine (stargemm__block_at(), chunk_k()): x runs backwards in
 * every other column of blocks, so that consecutive blocks share their rows or their
 * columns, and k backwards in every other block, so that a block starts with the k
 * its predecessor ended with, whose shared tiles are still loaded and kept (mark_kept()):
 * fewer loads than in the plain order (doc/design.md, Decisions, "Serpentine walk, and
 * C tiles released once finished"). Dense products keep the plain order, which Eq. 1's
 * predictions count. What the list says, and why:
 *  - Devices (deal_block()): local column t of a block of L local columns goes to
 *    device t' mod G where t' is its local column index (the paper's cyclic rule),
 *    except the last L mod G local columns, whose tiles are dealt out column by column
 *    in G row ranges of equal area (stargemm__split_device()), so every device gets the
 *    same work. With whole columns, 69 columns on 6 GPUs gave three GPUs 12 and three
 *    11, and the three waited (doc/out-of-core.md).
 *  - Products of a chunk: k outer, then columns, then rows, every rank's (StarPU-MPI
 *    runs each on its C tile's owner).
 *  - Prefetches of a chunk, issued when it is inserted, in the order its tasks use
 *    them (k outer), priorities decreasing along the run: each B tile to every device
 *    whose products of the chunk read it; each A tile to one of those (rotating), the
 *    others fetching it from that peer later (sched/ooc.c). A tile that no product of
 *    the block reads is not loaded (readers(): block-sparse rows and columns need not
 *    meet at every k). With r->prefetch_received (on GPUs, STARGEMM_PREFETCH_RECEIVED),
 *    the tiles that this rank's products of the chunk receive over MPI are listed too,
 *    marked received (load()): StarPU 1.3 cannot prefetch a tile before its receive
 *    has landed, so the executor prefetches each one from the receive's completion
 *    (src/execute.c, land_received()), with the priority of the rank's own tiles of
 *    that step; a received A tile to the first device that reads it
 *    (received_a_device()). Otherwise a received tile goes to its device when its
 *    GEMM becomes ready, after the C tile's previous update.
 *  - The run's first chunk on a rank with one GPU: its tiles are prefetched before its
 *    tasks exist, C tile by C tile (the C tile, then the A tiles of its row and the B
 *    tiles of its column the first time they are needed), above every other prefetch:
 *    the GPU can start on a C tile as soon as it has arrived (doc/out-of-core.md);
 *    received tiles, when listed, in the same order. A C
 *    tile whose first chunk reads a tile received over MPI is left to its GEMM (a
 *    prefetch would hold the tile and the GEMM, which fetches the received inputs,
 *    would wait for it).
 *  - Releases: once chunk m is done, its input tiles that no chunk of (m, m + ell + 1]
 *    reads are let go (flushed from the MPI cache, marked "won't use"); after a block's
 *    last chunk is inserted, its C tiles are written back. Each C tile's last product
 *    is flagged (mark_last()): the executor may write the tile back once it is done.
 *  - Holds (pinned_k()): when K ends with a smaller tile, the A and B tiles of that
 *    last k are held on the devices that read them for the whole block, and not
 *    prefetched (class HELD). StarPU 1.3, allocating on a full device, first reuses a
 *    free buffer of the same shape; the ragged tiles, the only ones of their shape,
 *    took each other's buffers and were loaded again almost once per task (more loads
 *    than the model; held, as many: doc/out-of-core.md, "A ragged last K tile is held
 *    on its devices").
 *
 * In core (no plan): one chunk with every product, k outer, devices by column
 * (local column mod G), nothing prefetched, released or held by the executor.
 *
 * Small tiles (an average tile product below batch_below flops) run as batches, many
 * tile products per task (src/batchlist.c): in core the list is made again as batches;
 * out of core each chunk's products are regrouped into batches inside the chunk, which
 * keeps everything else of the list.
 *
 * Pure: no MPI, no StarPU. Unit-tested in tests/test_inspect.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "inspector.h"

int stargemm__operand_owner(const struct stargemm__operand *x, int64_t r, int64_t c)
{
	int64_t i = x->trans ? c : r, j = x->trans ? r : c;
	int p = x->rows ? x->rows->proc[i] : (int)(i % x->grid.P);
	int q = x->cols ? x->cols->proc[j] : (int)(j % x->grid.Q);

	return stargemm__grid_rank(&x->grid, p, q);
}

int stargemm__operand_present(const struct stargemm__operand *x, int64_t r, int64_t c)
{
	int64_t i = x->trans ? c : r, j = x->trans ? r : c;

	return !x->present || x->present[i + j * x->ld];
}

/* The norm of tile (r, c) of op(X) (only called when x->norm is set). */
static double operand_norm(const struct stargemm__operand *x, int64_t r, int64_t c)
{
	int64_t i = x->trans ? c : r, j = x->trans ? r : c;

	return x->norm[i + j * x->ld];
}

int stargemm__operand_columns(const struct stargemm__operand *x, int64_t rows, int64_t cols,
			      int64_t **start, int64_t **idx)
{
	int64_t n = 0, cap = 0;

	*start = malloc((size_t)(cols + 1) * sizeof(**start));
	for (int64_t c = 0; *start && c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			cap += stargemm__operand_present(x, r, c);
	*idx = malloc((size_t)(cap > 0 ? cap : 1) * sizeof(**idx));
	if (!*start || !*idx) {
		free(*start);
		free(*idx);
		return -ENOMEM;
	}
	for (int64_t c = 0; c < cols; c++) {
		(*start)[c] = n;
		for (int64_t r = 0; r < rows; r++)
			if (stargemm__operand_present(x, r, c))
				(*idx)[n++] = r;
	}
	(*start)[cols] = n;
	return 0;
}


/* Whether C(i, j) += op(A)(i, k) op(B)(k, j) exists: its three tiles do. */
static int product_exists(const struct stargemm__request *r, int64_t i, int64_t j,
			  int64_t k)
{
	return stargemm__operand_present(&r->c, i, j) && stargemm__operand_present(&r->a, i, k) &&
	       stargemm__operand_present(&r->b, k, j);
}

int stargemm__product_filtered(const struct stargemm__request *r, int64_t i, int64_t j,
				int64_t k)
{
	return r->a.norm && r->b.norm &&
	       operand_norm(&r->a, i, k) * operand_norm(&r->b, k, j) < r->eps;
}

/* Whether the list has the product: its tiles exist and the filter keeps it. */
static int listed(const struct stargemm__request *r, int64_t i, int64_t j, int64_t k)
{
	return product_exists(r, i, j, k) && !stargemm__product_filtered(r, i, j, k);
}

/* Flops of one multiply-add of the request's elements. */
double stargemm__fma_flops(const struct stargemm__request *r)
{
	return r->is_complex ? 8.0 : 2.0;
}

double stargemm__product_flops(const struct stargemm__request *r, int64_t i, int64_t j,
			       int64_t k)
{
	return stargemm__fma_flops(r) * (double)(r->row_off[i + 1] - r->row_off[i]) *
	       (double)(r->col_off[j + 1] - r->col_off[j]) *
	       (double)(r->k_off[k + 1] - r->k_off[k]);
}

/* Append the product if it exists; the first of its C tile's chain applies beta
 * (@p started: a flag per C tile). */
int stargemm__add_product(struct builder *bd, int64_t i, int64_t j, int64_t k, int device,
		       int prefetch, int64_t block, int64_t chunk)
{
	struct stargemm__worklist *wl = bd->wl;
	const struct stargemm__request *r = bd->r;
	struct stargemm__product *p;

	if (!product_exists(r, i, j, k))
		return 0;
	if (stargemm__product_filtered(r, i, j, k)) {
		wl->nskipped++;
		return 0;
	}
	wl->flops += stargemm__product_flops(r, i, j, k);
	if (stargemm__grow((void **)&wl->products, &bd->cap_products, wl->nproducts + 1, sizeof(*p)))
		return -ENOMEM;
	p = &wl->products[wl->nproducts++];
	*p = (struct stargemm__product){ .i = i, .j = j, .k = k };
	p->first = !bd->started[i + j * r->mt];
	bd->started[i + j * r->mt] = 1;
	p->info.device = device;
	p->info.prefetch = prefetch;
	p->info.block = block;
	p->info.chunk = chunk;
	return 0;
}

int stargemm__add_ref(struct builder *bd, int operand, int64_t r, int64_t c, int device,
		   int priority)
{
	struct stargemm__worklist *wl = bd->wl;
	struct stargemm__tile_ref *t;

	if (stargemm__grow((void **)&wl->refs, &bd->cap_refs, wl->nrefs + 1, sizeof(*t)))
		return -ENOMEM;
	t = &wl->refs[wl->nrefs++];
	*t = (struct stargemm__tile_ref){ r, c, operand, device, priority, 0, 0 };
	return 0;
}

/* ---- the device deal of a block ------------------------------------------------- */


/* Global tile indices covered by block @p blk of @p size local indices along one
 * axis of C's distribution: local index l of every process p (cyclic: l * nproc + p).
 * Every rank's share is listed, so that all ranks insert the same tasks. */
int64_t stargemm__block_indices(int64_t blk, int64_t size, const struct stargemm__axis *ax,
			     int64_t *out)
{
	int64_t count = 0;

	for (int64_t l = blk * size; l < (blk + 1) * size; l++)
		for (int p = 0; p < ax->nproc; p++)
			if (ax->start[p] + l < ax->start[p + 1])
				out[count++] = ax->at[ax->start[p] + l];
	return count;
}

static int64_t tile_area(const struct stargemm__request *r, int64_t i, int64_t j)
{
	return (r->row_off[i + 1] - r->row_off[i]) * (r->col_off[j + 1] - r->col_off[j]);
}

/* Whether local column @p t of a block of @p L local columns is split (the last L mod G). */
static int is_split(int64_t t, int64_t L, int G)
{
	return t >= L / G * G;
}

/* Whether tile (row, col) of @p x exists and is rank @p me's. */
static int owned(const struct stargemm__operand *x, int me, int64_t row, int64_t col)
{
	return stargemm__operand_present(x, row, col) &&
	       stargemm__operand_owner(x, row, col) == me;
}

/* Whether C(i, j) exists and is this rank's. */
int stargemm__is_local(const struct stargemm__request *r, int64_t i, int64_t j)
{
	return owned(&r->c, r->me, i, j);
}

/* The process column of rank @p rank in C's grid. */
static int column_of(const struct stargemm__request *r, int rank)
{
	int u, v;

	stargemm__grid_coords(&r->c.grid, rank, &u, &v);
	return v;
}

/* Total area of the block's split tiles of rank @p rank (L: its local columns). */
static int64_t split_area(const struct stargemm__request *r, const struct stargemm__axis *cols,
			  const struct block *b, int64_t L, int rank)
{
	int64_t total = 0, t = 0;
	int v = column_of(r, rank);

	for (int64_t jj = 0; jj < b->ncols; jj++) {
		if (cols->proc[b->cols[jj]] != v)
			continue;
		if (is_split(t, L, r->ndevices))
			for (int64_t ii = 0; ii < b->nrows; ii++)
				if (owned(&r->c, rank, b->rows[ii], b->cols[jj]))
					total += tile_area(r, b->rows[ii], b->cols[jj]);
		t++;
	}
	return total;
}

/* The device of each C tile of the block that rank @p rank owns (see the top of the
 * file), into @p dev (ii * ncols + jj; the other tiles' entries are left as they are);
 * @p cols: C's column axis. */
void stargemm__deal_rank(const struct stargemm__request *r, const struct stargemm__axis *cols,
		      const struct block *b, int rank, int *dev)
{
	int v = column_of(r, rank), G = r->ndevices;
	int64_t L = 0, t = 0, before = 0, total;

	for (int64_t jj = 0; jj < b->ncols; jj++)
		L += cols->proc[b->cols[jj]] == v;
	total = split_area(r, cols, b, L, rank);
	for (int64_t jj = 0; jj < b->ncols; jj++) {
		int64_t j = b->cols[jj];
		int split = is_split(t, L, G);

		if (cols->proc[j] != v)
			continue;
		for (int64_t ii = 0; ii < b->nrows; ii++) {
			int64_t i = b->rows[ii];

			if (!owned(&r->c, rank, i, j))
				continue;
			if (split) {
				dev[ii * b->ncols + jj] = stargemm__split_device(before, total, G);
				before += tile_area(r, i, j);
			} else {
				dev[ii * b->ncols + jj] = (int)(cols->local[j] % G);
			}
		}
		t++;
	}
}

/* This rank's devices of the block's C tiles (-1: another rank's or absent). */
static void deal_block(const struct stargemm__request *r, const struct stargemm__axis *cols,
		       struct block *b)
{
	for (int64_t e = 0; e < b->nrows * b->ncols; e++)
		b->device[e] = -1;
	stargemm__deal_rank(r, cols, b, r->me, b->device);
}

/* ---- the lists of a chunk ------------------------------------------------------- */


/* The k chunk that the current block walks @p z-th (a block walked backwards also
 * walks each chunk's steps backwards, chunk_step()). */
static int64_t chunk_k(const struct inspector *in, int64_t z)
{
	return in->reverse ? in->plan->Z - 1 - z : z;
}

static int64_t chunk_begin(const struct inspector *in, int64_t z)
{
	return chunk_k(in, z) * in->plan->d;
}

static int64_t chunk_end(const struct inspector *in, int64_t z)
{
	int64_t end = (chunk_k(in, z) + 1) * in->plan->d;

	return end < in->r->kt ? end : in->r->kt;
}

/* The k steps of the current block's @p z-th chunk. */
static int64_t chunk_steps(const struct inspector *in, int64_t z)
{
	return chunk_end(in, z) - chunk_begin(in, z);
}

/* Step @p s of that chunk, in the block's direction. */
static int64_t chunk_step(const struct inspector *in, int64_t z, int64_t s)
{
	return in->reverse ? chunk_end(in, z) - 1 - s : chunk_begin(in, z) + s;
}

static const struct stargemm__operand *operand_of(const struct inspector *in, int operand)
{
	return operand == STARGEMM_OP_A ? &in->r->a : operand == STARGEMM_OP_B ? &in->r->b
									       : &in->r->c;
}

/* Whether a tile exists and is this rank's (the only tiles it may hold). */
static int own(const struct inspector *in, int operand, int64_t row, int64_t col)
{
	const struct stargemm__operand *x = operand_of(in, operand);

	/* a generated tile is made where it is read */
	return x->generated ? stargemm__operand_present(x, row, col)
			    : owned(x, in->r->me, row, col);
}

/* List the load of tile (row, col) to device @p device with @p priority, if the tile
 * exists: this rank's own, or with r->prefetch_received another rank's, marked
 * received (the executor prefetches it once its receive has landed). Without GPUs a
 * received tile lands in the memory its tasks use: nothing to load (product.c sets
 * prefetch_received on GPUs only). */
static int load(struct inspector *in, int operand, int64_t row, int64_t col, int device,
		int priority)
{
	struct stargemm__worklist *wl = in->bd.wl;
	int mine = own(in, operand, row, col);

	if (!mine && (!in->r->prefetch_received ||
		      !stargemm__operand_present(operand_of(in, operand), row, col)))
		return 0;
	if (stargemm__add_ref(&in->bd, operand, row, col, device, priority))
		return -ENOMEM;
	wl->refs[wl->nrefs - 1].received = !mine;
	return 0;
}

static int add_products(struct inspector *in, int64_t block, int64_t z, int64_t n)
{
	const struct block *b = &in->blk;

	for (int64_t s = 0; s < chunk_steps(in, z); s++) {
		int64_t k = chunk_step(in, z, s);

		for (int64_t jj = 0; jj < b->ncols; jj++)
			for (int64_t ii = 0; ii < b->nrows; ii++)
				if (stargemm__add_product(&in->bd, b->rows[ii], b->cols[jj], k,
						b->device[ii * b->ncols + jj],
						k == in->pinned_k ? STARGEMM_PREFETCH_HELD
								  : STARGEMM_PREFETCH_READY,
						block, n))
					return -ENOMEM;
	}
	return 0;
}

/* Priority of the prefetches of step @p kk of chunk @p n: decreasing along the run, so
 * that StarPU's request queue serves them in the order the tasks use them; below the
 * ready tasks' own prefetches (sched/ooc.c, priority >= 1). */
static int chunk_priority(const struct inspector *in, int64_t n, int64_t kk)
{
	int64_t seq = n * in->plan->d + kk;

	return seq < INT_MAX / 2 ? -(int)seq : -(INT_MAX / 2);
}

/* The devices of @p mask, in order, into @p out; returns their number. */
static int mask_devices(uint64_t mask, int G, int *out)
{
	int count = 0;

	for (int g = 0; g < G && g < STARGEMM_MAX_DEVICES; g++)
		if (mask & (UINT64_C(1) << g))
			out[count++] = g;
	return count;
}

/* Which tiles add_to_devices() lists: all, this rank's own (holds: a received tile
 * cannot be acquired on a device before its receive is posted, StarPU 1.3), or those
 * received (the pinned K's, whose own tiles are held). */
enum which_tiles { ALL_TILES, OWN_TILES, RECEIVED_TILES };

/* List the load of a tile to every device of @p mask (load()), if it is of @p which. */
static int add_to_devices(struct inspector *in, int operand, int64_t row, int64_t col,
			  uint64_t mask, int priority, enum which_tiles which)
{
	int devs[STARGEMM_MAX_DEVICES], nd = mask_devices(mask, in->r->ndevices, devs);
	int mine = own(in, operand, row, col);

	if ((which == OWN_TILES && !mine) || (which == RECEIVED_TILES && mine))
		return 0;
	for (int g = 0; g < nd; g++)
		if (load(in, operand, row, col, devs[g], priority))
			return -ENOMEM;
	return 0;
}

/* The devices (bit g) whose listed products of step @p k of the block read A(rows[x], k)
 * (@p row set) or B(k, cols[x]): in a block-sparse product a tile of the block's rows
 * or columns may meet no tile of the other operand at that k, and a tile no product
 * reads is neither prefetched nor held (when they were, the loads exceeded the model:
 * doc/design.md, Decisions, "A tile no product of the block reads is not loaded").
 * Dense: every device with C tiles in the row or column. */
static uint64_t readers(const struct inspector *in, int64_t k, int64_t x, int row)
{
	const struct block *b = &in->blk;
	uint64_t mask = 0;

	for (int64_t y = 0; y < (row ? b->ncols : b->nrows); y++) {
		int64_t ii = row ? x : y, jj = row ? y : x;
		int dev = b->device[ii * b->ncols + jj];

		if (dev >= 0 && listed(in->r, b->rows[ii], b->cols[jj], k))
			mask |= UINT64_C(1) << dev;
	}
	return mask;
}

/* The device a received A tile is prefetched to, of those whose products read it
 * (@p devs, in device order): the first. The other readers take it from that device
 * (sched/ooc.c, leave_a_to_peer()). A received tile lands while its chunk runs, and
 * rotated like this rank's own tiles its first copy often went to a device whose
 * products of the chunk come late in the chunk's order (the columns of the last
 * local column split over the GPUs) while the other readers' GEMMs, ready sooner,
 * fetched it from the host or waited for it, and some copies were made twice: on 2
 * simulated nodes with 3 GPUs each (tests/sim_ooc.sh, mpi3g) 96 loads per GPU against
 * Eq. (1)'s 91 rotated, 92 to the first reader (doc/out-of-core.md, "Tiles received
 * over MPI are prefetched"). */
static int received_a_device(const int *devs)
{
	return devs[0];
}

/* A chunk's prefetches, in the order its tasks use them (k outer): B tiles to every
 * device that reads them, A tiles to one of the devices that read them: this rank's
 * own rotating, a received one to the first (received_a_device()). At
 * the pinned K, whose own tiles are held (add_block_holds()) and whose GEMMs prefetch
 * nothing (class HELD), the received tiles only, A too to every device that reads it. */
static int add_chunk_prefetches(struct inspector *in, int64_t z, int64_t n)
{
	const struct block *b = &in->blk;
	int devs[STARGEMM_MAX_DEVICES];

	for (int64_t s = 0; s < chunk_steps(in, z); s++) {
		int64_t k = chunk_step(in, z, s);
		int prio = chunk_priority(in, n, s), pinned = k == in->pinned_k;
		enum which_tiles which = pinned ? RECEIVED_TILES : ALL_TILES;

		for (int64_t jj = 0; jj < b->ncols; jj++)
			if (add_to_devices(in, STARGEMM_OP_B, k, b->cols[jj], readers(in, k, jj, 0),
					   prio, which))
				return -ENOMEM;
		for (int64_t ii = 0; ii < b->nrows; ii++) {
			uint64_t mask = readers(in, k, ii, 1);
			int nd = mask_devices(mask, in->r->ndevices, devs);
			int64_t i = b->rows[ii];

			if (pinned ? add_to_devices(in, STARGEMM_OP_A, i, k, mask, prio, which)
				   : nd > 0 && load(in, STARGEMM_OP_A, i, k,
						    own(in, STARGEMM_OP_A, i, k)
							? devs[(in->crow->local[i] + k) % nd]
							: received_a_device(devs), prio))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Whether the first chunk's GEMMs of C(i, j) read only this rank's tiles. */
static int reads_own_tiles(const struct inspector *in, int64_t i, int64_t j, int64_t k_end)
{
	for (int64_t k = 0; k < k_end; k++)
		if (product_exists(in->r, i, j, k) &&
		    (!own(in, STARGEMM_OP_A, i, k) || !own(in, STARGEMM_OP_B, k, j)))
			return 0;
	return 1;
}

/* Next priority of the first chunk's sequence: decreasing, above every other prefetch
 * (the policy's own stay at or below INT_MAX / 2). */
static int first_priority(int *prio)
{
	return *prio > INT_MAX / 2 + 1 ? (*prio)-- : *prio;
}

static int add_first_ref(struct inspector *in, int operand, int64_t row, int64_t col,
			 int *prio)
{
	int p = first_priority(prio);   /* taken by every tile, prefetched or not */

	return load(in, operand, row, col, 0, p);   /* C: this rank's (is_local) */
}

/* The run's first chunk on one GPU: C tile by C tile (see the top of the file), each A
 * and B tile the first time a listed product reads it. */
static int add_first_chunk_prefetches(struct inspector *in)
{
	const struct block *b = &in->blk;
	int64_t k_end = chunk_end(in, 0);
	int prio = INT_MAX - 1, ret = 0;
	/* seen[x * k_end + k]: A(rows[x], k) listed (x < nrows), or B(k, cols[x - nrows]) */
	char *seen = calloc((size_t)((b->nrows + b->ncols) * k_end) + 1, 1);

	if (!seen)
		return -ENOMEM;
	for (int64_t jj = 0; jj < b->ncols && !ret; jj++)
		for (int64_t ii = 0; ii < b->nrows && !ret; ii++) {
			int64_t i = b->rows[ii], j = b->cols[jj];

			if (!stargemm__is_local(in->r, i, j))
				continue;
			if (!in->r->beta_zero && reads_own_tiles(in, i, j, k_end))
				ret = add_first_ref(in, STARGEMM_OP_C, i, j, &prio);
			for (int64_t k = 0; k < k_end && !ret; k++) {
				char *sa = &seen[ii * k_end + k], *sb = &seen[(b->nrows + jj) * k_end + k];

				if (k == in->pinned_k || !listed(in->r, i, j, k))
					continue;
				if (!*sb)
					ret = add_first_ref(in, STARGEMM_OP_B, k, j, &prio);
				if (!ret && !*sa)
					ret = add_first_ref(in, STARGEMM_OP_A, i, k, &prio);
				*sa = *sb = 1;
			}
		}
	free(seen);
	return ret;
}

/* A chunk's input tiles, every rank's, in release order (k outer, A rows then B
 * columns); their keep flags are set by mark_kept(). */
static int add_chunk_inputs(struct inspector *in, int64_t z)
{
	const struct block *b = &in->blk;

	for (int64_t s = 0; s < chunk_steps(in, z); s++) {
		int64_t k = chunk_step(in, z, s);

		for (int64_t ii = 0; ii < b->nrows; ii++)
			if (stargemm__operand_present(&in->r->a, b->rows[ii], k) &&
			    stargemm__add_ref(&in->bd, STARGEMM_OP_A, b->rows[ii], k, 0, 0))
				return -ENOMEM;
		for (int64_t jj = 0; jj < b->ncols; jj++)
			if (stargemm__operand_present(&in->r->b, k, b->cols[jj]) &&
			    stargemm__add_ref(&in->bd, STARGEMM_OP_B, k, b->cols[jj], 0, 0))
				return -ENOMEM;
	}
	return 0;
}

/* This rank's C tiles of the block, columns outer. */
static int add_block_c(struct inspector *in)
{
	const struct block *b = &in->blk;

	for (int64_t jj = 0; jj < b->ncols; jj++)
		for (int64_t ii = 0; ii < b->nrows; ii++)
			if (stargemm__is_local(in->r, b->rows[ii], b->cols[jj]) &&
			    stargemm__add_ref(&in->bd, STARGEMM_OP_C, b->rows[ii], b->cols[jj], 0, 0))
				return -ENOMEM;
	return 0;
}

/* The held tiles of the block: the pinned K tile's A tiles on each device that reads
 * them, B tiles likewise; this rank's own only (a tile received over MPI cannot be
 * acquired before it lands, StarPU 1.3). */
static int add_block_holds(struct inspector *in)
{
	const struct block *b = &in->blk;
	int64_t k = in->pinned_k;

	for (int64_t ii = 0; ii < b->nrows; ii++)
		if (add_to_devices(in, STARGEMM_OP_A, b->rows[ii], k, readers(in, k, ii, 1), 0,
				   OWN_TILES))
			return -ENOMEM;
	for (int64_t jj = 0; jj < b->ncols; jj++)
		if (add_to_devices(in, STARGEMM_OP_B, k, b->cols[jj], readers(in, k, jj, 0), 0,
				   OWN_TILES))
			return -ENOMEM;
	return 0;
}

/* Whether an axis's tiles (offsets @p off, @p n tiles) have one size but for the last. */
static int one_size(const int64_t *off, int64_t n)
{
	for (int64_t t = 1; t + 1 < n; t++)
		if (off[t + 1] - off[t] != off[1] - off[0])
			return 0;
	return 1;
}

/* The K tile held on the devices instead of prefetched: the last one, when it is
 * smaller than all the others, which are equal (a regular tiling with a ragged end);
 * otherwise -1. */
static int64_t pinned_k(const struct stargemm__request *r)
{
	int64_t kt = r->kt;

	if (kt < 2 || r->k_off[kt] - r->k_off[kt - 1] >= r->k_off[1] - r->k_off[0] ||
	    !one_size(r->k_off, kt))
		return -1;
	return kt - 1;
}

/* ---- keep and last flags --------------------------------------------------------- */

/* Flag the last product of each C tile's chain, the list walked backwards. */
static int mark_last(const struct stargemm__request *r, struct stargemm__worklist *wl)
{
	uint8_t *seen = calloc((size_t)(r->mt * r->nt > 0 ? r->mt * r->nt : 1), 1);

	if (!seen)
		return -ENOMEM;
	for (int64_t p = wl->nproducts - 1; p >= 0; p--) {
		struct stargemm__product *x = &wl->products[p];

		x->last = !seen[x->i + x->j * r->mt];
		seen[x->i + x->j * r->mt] = 1;
	}
	free(seen);
	return 0;
}

/* Index of an A or B tile in a dense numbering of op(A) (mt x kt) then op(B) (kt x nt). */
static int64_t input_index(const struct stargemm__request *r,
			   const struct stargemm__tile_ref *t)
{
	return t->operand == STARGEMM_OP_A ? t->r + t->c * r->mt
					   : r->mt * r->kt + t->r + t->c * r->kt;
}

/* Mark the release entries of chunk m that a chunk of (m, m + ell + 1] reads again:
 * chunks are walked backwards with the next chunk reading each tile. */
static int mark_kept(const struct stargemm__request *r, struct stargemm__worklist *wl)
{
	int64_t ntiles = r->mt * r->kt + r->kt * r->nt;
	int64_t *next = malloc((size_t)ntiles * sizeof(*next));

	if (!next)
		return -ENOMEM;
	for (int64_t t = 0; t < ntiles; t++)
		next[t] = INT64_MAX;
	for (int64_t m = wl->nchunks - 1; m >= 0; m--) {
		const struct stargemm__chunk *ch = &wl->chunks[m];

		for (int64_t e = ch->release_first; e < ch->release_first + ch->release_count; e++) {
			int64_t idx = input_index(r, &wl->refs[e]);

			wl->refs[e].keep = next[idx] - m <= wl->lookahead + 1;
		}
		for (int64_t e = ch->release_first; e < ch->release_first + ch->release_count; e++)
			next[input_index(r, &wl->refs[e])] = m;
	}
	free(next);
	return 0;
}

/* ---- the whole list ------------------------------------------------------------- */

static int inspect_chunk(struct inspector *in, int64_t block, int64_t z, int64_t n)
{
	struct stargemm__worklist *wl = in->bd.wl;
	struct stargemm__chunk *ch = &wl->chunks[n];
	int ret;

	ch->block = block;
	ch->first = wl->nproducts;
	if ((ret = add_products(in, block, z, n)))
		return ret;
	ch->count = wl->nproducts - ch->first;
	ch->prefetch_before = n == 0 && wl->gpus && wl->ndevices == 1;
	ch->prefetch_first = wl->nrefs;
	ret = ch->prefetch_before ? add_first_chunk_prefetches(in) : add_chunk_prefetches(in, z, n);
	if (ret)
		return ret;
	ch->prefetch_count = wl->nrefs - ch->prefetch_first;
	ch->release_first = wl->nrefs;
	if ((ret = add_chunk_inputs(in, z)))
		return ret;
	ch->release_count = wl->nrefs - ch->release_first;
	return 0;
}

/* Block @p id of the walk: its position (@p x, @p y) among the plan's X x Y blocks. */
void stargemm__block_at(const struct inspector *in, int64_t id, int64_t *x, int64_t *y)
{
	int64_t X = in->plan->X;

	*y = id / X;
	*x = in->serpentine && *y % 2 ? X - 1 - id % X : id % X;
}

static int inspect_block(struct inspector *in, int64_t id, int64_t *n)
{
	const struct stargemm_plan *pl = in->plan;
	struct stargemm__worklist *wl = in->bd.wl;
	struct stargemm__block *bk = &wl->blocks[id];
	int64_t x, y;
	int ret;

	stargemm__block_at(in, id, &x, &y);
	in->reverse = in->serpentine && id % 2;
	in->blk.ncols = stargemm__block_indices(y, pl->c, in->ccol, in->blk.cols);
	in->blk.nrows = stargemm__block_indices(x, pl->b, in->crow, in->blk.rows);
	deal_block(in->r, in->ccol, &in->blk);
	bk->first_chunk = *n;
	bk->nchunks = pl->Z;
	bk->hold_first = wl->nrefs;
	if (in->pinned_k >= 0 && (ret = add_block_holds(in)))
		return ret;
	bk->hold_count = wl->nrefs - bk->hold_first;
	for (int64_t z = 0; z < pl->Z; z++, (*n)++)
		if ((ret = inspect_chunk(in, id, z, *n)))
			return ret;
	bk->c_first = wl->nrefs;
	if ((ret = add_block_c(in)))
		return ret;
	bk->c_count = wl->nrefs - bk->c_first;
	return 0;
}

static int alloc_block(struct block *b, int64_t maxrows, int64_t maxcols)
{
	b->rows = malloc((size_t)maxrows * sizeof(*b->rows));
	b->cols = malloc((size_t)maxcols * sizeof(*b->cols));
	b->device = malloc((size_t)(maxrows * maxcols) * sizeof(*b->device));
	return b->rows && b->cols && b->device ? 0 : -ENOMEM;
}

static void free_block(struct block *b)
{
	free(b->rows);
	free(b->cols);
	free(b->device);
}

/* Whether the walk is serpentine (see the top of the file): a block-sparse operand on
 * GPUs, not a problem over packs, whose pack products src/packlist.c expands with k
 * increasing inside each pack. Not under a RAM budget: on the CPU problem of
 * doc/performance.md the host memory kept more of the shared tiles than the prediction
 * counts, and the loads fell below the [0.90, 1.05] band for no gain in time
 * (doc/design.md, Decisions, "Under a RAM budget"). */
static int serpentine(const struct stargemm__request *r)
{
	return r->gpus && (r->a.present || r->b.present || r->c.present) &&
	       !r->a.elems && !r->b.elems && !r->c.elems;
}

static int inspect_ooc(struct inspector *in)
{
	const struct stargemm_plan *pl = in->plan;
	struct stargemm__worklist *wl = in->bd.wl;
	int64_t n = 0;
	int ret;

	if (pl->X * pl->b < in->crow->maxlocal || pl->Y * pl->c < in->ccol->maxlocal)
		return stargemm__error(-EINVAL, "stargemm: the plan's blocks cover %" PRId64 " x %"
				       PRId64 " local tiles; C's distribution puts %" PRId64 " x %"
				       PRId64 " on one process", pl->X * pl->b, pl->Y * pl->c,
				       in->crow->maxlocal, in->ccol->maxlocal);
	wl->nblocks = pl->X * pl->Y;
	wl->nchunks = wl->nblocks * pl->Z;
	wl->lookahead = pl->lookahead;
	wl->throttled = 1;
	in->pinned_k = pinned_k(in->r);
	in->serpentine = serpentine(in->r);
	wl->holds = in->pinned_k >= 0;
	wl->mixed_shapes = !one_size(in->r->row_off, in->r->mt) ||
			   !one_size(in->r->col_off, in->r->nt) || !one_size(in->r->k_off, in->r->kt);
	wl->need_bytes = pl->tiles_needed * in->r->tile_bytes;
	wl->budget_bytes = pl->capacity * in->r->tile_bytes;
	wl->chunks = calloc((size_t)wl->nchunks, sizeof(*wl->chunks));
	wl->blocks = calloc((size_t)wl->nblocks, sizeof(*wl->blocks));
	if (!wl->chunks || !wl->blocks ||
	    alloc_block(&in->blk, pl->b * in->r->c.grid.P, pl->c * in->r->c.grid.Q))
		return -ENOMEM;
	for (int64_t id = 0; id < wl->nblocks; id++)
		if ((ret = inspect_block(in, id, &n)))
			return ret;
	return mark_kept(in->r, wl);
}

int stargemm__in_core_by_rows(const struct inspector *in)
{
	return in->ccol->maxlocal < in->r->ndevices && in->crow->maxlocal > in->ccol->maxlocal;
}

/* In core: one block -1 chunk of every product, k outer, devices by local column (a
 * tile of op(B) goes to one device, op(A)'s to each), or by local row when the
 * columns are too few (stargemm__in_core_by_rows()). Only the present tiles of op(A)'s
 * column k and op(B)'s row k are visited. */
static int inspect_in_core(struct inspector *in)
{
	const struct stargemm__request *r = in->r;
	struct stargemm__worklist *wl = in->bd.wl;
	int64_t *start = NULL, *rows = NULL;
	int ret = 0, by_rows = stargemm__in_core_by_rows(in);

	wl->nblocks = 0;
	wl->nchunks = 1;
	wl->chunks = calloc(1, sizeof(*wl->chunks));
	if (!wl->chunks)
		return -ENOMEM;
	wl->chunks[0].block = -1;
	if (r->c.pack)   /* listed by pack, as batches (stargemm__rebatch()) */
		return 0;
	if (stargemm__operand_columns(&r->a, r->mt, r->kt, &start, &rows))
		return -ENOMEM;
	for (int64_t k = 0; k < r->kt && !ret; k++)
		for (int64_t j = 0; j < r->nt && !ret; j++) {
			if (!stargemm__operand_present(&r->b, k, j))
				continue;
			for (int64_t e = start[k]; e < start[k + 1] && !ret; e++) {
				int64_t i = rows[e];
				int64_t l = by_rows ? in->crow->local[i] : in->ccol->local[j];

				ret = stargemm__add_product(&in->bd, i, j, k,
						  stargemm__is_local(r, i, j)
							  ? (int)(l % r->ndevices)
							  : -1,
						  STARGEMM_PREFETCH_READY, -1, 0);
			}
		}
	free(start);
	free(rows);
	wl->chunks[0].count = wl->nproducts;
	return ret;
}

void stargemm__worklist_geometry(const struct stargemm__request *r,
				 struct stargemm__worklist *wl)
{
	const struct stargemm__operand *x[3] = { &r->a, &r->b, &r->c };
	struct stargemm__batch_geometry *g = &wl->geometry;

	g->row_off = r->row_off;
	g->col_off = r->col_off;
	g->k_off = r->k_off;
	g->one_kernel = r->one_kernel;
	g->a_tile_max = stargemm__largest_tile(r->row_off, r->mt) *
			stargemm__largest_tile(r->k_off, r->kt);
	for (int o = 0; o < 3; o++) {
		g->offset[o] = x[o]->pack ? x[o]->pack->offset : NULL;
		g->ld[o] = x[o]->ld;
		g->trans[o] = x[o]->trans;
	}
}

/* Whether C pack (I, J) has a present tile that no product updates. */
static int pack_has_idle_tile(const struct inspector *in, int64_t I, int64_t J)
{
	const struct stargemm__request *r = in->r;
	const struct stargemm__packing *pk = r->c.pack;

	for (int64_t j = pk->col_first[J]; j < pk->col_first[J + 1]; j++)
		for (int64_t i = pk->row_first[I]; i < pk->row_first[I + 1]; i++)
			if (stargemm__operand_present(&r->c, i, j) && !in->bd.started[i + j * r->mt])
				return 1;
	return 0;
}

/* In core with C packed (one batch per C pack, stargemm__inspect_packed()): a C pack with a
 * present tile that no product updates is scaled first, and none of its products
 * applies beta; in the other packs every tile's chain applies beta at its first
 * update, so that with beta = 0 (a symbolic C) no pack is zeroed before its products
 * overwrite it. */
static int add_pack_scales(struct inspector *in)
{
	const struct stargemm__packing *pk = in->r->c.pack;
	struct stargemm__worklist *wl = in->bd.wl;
	uint8_t *scaled = calloc((size_t)(pk->gmt * pk->gnt > 0 ? pk->gmt * pk->gnt : 1), 1);

	if (!scaled)
		return -ENOMEM;
	for (int64_t J = 0; J < pk->gnt; J++)
		for (int64_t I = 0; I < pk->gmt; I++) {
			if (!pack_has_idle_tile(in, I, J))
				continue;
			scaled[I + J * pk->gmt] = 1;
			if (stargemm__add_ref(&in->bd, STARGEMM_OP_C, I, J, 0, 0)) {
				free(scaled);
				return -ENOMEM;
			}
		}
	wl->scale_count = wl->nrefs - wl->scale_first;
	for (int64_t p = 0; p < wl->nproducts; p++) {
		struct stargemm__product *x = &wl->products[p];

		if (scaled[pk->row_group[x->i] + pk->col_group[x->j] * pk->gmt])
			x->first = 0;
	}
	/* one batch per C pack: each opens its pack, unless the pack is scaled first */
	for (int64_t b = 0; b < wl->nbatches; b++) {
		const struct stargemm__product *x = &wl->products[wl->batches[b].first];

		wl->batches[b].opens_c =
			wl->batches[b].count > 0 &&
			!scaled[pk->row_group[x->i] + pk->col_group[x->j] * pk->gmt];
	}
	free(scaled);
	return 0;
}

/* C tiles that exist but that no product updates: beta is applied to them alone. */
static int add_scales(struct inspector *in)
{
	const struct stargemm__request *r = in->r;
	struct stargemm__worklist *wl = in->bd.wl;

	wl->scale_first = wl->nrefs;
	if (r->c.pack)
		return add_pack_scales(in);
	for (int64_t j = 0; j < r->nt; j++)
		for (int64_t i = 0; i < r->mt; i++)
			if (stargemm__operand_present(&r->c, i, j) && !in->bd.started[i + j * r->mt] &&
			    stargemm__add_ref(&in->bd, STARGEMM_OP_C, i, j, 0, 0))
				return -ENOMEM;
	wl->scale_count = wl->nrefs - wl->scale_first;
	return 0;
}

/* C's distribution for the inspector: the request's axes, or cyclic ones over its
 * grid where the request has none. */
static int c_axes(const struct stargemm__request *r, struct inspector *in)
{
	const struct stargemm__axis *rows = r->c.rows, *cols = r->c.cols;
	int ret = 0;

	if ((rows && (rows->n != r->mt || rows->nproc != r->c.grid.P)) ||
	    (cols && (cols->n != r->nt || cols->nproc != r->c.grid.Q)))
		return stargemm__error(-EINVAL, "stargemm: C's distribution does not match its "
				       "%" PRId64 " x %" PRId64 " tiles on a %d x %d grid", r->mt,
				       r->nt, r->c.grid.P, r->c.grid.Q);
	if (!rows)
		ret = stargemm__axis_init(&in->own_rows, r->mt, r->c.grid.P, NULL, "rows");
	if (!cols && !ret)
		ret = stargemm__axis_init(&in->own_cols, r->nt, r->c.grid.Q, NULL, "cols");
	in->crow = rows ? rows : &in->own_rows;
	in->ccol = cols ? cols : &in->own_cols;
	return ret;
}

int stargemm__inspect(const struct stargemm__request *r,
			    struct stargemm__worklist *wl)
{
	struct inspector in = { .r = r, .plan = r->plan, .bd = { .wl = wl, .r = r } };
	int ret;

	memset(wl, 0, sizeof(*wl));
	wl->ndevices = r->ndevices;
	wl->gpus = r->gpus;
	if (r->ndevices < 1 || r->ndevices > STARGEMM_MAX_DEVICES)
		return stargemm__error(-EINVAL, "stargemm: %d devices per rank; between 1 and %d "
				       "are supported (STARGEMM_MAX_DEVICES)", r->ndevices,
				       STARGEMM_MAX_DEVICES);
	if ((ret = c_axes(r, &in)) == 0) {
		in.bd.started = calloc((size_t)(r->mt * r->nt), 1);
		ret = !in.bd.started ? -ENOMEM : r->plan ? inspect_ooc(&in) : inspect_in_core(&in);
	}
	if (ret == 0 && (r->a.pack || r->b.pack || r->c.pack) && r->plan)
		ret = stargemm__error(-ENOTSUP, "stargemm: packed operands (small tiles) are "
				      "planned over packs out of core (src/packlist.c), not "
				      "by the tile");
	if (ret == 0 && !r->plan)
		ret = stargemm__rebatch(&in);
	if (ret == 0 && r->plan && stargemm__ooc_batched(r, wl))
		ret = stargemm__batch_ooc(&in);
	if (ret == 0)
		ret = mark_last(r, wl);
	if (ret == 0 && !r->plan)
		wl->chunks[0].batch_count = wl->nbatches;
	stargemm__worklist_geometry(r, wl);
	stargemm__worklist_decide(r, wl);
	if (ret == 0)
		ret = add_scales(&in);
	free(in.bd.started);
	free_block(&in.blk);
	stargemm__axis_free(&in.own_rows);
	stargemm__axis_free(&in.own_cols);
	if (ret)
		stargemm__worklist_free(wl);
	if (ret == -ENOMEM)
		return stargemm__error(ret, "stargemm: out of memory for the work list (%" PRId64
				       " x %" PRId64 " x %" PRId64 " tiles)", r->mt, r->nt, r->kt);
	return ret;
}
