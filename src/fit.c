/*
 * fit.c — an out-of-core plan sized by the memory its work list needs, not by the
 * dense model's tile count.
 *
 * The planner (src/plan.c) counts every tile at the largest tile's size and every C
 * block and chunk as dense. That is exact for dense matrices of equal tiles; with
 * irregular tiles (sizes uniform in [512, 2048]: the mean tile is 39% of the largest)
 * or block-sparse operands (half of A's and B's tiles absent) the list of such a plan
 * fills a fraction of the device, the blocks are smaller than they could be and A and
 * B are loaded more often than they need to be. So when the list needs less than 90%
 * of what the plan counted, the plan is computed again with a smaller planning unit
 * (the bytes the planner counts per tile), the list inspected again and its footprint
 * (stargemm__worklist_footprint()) measured, until it fills the device's budget:
 * the next unit is the last fitting one scaled by footprint / budget (a block's
 * footprint grows about linearly with the capacity it is planned for), halved
 * geometrically towards a unit known to overflow once one is; a few tries. The plan
 * kept is the fitting one with the smallest unit (the largest blocks and chunks) if
 * its list loads fewer tiles than the dense plan's (stargemm__worklist_loads()), the
 * dense plan otherwise: deeper chunks of the same blocks load as many tiles and only
 * fill the memory, which with equal tiles was slower (doc/design.md, Decisions, "Plans
 * fitted to the list's footprint").
 *
 * On GPUs, with the planner's lookahead of two (several C blocks), the fit is done
 * again with a lookahead of one, and that plan kept when its list loads at most 95%
 * of the tiles: the chunk it leaves to the blocks can make them larger
 * (try_shorter_lookahead()). And when the chunks' loads are fetches (one GPU, tiles of
 * several shapes), a fitted plan of chunks deeper than one k is replaced by its blocks
 * with chunks one k deep, unless that list loads more than 5% more tiles: the memory
 * the blocks could not use made the pipeline coarser (try_shallow_chunks()); then,
 * unless the list runs as batches, the room left goes to the longest lookahead up to 4
 * that fits, the executor metering these loads (src/loads.h, try_longer_lookahead()).
 *
 * Every rank must run the same list: the footprint of each try is the largest over
 * the ranks (a callback: MPI in src/product.c, none in the unit tests), so every rank
 * takes the same decisions. Plans with overridden b, c or d are not refitted. A whole
 * plan given (b, c and d) that the planner refuses by its count of largest tiles (the
 * fitted plans that --plan prints are such plans) is taken when its list fits the
 * budget: the list's footprint is what decides, as for the fitted plans.
 *
 * Pure: no MPI, no StarPU. Unit-tested in tests/test_inspect.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "error.h"
#include "worklist.h"

/* Tries after the dense plan. */
#define FIT_TRIES 6

/* One plan and its list: the unit it was planned with and what it needs. */
struct candidate {
	int64_t unit;
	struct stargemm_plan plan;
	struct stargemm__worklist wl;
	int64_t footprint;       /* the most bytes a device of any rank needs */
};

/* @p value becomes the largest over the ranks (collective; identity on one rank). */
static int agree_max(struct stargemm__fit *f, int64_t *value)
{
	return f->max_over_ranks ? f->max_over_ranks(value, f->arg) : 0;
}

/* The footprint of @p wl on this rank's devices, then the largest over the ranks
 * (collective: a rank that cannot measure takes part with INT64_MAX). */
static int footprint(struct stargemm__fit *f, const struct stargemm__worklist *wl, int64_t *out)
{
	const struct stargemm__request *r = f->r;
	int64_t *peak = calloc((size_t)wl->ndevices, sizeof(*peak));
	int ret = peak ? stargemm__worklist_footprint_of(wl, r, f->elem, peak) : -ENOMEM;
	int agreed;

	*out = ret ? INT64_MAX : 0;
	for (int g = 0; g < wl->ndevices && !ret; g++)
		*out = peak[g] > *out ? peak[g] : *out;
	free(peak);
	agreed = agree_max(f, out);
	if (ret)
		return stargemm__error(ret, "stargemm: out of memory for the plan's footprint");
	return agreed;
}

/* Plan with @p unit bytes per tile into @p c; -EINVAL when no plan fits (the same on
 * every rank: the request is). */
