/*
 * worklist.c — what a work list implies, independently of how it was built: the tile
 * loads each device makes if it runs the list (held against the planner's model in
 * tests/test_inspect.c), the memory each device needs for it (what src/fit.c sizes
 * out-of-core plans by), and freeing it.
 *
 * Pure: no MPI, no StarPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "worklist.h"

/* Index spaces of a list's tiles, per device one after the other: op(A) (i, k), op(B)
 * (k, j), C (i, j); the tilings that size them (footprints only); and, per device and
 * tile, the last step (chunk or block) that counted it. */
struct tile_space {
	int64_t mt, nt, kt, na, nb, per;
	const int64_t *off[3];  /* C rows, C columns, inner dimension */
	size_t elem;
	const struct stargemm__request *r;  /* operands' tile sizes (elems), or NULL */
	int64_t *last;          /* G * per entries, INT64_MIN: never counted */
};

static int64_t a_index(const struct tile_space *s, int64_t i, int64_t k)
{
	return i + k * s->mt;
}

static int64_t b_index(const struct tile_space *s, int64_t k, int64_t j)
{
	return s->na + k + j * s->kt;
}

static int64_t c_index(const struct tile_space *s, int64_t i, int64_t j)
{
	return s->na + s->nb + i + j * s->mt;
}

/* Widen @p s's index spaces to tile (@p r, @p c) of @p operand: op(A), op(B) or C. */
static void widen(struct tile_space *s, int operand, int64_t r, int64_t c)
{
	int64_t *rows = operand == STARGEMM_OP_B ? &s->kt : &s->mt;
	int64_t *cols = operand == STARGEMM_OP_A ? &s->kt : &s->nt;

	*rows = r + 1 > *rows ? r + 1 : *rows;
	*cols = c + 1 > *cols ? c + 1 : *cols;
}

/* The index spaces of the tiles @p wl's products read (a block holds only tiles its
 * products read, src/inspect.c readers()), and @p s->last for its devices. Returns 0
 * or -ENOMEM. */
static int space_init(const struct stargemm__worklist *wl, struct tile_space *s)
{
	int64_t n;

	s->mt = s->nt = s->kt = 0;
	for (int64_t p = 0; p < wl->nproducts; p++) {
		const struct stargemm__product *x = &wl->products[p];

		widen(s, STARGEMM_OP_A, x->i, x->k);
		widen(s, STARGEMM_OP_B, x->k, x->j);
	}
	s->na = s->mt * s->kt;
	s->nb = s->kt * s->nt;
	s->per = s->na + s->nb + s->mt * s->nt;
	n = wl->ndevices * s->per;
	if (!(s->last = malloc((size_t)(n + 1) * sizeof(*s->last))))
		return -ENOMEM;
	for (int64_t t = 0; t < n; t++)
		s->last[t] = INT64_MIN;
	return 0;
}

/* Count a load of tile @p idx by a device whose last use of it is @p last[idx], at
 * step @p now: a load unless the previous use was at step now or now - @p gap. */
static void use(int64_t *last, int64_t idx, int64_t now, int64_t gap, double *loads)
{
	if (last[idx] != now && (gap == 0 || last[idx] != now - gap))
		*loads += 1.0;
	last[idx] = now;
}

int stargemm__worklist_loads(const struct stargemm__worklist *wl, int c_read, double *loads)
{
	struct tile_space s = { 0 };

	if (wl->units)
		return stargemm__worklist_loads(wl->units, c_read, loads);
	if (space_init(wl, &s))
		return -ENOMEM;
	memset(loads, 0, (size_t)wl->ndevices * sizeof(*loads));
	for (int64_t p = 0; p < wl->nproducts; p++) {
		const struct stargemm__product *x = &wl->products[p];
		int g = x->info.device;
		int64_t *last;

		if (g < 0)
			continue;
		last = s.last + g * s.per;
		/* A and B: kept from one chunk to the next; C: once per block. */
		use(last, a_index(&s, x->i, x->k), x->info.chunk, 1, &loads[g]);
		use(last, b_index(&s, x->k, x->j), x->info.chunk, 1, &loads[g]);
		if (c_read)
			use(last, c_index(&s, x->i, x->j), x->info.block, 0, &loads[g]);
	}
	free(s.last);
	return 0;
}

/* Bytes of tile (r, c) of op(X), operand @p o, whose rows and columns are cut at @p ro,
 * @p co: X's own count of its elements when the request gives one (a pack's present
 * tiles, src/packlist.c), else the rectangle. */
static int64_t tile_size(const struct tile_space *s, int o, const int64_t *ro,
			 const int64_t *co, int64_t r, int64_t c)
{
	const struct stargemm__operand *x = !s->r ? NULL : o == STARGEMM_OP_A ? &s->r->a
						    : o == STARGEMM_OP_B ? &s->r->b : &s->r->c;

	if (x && x->elems)
		return x->elems[x->trans ? c + r * x->ld : r + c * x->ld] * (int64_t)s->elem;
	return (ro[r + 1] - ro[r]) * (co[c + 1] - co[c]) * (int64_t)s->elem;
}

