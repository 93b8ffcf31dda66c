/*
 * plan.c — the out-of-core planner: block sizes b x c, chunk depth d and lookahead ell
 * for the chunked, blocked outer product of Herault et al. 2019 (§2, §3.2), and the
 * transfers its communication model predicts.
 *
 * Each rank owns mloc x nloc tiles of C (2D block-cyclic over P x Q); its G devices
 * share the C columns cyclically, so one device computes about b x c/G tiles of a
 * block. The planner picks the largest C block that fits in c_fraction (75%) of a
 * device, square on each device (b = c/G) when possible and evened out over the local
 * C; then the deepest chunk
 * such that the block plus ell + 1 chunks of A and B (b d + ceil(c/G) d tiles each) fit
 * — ell + 1 because the executor keeps the current chunk and ell prefetched ones in
 * flight. Everything is in tiles of the largest tile's footprint. The paper's case (b)
 * is not planned (see stargemm.h): loads are predicted with Eq. (1) (a) or (c).
 *
 * A block of L local columns whose L is not a multiple of G is not dealt out in whole
 * columns — G - L mod G devices would wait for the others: its last L mod G columns
 * are split in row ranges over all G devices (stargemm__split_device()). The memory
 * check and Eq. (1) are therefore evaluated per device from that deal: a device with
 * w whole columns and a range of s split tiles holds w R + s C tiles and needs, per k,
 * the A tiles of its rows and the B tiles of its columns (a split column's B tile is
 * loaded by each device that has some of its tiles). The model deals the split tiles
 * by count; the executor by area (ragged tiles are smaller), which is the same deal
 * when the tiles are equal and moves a range boundary by a few tiles otherwise.
 *
 * Pure: no MPI, no StarPU. Unit-tested in tests/test_plan.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "plan.h"
#include "sizes.h"
#include "stargemm.h"

/* The most devices per rank a request may count: the planner visits each. */
#define PLAN_MAX_DEVICES 1024

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

int stargemm__check_plan_overrides(int64_t b, int64_t c, int64_t d, int lookahead,
				   double c_fraction, const char *fn)
{
	if (b < 0 || c < 0 || d < 0 || lookahead < 0)
		return stargemm__error(-EINVAL, "%s: overrides must be >= 0 (0 = choose), got "
				       "b=%" PRId64 " c=%" PRId64 " d=%" PRId64 " lookahead=%d", fn,
				       b, c, d, lookahead);
	if (!(c_fraction >= 0.0 && c_fraction < 1.0))   /* NaN too */
		return stargemm__error(-EINVAL, "%s: c_fraction must be in (0, 1) (0 = 0.75), got "
				       "%g", fn, c_fraction);
	return 0;
}

static int check_request(const struct stargemm_plan_request *r)
{
	static const char fn[] = "stargemm_plan_compute";
	int ret;

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
	if ((ret = stargemm__check_plan_overrides(r->b, r->c, r->d, r->lookahead,
						  r->c_fraction, fn)))
		return ret;
	/* The three operands are matrices: each within the tiles a matrix may have
	 * (src/sizes.h), which keeps every count below far from overflow. */
	if (stargemm__mul_sat(r->mt, r->nt) > STARGEMM__MAX_TILES ||
	    stargemm__mul_sat(r->mt, r->kt) > STARGEMM__MAX_TILES ||
	    stargemm__mul_sat(r->kt, r->nt) > STARGEMM__MAX_TILES)
		return stargemm__error(-EOVERFLOW, "%s: mt=%" PRId64 " nt=%" PRId64 " kt=%" PRId64
				       ": an operand of more than 2^40 tiles (the limit of a "
				       "matrix)", fn, r->mt, r->nt, r->kt);
	if (r->devices > PLAN_MAX_DEVICES)
		return stargemm__error(-EINVAL, "%s: devices=%d: at most %d devices per rank",
				       fn, r->devices, PLAN_MAX_DEVICES);
	return 0;
}

/* Largest c <= cmax with b * ceil(c / G) <= budget (0 if none). */
static int64_t widest(int64_t b, int64_t budget, int64_t cmax, int G)
{
	int64_t per_device = budget / b;  /* columns of C one device may hold */

	int64_t cols = stargemm__mul_sat(per_device, G);

	return cols < cmax ? cols : cmax;
}

