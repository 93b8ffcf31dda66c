/*
 * tests/test_inspect.c — unit tests of the inspector (src/inspect.c) and of what a work
 * list implies (src/worklist.c): no MPI, no StarPU run. TAP output.
 *
 * Properties checked on dense problems (regular, ragged and irregular tilings; 1-6
 * devices; several ranks of 1x1, 2x1, 1x2 and 2x3 grids):
 *  - every C tile gets its kt updates once each, in increasing k, all on one device of
 *    its owner (a chain stays on one device), and no product of another rank's tile
 *    has a device;
 *  - every rank lists the same products in the same order (StarPU-MPI's requirement);
 *  - chunks hold at most d k steps of one block; blocks run y outer, x inner;
 *  - per device, a block's C tiles plus the inputs of lookahead + 1 chunks never exceed
 *    the plan's tiles_needed (the memory the planner checked);
 *  - the list's loads per device, averaged, equal the planner's Eq. (1) prediction
 *    when tiles are equal;
 *  - a chunk's release list names every input it reads, and "keep" exactly when a chunk
 *    of the lookahead window reads the tile again;
 *  - a ragged last K tile is held (class HELD, never prefetched, in the block's holds);
 *  - the in-core list is one unthrottled chunk, k outer;
 *  - the devices of a block get the same area of C within a column and a tile (whole
 *    columns are dealt by count, split ones by area);
 *  - a grid whose ranks are in another order (column-major) only renames the ranks:
 *    the same lists, devices included; a map that is not a permutation is refused;
 *  - block-sparse operands: exactly the products whose three tiles exist, beta on the
 *    first of each chain, a scaling for C tiles without a product, no reference to an
 *    absent tile; out of core on GPUs a serpentine walk (consecutive blocks share
 *    rows or columns, k alternates up and down, the shared tiles kept across a block
 *    change), each chain's last product flagged;
 *  - small tiles in core: batches cover the same products, write one rank's C tiles
 *    each, and name each product's tiles;
 *  - small tiles out of core: each chunk's products (the unbatched chunk's, chains in
 *    their k order) as consecutive batches of one rank's device each, writing distinct
 *    C tiles, the same on every rank, with the unbatched list's devices and loads;
 *  - packed operands (src/pack.c): layouts hold each present tile once; batches cover
 *    the same products, write one C pack each and name the products' packs;
 *  - packed operands out of core (src/packlist.c): the problem over packs, its list
 *    expanded into one batch per C pack and chunk, chunks, chains, scales and loads;
 *  - the batch that opens each C pack (in core its one batch, out of core the first
 *    over it; none for a pack scaled first), written only on the CPU;
 *  - the CPU kernel choice from the tilings' shapes (src/product.c), and a bad
 *    STARGEMM_XSMM_SHAPES refused.
 *  - the footprint of a list (bytes a device needs) is the window's distinct tiles
 *    times their size; the plan fitted to a list (src/fit.c) is the dense one for equal
 *    dense tiles or when it would load no fewer tiles, and with irregular block-sparse
 *    tiles fills the device better, never beyond it (nor beyond another rank's
 *    footprint), loading fewer tiles.
 * It also prints the inspector's cost for about 10^6 tile products.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "worklist.h"
#include "tap.h"



/* A dense problem: tilings and grid, and the plan for one rank. */
struct problem {
	int64_t mt, nt, kt;
	int64_t *row_off, *col_off, *k_off;
	int P, Q, G;
	struct stargemm_plan plan;
};

static int64_t *regular(int64_t n, int64_t t, int64_t *count)
{
	int64_t c = (n + t - 1) / t, *off = malloc((size_t)(c + 1) * sizeof(*off));

	for (int64_t i = 0; i <= c; i++)
		off[i] = i * t < n ? i * t : n;
	*count = c;
	return off;
}

/* Irregular: sizes cycling through @p sizes. */
static int64_t *irregular(int64_t count, const int64_t *sizes, int nsizes)
{
	int64_t *off = malloc((size_t)(count + 1) * sizeof(*off));

	off[0] = 0;
	for (int64_t i = 0; i < count; i++)
		off[i + 1] = off[i] + sizes[i % nsizes];
	return off;
}

static int make_plan(struct problem *p, int64_t device_tiles, int64_t b, int64_t c,
		     int64_t d)
{
	struct stargemm_plan_request r = { 0 };

	r.mt = p->mt;
	r.nt = p->nt;
	r.kt = p->kt;
	r.tile_bytes = 8;
	r.P = p->P;
	r.Q = p->Q;
	r.devices = p->G;
	r.device_bytes = device_tiles * 8;
	r.b = b;
	r.c = c;
	r.d = d;
	return stargemm_plan_compute(&r, &p->plan);
}

static void request(const struct problem *p, int me, int gpus, int ta, int tb, int ooc,
		    struct stargemm__request *r)
{
	*r = (struct stargemm__request){ 0 };
	r->mt = p->mt;
	r->nt = p->nt;
	r->kt = p->kt;
	r->row_off = p->row_off;
	r->col_off = p->col_off;
	r->k_off = p->k_off;
	r->a = (struct stargemm__operand){ .grid = { .P = p->P, .Q = p->Q }, .trans = ta };
	r->b = (struct stargemm__operand){ .grid = { .P = p->P, .Q = p->Q }, .trans = tb };
	r->c = (struct stargemm__operand){ .grid = { .P = p->P, .Q = p->Q } };
	r->me = me;
	r->ndevices = p->G;
	r->gpus = gpus;
	r->prefetch_received = gpus;
	r->plan = ooc ? &p->plan : NULL;
	r->tile_bytes = 8;
}

static void free_problem(struct problem *p)
{
	free(p->row_off);
	free(p->col_off);
	free(p->k_off);
}

/* ---- properties ----------------------------------------------------------------- */

/* Chains: kt updates per C tile, k increasing, one device, on the owner only. */
static int check_chains(const struct problem *p, const struct stargemm__request *r,
			const struct stargemm__worklist *wl, char *why, size_t len)
{
	int64_t ntiles = p->mt * p->nt;
	int64_t *next_k = calloc((size_t)ntiles, sizeof(*next_k));
	int *dev = malloc((size_t)ntiles * sizeof(*dev));
	int good = 1;

	for (int64_t t = 0; t < ntiles; t++)
		dev[t] = -2;
	for (int64_t q = 0; q < wl->nproducts && good; q++) {
		const struct stargemm__product *x = &wl->products[q];
		int64_t t = x->i + x->j * p->mt;
		int local = stargemm__operand_owner(&r->c, x->i, x->j) == r->me;

		if (x->k != next_k[t]) {
			snprintf(why, len, "C(%lld,%lld): k=%lld, expected %lld", (long long)x->i,
				 (long long)x->j, (long long)x->k, (long long)next_k[t]);
			good = 0;
		} else if (local != (x->info.device >= 0) || x->info.device >= p->G) {
			snprintf(why, len, "C(%lld,%lld): device %d, local %d", (long long)x->i,
				 (long long)x->j, x->info.device, local);
			good = 0;
		} else if (dev[t] != -2 && dev[t] != x->info.device) {
			snprintf(why, len, "C(%lld,%lld) moves from device %d to %d", (long long)x->i,
				 (long long)x->j, dev[t], x->info.device);
			good = 0;
		}
		dev[t] = x->info.device;
		next_k[t]++;
	}
	for (int64_t t = 0; t < ntiles && good; t++)
		if (next_k[t] != p->kt) {
			snprintf(why, len, "tile %lld gets %lld updates, not %lld", (long long)t,
				 (long long)next_k[t], (long long)p->kt);
			good = 0;
		}
	free(next_k);
	free(dev);
	return good;
}

/* Chunks: contiguous, one block each, at most d k steps, blocks in order. */
static int check_chunks(const struct problem *p, const struct stargemm__worklist *wl,
			char *why, size_t len)
{
	int64_t expect = 0;

	for (int64_t n = 0; n < wl->nchunks; n++) {
		const struct stargemm__chunk *ch = &wl->chunks[n];
		int64_t kmin = INT64_MAX, kmax = -1;

		if (ch->first != expect || ch->block != n / p->plan.Z) {
			snprintf(why, len, "chunk %lld: first %lld (expected %lld), block %lld",
				 (long long)n, (long long)ch->first, (long long)expect,
				 (long long)ch->block);
			return 0;
		}
		for (int64_t q = ch->first; q < ch->first + ch->count; q++) {
			const struct stargemm__product *x = &wl->products[q];

			kmin = x->k < kmin ? x->k : kmin;
			kmax = x->k > kmax ? x->k : kmax;
			if (x->info.chunk != n || x->info.block != ch->block) {
				snprintf(why, len, "product %lld: chunk %lld block %lld in chunk %lld",
					 (long long)q, (long long)x->info.chunk,
					 (long long)x->info.block, (long long)n);
				return 0;
			}
		}
		if (kmax - kmin + 1 > p->plan.d) {
			snprintf(why, len, "chunk %lld spans k %lld..%lld, d = %lld", (long long)n,
				 (long long)kmin, (long long)kmax, (long long)p->plan.d);
			return 0;
		}
		expect += ch->count;
	}
	if (expect != wl->nproducts) {
		snprintf(why, len, "chunks cover %lld of %lld products", (long long)expect,
			 (long long)wl->nproducts);
		return 0;
	}
	return 1;
}

/* Distinct tiles a device reads in chunks [n0, n1] (inputs) or holds in block (C). */
static int64_t device_tiles(const struct problem *p, const struct stargemm__worklist *wl,
			    int g, int64_t n0, int64_t n1, char *seen)
{
	int64_t na = p->mt * p->kt, nb = p->kt * p->nt, count = 0;
	int64_t blk = wl->chunks[n1].block;
	const struct stargemm__block *bk = &wl->blocks[blk];

	memset(seen, 0, (size_t)(na + nb + p->mt * p->nt));
	/* The block's C tiles on g, from all its chunks. */
	for (int64_t n = bk->first_chunk; n < bk->first_chunk + bk->nchunks; n++)
		for (int64_t q = wl->chunks[n].first;
		     q < wl->chunks[n].first + wl->chunks[n].count; q++) {
			const struct stargemm__product *x = &wl->products[q];
			int64_t t = na + nb + x->i + x->j * p->mt;

			if (x->info.device == g && !seen[t]++)
				count++;
		}
	for (int64_t n = n0; n <= n1; n++)
		for (int64_t q = wl->chunks[n].first;
		     q < wl->chunks[n].first + wl->chunks[n].count; q++) {
			const struct stargemm__product *x = &wl->products[q];
			int64_t a = x->i + x->k * p->mt, b = na + x->k + x->j * p->kt;

			if (x->info.device != g)
				continue;
			count += !seen[a]++;
			count += !seen[b]++;
		}
	return count;
}

/* Footprint: per device, a block's C tiles + the inputs of the lookahead window. */
static int check_footprint(const struct problem *p, const struct stargemm__worklist *wl,
			   char *why, size_t len)
{
	char *seen = malloc((size_t)(p->mt * p->kt + p->kt * p->nt + p->mt * p->nt));
	int good = 1;

	for (int64_t n = 0; n < wl->nchunks && good; n++) {
		int64_t n0 = n - wl->lookahead;

		/* the window stays within a block: C blocks do not overlap on a device */
		while (n0 < 0 || wl->chunks[n0].block != wl->chunks[n].block)
			n0++;
		for (int g = 0; g < p->G && good; g++) {
			int64_t t = device_tiles(p, wl, g, n0, n, seen);

			if (t > p->plan.tiles_needed) {
				snprintf(why, len, "device %d at chunk %lld needs %lld tiles, plan "
					 "%lld", g, (long long)n, (long long)t,
					 (long long)p->plan.tiles_needed);
				good = 0;
			}
		}
	}
	free(seen);
	return good;
}

/* Releases: each chunk lists every input it reads; keep = read in the window. */
static int check_releases(const struct problem *p, const struct stargemm__worklist *wl,
			  char *why, size_t len)
{
	int64_t na = p->mt * p->kt, nb = p->kt * p->nt;
	char *listed = malloc((size_t)(na + nb));
	int good = 1;

	for (int64_t n = 0; n < wl->nchunks && good; n++) {
		const struct stargemm__chunk *ch = &wl->chunks[n];

		memset(listed, 0, (size_t)(na + nb));
		for (int64_t e = ch->release_first; e < ch->release_first + ch->release_count;
		     e++) {
			const struct stargemm__tile_ref *t = &wl->refs[e];
			int64_t idx = t->operand == STARGEMM_OP_A ? t->r + t->c * p->mt
								  : na + t->r + t->c * p->kt;
			int again = 0;

			listed[idx] = 1;
			for (int64_t m = n + 1; m <= n + wl->lookahead + 1 && m < wl->nchunks; m++)
				for (int64_t q = wl->chunks[m].first;
				     q < wl->chunks[m].first + wl->chunks[m].count && !again; q++) {
					const struct stargemm__product *x = &wl->products[q];

					again = t->operand == STARGEMM_OP_A
							? x->i == t->r && x->k == t->c
							: x->k == t->r && x->j == t->c;
				}
			if (again != t->keep) {
				snprintf(why, len, "chunk %lld: keep %d but read again %d",
					 (long long)n, t->keep, again);
				good = 0;
			}
		}
		for (int64_t q = ch->first; q < ch->first + ch->count && good; q++) {
			const struct stargemm__product *x = &wl->products[q];

			if (!listed[x->i + x->k * p->mt] || !listed[na + x->k + x->j * p->kt]) {
				snprintf(why, len, "chunk %lld reads an input it does not release",
					 (long long)n);
				good = 0;
			}
		}
	}
	free(listed);
	return good;
}

static int same_sequence(const struct stargemm__worklist *a, const struct stargemm__worklist *b)
{
	if (a->nproducts != b->nproducts || a->nchunks != b->nchunks)
		return 0;
	for (int64_t q = 0; q < a->nproducts; q++) {
		const struct stargemm__product *x = &a->products[q], *y = &b->products[q];

		if (x->i != y->i || x->j != y->j || x->k != y->k || x->info.block != y->info.block ||
		    x->info.chunk != y->info.chunk)
			return 0;
	}
	return 1;
}

/* ---- cases ---------------------------------------------------------------------- */

/* The list's decisions beyond its products (stargemm__worklist_decide()): how C
 * tiles go back, whether they go early, whether the unplanned memory is reserved. */
static void decisions(const char *label, const struct stargemm__worklist *wl,
		      enum stargemm__write_back back, int early, int reserve)
{
	char name[200], why[200];

	snprintf(name, sizeof(name), "%s: C back by %s, %s early release, %s reserve", label,
		 back == STARGEMM__BACK_FETCH ? "fetches" : back == STARGEMM__BACK_PREFETCH
		 ? "prefetches" : "idle copies", early ? "with" : "no", reserve ? "a" : "no");
	snprintf(why, sizeof(why), "list: write_back %d, early_release %d, reserve %d",
		 (int)wl->write_back, wl->early_release, wl->reserve_unplanned);
	tap_ok_detail(wl->write_back == back && wl->early_release == early &&
	   wl->reserve_unplanned == reserve, name, why);
}

/* Whether chunk @p n lists tile (r, c) of @p operand as received, for @p device (-1:
 * any device). */
static int listed_received(const struct stargemm__worklist *wl, int64_t n, int operand,
			   int64_t r, int64_t c, int device)
{
	const struct stargemm__chunk *ch = &wl->chunks[n];

	for (int64_t e = ch->prefetch_first; e < ch->prefetch_first + ch->prefetch_count; e++) {
		const struct stargemm__tile_ref *t = &wl->refs[e];

		if (t->received && t->operand == operand && t->r == r && t->c == c &&
		    (device < 0 || t->device == device))
			return 1;
	}
	return 0;
}

/* Tiles received over MPI (src/inspect.c, load()): with GPUs, every A and B tile that
 * a product of this rank reads in chunk n and another rank owns is listed received in
 * chunk n's prefetches (a B tile for the product's device, an A tile for one of its
 * readers'); every tile listed received is another rank's; none is held. */
static int check_received(const struct stargemm__request *r,
			  const struct stargemm__worklist *wl, char *why, size_t len)
{
	for (int64_t q = 0; q < wl->nproducts; q++) {
		const struct stargemm__product *x = &wl->products[q];

		if (x->info.device < 0)
			continue;
		if (stargemm__operand_owner(&r->a, x->i, x->k) != r->me &&
		    !listed_received(wl, x->info.chunk, STARGEMM_OP_A, x->i, x->k, -1)) {
			snprintf(why, len, "A(%lld,%lld) of chunk %lld not listed received",
				 (long long)x->i, (long long)x->k, (long long)x->info.chunk);
			return 0;
		}
		if (stargemm__operand_owner(&r->b, x->k, x->j) != r->me &&
		    !listed_received(wl, x->info.chunk, STARGEMM_OP_B, x->k, x->j,
				     x->info.device)) {
			snprintf(why, len, "B(%lld,%lld) of chunk %lld not listed received for "
				 "device %d", (long long)x->k, (long long)x->j,
				 (long long)x->info.chunk, x->info.device);
			return 0;
		}
	}
	for (int64_t e = 0; e < wl->nrefs; e++) {
		const struct stargemm__tile_ref *t = &wl->refs[e];
		const struct stargemm__operand *o = t->operand == STARGEMM_OP_A ? &r->a : &r->b;

		if (t->received && (t->operand == STARGEMM_OP_C ||
				    stargemm__operand_owner(o, t->r, t->c) == r->me)) {
			snprintf(why, len, "ref %lld listed received is this rank's", (long long)e);
			return 0;
		}
	}
	for (int64_t b = 0; b < wl->nblocks; b++)
		for (int64_t e = wl->blocks[b].hold_first;
		     e < wl->blocks[b].hold_first + wl->blocks[b].hold_count; e++)
			if (wl->refs[e].received) {
				snprintf(why, len, "a received tile held in block %lld", (long long)b);
				return 0;
			}
	return 1;
}

