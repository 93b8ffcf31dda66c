/*
 * storage.c — what a rank's managed storage (the RAM budget, and the disk node behind
 * it) can hold, held against what its matrices and products put in it.
 *
 * With a RAM budget (stargemm_config.ram_limit_mib or STARPU_LIMIT_CPU_MEM) StarPU
 * allocates the tiles itself and, with a disk node, evicts them to disk. When the data
 * outgrows RAM and disk together, StarPU 1.3 does not fail: the allocation that finds
 * no room waits for an eviction that can never come, and the program hangs (a product
 * of three 32 MiB matrices with 24 MiB of RAM and a 16 MiB disk waited forever). So the
 * library keeps the sum of the tiles its live matrices own on this rank, refuses a
 * matrix that would not fit, and refuses a product whose received tiles would not fit
 * beside them, with the numbers, before StarPU is asked for anything.
 *
 * The count is of stargemm's matrices only, and of each tile's elements: an
 * application that registers data of its own in the same budget must leave room.
 *
 * Without managed storage StarPU may still have a budget: with GPUs stargemm_init()
 * sets one, this rank's share of the machine (src/runtime.c, keep_host_buffers()), or
 * the user set STARPU_LIMIT_CPU_MEM. The matrices' tiles are then stargemm's, outside
 * it, but the buffers of received tiles are StarPU's, inside: a product whose received
 * tiles would not fit in it alone would wait forever the same way, and is refused.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"
#include "worklist.h"

static int64_t live_bytes;   /* tiles this rank's live matrices own */

void stargemm__storage_reset(void)
{
	live_bytes = 0;
}

/* Bytes of the disk nodes (0: none). */
static int64_t disk_bytes(void)
{
	int64_t total = 0;

	for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++)
		if (starpu_node_get_kind(node) == STARPU_DISK_RAM)
			total += (int64_t)starpu_memory_get_total(node);
	return total;
}

/* Refuse @p need bytes of received tiles in StarPU's host budget alone (no managed
 * storage), with the numbers. */
static int too_much_received(int64_t need, int64_t budget, const char *fn)
{
	const double mib = 1024.0 * 1024.0;

	return stargemm__error(-ENOMEM, "%s: rank %d would hold %.1f MiB of tiles received "
			       "from other ranks at once, more than StarPU's host budget of "
			       "%.1f MiB (STARPU_LIMIT_CPU_MEM: with GPUs and no ram_limit_mib, "
			       "this rank's share of the machine's memory); StarPU would wait "
			       "for room forever: use fewer ranks per node, or a smaller "
			       "lookahead or block", fn, stargemm_rank(), (double)need / mib,
			       (double)budget / mib);
}

/* Refuse @p need bytes in the managed storage, with the numbers. */
static int too_much(int64_t need, const char *fn, const char *what)
{
	int64_t ram = (int64_t)starpu_memory_get_total(STARPU_MAIN_RAM), disk = disk_bytes();
	const double mib = 1024.0 * 1024.0;

	return stargemm__error(-ENOMEM, "%s: rank %d would hold %.1f MiB of tiles (%s), more "
			       "than its storage: a RAM budget of %.1f MiB (ram_limit_mib) and "
			       "%.1f MiB of disk node (disk_mib); StarPU would wait for room "
			       "forever", fn, stargemm_rank(), (double)need / mib, what,
			       (double)ram / mib, (double)disk / mib);
}

/* Room in the managed storage: -1 when there is no bound (no managed storage, or
 * StarPU reports no RAM size). */
static int64_t capacity(void)
{
	starpu_ssize_t ram;

	if (!stargemm__managed_storage())
		return -1;
	ram = starpu_memory_get_total(STARPU_MAIN_RAM);
	return ram < 0 ? -1 : (int64_t)ram + disk_bytes();
}

int stargemm__storage_reserve(int64_t bytes, const char *fn)
{
	int64_t cap = capacity();

	if (cap >= 0 && live_bytes + bytes > cap)
		return too_much(live_bytes + bytes, fn, "the matrices' own tiles");
	live_bytes += bytes;
	return 0;
}

void stargemm__storage_release(int64_t bytes)
{
	live_bytes -= bytes;
}