/* Largest b <= bmax with b * ceil(c / G) <= budget (0 if none). */
static int64_t tallest(int64_t c, int64_t budget, int64_t bmax, int G)
{
	int64_t rows = budget / cdiv(c, G);  /* rows of C one device may hold */

	return rows < bmax ? rows : bmax;
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
		p->b = tallest(p->c, budget, p->mloc, (int)G);
	} else if (p->mloc * cdiv(p->nloc, G) <= budget) {
		p->b = p->mloc;  /* all of this rank's C stays resident */
		p->c = p->nloc;
	} else {
		/* Square on each device (b x c/G), as the paper's b x c block per GPU: a
		 * device loads b + c/G tiles of A and B per k step for its b c/G tiles of C,
		 * the fewest at b = c/G. Square per rank (b = c) loaded far more on 3
		 * simulated GPUs (doc/out-of-core.md, "Planner", "C block"). */
		s = (int64_t)sqrt((double)budget);   /* the largest s with s^2 <= budget */
		while (s > 0 && s > budget / s)
			s--;
		while ((s + 1) <= budget / (s + 1))
			s++;
		p->b = s < p->mloc ? s : p->mloc;
		p->c = widest(p->b, budget, p->nloc, (int)G);
		if (p->c == p->nloc && tallest(p->c, budget, p->mloc, (int)G) > p->b)
			p->b = tallest(p->c, budget, p->mloc, (int)G);
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

int stargemm__split_device(int64_t before, int64_t total, int G)
{
	return (int)(before * G / total);
}

/* What the devices of a rank need, accumulated over its blocks and devices. */
struct need {
	int64_t capacity, ahead, d;  /* in: tiles a device holds; ell + 1; chunk depth */
	int64_t dmax;                /* out: deepest chunk every device can hold */
	int64_t tiles;               /* out: most tiles a device needs at depth d */
	int64_t c_max;               /* out: most C tiles a device holds */
	double sum_a, sum_b, sum_c;  /* out: A rows, B columns, C tiles, summed */
};

/* One device of @p blocks blocks: c C tiles, a A rows and b B columns per k. */
static void account(struct need *n, int64_t c, int64_t a, int64_t b, int64_t blocks)
{
	int64_t room;

	if (blocks == 0)
		return;
	int64_t per_depth = stargemm__mul_sat(n->ahead, a + b);   /* tiles per unit of d */
	int64_t tiles = stargemm__add_sat(c, stargemm__mul_sat(per_depth, n->d));

	room = a + b ? (n->capacity - c) / per_depth : INT64_MAX;
	n->dmax = room < n->dmax ? room : n->dmax;
	n->tiles = tiles > n->tiles ? tiles : n->tiles;
	n->c_max = c > n->c_max ? c : n->c_max;
	n->sum_a += (double)a * (double)blocks;
	n->sum_b += (double)b * (double)blocks;
	n->sum_c += (double)c * (double)blocks;
}

/* The devices of a block of R x L local tiles (@p blocks of them): w = L / G whole
 * columns each, then the split tiles in ranges (stargemm__split_device()); devices
 * are visited in order, a range being contiguous in column-major order. */
static void account_block(struct need *n, int64_t R, int64_t L, int G, int64_t blocks)
{
	int64_t w = L / G, nsplit = (L % G) * R;

	for (int g = 0; g < G; g++) {
		/* the split tiles e with stargemm__split_device(e) = floor(e G / nsplit) = g */
		int64_t first = (int64_t)(((__int128)g * nsplit + G - 1) / G);
		int64_t e = (int64_t)(((__int128)(g + 1) * nsplit + G - 1) / G);
		int64_t len = e - first, cols = len ? (e - 1) / R - first / R + 1 : 0;
		int64_t rows = w ? R : (len < R ? len : R);

		account(n, w * R + len, rows, w + cols, blocks);
	}
}

/* Visit the (at most four) block shapes of the plan: b or the last rows, c or the last
 * columns, each with its number of blocks. */
static void account_plan(const struct stargemm_plan_request *r, const struct stargemm_plan *p,
			 struct need *n)
{
	int64_t R[2] = { p->b, p->mloc - (p->X - 1) * p->b };
	int64_t L[2] = { p->c, p->nloc - (p->Y - 1) * p->c };
	int64_t nx[2] = { p->X - 1, 1 }, ny[2] = { p->Y - 1, 1 };

	n->dmax = INT64_MAX;
	n->tiles = n->c_max = 0;
	n->sum_a = n->sum_b = n->sum_c = 0.0;
	for (int sx = 0; sx < 2; sx++)
		for (int sy = 0; sy < 2; sy++)
			account_block(n, R[sx], L[sy], r->devices, nx[sx] * ny[sy]);
}

/* Choose (or check) the chunk depth and lookahead; fills p->d, p->lookahead. */
static int choose_depth(const struct stargemm_plan_request *r, struct stargemm_plan *p)
{
	static const char fn[] = "stargemm_plan_compute";
	struct need n = { .capacity = p->capacity };

	p->X = cdiv(p->mloc, p->b);
	p->Y = cdiv(p->nloc, p->c);
	p->lookahead = r->lookahead ? r->lookahead : (p->X * p->Y == 1 ? 1 : 2);
	n.ahead = p->lookahead + 1;
	if (r->d > r->kt)
		return stargemm__error(-EINVAL, "%s: the chunk depth override d=%" PRId64 " exceeds "
				       "kt=%" PRId64, fn, r->d, r->kt);
	account_plan(r, p, &n);
	if (r->d) {
		p->d = r->d;
	} else {
		p->d = n.dmax;
		if (p->d < 1)
			return stargemm__error(-EINVAL, "%s: no chunk fits: the C block (b=%" PRId64
					       " x c=%" PRId64 ", up to %" PRId64 " tiles per device) "
					       "leaves too little of %" PRId64 " tiles for %d chunk(s) "
					       "of depth 1", fn, p->b, p->c, n.c_max, p->capacity,
					       (int)n.ahead);
		p->d = p->d < r->kt ? p->d : r->kt;
		p->d = cdiv(r->kt, cdiv(r->kt, p->d));
	}
	p->Z = cdiv(r->kt, p->d);
	n.d = p->d;
	account_plan(r, p, &n);
	p->tiles_needed = n.tiles;
	if (p->tiles_needed > p->capacity)
		return stargemm__error(-EINVAL, "%s: the plan b=%" PRId64 " c=%" PRId64 " d=%" PRId64
				       " lookahead=%d needs %" PRId64 " tiles on a device (its C "
				       "tiles + (lookahead+1)*(its A rows + B columns)*d) but a "
				       "device holds %" PRId64 " tiles (%" PRId64 " bytes / %" PRId64
				       " bytes per tile)", fn, p->b, p->c, p->d, p->lookahead,
				       p->tiles_needed, p->capacity, r->device_bytes, r->tile_bytes);
	return 0;
}

/* The tiles process (p, q) of the cyclic grid receives over MPI (§3.2.1, op = N): for
 * each of its block columns, the A tiles of its C rows whose k column another process
 * column owns, and for each block row, the B tiles of its C columns whose k row another
 * process row owns. */
static double rank_receives(const struct stargemm_plan_request *r,
			    const struct stargemm_plan *p, int pr, int qr)
{
	int64_t mp = r->mt / r->P + (pr < r->mt % r->P), nq = r->nt / r->Q + (qr < r->nt % r->Q);
	int64_t kq = r->kt / r->Q + (qr < r->kt % r->Q), kp = r->kt / r->P + (pr < r->kt % r->P);
	double blocks_y = (double)cdiv(nq, p->c), blocks_x = (double)cdiv(mp, p->b);

	return (double)mp * (double)(r->kt - kq) * blocks_y +
	       (double)nq * (double)(r->kt - kp) * blocks_x;
}

/* The most any process receives: a process's count depends only on where its row (its
 * column) stands against mt % P and kt % P (nt % Q and kt % Q), so the first one of
 * each class is enough. On an even grid every process receives the same,
 * (mloc (1 - 1/Q) Y + nloc (1 - 1/P) X) Kt. */
static double busiest_receives(const struct stargemm_plan_request *r,
			       const struct stargemm_plan *p)
{
	int64_t ps[4] = { 0, r->mt % r->P, r->kt % r->P, r->P - 1 };
	int64_t qs[4] = { 0, r->nt % r->Q, r->kt % r->Q, r->Q - 1 };
	double most = 0.0;

	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			double got = rank_receives(r, p, (int)ps[i], (int)qs[j]);

			most = got > most ? got : most;
		}
	return most;
}

