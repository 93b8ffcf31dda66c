/*
 * ooc.c — the out-of-core product's front end: the plan (src/plan.c) for this
 * process' devices and memory, then the work list (src/inspect.c) run by the
 * executor (src/execute.c).
 *
 * The plan is fitted to the product's work list (src/fit.c). The device memory the
 * planner is given is StarPU's size of the first device's memory node (a GPU's,
 * honouring STARPU_LIMIT_CUDA_MEM, or the host RAM budget without GPU), times the
 * usable fraction: the runtime needs some slack to evict and write back without
 * reloading tiles the plan keeps resident.
 */
#include <stdlib.h>

#include "internal.h"
#include "worklist.h"

void stargemm_ooc_options_init(struct stargemm_ooc_options *opt)
{
	*opt = (struct stargemm_ooc_options){ 0 };
}

/* Memory of one device (device 0's node: all are alike) and the number of devices. */
static int64_t device_memory(int *devices)
{
	*devices = stargemm__device_count();
	return (int64_t)starpu_memory_get_total(stargemm__device_node(0));
}

static int make_request(struct stargemm__gemm *g, const struct stargemm_ooc_options *opt,
			struct stargemm_plan_request *pr);

/* Every field of the out-of-core options in its range (NaN is in none). */
static int check_ooc_options(const struct stargemm_ooc_options *o, const char *fn)
{
	int ret = stargemm__check_plan_overrides(o->b, o->c, o->d, o->lookahead, o->c_fraction,
						 fn);

	if (ret)
		return ret;
	if (o->device_bytes < 0)
		return stargemm__error(-EINVAL, "%s: device_bytes must be >= 0 (0 = StarPU's size "
				       "of the device), got %lld", fn, (long long)o->device_bytes);
	if (!(o->usable_fraction >= 0.0 && o->usable_fraction <= 1.0))
		return stargemm__error(-EINVAL, "%s: usable_fraction must be in (0, 1] (0 = 0.9), "
				       "got %g", fn, o->usable_fraction);
	return 0;
}

/* The options every rank must pass alike, hashed. */
static uint64_t options_fingerprint(const struct stargemm_ooc_options *o)
{
	int64_t v[5] = { o->b, o->c, o->d, o->lookahead, o->device_bytes };
	double f[2] = { o->c_fraction, o->usable_fraction };

	return stargemm__fingerprint(stargemm__fingerprint(0, v, sizeof(v)), f, sizeof(f));
}

int stargemm__ooc_request(struct stargemm__gemm *g, const struct stargemm_ooc_options *opt,
			  int before, struct stargemm_plan_request *pr)
{
	struct stargemm_ooc_options none;
	int ret;

	if (!opt) {
		stargemm_ooc_options_init(&none);
		opt = &none;
	}
	ret = before ? before : stargemm__gemm_check(g);
	if (!ret)
		ret = check_ooc_options(opt, g->fn ? g->fn : "stargemm_pdgemm_ooc");
	if (!ret)
		ret = make_request(g, opt, pr);
	/* Every rank's checks and arguments agreed before any message of the product. */
	return stargemm__gemm_agree(g, ret, options_fingerprint(opt));
}

/* The planner's request for checked problem @p g with options @p opt. */
static int make_request(struct stargemm__gemm *g, const struct stargemm_ooc_options *opt,
			struct stargemm_plan_request *pr)
{
	struct stargemm_plan_request r = { 0 };
	const struct stargemm_matrix *C = g->C;
	int64_t ext, mem;

