/*
 * network.c — the rate at which a rank moves tiles over StarPU-MPI, for the stationary
 * choice's model (src/stationary.c): STARGEMM_NETWORK_RATE when set, else measured
 * once per communicator by the ranks themselves, since the ratio of the network to the
 * cores decides between keeping C in place and keeping A (paper 002) and no constant
 * holds from one machine's shared memory to a cluster's fabric.
 *
 * Measured through StarPU-MPI, as the products' tiles travel, not with bare MPI: on
 * two one-core ranks of one machine MPI_Sendrecv moved 27 GB/s and StarPU-MPI 1.3 about
 * 1 GB/s of tiles of 150-400 KiB, its thread sharing the core with the worker; the
 * partial tiles' sums were timed at the second figure. Each rank sends 16 tiles of
 * 256 KiB to the next rank of a ring and receives as many from the previous one, once
 * untimed and five times timed; its rate is the bytes it sent and received over the
 * median time (the best of three varied 16-fold between runs), and the run's is the
 * slowest rank's. In SimGrid the messages are the
 * simulated network's. The measurement's bytes are taken out of the transfer counters.
 * Collective: every rank calls it at the same point (the first in-core product of
 * several ranks that asks the model).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <starpu.h>
#include <starpu_mpi.h>

#include "collective.h"
#include "error.h"
#include "network.h"
#include "process.h"
#include "settings.h"
#include "stargemm.h"

#define TILE_BYTES (256 << 10)
#define MESSAGES 16
#define TRIALS 5

static double measured;      /* bytes/s, 0: not yet */
static MPI_Comm measured_on;

struct ring {
	char *out, *in;
	starpu_data_handle_t hs[MESSAGES], hr[MESSAGES];
};

/* The messages of one trial still under way; their callbacks count down. */
struct pending {
	starpu_pthread_mutex_t mutex;
	starpu_pthread_cond_t done;
	int left;
};

static void message_done(void *arg)
{
	struct pending *p = arg;

	starpu_pthread_mutex_lock(&p->mutex);
	if (--p->left == 0)
		starpu_pthread_cond_signal(&p->done);
	starpu_pthread_mutex_unlock(&p->mutex);
}

/* One trial: every message posted detached, then their callbacks awaited (a blocking
 * starpu_mpi_wait() makes StarPU-MPI 1.3's thread block in MPI_Wait: two ranks so
 * blocked on sends of 256 KiB, posted ahead of their receives, never returned; and
 * testing in a loop took the thread's core, up to 15 s a measurement under load). Its
 * seconds into *seconds. */
static int trial(struct ring *rg, double *seconds)
{
	int me = stargemm_rank(), n = stargemm_nranks(), ret = 0;
	int64_t tag = stargemm__reserve_tags(MESSAGES);
	struct pending p = { .left = 2 * MESSAGES };
	double t0 = starpu_timing_now();

	starpu_pthread_mutex_init(&p.mutex, NULL);
	starpu_pthread_cond_init(&p.done, NULL);
	for (int m = 0; m < MESSAGES; m++) {
		if (ret || starpu_mpi_irecv_detached(rg->hr[m], (me + n - 1) % n, tag + m,
						     stargemm__comm(), message_done, &p)) {
			ret = -EIO;
			message_done(&p);
		}
		if (ret || starpu_mpi_isend_detached(rg->hs[m], (me + 1) % n, tag + m,
						     stargemm__comm(), message_done, &p)) {
			ret = -EIO;
			message_done(&p);
		}
	}
	starpu_pthread_mutex_lock(&p.mutex);
	while (p.left > 0)
		starpu_pthread_cond_wait(&p.done, &p.mutex);
	starpu_pthread_mutex_unlock(&p.mutex);
	starpu_pthread_cond_destroy(&p.done);
	starpu_pthread_mutex_destroy(&p.mutex);
	*seconds = 1e-6 * (starpu_timing_now() - t0);
	if (ret)
		return stargemm__error(ret, "stargemm: the network measurement's messages "
				       "could not be posted");
	return stargemm__reduction_sent((me + 1) % n, (uint64_t)MESSAGES * TILE_BYTES);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* This rank's rate on the ring: bytes sent and received over the median trial's time. */
static int ring(struct ring *rg, double *rate)
{
	double seconds[TRIALS + 1];
	int ret = 0;

	for (int m = 0; m < MESSAGES; m++) {
		starpu_vector_data_register(&rg->hs[m], STARPU_MAIN_RAM,
					    (uintptr_t)(rg->out + (size_t)m * TILE_BYTES),
					    TILE_BYTES, 1);
		starpu_vector_data_register(&rg->hr[m], STARPU_MAIN_RAM,
					    (uintptr_t)(rg->in + (size_t)m * TILE_BYTES),
					    TILE_BYTES, 1);
	}
	for (int t = 0; t <= TRIALS && !ret; t++)
		ret = trial(rg, &seconds[t]);
	qsort(seconds + 1, TRIALS, sizeof(*seconds), by_value);
	for (int m = 0; m < MESSAGES; m++) {
		starpu_data_unregister(rg->hs[m]);
		starpu_data_unregister(rg->hr[m]);
	}
	*rate = 2.0 * MESSAGES * TILE_BYTES / seconds[1 + TRIALS / 2];
	return ret;
}

static int measure(double *rate)
{
	struct ring rg = { .out = calloc(MESSAGES, TILE_BYTES),
			   .in = malloc((size_t)MESSAGES * TILE_BYTES) };
	double mine = 0.0;
	uint64_t least = 0;
	int ret = rg.out && rg.in ? 0 : stargemm__error(-ENOMEM, "stargemm: out of memory "
							"for the network measurement");

	if (!(ret = stargemm__agree(ret)))
		ret = ring(&rg, &mine);
	free(rg.out);
	free(rg.in);
	/* the slowest rank's */
	if (!(ret = stargemm__agree(ret)) && !(ret = stargemm__extremes_u64((uint64_t)mine,
									     &least, NULL)))
		*rate = (double)least;
	return ret;
}

int stargemm__network_rate(double *rate)
{
	int ret = stargemm__setting(STARGEMM__NETWORK_RATE, rate);

	if (ret || !isnan(*rate)) {
		if (!ret && *rate == 0.0)
			ret = stargemm__error(-EINVAL, "stargemm: STARGEMM_NETWORK_RATE must be > 0");
		return ret;
	}
	if (stargemm_nranks() == 1) {
		*rate = INFINITY;
		return 0;
	}
	if (measured > 0.0 && measured_on == stargemm__comm()) {
		*rate = measured;
		return 0;
	}
	if ((ret = measure(rate)))
		return ret;
	measured = *rate;
	measured_on = stargemm__comm();
	return 0;
}