static void dense_case(const char *label, struct problem *p, int me, int ta, int tb,
		       int eq1)
{
	struct stargemm__request r;
	struct stargemm__worklist wl, w0;
	char name[200], why[200] = "";
	int ret;

	request(p, me, 1, ta, tb, 1, &r);
	ret = stargemm__inspect(&r, &wl);
	snprintf(name, sizeof(name), "%s rank %d: inspected (%lld products, %lld chunks)", label,
		 me, (long long)wl.nproducts, (long long)wl.nchunks);
	tap_ok_detail(ret == 0 && wl.nproducts == p->mt * p->nt * p->kt, name, "");
	if (ret)
		return;
	snprintf(name, sizeof(name), "%s rank %d: chains whole, on one device of the owner",
		 label, me);
	tap_ok_detail(check_chains(p, &r, &wl, why, sizeof(why)), name, why);
	snprintf(name, sizeof(name), "%s rank %d: chunks of one block, <= d k steps", label, me);
	tap_ok_detail(check_chunks(p, &wl, why, sizeof(why)), name, why);
	snprintf(name, sizeof(name), "%s rank %d: footprint within the plan's %lld tiles", label,
		 me, (long long)p->plan.tiles_needed);
	tap_ok_detail(check_footprint(p, &wl, why, sizeof(why)), name, why);
	snprintf(name, sizeof(name), "%s rank %d: release lists complete, keep = reread", label,
		 me);
	tap_ok_detail(check_releases(p, &wl, why, sizeof(why)), name, why);
	snprintf(name, sizeof(name), "%s rank %d (dense, GPUs)", label, me);
	decisions(name, &wl, STARGEMM__BACK_IDLE, 0, wl.nblocks == 1);
	if (p->P * p->Q > 1) {
		snprintf(name, sizeof(name), "%s rank %d: every tile received from another rank "
			 "is listed for its chunk as received, none held", label, me);
		tap_ok_detail(check_received(&r, &wl, why, sizeof(why)), name, why);
		r.prefetch_received = 0;
		if (stargemm__inspect(&r, &w0) == 0) {
			int64_t received = 0;

			for (int64_t e = 0; e < w0.nrefs; e++)
				received += w0.refs[e].received;
			snprintf(name, sizeof(name), "%s rank %d: without prefetch_received, no "
				 "tile listed received, the same products", label, me);
			tap_ok_detail(received == 0 && same_sequence(&wl, &w0), name, "");
			stargemm__worklist_free(&w0);
		}
	}
	if (eq1) {
		double loads[64], mean = 0.0;

		stargemm__worklist_loads(&wl, 1, loads);
		for (int g = 0; g < p->G; g++)
			mean += loads[g] / p->G;
		snprintf(name, sizeof(name), "%s rank %d: list loads %.2f = Eq. (1) %.2f per device",
			 label, me, mean, p->plan.loads_total);
		tap_ok_detail(fabs(mean - p->plan.loads_total) < 1e-9 * (1 + p->plan.loads_total), name, "");
	}
	request(p, 0, 1, ta, tb, 1, &r);
	if (me != 0 && stargemm__inspect(&r, &w0) == 0) {
		snprintf(name, sizeof(name), "%s: rank %d lists rank 0's products in its order",
			 label, me);
		tap_ok_detail(same_sequence(&wl, &w0), name, "");
		stargemm__worklist_free(&w0);
	}
	stargemm__worklist_free(&wl);
}

static void regular_cases(void)
{
	static const struct { int64_t n, t; int P, Q, G; int64_t mem, b, c, d; } cases[] = {
		{ 8192, 1024, 1, 1, 1, 0, 4, 4, 1 },       /* c2, forced */
		{ 16384, 1024, 1, 1, 2, 300, 0, 0, 0 },    /* c2, planner's */
		{ 16384, 1024, 1, 1, 3, 300, 0, 0, 0 },
		{ 12288, 1024, 1, 1, 6, 100, 0, 0, 0 },    /* c1 */
		{ 16384, 1024, 2, 1, 1, 60, 0, 0, 0 },
		{ 16384, 1024, 1, 2, 3, 60, 0, 0, 0 },
		{ 24576, 1024, 2, 3, 2, 80, 0, 0, 0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct problem p = { .P = cases[c].P, .Q = cases[c].Q, .G = cases[c].G };
		char label[96];

		p.row_off = regular(cases[c].n, cases[c].t, &p.mt);
		p.col_off = regular(cases[c].n, cases[c].t, &p.nt);
		p.k_off = regular(cases[c].n, cases[c].t, &p.kt);
		if (make_plan(&p, cases[c].mem ? cases[c].mem : 1000, cases[c].b, cases[c].c,
			      cases[c].d)) {
			tap_ok_detail(0, "plan", stargemm_last_error());
			free_problem(&p);
			continue;
		}
		snprintf(label, sizeof(label), "N=%lld %dx%d G=%d case %s", (long long)cases[c].n,
			 p.P, p.Q, p.G, stargemm_plan_case_name(p.plan.regime));
		for (int me = 0; me < p.P * p.Q; me++)
			dense_case(label, &p, me, 0, 0, p.plan.Z > 1 || p.plan.X == 1);
		free_problem(&p);
	}
}

/* The same products, blocks and chunks, and the same devices. */
static int same_devices(const struct stargemm__worklist *a, const struct stargemm__worklist *b)
{
	if (!same_sequence(a, b))
		return 0;
	for (int64_t q = 0; q < a->nproducts; q++)
		if (a->products[q].info.device != b->products[q].info.device)
			return 0;
	return 1;
}

/* A grid map (src/distribution.c) renames the ranks and nothing else: on a 2 x 3 grid
 * whose ranks go column by column (BLACS's "Col"), rank map[x] lists what rank x lists
 * on the row-major grid, devices included, in core and out of core. */
static void grid_map(void)
{
	struct problem p = { .P = 2, .Q = 3, .G = 3 };
	struct stargemm__grid g = { 0 };
	int map[6];

	for (int x = 0; x < 6; x++)
		map[x] = x % 3 * 2 + x / 3;   /* process (x / 3, x % 3) is rank q P + p */
	p.row_off = regular(24576, 1024, &p.mt);
	p.col_off = regular(24576, 1024, &p.nt);
	p.k_off = regular(24576, 1024, &p.kt);
	tap_ok_detail(make_plan(&p, 80, 0, 0, 0) == 0 && stargemm__grid_init(&g, 2, 3, map, "test") == 0 &&
	   g.rank && g.coord[map[4]] == 4, "column-major 2x3 grid: kept, with its inverse",
	   stargemm_last_error());
	for (int ooc = 0; ooc < 2 && g.rank; ooc++)
		for (int x = 0; x < 6; x++) {
			struct stargemm__request r0, r1;
			struct stargemm__worklist w0, w1;
			char name[160];
			int ret;

			request(&p, x, 1, 0, 1, ooc, &r0);
			request(&p, map[x], 1, 0, 1, ooc, &r1);
			r1.a.grid = r1.b.grid = r1.c.grid = g;
			ret = stargemm__inspect(&r0, &w0);
			ret = ret ? ret : stargemm__inspect(&r1, &w1);
			snprintf(name, sizeof(name), "column-major 2x3 grid %s: rank %d lists row-major "
				 "rank %d's products and devices", ooc ? "ooc" : "in core", map[x], x);
			tap_ok_detail(ret == 0 && same_devices(&w0, &w1) && w0.nproducts > 0, name, "");
			stargemm__worklist_free(&w0);
			stargemm__worklist_free(&w1);
		}
	stargemm__grid_free(&g);
	free_problem(&p);
}

/* The checks of a grid map: a rank out of range or listed twice is refused, naming
 * the entry; a map in row-major order is kept as none. */
static void grid_map_refused(void)
{
	static const int twice[4] = { 0, 2, 1, 2 }, outside[4] = { 0, 1, 4, 3 },
			 row_major[4] = { 0, 1, 2, 3 };
	struct stargemm__grid g;

	tap_ok_detail(stargemm__grid_init(&g, 2, 2, twice, "f") == -EINVAL && !g.rank &&
	   strstr(stargemm_last_error(), "grid[3] = 2 is a rank listed twice (grid[1] too)"),
	   "grid map: a rank listed twice is refused", stargemm_last_error());
	tap_ok_detail(stargemm__grid_init(&g, 2, 2, outside, "f") == -EINVAL && !g.rank &&
	   strstr(stargemm_last_error(), "grid[2] = 4 is out of range"),
	   "grid map: a rank out of range is refused", stargemm_last_error());
	tap_ok_detail(stargemm__grid_init(&g, 2, 2, row_major, "f") == 0 && !g.rank && !g.coord &&
	   stargemm__grid_rank(&g, 1, 0) == 2, "grid map: row-major order is kept as none", "");
}

/* Ragged and irregular tilings, transposes: everything but Eq. (1), which counts tiles. */
static void ragged_cases(void)
{
	static const int64_t sizes[] = { 97, 283, 106, 56 };
	struct problem p = { .P = 2, .Q = 2, .G = 3 };

	p.row_off = regular(1000, 97, &p.mt);
	p.col_off = irregular(13, sizes, 4);
	p.nt = 13;
	p.k_off = regular(1201, 106, &p.kt);
	if (make_plan(&p, 40, 0, 0, 0) == 0)
		for (int me = 0; me < 4; me++)
			dense_case("ragged 2x2 G=3", &p, me, me & 1, me >> 1 & 1, 0);
	else
		tap_ok_detail(0, "ragged plan", stargemm_last_error());
	free_problem(&p);
}

/* A ragged last K tile: its products HELD, never prefetched, held per block. */
static void held_k(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 2 };
	struct stargemm__request r;
	struct stargemm__worklist wl;
	int held_ok = 1, prefetch_ok = 1;
	int64_t holds = 0;

	p.row_off = regular(8192, 1024, &p.mt);
	p.col_off = regular(8192, 1024, &p.nt);
	p.k_off = regular(8192 + 300, 1024, &p.kt);
	make_plan(&p, 60, 0, 0, 0);
	request(&p, 0, 1, 0, 0, 1, &r);
	if (stargemm__inspect(&r, &wl)) {
		tap_ok_detail(0, "held K: inspected", stargemm_last_error());
		free_problem(&p);
		return;
	}
	for (int64_t q = 0; q < wl.nproducts; q++)
		held_ok &= (wl.products[q].k == p.kt - 1) ==
			   (wl.products[q].info.prefetch == STARGEMM_PREFETCH_HELD);
	for (int64_t n = 0; n < wl.nchunks; n++)
		for (int64_t e = wl.chunks[n].prefetch_first;
		     e < wl.chunks[n].prefetch_first + wl.chunks[n].prefetch_count; e++) {
			const struct stargemm__tile_ref *t = &wl.refs[e];

			prefetch_ok &= !((t->operand == STARGEMM_OP_A && t->c == p.kt - 1) ||
					 (t->operand == STARGEMM_OP_B && t->r == p.kt - 1));
		}
	for (int64_t b = 0; b < wl.nblocks; b++)
		holds += wl.blocks[b].hold_count;
	tap_ok_detail(wl.holds && held_ok, "held K: exactly the last k's products are class HELD", "");
	tap_ok_detail(prefetch_ok, "held K: the last k's tiles are never prefetched", "");
	/* each block: its rows' A tiles and its columns' B tiles, on each device using them */
	tap_ok_detail(holds >= p.mt * p.plan.Y + p.nt * p.plan.X, "held K: every block holds its tiles", "");
	stargemm__worklist_free(&wl);
	free_problem(&p);
}

static void in_core(void)
{
	struct problem p = { .P = 1, .Q = 2, .G = 2 };
	struct stargemm__request r;
	struct stargemm__worklist wl;
	int order = 1;

	p.row_off = regular(1000, 300, &p.mt);
	p.col_off = regular(900, 200, &p.nt);
	p.k_off = regular(700, 250, &p.kt);
	request(&p, 1, 0, 0, 0, 0, &r);
	tap_ok_detail(stargemm__inspect(&r, &wl) == 0 && !wl.throttled && wl.nchunks == 1 &&
		   wl.chunks[0].count == p.mt * p.nt * p.kt && wl.nrefs == 0,
	   "in core: one unthrottled chunk of every product, nothing prefetched", "");
	for (int64_t q = 1; q < wl.nproducts; q++)
		order &= wl.products[q].k >= wl.products[q - 1].k;
	tap_ok_detail(order, "in core: k outer", "");
	stargemm__worklist_free(&wl);
	/* More devices than the transfer counters track: refused, the limit named. */
	r.ndevices = STARGEMM_MAX_DEVICES + 1;
	tap_ok_detail(stargemm__inspect(&r, &wl) == -EINVAL &&
		   strstr(stargemm_last_error(), "between 1 and 16 are supported"),
	   "refused: more devices per rank than STARGEMM_MAX_DEVICES", stargemm_last_error());
	free_problem(&p);
}

/* The devices of a block get the same area within one tile (split columns). */
static void balance(void)
{
	static const int64_t sizes[] = { 700, 300, 1000, 450, 820 };
	struct problem p = { .P = 1, .Q = 1, .G = 4 };
	struct stargemm__request r;
	struct stargemm__worklist wl;
	double area[4] = { 0 }, lo, hi;

	p.row_off = irregular(9, sizes, 5);
	p.mt = 9;
	p.col_off = irregular(7, sizes, 5);
	p.nt = 7;
	p.k_off = regular(1000, 1000, &p.kt);
	make_plan(&p, 1000, 0, 0, 0);
	request(&p, 0, 1, 0, 0, 1, &r);
	stargemm__inspect(&r, &wl);
	for (int64_t q = 0; q < wl.nproducts; q++) {
		const struct stargemm__product *x = &wl.products[q];

		area[x->info.device] += (double)(p.row_off[x->i + 1] - p.row_off[x->i]) *
					(double)(p.col_off[x->j + 1] - p.col_off[x->j]);
	}
	lo = hi = area[0];
	for (int g = 1; g < 4; g++) {
		lo = area[g] < lo ? area[g] : lo;
		hi = area[g] > hi ? area[g] : hi;
	}
	/* Whole columns are dealt by count (one each here), the split ones by area: the
	 * devices differ by at most the widest column plus one tile (1000 x 1000). */
	tap_ok_detail(hi - lo <= (double)p.row_off[p.mt] * 1000 + 1e6,
	   "7 irregular columns on 4 devices: areas within a column and a tile", "");
	stargemm__worklist_free(&wl);
	free_problem(&p);
}

/* A random pattern of @p n tiles, about @p density of them present (seeded). */
static uint8_t *pattern(int64_t n, double density, unsigned *seed)
{
	uint8_t *p = malloc((size_t)n);

	for (int64_t t = 0; t < n; t++)
		p[t] = (double)rand_r(seed) / RAND_MAX < density;
	return p;
}

/* C's distribution, not 2D block-cyclic: tile rows in runs of 3 per process row, tile
 * columns in mirrored cyclic order (0..Q-1, Q-1..0, ...); set in @p r->c. */
static int skewed(const struct problem *p, struct stargemm__request *r,
		  struct stargemm__axis *rows, struct stargemm__axis *cols)
{
	int *rp = malloc((size_t)p->mt * sizeof(int)), *cp = malloc((size_t)p->nt * sizeof(int));
	int ret;

	for (int64_t i = 0; i < p->mt; i++)
		rp[i] = (int)(i / 3 % p->P);
	for (int64_t j = 0; j < p->nt; j++)
		cp[j] = (int)(j / p->Q % 2 ? p->Q - 1 - j % p->Q : j % p->Q);
	ret = stargemm__axis_init(rows, p->mt, p->P, rp, "rows") ||
	      stargemm__axis_init(cols, p->nt, p->Q, cp, "cols");
	r->c.rows = rows;
	r->c.cols = cols;
	free(rp);
	free(cp);
	return ret;
}

static int ref_exists(const struct stargemm__request *r, const struct stargemm__tile_ref *t)
{
	const struct stargemm__operand *x = t->operand == STARGEMM_OP_A ? &r->a
					   : t->operand == STARGEMM_OP_B ? &r->b : &r->c;

	return stargemm__operand_present(x, t->r, t->c);
}

