/*
 * bsgemm.c — the block-sparse product with norm filtering (Schütt et al., DBCSR):
 * the tile norms of A and B (src/norms.c) go into the inspector's request, which
 * leaves out every product whose norm bound ||op(A)(i,k)|| ||op(B)(k,j)|| is below
 * eps; the list runs on the one executor, in core or out of core; then C's tiles whose
 * norm fell below eps are dropped (stargemm_matrix_filter()).
 *
 * A C tile whose every product was filtered out still gets beta (the inspector lists
 * it for scaling), so that the result is exactly alpha times the kept products plus
 * beta C.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void stargemm_bsgemm_options_init(struct stargemm_bsgemm_options *opt)
{
	*opt = (struct stargemm_bsgemm_options){ 0 };
	stargemm_ooc_options_init(&opt->ooc);
}

/* Every rank's tile norms of A and B, for the inspector. */
static int share_norms(struct stargemm__gemm *g, double **na, double **nb)
{
	const struct stargemm_matrix *A = g->A, *B = g->B;
	int ret;

	*na = malloc((size_t)(A->mt * A->nt > 0 ? A->mt * A->nt : 1) * sizeof(double));
	*nb = malloc((size_t)(B->mt * B->nt > 0 ? B->mt * B->nt : 1) * sizeof(double));
	if (!*na || !*nb)
		return stargemm__error(-ENOMEM, "%s: out of memory for the tile norms (%" PRId64
				       " + %" PRId64 " tiles)", g->fn, A->mt * A->nt,
				       B->mt * B->nt);
	if ((ret = stargemm_matrix_norms(A, *na)) || (ret = stargemm_matrix_norms(B, *nb)))
		return ret;
	g->norm_a = *na;
	g->norm_b = *nb;
	return 0;
}

/* Tiles of @p g's generated operands made on this rank so far (@p on_gpus: of those,
 * by their CUDA generators). */
static int64_t generated_count(const struct stargemm__gemm *g, int on_gpus)
{
	return stargemm__generated_count(g->A, on_gpus) +
	       (g->B != g->A ? stargemm__generated_count(g->B, on_gpus) : 0);
}

/* Insert the product (out of core: run it) and wait for it. */
static int run(struct stargemm__gemm *g, const struct stargemm_bsgemm_options *opt,
	       struct stargemm_bsgemm_info *info)
{
	struct stargemm_plan_request pr;
	int ret;

	if (!opt->out_of_core) {
		ret = stargemm__run_product(g, NULL, NULL, info);
	} else {
		if ((ret = stargemm__ooc_request(g, &opt->ooc, 0, &pr)))
			return ret;
		ret = stargemm__run_product(g, &pr, &info->plan, info);
	}
	/* Wait even when insertion failed midway: inserted tasks are running. */
	return stargemm__wait_after(ret);
}

/* Every field of the options in its range, for the checked problem @p g. */
static int check_options(const struct stargemm__gemm *g, const struct stargemm_bsgemm_options *opt)
{
	if (!(opt->filter_eps >= 0.0) || isinf(opt->filter_eps))
		return stargemm__error(-EINVAL, "%s: filter_eps must be finite and >= 0, got %g",
				       g->fn, opt->filter_eps);
	if (opt->out_of_core != 0 && opt->out_of_core != 1)
		return stargemm__error(-EINVAL, "%s: out_of_core must be 0 or 1, got %d", g->fn,
				       opt->out_of_core);
	if (opt->stationary && opt->stationary != 'A' && opt->stationary != 'B' &&
	    opt->stationary != 'C')
		return stargemm__error(-EINVAL, "%s: stationary must be 0 (the model's choice), "
				       "'A', 'B' or 'C', got %d", g->fn, opt->stationary);
	if ((opt->stationary == 'A' || opt->stationary == 'B') &&
	    (opt->out_of_core || stargemm__gemm_packed(g)))
		return stargemm__error(-EINVAL, "%s: stationary '%c' is in core and without "
				       "packed operands only (the out-of-core plan and the "
				       "batches over packs keep C in place)", g->fn,
				       opt->stationary);
	if (opt->reuse_a < 0 || opt->reuse_b < 0)
		return stargemm__error(-EINVAL, "%s: reuse_a and reuse_b must be >= 0 (products "
				       "that read A, B unchanged), got %d and %d", g->fn,
				       opt->reuse_a, opt->reuse_b);
	return 0;
}

