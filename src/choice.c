/*
 * choice.c — which operand of an in-core product stays in place, decided on the ranks:
 * the forced choice, the split inner dimension of a small C, else the model of
 * src/stationary.c fed with what only the running ranks know — their rates (the CPU
 * kernels measured, StarPU's stored models of the tile product on each GPU, the bus
 * between host and GPUs, a task's cost on their GPUs, the network measured through
 * StarPU-MPI) and the tiles already in place (StarPU-MPI's cache of received tiles,
 * copies valid on the GPUs).
 * Each rank counts its own moves and loads; the ranks share their counts and rates,
 * so that all take the same choice.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../codelets/calibrate.h"
#include "internal.h"

/* The choice forced for product @p g: its option, else STARGEMM_STATIONARY ('A',
 * 'B', 'C'), or 0: none. */
static int forced_stationary(const struct stargemm__gemm *g, int *forced)
{
	const char *v = stargemm__setting_text(STARGEMM__STATIONARY);

	*forced = g->stationary;
	if (*forced || !v || !strcmp(v, "auto"))
		return 0;
	if ((v[0] == 'A' || v[0] == 'B' || v[0] == 'C') && !v[1]) {
		*forced = v[0];
		return 0;
	}
	return stargemm__error(-EINVAL, "stargemm: STARGEMM_STATIONARY='%s': expected auto, "
			       "A, B or C", v);
}

/* The side of the cube with the flops of the mean tile product of @p t (at least one
 * product), in @p g's type. */
static double mean_side(const struct stargemm__gemm *g, const struct stargemm__traffic *t)
{
	return cbrt(t->flops / (double)t->products / g->type->fma_flops);
}

/* The rate of a rank's CPU workers on the mean tile product of @p t: the fastest
 * kernel measured for its size class (codelets/calibrate.c; above 256 a side, also
 * BLAS at that side); when nothing was measured (STARGEMM_CALIBRATE=0, SimGrid mode), StarPU's
 * stored model of the tile product's rate for that cube (in SimGrid mode the simulated
 * CPU's, so that the model's times are the simulation's: doc/performance.md, "16
 * simulated ranks"); else 10 GFLOP/s a worker. */
static double cpu_rate(const struct stargemm__gemm *g, const struct stargemm__traffic *t)
{
	const struct stargemm__calibration *cal = stargemm__calibration();
	int type = stargemm__cal_type(g->type->letter), side = (int)mean_side(g, t);
	int c = stargemm__cal_class(side, side, side);
	double core = 0.0;

	for (int k = 0; cal->measured && type >= 0 && k < STARGEMM__CAL_KERNELS; k++)
		core = fmax(core, cal->small[type][c][k]);
	if (cal->measured && type >= 0 && side > 256)
		core = fmax(core, stargemm__cal_blas_rate(cal, type, side));
	if (core == 0.0)
		core = 1e-9 * stargemm__gemm_model_rate(g->type, -1, side, side, side);
	return 1e9 * (core > 0.0 ? core : 10.0) * stargemm_ncpu_workers();
}

/* The rate of a rank's GPUs (the CPU workers take no tile product there) on the mean
 * tile product of @p t, from StarPU's stored model of the tile product on each; 0
 * when a GPU has none yet (StarPU writes it once tile products ran there). */
static double gpu_rate(const struct stargemm__gemm *g, const struct stargemm__traffic *t)
{
	double side = mean_side(g, t), sum = 0.0;

	for (int d = 0; d < stargemm__device_count(); d++) {
		int worker = starpu_worker_get_by_type(STARPU_CUDA_WORKER, d);
		double rate = stargemm__gemm_model_rate(g->type, starpu_worker_get_devid(worker),
							side, side, side);

		if (rate <= 0.0)
			return 0.0;
		sum += rate;
	}
	return sum;
}

/* Bytes per second from the host to this rank's GPUs, all together, as StarPU's bus
 * model has them (MB/s per link). A rank with GPUs only. */
static double device_rate(void)
{
	double sum = 0.0;

	for (int d = 0; d < stargemm__device_count(); d++)
		sum += 1e6 * starpu_transfer_bandwidth(STARPU_MAIN_RAM, stargemm__device_node(d));
	return sum;
}