/* Whether a product of block @p blk on @p device reads tile @p t. */
static int read_in_block(const struct stargemm__worklist *wl, int64_t blk, int device,
			 const struct stargemm__tile_ref *t)
{
	for (int64_t q = 0; q < wl->nproducts; q++) {
		const struct stargemm__product *x = &wl->products[q];
		int64_t r = t->operand == STARGEMM_OP_B ? x->k : x->i;
		int64_t c = t->operand == STARGEMM_OP_A ? x->k : x->j;

		if (x->info.block == blk && x->info.device == device && t->r == r && t->c == c)
			return 1;
	}
	return 0;
}

/* Whether every prefetched or held tile is read in its block on its device: a tile of
 * a block's rows or columns that meets no tile of the other operand is not loaded. */
static int loads_read(const struct stargemm__worklist *wl)
{
	int good = 1;

	for (int64_t n = 0; n < wl->nchunks; n++) {
		const struct stargemm__chunk *ch = &wl->chunks[n];

		for (int64_t e = ch->prefetch_first; e < ch->prefetch_first + ch->prefetch_count; e++)
			good &= read_in_block(wl, ch->block, wl->refs[e].device, &wl->refs[e]);
	}
	for (int64_t b = 0; b < wl->nblocks; b++)
		for (int64_t e = wl->blocks[b].hold_first;
		     e < wl->blocks[b].hold_first + wl->blocks[b].hold_count; e++)
			good &= read_in_block(wl, b, wl->refs[e].device, &wl->refs[e]);
	return good;
}

/* Block-sparse operands: the products are exactly those whose three tiles exist, each
 * chain's first applies beta, C tiles without a product are scaled, and no reference
 * names an absent tile. */
static void sparse_case(int ooc, int ta, int tb, double density, unsigned seed, int dist)
{
	struct problem p = { .P = 2, .Q = dist ? 3 : 1, .G = 2 };
	struct stargemm__axis rows = { 0 }, cols = { 0 };
	struct stargemm__request r;
	struct stargemm__worklist wl;
	uint8_t *pa, *pb, *pc, *started;
	int64_t expect = 0, am, bm, scaled = 0;
	int good = 1, refs_ok = 1, first_ok = 1;
	char name[160];

	p.row_off = regular(1000, 97, &p.mt);
	p.col_off = regular(800, 83, &p.nt);
	p.k_off = regular(1200, 101, &p.kt);
	make_plan(&p, 60, 0, 0, 0);
	request(&p, 1, 1, ta, tb, ooc, &r);
	am = ta ? p.kt : p.mt;
	bm = tb ? p.nt : p.kt;
	pa = pattern(p.mt * p.kt, density, &seed);
	pb = pattern(p.kt * p.nt, density, &seed);
	pc = pattern(p.mt * p.nt, 0.7, &seed);
	r.a.present = pa;
	r.a.ld = am;
	r.b.present = pb;
	r.b.ld = bm;
	r.c.present = pc;
	r.c.ld = p.mt;
	started = calloc((size_t)(p.mt * p.nt), 1);
	if ((dist && skewed(&p, &r, &rows, &cols)) || stargemm__inspect(&r, &wl)) {
		tap_ok_detail(0, "sparse: inspected", stargemm_last_error());
		return;
	}
	for (int64_t k = 0; k < p.kt; k++)
		for (int64_t j = 0; j < p.nt; j++)
			for (int64_t i = 0; i < p.mt; i++)
				expect += stargemm__operand_present(&r.a, i, k) &&
					  stargemm__operand_present(&r.b, k, j) && pc[i + j * p.mt];
	for (int64_t q = 0; q < wl.nproducts; q++) {
		const struct stargemm__product *x = &wl.products[q];
		int64_t t = x->i + x->j * p.mt;

		good &= stargemm__operand_present(&r.a, x->i, x->k) &&
			stargemm__operand_present(&r.b, x->k, x->j) && pc[t];
		first_ok &= x->first == !started[t];
		started[t] = 1;
	}
	for (int64_t e = 0; e < wl.nrefs; e++)
		refs_ok &= ref_exists(&r, &wl.refs[e]);
	for (int64_t t = 0; t < p.mt * p.nt; t++)
		scaled += pc[t] && !started[t];
	snprintf(name, sizeof(name), "sparse %s %c%c density %.2f%s: %lld products, those "
		 "whose three tiles exist", ooc ? "out of core" : "in core", ta ? 'T' : 'N',
		 tb ? 'T' : 'N', density, dist ? ", skewed C distribution on 2x3" : "",
		 (long long)wl.nproducts);
	tap_ok_detail(good && wl.nproducts == expect, name, "");
	tap_ok_detail(first_ok, "  the first product of each chain applies beta, no other", "");
	tap_ok_detail(wl.scale_count == scaled, "  C tiles without a product are scaled, alone", "");
	if (wl.nbatches == 0)
		decisions("  sparse on GPUs", &wl, STARGEMM__BACK_PREFETCH, 1,
			  ooc && wl.nblocks == 1);
	else
		decisions("  sparse on GPUs, batched", &wl, STARGEMM__BACK_FETCH, 0,
			  ooc && wl.nblocks == 1);
	tap_ok_detail(refs_ok, "  no prefetch, hold, release or write-back names an absent tile", "");
	if (ooc)
		tap_ok_detail(loads_read(&wl), "  every tile prefetched or held is read in its block, on "
		   "its device", "");
	free(pa);
	free(pb);
	free(pc);
	free(started);
	stargemm__axis_free(&rows);
	stargemm__axis_free(&cols);
	stargemm__worklist_free(&wl);
	free_problem(&p);
}

/* The ref of buffer @p slot of batch @p b. */
static const struct stargemm__tile_ref *batch_ref(const struct stargemm__worklist *wl,
						  const struct stargemm__batch *b, int32_t slot)
{
	return slot >= 0 && slot < b->nrefs ? &wl->refs[b->ref_first + slot] : NULL;
}

static int ref_is(const struct stargemm__tile_ref *t, int operand, int64_t r, int64_t c)
{
	return t && t->operand == operand && t->r == r && t->c == c;
}

/* Whether batch b's refs are distinct tiles (quadratic: batches are small here). */
static int refs_distinct(const struct stargemm__worklist *wl, const struct stargemm__batch *b)
{
	for (int64_t x = 0; x < b->nrefs; x++)
		for (int64_t y = x + 1; y < b->nrefs; y++)
			if (ref_is(&wl->refs[b->ref_first + x], wl->refs[b->ref_first + y].operand,
				   wl->refs[b->ref_first + y].r, wl->refs[b->ref_first + y].c))
				return 0;
	return 1;
}

/* Inspect @p r with batches (small tiles, 2 workers) into @p wl; returns the last k
 * seen per C tile (@p ntiles, all -1), or NULL after reporting a failure as @p what. */
static int64_t *inspect_batched(struct stargemm__request *r, struct stargemm__worklist *wl,
				int64_t ntiles, const char *what)
{
	int64_t *chain;

	r->batch_below = 1e9;
	r->batch_flops = 2e6;
	r->workers = r->ndevices > 1 ? r->ndevices * r->c.grid.P * r->c.grid.Q : 2;
	if (stargemm__inspect(r, wl)) {
		tap_ok_detail(0, what, stargemm_last_error());
		return NULL;
	}
	chain = malloc((size_t)ntiles * sizeof(*chain));
	for (int64_t t = 0; chain && t < ntiles; t++)
		chain[t] = -1;
	return chain;
}

/* Devices of a batched list on its rank: every batch of this rank on one device, every
 * update of a C tile on the same one (its chain stays there), other ranks' batches on
 * none (-1), and the products' prefetch class ALL (their buffers have no fixed roles).
 * Counts this rank's batches per device in @p per_device (G entries). */
static int batch_devices_ok(const struct stargemm__request *r, const struct stargemm__worklist *wl,
			    int64_t *per_device)
{
	int *dev = malloc((size_t)(r->mt * r->nt) * sizeof(*dev));
	int good = dev != NULL;

	for (int64_t t = 0; dev && t < r->mt * r->nt; t++)
		dev[t] = -2;
	for (int64_t e = 0; good && e < wl->nbatches; e++) {
		const struct stargemm__batch *b = &wl->batches[e];
		int d = wl->products[b->first].info.device;

		if (d >= 0 && d < r->ndevices)
			per_device[d]++;
		for (int64_t q = b->first; good && q < b->first + b->count; q++) {
			const struct stargemm__product *x = &wl->products[q];
			int64_t t = x->i + x->j * r->mt;
			int mine = stargemm__operand_owner(&r->c, x->i, x->j) == r->me;

			good = x->info.device == d && x->info.prefetch == STARGEMM_PREFETCH_ALL &&
			       (mine ? d >= 0 && d < r->ndevices : d == -1) &&
			       (dev[t] == -2 || dev[t] == d);
			dev[t] = d;
		}
	}
	free(dev);
	return good;
}

/* A thin C (one tile column) batched in core on one rank of 4 workers, A and B dense:
 * a batch spans s rows, 1 column and s steps of k, s as large as the target asks but
 * leaving each worker 3 chains (runs of rows, found as the batches' distinct first
 * rows). Counted as s x s x s cells, the batches held 169 products each; without the
 * chain cap there were 6 chains. */
static void thin_batched_case(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm__request r;
	struct stargemm__worklist wl;
	int64_t chains = 0, *first = NULL;
	char detail[128];

	p.row_off = regular(2400, 10, &p.mt);
	p.col_off = regular(10, 10, &p.nt);
	p.k_off = regular(2400, 10, &p.kt);
	request(&p, 0, 0, 0, 0, 0, &r);
	r.batch_below = 1e9;
	r.batch_flops = 1e12;
	r.workers = 4;
	if (stargemm__inspect(&r, &wl)) {
		tap_ok_detail(0, "thin C batched: inspected", stargemm_last_error());
		free_problem(&p);
		return;
	}
	first = calloc((size_t)p.mt, sizeof(*first));
	for (int64_t e = 0; first && e < wl.nbatches; e++) {
		int64_t lo = p.mt;

		for (int64_t q = wl.batches[e].first;
		     q < wl.batches[e].first + wl.batches[e].count; q++)
			lo = wl.products[q].i < lo ? wl.products[q].i : lo;
		chains += lo < p.mt && !first[lo];
		if (lo < p.mt)
			first[lo] = 1;
	}
	snprintf(detail, sizeof(detail), "%lld products in %lld batches, %lld chains",
		 (long long)wl.nproducts, (long long)wl.nbatches, (long long)chains);
	printf("# %s\n", detail);
	tap_ok_detail(wl.nbatches > 0 && wl.nproducts >= 200 * wl.nbatches,
	   "thin C batched: at least 200 products a batch (s rows x 1 column x s k)", detail);
	tap_ok_detail(chains >= 3 * 4, "thin C batched: at least 3 chains per worker", detail);
	free(first);
	stargemm__worklist_free(&wl);
	free_problem(&p);
}

/* Small tiles in core: the products (every one, as without batches: same set, same
 * per-chain order) are cut into consecutive batches; each batch writes C tiles of one
 * rank, and its slots name the product's own tiles among distinct buffers. With G
 * devices (GPUs) per rank, the batches are dealt to them (batch_devices_ok()). */
static void batched_case(int P, int Q, double density, unsigned seed, int dist, int G)
{
	struct problem p = { .P = P, .Q = Q, .G = G };
	int64_t per_device[8] = { 0 }, fewest;
	struct stargemm__axis rows = { 0 }, cols = { 0 };
	struct stargemm__request r;
	struct stargemm__worklist plain, wl;
	uint8_t *pa, *pb;
	int64_t covered = 0, *chain;
	int owners_ok = 1, slots_ok = 1, distinct_ok = 1, order_ok = 1, cover_ok = 1;
	char name[160];

	p.row_off = regular(610, 10, &p.mt);
	p.col_off = regular(530, 10, &p.nt);
	p.k_off = regular(470, 10, &p.kt);
	request(&p, 0, 0, 0, 0, 0, &r);
	pa = pattern(p.mt * p.kt, density, &seed);
	pb = pattern(p.kt * p.nt, density, &seed);
	r.a.present = pa;
	r.a.ld = p.mt;
	r.b.present = pb;
	r.b.ld = p.kt;
	if ((dist && skewed(&p, &r, &rows, &cols)) || stargemm__inspect(&r, &plain)) {
		tap_ok_detail(0, "batched: inspected", stargemm_last_error());
		return;
	}
	if (!(chain = inspect_batched(&r, &wl, p.mt * p.nt, "batched: inspected")))
		return;
	decisions("batched in core", &wl, STARGEMM__BACK_FETCH, 0, 0);
	for (int64_t e = 0; e < wl.nbatches; e++) {
		const struct stargemm__batch *b = &wl.batches[e];
		const struct stargemm__product *x0 = &wl.products[b->first];
		int owner = stargemm__operand_owner(&r.c, x0->i, x0->j);

		cover_ok &= b->first == covered && b->count > 0;
		covered += b->count;
		distinct_ok &= refs_distinct(&wl, b);
		for (int64_t q = b->first; q < b->first + b->count; q++) {
			const struct stargemm__product *x = &wl.products[q];
			const int32_t *sl = &wl.slots[3 * q];
			int64_t t = x->i + x->j * p.mt;

			owners_ok &= stargemm__operand_owner(&r.c, x->i, x->j) == owner;
			slots_ok &= ref_is(batch_ref(&wl, b, sl[0]), STARGEMM_OP_A, x->i, x->k) &&
				    ref_is(batch_ref(&wl, b, sl[1]), STARGEMM_OP_B, x->k, x->j) &&
				    ref_is(batch_ref(&wl, b, sl[2]), STARGEMM_OP_C, x->i, x->j);
			order_ok &= x->k > chain[t] && x->first == (chain[t] < 0);
			chain[t] = x->k;
		}
	}
	snprintf(name, sizeof(name), "batched %dx%d%s density %.2f: %lld products in %lld "
		 "batches, as many as unbatched (%lld)", P, Q, dist ? " skewed" : "", density,
		 (long long)wl.nproducts,
		 (long long)wl.nbatches, (long long)plain.nproducts);
	tap_ok_detail(wl.nbatches > 1 && wl.nproducts == plain.nproducts && covered == wl.nproducts &&
	   cover_ok && wl.flops == plain.flops, name, "");
	tap_ok_detail(owners_ok, "  each batch writes C tiles of one rank", "");
	tap_ok_detail(slots_ok && distinct_ok, "  slots name each product's tiles, among distinct buffers",
	   "");
	tap_ok_detail(order_ok, "  each chain in increasing k, beta on its first product", "");
	snprintf(name, sizeof(name), "  on %d device(s): each batch and C tile on one device "
		 "of its rank, prefetch class ALL", G);
	tap_ok_detail(batch_devices_ok(&r, &wl, per_device), name, "");
	fewest = per_device[0];
	for (int g = 1; g < G; g++)
		fewest = per_device[g] < fewest ? per_device[g] : fewest;
	snprintf(name, sizeof(name), "  every device of rank 0 has batches (fewest: %lld)",
		 (long long)fewest);
	tap_ok_detail(fewest > 0, name, "");
	free(chain);
	free(pa);
	free(pb);
	stargemm__axis_free(&rows);
	stargemm__axis_free(&cols);
	stargemm__worklist_free(&plain);
	stargemm__worklist_free(&wl);
	free_problem(&p);
}

/* Whether update @p k may follow a chain whose last two updates were at @p before and
 * @p last (-1: none): a chain visits distinct k in one direction, increasing, or
 * decreasing in a block that walks k backwards (the serpentine walk, src/inspect.c). */
static int chain_continues(int64_t before, int64_t last, int64_t k)
{
	if (last < 0)
		return 1;
	return before < 0 ? k != last : (last - before) * (k - last) > 0;
}

/* ooc_batches_ok()'s walk, its scratch entries set: @p before, the update before each
 * C tile's last (@p chain). */