/* Sort keys (tile coordinates packed into one integer). */
static int compare_keys(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The key of tile (r, c) of op(X), which has @p rows tile rows: the tile's index in
 * op(X), or for a packed X its pack's index in X (src/pack.c). */
static int64_t unit_key(const struct stargemm__operand *x, int64_t rows, int64_t r, int64_t c)
{
	const struct stargemm__packing *pk = x->pack;

	if (pk)
		return x->trans ? pk->row_group[c] + pk->col_group[r] * pk->gmt
				: pk->row_group[r] + pk->col_group[c] * pk->gmt;
	return r + c * rows;
}

/* Elements of the unit of op(X) of key @p key (unit_key()); tiles of op(X) are cut at
 * @p ro (rows) and @p co (columns), @p rows of them per column. */
static int64_t unit_elems(const struct stargemm__operand *x, int64_t key, int64_t rows,
			  const int64_t *ro, const int64_t *co)
{
	int64_t r = key % rows, c = key / rows;

	if (x->pack)
		return x->pack->elems[key];
	return (ro[r + 1] - ro[r]) * (co[c + 1] - co[c]);
}

/* Bytes of the distinct units (tiles, or packs) of other ranks that products
 * [first, first + count) of this rank read; @p keys has room for 2 * count. */
static int64_t received_bytes(const struct stargemm__worklist *wl,
			      const struct stargemm__request *r, size_t elem, int64_t first,
			      int64_t count, int64_t *keys)
{
	int64_t n = 0, bytes = 0;

	for (int64_t p = first; p < first + count; p++) {
		const struct stargemm__product *x = &wl->products[p];

		if (x->info.device < 0)
			continue;
		if (stargemm__operand_owner(&r->a, x->i, x->k) != r->me)
			keys[n++] = 2 * unit_key(&r->a, r->mt, x->i, x->k);
		if (stargemm__operand_owner(&r->b, x->k, x->j) != r->me)
			keys[n++] = 2 * unit_key(&r->b, r->kt, x->k, x->j) + 1;
	}
	qsort(keys, (size_t)n, sizeof(*keys), compare_keys);
	for (int64_t e = 0; e < n; e++) {
		if (e > 0 && keys[e] == keys[e - 1])
			continue;
		bytes += (int64_t)elem *
			 (keys[e] % 2 == 0
				  ? unit_elems(&r->a, keys[e] / 2, r->mt, r->row_off, r->k_off)
				  : unit_elems(&r->b, keys[e] / 2, r->kt, r->k_off, r->col_off));
	}
	return bytes;
}

int stargemm__storage_check_list(const struct stargemm__worklist *wl,
				 const struct stargemm__request *r, size_t elem, const char *fn)
{
	int64_t cap = capacity(), window, most = 0, sum = 0, longest = 0, *keys, *per;
	starpu_ssize_t budget = stargemm__managed_storage() ? -1 :
				starpu_memory_get_total(STARPU_MAIN_RAM);

	if ((cap < 0 && budget < 0) || wl->nproducts == 0)
		return 0;
	/* In core every received tile stays until the end; out of core chunk n is
	 * inserted once chunk n - (lookahead + 1) is done and its inputs let go, so at
	 * most lookahead + 2 chunks' received tiles coexist. */
	window = wl->throttled ? wl->lookahead + 2 : wl->nchunks;
	for (int64_t n = 0; n < wl->nchunks; n++)
		longest = wl->chunks[n].count > longest ? wl->chunks[n].count : longest;
	keys = malloc((size_t)(2 * longest) * sizeof(*keys));
	per = malloc((size_t)wl->nchunks * sizeof(*per));
	if (!keys || !per) {
		free(keys);
		free(per);
		return stargemm__error(-ENOMEM, "%s: out of memory", fn);
	}
	for (int64_t n = 0; n < wl->nchunks; n++) {
		per[n] = received_bytes(wl, r, elem, wl->chunks[n].first, wl->chunks[n].count,
					keys);
		sum += per[n] - (n >= window ? per[n - window] : 0);
		most = sum > most ? sum : most;
	}
	free(keys);
	free(per);
	if (budget >= 0)
		return most > (int64_t)budget ? too_much_received(most, (int64_t)budget, fn) : 0;
	if (live_bytes + most > cap)
		return too_much(live_bytes + most, fn, "the matrices' own and the tiles the "
				"product receives from other ranks");
	return 0;
}