/* Whether the mean tile product of @p t is a cube of STARGEMM_PACK_BELOW a side or
 * more: smaller ones are the batches' and packs' (one task per product would cost more
 * than the traffic A or B saves, a cost the model does not count on CPU workers). */
static int large_tiles(const struct stargemm__gemm *g, const struct stargemm__traffic *t)
{
	double below, extent;

	if (t->products == 0 || stargemm__pack_settings(&below, &extent))
		return 0;
	return mean_side(g, t) >= below;
}

/* The busiest rank's tile-product tasks of each choice in @p t: one per product for A
 * and B, and for C unless its list runs as batches (stargemm__in_core_batched(); a
 * batch's own cost is not counted). */
static void count_tasks(const struct stargemm__request *r, struct stargemm__traffic *t)
{
	double mean = t[0].products > 0 ? t[0].flops / (double)t[0].products : 0.0;
	int batched = stargemm__in_core_batched(r, (double)t[0].products);

	for (int s = 0; s < STARGEMM__NSTAT; s++)
		t[s].tasks_max = mean > 0.0 && (s != STARGEMM__STAT_C || !batched)
					 ? t[s].flops_max / mean : 0.0;
}

/* The tile state's questions (struct stargemm__tile_state), of product @p arg's op(A)
 * (operand 0) and op(B) tiles. */
static starpu_data_handle_t op_tile(const struct stargemm__gemm *g, int operand, int64_t i,
				    int64_t j)
{
	return operand == 0 ? stargemm__gemm_a_tile(g, i, j) : stargemm__gemm_b_tile(g, i, j);
}

static int mpi_cached(void *arg, int operand, int64_t i, int64_t j, int from, int to)
{
	starpu_data_handle_t h = op_tile(arg, operand, i, j);

	(void)from;   /* this rank, when it is not @p to */
	return to == stargemm_rank() ? starpu_mpi_cached_receive(h)
				     : starpu_mpi_cached_send(h, to);
}

static int on_gpus(void *arg, int operand, int64_t i, int64_t j)
{
	starpu_data_handle_t h = op_tile(arg, operand, i, j);

	for (int d = 0; d < stargemm__device_count(); d++)
		if (starpu_data_is_on_node(h, stargemm__device_node(d)))
			return 1;
	return 0;
}

/* On a rank with GPUs, a received tile's host buffer is pinned memory (the pinned host
 * pool's, src/hostpool.c): what the pool holds free costs nothing, the rest is pinned
 * at the rate the pool pinned its slabs so far (or a probe's, when it pinned none or
 * is off). In SimGrid
 * mode StarPU charges 650 µs a MiB, 1.6 GB/s, which made a cold C-stationary
 * product on 4 simulated ranks take 0.33 s where the network alone gave 0.02 s. */
static void pinning(struct stargemm__tile_state *st)
{
	double rate, room;

	stargemm__hostpool_pinning(&rate, &room);
	for (int s = 0; rate > 0.0 && s < STARGEMM__NSTAT; s++)
		st->pin_seconds[s] = fmax(0.0, st->received[s] - room) / rate;
}

/* What the ranks share: for each phase p of @p nph, every rank's counts (struct
 * stargemm__tile_state, rank q's row at (p n + q) STARGEMM__STAT_ROW), then every
 * rank's flop and device rates and task cost (at RATES(n, nph) + 3 q). */
#define RATES(n, nph) ((size_t)(n) * (size_t)(nph) * STARGEMM__STAT_ROW)

/* Share the ranks' rows of the @p nph phases (this rank's: @p rows, phase after phase)
 * and their rates (this rank's: @p mine) and set each phase's busiest-rank counts in
 * @p t[p] from them; *rates the slowest rank's (a device term only when every rank has
 * GPUs; the costliest task). One collective for all. */
static int share(int nph, const double *rows, const struct stargemm__rates *mine,
		 struct stargemm__traffic (*t)[STARGEMM__NSTAT], struct stargemm__rates *rates)
{
	int n = stargemm_nranks(), me = stargemm_rank(), ret;
	size_t size = RATES(n, nph) + 3 * (size_t)n;
	double *v = calloc(size, sizeof(*v)), *rate;