static int ooc_batches_walk(const struct stargemm__request *r,
			    const struct stargemm__worklist *plain,
			    const struct stargemm__worklist *wl, int64_t *chain, int64_t *before,
			    const int *dev, int64_t *seen, char *why, size_t len)
{
	int64_t expect = 0;
	double l0[8] = { 0 }, l1[8] = { 0 };

	if (wl->nchunks != plain->nchunks || wl->nproducts != plain->nproducts ||
	    wl->flops != plain->flops) {
		snprintf(why, len, "%lld chunks, %lld products (unbatched: %lld, %lld)",
			 (long long)wl->nchunks, (long long)wl->nproducts,
			 (long long)plain->nchunks, (long long)plain->nproducts);
		return 0;
	}
	for (int64_t n = 0; n < wl->nchunks; n++) {
		const struct stargemm__chunk *ch = &wl->chunks[n], *c0 = &plain->chunks[n];
		int64_t next = ch->first;

		if (ch->first != c0->first || ch->count != c0->count || ch->block != c0->block ||
		    ch->batch_first != expect) {
			snprintf(why, len, "chunk %lld: products %lld+%lld, batches from %lld",
				 (long long)n, (long long)ch->first, (long long)ch->count,
				 (long long)ch->batch_first);
			return 0;
		}
		expect += ch->batch_count;
		for (int64_t e = ch->batch_first; e < ch->batch_first + ch->batch_count; e++) {
			const struct stargemm__batch *b = &wl->batches[e];
			const struct stargemm__product *x0 = &wl->products[b->first];
			int owner = stargemm__operand_owner(&r->c, x0->i, x0->j);

			if (b->first != next || b->count < 1 || !refs_distinct(wl, b)) {
				snprintf(why, len, "chunk %lld batch %lld: products %lld+%lld, expected "
					 "from %lld, or repeated buffers", (long long)n, (long long)e,
					 (long long)b->first, (long long)b->count, (long long)next);
				return 0;
			}
			next += b->count;
			for (int64_t q = b->first; q < b->first + b->count; q++) {
				const struct stargemm__product *x = &wl->products[q];
				const int32_t *sl = &wl->slots[3 * q];
				int64_t t = x->i + x->j * r->mt;

				if (x->info.chunk != n || x->info.block != ch->block ||
				    x->info.device != x0->info.device || x->info.device != dev[t] ||
				    stargemm__operand_owner(&r->c, x->i, x->j) != owner ||
				    x->info.prefetch != STARGEMM_PREFETCH_ALL ||
				    !chain_continues(before[t], chain[t], x->k) ||
				    x->first != (chain[t] < 0) ||
				    (seen[t] >= ch->batch_first && seen[t] != e) ||
				    !ref_is(batch_ref(wl, b, sl[0]), STARGEMM_OP_A, x->i, x->k) ||
				    !ref_is(batch_ref(wl, b, sl[1]), STARGEMM_OP_B, x->k, x->j) ||
				    !ref_is(batch_ref(wl, b, sl[2]), STARGEMM_OP_C, x->i, x->j)) {
					snprintf(why, len, "chunk %lld batch %lld: product C(%lld,%lld) "
						 "k=%lld (device %d, unbatched %d, last k %lld)",
						 (long long)n, (long long)e, (long long)x->i,
						 (long long)x->j, (long long)x->k, x->info.device, dev[t],
						 (long long)chain[t]);
					return 0;
				}
				before[t] = chain[t];
				chain[t] = x->k;
				seen[t] = e;
			}
		}
		if (next != ch->first + ch->count) {
			snprintf(why, len, "chunk %lld: batches cover %lld of %lld products",
				 (long long)n, (long long)(next - ch->first), (long long)ch->count);
			return 0;
		}
	}
	stargemm__worklist_loads(plain, 1, l0);
	stargemm__worklist_loads(wl, 1, l1);
	for (int g = 0; g < r->ndevices && g < 8; g++)
		if (l0[g] != l1[g]) {
			snprintf(why, len, "device %d loads %.0f tiles, unbatched %.0f", g, l1[g], l0[g]);
			return 0;
		}
	return expect == wl->nbatches;
}

/* A batched out-of-core list against the unbatched one of the same request: the same
 * chunks (ranges, blocks, devices of every C tile), each chunk's products a
 * permutation of the unbatched chunk's that keeps every chain in its k order, with
 * beta on its first product; the chunk's batches consecutive and covering it; each
 * batch one rank's C tiles on one device, its slots naming its products' tiles among
 * distinct buffers; no C tile in two batches of a chunk; the same predicted loads.
 * @p chain, @p dev, @p owner_dev: a scratch entry per C tile. Explains a failure in
 * @p why. */
static int ooc_batches_ok(const struct stargemm__request *r, const struct stargemm__worklist *plain,
			  const struct stargemm__worklist *wl, int64_t *chain, int *dev,
			  int64_t *seen, char *why, size_t len)
{
	int64_t ntiles = r->mt * r->nt;
	int64_t *before = malloc((size_t)(ntiles > 0 ? ntiles : 1) * sizeof(*before));
	int good;

	if (!before) {
		snprintf(why, len, "out of memory");
		return 0;
	}
	for (int64_t t = 0; t < ntiles; t++) {
		chain[t] = -1;
		dev[t] = -2;
		seen[t] = -1;
		before[t] = -1;
	}
	for (int64_t q = 0; q < plain->nproducts; q++)
		dev[plain->products[q].i + plain->products[q].j * r->mt] =
			plain->products[q].info.device;
	good = ooc_batches_walk(r, plain, wl, chain, before, dev, seen, why, len);
	free(before);
	return good;
}

/* Whether two lists hold the same batches of the same products (every rank's list). */
static int same_batches(const struct stargemm__worklist *a, const struct stargemm__worklist *b)
{
	if (a->nbatches != b->nbatches || !same_sequence(a, b))
		return 0;
	for (int64_t e = 0; e < a->nbatches; e++)
		if (a->batches[e].first != b->batches[e].first ||
		    a->batches[e].count != b->batches[e].count)
			return 0;
	return 1;
}

/* Small tiles out of core: every rank's list batched within its chunks
 * (ooc_batches_ok()), the same batches on every rank, several products per batch. */
static void ooc_batched_case(int P, int Q, int G, int ta, int tb, double density, unsigned seed,
			     int dist)
{
	static const int64_t sizes[] = { 12, 7, 20, 9, 15, 11, 4 };
	struct problem p = { .P = P, .Q = Q, .G = G };
	struct stargemm__axis rows = { 0 }, cols = { 0 };
	struct stargemm__worklist first = { 0 };
	uint8_t *pa, *pb;
	int64_t *chain, *seen;
	int *dev, good = 1, same = 1;
	char name[200] = "ooc batched", why[200] = "";

	p.mt = 53;
	p.nt = 47;
	p.kt = 41;
	p.row_off = irregular(p.mt, sizes, 7);
	p.col_off = irregular(p.nt, sizes + 1, 6);
	p.k_off = irregular(p.kt, sizes + 2, 5);
	pa = pattern(p.mt * p.kt, density, &seed);
	pb = pattern(p.kt * p.nt, density, &seed);
	chain = malloc((size_t)(p.mt * p.nt) * sizeof(*chain));
	seen = malloc((size_t)(p.mt * p.nt) * sizeof(*seen));
	dev = malloc((size_t)(p.mt * p.nt) * sizeof(*dev));
	make_plan(&p, 400, 0, 0, 0);
	if (dist) {
		struct stargemm__request r0;

		request(&p, 0, 1, ta, tb, 1, &r0);
		good = skewed(&p, &r0, &rows, &cols) == 0;
	}
	for (int me = 0; me < P * Q && good; me++) {
		struct stargemm__request r;
		struct stargemm__worklist plain, wl;

		request(&p, me, 1, ta, tb, 1, &r);
		r.a.present = pa;
		r.a.ld = ta ? p.kt : p.mt;
		r.b.present = pb;
		r.b.ld = tb ? p.nt : p.kt;
		r.c.rows = dist ? &rows : NULL;
		r.c.cols = dist ? &cols : NULL;
		if (stargemm__inspect(&r, &plain)) {
			tap_ok_detail(0, "ooc batched: inspected", stargemm_last_error());
			good = 0;
			break;
		}
		r.batch_below = 1e9;
		r.batch_flops = 1e5;
		r.workers = G * P * Q;
		if (stargemm__inspect(&r, &wl)) {
			tap_ok_detail(0, "ooc batched: inspected", stargemm_last_error());
			stargemm__worklist_free(&plain);
			good = 0;
			break;
		}
		good = ooc_batches_ok(&r, &plain, &wl, chain, dev, seen, why, sizeof(why));
		if (me == 0) {
			snprintf(name, sizeof(name), "ooc batched %dx%d G=%d %c%c density %.1f%s: "
				 "%lld products in %lld chunks, %lld batches", P, Q, G, ta ? 'T' : 'N',
				 tb ? 'T' : 'N', density, dist ? " skewed" : "",
				 (long long)wl.nproducts, (long long)wl.nchunks, (long long)wl.nbatches);
			first = wl;
		} else {
			same &= same_batches(&first, &wl);
			stargemm__worklist_free(&wl);
		}
		stargemm__worklist_free(&plain);
	}
	tap_ok_detail(good && first.nbatches > first.nchunks && first.nbatches * 2 < first.nproducts, name,
	   why);
	tap_ok_detail(good, "  each chunk's products as batches: one rank's device each, chains in k "
	   "order, distinct C tiles, the unbatched devices and loads", why);
	tap_ok_detail(same && good, "  every rank lists the same batches", "");
	stargemm__worklist_free(&first);
	free(chain);
	free(seen);
	free(dev);
	free(pa);
	free(pb);
	stargemm__axis_free(&rows);
	stargemm__axis_free(&cols);
	free_problem(&p);
}

/* The pack layout of a stored matrix of @p mt x @p nt tiles (src/pack.c), every axis
 * of tiles below 64 packed into groups of >= 60 elements; NULL on failure. */
static struct stargemm__packing *layout(int64_t mt, int64_t nt, const int64_t *row_off,
					const int64_t *col_off, const uint8_t *present)
{
	struct stargemm__pack_request q = { mt, nt, row_off, col_off, present, NULL, NULL,
					    64, 60 };
	struct stargemm__packing *pk = NULL;

	return stargemm__pack_layout(&q, &pk) ? NULL : pk;
}

/* A layout's packs hold their present tiles back to back: offsets in walk order, each
 * pack's size their sum, groups of >= 60 elements but the last. */
static int layout_ok(const struct stargemm__packing *pk, int64_t mt, const int64_t *row_off,
		     const int64_t *col_off, const uint8_t *present)
{
	int good = 1;

	for (int64_t I = 0; I + 1 < pk->gmt; I++)
		good &= row_off[pk->row_first[I + 1]] - row_off[pk->row_first[I]] >= 60;
	for (int64_t J = 0; J < pk->gnt; J++)
		for (int64_t I = 0; I < pk->gmt; I++) {
			int64_t e = 0;

			for (int64_t j = pk->col_first[J]; j < pk->col_first[J + 1]; j++)
				for (int64_t i = pk->row_first[I]; i < pk->row_first[I + 1]; i++) {
					if (!present[i + j * mt])
						continue;
					good &= pk->offset[i + j * mt] == e && pk->row_group[i] == I &&
						pk->col_group[j] == J;
					e += (row_off[i + 1] - row_off[i]) *
					     (col_off[j + 1] - col_off[j]);
				}
			good &= pk->elems[I + J * pk->gmt] == e;
		}
	return good;
}

/* Packs that would be the tiles: no packing. A block of 32 vectors in one tile column
 * with rows of 500 (nothing to group either way); the same columns in two tiles of 16
 * on two processes (a change of process ends a group); on one process they group. */
static void packs_of_one_tile(void)
{
	int64_t rows[4] = { 0, 500, 1000, 1500 }, one[2] = { 0, 32 }, two[3] = { 0, 16, 32 };
	uint8_t present[6] = { 1, 1, 1, 1, 1, 1 };
	int procs[2] = { 0, 1 }, same[2] = { 0, 0 };
	struct stargemm__pack_request q = { 3, 1, rows, one, present, NULL, NULL, 64, 60 };
	struct stargemm__packing *pk = NULL;

	tap_ok_detail(stargemm__pack_layout(&q, &pk) == 0 && pk == NULL,
	   "packs: one tile column of 32, rows of 500: not packed", "");
	q.nt = 2;
	q.col_off = two;
	q.col_proc = procs;
	tap_ok_detail(stargemm__pack_layout(&q, &pk) == 0 && pk == NULL,
	   "packs: two columns of 16 on two processes: not packed", "");
	q.col_proc = same;
	tap_ok_detail(stargemm__pack_layout(&q, &pk) == 0 && pk && pk->gnt == 1 && pk->gmt == 3,
	   "packs: two columns of 16 on one process: one column group", "");
	stargemm__pack_free(pk);
}

/* The pack (op(X)'s coordinates) of tile (r, c) of op(X). */
static int in_pack(const struct stargemm__tile_ref *t, const struct stargemm__packing *pk,
		   int trans, int operand, int64_t r, int64_t c)
{
	int64_t i = trans ? c : r, j = trans ? r : c;
	int64_t I = pk->row_group[i], J = pk->col_group[j];

	return t && t->operand == operand && t->r == (trans ? J : I) && t->c == (trans ? I : J);
}

/* The packed cases' tilings: 41 x 37 x 29 tiles of 3-22 elements. */
static void small_tilings(struct problem *p)
{
	static const int64_t sizes[] = { 5, 13, 7, 22, 9, 3 };

	p->mt = 41;
	p->nt = 37;
	p->kt = 29;
	p->row_off = irregular(p->mt, sizes, 6);
	p->col_off = irregular(p->nt, sizes + 1, 5);
	p->k_off = irregular(p->kt, sizes + 2, 4);
}

/* The C packs (I + J gmt) with a present tile that no product of @p wl updates; their
 * count in *@p count. */
static uint8_t *idle_packs(const struct stargemm__worklist *wl, const struct stargemm__packing *pc,
			   const uint8_t *present, int64_t mt, int64_t nt, int64_t *count)
{
	uint8_t *started = calloc((size_t)(mt * nt), 1);
	uint8_t *idle = calloc((size_t)(pc->gmt * pc->gnt), 1);

	*count = 0;
	for (int64_t q = 0; started && q < wl->nproducts; q++)
		started[wl->products[q].i + wl->products[q].j * mt] = 1;
	for (int64_t t = 0; started && idle && t < mt * nt; t++) {
		int64_t u = pc->row_group[t % mt] + pc->col_group[t / mt] * pc->gmt;

		*count += present[t] && !started[t] && !idle[u];
		idle[u] |= present[t] && !started[t];
	}
	free(started);
	return idle;
}

/* Packed operands in core (src/pack.c): the layouts hold every present tile once; the
 * list has the same products as without packs, as batches that each write one C pack
 * whose buffers are the packs of their products' tiles (distinct); the scales name
 * the C packs with a present tile no product updates, whose products do not apply
 * beta, and in the other packs each tile's first update applies it; chains in
 * increasing k. */
static void packed_case(int P, int Q, int G, int ta, int tb, double density, unsigned seed)
{
	struct problem p = { .P = P, .Q = Q, .G = G };
	int64_t per_device[3] = { 0 };
	int devices_ok = 1;
	struct stargemm__axis rows = { 0 }, cols = { 0 };
	struct stargemm__packing *pa = NULL, *pb = NULL, *pc = NULL;
	struct stargemm__request r;
	struct stargemm__worklist plain, wl;
	uint8_t *sa, *sb, *sc;
	int64_t *chain, nscales = 0;
	uint8_t *idle;
	int *rp, *cp, lay_ok, batch_ok = 1, slots_ok = 1, distinct_ok = 1, order_ok = 1;
	int opens_ok = 1;
	char name[160];

	small_tilings(&p);
	request(&p, 0, 0, ta, tb, 0, &r);
	sa = pattern(p.mt * p.kt, density, &seed);
	sb = pattern(p.kt * p.nt, density, &seed);
	sc = pattern(p.mt * p.nt, 0.9, &seed);
	r.a = (struct stargemm__operand){ .grid = { .P = P, .Q = Q }, .trans = ta,
					  .present = sa, .ld = ta ? p.kt : p.mt };
	r.b = (struct stargemm__operand){ .grid = { .P = P, .Q = Q }, .trans = tb,
					  .present = sb, .ld = tb ? p.nt : p.kt };
	r.c.present = sc;
	r.c.ld = p.mt;
	/* op(A) is stored as A (kt x mt when transposed): its pattern is read that way */
	pa = ta ? layout(p.kt, p.mt, p.k_off, p.row_off, sa) : layout(p.mt, p.kt, p.row_off,
								       p.k_off, sa);
	pb = tb ? layout(p.nt, p.kt, p.col_off, p.k_off, sb) : layout(p.kt, p.nt, p.k_off,
								       p.col_off, sb);
	pc = layout(p.mt, p.nt, p.row_off, p.col_off, sc);
	rp = malloc((size_t)p.mt * sizeof(int));
	cp = malloc((size_t)p.nt * sizeof(int));
	if (!pa || !pb || !pc || !rp || !cp || stargemm__inspect(&r, &plain)) {
		tap_ok_detail(0, "packed: inspected", stargemm_last_error());
		return;
	}
	lay_ok = layout_ok(pc, p.mt, p.row_off, p.col_off, sc) &&
		 (ta ? layout_ok(pa, p.kt, p.k_off, p.row_off, sa)
		     : layout_ok(pa, p.mt, p.row_off, p.k_off, sa));
	stargemm__pack_cyclic(pc->row_group, p.mt, P, rp);
	stargemm__pack_cyclic(pc->col_group, p.nt, Q, cp);
	stargemm__axis_init(&rows, p.mt, P, rp, "rows");
	stargemm__axis_init(&cols, p.nt, Q, cp, "cols");
	r.c.rows = &rows;
	r.c.cols = &cols;
	r.a.pack = pa;
	r.b.pack = pb;
	r.c.pack = pc;
	if (!(chain = inspect_batched(&r, &wl, p.mt * p.nt, "packed: inspected")))
		return;
	if (!(idle = idle_packs(&wl, pc, sc, p.mt, p.nt, &nscales))) {
		tap_ok_detail(0, "packed: out of memory", "");
		return;
	}
	for (int64_t e = 0; e < wl.nbatches; e++) {
		const struct stargemm__batch *b = &wl.batches[e];
		const struct stargemm__product *x0 = &wl.products[b->first];

		distinct_ok &= refs_distinct(&wl, b);
		devices_ok &= x0->info.device < G &&
			      (x0->info.device >= 0) ==
				      (stargemm__operand_owner(&r.c, x0->i, x0->j) == 0);
		if (x0->info.device >= 0 && x0->info.device < G)
			per_device[x0->info.device]++;
		/* in core a C pack has one batch: it opens the pack unless scaled first */
		opens_ok &= b->opens_c == !idle[pc->row_group[x0->i] +
						pc->col_group[x0->j] * pc->gmt];
		for (int64_t q = b->first; q < b->first + b->count; q++) {
			const struct stargemm__product *x = &wl.products[q];
			const int32_t *sl = &wl.slots[3 * q];
			int64_t t = x->i + x->j * p.mt;

			int64_t u = pc->row_group[x->i] + pc->col_group[x->j] * pc->gmt;

			batch_ok &= pc->row_group[x->i] == pc->row_group[x0->i] &&
				    pc->col_group[x->j] == pc->col_group[x0->j] &&
				    x->first == (!idle[u] && chain[t] < 0) &&
				    x->info.device == x0->info.device;
			slots_ok &= in_pack(batch_ref(&wl, b, sl[0]), pa, ta, STARGEMM_OP_A, x->i,
					    x->k) &&
				    in_pack(batch_ref(&wl, b, sl[1]), pb, tb, STARGEMM_OP_B, x->k,
					    x->j) &&
				    in_pack(batch_ref(&wl, b, sl[2]), pc, 0, STARGEMM_OP_C, x->i, x->j);
			order_ok &= x->k > chain[t];
			chain[t] = x->k;
		}
	}
	snprintf(name, sizeof(name), "packed %dx%d %c%c density %.2f: %lld products in %lld "
		 "batches over %lld x %lld C packs, as many as unpacked (%lld)", P, Q,
		 ta ? 'T' : 'N', tb ? 'T' : 'N', density, (long long)wl.nproducts,
		 (long long)wl.nbatches, (long long)pc->gmt, (long long)pc->gnt,
		 (long long)plain.nproducts);
	tap_ok_detail(pc->gmt > 1 && pc->gmt < p.mt && wl.nproducts == plain.nproducts &&
	   wl.flops == plain.flops, name, "");
	tap_ok_detail(lay_ok, "  layouts: present tiles back to back, groups of >= 60 elements", "");
	tap_ok_detail(batch_ok && order_ok, "  each batch writes one C pack; beta at each tile's first "
	   "update outside the scaled packs; chains in increasing k", "");
	tap_ok_detail(slots_ok && distinct_ok, "  slots name the packs of each product's tiles, distinct",
	   "");
	snprintf(name, sizeof(name), "  a scale for each of the %lld C packs with a present tile "
		 "no product updates", (long long)nscales);
	tap_ok_detail(wl.scale_count == nscales, name, "");
	tap_ok_detail(opens_ok && stargemm__worklist_opens_write(&wl), "  each C pack's batch opens it "
	   "(written only with beta = 0), but in a scaled pack", "");
	for (int g = 0; g < G; g++)
		devices_ok &= per_device[g] > 0;
	snprintf(name, sizeof(name), "  rank 0's batches on its %d device(s), each with some, "
		 "the other ranks' on none", G);
	tap_ok_detail(devices_ok, name, "");
	free(chain);
	free(idle);
	free(sa);
	free(sb);
	free(sc);
	free(rp);
	free(cp);
	stargemm__pack_free(pa);
	stargemm__pack_free(pb);
	stargemm__pack_free(pc);
	stargemm__axis_free(&rows);
	stargemm__axis_free(&cols);
	stargemm__worklist_free(&plain);
	stargemm__worklist_free(&wl);
	free_problem(&p);
}

