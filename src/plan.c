/*
 * plan.c — the out-of-core planner: block sizes b x c, chunk depth d and lookahead ell
 * for the chunked, blocked outer product of Herault et al. 2019 (§2, §3.2), and the
 * transfers its communication model predicts.
 *
 * Each rank owns mloc x nloc tiles of C (2D block-cyclic over P x Q); its G devices
 * share the C columns cyclically, so one device computes b x ceil(c/G) tiles of a
 * block. The planner picks the largest C block that fits in c_fraction (75%) of a
 * device, square when possible and evened out over the local C; then the deepest chunk
 * such that the block plus ell + 1 chunks of A and B (b d + ceil(c/G) d tiles each) fit
 * — ell + 1 because the executor keeps the current chunk and ell prefetched ones in
 * flight. Everything is in tiles of the largest tile's footprint. The paper's case (b)
 * is not planned (see stargemm.h): loads are predicted with Eq. (1) (a) or (c).
 *
 * Pure: no MPI, no StarPU. Unit-tested in tests/test_plan.c.
 */
#include <inttypes.h>
#include <string.h>

#include "internal.h"

static int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

const char *stargemm_plan_case_name(enum stargemm_plan_case regime)
{
	switch (regime) {
	case STARGEMM_CASE_A: return "a";
	case STARGEMM_CASE_C1: return "c1";
	case STARGEMM_CASE_C2: return "c2";
	}
	return "?";
}

static int check_request(const struct stargemm_plan_request *r)
{
	static const char fn[] = "stargemm_plan_compute";

	if (r->mt <= 0 || r->nt <= 0 || r->kt <= 0)
		return stargemm__error(-EINVAL, "%s: tile counts must be > 0, got mt=%" PRId64
				       " nt=%" PRId64 " kt=%" PRId64, fn, r->mt, r->nt, r->kt);
	if (r->tile_bytes <= 0)
		return stargemm__error(-EINVAL, "%s: tile_bytes must be > 0, got %" PRId64, fn,
				       r->tile_bytes);
	if (r->P <= 0 || r->Q <= 0 || r->devices <= 0)
		return stargemm__error(-EINVAL, "%s: P, Q and devices must be > 0, got P=%d Q=%d "
				       "devices=%d", fn, r->P, r->Q, r->devices);
	if (r->device_bytes <= 0)
		return stargemm__error(-EINVAL, "%s: device_bytes must be > 0, got %" PRId64, fn,
				       r->device_bytes);
	if (r->b < 0 || r->c < 0 || r->d < 0 || r->lookahead < 0)
		return stargemm__error(-EINVAL, "%s: overrides must be >= 0 (0 = choose), got "
				       "b=%" PRId64 " c=%" PRId64 " d=%" PRId64 " lookahead=%d", fn,
				       r->b, r->c, r->d, r->lookahead);
	if (r->c_fraction < 0.0 || r->c_fraction >= 1.0)
		return stargemm__error(-EINVAL, "%s: c_fraction must be in (0, 1) (0 = 0.75), got "
				       "%g", fn, r->c_fraction);
	return 0;
}

/* Largest c <= cmax with b * ceil(c / G) <= budget (0 if none). */
static int64_t widest(int64_t b, int64_t budget, int64_t cmax, int G)
{
	int64_t per_device = budget / b;  /* columns of C one device may hold */

	return per_device * G < cmax ? per_device * G : cmax;
}

/* Choose (or check) the C block within @p budget tiles per device; fills p->b, p->c. */
static int choose_block(const struct stargemm_plan_request *r, struct stargemm_plan *p,
			int64_t budget)
{
	static const char fn[] = "stargemm_plan_compute";
	double frac = r->c_fraction > 0 ? r->c_fraction : 0.75;
	int64_t G = r->devices, s = 0;

	if (r->b > p->mloc || r->c > p->nloc)
		return stargemm__error(-EINVAL, "%s: the C block override b=%" PRId64 " x c=%"
				       PRId64 " exceeds this rank's C of %" PRId64 " x %" PRId64
				       " tiles", fn, r->b, r->c, p->mloc, p->nloc);
	if (r->b && r->c) {
		p->b = r->b;
		p->c = r->c;
		return 0;
	}
	if (budget < 1)
		return stargemm__error(-EINVAL, "%s: device memory too small: %.0f%% of %" PRId64
				       " bytes cannot hold one tile of %" PRId64 " bytes", fn,
				       100 * frac, r->device_bytes, r->tile_bytes);
	if (r->b) {
		p->b = r->b;
		p->c = widest(p->b, budget, p->nloc, (int)G);
	} else if (r->c) {
		p->c = r->c;
		p->b = budget / cdiv(p->c, G) < p->mloc ? budget / cdiv(p->c, G) : p->mloc;
	} else if (p->mloc * cdiv(p->nloc, G) <= budget) {
		p->b = p->mloc;  /* all of this rank's C stays resident */
		p->c = p->nloc;
	} else {
		while ((s + 1) * cdiv(s + 1, G) <= budget)
			s++;  /* largest square block */
		p->b = s < p->mloc ? s : p->mloc;
		p->c = widest(p->b, budget, p->nloc, (int)G);
	}
	if (p->b < 1 || p->c < 1)
		return stargemm__error(-EINVAL, "%s: no C block fits: with b=%" PRId64 " the "
				       "budget of %" PRId64 " tiles (%.0f%% of the device) holds no "
				       "column", fn, p->b, budget, 100 * frac);
	/* Even blocks: as many as needed, as equal as possible. */
	if (!r->b)
		p->b = cdiv(p->mloc, cdiv(p->mloc, p->b));
	if (!r->c) {
		p->c = cdiv(p->nloc, cdiv(p->nloc, p->c));
		/* Whole columns per device: rounding c up to a multiple of G keeps
		 * ceil(c/G), hence the memory per device, and balances the devices. */
		p->c = G * cdiv(p->c, G) < p->nloc ? G * cdiv(p->c, G) : p->nloc;
	}
	return 0;
}

