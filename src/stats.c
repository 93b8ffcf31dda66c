/*
 * stats.c — count what the runtime moves, to hold it against the communication model.
 *
 * Memory-node transfers come from StarPU's per-bus counters (one count per tile copy,
 * bytes copied); reading them resets them, so they are drained into process-wide
 * accumulators. MPI traffic comes from StarPU-MPI's per-destination byte counters
 * (enabled by STARPU_COMM_STATS=1, which stargemm_init() sets when counting is on);
 * what a rank received is the sum of what the others sent to it, obtained with one
 * reduction. The peak of StarPU-allocated host memory (received MPI copies, and all
 * tiles when StarPU manages the storage) is sampled as out-of-core tasks complete.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "../sched/ooc.h"
#include "collective.h"
#include "contract.h"
#include "error.h"
#include "hostpool.h"
#include "process.h"
#include "stargemm.h"
#include "stats.h"

static struct stargemm_transfer_stats acc;
static size_t *mpi_base;   /* StarPU-MPI's cumulative sent bytes at the last reset */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t ram_peak;  /* peak of StarPU-allocated host memory */

void stargemm__sample_memory(void)
{
	starpu_ssize_t total = starpu_memory_get_total(STARPU_MAIN_RAM);
	starpu_ssize_t avail = starpu_memory_get_available(STARPU_MAIN_RAM);
	/* StarPU's count when host memory has a budget (it counts the freed buffers it
	 * keeps); else, with the pinned host pool, its live buffers (freed ones are back
	 * in the pool at once) */
	uint64_t used = total > 0 && avail >= 0 && avail <= total ? (uint64_t)(total - avail)
							    : stargemm__hostpool_buffers_used();
	uint64_t seen = atomic_load(&ram_peak);

	while (used > seen && !atomic_compare_exchange_weak(&ram_peak, &seen, used))
		;
}

static void add_bus(int src, int dst, uint64_t count, uint64_t bytes)
{
	enum starpu_node_kind ks = starpu_node_get_kind((unsigned)src);
	enum starpu_node_kind kd = starpu_node_get_kind((unsigned)dst);

	if (kd == STARPU_CUDA_RAM) {
		int dev = starpu_memory_node_get_devid((unsigned)dst);

		if (dev >= 0 && dev < STARGEMM_MAX_DEVICES) {
			acc.device_loads[dev] += count;
			if (ks == STARPU_CUDA_RAM)
				acc.device_peer_loads[dev] += count;
			if (dev + 1 > acc.ndevices)
				acc.ndevices = dev + 1;
		}
		if (ks == STARPU_CUDA_RAM) {
			acc.d2d_tiles += count;
			acc.d2d_bytes += bytes;
		} else if (ks == STARPU_CPU_RAM) {
			acc.h2d_tiles += count;
			acc.h2d_bytes += bytes;
		}
	} else if (ks == STARPU_CUDA_RAM && kd == STARPU_CPU_RAM) {
		acc.d2h_tiles += count;
		acc.d2h_bytes += bytes;
	} else if (ks == STARPU_DISK_RAM && kd == STARPU_CPU_RAM) {
		acc.disk_read_tiles += count;
		acc.disk_read_bytes += bytes;
	} else if (ks == STARPU_CPU_RAM && kd == STARPU_DISK_RAM) {
		acc.disk_write_tiles += count;
		acc.disk_write_bytes += bytes;
	}
}

/* Move StarPU's bus counters (reset by reading) into the accumulators. */
static void drain_buses(void)
{
	int nbus = starpu_bus_get_count();

	for (int bus = 0; bus < nbus; bus++) {
		struct starpu_profiling_bus_info info;

		if (starpu_bus_get_profiling_info(bus, &info) != 0)
			continue;
		if (info.transfer_count > 0)
			add_bus(starpu_bus_get_src(bus), starpu_bus_get_dst(bus),
				(uint64_t)info.transfer_count, (uint64_t)info.transferred_bytes);
	}
}

/* Bytes sent to every rank since StarPU-MPI started (zeros when not counting). */
static void mpi_sent(size_t *sent)
{
	memset(sent, 0, (size_t)stargemm_nranks() * sizeof(*sent));
	starpu_mpi_comm_amounts_retrieve(sent);
	stargemm__reduction_bytes(sent);
}

/* This rank's sent and received bytes since the last reset. */
static int mpi_traffic(uint64_t *sent_total, uint64_t *received)
{
	int n = stargemm_nranks(), me = stargemm_rank(), ret;
	size_t *now = calloc((size_t)n, sizeof(*now));
	uint64_t *delta = calloc((size_t)n, sizeof(*delta));
	uint64_t *sum = calloc((size_t)n, sizeof(*sum));

	if (!now || !delta || !sum) {
		free(now);
		free(delta);
		free(sum);
		return stargemm__error(-ENOMEM, "stargemm_transfers_get: out of memory");
	}
	mpi_sent(now);
	*sent_total = 0;
	for (int r = 0; r < n; r++) {
		delta[r] = now[r] - (mpi_base ? mpi_base[r] : 0);
		*sent_total += delta[r];
	}
	/* Element r of the sum is what every rank sent to rank r. */
	ret = stargemm__sum_u64(delta, sum, n);
	*received = sum[me];
	free(now);
	free(delta);
	free(sum);
	return ret;
}

int stargemm_transfers_reset(void)
{
	uint64_t taken, unprefetched, late;

	stargemm__clear_error();
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "stargemm_transfers_reset: call stargemm_init() "
				       "first");
	pthread_mutex_lock(&lock);
	drain_buses();
	memset(&acc, 0, sizeof(acc));
	stargemm__sched_counts(&taken, &unprefetched, &late, 1);
	atomic_store(&ram_peak, 0);
	stargemm__sample_memory();
	free(mpi_base);
	mpi_base = calloc((size_t)stargemm_nranks(), sizeof(*mpi_base));
	if (mpi_base)
		mpi_sent(mpi_base);
	pthread_mutex_unlock(&lock);
	return mpi_base ? 0 : stargemm__error(-ENOMEM, "stargemm_transfers_reset: out of memory");
}

int stargemm_transfers_get(struct stargemm_transfer_stats *stats)
{
	int ret;

	stargemm__clear_error();
	if (!stats)
		return stargemm__error(-EINVAL, "stargemm_transfers_get: stats is NULL");
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "stargemm_transfers_get: call stargemm_init() first");
	pthread_mutex_lock(&lock);
	drain_buses();
	*stats = acc;
	stats->ram_peak_bytes = atomic_load(&ram_peak);
	stargemm__sched_counts(&stats->ooc_tasks, &stats->unprefetched_tasks, &stats->late_tasks,
			       0);
	pthread_mutex_unlock(&lock);
	ret = mpi_traffic(&stats->mpi_sent_bytes, &stats->mpi_recv_bytes);
	return ret;
}

void stargemm__transfers_shutdown(void)
{
	uint64_t taken, unprefetched, late;

	free(mpi_base);
	mpi_base = NULL;
	memset(&acc, 0, sizeof(acc));
	stargemm__sched_counts(&taken, &unprefetched, &late, 1);
	stargemm__reduction_shutdown();
}
