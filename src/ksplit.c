/*
 * ksplit.c — a product whose C has fewer tiles than the workers: the inner dimension
 * split over the ranks and their workers, the partial tiles summed into C.
 *
 * X^T Y with X, Y of N x n, n <= 512 and N >> n (a Gram matrix of paper 004's filter) has
 * a C of a few tiles, and each C tile's updates form one chain (src/inspect.c): one
 * worker of one rank does them all while the others wait. Here C tile (i, j) gets a
 * partial tile per segment (rank r, worker w): the k whose op(A)(i, k) lives on rank r
 * are dealt to r's workers in contiguous runs (op(A)'s tile is read where it lives,
 * op(B)(k, j) moves if it lives elsewhere), each run a chain of GEMMs into its partial,
 * the first of which only writes it. Then each rank adds its partials into its first
 * (on r), C(i, j) = beta C(i, j), and C's owner adds each rank's sum (StarPU-MPI sends
 * it): a flat reduction, one tile from each rank per C tile. The partials are
 * StarPU-allocated handles with tags of their own, unregistered at the next wait.
 *
 * Chosen in core when C has fewer present tiles than the workers of all ranks
 * (STARGEMM_KSPLIT: 0 never, 2 always); not for packed operands.
 *
 * Devices: on a rank with GPUs each local GEMM carries a task info (src/contract.h)
 * naming the executor device that runs it, so that the products run there (a task
 * without one goes to the CPU workers): segment w of a rank on its device w; with one
 * partial per rank, each C tile's chain on one device of the rank, dealt round robin
 * as the rank meets its C tiles. The sums stay on the CPU workers.
 *
 * The same walk keeps op(A) or op(B) in place for a C of any size (the stationary
 * choice, src/stationary.c): with op(B) kept, the k of C tile (i, j) go to the ranks
 * of op(B)(k, j) and op(A)(i, k) moves; with a C of as many tiles as the workers or
 * more, one partial per rank and C tile (width 1), the C tiles' chains spreading over
 * the workers; the products of C's owner then go into C itself (the first applies
 * beta), which needs neither a partial nor its sum.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"
#include "worklist.h"

struct ksplit {
	struct stargemm__gemm *g;
	const struct stargemm__request *r;   /* its operands' patterns and norms */
	int nranks, width;           /* segments per rank: its workers, or 1 */
	int by_b;                    /* products on op(B)'s owner, not op(A)'s */
	int64_t ntiles;              /* C's tile positions, mt * nt */
	starpu_data_handle_t *part;  /* segment s's partial of C tile t at s * ntiles + t */
	int64_t *seg;                /* per k of the current C tile row: segment, or -1 */
	int64_t *count;              /* per rank: its products of the current C tile, then
					the ones dealt so far */
	uint8_t *direct;             /* per C tile: its owner's chain went into it */
	int64_t *a_start, *a_rows;   /* width 1: op(A)'s present tiles by column
					(stargemm__operand_columns()) */
	int ndevices, next_device;   /* this rank's executor devices; the next one dealt */
	int32_t *device;             /* width 1: per C tile, the device of this rank's
					chain into it, or -1 before its first product */
	struct info_page *infos;     /* the local GEMMs' task infos */
};

/* Task infos live until the next wait (the policy reads them until the tasks are done),
 * in pages that never move. */
#define INFO_PAGE 1024

struct info_page {
	struct info_page *next;
	int used;
	struct stargemm_task_info v[INFO_PAGE];
};

int stargemm__ksplit_width(const struct stargemm__gemm *g)
{
	int64_t workers = starpu_cuda_worker_get_count() > 0 ? stargemm__device_count()
							      : stargemm_ncpu_workers();
	double mode;
	int ret = stargemm__setting(STARGEMM__KSPLIT, &mode);

	if (ret)
		return ret;
	if (mode == 0.0 || stargemm__gemm_packed(g) || g->kt < 2 || workers < 1)
		return 0;
	if (mode >= 2.0 || g->C->npresent < workers * stargemm_nranks())
		return (int)workers;
	return 0;
}

/* Whether the product C(i, j) += op(A)(i, k) op(B)(k, j) is computed (1), or left out by
 * the norm filter (-1), or has an absent tile (0): the inspector's rules. */
static int computed(const struct ksplit *ks, int64_t i, int64_t j, int64_t k)
{
	if (!stargemm__operand_present(&ks->r->a, i, k) ||
	    !stargemm__operand_present(&ks->r->b, k, j))
		return 0;
	return stargemm__product_filtered(ks->r, i, j, k) ? -1 : 1;
}

