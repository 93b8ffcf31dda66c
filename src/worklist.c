/*
 * worklist.c — what a work list implies, independently of how it was built: the tile
 * loads each device makes if it runs the list (held against the planner's model in
 * tests/test_inspect.c), and freeing it.
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
