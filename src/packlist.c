/*
 * packlist.c — packed operands out of core: the problem over packs, and its work list
 * expanded into batches of tile products.
 *
 * A packed matrix (src/pack.c) moves as packs: a pack is loaded, evicted, held and
 * sent whole. So the out-of-core algorithm is planned over packs. When the operands'
 * groups line up — op(A)'s row groups are C's, op(B)'s column groups are C's, op(A)'s
 * column groups are op(B)'s row groups (an operand that is not packed, or an axis
 * that is not, counts as groups of one tile) — the problem over packs is itself a
 * block-sparse product: its tiles are the packs (a unit of an unpacked operand is its
 * tile), present when they hold a present tile, owned by the packs' owners, with the
 * groups' extents as tilings. The inspector (src/inspect.c) and the planner's fit
 * (src/fit.c) run on it unchanged: blocks of C packs, chunks of k groups, prefetches,
 * releases, holds and write-backs of packs, and the load model counts packs.
 *
 * stargemm__pack_expand() then makes that list the executor's: the pack products
 * C(I,J) += op(A)(I,K) op(B)(K,J) of one chunk over one C pack become one batch
 * (codelets/batch.c) of the tile products inside them that exist and that the norm
 * filter keeps, pack product after pack product (k order), each k outer, with their
 * device, block and chunk; its buffers are the op(A) and op(B) packs of each pack
 * product, then the C pack. A batch of one pack product keeps its prefetch class (its
 * buffers A, B, C, as a single product's are); one of several takes the class ALL.
 * One task per pack product made the out-of-core product with small tiles spend much
 * of its time inserting tasks (doc/design.md, Decisions, "One batch per C pack"). The
 * list's chunks, blocks and references stay as inspected (pack references are what a
 * list over packed operands names anyway, src/worklist.h). A C tile's chain runs in k
 * order (the pack products of a C pack come in k-group order, a batch's products k
 * outer) and its first update applies beta, except in a C pack with a present tile that
 * no product updates: that pack is scaled first (C = beta C) and none of its products
 * applies beta. The first batch over each other C pack opens it (opens_c): with beta = 0
 * it only writes the pack (src/insert.c), since a tile that batch leaves is overwritten
 * by its own first update later, and the load model counts no read of C; but on GPUs
 * (stargemm__worklist_opens_write()).
 *
 * When the groups do not line up (given distributions that cut the axes of A and B
 * differently), the product runs in core (src/product.c).
 *
 * Pure: no MPI, no StarPU. Unit-tested in tests/test_inspect.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "worklist.h"

/* The groups of axis @p cols (0: rows, 1: columns) of op(X) as tile boundaries, or
 * NULL when every group is one tile; *n the number of groups. */
static const int64_t *op_groups(const struct stargemm__operand *x, int cols, int64_t tiles,
				int64_t *n)
{
	const struct stargemm__packing *pk = x->pack;
	int stored_cols = cols != x->trans;   /* the axis of X that it is */

	*n = tiles;
	if (!pk)
		return NULL;
	*n = stored_cols ? pk->gnt : pk->gmt;
	return *n == tiles ? NULL : stored_cols ? pk->col_first : pk->row_first;
}

/* Whether two groupings of one axis of @p tiles tiles are the same; *first the common
 * one (NULL: groups of one tile). */
static int same_groups(const int64_t *g, int64_t ng, const int64_t *h, int64_t nh,
		       const int64_t **first)
{
	*first = g ? g : h;
	if (ng != nh)
		return 0;
	return !g || !h || memcmp(g, h, (size_t)(ng + 1) * sizeof(*g)) == 0;
}

/* The unit boundaries of one axis into u->first[a] and its offsets into u->off[a]. */
static int unit_axis(struct stargemm__units *u, int a, const int64_t *first, int64_t n,
		     const int64_t *tile_off)
{
	u->n[a] = n;
	u->first[a] = malloc((size_t)(n + 1) * sizeof(int64_t));
	u->off[a] = malloc((size_t)(n + 1) * sizeof(int64_t));
	if (!u->first[a] || !u->off[a])
		return -ENOMEM;
	for (int64_t g = 0; g <= n; g++) {
		u->first[a][g] = first ? first[g] : g;
		u->off[a][g] = tile_off[u->first[a][g]];
	}
	return 0;
}

