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

/* Sizes of the tile index spaces the products use. */
static void extents(const struct stargemm__worklist *wl, int64_t *mt, int64_t *nt, int64_t *kt)
{
	*mt = *nt = *kt = 0;
	for (int64_t p = 0; p < wl->nproducts; p++) {
		const struct stargemm__product *x = &wl->products[p];

		*mt = x->i + 1 > *mt ? x->i + 1 : *mt;
		*nt = x->j + 1 > *nt ? x->j + 1 : *nt;
		*kt = x->k + 1 > *kt ? x->k + 1 : *kt;
	}
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
	int64_t mt, nt, kt, na, nb, nc, G = wl->ndevices;
	int64_t *last;

	extents(wl, &mt, &nt, &kt);
	na = mt * kt;
	nb = kt * nt;
	nc = mt * nt;
	last = malloc((size_t)(G * (na + nb + nc) + 1) * sizeof(*last));
	if (!last)
		return -ENOMEM;
	for (int64_t t = 0; t < G * (na + nb + nc); t++)
		last[t] = -2;
	memset(loads, 0, (size_t)G * sizeof(*loads));
	for (int64_t p = 0; p < wl->nproducts; p++) {
		const struct stargemm__product *x = &wl->products[p];
		int g = x->info.device;
		int64_t *base = last + g * (na + nb + nc);

		if (g < 0)
			continue;
		/* A and B: kept from one chunk to the next; C: once per block. */
		use(base, x->i + x->k * mt, x->info.chunk, 1, &loads[g]);
		use(base + na, x->k + x->j * kt, x->info.chunk, 1, &loads[g]);
		if (c_read)
			use(base + na + nb, x->i + x->j * mt, x->info.block, 0, &loads[g]);
	}
	free(last);
	return 0;
}

/* Bytes of tile (r, c) of an operand whose rows and columns are cut at @p ro, @p co. */
static int64_t tile_size(const int64_t *ro, const int64_t *co, int64_t r, int64_t c,
			 size_t elem)
{
	return (ro[r + 1] - ro[r]) * (co[c + 1] - co[c]) * (int64_t)elem;
}

/* Where the footprint walk stands on one device: the bytes the current block keeps on
 * it (its C tiles and holds), and the most it needed. */
struct device_walk {
	int64_t block_bytes, peak;
};

/* Index spaces of a list's tiles: op(A) (i, k), op(B) (k, j), C (i, j), one after the
 * other, and the tilings that size them. */
struct tile_space {
	int64_t mt, nt, kt, na, nb, per;
	const int64_t *off[3];  /* C rows, C columns, inner dimension */
	size_t elem;
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
 * block does not hold, into @p chunk. @p last holds, per device, the last chunk that
 * counted each tile. */
static void chunk_bytes(const struct stargemm__worklist *wl, int64_t n,
			const struct tile_space *s, int64_t *last, int64_t *chunk)
{
	const struct stargemm__chunk *ch = &wl->chunks[n];

	for (int g = 0; g < wl->ndevices; g++)
		chunk[g] = 0;
	for (int64_t p = ch->first; p < ch->first + ch->count; p++) {
		const struct stargemm__product *x = &wl->products[p];
		int g = x->info.device;

		if (g < 0)
			continue;
		count_input(last + g * s->per, x->i + x->k * s->mt, n, ch->block,
			    tile_size(s->off[0], s->off[2], x->i, x->k, s->elem), &chunk[g]);
		count_input(last + g * s->per, s->na + x->k + x->j * s->kt, n, ch->block,
			    tile_size(s->off[2], s->off[1], x->k, x->j, s->elem), &chunk[g]);
	}
}

/* Bytes block @p blk keeps on each device for all its chunks: the C tiles its products
 * update there and the tiles it holds there. */
static void block_bytes(const struct stargemm__worklist *wl, int64_t blk,
			const struct tile_space *s, int64_t *last, struct device_walk *dw)
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
			count_once(last + g * s->per, s->na + s->nb + x->i + x->j * s->mt, blk,
				   tile_size(s->off[0], s->off[1], x->i, x->j, s->elem),
				   &dw[g].block_bytes);
	}
	for (int64_t e = bk->hold_first; e < bk->hold_first + bk->hold_count; e++) {
		const struct stargemm__tile_ref *t = &wl->refs[e];
		int a = t->operand == STARGEMM_OP_A;
		int64_t idx = a ? t->r + t->c * s->mt : s->na + t->r + t->c * s->kt;

		if (t->operand == STARGEMM_OP_C)
			continue;
		count_once(last + t->device * s->per, idx, held_stamp(blk),
			   tile_size(a ? s->off[0] : s->off[2], a ? s->off[2] : s->off[1], t->r,
				     t->c, s->elem),
			   &dw[t->device].block_bytes);
	}
}

/* Widen @p s's index spaces to the tiles the blocks hold (a block may hold a tile no
 * product of the list reads). */
static void hold_extents(const struct stargemm__worklist *wl, struct tile_space *s)
{
	for (int64_t b = 0; b < wl->nblocks; b++)
		for (int64_t e = wl->blocks[b].hold_first;
		     e < wl->blocks[b].hold_first + wl->blocks[b].hold_count; e++) {
			const struct stargemm__tile_ref *t = &wl->refs[e];
			int64_t *rows = t->operand == STARGEMM_OP_B ? &s->kt : &s->mt;
			int64_t *cols = t->operand == STARGEMM_OP_A ? &s->kt : &s->nt;

			*rows = t->r + 1 > *rows ? t->r + 1 : *rows;
			*cols = t->c + 1 > *cols ? t->c + 1 : *cols;
		}
}

int stargemm__worklist_footprint(const struct stargemm__worklist *wl, const int64_t *row_off,
				 const int64_t *col_off, const int64_t *k_off, size_t elem,
				 int64_t *peak)
{
	struct tile_space s = { .off = { row_off, col_off, k_off }, .elem = elem };
	int64_t span = wl->lookahead + 1, G = wl->ndevices, blk = -1, pos = 0;
	struct device_walk *dw = calloc((size_t)G, sizeof(*dw));
	int64_t *ring = calloc((size_t)(G * span), sizeof(*ring));
	int64_t *chunk = calloc((size_t)G, sizeof(*chunk)), *last;

	extents(wl, &s.mt, &s.nt, &s.kt);
	hold_extents(wl, &s);
	s.na = s.mt * s.kt;
	s.nb = s.kt * s.nt;
	s.per = s.na + s.nb + s.mt * s.nt;
	last = malloc((size_t)(G * s.per + 1) * sizeof(*last));
	if (!dw || !ring || !chunk || !last) {
		free(dw);
		free(ring);
		free(chunk);
		free(last);
		return -ENOMEM;
	}
	for (int64_t t = 0; t < G * s.per; t++)
		last[t] = INT64_MIN;
	for (int64_t n = 0; n < wl->nchunks; n++, pos = (pos + 1) % span) {
		if (wl->chunks[n].block != blk) {  /* a new block: nothing of the last one */
			blk = wl->chunks[n].block;
			memset(ring, 0, (size_t)(G * span) * sizeof(*ring));
			block_bytes(wl, blk, &s, last, dw);
		}
		chunk_bytes(wl, n, &s, last, chunk);
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
	free(last);
	return 0;
}

void stargemm__worklist_free(struct stargemm__worklist *wl)
{
	if (!wl)
		return;
	free(wl->products);
	free(wl->chunks);
	free(wl->blocks);
	free(wl->refs);
	free(wl->batches);
	free(wl->slots);
	memset(wl, 0, sizeof(*wl));
}