static int plan_unit(struct stargemm__fit *f, int64_t unit, struct candidate *c)
{
	struct stargemm_plan_request pr = *f->pr;

	c->unit = pr.tile_bytes = unit;
	return stargemm_plan_compute(&pr, &c->plan);
}

/* Whether @p pr gives the whole plan: its shape is fixed whatever the unit. */
static int whole_override(const struct stargemm_plan_request *pr)
{
	return pr->b && pr->c && pr->d;
}

/* A whole plan given, refused at the largest tile's size: planned at the largest unit
 * its tile count fits into @p c (the planner's error when no unit would do: an
 * override beyond the matrix, a depth beyond kt). */
static int plan_given(struct stargemm__fit *f, struct candidate *c)
{
	struct stargemm_plan_request pr = *f->pr;
	struct stargemm_plan probe;
	int ret;

	pr.tile_bytes = 1;
	if ((ret = stargemm_plan_compute(&pr, &probe)))
		return ret;
	return plan_unit(f, pr.device_bytes / probe.tiles_needed, c);
}

/* The error for a given plan whose list needs more than the device has. */
static int given_too_big(const struct candidate *c, int64_t budget)
{
	return stargemm__error(-EINVAL, "stargemm: the plan b=%" PRId64 " c=%" PRId64 " d=%"
			       PRId64 " lookahead=%d needs %.1f MiB on a device for its work "
			       "list (its C block and lookahead+1 chunks of the tiles they "
			       "read) but a device has %.1f MiB", c->plan.b, c->plan.c,
			       c->plan.d, c->plan.lookahead, (double)c->footprint / 1048576.0,
			       (double)budget / 1048576.0);
}

/* Inspect @p c's plan and measure its footprint. Collective: a rank whose inspection
 * fails still takes part, with a footprint that overflows every budget. */
static int inspect_plan(struct stargemm__fit *f, struct candidate *c)
{
	int ret;

	f->r->plan = &c->plan;
	f->r->tile_bytes = c->unit;
	f->tries++;
	if ((ret = stargemm__inspect(f->r, &c->wl)) == 0)
		return footprint(f, &c->wl, &c->footprint);
	c->footprint = INT64_MAX;
	agree_max(f, &c->footprint);
	return ret;
}

/* The next unit to try below @p best's, or 0 when none is worth trying: @p fail is
 * the largest unit known to overflow the budget (0: none yet). */
static int64_t next_unit(const struct candidate *best, int64_t fail, int64_t budget)
{
	double u = (double)best->unit * (double)best->footprint / (double)budget;

	if (fail > 0 && u <= 1.02 * (double)fail)
		u = sqrt((double)best->unit * (double)fail);
	if (u >= 0.98 * (double)best->unit || (fail > 0 && u <= 1.02 * (double)fail) || u < 1.0)
		return 0;
	return (int64_t)u;
}

/* The tiles @p wl makes this rank's devices load (stargemm__worklist_loads(), summed
 * over the devices), then the most over the ranks (collective, as footprint()). */
static int64_t most_loads(struct stargemm__fit *f, const struct stargemm__worklist *wl)
{
	double *loads = calloc((size_t)wl->ndevices, sizeof(*loads));
	int64_t sum = INT64_MAX;

	if (loads && stargemm__worklist_loads(wl, !f->r->beta_zero, loads) == 0) {
		sum = 0;
		for (int g = 0; g < wl->ndevices; g++)
			sum += (int64_t)loads[g];
	}
	free(loads);
	if (agree_max(f, &sum))
		sum = INT64_MAX;
	return sum;
}

/* Search, from the dense plan's candidate @p dense, the fitting plan with the smallest
 * unit into @p best (@p dense itself when none fits: f->fitted says which). */
static void search(struct stargemm__fit *f, const struct candidate *dense, struct candidate *best)
{
	int64_t fail = 0, budget = f->pr->device_bytes, unit;
	struct candidate next;

	*best = *dense;
	for (int t = 0; t < FIT_TRIES && (unit = next_unit(best, fail, budget)); t++) {
		next = (struct candidate){ 0 };
		if (plan_unit(f, unit, &next)) {  /* no plan at this unit: stop at the best */
			stargemm__clear_error();
			break;
		}
		/* A failed inspection is an overflow on every rank (see inspect_plan()). */
		if (inspect_plan(f, &next) == 0 && next.footprint <= budget) {
			if (f->fitted)
				stargemm__worklist_free(&best->wl);
			*best = next;
			f->fitted = 1;
		} else {
			fail = unit;
			stargemm__worklist_free(&next.wl);
			stargemm__clear_error();
		}
		if ((double)best->footprint >= 0.95 * (double)budget)
			break;
	}
}