/* One axis of X's units: the process of each group is its first tile's. */
static int unit_procs(struct stargemm__axis *out, const struct stargemm__axis *fine,
		      const int64_t *first, int64_t n, int nproc)
{
	int *proc = malloc((size_t)(n > 0 ? n : 1) * sizeof(*proc));
	int ret;

	if (!proc)
		return -ENOMEM;
	for (int64_t g = 0; g < n; g++)
		proc[g] = fine ? fine->proc[first[g]] : (int)(first[g] % nproc);
	ret = stargemm__axis_init(out, n, nproc, proc, "pack groups");
	free(proc);
	return ret;
}

/* Operand @p o of the problem over units: an unpacked operand is itself (its
 * units are its tiles), less its norms; a packed one has its packs as tiles. */
static int unit_operand(struct stargemm__units *u, int o, const struct stargemm__operand *x)
{
	const struct stargemm__packing *pk = x->pack;
	struct stargemm__operand *y = o == STARGEMM_OP_A ? &u->r.a
				      : o == STARGEMM_OP_B ? &u->r.b : &u->r.c;
	int ret;

	*y = *x;
	y->norm = NULL;
	y->pack = NULL;
	if (!pk)
		return 0;
	u->present[o] = malloc((size_t)(pk->gmt * pk->gnt > 0 ? pk->gmt * pk->gnt : 1));
	if (!u->present[o])
		return -ENOMEM;
	for (int64_t e = 0; e < pk->gmt * pk->gnt; e++)
		u->present[o][e] = pk->elems[e] > 0;
	y->present = u->present[o];
	y->ld = pk->gmt;
	y->elems = pk->elems;   /* a pack holds its present tiles only */
	ret = unit_procs(&u->axes[o][0], x->rows, pk->row_first, pk->gmt, x->grid.P);
	if (!ret)
		ret = unit_procs(&u->axes[o][1], x->cols, pk->col_first, pk->gnt, x->grid.Q);
	y->rows = &u->axes[o][0];
	y->cols = &u->axes[o][1];
	return ret;
}

int stargemm__pack_units(const struct stargemm__request *r, struct stargemm__units *u)
{
	const int64_t *ga, *gb, *first[3];
	int64_t na, nb, n[3];
	int ret;

	memset(u, 0, sizeof(*u));
	if (!r->a.pack && !r->b.pack && !r->c.pack)
		return 0;
	/* rows: op(A)'s and C's; columns: op(B)'s and C's; k: op(A)'s and op(B)'s */
	ga = op_groups(&r->a, 0, r->mt, &na);
	gb = op_groups(&r->c, 0, r->mt, &nb);
	if (!same_groups(ga, na, gb, nb, &first[0]))
		return 0;
	n[0] = na;
	ga = op_groups(&r->b, 1, r->nt, &na);
	gb = op_groups(&r->c, 1, r->nt, &nb);
	if (!same_groups(ga, na, gb, nb, &first[1]))
		return 0;
	n[1] = na;
	ga = op_groups(&r->a, 1, r->kt, &na);
	gb = op_groups(&r->b, 0, r->kt, &nb);
	if (!same_groups(ga, na, gb, nb, &first[2]))
		return 0;
	n[2] = na;
	u->r = *r;
	u->r.mt = n[0];
	u->r.nt = n[1];
	u->r.kt = n[2];
	u->r.eps = 0.0;
	u->r.batch_below = 0.0;   /* a pack product is one batch already */
	u->r.plan = NULL;
	if ((ret = unit_axis(u, 0, first[0], n[0], r->row_off)) ||
	    (ret = unit_axis(u, 1, first[1], n[1], r->col_off)) ||
	    (ret = unit_axis(u, 2, first[2], n[2], r->k_off)) ||
	    (ret = unit_operand(u, STARGEMM_OP_A, &r->a)) ||
	    (ret = unit_operand(u, STARGEMM_OP_B, &r->b)) ||
	    (ret = unit_operand(u, STARGEMM_OP_C, &r->c))) {
		stargemm__pack_units_free(u);
		return ret == -ENOMEM ? stargemm__error(ret, "stargemm: out of memory for the "
							"problem over packs")
				      : ret;
	}
	u->r.row_off = u->off[0];
	u->r.col_off = u->off[1];
	u->r.k_off = u->off[2];
	return 1;
}

