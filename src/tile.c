/*
 * tile.c — the tile side stargemm recommends for a dense product
 * (stargemm_tile_recommend()), which the host calls, the ScaLAPACK drop-in's merged
 * blocks and the benchmark take by default.
 *
 * Without GPUs: of the sides 64 to 2048, the largest whose predicted rate is within
 * TILE_WITHIN of the best. The prediction is one core's rate on tile products of that
 * side, as measured on this machine for the kernel they will take (codelets/calibrate.c:
 * up to 256 the small products' choice, beyond it one BLAS call, measured at 512, 1024
 * and 2048), times the share of the workers that C's tiles keep busy (each C tile's
 * chain of updates runs on one worker). The rate by side is measured because it is not
 * flat on every CPU (doc/performance.md, "At the recommended tile"). Without
 * measurements (STARGEMM_CALIBRATE=0, SimGrid builds): 256, whose products go to the
 * small kernels in batches.
 *
 * With GPUs: 2048, the side of the out-of-core runs of doc/performance.md; the GPUs'
 * kernels and links are not measured yet.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "internal.h"
#include "../codelets/calibrate.h"

#define TILE_GPU 2048
#define TILE_UNMEASURED 256
/* Of the candidate tiles, the largest whose predicted rate is within this of the best:
 * fewer, larger tasks cost the runtime less than the prediction sees. */
#define TILE_WITHIN 0.95

/* One core's rate on tile products of side @p tile, as measured for the kernel they
 * will take: up to 256 a side the small products' choice (codelets/smallgemm.c, which
 * both the batches and the single tile tasks make), above that one BLAS call. */
static double tile_rate(const struct stargemm__calibration *cal,
			const struct stargemm__element *t, int64_t tile, double _Complex alpha)
{
	int ti = stargemm__cal_type(t->letter);

	if (tile > 256)
		return stargemm__cal_blas_rate(cal, ti, (double)tile);
	return cal->small[ti][stargemm__cal_class((int)tile, (int)tile, (int)tile)]
			 [stargemm__small_choice(t, 'N', (int)tile, (int)tile, (int)tile, alpha, 0)];
}

/* The share of the workers' time a C of m x n in tiles of side @p tile keeps busy:
 * each C tile's chain of products runs on one worker, so that ntiles chains on
 * @p workers workers take ceil(ntiles / workers) rounds. */
static double parallel_share(int64_t m, int64_t n, int64_t tile, int64_t workers)
{
	int64_t ntiles = ((m + tile - 1) / tile) * ((n + tile - 1) / tile);
	int64_t rounds = (ntiles + workers - 1) / workers;

	return (double)ntiles / ((double)rounds * (double)workers);
}

int64_t stargemm__tile_for(const struct stargemm__element *t, int64_t m, int64_t n,
			   double _Complex alpha, int64_t workers)
{
	static const int64_t candidates[] = { 64, 128, 256, 512, 1024, 2048 };
	enum { NCAND = sizeof(candidates) / sizeof(candidates[0]) };
	const struct stargemm__calibration *cal = stargemm__calibration();
	double predicted[NCAND], best = 0.0;
	int64_t tile = TILE_UNMEASURED;

	if (stargemm_ncuda_workers() > 0)
		return TILE_GPU;
	if (!cal->measured)
		return TILE_UNMEASURED;
	workers = workers > 0 ? workers : 1;
	m = m > 0 ? m : 1;
	n = n > 0 ? n : 1;
	for (int i = 0; i < NCAND; i++) {
		predicted[i] = tile_rate(cal, t, candidates[i], alpha) *
			       parallel_share(m, n, candidates[i], workers);
		best = predicted[i] > best ? predicted[i] : best;
	}
	for (int i = 0; i < NCAND; i++)
		if (predicted[i] >= TILE_WITHIN * best)
			tile = candidates[i];
	return tile;
}

int stargemm_tile_recommend(stargemm_type type, int64_t m, int64_t n, int64_t k, int64_t *nb)
{
	const struct stargemm__element *t = stargemm__element((int)type);

	if (!nb)
		return stargemm__error(-EINVAL, "stargemm_tile_recommend: nb is NULL");
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "stargemm_tile_recommend: stargemm is not "
				       "initialised (call stargemm_init() first)");
	if (!t)
		return stargemm__error(-EINVAL, "stargemm_tile_recommend: type %d is not one of "
				       "STARGEMM_S, _D, _C, _Z", (int)type);
	if (m < 0 || n < 0 || k < 0)
		return stargemm__error(-EINVAL, "stargemm_tile_recommend: %s = %lld must be >= 0",
				       m < 0 ? "m" : n < 0 ? "n" : "k",
				       (long long)(m < 0 ? m : n < 0 ? n : k));
	*nb = stargemm__tile_for(t, m, n, 1.0,
				 (int64_t)stargemm_ncpu_workers() * stargemm_nranks());
	return 0;
}

int stargemm__host_tile(const struct stargemm__element *t, int64_t m, int64_t n,
			double _Complex alpha, int64_t *nb)
{
	double value;
	int ret = stargemm__setting(STARGEMM__HOST_TILE, &value);

	if (ret)
		return ret;
	if (isnan(value))   /* unset */
		value = (double)stargemm__tile_for(t, m, n, alpha, stargemm_ncpu_workers());
	if (value < 1 || value > 65536)
		return stargemm__error(-EINVAL, "STARGEMM_HOST_TILE=%g: expected a tile side "
				       "from 1 to 65536", value);
	*nb = (int64_t)value;
	return 0;
}