/* The plan of f->pr fitted to its list into @p best: the dense plan, or the fitting one
 * search() finds if its list loads fewer tiles (f->fitted says which). *searched is
 * whether a search was worth it (the dense list fills less than 90% of its count). On
 * an error best->footprint is the agreed one: INT64_MAX when an inspection failed on
 * some rank, 0 when none was agreed (the planner's error, the same on every rank). */
static int fit_request(struct stargemm__fit *f, struct candidate *best, int *searched)
{
	const struct stargemm_plan_request *pr = f->pr;
	struct candidate dense = { 0 };
	int ret, given = 0;

	f->fitted = *searched = 0;
	if ((ret = plan_unit(f, pr->tile_bytes, &dense)) == -EINVAL && whole_override(pr))
		given = (ret = plan_given(f, &dense)) == 0;
	if (ret || (ret = inspect_plan(f, &dense)) ||
	    (given && dense.footprint > pr->device_bytes &&
	     (ret = given_too_big(&dense, pr->device_bytes)))) {
		stargemm__worklist_free(&dense.wl);
		best->footprint = dense.footprint;   /* INT64_MAX: an inspection failed */
		return ret;
	}
	*best = dense;
	/* Overridden plans are the user's; a list that fills what the plan counted has
	 * nothing to gain. */
	*searched = !pr->b && !pr->c && !pr->d &&
		(double)dense.footprint < 0.9 * (double)(dense.plan.tiles_needed * dense.unit);
	if (*searched)
		search(f, &dense, best);
	/* A fitted plan that loads no fewer tiles (deeper chunks of the same blocks) is
	 * not worth its fuller memory. */
	if (f->fitted && most_loads(f, &best->wl) >= most_loads(f, &dense.wl)) {
		stargemm__worklist_free(&best->wl);
		*best = dense;
		f->fitted = 0;
	} else if (f->fitted) {
		stargemm__worklist_free(&dense.wl);
	}
	return 0;
}

/* Fit request @p alt_pr and take its plan into @p best when its list fits the device and
 * loads at most @p share of @p best's tiles. Collective, as fit_request(): a rank whose
 * inspection failed returns at once; the others then have the agreed footprint beyond
 * the budget, so that none goes on to most_loads(). Returns 1 when an inspection failed
 * on some rank (the agreed footprint is INT64_MAX, which no list's is): every rank
 * then stops trying, so that none makes a collective call after it. */
static int try_request(struct stargemm__fit *f, const struct stargemm_plan_request *alt_pr,
		       double share, struct candidate *best)
{
	const struct stargemm_plan_request *pr = f->pr;
	struct candidate alt = { 0 };
	int fitted = f->fitted, searched;

	f->pr = alt_pr;
	if (fit_request(f, &alt, &searched) == 0 && alt.footprint <= pr->device_bytes &&
	    (double)most_loads(f, &alt.wl) <= share * (double)most_loads(f, &best->wl)) {
		stargemm__worklist_free(&best->wl);
		*best = alt;
		f->fitted = 1;
	} else {
		stargemm__worklist_free(&alt.wl);
		stargemm__clear_error();
		f->fitted = fitted;
	}
	f->pr = pr;
	return alt.footprint == INT64_MAX;
}

/* At most this share of the tiles of the plan fitted with a lookahead of two, and the
 * plan fitted with one is kept. */
#define SHORTER_LOADS 0.95

/* Fit again with a lookahead of one chunk and take that plan into @p best when its list
 * loads at most SHORTER_LOADS of @p best's tiles. A lookahead of one leaves a chunk's
 * memory more to the C block; blocks grow by steps, and when that memory is what the
 * next step lacked the list loads far fewer tiles and runs faster. When the blocks stay
 * the same, the loads are as many and the deeper lookahead hides more (doc/design.md,
 * Decisions, "ℓ = 1 when it loads at most 95% of ℓ = 2's tiles"). Collective, as
 * fit_request(). */
static int try_shorter_lookahead(struct stargemm__fit *f, struct candidate *best)
{
	struct stargemm_plan_request one = *f->pr;

	one.lookahead = 1;
	return try_request(f, &one, SHORTER_LOADS, best);
}