/* The rank that computes C(i, j) += op(A)(i, k) op(B)(k, j): op(A)(i, k)'s, or
 * op(B)(k, j)'s. */
static int owner(const struct ksplit *ks, int64_t i, int64_t j, int64_t k)
{
	return ks->by_b ? stargemm__operand_owner(&ks->r->b, k, j)
			: stargemm__operand_owner(&ks->r->a, i, k);
}

/* The segments of C tile (i, j)'s products: ks->seg[k] for each k (-1: not computed);
 * the n-th of rank r's c products goes to r's worker n * width / c. Counts the
 * products, their flops and the filtered ones into *info. */
static void deal(struct ksplit *ks, int64_t i, int64_t j, struct stargemm_bsgemm_info *info)
{
	const struct stargemm__gemm *g = ks->g;
	int64_t *next = ks->count + ks->nranks;

	for (int r = 0; r < 2 * ks->nranks; r++)
		ks->count[r] = 0;
	for (int64_t k = 0; k < g->kt; k++) {
		int c = computed(ks, i, j, k);

		ks->seg[k] = c > 0 ? owner(ks, i, j, k) : -1;
		if (ks->seg[k] >= 0)
			ks->count[ks->seg[k]]++;
		info->skipped += c < 0;
	}
	for (int64_t k = 0; k < g->kt; k++) {
		int64_t r = ks->seg[k];

		if (r < 0)
			continue;
		ks->seg[k] = r * ks->width + next[r]++ * ks->width / ks->count[r];
		info->products++;
		info->flops += stargemm__product_flops(ks->r, i, j, k);
	}
}

/* Register the partial of segment s of C tile (i, j), owned by s's rank. */
static int new_partial(struct ksplit *ks, int64_t s, int64_t i, int64_t j, int64_t tag)
{
	const struct stargemm_matrix *C = ks->g->C;
	starpu_data_handle_t *h = &ks->part[s * ks->ntiles + stargemm__tile_index(C, i, j)];
	int64_t rows = stargemm__rows_of(C, i);

	starpu_matrix_data_register(h, -1, 0, (uint32_t)rows, (uint32_t)rows,
				    (uint32_t)stargemm__cols_of(C, j), C->elem_size);
	if (!*h)
		return stargemm__error(-ENOMEM, "stargemm: cannot register a partial tile");
	starpu_mpi_data_register(*h, tag, (int)(s / ks->width));
	return 0;
}

/* A task info for a local GEMM on executor device @p device (not held, its inputs
 * prefetched when it is ready, as the in-core work list's), or NULL without memory. */
static struct stargemm_task_info *new_info(struct ksplit *ks, int device)
{
	struct info_page *page = ks->infos;

	if (!page || page->used == INFO_PAGE) {
		page = calloc(1, sizeof(*page));
		if (!page)
			return NULL;
		page->next = ks->infos;
		ks->infos = page;
	}
	page->v[page->used] = (struct stargemm_task_info){
		.device = device, .prefetch = STARGEMM_PREFETCH_READY, .block = -1 };
	return &page->v[page->used++];
}

/* The device of this rank's GEMMs of segment @p s into C tile @p t. */
static int device_of(struct ksplit *ks, int64_t s, int64_t t)
{
	if (ks->width > 1)
		return (int)(s % ks->width) % ks->ndevices;
	if (ks->device[t] < 0) {
		ks->device[t] = ks->next_device;
		ks->next_device = (ks->next_device + 1) % ks->ndevices;
	}
	return ks->device[t];
}

/* The task info of the GEMM of segment @p s into C tile @p t: NULL where another rank
 * runs it, and on a rank without GPUs (its one device is the host RAM, whose queue is
 * the CPU workers' either way: the split runs there as it always did); -ENOMEM into
 * *ret without memory. */
static struct stargemm_task_info *info_of(struct ksplit *ks, int64_t s, int64_t t, int *ret)
{
	struct stargemm_task_info *info;

	if (s / ks->width != stargemm_rank() || starpu_cuda_worker_get_count() == 0)
		return NULL;
	info = new_info(ks, device_of(ks, s, t));
	if (!info)
		*ret = stargemm__error(-ENOMEM, "stargemm: out of memory for a task's info");
	return info;
}

