/*
 * product.c — a product of 2D block-cyclic matrices (dense or block-sparse) through the
 * one executor: the problem (tilings, patterns, owners, devices) becomes an inspector
 * request (src/inspect.c), its work list is run by src/execute.c. In core (no plan)
 * the list is one chunk of every product, inserted without throttling; out of core it
 * is Algorithm 3's blocks and chunks.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "worklist.h"

/* The inspector request of a problem: tilings of C and of the inner dimension, the
 * owners and patterns of op(A), op(B) and C tiles, and this rank's devices. */
static int make_request(const struct stargemm__gemm *g, struct stargemm__request *r)
{
	const struct stargemm_matrix *A = g->A, *B = g->B, *C = g->C;
	int ta = stargemm__is_trans(g->ta), tb = stargemm__is_trans(g->tb), ret;
	double received;

	*r = (struct stargemm__request){ 0 };
	r->mt = C->mt;
	r->nt = C->nt;
	r->kt = g->kt;
	r->row_off = C->row_off;
	r->col_off = C->col_off;
	r->k_off = ta ? A->row_off : A->col_off;
	r->a = (struct stargemm__operand){ A->grid, ta, A->present, A->mt, g->norm_a, &A->rows,
					   &A->cols, A->pack, NULL, A->gen != NULL };
	r->b = (struct stargemm__operand){ B->grid, tb, B->present, B->mt, g->norm_b, &B->rows,
					   &B->cols, B->pack, NULL, B->gen != NULL };
	r->c = (struct stargemm__operand){ C->grid, 0, C->present, C->mt, NULL, &C->rows,
					   &C->cols, C->pack, NULL, 0 };
	r->eps = g->eps;
	r->me = stargemm_rank();
	r->ndevices = stargemm__device_count();
	r->gpus = starpu_cuda_worker_get_count() > 0;
	/* With beta = 0 a C tile's first update only writes it, and so does the batch
	 * that opens a C pack (struct stargemm__batch), but out of core on GPUs
	 * (stargemm__worklist_opens_write()): there a C pack is read, and counted read by
	 * the load model (beta_zero only matters out of core): there the product ran
	 * slower with the pack only written (doc/design.md, Decisions, "The opening
	 * batch only writes its C pack"). */
	r->beta_zero = g->beta == 0.0 && (!C->pack || !r->gpus);
	r->is_complex = g->type->is_complex;
	/* Small tiles: many tile products per task (codelets/batch.c), on the CPU workers
	 * or on each GPU. */
	r->workers = (r->gpus ? r->ndevices : stargemm_ncpu_workers()) * stargemm_nranks();
	r->any_kernel = stargemm__dgemm_any_usable();
	ret = stargemm__batch_settings(&r->batch_below, &r->batch_flops);
	if (!ret && (ret = stargemm__setting(STARGEMM__PREFETCH_RECEIVED, &received)) == 0)
		r->prefetch_received = r->gpus && received != 0.0;
	return ret ? ret : stargemm__kernel_choice(r);
}