	ret = v ? 0 : stargemm__error(-ENOMEM, "stargemm: out of memory");
	if ((ret = stargemm__agree(ret))) {
		free(v);
		return ret;
	}
	rate = v + RATES(n, nph);
	for (int p = 0; p < nph; p++)
		memcpy(v + ((size_t)p * n + me) * STARGEMM__STAT_ROW,
		       rows + (size_t)p * STARGEMM__STAT_ROW, STARGEMM__STAT_ROW * sizeof(*v));
	rate[3 * me] = mine->flops;
	rate[3 * me + 1] = mine->device;
	rate[3 * me + 2] = mine->task;
	ret = stargemm__share_owned_f64(v, (int64_t)size);
	if ((ret = stargemm__agree(ret))) {
		free(v);
		return ret;
	}
	rates->flops = rate[0];
	rates->device = rate[1];
	rates->task = rate[2];
	for (int q = 1; q < n; q++) {
		rates->flops = fmin(rates->flops, rate[3 * q]);
		rates->device = fmin(rates->device, rate[3 * q + 1]);
		rates->task = fmax(rates->task, rate[3 * q + 2]);
	}
	for (int p = 0; p < nph; p++)
		stargemm__stationary_ranks(t[p], v + (size_t)p * n * STARGEMM__STAT_ROW, n);
	free(v);
	return 0;
}

/* This rank's rates when the model is to choose (@p choose, the same on every rank):
 * its flops and device rates and, with GPUs, a task's cost (its first GPU's, shared by
 * its GPUs) into @p mine, the pinning of what it receives into @p st, the network's
 * rate into @p rates (measured with the workers running: its messages go through
 * StarPU-MPI; collective). */
static int rates_of(const struct stargemm__gemm *g, const struct stargemm__request *r,
		    int paused, int choose, const struct stargemm__traffic *t,
		    struct stargemm__tile_state *st, struct stargemm__rates *mine,
		    struct stargemm__rates *rates)
{
	struct stargemm__task_probe *probe = NULL;
	int ret = 0, task;

	*mine = *rates = (struct stargemm__rates){ 0.0, 0.0, 0.0, 0.0 };
	if (!choose)
		return 0;
	mine->flops = r->gpus ? gpu_rate(g, t) : cpu_rate(g, t);
	if (r->gpus) {
		mine->device = device_rate();
		pinning(st);
	}
	stargemm__quiet_end(paused);
	/* a task's cost measured on the GPUs while the network is on the MPI thread */
	if (r->gpus)
		ret = stargemm__task_probe_start(&probe);
	/* every rank measures the network, or none does */
	if (!(ret = stargemm__agree(ret)))
		ret = stargemm__network_rate(&rates->net);
	if ((task = stargemm__task_probe_finish(probe, &mine->task)) && !ret)
		ret = task;
	mine->task /= stargemm__device_count();
	if (paused)
		starpu_pause();
	return ret;
}

/* This rank's rows of the phases after the first of @p ph (@p nph in all) into @p rows
 * (phase p's at p STARGEMM__STAT_ROW) and the phases' walks into @p t[p]: the products
 * walked with the unchanged operands in place, without pinning (the host pool keeps
 * what the first product pinned). 0, or -ENOMEM. */
static int later_phases(const struct stargemm__request *r, int64_t elem,
			struct stargemm__tile_state *st, const struct stargemm__phase *ph,
			int nph, double *rows, struct stargemm__traffic (*t)[STARGEMM__NSTAT])
{
	int ret = 0;

	for (int p = 1; !ret && p < nph; p++) {
		st->in_place = ph[p].in_place;
		ret = stargemm__stationary_traffic(r, stargemm_nranks(), elem, st, t[p]);
		stargemm__stationary_row(st, rows + (size_t)p * STARGEMM__STAT_ROW);
	}
	st->in_place = 0;
	return ret;
}

/* The model's choice from the phases' counts @p t at @p rates, their mean times per
 * product into @p info. */