static void free_partials(void *arg)
{
	struct ksplit *ks = arg;

	for (int64_t e = 0; e < (int64_t)ks->nranks * ks->width * ks->ntiles; e++)
		if (ks->part[e])
			starpu_data_unregister(ks->part[e]);
	free(ks->part);
	free(ks->seg);
	free(ks->count);
	free(ks->direct);
	free(ks->a_start);
	free(ks->a_rows);
	free(ks->device);
	while (ks->infos) {
		struct info_page *next = ks->infos->next;

		free(ks->infos);
		ks->infos = next;
	}
	free(ks);
}

/* The inserts of the split product. A failed one is inserted again as a no-op and the
 * rest skipped (stargemm__insertion_failed()): the other ranks insert the same tasks
 * and wait for their messages. */
static int insert_gemm(const struct ksplit *ks, int64_t i, int64_t j, int64_t k,
		       starpu_data_handle_t part, int first, struct stargemm_task_info *info)
{
	int ret;

	while ((ret = stargemm__gemm_insert_into(ks->g, i, j, k, part, first ? 0.0 : 1.0, 0,
						 info, NULL, NULL)) &&
	       stargemm__insertion_failed(ks->g))
		;
	return ret;
}

/* The same into C's tile itself (beta applied by the first). */
static int insert_gemm_c(const struct ksplit *ks, int64_t i, int64_t j, int64_t k, int first,
			 struct stargemm_task_info *info)
{
	int ret;

	while ((ret = stargemm__gemm_insert(ks->g, i, j, k, first, 0, info, NULL, NULL)) &&
	       stargemm__insertion_failed(ks->g))
		;
	return ret;
}

/* Y += X (it runs on Y's owner). */
static int accumulate(const struct ksplit *ks, starpu_data_handle_t x, starpu_data_handle_t y)
{
	int ret;

	while ((ret = stargemm__accumulate_insert(ks->g, x, y)) &&
	       stargemm__insertion_failed(ks->g))
		;
	return ret;
}

/* C(i, j) = beta C(i, j) (nothing when beta = 1). */
static int scale(const struct ksplit *ks, int64_t i, int64_t j)
{
	int ret;

	while ((ret = stargemm__scale_insert(ks->g, i, j)) && stargemm__insertion_failed(ks->g))
		;
	return ret;
}

/* Product (i, j, k) into segment @p s's partial of C tile (i, j), or into C itself
 * when one partial per rank is kept and s is C's owner. */
static int product(struct ksplit *ks, int64_t i, int64_t j, int64_t k, int64_t s,
		   int64_t tags)
{
	int64_t t = stargemm__tile_index(ks->g->C, i, j);
	int first, ret = 0;
	struct stargemm_task_info *info = info_of(ks, s, t, &ret);

	if (ret)
		return ret;
	if (ks->width == 1 && s == stargemm_matrix_owner(ks->g->C, i, j)) {
		first = !ks->direct[t];
		ks->direct[t] = 1;
		return insert_gemm_c(ks, i, j, k, first, info);
	}
	first = !ks->part[s * ks->ntiles + t];
	if (first)
		ret = new_partial(ks, s, i, j, tags + s * ks->ntiles + t);
	return ret ? ret : insert_gemm(ks, i, j, k, ks->part[s * ks->ntiles + t], first, info);
}

/* C tile (i, j): the chains of GEMMs into its partials, one per worker. */
static int chains(struct ksplit *ks, int64_t i, int64_t j, int64_t tags,
		  struct stargemm_bsgemm_info *info)
{
	int ret = 0;

	deal(ks, i, j, info);
	for (int64_t k = 0; k < ks->g->kt && !ret; k++)
		if (ks->seg[k] >= 0)
			ret = product(ks, i, j, k, ks->seg[k], tags);
	return ret;
}

/* One partial per rank: every product k outer, as the work list inserts them in core
 * (consecutive tasks read the same op(B)(k, j), still in cache: inserted C tile by C
 * tile, 2 x 1 ranks ran 15% slower), on its operand's owner. */
static int k_outer(struct ksplit *ks, int64_t tags, struct stargemm_bsgemm_info *info)
{
	const struct stargemm__gemm *g = ks->g;
	const int64_t *start = ks->a_start, *rows = ks->a_rows;
	int ret = 0;

	for (int64_t k = 0; k < g->kt && !ret; k++)
		for (int64_t a = start[k]; a < start[k + 1] && !ret; a++)
			for (int64_t j = 0, i = rows[a]; j < g->C->nt && !ret; j++) {
				int c = stargemm__present(g->C, i, j) ? computed(ks, i, j, k) : 0;

				info->skipped += c < 0;
				if (c <= 0)
					continue;
				info->products++;
				info->flops += stargemm__product_flops(ks->r, i, j, k);
				ret = product(ks, i, j, k, owner(ks, i, j, k), tags);
			}
	return ret;
}