void stargemm__pack_units_free(struct stargemm__units *u)
{
	for (int a = 0; a < 3; a++) {
		free(u->first[a]);
		free(u->off[a]);
		free(u->present[a]);
		stargemm__axis_free(&u->axes[a][0]);
		stargemm__axis_free(&u->axes[a][1]);
	}
	memset(u, 0, sizeof(*u));
}

static int64_t cap(int64_t value, int64_t most)
{
	return value < most ? value : most;
}

void stargemm__pack_plan_request(const struct stargemm_plan_request *fine,
				 const struct stargemm__units *u, size_t elem,
				 struct stargemm_plan_request *out)
{
	const struct stargemm__request *r = &u->r;
	const int64_t *off[3] = { r->row_off, r->col_off, r->k_off };
	const int64_t n[3] = { r->mt, r->nt, r->kt };
	int64_t ext = 0;

	for (int a = 0; a < 3; a++)   /* the largest unit, as stargemm__ooc_request()'s tile */
		if (stargemm__largest_tile(off[a], n[a]) > ext)
			ext = stargemm__largest_tile(off[a], n[a]);
	*out = *fine;
	out->mt = r->mt;
	out->nt = r->nt;
	out->kt = r->kt;
	out->tile_bytes = ext * ext * (int64_t)elem;
	/* as stargemm__ooc_request(): a distribution that gives one process more units
	 * than the cyclic one is planned as the cyclic one of that many */
	if (r->c.rows && r->c.rows->maxlocal > (out->mt + out->P - 1) / out->P)
		out->mt = r->c.rows->maxlocal * out->P;
	if (r->c.cols && r->c.cols->maxlocal > (out->nt + out->Q - 1) / out->Q)
		out->nt = r->c.cols->maxlocal * out->Q;
	/* b, c and d count packs here; an override set in tiles is capped at the packs
	 * there are (the caller cannot see the groups) */
	out->b = cap(out->b, (out->mt + out->P - 1) / out->P);
	out->c = cap(out->c, (out->nt + out->Q - 1) / out->Q);
	out->d = cap(out->d, out->kt);
}

/* ---- the list over packs, expanded ---------------------------------------------- */

struct expander {
	const struct stargemm__request *r;
	const struct stargemm__units *u;
	struct stargemm__worklist *wl;
	int64_t cap_products, cap_refs, cap_batches, cap_slots;
	int64_t *start, *rows;   /* op(A)'s present rows by column */
	uint8_t *started;        /* per C tile: its chain has started */
	int64_t *group;          /* per C pack: its batch in the current chunk, or -1 */
	const struct stargemm__product **order;   /* a chunk's pack products, by C pack */
};

/* First entry of op(A)'s column k whose row is @p i0 or more. */
static int64_t first_row(const struct expander *x, int64_t k, int64_t i0)
{
	return stargemm__first_at_least(x->rows, x->start[k], x->start[k + 1], i0);
}

static int add_tile_product(struct expander *x, int64_t i, int64_t j, int64_t k,
			    const struct stargemm_task_info *info, int32_t slot_a, int32_t slot_b)
{
	const struct stargemm__request *r = x->r;
	struct stargemm__worklist *wl = x->wl;
	struct stargemm__product *p;

	if (!stargemm__operand_present(&r->c, i, j))
		return 0;
	if (stargemm__product_filtered(r, i, j, k)) {
		wl->nskipped++;
		return 0;
	}
	if (stargemm__grow((void **)&wl->products, &x->cap_products, wl->nproducts + 1, sizeof(*p)) ||
	    stargemm__grow((void **)&wl->slots, &x->cap_slots, 3 * (wl->nproducts + 1),
			   sizeof(*wl->slots)))
		return -ENOMEM;
	p = &wl->products[wl->nproducts];
	*p = (struct stargemm__product){ .info = *info, .i = i, .j = j, .k = k };
	p->first = !x->started[i + j * r->mt];
	x->started[i + j * r->mt] = 1;
	wl->slots[3 * wl->nproducts] = slot_a;
	wl->slots[3 * wl->nproducts + 1] = slot_b;
	wl->nproducts++;
	wl->flops += stargemm__product_flops(r, i, j, k);
	return 0;
}