static enum stargemm__stationary model_choice(const struct stargemm__traffic (*t)[STARGEMM__NSTAT],
					      const struct stargemm__phase *ph, int nph,
					      const struct stargemm__rates *rates,
					      struct stargemm_bsgemm_info *info)
{
	double time[STARGEMM__NSTAT];

	for (int v = 0; v < STARGEMM__NSTAT; v++) {
		time[v] = stargemm__stationary_mean_time(t, ph, nph, (enum stargemm__stationary)v,
							 rates);
		if (info)
			info->model_seconds[v] = time[v];
	}
	return stargemm__stationary_pick(time, 7u);
}

/* Every rank's counts of the phases @p ph into @p t and, when the model is to choose,
 * the rates: this product's walk in @p t[0] is this rank's; the later phases are
 * walked only when choosing. Collective. */
static int counts(const struct stargemm__gemm *g, const struct stargemm__request *r,
		  int paused, int choose, struct stargemm__tile_state *st,
		  const struct stargemm__phase *ph, int nph,
		  struct stargemm__traffic (*t)[STARGEMM__NSTAT], struct stargemm__rates *rates)
{
	double rows[STARGEMM__MAX_PHASES * STARGEMM__STAT_ROW];
	struct stargemm__rates mine;
	int ret = rates_of(g, r, paused, choose, t[0], st, &mine, rates);

	nph = choose ? nph : 1;
	stargemm__stationary_row(st, rows);
	if (!ret && nph > 1 && later_phases(r, g->C->elem_size, st, ph, nph, rows, t))
		ret = stargemm__error(-ENOMEM, "stargemm: out of memory for the stationary model");
	if ((ret = stargemm__agree(ret)) || (ret = share(nph, rows, &mine, t, rates)))
		return ret;
	for (int p = 0; p < nph; p++)
		count_tasks(r, t[p]);
	return 0;
}

int stargemm__choose_stationary(const struct stargemm__gemm *g, const struct stargemm__request *r,
				int paused, enum stargemm__stationary *s, int *width,
				struct stargemm_bsgemm_info *info)
{
	struct stargemm__traffic t[STARGEMM__MAX_PHASES][STARGEMM__NSTAT];
	struct stargemm__phase ph[STARGEMM__MAX_PHASES];
	struct stargemm__tile_state st = { .me = stargemm_rank(), .cached = mpi_cached,
					   .on_device = r->gpus ? on_gpus : NULL,
					   .arg = (void *)g };
	struct stargemm__rates rates;
	int forced, split = stargemm__ksplit_width(g), ret = 0, model = stargemm_nranks() > 1;
	int choose, nph = stargemm__stationary_phases(g->reuse_a, g->reuse_b, ph);

	if (split < 0 || forced_stationary(g, &forced))
		return split < 0 ? split : -EINVAL;
	*s = forced == 'A' ? STARGEMM__STAT_A : forced == 'B' ? STARGEMM__STAT_B
							      : STARGEMM__STAT_C;
	*width = split > 0 ? split : 1;
	if (stargemm__gemm_packed(g)) {   /* the work list's batches over packs only */
		*s = STARGEMM__STAT_C;
		return 0;
	}
	if (model && stargemm__stationary_traffic(r, stargemm_nranks(), g->C->elem_size, &st,
						  t[0]))
		ret = stargemm__error(-ENOMEM, "stargemm: out of memory for the stationary model");
	/* every rank takes the same path (the network measurement is collective) */
	if (model && (ret = stargemm__agree(ret)))
		return ret;
	choose = !forced && split == 0 && model && large_tiles(g, &t[0][0]);
	if (model && (ret = counts(g, r, paused, choose, &st, ph, nph, t, &rates)))
		return ret;
	if (!forced && split > 0)
		*s = STARGEMM__STAT_A;
	/* C when a rank does not know its rate (the same on every rank) */
	if (choose && rates.flops > 0.0)
		*s = model_choice((const struct stargemm__traffic (*)[STARGEMM__NSTAT])t, ph, nph,
				  &rates, info);
	if (info)
		info->model_mpi_bytes = model ? t[0][*s].bytes : 0.0;
	return 0;
}