/* C tile (i, j): each rank's partials into its first, C = beta C + the ranks' sums. */
static int sums(struct ksplit *ks, int64_t i, int64_t j)
{
	const struct stargemm__gemm *g = ks->g;
	int64_t t = stargemm__tile_index(g->C, i, j), nseg = (int64_t)ks->nranks * ks->width;
	int ret = 0;

	for (int64_t s0 = 0; s0 < nseg && !ret; s0 += ks->width) {
		starpu_data_handle_t sum = NULL;

		for (int64_t s = s0; s < s0 + ks->width && !ret; s++) {
			starpu_data_handle_t p = ks->part[s * ks->ntiles + t];

			if (p && !sum)
				sum = p;
			else if (p)
				ret = accumulate(ks, p, sum);
		}
		if (!ret && s0 == 0 && !ks->direct[t])
			ret = scale(ks, i, j);
		if (!ret && sum)
			ret = accumulate(ks, sum, stargemm__tile(g->C, i, j));
	}
	return ret;
}

int stargemm__ksplit_run(struct stargemm__gemm *g, const struct stargemm__request *r,
			 int by_b, int width, struct stargemm_bsgemm_info *info)
{
	struct stargemm_bsgemm_info counted = { 0 };
	struct ksplit *ks = calloc(1, sizeof(*ks));
	int64_t nparts = 0, tags;
	int ret = 0, paused;

	if (ks) {
		ks->g = g;
		ks->r = r;
		ks->nranks = stargemm_nranks();
		ks->width = width;
		ks->by_b = by_b;
		ks->ntiles = g->C->mt * g->C->nt;
		nparts = (int64_t)ks->nranks * width * ks->ntiles;
		ks->part = calloc((size_t)(nparts > 0 ? nparts : 1), sizeof(*ks->part));
		ks->seg = malloc((size_t)g->kt * sizeof(*ks->seg));
		ks->count = malloc((size_t)(2 * ks->nranks) * sizeof(*ks->count));
		ks->direct = calloc((size_t)(ks->ntiles > 0 ? ks->ntiles : 1), 1);
		ks->ndevices = stargemm__device_count();
		/* one partial per rank: each C tile's device (device_of()) */
		if (width == 1)
			ks->device = malloc((size_t)(ks->ntiles > 0 ? ks->ntiles : 1) *
					    sizeof(*ks->device));
		for (int64_t t = 0; ks->device && t < ks->ntiles; t++)
			ks->device[t] = -1;
		if (width == 1 && stargemm__operand_columns(&r->a, g->C->mt, g->kt,
							    &ks->a_start, &ks->a_rows))
			ks->a_start = ks->a_rows = NULL;
	}
	if (!ks || !ks->part || !ks->seg || !ks->count || !ks->direct ||
	    (width == 1 && (!ks->a_start || !ks->device)))
		ret = stargemm__error(-ENOMEM, "stargemm: out of memory for %" PRId64
				      " partial tiles", nparts);
	/* every rank inserts the tasks, or none does */
	if ((ret = stargemm__agree(ret))) {
		if (ks)
			free_partials(ks);
		return ret;
	}
	tags = stargemm__reserve_tags(nparts);
	paused = stargemm__quiet_begin();
	if (width == 1)
		ret = k_outer(ks, tags, &counted);
	for (int64_t j = 0; j < g->C->nt && !ret && width > 1; j++)
		for (int64_t i = 0; i < g->C->mt && !ret; i++)
			if (stargemm__present(g->C, i, j))
				ret = chains(ks, i, j, tags, &counted);
	stargemm__quiet_end(paused);
	/* The sums are inserted once this rank's chains are done: a receive posted by the
	 * insertion keeps StarPU-MPI 1.3's thread polling MPI until it lands, on the core
	 * of a worker (two ranks of one core each: 0.435 s instead of 0.29 s, N = 10^6). */
	if (ks->nranks > 1)
		starpu_task_wait_for_all();
	for (int64_t j = 0; j < g->C->nt && !ret; j++)
		for (int64_t i = 0; i < g->C->mt && !ret; i++)
			if (stargemm__present(g->C, i, j))
				ret = sums(ks, i, j);
	/* The partials go once their tasks are done: at the next wait. */
	stargemm__defer_to_wait(free_partials, ks);
	if (info) {
		info->products = counted.products;
		info->flops = counted.flops;
		info->skipped = counted.skipped;
		info->pred_loads = 0.0;
	}
	return ret;
}