/* A packed operand's distribution: its pack groups dealt cyclically (src/matrix.c). */
static void pack_axes(const struct stargemm__packing *pk, int64_t mt, int64_t nt, int P, int Q,
		      struct stargemm__axis *rows, struct stargemm__axis *cols)
{
	int *rp = malloc((size_t)mt * sizeof(int)), *cp = malloc((size_t)nt * sizeof(int));

	stargemm__pack_cyclic(pk->row_group, mt, P, rp);
	stargemm__pack_cyclic(pk->col_group, nt, Q, cp);
	stargemm__axis_init(rows, mt, P, rp, "rows");
	stargemm__axis_init(cols, nt, Q, cp, "cols");
	free(rp);
	free(cp);
}

/* Whether the products of batch @p b lie in one pack product and carry its task info,
 * and the batch's buffers 0, 1, 2 are its op(A), op(B) and C packs. */
/* A batch of the list over packs: the pack products of one chunk over one C pack;
 * its buffers the op(A) and op(B) packs of each (2g, 2g + 1), then the C pack (last);
 * every product names them, with the batch's info (class ALL when several). */
static int pack_batch_ok(const struct stargemm__worklist *wl, const struct stargemm__batch *b,
			 const struct stargemm__packing *pk[3], const int trans[3])
{
	const struct stargemm__product *x0 = &wl->products[b->first];
	int good = b->nrefs >= 3 && b->nrefs % 2 == 1;
	int32_t c = (int32_t)b->nrefs - 1;

	for (int64_t e = 0; e < b->nrefs; e++)
		good &= batch_ref(wl, b, e)->operand == (e == c ? STARGEMM_OP_C
							 : e % 2 ? STARGEMM_OP_B : STARGEMM_OP_A);
	good &= x0->info.prefetch == STARGEMM_PREFETCH_ALL || b->nrefs == 3;
	for (int64_t q = b->first; q < b->first + b->count && good; q++) {
		const struct stargemm__product *x = &wl->products[q];
		const int32_t *sl = &wl->slots[3 * q];

		good &= x->info.device == x0->info.device && x->info.block == x0->info.block &&
			x->info.chunk == x0->info.chunk && x->info.prefetch == x0->info.prefetch &&
			sl[0] % 2 == 0 && sl[0] < c && sl[1] == sl[0] + 1 && sl[2] == c &&
			in_pack(batch_ref(wl, b, sl[0]), pk[0], trans[0], STARGEMM_OP_A, x->i, x->k) &&
			in_pack(batch_ref(wl, b, sl[1]), pk[1], trans[1], STARGEMM_OP_B, x->k, x->j) &&
			in_pack(batch_ref(wl, b, sl[2]), pk[2], 0, STARGEMM_OP_C, x->i, x->j);
	}
	return good;
}

/* One batch per C pack per chunk. */
static int pack_chunk_batches_ok(const struct stargemm__worklist *wl,
				 const struct stargemm__packing *pc)
{
	int64_t *seen = malloc((size_t)(pc->gmt * pc->gnt) * sizeof(*seen));
	int good = seen != NULL;

	for (int64_t u = 0; good && u < pc->gmt * pc->gnt; u++)
		seen[u] = -1;
	for (int64_t n = 0; good && n < wl->nchunks; n++)
		for (int64_t b = wl->chunks[n].batch_first;
		     b < wl->chunks[n].batch_first + wl->chunks[n].batch_count; b++) {
			const struct stargemm__batch *x = &wl->batches[b];
			const struct stargemm__tile_ref *c = batch_ref(wl, x, x->nrefs - 1);

			good &= seen[c->r + c->c * pc->gmt] != n;
			seen[c->r + c->c * pc->gmt] = n;
		}
	free(seen);
	return good;
}

/* The chunks' products and batches line up: consecutive, each chunk's products those
 * of its batches, numbered with the chunk. */
static int pack_chunks_ok(const struct stargemm__worklist *wl)
{
	int64_t next_product = 0, next_batch = 0;
	int good = 1;

	for (int64_t n = 0; n < wl->nchunks; n++) {
		const struct stargemm__chunk *ch = &wl->chunks[n];

		good &= ch->first == next_product && ch->batch_first == next_batch;
		for (int64_t b = ch->batch_first; b < ch->batch_first + ch->batch_count; b++) {
			good &= wl->batches[b].first == next_product;
			next_product += wl->batches[b].count;
		}
		for (int64_t q = ch->first; q < ch->first + ch->count; q++)
			good &= wl->products[q].info.chunk == n;
		good &= ch->first + ch->count == next_product;
		next_batch += ch->batch_count;
	}
	return good && next_product == wl->nproducts && next_batch == wl->nbatches;
}

/* Chains in one k order; each C tile's first update applies beta unless its pack is
 * scaled first; the scales are the C packs with a present tile no product updates;
 * the first batch over each other C pack opens it. */
static int pack_chains_ok(const struct stargemm__worklist *wl, const struct stargemm__packing *pc,
			  const uint8_t *present, int64_t mt, int64_t nt)
{
	int64_t *chain = malloc((size_t)(mt * nt) * sizeof(*chain));
	int64_t *before = malloc((size_t)(mt * nt) * sizeof(*before));
	uint8_t *bare = calloc((size_t)(pc->gmt * pc->gnt), 1);
	int64_t nbare = 0;
	int good = chain && before && bare;

	for (int64_t t = 0; good && t < mt * nt; t++)
		chain[t] = before[t] = -1;
	for (int64_t q = 0; good && q < wl->nproducts; q++) {
		const struct stargemm__product *x = &wl->products[q];
		int64_t t = x->i + x->j * mt;

		good &= chain_continues(before[t], chain[t], x->k);
		before[t] = chain[t];
		chain[t] = x->k;
	}
	for (int64_t j = 0; good && j < nt; j++)
		for (int64_t i = 0; i < mt; i++)
			if (present[i + j * mt] && chain[i + j * mt] < 0)
				bare[pc->row_group[i] + pc->col_group[j] * pc->gmt] = 1;
	for (int64_t t = 0; good && t < mt * nt; t++)
		chain[t] = -1;
	for (int64_t q = 0; good && q < wl->nproducts; q++) {
		const struct stargemm__product *x = &wl->products[q];
		int64_t t = x->i + x->j * mt;

		good &= x->first == (chain[t] < 0 && !bare[pc->row_group[x->i] +
							     pc->col_group[x->j] * pc->gmt]);
		chain[t] = x->k;
	}
	for (int64_t u = 0; good && u < pc->gmt * pc->gnt; u++)
		nbare += bare[u];
	good &= wl->scale_count == nbare;
	/* the first batch over each C pack not scaled first opens it, no other batch */
	for (int64_t b = 0; good && b < wl->nbatches; b++) {
		const struct stargemm__tile_ref *c = batch_ref(wl, &wl->batches[b],
							       wl->batches[b].nrefs - 1);
		uint8_t *mark = &bare[c->r + c->c * pc->gmt];

		good &= wl->batches[b].opens_c == (*mark == 0);
		*mark = *mark ? *mark : 2;
	}
	for (int64_t e = wl->scale_first; good && e < wl->scale_first + wl->scale_count; e++)
		good &= wl->refs[e].operand == STARGEMM_OP_C &&
			bare[wl->refs[e].r + wl->refs[e].c * pc->gmt];
	free(chain);
	free(before);
	free(bare);
	return good;
}

/* The full rectangle of each of @p pk's packs, in elements (stored offsets @p ro, @p co). */
static int64_t *rectangles(const struct stargemm__packing *pk, const int64_t *ro,
			   const int64_t *co)
{
	int64_t *e = malloc((size_t)(pk->gmt * pk->gnt) * sizeof(*e));

	for (int64_t J = 0; e && J < pk->gnt; J++)
		for (int64_t I = 0; I < pk->gmt; I++)
			e[I + J * pk->gmt] = (ro[pk->row_first[I + 1]] - ro[pk->row_first[I]]) *
					     (co[pk->col_first[J + 1]] - co[pk->col_first[J]]);
	return e;
}

/* The footprint of the list over packs counts each pack's present tiles: at most the
 * rectangles' on every device, less in all, and the rectangles' when each pack's
 * elements are said to be its rectangle (so each pack's count is looked up where it is,
 * transposed operands included). */
static int pack_footprint_ok(const struct stargemm__worklist *units, struct stargemm__units *u,
			     const struct problem *p, const struct stargemm__packing *pk[3],
			     const int trans[3])
{
	int G = units->ndevices, good = 1;
	int64_t *rect = calloc((size_t)G, sizeof(int64_t)), *packs = calloc((size_t)G, sizeof(int64_t));
	int64_t *same = calloc((size_t)G, sizeof(int64_t)), sum_rect = 0, sum_packs = 0;
	const int64_t *ro[3] = { trans[0] ? p->k_off : p->row_off, trans[1] ? p->col_off : p->k_off,
				 p->row_off };
	const int64_t *co[3] = { trans[0] ? p->row_off : p->k_off, trans[1] ? p->k_off : p->col_off,
				 p->col_off };
	struct stargemm__operand *x[3] = { &u->r.a, &u->r.b, &u->r.c };
	const int64_t *kept[3];
	int64_t *e[3];

	good &= !stargemm__worklist_footprint(units, u->r.row_off, u->r.col_off, u->r.k_off, 8,
					      rect) &&
		!stargemm__worklist_footprint_of(units, &u->r, 8, packs);
	for (int o = 0; o < 3; o++) {
		kept[o] = x[o]->elems;
		x[o]->elems = e[o] = rectangles(pk[o], ro[o], co[o]);
	}
	good &= !stargemm__worklist_footprint_of(units, &u->r, 8, same);
	for (int o = 0; o < 3; o++) {
		x[o]->elems = kept[o];
		free(e[o]);
	}
	for (int g = 0; g < G; g++) {
		good &= packs[g] <= rect[g] && same[g] == rect[g];
		sum_rect += rect[g];
		sum_packs += packs[g];
	}
	good &= sum_packs < sum_rect;
	free(rect);
	free(packs);
	free(same);
	return good;
}

/* Packed operands out of core (src/packlist.c): the problem over packs has the packs
 * as tiles, with their owners; its list, planned in blocks and chunks of packs and
 * expanded, has the in-core list's products, every batch one pack product with its
 * task info and its three packs as buffers 0, 1, 2, chunks of consecutive batches,
 * chains in one k order with beta on the first update outside scaled packs, and the
 * load model of the list over packs. Packs whose k groups differ do not line up. */