/* Where the footprint walk stands on one device: the bytes the current block keeps on
 * it (its C tiles and holds), and the most it needed. */
struct device_walk {
	int64_t block_bytes, peak;
};

/* Count tile @p idx of size @p bytes into @p sum unless @p last says it was counted
 * at @p stamp already. */
static void count_once(int64_t *last, int64_t idx, int64_t stamp, int64_t bytes, int64_t *sum)
{
	if (last[idx] != stamp) {
		last[idx] = stamp;
		*sum += bytes;
	}
}

/* The stamp of a tile held by block @p blk: counted with the block, not its chunks. */
static int64_t held_stamp(int64_t blk)
{
	return -2 - blk;
}

/* Count input tile @p idx into @p sum once per chunk @p n, unless its block holds it. */
static void count_input(int64_t *last, int64_t idx, int64_t n, int64_t blk, int64_t bytes,
			int64_t *sum)
{
	if (last[idx] != held_stamp(blk))
		count_once(last, idx, n, bytes, sum);
}

/* Bytes of the distinct op(A) and op(B) tiles each device reads in chunk @p n and its
 * block does not hold, into @p chunk (@p s->last: the chunk that last counted each
 * tile on each device). */
static void chunk_bytes(const struct stargemm__worklist *wl, int64_t n,
			const struct tile_space *s, int64_t *chunk)
{
	const struct stargemm__chunk *ch = &wl->chunks[n];

	for (int g = 0; g < wl->ndevices; g++)
		chunk[g] = 0;
	for (int64_t p = ch->first; p < ch->first + ch->count; p++) {
		const struct stargemm__product *x = &wl->products[p];
		int g = x->info.device;

		if (g < 0)
			continue;
		count_input(s->last + g * s->per, a_index(s, x->i, x->k), n, ch->block,
			    tile_size(s, STARGEMM_OP_A, s->off[0], s->off[2], x->i, x->k),
			    &chunk[g]);
		count_input(s->last + g * s->per, b_index(s, x->k, x->j), n, ch->block,
			    tile_size(s, STARGEMM_OP_B, s->off[2], s->off[1], x->k, x->j),
			    &chunk[g]);
	}
}

/* Bytes block @p blk keeps on each device for all its chunks: the C tiles its products
 * update there and the tiles it holds there. */
static void block_bytes(const struct stargemm__worklist *wl, int64_t blk,
			const struct tile_space *s, struct device_walk *dw)
{
	const struct stargemm__block *bk = &wl->blocks[blk];
	const struct stargemm__chunk *first = &wl->chunks[bk->first_chunk];
	const struct stargemm__chunk *end = &wl->chunks[bk->first_chunk + bk->nchunks - 1];

	for (int g = 0; g < wl->ndevices; g++)
		dw[g].block_bytes = 0;
	for (int64_t p = first->first; p < end->first + end->count; p++) {
		const struct stargemm__product *x = &wl->products[p];
		int g = x->info.device;

		if (g >= 0)
			count_once(s->last + g * s->per, c_index(s, x->i, x->j), blk,
				   tile_size(s, STARGEMM_OP_C, s->off[0], s->off[1], x->i, x->j),
				   &dw[g].block_bytes);
	}
	for (int64_t e = bk->hold_first; e < bk->hold_first + bk->hold_count; e++) {
		const struct stargemm__tile_ref *t = &wl->refs[e];
		int a = t->operand == STARGEMM_OP_A;
		int64_t idx = a ? a_index(s, t->r, t->c) : b_index(s, t->r, t->c);

		if (t->operand == STARGEMM_OP_C)
			continue;
		count_once(s->last + t->device * s->per, idx, held_stamp(blk),
			   tile_size(s, t->operand, a ? s->off[0] : s->off[2],
				     a ? s->off[2] : s->off[1], t->r, t->c),
			   &dw[t->device].block_bytes);
	}
}

/* The footprint walk of stargemm__worklist_footprint(), tiles sized by @p s. */
static int footprint(const struct stargemm__worklist *wl, const struct tile_space *s0,
		     int64_t *peak)
{
	struct tile_space s = *s0;
	int64_t span = wl->lookahead + 1, G = wl->ndevices, blk = -1, pos = 0;
	struct device_walk *dw = calloc((size_t)G, sizeof(*dw));
	int64_t *ring = calloc((size_t)(G * span), sizeof(*ring));
	int64_t *chunk = calloc((size_t)G, sizeof(*chunk));

	if (!dw || !ring || !chunk || space_init(wl, &s)) {
		free(dw);
		free(ring);
		free(chunk);
		return -ENOMEM;
	}
	for (int64_t n = 0; n < wl->nchunks; n++, pos = (pos + 1) % span) {
		if (wl->chunks[n].block != blk) {  /* a new block: nothing of the last one */
			blk = wl->chunks[n].block;
			memset(ring, 0, (size_t)(G * span) * sizeof(*ring));
			block_bytes(wl, blk, &s, dw);
		}
		chunk_bytes(wl, n, &s, chunk);
		for (int g = 0; g < G; g++) {
			int64_t sum = dw[g].block_bytes;

			ring[g * span + pos] = chunk[g];
			for (int64_t w = 0; w < span; w++)
				sum += ring[g * span + w];
			dw[g].peak = sum > dw[g].peak ? sum : dw[g].peak;
		}
	}
	for (int g = 0; g < G; g++)
		peak[g] = dw[g].peak;
	free(dw);
	free(ring);
	free(chunk);
	free(s.last);
	return 0;
}