/* The tile products of pack product @p q, k outer, then C's columns, then rows; their
 * op(A) and op(B) packs are the batch's buffers @p slot_a and @p slot_b. */
static int expand_product(struct expander *x, const struct stargemm__product *q,
			  const struct stargemm_task_info *info, int32_t slot_a, int32_t slot_b)
{
	const struct stargemm__units *u = x->u;
	int64_t i0 = u->first[0][q->i], i1 = u->first[0][q->i + 1];
	int ret = 0;

	for (int64_t k = u->first[2][q->k]; k < u->first[2][q->k + 1] && !ret; k++) {
		int64_t e0 = first_row(x, k, i0);

		for (int64_t j = u->first[1][q->j]; j < u->first[1][q->j + 1] && !ret; j++) {
			if (!stargemm__operand_present(&x->r->b, k, j))
				continue;
			for (int64_t e = e0; e < x->start[k + 1] && x->rows[e] < i1 && !ret; e++)
				ret = add_tile_product(x, x->rows[e], j, k, info, slot_a, slot_b);
		}
	}
	return ret;
}

static int add_ref(struct expander *x, int64_t r, int64_t c, int operand, int32_t device)
{
	struct stargemm__worklist *wl = x->wl;

	if (stargemm__grow((void **)&wl->refs, &x->cap_refs, wl->nrefs + 1, sizeof(*wl->refs)))
		return -ENOMEM;
	wl->refs[wl->nrefs++] = (struct stargemm__tile_ref){ r, c, operand, device, 0, 0, 0 };
	return 0;
}

/* The batch of a chunk's @p n pack products @p q[0..n) over one C pack, in k order:
 * their tile products one pack product after the other; its buffers the op(A) and
 * op(B) packs of each, then the C pack. A single pack product keeps its info and its
 * buffers are A, B, C (the roles the READY and HELD classes assume); several take the
 * prefetch class ALL. */
static int expand_batch(struct expander *x, const struct stargemm__product *const *q,
			int64_t n)
{
	struct stargemm__worklist *wl = x->wl;
	struct stargemm__batch b = { .first = wl->nproducts, .ref_first = wl->nrefs };
	struct stargemm_task_info info = q[0]->info;
	int ret = 0;

	if (n > 1)
		info.prefetch = STARGEMM_PREFETCH_ALL;
	for (int64_t e = 0; e < n && !ret; e++) {
		int64_t before = wl->nproducts;

		ret = expand_product(x, q[e], &info, (int32_t)(wl->nrefs - b.ref_first),
				     (int32_t)(wl->nrefs - b.ref_first + 1));
		if (!ret && wl->nproducts > before)   /* a pack product with no tile product
							 names no pack */
			ret = add_ref(x, q[e]->i, q[e]->k, STARGEMM_OP_A, info.device) ||
			      add_ref(x, q[e]->k, q[e]->j, STARGEMM_OP_B, info.device) ? -ENOMEM : 0;
	}
	b.count = wl->nproducts - b.first;
	if (ret || b.count == 0)
		return ret;
	if (add_ref(x, q[0]->i, q[0]->j, STARGEMM_OP_C, info.device) ||
	    stargemm__grow((void **)&wl->batches, &x->cap_batches, wl->nbatches + 1, sizeof(b)))
		return -ENOMEM;
	b.nrefs = wl->nrefs - b.ref_first;
	for (int64_t p = b.first; p < b.first + b.count; p++)
		wl->slots[3 * p + 2] = (int32_t)(b.nrefs - 1);
	wl->batches[wl->nbatches++] = b;
	return 0;
}