static void packed_ooc_case(int P, int Q, int G, int ta, int tb, double density,
			    unsigned seed, int me)
{
	struct problem p = { .P = P, .Q = Q, .G = G }, pu = { .P = P, .Q = Q, .G = G };
	struct stargemm__axis axes[3][2] = { { { 0 } } };
	const struct stargemm__packing *pk[3];
	struct stargemm__packing *pa, *pb, *pc, *odd;
	struct stargemm__request r;
	struct stargemm__worklist plain, units = { 0 }, wl = { 0 };
	struct stargemm__units u, v;
	uint8_t *sa, *sb, *sc;
	double *want = calloc((size_t)G, sizeof(double)), *got = calloc((size_t)G, sizeof(double));
	int trans[3] = { ta, tb, 0 }, batches_ok = 1, owners_ok = 1, loads_ok = 1, aligned;
	int footprint_ok;
	char name[192];

	small_tilings(&p);
	request(&p, me, G > 1, ta, tb, 0, &r);
	sa = pattern(p.mt * p.kt, density, &seed);
	sb = pattern(p.kt * p.nt, density, &seed);
	sc = pattern(p.mt * p.nt, 0.9, &seed);
	pa = ta ? layout(p.kt, p.mt, p.k_off, p.row_off, sa) : layout(p.mt, p.kt, p.row_off,
								       p.k_off, sa);
	pb = tb ? layout(p.nt, p.kt, p.col_off, p.k_off, sb) : layout(p.kt, p.nt, p.k_off,
								       p.col_off, sb);
	pc = layout(p.mt, p.nt, p.row_off, p.col_off, sc);
	pk[0] = pa;
	pk[1] = pb;
	pk[2] = pc;
	pack_axes(pa, ta ? p.kt : p.mt, ta ? p.mt : p.kt, P, Q, &axes[0][0], &axes[0][1]);
	pack_axes(pb, tb ? p.nt : p.kt, tb ? p.kt : p.nt, P, Q, &axes[1][0], &axes[1][1]);
	pack_axes(pc, p.mt, p.nt, P, Q, &axes[2][0], &axes[2][1]);
	r.a = (struct stargemm__operand){ .grid = { .P = P, .Q = Q }, .trans = ta, .present = sa,
					  .ld = ta ? p.kt : p.mt, .rows = &axes[0][0],
					  .cols = &axes[0][1], .pack = pa };
	r.b = (struct stargemm__operand){ .grid = { .P = P, .Q = Q }, .trans = tb, .present = sb,
					  .ld = tb ? p.nt : p.kt, .rows = &axes[1][0],
					  .cols = &axes[1][1], .pack = pb };
	r.c = (struct stargemm__operand){ .grid = { .P = P, .Q = Q }, .present = sc, .ld = p.mt,
					  .rows = &axes[2][0], .cols = &axes[2][1], .pack = pc };
	if (stargemm__inspect(&r, &plain) || stargemm__pack_units(&r, &u) != 1) {
		tap_ok_detail(0, "packed out of core: the problem over packs", stargemm_last_error());
		return;
	}
	/* every unit of C owned as its pack's tiles, present when one of them is */
	for (int64_t j = 0; j < p.nt; j++)
		for (int64_t i = 0; i < p.mt; i++) {
			int64_t I = pc->row_group[i], J = pc->col_group[j];

			owners_ok &= stargemm__operand_owner(&u.r.c, I, J) ==
				     stargemm__operand_owner(&r.c, i, j);
			owners_ok &= !sc[i + j * p.mt] || stargemm__operand_present(&u.r.c, I, J);
		}
	pu.mt = u.r.mt;
	pu.nt = u.r.nt;
	pu.kt = u.r.kt;
	if (make_plan(&pu, 40, 2, 2, 2)) {
		tap_ok_detail(0, "packed out of core: a plan over packs", stargemm_last_error());
		return;
	}
	u.r.plan = &pu.plan;
	u.r.tile_bytes = 8;
	if (stargemm__inspect(&u.r, &units) || stargemm__worklist_loads(&units, 1, want)) {
		tap_ok_detail(0, "packed out of core: listed", stargemm_last_error());
		return;
	}
	footprint_ok = pack_footprint_ok(&units, &u, &p, pk, trans);
	if (stargemm__pack_expand(&r, &u, &units, &wl) || stargemm__worklist_loads(&wl, 1, got)) {
		tap_ok_detail(0, "packed out of core: expanded", stargemm_last_error());
		return;
	}
	for (int64_t b = 0; b < wl.nbatches; b++)
		batches_ok &= pack_batch_ok(&wl, &wl.batches[b], pk, trans);
	for (int g = 0; g < G; g++)
		loads_ok &= got[g] == want[g];
	snprintf(name, sizeof(name), "packed out of core %dx%d G=%d %c%c density %.2f rank %d: "
		 "%lld products (in core %lld) in %lld batches, %lld chunks over %lld x %lld x "
		 "%lld packs", P, Q, G, ta ? 'T' : 'N', tb ? 'T' : 'N', density, me,
		 (long long)wl.nproducts, (long long)plain.nproducts, (long long)wl.nbatches,
		 (long long)wl.nchunks, (long long)u.r.mt, (long long)u.r.nt, (long long)u.r.kt);
	tap_ok_detail(wl.nproducts == plain.nproducts && wl.flops == plain.flops && wl.nchunks > 2 &&
	   wl.throttled && wl.units && u.r.mt == pc->gmt && u.r.nt == pc->gnt, name, "");
	tap_ok_detail(owners_ok, "  C's packs are the units, with their tiles' owner", "");
	tap_ok_detail(batches_ok, "  every batch a chunk's pack products over one C pack: their info, "
	   "their A and B packs, the C pack", "");
	tap_ok_detail(pack_chunk_batches_ok(&wl, pc), "  one batch per C pack and chunk", "");
	tap_ok_detail(pack_chunks_ok(&wl), "  chunks of consecutive batches", "");
	tap_ok_detail(pack_chains_ok(&wl, pc, sc, p.mt, p.nt), "  chains in one k order, beta on the "
	   "first update outside the scaled packs, which lack updates; the first batch over "
	   "each other pack opens it", "");
	snprintf(name, sizeof(name), "  the opening batch %s its C pack (%s)",
		 G > 1 ? "reads and writes" : "only writes", G > 1 ? "GPUs" : "CPU");
	tap_ok_detail(stargemm__worklist_opens_write(&wl) == (G == 1), name, "");
	tap_ok_detail(loads_ok, "  the load model counts packs (the list over packs')", "");
	tap_ok_detail(footprint_ok, "  the footprint counts each pack's present tiles, not its rectangle", "");
	/* A's k groups cut apart from B's: no problem over packs */
	odd = ta ? layout(p.kt, p.mt, p.k_off, p.row_off, sa) : layout(p.mt, p.kt, p.row_off,
								        p.k_off, sa);
	for (int64_t e = 0; odd && e < odd->gnt + 1 && !ta; e++)
		odd->col_first[e] = e < odd->gnt ? e : p.kt;
	for (int64_t e = 0; odd && e < odd->gmt + 1 && ta; e++)
		odd->row_first[e] = e < odd->gmt ? e : p.kt;
	r.a.pack = odd;
	if ((aligned = stargemm__pack_units(&r, &v)) == 1)
		stargemm__pack_units_free(&v);
	tap_ok_detail(aligned == 0, "  A's k groups unlike B's: not lined up", "");
	stargemm__pack_free(odd);
	stargemm__pack_units_free(&u);
	stargemm__worklist_free(&wl);
	stargemm__worklist_free(&plain);
	for (int o = 0; o < 3; o++) {
		stargemm__axis_free(&axes[o][0]);
		stargemm__axis_free(&axes[o][1]);
	}
	stargemm__pack_free(pa);
	stargemm__pack_free(pb);
	stargemm__pack_free(pc);
	free(sa);
	free(sb);
	free(sc);
	free(want);
	free(got);
	free_problem(&p);
}

/* stargemm_balanced_columns() against a brute-force count of each column's flops:
 * the columns sorted by (weight, index) go to 0..Q-1, Q-1..0, ...; the process
 * columns' loads end closer than cyclic's; bad input is refused. */
static void balanced_columns(void)
{
	enum { MT = 9, KT = 11, NT = 23, Q = 4 };
	int64_t rs[MT], ks[KT], ns[NT], la[2 * MT * KT], lb[2 * KT * NT], na = 0, nb = 0;
	int proc[NT], want[NT], order[NT], good = 1;
	double f[NT] = { 0 }, load[Q] = { 0 }, cyc[Q] = { 0 }, max = 0, cmax = 0;
	unsigned seed = 21;

	for (int i = 0; i < MT; i++)
		rs[i] = 5 + 7 * i % 13;
	for (int k = 0; k < KT; k++)
		ks[k] = 3 + 5 * k % 11;
	for (int j = 0; j < NT; j++)
		ns[j] = 4 + 9 * j % 17;
	for (int k = 0; k < KT; k++)
		for (int i = 0; i < MT; i++)
			if (rand_r(&seed) % 3 == 0) {
				la[2 * na] = i;
				la[2 * na++ + 1] = k;
			}
	for (int j = 0; j < NT; j++)
		for (int k = 0; k < KT; k++)
			if (rand_r(&seed) % 2 == 0) {
				lb[2 * nb] = k;
				lb[2 * nb++ + 1] = j;
			}
	struct stargemm_pattern A = { MT, KT, rs, ks, na, la }, B = { KT, NT, ks, ns, nb, lb };

	for (int64_t x = 0; x < na; x++)
		for (int64_t y = 0; y < nb; y++)
			if (la[2 * x + 1] == lb[2 * y])
				f[lb[2 * y + 1]] += 2.0 * (double)(rs[la[2 * x]] * ks[lb[2 * y]] *
								   ns[lb[2 * y + 1]]);
	for (int j = 0; j < NT; j++)    /* insertion sort by (weight, index) */
		for (int t = j; t >= 0; t--)
			if (t == 0 || f[order[t - 1]] < f[j] || (f[order[t - 1]] == f[j])) {
				order[t] = j;
				break;
			} else {
				order[t] = order[t - 1];
			}
	for (int t = 0; t < NT; t++)
		want[order[t]] = t / Q % 2 ? Q - 1 - t % Q : t % Q;
	tap_ok_detail(stargemm_balanced_columns(&A, &B, Q, proc) == 0, "balanced columns: computed",
	   stargemm_last_error());
	for (int j = 0; j < NT; j++) {
		good &= proc[j] == want[j];
		load[proc[j]] += f[j];
		cyc[j % Q] += f[j];
	}
	for (int q = 0; q < Q; q++) {
		max = load[q] > max ? load[q] : max;
		cmax = cyc[q] > cmax ? cyc[q] : cmax;
	}
	tap_ok_detail(good, "  sorted by flops, dealt in mirrored cyclic order", "");
	printf("# balanced columns: heaviest process column %.0f flops, cyclic %.0f\n", max,
	       cmax);
	tap_ok_detail(max <= cmax, "  the heaviest process column is no heavier than cyclic's", "");
	B.row_sizes = rs;
	tap_ok_detail(stargemm_balanced_columns(&A, &B, Q, proc) == -EINVAL &&
	   strstr(stargemm_last_error(), "the tilings must match"), "  refused: tilings differ",
	   stargemm_last_error());
	B.row_sizes = ks;
	lb[0] = KT;
	tap_ok_detail(stargemm_balanced_columns(&A, &B, Q, proc) == -EINVAL &&
	   strstr(stargemm_last_error(), "lies outside"), "  refused: a tile out of range",
	   stargemm_last_error());
	lb[0] = 0;
	tap_ok_detail(stargemm_balanced_columns(&A, &B, 0, proc) == -EINVAL &&
	   strstr(stargemm_last_error(), "Q = 0"), "  refused: Q < 1", stargemm_last_error());
}

/* ---- footprints and fitted plans (src/worklist.c, src/fit.c) ------------------- */

/* Distinct tiles device @p g reads in chunk @p n (inputs), or the C tiles block @p blk
 * updates on it (@p n < 0). */
static int64_t distinct_tiles(const struct problem *p, const struct stargemm__worklist *wl,
			      int g, int64_t n, int64_t blk, char *seen)
{
	int64_t na = p->mt * p->kt, nb = p->kt * p->nt, count = 0;
	int64_t n0 = n >= 0 ? n : wl->blocks[blk].first_chunk;
	int64_t n1 = n >= 0 ? n : n0 + wl->blocks[blk].nchunks - 1;

	memset(seen, 0, (size_t)(na + nb + p->mt * p->nt));
	for (int64_t c = n0; c <= n1; c++)
		for (int64_t q = wl->chunks[c].first;
		     q < wl->chunks[c].first + wl->chunks[c].count; q++) {
			const struct stargemm__product *x = &wl->products[q];

			if (x->info.device != g)
				continue;
			if (n < 0) {
				count += !seen[na + nb + x->i + x->j * p->mt]++;
			} else {
				count += !seen[x->i + x->k * p->mt]++;
				count += !seen[na + x->k + x->j * p->kt]++;
			}
		}
	return count;
}

/* The footprint of a list of equal tiles of @p area elements is, per device, the most
 * over the chunks of the window's inputs (chunk by chunk, the window within a block)
 * and the C tiles of the block, times the tile's bytes. */
static void footprint_equal(const char *label, struct problem *p, int64_t area)
{
	struct stargemm__request r;
	struct stargemm__worklist wl;
	char *seen = malloc((size_t)(p->mt * p->kt + p->kt * p->nt + p->mt * p->nt));
	int64_t peak[64], want[64] = { 0 };
	char name[200];

	request(p, 0, 1, 0, 0, 1, &r);
	if (stargemm__inspect(&r, &wl)) {
		tap_ok_detail(0, "footprint: inspected", stargemm_last_error());
		free(seen);
		return;
	}
	for (int64_t n = 0; n < wl.nchunks; n++)
		for (int g = 0; g < p->G; g++) {
			int64_t blk = wl.chunks[n].block, n0 = n - wl.lookahead;
			int64_t t = distinct_tiles(p, &wl, g, -1, blk, seen);

			while (n0 < 0 || wl.chunks[n0].block != blk)
				n0++;
			for (int64_t c = n0; c <= n; c++)
				t += distinct_tiles(p, &wl, g, c, 0, seen);
			want[g] = t * area * 8 > want[g] ? t * area * 8 : want[g];
		}
	tap_ok_detail(stargemm__worklist_footprint(&wl, p->row_off, p->col_off, p->k_off, 8, peak) == 0,
	   "footprint: measured", "");
	for (int g = 0; g < p->G; g++) {
		snprintf(name, sizeof(name), "%s device %d: footprint %lld bytes = the window's "
			 "tiles %lld x %lld bytes", label, g, (long long)peak[g],
			 (long long)(want[g] / (area * 8)), (long long)(area * 8));
		tap_ok_detail(peak[g] == want[g], name, "");
	}
	stargemm__worklist_free(&wl);
	free(seen);
}

static void footprints(void)
{
	static const struct { int64_t n, t; int G; int64_t mem; } cases[] = {
		{ 16384, 1024, 1, 60 }, { 16384, 1024, 3, 300 }, { 12288, 1024, 6, 100 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct problem p = { .P = 1, .Q = 1, .G = cases[c].G };
		char label[64];

		p.row_off = regular(cases[c].n, cases[c].t, &p.mt);
		p.col_off = regular(cases[c].n, cases[c].t, &p.nt);
		p.k_off = regular(cases[c].n, cases[c].t, &p.kt);
		snprintf(label, sizeof(label), "N=%lld G=%d", (long long)cases[c].n, p.G);
		if (make_plan(&p, cases[c].mem, 0, 0, 0) == 0)
			footprint_equal(label, &p, cases[c].t * cases[c].t);
		else
			tap_ok_detail(0, "footprint plan", stargemm_last_error());
		free_problem(&p);
	}
}

/* The problem of the holds' footprint cases: 300 x 300 in tiles of 100, K = @p k in
 * tiles of 100 (a ragged last one), one device of 10 tiles, chunks of depth @p d (0:
 * the plan's); A's pattern empty, returned (NULL: out of memory), B dense. */
static uint8_t *holds_problem(struct problem *p, int64_t k, int64_t d,
			      struct stargemm__request *r)
{
	uint8_t *a;

	p->row_off = regular(300, 100, &p->mt);
	p->col_off = regular(300, 100, &p->nt);
	p->k_off = regular(k, 100, &p->kt);
	make_plan(p, 10, 0, 0, d);
	request(p, 0, 1, 0, 0, 1, r);
	a = calloc((size_t)(p->mt * p->kt), 1);
	r->a.present = a;
	r->a.ld = p->mt;
	return a;
}

/* Block @p b's bytes in the holds' footprint cases, where A's tiles lie at k = 0 and at
 * the ragged K only: its C tiles (100 x 100), its held tiles (100 x 50 or 50 x 100) and
 * the distinct op(A) and op(B) tiles its products read at k = 0 (100 x 100), the only
 * ones not held. -1: out of memory. */
static int64_t holds_want(const struct stargemm__worklist *wl, int64_t b, int64_t mt,
			  int64_t nt)
{
	uint8_t *seen = calloc((size_t)(mt * nt + mt + nt), 1);
	int64_t tiles = 0;

	if (!seen)
		return -1;
	for (int64_t q = 0; q < wl->nproducts; q++) {
		const struct stargemm__product *x = &wl->products[q];
		int64_t idx[3] = { x->i + x->j * mt, mt * nt + x->i, mt * nt + mt + x->j };

		for (int o = 0; o < 3 && x->info.block == b; o++)
			if ((o == 0 || x->k == 0) && !seen[idx[o]]) {
				seen[idx[o]] = 1;
				tiles++;
			}
	}
	free(seen);
	return tiles * 100 * 100 * 8 + wl->blocks[b].hold_count * 100 * 50 * 8;
}

/* A ragged last K tile's A and B tiles are held for a whole block where products read
 * them, and the footprint counts them with the block's C tiles. With A empty, nothing
 * is held and the footprint is nothing; with A present at the ragged K only, a block
 * keeps its C tiles (100 x 100) and its held A and B tiles (100 x 50, 50 x 100). */
static void footprint_holds(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm__request r;
	struct stargemm__worklist wl;
	uint8_t *a = holds_problem(&p, 250, 0, &r);

	if (!a)
		tap_ok_detail(0, "footprint of holds: the problem", "out of memory");
	for (int present = 0; a && present < 2; present++) {
		int64_t peak[1], held = 0, want = 0;

		for (int64_t i = 0; i < p.mt; i++)
			a[i + (p.kt - 1) * p.mt] = (uint8_t)present;
		if (stargemm__inspect(&r, &wl)) {
			tap_ok_detail(0, "footprint of holds: inspected", stargemm_last_error());
			break;
		}
		for (int64_t b = 0; b < wl.nblocks; b++) {
			int64_t sum = holds_want(&wl, b, p.mt, p.nt);

			held += wl.blocks[b].hold_count;
			want = sum > want ? sum : want;
		}
		tap_ok_detail(wl.holds && (present ? wl.nproducts > 0 && held > 0 : wl.nproducts == 0 &&
				held == 0) &&
		   stargemm__worklist_footprint(&wl, p.row_off, p.col_off, p.k_off, 8, peak) == 0 &&
		   peak[0] == want, present ? "footprint: A at the ragged K only, its C tiles and "
		   "held tiles" : "footprint: A empty, no tile of the ragged K held", "");
		stargemm__worklist_free(&wl);
	}
	free(a);
	free_problem(&p);
}

/* Holds count with their block, in every chunk of it: A at k = 0 and at the ragged K
 * only (6 chunks of depth 1 per block, the middle ones empty, more than the lookahead
 * window), so that the chunk of k = 0 is in flight while the ragged K's tiles are held
 * but not read. Counted with the chunk that reads them, as the other inputs are, the
 * peak would miss either the held tiles or the k = 0 inputs. */
static void footprint_window(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm__request r;
	struct stargemm__worklist wl;
	int64_t peak[1], want = 0, held = 0;
	uint8_t *a = holds_problem(&p, 550, 1, &r);

	for (int64_t i = 0; a && i < p.mt; i++)
		a[i] = a[i + (p.kt - 1) * p.mt] = 1;
	if (!a || stargemm__inspect(&r, &wl)) {
		tap_ok_detail(0, "footprint of holds over chunks: inspected", stargemm_last_error());
		free(a);
		free_problem(&p);
		return;
	}
	for (int64_t b = 0; b < wl.nblocks; b++) {
		int64_t w = holds_want(&wl, b, p.mt, p.nt);

		want = w > want ? w : want;
		held += wl.blocks[b].hold_count;
	}
	tap_ok_detail(wl.holds && held > 0 && wl.nchunks == 6 * wl.nblocks && wl.lookahead + 1 < 5 &&
	   want > 0 &&
	   stargemm__worklist_footprint(&wl, p.row_off, p.col_off, p.k_off, 8, peak) == 0 &&
	   peak[0] == want, "footprint: held tiles counted in every chunk of their block", "");
	stargemm__worklist_free(&wl);
	free(a);
	free_problem(&p);
}

/* A "reduction" that says another rank needs a third more than this one. */
static int other_rank_more(int64_t *value, void *arg)
{
	(void)arg;
	*value += *value / 3;
	return 0;
}

/* The plan request of @p p for tiles of @p largest elements of 8 bytes and a device of
 * @p device_bytes. */
static struct stargemm_plan_request plan_request(const struct problem *p, int64_t largest,
						 int64_t device_bytes)
{
	struct stargemm_plan_request pr = { .mt = p->mt, .nt = p->nt, .kt = p->kt,
					    .tile_bytes = largest * largest * 8, .P = p->P,
					    .Q = p->Q, .devices = p->G,
					    .device_bytes = device_bytes };
	return pr;
}

/* Fit @p p's list (request @p r) to @p pr: returns the fit's outcome, @p plan, @p wl. */
static int fit(struct stargemm_plan_request *pr, struct stargemm__request *r,
	       int (*max)(int64_t *, void *), struct stargemm__fit *f,
	       struct stargemm_plan *plan, struct stargemm__worklist *wl)
{
	*f = (struct stargemm__fit){ .pr = pr, .r = r, .elem = 8, .max_over_ranks = max };
	return stargemm__fit_plan(f, plan, wl);
}

/* Dense equal tiles: the list fills what the plan counted, nothing is refitted. */
static void fit_dense(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 2 };
	struct stargemm_plan_request pr;
	struct stargemm_plan dense, plan;
	struct stargemm__request r;
	struct stargemm__worklist wl, w0;
	struct stargemm__fit f;

	p.row_off = regular(16384, 1024, &p.mt);
	p.col_off = regular(16384, 1024, &p.nt);
	p.k_off = regular(16384, 1024, &p.kt);
	pr = plan_request(&p, 1024, 300LL * 1024 * 1024 * 8);
	stargemm_plan_compute(&pr, &dense);
	p.plan = dense;
	request(&p, 0, 1, 0, 0, 1, &r);
	stargemm__inspect(&r, &w0);
	tap_ok_detail(fit(&pr, &r, NULL, &f, &plan, &wl) == 0 && !f.fitted && f.tries == 1 &&
	   plan.b == dense.b && plan.c == dense.c && plan.d == dense.d && same_sequence(&wl, &w0),
	   "fit: dense equal tiles keep the dense plan and list, one inspection", "");
	tap_ok_detail(plan.footprint_bytes == f.footprint && f.footprint <= pr.device_bytes,
	   "fit: the plan reports its list's footprint, within the device", "");
	tap_ok_detail(!w0.mixed_shapes, "  equal tiles: one shape per axis (the loads are prefetched)", "");
	stargemm__worklist_free(&wl);
	stargemm__worklist_free(&w0);
	free_problem(&p);
}