int stargemm__batch_settings(double *below, double *flops)
{
	int ret = stargemm__setting(STARGEMM__BATCH_BELOW, below);

	return ret ? ret : stargemm__setting(STARGEMM__BATCH_FLOPS, flops);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What the list says of the run: counts, flops, and out of core the mean predicted
 * loads per device. */
static int report(const struct stargemm__worklist *wl, int beta_zero, double seconds,
		  struct stargemm_bsgemm_info *info)
{
	double *loads;

	if (!info)
		return 0;
	info->products = wl->nproducts;
	info->skipped = wl->nskipped;
	info->flops = wl->flops;
	info->inspect_seconds = seconds;
	info->pred_loads = 0.0;
	if (!wl->throttled)
		return 0;
	loads = calloc((size_t)wl->ndevices, sizeof(*loads));
	if (!loads || stargemm__worklist_loads(wl, !beta_zero, loads)) {
		free(loads);
		return stargemm__error(-ENOMEM, "stargemm: out of memory for the load model");
	}
	for (int g = 0; g < wl->ndevices; g++)
		info->pred_loads += loads[g] / wl->ndevices;
	free(loads);
	return 0;
}

/* The largest of @p value over the ranks (src/fit.c's callback; values >= 0). */
static int max_over_ranks(int64_t *value, void *arg)
{
	uint64_t most = 0;
	int ret = stargemm__extremes_u64((uint64_t)*value, NULL, &most);

	(void)arg;
	if (!ret)
		*value = (int64_t)most;
	return ret;
}

/* The pack extent in force (src/pack.c), for messages. */
static double pack_extent(void)
{
	double below, extent;

	return stargemm__pack_settings(&below, &extent) ? 0.0 : extent;
}

/* inspect()'s answer for packed operands whose groups do not line up
 * (src/packlist.c): there is no list over packs, they are multiplied in core. */
#define PACKS_IN_CORE 1

/* Packed operands out of core: the plan and the list over packs (src/packlist.c),
 * the list expanded into batches of tile products; PACKS_IN_CORE when the packs do not
 * line up. */
static int inspect_packs(const struct stargemm__gemm *g, struct stargemm__request *r,
			 const struct stargemm_plan_request *pr, struct stargemm_plan *plan,
			 struct stargemm__worklist *wl)
{
	struct stargemm__fit f = { .elem = g->C->elem_size, .max_over_ranks = max_over_ranks,
				   .batched = 1 };
	struct stargemm__worklist units = { 0 };
	struct stargemm_plan_request upr;
	struct stargemm__units u;
	int ret = stargemm__pack_units(r, &u);

	if (ret <= 0)   /* 0: the packs do not line up, the caller multiplies in core */
		return ret ? ret : PACKS_IN_CORE;
	stargemm__pack_plan_request(pr, &u, g->C->elem_size, &upr);
	f.pr = &upr;
	f.r = &u.r;
	ret = stargemm__fit_plan(&f, plan, &units);
	if (ret == -EINVAL) {   /* the planner's: its tiles are packs here */
		char why[256];

		snprintf(why, sizeof(why), "%s", stargemm_last_error());
		stargemm__error(ret, "%s (small tiles are packed, and moved, in groups of about "
				"STARGEMM_PACK_EXTENT = %g elements a side: the plan's tiles are "
				"those packs)", why, pack_extent());
	}
	if (!ret)
		ret = stargemm__pack_expand(r, &u, &units, wl);
	stargemm__worklist_free(&units);
	stargemm__pack_units_free(&u);
	return ret;
}

/* Inspect request @p r into @p wl: in core, or out of core with the plan of @p pr
 * fitted to the list (src/fit.c), which @p plan receives (PACKS_IN_CORE: no list). */
static int inspect(const struct stargemm__gemm *g, struct stargemm__request *r,
		   const struct stargemm_plan_request *pr, struct stargemm_plan *plan,
		   struct stargemm__worklist *wl)
{
	struct stargemm__fit f = { .pr = pr, .r = r, .elem = g->C->elem_size,
				   .max_over_ranks = max_over_ranks };

	if (!pr)
		return stargemm__inspect(r, wl);
	if (stargemm__gemm_packed(g))
		return inspect_packs(g, r, pr, plan, wl);
	return stargemm__fit_plan(&f, plan, wl);
}

int stargemm__product_plan(struct stargemm__gemm *g, const struct stargemm_plan_request *pr,
			   struct stargemm_plan *plan)
{
	struct stargemm__request r;
	struct stargemm__worklist wl = { 0 };
	int paused, ret;

	paused = stargemm__quiet_begin();
	ret = make_request(g, &r);
	if (!ret)
		ret = inspect(g, &r, pr, plan, &wl);
	if (ret == PACKS_IN_CORE)   /* multiplied in core: the plan is only checked */
		ret = stargemm_plan_compute(pr, plan);
	stargemm__worklist_free(&wl);
	stargemm__quiet_end(paused);
	return ret;
}

/* An in-core work list, freed at the next wait (src/wait.h). */
static void free_list(void *wl)
{
	stargemm__worklist_free(wl);
	free(wl);
}

/* Before a product's tasks: operands never written read as zeros, C too when the
 * product reads it (@p read_c); C counts as written from then on. */
static void prepare_operands(struct stargemm__gemm *g, int read_c)
{
	stargemm__zero_if_unwritten(g->A);
	stargemm__zero_if_unwritten(g->B);
	if (read_c)
		stargemm__zero_if_unwritten(g->C);
	g->C->written = 1;
	stargemm__written_in_place(g->C);
}

/* Inspect the problem and run its work list. In core the list is kept until
 * stargemm_wait(), as the tasks read it. */
int stargemm__run_product(struct stargemm__gemm *g, const struct stargemm_plan_request *pr,
			  struct stargemm_plan *plan_out, struct stargemm_bsgemm_info *info)
{
	struct stargemm__request r;
	struct stargemm__worklist *wl = calloc(1, sizeof(*wl));
	struct stargemm__executor *ex = NULL;
	struct stargemm_plan plan;
	double t0 = now();
	enum stargemm__stationary s = STARGEMM__STAT_C;
	int ret, paused, width;

	if (!wl)
		return stargemm__error(-ENOMEM, "stargemm: out of memory");
	paused = stargemm__quiet_begin();
	ret = make_request(g, &r);
	if (info) {
		info->stationary = 'C';
		info->model_mpi_bytes = 0.0;
		for (int v = 0; v < STARGEMM__NSTAT; v++)
			info->model_seconds[v] = 0.0;
	}
	/* In core, op(A) or op(B) kept in place: partial C tiles summed into C. */
	if (!ret && !pr)
		ret = stargemm__choose_stationary(g, &r, paused, &s, &width, info);
	if (!ret && s != STARGEMM__STAT_C) {
		stargemm__quiet_end(paused);
		free(wl);
		prepare_operands(g, g->beta != 0.0);
		ret = stargemm__ksplit_run(g, &r, s == STARGEMM__STAT_B, width, info);
		stargemm__generated_let_go_at_wait(g->A);
		stargemm__generated_let_go_at_wait(g->B);
		if (info)
			info->stationary = stargemm__stationary_letter(s);
		return ret;
	}
	if (!ret)
		ret = inspect(g, &r, pr, &plan, wl);
	/* Packed operands whose packs do not line up have no list over packs: they are
	 * multiplied in core, where their tiles are batched. The request is still
	 * checked, and its plan (unfitted) is the one reported, as
	 * stargemm__product_plan() reports it. */
	if (ret == PACKS_IN_CORE) {
		ret = stargemm_plan_compute(pr, &plan);
		if (!ret && plan_out)
			*plan_out = plan;
		pr = NULL;
		if (!ret)
			ret = inspect(g, &r, NULL, &plan, wl);
	}
	if (!ret && pr && plan_out)
		*plan_out = plan;
	if (!ret && pr && info)
		info->planned = 1;
	if (!ret)
		ret = stargemm__storage_check_list(wl, &r, g->C->elem_size, "stargemm");
	if (!ret)
		ret = report(wl, r.beta_zero, now() - t0, info);
	if (!ret)
		ret = stargemm__executor_new(g, wl, &ex);
	/* Every rank inserts the list's tasks or none does (memory, environment). */
	if ((ret = stargemm__agree(ret))) {
		stargemm__quiet_end(paused);
		stargemm__executor_free(ex);
		stargemm__worklist_free(wl);
		free(wl);
		return ret;
	}
	/* C is read unless beta = 0 overwrites it (a packed C's opening batch may read it). */
	prepare_operands(g, g->beta != 0.0 || (g->C->pack && !stargemm__worklist_opens_write(wl)));
	/* In core the executor only inserts: its tasks start once the workers resume. */
	if (pr)
		stargemm__quiet_end(paused);
	ret = stargemm__execute(ex);
	if (!pr)
		stargemm__quiet_end(paused);
	stargemm__executor_free(ex);
	if (wl->throttled) {
		stargemm__worklist_free(wl);
		free(wl);
	} else {
		stargemm__defer_to_wait(free_list, wl);   /* its tasks read it */
	}
	return ret;
}

