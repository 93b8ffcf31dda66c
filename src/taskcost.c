/*
 * taskcost.c — what one tile-product task costs a rank's GPU beyond its flops: StarPU's
 * scheduling and data acquisition, the kernel's launch, the wait for its stream. For
 * the stationary choice's model (src/choice.c): keeping A or B in place runs one task
 * per tile product, where C's list of small products runs as batches of many, and on
 * a GPU that cost decides — on 2 x 2 simulated ranks of a V100 (tiles 100-200, 64
 * columns), a repeated product took 0.0035 s with C kept (batched) and 0.024 s with A
 * (555 tasks a rank), though A moves fewer bytes; the same ranks' first product took
 * 0.162 s with C and 0.106 s with A, where the moves decide.
 *
 * Measured once per process, on the first GPU: PROBE_TASKS independent products of
 * SIDE^3 doubles (each into a C tile of its own, as the partial tiles of one k are),
 * after WARM_TASKS untimed ones (the tiles' first loads, cuBLAS's start); the cost is
 * the elapsed time over PROBE_TASKS, the kernels' own time being negligible at this
 * size. The probe takes 0.6 ms on a simulated V100 (15 us a task).
 * The tasks are tile products as the codelets run them (codelets/gemm.c's CUDA
 * function); outside SimGrid mode without a performance model, so that StarPU's
 * model of the tile product keeps the shapes of real products only; in SimGrid mode
 * with it (a simulated task needs one).
 */
#include <complex.h>
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define SIDE 32
#define PROBE_TASKS 32
#define WARM_TASKS 8

static double measured;   /* seconds per task, 0: not yet */

/* The probe's tasks still under way; their callbacks count down. */
struct countdown {
	starpu_pthread_mutex_t mutex;
	starpu_pthread_cond_t done;
	int left;
};

static void task_done(void *arg)
{
	struct countdown *c = arg;

	starpu_pthread_mutex_lock(&c->mutex);
	if (--c->left == 0)
		starpu_pthread_cond_signal(&c->done);
	starpu_pthread_mutex_unlock(&c->mutex);
}

/* The tile product's CUDA function, with or without its model (see above). */
static void probe_codelet(struct starpu_codelet *cl)
{
	*cl = (struct starpu_codelet){
		.name = "stargemm_task_cost",
		.where = STARPU_CUDA,
		.cuda_funcs = { stargemm_gemm_overwrite_cl.cuda_funcs[0] },
		.cuda_flags = { stargemm_gemm_overwrite_cl.cuda_flags[0] },
		.nbuffers = 3,
		.modes = { STARPU_R, STARPU_R, STARPU_W },
	};
#ifdef STARPU_SIMGRID
	cl->model = stargemm_gemm_overwrite_cl.model;
#endif
}

/* One round: @p n products on the first GPU into the tiles @p c, awaited; its seconds
 * into *seconds. */
static int round_of(struct starpu_codelet *cl, starpu_data_handle_t a, starpu_data_handle_t b,
		    starpu_data_handle_t *c, int n, struct stargemm_task_info *info,
		    double *seconds)
{
	struct countdown cd = { .left = n };
	char type = 'd', op = 'N';
	double _Complex one = 1.0, zero = 0.0;
	double t0 = starpu_timing_now();
	int ret = 0;

	starpu_pthread_mutex_init(&cd.mutex, NULL);
	starpu_pthread_cond_init(&cd.done, NULL);
	for (int t = 0; t < n; t++) {
		info[t] = (struct stargemm_task_info){ .device = 0,
						       .prefetch = STARGEMM_PREFETCH_READY,
						       .block = -1 };
		if (ret || starpu_task_insert(cl, STARPU_VALUE, &type, sizeof(type),
					      STARPU_VALUE, &op, sizeof(op),
					      STARPU_VALUE, &op, sizeof(op),
					      STARPU_VALUE, &one, sizeof(one),
					      STARPU_VALUE, &zero, sizeof(zero),
					      STARPU_R, a, STARPU_R, b, STARPU_W, c[t],
					      STARPU_TASK_SCHED_DATA, &info[t],
					      STARPU_CALLBACK_WITH_ARG_NFREE, task_done, &cd, 0)) {
			ret = -EIO;
			task_done(&cd);
		}
	}
	starpu_pthread_mutex_lock(&cd.mutex);
	while (cd.left > 0)
		starpu_pthread_cond_wait(&cd.done, &cd.mutex);
	starpu_pthread_mutex_unlock(&cd.mutex);
	starpu_pthread_cond_destroy(&cd.done);
	starpu_pthread_mutex_destroy(&cd.mutex);
	*seconds = 1e-6 * (starpu_timing_now() - t0);
	return ret;
}

/* Register the probe's tiles in @p mem (A, B, then PROBE_TASKS C tiles), run an
 * untimed round and a timed one, and let them go; the timed round's seconds per task. */
static int probe(double *mem, double *seconds)
{
	struct stargemm_task_info info[PROBE_TASKS];
	starpu_data_handle_t h[PROBE_TASKS + 2];
	struct starpu_codelet cl;
	double elapsed = 0.0;
	int ret;

	probe_codelet(&cl);
	for (int t = 0; t < PROBE_TASKS + 2; t++)
		starpu_matrix_data_register(&h[t], STARPU_MAIN_RAM,
					    (uintptr_t)(mem + (size_t)t * SIDE * SIDE), SIDE, SIDE,
					    SIDE, sizeof(double));
	ret = round_of(&cl, h[0], h[1], h + 2, WARM_TASKS, info, &elapsed);
	if (!ret)
		ret = round_of(&cl, h[0], h[1], h + 2, PROBE_TASKS, info, &elapsed);
	for (int t = 0; t < PROBE_TASKS + 2; t++)
		starpu_data_unregister_no_coherency(h[t]);
	*seconds = elapsed / PROBE_TASKS;
	return ret;
}

int stargemm__gpu_task_seconds(double *seconds)
{
	double *mem;
	int ret;

	*seconds = measured;
	if (measured > 0.0 || starpu_cuda_worker_get_count() == 0)
		return 0;
	mem = calloc((size_t)(PROBE_TASKS + 2) * SIDE * SIDE, sizeof(*mem));
	if (!mem)
		return stargemm__error(-ENOMEM, "stargemm: out of memory for the task cost's probe");
	ret = probe(mem, seconds);
	free(mem);
	if (ret)
		return stargemm__error(ret, "stargemm: the task cost's probe could not insert "
				       "its tasks");
	measured = *seconds;
	return 0;
}