/* Regime and predicted transfers (Eq. 1 and §3.2.1). Loads per device are the mean
 * over the devices of what each one's tiles need (account_block()); with whole columns
 * that is Eq. (1): A Y mloc Kt, B X Kt nloc / G, C mloc nloc / G. */
static void predict(const struct stargemm_plan_request *r, struct stargemm_plan *p)
{
	struct need n = { .capacity = p->capacity, .ahead = 1, .d = p->d };
	int64_t G = r->devices;
	int64_t a_slice = p->mloc * r->kt, b_slice = r->kt * cdiv(p->nloc, G);
	double kt = (double)r->kt;

	if (p->X * p->Y == 1)
		p->regime = a_slice + b_slice + p->mloc * cdiv(p->nloc, G) <= p->capacity
				    ? STARGEMM_CASE_A : STARGEMM_CASE_C1;
	else
		p->regime = STARGEMM_CASE_C2;
	account_plan(r, p, &n);
	p->loads_c = n.sum_c / (double)G;
	p->loads_a = n.sum_a * kt / (double)G;
	p->loads_b = n.sum_b * kt / (double)G;
	p->loads_total = p->loads_a + p->loads_b + p->loads_c;
	p->mpi_tiles = busiest_receives(r, p);
}

/* The largest C block (within c_fraction of the device) that still leaves room for
 * ell + 1 chunks of depth >= 1: when the first choice leaves too little, the block
 * budget shrinks until a chunk fits. Overridden blocks are only checked. */
static int choose_blocks_and_depth(const struct stargemm_plan_request *r,
				   struct stargemm_plan *p)
{
	double frac = r->c_fraction > 0 ? r->c_fraction : 0.75;
	double share = frac * (double)p->capacity;
	int64_t budget = share < 0x1p62 ? (int64_t)share : (int64_t)1 << 62;
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
	p->tile_bytes = r->tile_bytes;
	p->capacity = r->device_bytes / r->tile_bytes;
	p->mloc = cdiv(r->mt, r->P);
	p->nloc = cdiv(r->nt, r->Q);
	if ((ret = choose_blocks_and_depth(r, p)))
		return ret;
	predict(r, p);
	return 0;
}