	/* The largest tile of the three matrices (B's extents are C's and A's). */
	ext = 0;
	for (int t = 0; t < 4; t++) {
		const struct stargemm_matrix *X = t < 2 ? C : g->A;
		int64_t e = t % 2 ? stargemm__largest_tile(X->col_off, X->nt)
				  : stargemm__largest_tile(X->row_off, X->mt);

		ext = e > ext ? e : ext;
	}
	mem = device_memory(&r.devices);
	r.mt = C->mt;
	r.nt = C->nt;
	r.kt = g->kt;
	r.tile_bytes = ext * ext * (int64_t)C->elem_size;
	r.P = C->grid.P;
	r.Q = C->grid.Q;
	/* The plan counts local tiles as ceil(mt / P); a distribution that gives one
	 * process more tiles is planned as the cyclic one of that many local tiles. */
	if (C->rows.maxlocal > (r.mt + r.P - 1) / r.P)
		r.mt = C->rows.maxlocal * r.P;
	if (C->cols.maxlocal > (r.nt + r.Q - 1) / r.Q)
		r.nt = C->cols.maxlocal * r.Q;
	r.device_bytes = opt->device_bytes > 0
				 ? opt->device_bytes
				 : (int64_t)((opt->usable_fraction > 0 ? opt->usable_fraction : 0.9) *
					     (double)mem);
	r.b = opt->b;
	r.c = opt->c;
	r.d = opt->d;
	r.lookahead = opt->lookahead;
	r.c_fraction = opt->c_fraction;
	if (r.device_bytes <= 0)
		return stargemm__error(-ENODEV, "stargemm_pdgemm_ooc: StarPU reports no memory "
				       "size for the devices; give device_bytes");
	*pr = r;
	return 0;
}

int stargemm_pdgemm_plan(stargemm_trans transa, stargemm_trans transb,
			 const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			 const struct stargemm_matrix *C,
			 const struct stargemm_ooc_options *opt, struct stargemm_plan *plan)
{
	struct stargemm__gemm g = { .ta = transa, .tb = transb, .alpha = 1.0, .beta = 0.0,
				    .A = A, .B = B, .C = (struct stargemm_matrix *)C };
	struct stargemm_plan_request pr;
	int ret;

	stargemm__clear_error();
	if (!plan)
		return stargemm__error(-EINVAL, "stargemm_pdgemm_plan: plan is NULL");
	if ((ret = stargemm__ooc_request(&g, opt, 0, &pr)))
		return ret;
	return stargemm__product_plan(&g, &pr, plan);
}

/* Plan problem @p g, then run it through the plan and wait. */
static int run_ooc(struct stargemm__gemm *g, const struct stargemm_ooc_options *opt,
		   int before, struct stargemm_plan *plan)
{
	struct stargemm_plan_request pr;
	int ret;

	if ((ret = stargemm__ooc_request(g, opt, before, &pr)))
		return ret;
	/* In core, packed operands are multiplied asynchronously (src/product.c). */
	return stargemm__wait_after(stargemm__run_product(g, &pr, plan, NULL));
}

int stargemm_pdgemm_ooc(stargemm_trans transa, stargemm_trans transb, double alpha,
			const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			double beta, struct stargemm_matrix *C,
			const struct stargemm_ooc_options *opt, struct stargemm_plan *plan)
{
	struct stargemm__gemm g = { .ta = transa, .tb = transb, .alpha = alpha, .beta = beta,
				    .A = A, .B = B, .C = C, .fn = "stargemm_pdgemm_ooc",
				    .want = 'd', .typed = "stargemm_gemm_ooc()" };

	stargemm__clear_error();
	return run_ooc(&g, opt, 0, plan);
}

int stargemm_gemm_ooc(stargemm_trans transa, stargemm_trans transb, const void *alpha,
		      const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		      const void *beta, struct stargemm_matrix *C,
		      const struct stargemm_ooc_options *opt, struct stargemm_plan *plan)
{
	struct stargemm__gemm g = { .ta = transa, .tb = transb, .A = A, .B = B, .C = C,
				    .fn = "stargemm_gemm_ooc" };
	int ret;

	stargemm__clear_error();
	if (!(ret = stargemm__gemm_check(&g)))
		ret = stargemm__gemm_scalars(&g, alpha, beta);
	return run_ooc(&g, opt, ret, plan);
}