/* Choose (or check) the chunk depth and lookahead; fills p->d, p->lookahead. */
static int choose_depth(const struct stargemm_plan_request *r, struct stargemm_plan *p)
{
	static const char fn[] = "stargemm_plan_compute";
	int64_t cg = cdiv(p->c, r->devices), block = p->b * cg, per_chunk = p->b + cg;
	int64_t ahead;

	p->X = cdiv(p->mloc, p->b);
	p->Y = cdiv(p->nloc, p->c);
	p->lookahead = r->lookahead ? r->lookahead : (p->X * p->Y == 1 ? 1 : 2);
	ahead = p->lookahead + 1;
	if (r->d > r->kt)
		return stargemm__error(-EINVAL, "%s: the chunk depth override d=%" PRId64 " exceeds "
				       "kt=%" PRId64, fn, r->d, r->kt);
	if (r->d) {
		p->d = r->d;
	} else {
		p->d = (p->capacity - block) / (ahead * per_chunk);
		if (p->d < 1)
			return stargemm__error(-EINVAL, "%s: no chunk fits: the C block (%" PRId64
					       " x %" PRId64 " = %" PRId64 " tiles per device) leaves %"
					       PRId64 " of %" PRId64 " tiles, and %d chunk(s) of depth 1 "
					       "need %" PRId64, fn, p->b, cg, block, p->capacity - block,
					       p->capacity, (int)ahead, ahead * per_chunk);
		p->d = p->d < r->kt ? p->d : r->kt;
		p->d = cdiv(r->kt, cdiv(r->kt, p->d));
	}
	p->Z = cdiv(r->kt, p->d);
	p->tiles_needed = block + ahead * per_chunk * p->d;
	if (p->tiles_needed > p->capacity)
		return stargemm__error(-EINVAL, "%s: the plan b=%" PRId64 " c=%" PRId64 " d=%" PRId64
				       " lookahead=%d needs %" PRId64 " tiles per device (b*ceil(c/G)"
				       " + (lookahead+1)*(b+ceil(c/G))*d) but a device holds %" PRId64
				       " tiles (%" PRId64 " bytes / %" PRId64 " bytes per tile)", fn,
				       p->b, p->c, p->d, p->lookahead, p->tiles_needed, p->capacity,
				       r->device_bytes, r->tile_bytes);
	return 0;
}

/* Regime and predicted transfers (Eq. 1 and §3.2.1). */
static void predict(const struct stargemm_plan_request *r, struct stargemm_plan *p)
{
	int64_t G = r->devices;
	int64_t a_slice = p->mloc * r->kt, b_slice = r->kt * cdiv(p->nloc, G);
	double mloc = (double)p->mloc, nloc = (double)p->nloc, kt = (double)r->kt;

	if (p->X * p->Y == 1)
		p->regime = a_slice + b_slice + p->mloc * cdiv(p->nloc, G) <= p->capacity
				    ? STARGEMM_CASE_A : STARGEMM_CASE_C1;
	else
		p->regime = STARGEMM_CASE_C2;
	p->loads_c = mloc * nloc / (double)G;
	p->loads_a = (double)p->Y * mloc * kt;
	p->loads_b = (double)p->X * kt * nloc / (double)G;
	p->loads_total = p->loads_a + p->loads_b + p->loads_c;
	p->mpi_tiles = (mloc * (1.0 - 1.0 / r->Q) * (double)p->Y +
			nloc * (1.0 - 1.0 / r->P) * (double)p->X) * kt;
}

/* The largest C block (within c_fraction of the device) that still leaves room for
 * ell + 1 chunks of depth >= 1: when the first choice leaves too little, the block
 * budget shrinks until a chunk fits. Overridden blocks are only checked. */
static int choose_blocks_and_depth(const struct stargemm_plan_request *r,
				   struct stargemm_plan *p)
{
	double frac = r->c_fraction > 0 ? r->c_fraction : 0.75;
	int64_t budget = (int64_t)(frac * (double)p->capacity);
	int ret;

	for (;;) {
		if ((ret = choose_block(r, p, budget)))
			return ret;
		ret = choose_depth(r, p);
		if (ret == 0 || (r->b && r->c) || r->d || budget <= 1)
			return ret;
		budget -= budget / 32 > 1 ? budget / 32 : 1;
	}
}

int stargemm_plan_compute(const struct stargemm_plan_request *r, struct stargemm_plan *p)
{
	int ret;

	stargemm__clear_error();
	if (!r || !p)
		return stargemm__error(-EINVAL, "stargemm_plan_compute: NULL argument");
	if ((ret = check_request(r)))
		return ret;
	memset(p, 0, sizeof(*p));
	p->capacity = r->device_bytes / r->tile_bytes;
	p->mloc = cdiv(r->mt, r->P);
	p->nloc = cdiv(r->nt, r->Q);
	if ((ret = choose_blocks_and_depth(r, p)))
		return ret;
	predict(r, p);
	return 0;
}