int stargemm__worklist_footprint(const struct stargemm__worklist *wl, const int64_t *row_off,
				 const int64_t *col_off, const int64_t *k_off, size_t elem,
				 int64_t *peak)
{
	struct tile_space s = { .off = { row_off, col_off, k_off }, .elem = elem };

	return footprint(wl, &s, peak);
}

int stargemm__worklist_footprint_of(const struct stargemm__worklist *wl,
				    const struct stargemm__request *r, size_t elem, int64_t *peak)
{
	struct tile_space s = { .off = { r->row_off, r->col_off, r->k_off }, .elem = elem,
				.r = r };

	return footprint(wl, &s, peak);
}

void stargemm__worklist_free(struct stargemm__worklist *wl)
{
	if (!wl)
		return;
	if (wl->units) {
		stargemm__worklist_free(wl->units);
		free(wl->units);
	}
	free(wl->products);
	free(wl->chunks);
	free(wl->blocks);
	free(wl->refs);
	free(wl->batches);
	free(wl->slots);
	memset(wl, 0, sizeof(*wl));
}

int stargemm__grow(void **p, int64_t *cap, int64_t need, size_t size)
{
	int64_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (!(q = realloc(*p, (size_t)n * size)))
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

int64_t stargemm__first_at_least(const int64_t *v, int64_t lo, int64_t hi, int64_t key)
{
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int stargemm__worklist_opens_write(const struct stargemm__worklist *wl)
{
	return !(wl->gpus && wl->throttled);
}

/* A chunk's loads as fetches: on GPUs, when the tiles have many shapes, each a task of
 * one tile product. StarPU 1.3 gives a prefetch only a buffer that is free or that a
 * tile of the same shape released (datawizard/memalloc.c: a prefetch evicts nothing),
 * and keeps released tiles on the device until a fetch needs their room. With equal
 * tiles the next chunks' tiles take the buffers of the finished ones; with irregular
 * tiles their prefetches waited on a full device, and each chunk's tiles arrived as its
 * tasks started them, the GPU idle meanwhile; fetches evict the released tiles and
 * arrive ahead. Not with equal tiles, where the prefetches keep up and fetches evict
 * tiles the next tasks read, nor for batches, whose hundreds of buffers a fetch may not
 * find room for (src/execute.c, release_block()). One GPU per rank only: with two the
 * time was the same and the loads higher, fewer of them from the peer (doc/design.md,
 * Decisions, "A chunk's loads as fetches"). */
int stargemm__worklist_fetches_ahead(const struct stargemm__worklist *wl)
{
	return wl->gpus && wl->ndevices == 1 && wl->mixed_shapes && wl->nbatches == 0;
}

/* C tiles copied back by requests of their own, not only as idle requests, when an
 * operand is block-sparse: there the loads can keep the device busy all the time
 * (fewer products per tile loaded), the finished block's C tiles then stay, and the
 * next block's loads evict tiles its tasks are about to read. Dense products keep the
 * idle copies, which keep up and go faster. Batches copy back by fetch requests: StarPU
 * 1.3 serves a device's prefetch and idle requests only when none of its fetches has
 * just failed for want of memory, and a batch opening the next block needs hundreds of
 * buffers at once; behind its failing fetch, prefetched write-backs that would free the
 * memory waited for ever. Figures: doc/design.md, "Decisions".
 *
 * Early release: in a block-sparse block on GPUs a C tile's chain ends at its last k
 * with both inputs present, spread over the block's last chunks; the next block's first
 * chunks need that room. Dense chains all end in the last chunk; batches and lists
 * under a RAM budget release at the end of the block only.
 *
 * Reserve: with one C block on GPUs, the memory the plan does not use is kept from
 * StarPU's allocator for the call, which otherwise allocates a new buffer for every
 * copy until the device is full (allocations cost); not when C blocks change, since
 * the next block's C tiles are prefetched into the free memory. */
void stargemm__worklist_decide(const struct stargemm__request *r,
			       struct stargemm__worklist *wl)
{
	int sparse = r->a.present || r->b.present || r->c.present;

	wl->write_back = wl->nbatches > 0 ? STARGEMM__BACK_FETCH
			 : sparse        ? STARGEMM__BACK_PREFETCH
					 : STARGEMM__BACK_IDLE;
	wl->early_release = wl->gpus && sparse && wl->nbatches == 0;
	wl->reserve_unplanned = wl->gpus && wl->nblocks == 1;
}

int64_t stargemm__largest_tile(const int64_t *off, int64_t count)
{
	int64_t max = 0;

	for (int64_t i = 0; i < count; i++)
		if (off[i + 1] - off[i] > max)
			max = off[i + 1] - off[i];
	return max;
}