/* A batch's C pack: its last buffer. */
static const struct stargemm__tile_ref *batch_c(const struct stargemm__worklist *wl,
						const struct stargemm__batch *b)
{
	return &wl->refs[b->ref_first + b->nrefs - 1];
}

/* A C pack with a present tile that no product updates is scaled first, and none of
 * its products applies beta; the others' chains apply it at their first update. */
static int add_scales(struct expander *x)
{
	const struct stargemm__request *r = x->r;
	const struct stargemm__units *u = x->u;
	struct stargemm__worklist *wl = x->wl;
	uint8_t *scaled = calloc((size_t)(u->r.mt * u->r.nt > 0 ? u->r.mt * u->r.nt : 1), 1);

	if (!scaled)
		return -ENOMEM;
	wl->scale_first = wl->nrefs;
	for (int64_t J = 0; J < u->r.nt; J++)
		for (int64_t I = 0; I < u->r.mt; I++) {
			for (int64_t j = u->first[1][J]; j < u->first[1][J + 1]; j++)
				for (int64_t i = u->first[0][I]; i < u->first[0][I + 1]; i++)
					if (stargemm__operand_present(&r->c, i, j) &&
					    !x->started[i + j * r->mt])
						scaled[I + J * u->r.mt] = 1;
			if (!scaled[I + J * u->r.mt])
				continue;
			if (stargemm__grow((void **)&wl->refs, &x->cap_refs, wl->nrefs + 1,
					   sizeof(*wl->refs))) {
				free(scaled);
				return -ENOMEM;
			}
			wl->refs[wl->nrefs++] = (struct stargemm__tile_ref){ I, J, STARGEMM_OP_C,
									     0, 0, 0, 0 };
		}
	wl->scale_count = wl->nrefs - wl->scale_first;
	for (int64_t b = 0; b < wl->nbatches; b++) {
		const struct stargemm__tile_ref *c = batch_c(wl, &wl->batches[b]);
		uint8_t *mark = &scaled[c->r + c->c * u->r.mt];

		if (*mark == 1)
			for (int64_t p = wl->batches[b].first;
			     p < wl->batches[b].first + wl->batches[b].count; p++)
				wl->products[p].first = 0;
		/* the first batch of an unscaled pack opens it (marked 2 from then on) */
		wl->batches[b].opens_c = *mark == 0;
		if (*mark == 0)
			*mark = 2;
	}
	free(scaled);
	return 0;
}

/* What the list over packs says beyond its products: chunks, blocks, references,
 * the run's settings. */
static int copy_frame(struct expander *x, const struct stargemm__worklist *units)
{
	struct stargemm__worklist *wl = x->wl;

	wl->nchunks = units->nchunks;
	wl->nblocks = units->nblocks;
	wl->lookahead = units->lookahead;
	wl->ndevices = units->ndevices;
	wl->gpus = units->gpus;
	wl->throttled = units->throttled;
	wl->holds = units->holds;
	wl->need_bytes = units->need_bytes;
	wl->budget_bytes = units->budget_bytes;
	wl->chunks = malloc((size_t)(units->nchunks > 0 ? units->nchunks : 1) *
			    sizeof(*wl->chunks));
	wl->blocks = malloc((size_t)(units->nblocks > 0 ? units->nblocks : 1) *
			    sizeof(*wl->blocks));
	if (stargemm__grow((void **)&wl->refs, &x->cap_refs, units->nrefs + 1, sizeof(*wl->refs)) ||
	    !wl->chunks || !wl->blocks)
		return -ENOMEM;
	memcpy(wl->chunks, units->chunks, (size_t)units->nchunks * sizeof(*wl->chunks));
	memcpy(wl->blocks, units->blocks, (size_t)units->nblocks * sizeof(*wl->blocks));
	memcpy(wl->refs, units->refs, (size_t)units->nrefs * sizeof(*wl->refs));
	wl->nrefs = units->nrefs;
	return 0;
}

/* Chunk @p uc's batches: its pack products grouped by C pack (in the order of each
 * pack's first pack product, each group in list order, hence k order). */