/* The options every rank must pass alike, hashed (the out-of-core ones are agreed by
 * stargemm__ooc_request()). */
static uint64_t options_fingerprint(const struct stargemm_bsgemm_options *opt)
{
	int v[4] = { opt->out_of_core, opt->stationary, opt->reuse_a, opt->reuse_b };

	return stargemm__fingerprint(stargemm__fingerprint(0, v, sizeof(v)), &opt->filter_eps,
				     sizeof(opt->filter_eps));
}

/* The product of @p g (its scalars set from @p alpha and @p beta, of C's type, when the
 * call does not take them in double: g->want = 0): checks, norms, run, filtering. */
static int bsgemm(struct stargemm__gemm *g, const void *alpha, const void *beta,
		  const struct stargemm_bsgemm_options *opt, struct stargemm_bsgemm_info *info)
{
	struct stargemm_bsgemm_options none;
	struct stargemm_bsgemm_info local;
	double *na = NULL, *nb = NULL;
	int64_t made = generated_count(g, 0), made_on_gpus = generated_count(g, 1);
	int ret;

	stargemm__clear_error();
	if (!opt) {
		stargemm_bsgemm_options_init(&none);
		opt = &none;
	}
	info = info ? info : &local;
	memset(info, 0, sizeof(*info));
	if (!(ret = stargemm__gemm_check(g)) && !g->want)
		ret = stargemm__gemm_scalars(g, alpha, beta);
	if (!ret)
		ret = check_options(g, opt);
	/* Every rank's checks and arguments agreed before any message of the product. */
	if ((ret = stargemm__gemm_agree(g, ret, options_fingerprint(opt))))
		return ret;
	g->eps = opt->filter_eps;
	g->stationary = opt->stationary;
	g->reuse_a = opt->reuse_a;
	g->reuse_b = opt->reuse_b;
	if (g->eps > 0.0 && (ret = share_norms(g, &na, &nb)))
		goto out;
	if ((ret = run(g, opt, info)))
		goto out;
	if (g->eps > 0.0)
		ret = stargemm_matrix_filter(g->C, g->eps, &info->c_removed);
out:
	info->generated_tiles = generated_count(g, 0) - made;
	info->generated_on_gpus = generated_count(g, 1) - made_on_gpus;
	free(na);
	free(nb);
	return ret;
}

int stargemm_bsgemm(stargemm_trans transa, stargemm_trans transb, double alpha,
		    const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		    double beta, struct stargemm_matrix *C,
		    const struct stargemm_bsgemm_options *opt,
		    struct stargemm_bsgemm_info *info)
{
	struct stargemm__gemm g = { .ta = transa, .tb = transb, .alpha = alpha, .beta = beta,
				    .A = A, .B = B, .C = C, .fn = "stargemm_bsgemm",
				    .want = 'd', .typed = "stargemm_bsgemm_type()" };

	return bsgemm(&g, NULL, NULL, opt, info);
}

int stargemm_bsgemm_type(stargemm_trans transa, stargemm_trans transb, const void *alpha,
			 const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			 const void *beta, struct stargemm_matrix *C,
			 const struct stargemm_bsgemm_options *opt,
			 struct stargemm_bsgemm_info *info)
{
	struct stargemm__gemm g = { .ta = transa, .tb = transb, .A = A, .B = B, .C = C,
				    .fn = "stargemm_bsgemm_type" };

	return bsgemm(&g, alpha, beta, opt, info);
}