/* A ragged last tile leaves one shape per axis (src/execute.c prefetches the loads). */
static void ragged_shapes(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm_plan_request pr;
	struct stargemm__request r;
	struct stargemm__worklist wl;

	p.row_off = regular(10000, 1024, &p.mt);
	p.col_off = regular(9000, 1024, &p.nt);
	p.k_off = regular(11000, 1024, &p.kt);
	pr = plan_request(&p, 1024, 100LL * 1024 * 1024 * 8);
	stargemm_plan_compute(&pr, &p.plan);
	request(&p, 0, 1, 0, 0, 1, &r);
	tap_ok_detail(stargemm__inspect(&r, &wl) == 0 && !wl.mixed_shapes,
	   "ragged last tiles: one shape per axis", stargemm_last_error());
	stargemm__worklist_free(&wl);
	free_problem(&p);
}

/* One C block already: a smaller unit only deepens the chunks, which loads as many
 * tiles, so the dense plan stays (after trying). */
static void fit_same_loads(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm_plan_request pr;
	struct stargemm_plan dense, plan;
	struct stargemm__request r;
	struct stargemm__worklist wl;
	struct stargemm__fit f;
	unsigned seed = 41;
	uint8_t *pa, *pb;

	p.row_off = regular(8 * 1024, 1024, &p.mt);
	p.col_off = regular(8 * 1024, 1024, &p.nt);
	p.k_off = regular(40 * 1024, 1024, &p.kt);
	pr = plan_request(&p, 1024, 100LL * 1024 * 1024 * 8);
	stargemm_plan_compute(&pr, &dense);
	p.plan = dense;
	request(&p, 0, 1, 0, 0, 1, &r);
	pa = pattern(p.mt * p.kt, 0.5, &seed);
	pb = pattern(p.kt * p.nt, 0.5, &seed);
	r.a.present = pa;
	r.a.ld = p.mt;
	r.b.present = pb;
	r.b.ld = p.kt;
	tap_ok_detail(fit(&pr, &r, NULL, &f, &plan, &wl) == 0 && dense.X * dense.Y == 1 && !f.fitted &&
	   f.tries > 1 && plan.b == dense.b && plan.c == dense.c && plan.d == dense.d &&
	   plan.tile_bytes == pr.tile_bytes,
	   "fit: one C block, deeper chunks load no fewer tiles: the dense plan stays", "");
	stargemm__worklist_free(&wl);
	free(pa);
	free(pb);
	free_problem(&p);
}

/* Whole plans given (b, c and d) on request @p pr (no overrides) of @p r: the fitted
 * plan, which the planner's count of largest tiles refuses, is taken as given, with its
 * list's footprint; a plan whose list exceeds the device is refused, naming both. */
static void given_plans(struct stargemm_plan_request *pr, struct stargemm__request *r,
			const struct stargemm_plan *fitted)
{
	struct stargemm_plan_request given = *pr;
	struct stargemm_plan plan;
	struct stargemm__worklist wl = { 0 };
	struct stargemm__fit f;
	int refused;

	given.b = fitted->b;
	given.c = fitted->c;
	given.d = fitted->d;
	given.lookahead = fitted->lookahead;
	refused = stargemm_plan_compute(&given, &plan) == -EINVAL;
	tap_ok_detail(refused && fit(&given, r, NULL, &f, &plan, &wl) == 0 && !f.fitted &&
	   plan.b == fitted->b && plan.c == fitted->c && plan.d == fitted->d &&
	   f.footprint == fitted->footprint_bytes && f.footprint <= pr->device_bytes,
	   "  the fitted plan given whole, refused by the count of largest tiles: taken, "
	   "its list fits", refused ? stargemm_last_error() : "the planner takes it");
	stargemm__worklist_free(&wl);
	given.b = fitted->b * 2 < r->mt ? fitted->b * 2 : r->mt;
	given.c = fitted->c * 2 < r->nt ? fitted->c * 2 : r->nt;
	given.d = r->kt;
	tap_ok_detail(fit(&given, r, NULL, &f, &plan, &wl) == -EINVAL &&
	   strstr(stargemm_last_error(), "for its work list") &&
	   strstr(stargemm_last_error(), "but a device has"),
	   "  a plan given whole whose list exceeds the device: refused, naming both",
	   stargemm_last_error());
	stargemm__worklist_free(&wl);
	given.b = r->mt + 1;
	tap_ok_detail(fit(&given, r, NULL, &f, &plan, &wl) == -EINVAL &&
	   strstr(stargemm_last_error(), "override"),
	   "  a plan given whole beyond the matrix: the planner's error",
	   stargemm_last_error());
	stargemm__worklist_free(&wl);
}

/* The square block-sparse problem of @p tiles tiles a side (sizes 512-2048 in cycles)
 * and A's and B's patterns of @p density into @p p, @p r (its patterns @p pa, @p pb),
 * planned for a device of @p device_mib into p->plan, with its request @p pr. */
static void sparse_problem(struct problem *p, int64_t tiles, int64_t device_mib,
			   double density, unsigned *seed, struct stargemm_plan_request *pr,
			   struct stargemm__request *r, uint8_t **pa, uint8_t **pb)
{
	static const int64_t sizes[] = { 512, 2048, 1280, 768, 1792, 1024, 640, 1536 };

	p->mt = p->nt = p->kt = tiles;
	p->row_off = irregular(tiles, sizes, 8);
	p->col_off = irregular(tiles, sizes + 3, 5);
	p->k_off = irregular(tiles, sizes + 1, 7);
	*pr = plan_request(p, 2048, device_mib * 1024 * 1024);
	stargemm_plan_compute(pr, &p->plan);
	request(p, 0, 1, 0, 0, 1, r);
	*pa = pattern(p->mt * p->kt, density, seed);
	*pb = pattern(p->kt * p->nt, density, seed);
	r->a.present = *pa;
	r->a.ld = p->mt;
	r->b.present = *pb;
	r->b.ld = p->kt;
}

/* The tiles @p wl loads, summed over its devices. */
static double total_loads(const struct stargemm__worklist *wl)
{
	double l[8] = { 0 }, sum = 0;

	stargemm__worklist_loads(wl, 1, l);
	for (int g = 0; g < wl->ndevices; g++)
		sum += l[g];
	return sum;
}

/* Block-sparse operands of irregular tiles: the fitted plan's list fills the device
 * better than the dense plan's, never beyond it, and loads fewer tiles. */
/* One GPU, tiles of several shapes, no lookahead given (src/fit.c,
 * try_longer_lookahead()): the fitted plan @p fitted has the longest lookahead up to 4
 * whose list fits, i.e. 4, or the same blocks and chunks with one more do not fit. */
static void longer_lookahead(struct stargemm_plan_request *pr, struct stargemm__request *r,
			     const struct stargemm_plan *fitted)
{
	struct stargemm_plan_request more = *pr;
	struct stargemm_plan plan;
	struct stargemm__worklist wl = { 0 };
	struct stargemm__fit f;
	int longer_fits = 0;
	char name[200];

	more.b = fitted->b;
	more.c = fitted->c;
	more.d = fitted->d;
	more.lookahead = fitted->lookahead + 1;
	if (fitted->lookahead < 4) {
		longer_fits = fit(&more, r, NULL, &f, &plan, &wl) == 0;
		stargemm__clear_error();
		stargemm__worklist_free(&wl);
	}
	snprintf(name, sizeof(name), "  one GPU: the longest lookahead that fits, up to 4 (%d; "
		 "one more %s)", fitted->lookahead, fitted->lookahead == 4 ? "not tried" :
		 longer_fits ? "fits" : "does not fit");
	tap_ok_detail(fitted->lookahead > 1 && !longer_fits, name, "");
	/* A list whose units run as batches once expanded (packs) keeps its lookahead. */
	f = (struct stargemm__fit){ .pr = pr, .r = r, .elem = 8, .batched = 1 };
	tap_ok_detail(stargemm__fit_plan(&f, &plan, &wl) == 0 && plan.lookahead <= 2,
	   "  batched (packs): no longer lookahead than the planner's", "");
	stargemm__worklist_free(&wl);
	r->plan = NULL;
}

static void fit_sparse(int G, double density, unsigned seed)
{
	struct problem p = { .P = 1, .Q = 1, .G = G };
	struct stargemm_plan_request pr;
	struct stargemm_plan dense, plan, fitted;
	struct stargemm__request r;
	struct stargemm__worklist wl, w0;
	struct stargemm__fit f;
	uint8_t *pa, *pb;
	int64_t peak[8], fp0 = 0;
	double m0, m1;
	char name[200];

	sparse_problem(&p, 24, 3000, density, &seed, &pr, &r, &pa, &pb);
	dense = p.plan;
	stargemm__inspect(&r, &w0);
	stargemm__worklist_footprint(&w0, p.row_off, p.col_off, p.k_off, 8, peak);
	for (int g = 0; g < G; g++)
		fp0 = peak[g] > fp0 ? peak[g] : fp0;
	if (fit(&pr, &r, NULL, &f, &plan, &wl)) {
		tap_ok_detail(0, "fit: sparse", stargemm_last_error());
		return;
	}
	fitted = plan;
	m0 = total_loads(&w0) / G;
	m1 = total_loads(&wl) / G;
	snprintf(name, sizeof(name), "fit: irregular tiles, density %.1f, G=%d: %d lists, "
		 "b=%lld c=%lld d=%lld lookahead=%d (dense plan %lld %lld %lld) fills %.0f%% of "
		 "the device (dense plan: %.0f%%)", density, G, f.tries, (long long)plan.b,
		 (long long)plan.c, (long long)plan.d, plan.lookahead, (long long)dense.b,
		 (long long)dense.c, (long long)dense.d,
		 100.0 * (double)f.footprint / (double)pr.device_bytes,
		 100.0 * (double)fp0 / (double)pr.device_bytes);
	tap_ok_detail(w0.mixed_shapes && wl.mixed_shapes, "  irregular tiles: several shapes (the loads are "
	   "fetched)", "");
	tap_ok_detail(f.fitted && f.footprint <= pr.device_bytes && f.footprint > fp0 &&
	   f.tries <= 14 && plan.footprint_bytes == f.footprint && wl.need_bytes >= f.footprint,
	   name, "");
	tap_ok_detail(stargemm__worklist_fetches_ahead(&wl) == (G == 1) &&
	   (G > 1 ? plan.d > 1 : plan.d == 1), G == 1 ? "  one GPU, loads as fetches: the "
	   "fitted blocks, with chunks one k deep (src/fit.c, try_shallow_chunks())" :
	   "  several GPUs: the fitted chunks stay deeper", "");
	snprintf(name, sizeof(name), "  loads %.1f per device, dense plan's %.1f", m1, m0);
	tap_ok_detail(m1 < m0, name, "");
	tap_ok_detail(wl.nproducts == w0.nproducts && r.plan == &plan,
	   "  the same products; the request points at the fitted plan", "");
	stargemm__worklist_free(&wl);
	if (G == 1)
		longer_lookahead(&pr, &r, &fitted);
	/* Another rank needing more: the plan fits that rank's footprint. */
	tap_ok_detail(fit(&pr, &r, other_rank_more, &f, &plan, &wl) == 0 && f.footprint <= pr.device_bytes,
	   "  a rank needing a third more: the plan fits its footprint", "");
	stargemm__worklist_free(&wl);
	/* Overrides are the user's. */
	pr.b = 2;
	tap_ok_detail(fit(&pr, &r, NULL, &f, &plan, &wl) == 0 && !f.fitted && plan.b == 2 &&
	   f.tries == 1, "  an overridden b is not refitted", "");
	stargemm__worklist_free(&wl);
	given_plans(&pr, &r, &fitted);
	pr.b = 0;
	pr.device_bytes = 2048LL * 2048 * 8;
	tap_ok_detail(fit(&pr, &r, NULL, &f, &plan, &wl) == -EINVAL && f.tries == 0,
	   "  a device below any plan: the planner's error, nothing inspected",
	   stargemm_last_error());
	stargemm__worklist_free(&w0);
	free(pa);
	free(pb);
	free_problem(&p);
}

/* The planner's lookahead of two against one (src/fit.c, try_shorter_lookahead()): the
 * fit keeps the plan fitted with a lookahead of one exactly when its list loads at
 * most 95% of the tiles of the one fitted with two. 28^3 tiles of 512-2048 and 2800
 * MiB: with half of the tiles present the lookahead of one is kept (@p one_expected:
 * 14 x 14 blocks, where two fit 10 x 14), with all of them two (one fits only 10 x 10).
 * GPU lists only: under a RAM budget the planner's lookahead stays. */
static void fit_lookahead(double density, unsigned seed, int one_expected)
{
	struct problem p = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm_plan_request pr;
	struct stargemm_plan plan, one, two;
	struct stargemm__request r;
	struct stargemm__worklist wl, w1, w2;
	struct stargemm__fit f;
	const struct stargemm_plan *kept;
	uint8_t *pa, *pb;
	double l0, l1, l2;
	int fail, choose_one;
	char name[240];

	sparse_problem(&p, 28, 2800, density, &seed, &pr, &r, &pa, &pb);
	fail = fit(&pr, &r, NULL, &f, &plan, &wl);
	pr.lookahead = 1;
	fail = fail || fit(&pr, &r, NULL, &f, &one, &w1);
	pr.lookahead = 2;
	fail = fail || fit(&pr, &r, NULL, &f, &two, &w2);
	if (fail) {
		tap_ok_detail(0, "fit: lookahead", stargemm_last_error());
		return;
	}
	l0 = total_loads(&wl);
	l1 = total_loads(&w1);
	l2 = total_loads(&w2);
	choose_one = l1 <= 0.95 * l2;
	kept = choose_one ? &one : &two;
	snprintf(name, sizeof(name), "fit: density %.1f, lookahead 1: b=%lld c=%lld d=%lld, "
		 "%.0f loads; 2: b=%lld c=%lld d=%lld, %.0f loads; kept lookahead=%d, %.0f loads",
		 density, (long long)one.b, (long long)one.c, (long long)one.d, l1,
		 (long long)two.b, (long long)two.c, (long long)two.d, l2, plan.lookahead, l0);
	tap_ok_detail(plan.lookahead == kept->lookahead && plan.b == kept->b && plan.c == kept->c &&
	   plan.d == kept->d && l0 == (choose_one ? l1 : l2) &&
	   f.footprint <= pr.device_bytes, name, "");
	tap_ok_detail(choose_one == one_expected, one_expected ?
	   "  half of the tiles present: the larger blocks of lookahead 1 load fewer tiles" :
	   "  every tile present: lookahead 1 fits smaller blocks, 2 is kept", "");
	stargemm__worklist_free(&wl);
	/* Under a RAM budget (no GPU) the planner's lookahead stays. */
	r.gpus = 0;
	pr.lookahead = 0;
	tap_ok_detail(fit(&pr, &r, NULL, &f, &plan, &wl) == 0 && plan.lookahead == 2,
	   "  the same lists under a RAM budget: the planner's lookahead of 2 stays", "");
	stargemm__worklist_free(&wl);
	stargemm__worklist_free(&w1);
	stargemm__worklist_free(&w2);
	free(pa);
	free(pb);
	free_problem(&p);
}