static int expand_chunk(struct expander *x, const struct stargemm__worklist *units,
			const struct stargemm__chunk *uc)
{
	const struct stargemm__product **order = x->order;
	int64_t gmt = x->u->r.mt, ngroups = 0, *count = NULL, *at;
	int ret = 0;

	/* counting sort of the chunk's pack products by their C pack's group */
	count = calloc((size_t)(uc->count + 1), sizeof(*count));
	at = calloc((size_t)(uc->count + 1), sizeof(*at));
	if (!count || !at) {
		free(count);
		free(at);
		return -ENOMEM;
	}
	for (int64_t e = uc->first; e < uc->first + uc->count; e++) {
		const struct stargemm__product *p = &units->products[e];
		int64_t *g = &x->group[p->i + p->j * gmt];

		if (*g < 0)
			*g = ngroups++;
		count[*g + 1]++;
	}
	for (int64_t g = 0; g < ngroups; g++)
		count[g + 1] += count[g];
	for (int64_t e = uc->first; e < uc->first + uc->count; e++) {
		const struct stargemm__product *p = &units->products[e];
		int64_t g = x->group[p->i + p->j * gmt];

		order[count[g] + at[g]++] = p;
	}
	for (int64_t g = 0; g < ngroups && !ret; g++)
		ret = expand_batch(x, order + count[g], count[g + 1] - count[g]);
	for (int64_t e = uc->first; e < uc->first + uc->count; e++)
		x->group[units->products[e].i + units->products[e].j * gmt] = -1;
	free(count);
	free(at);
	return ret;
}

static int expand(struct expander *x, struct stargemm__worklist *units)
{
	struct stargemm__worklist *wl = x->wl;
	int64_t npacks = x->u->r.mt * x->u->r.nt;
	int ret = copy_frame(x, units);

	x->group = malloc((size_t)(npacks > 0 ? npacks : 1) * sizeof(*x->group));
	x->order = malloc((size_t)(units->nproducts > 0 ? units->nproducts : 1) *
			  sizeof(*x->order));
	if (!x->group || !x->order)
		ret = -ENOMEM;
	for (int64_t e = 0; !ret && e < npacks; e++)
		x->group[e] = -1;
	for (int64_t n = 0; n < wl->nchunks && !ret; n++) {
		struct stargemm__chunk *ch = &wl->chunks[n];

		ch->first = wl->nproducts;
		ch->batch_first = wl->nbatches;
		ret = expand_chunk(x, units, &units->chunks[n]);
		ch->count = wl->nproducts - ch->first;
		ch->batch_count = wl->nbatches - ch->batch_first;
	}
	free(x->group);
	free(x->order);
	if (!ret && !wl->slots)   /* no product: still an array */
		wl->slots = malloc(3 * sizeof(*wl->slots));
	return ret ? ret : wl->slots ? add_scales(x) : -ENOMEM;
}

int stargemm__pack_expand(const struct stargemm__request *r, const struct stargemm__units *u,
			  struct stargemm__worklist *units, struct stargemm__worklist *wl)
{
	struct expander x = { .r = r, .u = u, .wl = wl };
	int ret;

	memset(wl, 0, sizeof(*wl));
	x.started = calloc((size_t)(r->mt * r->nt > 0 ? r->mt * r->nt : 1), 1);
	ret = x.started ? stargemm__operand_columns(&r->a, r->mt, r->kt, &x.start, &x.rows)
			: -ENOMEM;
	if (!ret)
		ret = expand(&x, units);
	free(x.started);
	free(x.start);
	free(x.rows);
	if (!ret) {
		stargemm__worklist_geometry(r, wl);
		stargemm__worklist_decide(r, wl);
		wl->units = malloc(sizeof(*wl->units));
		ret = wl->units ? 0 : -ENOMEM;
	}
	if (ret) {
		stargemm__worklist_free(wl);
		return stargemm__error(ret, "stargemm: out of memory for the work list over "
				       "packs (%" PRId64 " pack products)", units->nproducts);
	}
	*wl->units = *units;   /* the load model's list (stargemm__worklist_loads()) */
	memset(units, 0, sizeof(*units));
	return 0;
}