/* At most this share more tiles, and the plan of one-deep chunks is kept. */
#define SHALLOW_LOADS 1.05

/* The fitted plan's blocks with chunks one k deep, taken into @p best when its list
 * loads at most SHALLOW_LOADS of @p best's tiles. The search grows the planning unit's
 * capacity; once the blocks cannot grow (they go by steps), what is left deepens the
 * chunks, which loads no fewer tiles and makes the pipeline coarser: the executor waits
 * for whole chunks, and each block starts with a whole chunk's loads and nothing to
 * overlap them with. The list of shallower chunks needs less memory than the fitted
 * one's, so it fits. Only for the lists whose loads the executor asks for as fetches
 * (one GPU, tiles of several shapes): with two GPUs, or equal tiles, the fitted deeper
 * chunks ran faster (doc/design.md, Decisions, "Chunks one k deep on fetch lists").
 * Collective, as fit_request(). */
static int try_shallow_chunks(struct stargemm__fit *f, struct candidate *best)
{
	struct stargemm_plan_request one = *f->pr;

	one.b = best->plan.b;
	one.c = best->plan.c;
	one.d = 1;
	one.lookahead = best->plan.lookahead;
	return try_request(f, &one, SHALLOW_LOADS, best);
}

/* The longest lookahead try_longer_lookahead() gives. */
#define LONGEST_LOOKAHEAD 4

/* The fitted plan's blocks and chunks with a lookahead one chunk longer, taken into
 * @p best while its list fits the device and loads no more tiles; at most
 * LONGEST_LOOKAHEAD. Only for lists whose loads the executor meters (src/loads.h):
 * there the chunks further ahead wait their turn on the link, and a longer lookahead
 * keeps it busy across the chunks that load more than their GEMMs take; unmetered, a
 * longer lookahead lost (doc/design.md, Decisions, "Loads metered"). Not for batched
 * lists: packed small tiles ran slower with a longer one (ibid., "The longest lookahead
 * that fits, up to 4"). Collective, as fit_request(). */
static int try_longer_lookahead(struct stargemm__fit *f, struct candidate *best)
{
	while (best->plan.lookahead < LONGEST_LOOKAHEAD) {
		struct stargemm_plan_request more = *f->pr;
		int before = best->plan.lookahead;

		more.b = best->plan.b;
		more.c = best->plan.c;
		more.d = best->plan.d;
		more.lookahead = before + 1;
		if (try_request(f, &more, 1.0, best))
			return 1;
		if (best->plan.lookahead == before)
			break;
	}
	return 0;
}

int stargemm__fit_plan(struct stargemm__fit *f, struct stargemm_plan *plan,
		       struct stargemm__worklist *wl)
{
	struct candidate best = { 0 };
	int ret, searched, stop = 0;

	f->tries = 0;
	if ((ret = fit_request(f, &best, &searched)))
		return ret;
	/* The planner's lookahead of two, on a GPU list a search could fit: see whether
	 * one loads fewer tiles. Not under a RAM budget: on the CPU block-sparse problem
	 * of doc/performance.md the plan of lookahead one loaded more tiles than
	 * predicted, outside the [0.90, 1.05] band (doc/design.md, Decisions, "Under a
	 * RAM budget"). */
	if (searched && best.wl.gpus && !f->pr->lookahead && best.plan.lookahead > 1)
		stop = try_shorter_lookahead(f, &best);
	/* Fitted lists whose loads are fetches: the same blocks with chunks one k deep. */
	if (!stop && f->fitted && stargemm__worklist_fetches_ahead(&best.wl) && best.plan.d > 1)
		stop = try_shallow_chunks(f, &best);
	/* ... and the room left to a longer lookahead, unless the user gave one. */
	if (!stop && f->fitted && stargemm__worklist_fetches_ahead(&best.wl) &&
	    !f->pr->lookahead && !f->batched)
		try_longer_lookahead(f, &best);
	f->footprint = best.footprint;
	*plan = best.plan;
	plan->footprint_bytes = best.footprint;
	*wl = best.wl;
	/* A fitted plan's count (in its unit) may be below what its list needs. */
	if (f->fitted && best.footprint > wl->need_bytes)
		wl->need_bytes = best.footprint;
	f->r->plan = plan;
	f->r->tile_bytes = best.unit;
	return 0;
}