/* The rows (@p row set) or columns of block @p blk's C tiles, as a range. */
static void block_range(const struct stargemm__worklist *wl, int64_t blk, int row,
			int64_t *lo, int64_t *hi)
{
	const struct stargemm__block *bk = &wl->blocks[blk];

	*lo = INT64_MAX;
	*hi = -1;
	for (int64_t e = bk->c_first; e < bk->c_first + bk->c_count; e++) {
		int64_t v = row ? wl->refs[e].r : wl->refs[e].c;

		*lo = v < *lo ? v : *lo;
		*hi = v > *hi ? v : *hi;
	}
}

/* Whether the products of block @p blk run in one k direction: increasing when
 * @p up, else decreasing. */
static int block_k_direction(const struct stargemm__worklist *wl, int64_t blk, int up)
{
	const struct stargemm__block *bk = &wl->blocks[blk];
	int64_t prev = -1;

	for (int64_t n = bk->first_chunk; n < bk->first_chunk + bk->nchunks; n++)
		for (int64_t q = wl->chunks[n].first; q < wl->chunks[n].first + wl->chunks[n].count;
		     q++) {
			int64_t k = wl->products[q].k;

			if (prev >= 0 && (up ? k < prev : k > prev))
				return 0;
			prev = k;
		}
	return 1;
}

/* Whether each C tile's chain has exactly one first and one last product, at its
 * ends in list order. */
static int chain_ends_ok(const struct stargemm__worklist *wl, int64_t mt, int64_t nt)
{
	int64_t *last = malloc((size_t)(mt * nt) * sizeof(*last));
	int good = last != NULL;

	for (int64_t t = 0; good && t < mt * nt; t++)
		last[t] = -1;
	for (int64_t q = 0; good && q < wl->nproducts; q++) {
		const struct stargemm__product *x = &wl->products[q];
		int64_t t = x->i + x->j * mt;

		good &= x->first == (last[t] < 0);
		last[t] = q;
	}
	for (int64_t q = 0; good && q < wl->nproducts; q++) {
		const struct stargemm__product *x = &wl->products[q];

		good &= x->last == (last[x->i + x->j * mt] == q);
	}
	free(last);
	return good;
}

/* Block-sparse out of core on GPUs: the serpentine walk. Consecutive blocks share
 * their rows or their columns; k runs up in even blocks and down in odd ones, so each
 * block's last chunk keeps tiles for its successor's first; chains have one first and
 * one last product. A dense list, or one under a RAM budget, keeps the plain walk. */
static void serpentine_walk(unsigned seed)
{
	struct problem p = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm_plan_request pr;
	struct stargemm__request r;
	struct stargemm__worklist wl;
	uint8_t *pa, *pb;
	int shared_ok = 1, dir_ok = 1, kept_ok = 1, plain_ok = 1;
	char name[200];

	sparse_problem(&p, 28, 2800, 0.5, &seed, &pr, &r, &pa, &pb);
	if (stargemm__inspect(&r, &wl)) {
		tap_ok_detail(0, "serpentine walk", stargemm_last_error());
		return;
	}
	for (int64_t b = 0; b < wl.nblocks; b++) {
		dir_ok &= block_k_direction(&wl, b, b % 2 == 0);
		if (b + 1 < wl.nblocks) {
			const struct stargemm__block *bk = &wl.blocks[b];
			const struct stargemm__chunk *ch = &wl.chunks[bk->first_chunk + bk->nchunks - 1];
			int64_t r0, r1, c0, c1, r2, r3, c2, c3;
			int kept = 0;

			block_range(&wl, b, 1, &r0, &r1);
			block_range(&wl, b, 0, &c0, &c1);
			block_range(&wl, b + 1, 1, &r2, &r3);
			block_range(&wl, b + 1, 0, &c2, &c3);
			shared_ok &= (r0 == r2 && r1 == r3) || (c0 == c2 && c1 == c3);
			for (int64_t e = ch->release_first; e < ch->release_first + ch->release_count; e++)
				kept |= wl.refs[e].keep;
			kept_ok &= kept;
		}
	}
	snprintf(name, sizeof(name), "serpentine walk: %lld blocks of %lld chunks, d=%lld, "
		 "lookahead %d", (long long)wl.nblocks, (long long)wl.blocks[0].nchunks,
		 (long long)p.plan.d, wl.lookahead);
	tap_ok_detail(wl.nblocks >= 4 && shared_ok, name, "");
	tap_ok_detail(dir_ok, "  k increasing in even blocks, decreasing in odd ones", "");
	tap_ok_detail(kept_ok, "  each block's last chunk keeps tiles its successor reads first", "");
	tap_ok_detail(chain_ends_ok(&wl, p.mt, p.nt), "  each chain: one first and one last product, "
	   "at its ends", "");
	stargemm__worklist_free(&wl);
	r.a.present = r.b.present = NULL;
	if (stargemm__inspect(&r, &wl) == 0) {
		for (int64_t b = 0; b < wl.nblocks; b++)
			plain_ok &= block_k_direction(&wl, b, 1);
		plain_ok &= chain_ends_ok(&wl, p.mt, p.nt);
		stargemm__worklist_free(&wl);
	} else {
		plain_ok = 0;
	}
	tap_ok_detail(plain_ok, "  dense operands: k increasing in every block, chain ends flagged", "");
	r.a.present = pa;
	r.b.present = pb;
	r.gpus = 0;
	if ((plain_ok = stargemm__inspect(&r, &wl) == 0)) {
		for (int64_t b = 0; b < wl.nblocks; b++)
			plain_ok &= block_k_direction(&wl, b, 1);
		stargemm__worklist_free(&wl);
	}
	tap_ok_detail(plain_ok, "  the same under a RAM budget: k increasing in every block", "");
	free(pa);
	free(pb);
	free_problem(&p);
}

/* Another rank whose inspection fails at try fail_try (tries counted by f->tries): it
 * takes part in that try's agreement on the footprint with one beyond every budget.
 * Counts this rank's collective calls after that one. */
struct failing_rank {
	const struct stargemm__fit *f;
	int fail_try, failed, calls_after;
};

static int rank_failing(int64_t *value, void *arg)
{
	struct failing_rank *x = arg;

	if (x->failed)
		x->calls_after++;
	else if (x->f->tries == x->fail_try)
		*value = INT64_MAX, x->failed = 1;
	return 0;
}

/* This rank's collective calls after another rank's inspection failed at try @p k. */
static int calls_after_failure(struct stargemm_plan_request *pr, struct stargemm__request *r,
			       int k)
{
	struct stargemm__fit f;
	struct failing_rank x = { .f = &f, .fail_try = k };
	struct stargemm_plan plan;
	struct stargemm__worklist wl = { 0 };

	f = (struct stargemm__fit){ .pr = pr, .r = r, .elem = 8,
				    .max_over_ranks = rank_failing, .arg = &x };
	stargemm__fit_plan(&f, &plan, &wl);
	stargemm__clear_error();
	stargemm__worklist_free(&wl);
	return x.failed ? x.calls_after : -1;
}

/* A rank whose first inspection of a fit fails (the plan of the largest tile's unit)
 * returns from it at once (fit_request()): from stargemm__fit_plan() with its error in
 * the fit with the planner's lookahead, to the plan of that fit in the one with a
 * lookahead of one. The other ranks, which see the agreed footprint beyond the budget,
 * must make no collective call after it either. (A failure in a later try is an
 * overflow on every rank, and they all go on searching.) */
static void fit_failure_elsewhere(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm_plan_request pr;
	struct stargemm_plan plan;
	struct stargemm__request r;
	struct stargemm__worklist wl;
	struct stargemm__fit f;
	uint8_t *pa, *pb;
	unsigned seed = 41;
	int two_tries, first, second;
	char name[200];

	sparse_problem(&p, 28, 2800, 0.5, &seed, &pr, &r, &pa, &pb);
	pr.lookahead = 2;        /* the first fit alone */
	fit(&pr, &r, NULL, &f, &plan, &wl);
	two_tries = f.tries;
	stargemm__worklist_free(&wl);
	pr.lookahead = 0;
	fit(&pr, &r, NULL, &f, &plan, &wl);
	stargemm__worklist_free(&wl);
	first = calls_after_failure(&pr, &r, 1);
	second = calls_after_failure(&pr, &r, two_tries + 1);
	snprintf(name, sizeof(name), "fit: the first inspection failing on another rank: no "
		 "collective call after it (first fit: %d, the fit with lookahead 1 after %d "
		 "tries: %d)", first, two_tries, second);
	tap_ok_detail(plan.lookahead == 1 && f.tries > two_tries && first == 0 && second == 0, name, "");
	free(pa);
	free(pb);
	free_problem(&p);
}

/* The inspector's cost for about 10^6 tile products (a figure, not a check). */
static void cost(void)
{
	struct problem p = { .P = 1, .Q = 1, .G = 4 };
	struct stargemm__request r;
	struct stargemm__worklist wl;
	struct timespec t0, t1;
	double s;

	p.row_off = regular(100 * 64, 64, &p.mt);
	p.col_off = regular(100 * 64, 64, &p.nt);
	p.k_off = regular(100 * 64, 64, &p.kt);
	make_plan(&p, 3000, 0, 0, 0);
	request(&p, 0, 1, 0, 0, 1, &r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tap_ok_detail(stargemm__inspect(&r, &wl) == 0, "10^6 products inspected", "");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	printf("# inspector: %lld products, %lld chunks, %lld tile refs in %.3f s "
	       "(%.3f s per 10^6 products)\n", (long long)wl.nproducts, (long long)wl.nchunks,
	       (long long)wl.nrefs, s, s * 1e6 / (double)wl.nproducts);
	stargemm__worklist_free(&wl);
	free_problem(&p);
}

/* The CPU kernel choice (stargemm__kernel_choice()): libxsmm's kernel per shape while
 * the tilings give at most STARGEMM_XSMM_SHAPES shapes (64 by default), the one kernel
 * for every shape beyond (where the CPU has it); a bad setting is refused. */
static void kernel_choice(void)
{
	static const int64_t sizes[41] = { 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33,
					   34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
					   48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60 };
	struct problem ragged = { .P = 1, .Q = 1, .G = 1 }, odd = { .P = 1, .Q = 1, .G = 1 };
	struct stargemm__request r;
	const int any = 1;   /* the CPU has the one kernel (r.any_kernel) */
	const char *bad[3] = { "abc", "-1", "5x" };
	int refused = 1, ret;
	char name[160];

	/* tiles of 7 over 100, 90, 80: 2 extents each, 8 shapes */
	ragged.row_off = regular(100, 7, &ragged.mt);
	ragged.col_off = regular(90, 7, &ragged.nt);
	ragged.k_off = regular(80, 7, &ragged.kt);
	/* tiles of 20-60, 41 extents each: 68,921 shapes */
	odd.mt = odd.nt = odd.kt = 50;
	odd.row_off = irregular(50, sizes, 41);
	odd.col_off = irregular(50, sizes, 41);
	odd.k_off = irregular(50, sizes, 41);
	unsetenv("STARGEMM_XSMM_SHAPES");
	request(&ragged, 0, 0, 0, 0, 0, &r);
	r.any_kernel = any;
	r.one_kernel = -1;
	ret = stargemm__kernel_choice(&r);
	tap_ok_detail(ret == 0 && r.one_kernel == 0, "kernel choice: tiles of 7, ragged (8 shapes): "
	   "libxsmm's kernel per shape", "");
	request(&odd, 0, 0, 0, 0, 0, &r);
	ret = stargemm__kernel_choice(&r);
	tap_ok_detail(ret == 0 && r.one_kernel == 0, "kernel choice: tiles of 20-60 (68,921 shapes) on "
	   "a CPU without the one kernel: libxsmm's", "");
	r.any_kernel = any;
	ret = stargemm__kernel_choice(&r);
	snprintf(name, sizeof(name), "kernel choice: tiles of 20-60 (68,921 shapes): the one "
		 "kernel");
	tap_ok_detail(ret == 0 && r.one_kernel == 1, name, "");
	setenv("STARGEMM_XSMM_SHAPES", "1e9", 1);
	ret = stargemm__kernel_choice(&r);
	tap_ok_detail(ret == 0 && r.one_kernel == 0, "kernel choice: STARGEMM_XSMM_SHAPES=1e9 keeps "
	   "libxsmm's for tiles of 20-60", "");
	setenv("STARGEMM_XSMM_SHAPES", "0", 1);
	request(&ragged, 0, 0, 0, 0, 0, &r);
	r.any_kernel = any;
	ret = stargemm__kernel_choice(&r);
	tap_ok_detail(ret == 0 && r.one_kernel == any, "kernel choice: STARGEMM_XSMM_SHAPES=0 takes the "
	   "one kernel (where usable) for tiles of 7", "");
	for (int e = 0; e < 3; e++) {
		setenv("STARGEMM_XSMM_SHAPES", bad[e], 1);
		ret = stargemm__kernel_choice(&r);
		refused &= ret == -EINVAL && strstr(stargemm_last_error(), "STARGEMM_XSMM_SHAPES");
	}
	tap_ok_detail(refused, "kernel choice: STARGEMM_XSMM_SHAPES='abc', '-1', '5x' refused, named", "");
	unsetenv("STARGEMM_XSMM_SHAPES");
	free_problem(&ragged);
	free_problem(&odd);
}

int main(void)
{
	regular_cases();
	grid_map();
	grid_map_refused();
	ragged_cases();
	held_k();
	in_core();
	balance();
	sparse_case(1, 0, 0, 0.3, 7, 0);
	sparse_case(1, 1, 1, 0.5, 8, 0);
	sparse_case(0, 0, 1, 0.2, 9, 0);
	sparse_case(1, 0, 0, 0.0, 10, 0);
	sparse_case(1, 0, 1, 0.4, 14, 1);
	sparse_case(0, 1, 0, 0.4, 15, 1);
	batched_case(1, 1, 0.5, 11, 0, 1);
	batched_case(2, 3, 0.3, 12, 0, 1);
	batched_case(3, 2, 1.0, 13, 0, 1);
	batched_case(2, 3, 0.4, 16, 1, 1);
	batched_case(3, 2, 0.8, 17, 1, 1);
	batched_case(1, 1, 0.5, 18, 0, 3);
	batched_case(2, 3, 0.4, 19, 1, 2);
	thin_batched_case();
	ooc_batched_case(1, 1, 1, 0, 0, 0.5, 41, 0);
	ooc_batched_case(2, 3, 2, 1, 0, 0.4, 42, 0);
	ooc_batched_case(2, 2, 3, 0, 1, 0.8, 43, 1);
	ooc_batched_case(1, 2, 1, 1, 1, 1.0, 44, 0);
	packs_of_one_tile();
	packed_case(1, 1, 1, 0, 0, 0.5, 21);
	packed_case(2, 3, 1, 1, 0, 0.3, 22);
	packed_case(3, 2, 1, 0, 1, 0.8, 23);
	packed_case(2, 2, 1, 1, 1, 1.0, 24);
	packed_case(1, 1, 3, 0, 0, 0.5, 25);
	packed_case(2, 1, 2, 1, 0, 0.6, 26);
	packed_ooc_case(1, 1, 1, 0, 0, 0.5, 51, 0);
	packed_ooc_case(2, 3, 2, 1, 0, 0.3, 52, 4);
	packed_ooc_case(3, 2, 1, 0, 1, 0.8, 53, 1);
	packed_ooc_case(2, 2, 3, 1, 1, 0.2, 54, 3);
	balanced_columns();
	footprints();
	footprint_holds();
	footprint_window();
	fit_dense();
	ragged_shapes();
	fit_same_loads();
	fit_sparse(1, 0.5, 31);
	fit_sparse(2, 0.5, 32);
	fit_sparse(3, 1.0, 33);
	fit_lookahead(0.5, 41, 1);
	fit_lookahead(1.0, 42, 0);
	serpentine_walk(43);
	fit_failure_elsewhere();
	kernel_choice();
	cost();
	return tap_done();
}
