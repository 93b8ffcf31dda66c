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
 * size. The timed tasks run while the caller measures the network (src/network.c:
 * the MPI thread, not the GPUs), so the first choosing product pays the longer of the
 * two, not their sum (0.6 ms on a simulated V100, 15 us a task).
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

/* A probe under way: its tiles and the timed tasks' count-down. */
struct stargemm__task_probe {
	double *mem;
	starpu_data_handle_t h[PROBE_TASKS + 2];   /* A, B, then a C tile per task */
	struct stargemm_task_info info[PROBE_TASKS];
	struct starpu_codelet cl;
	starpu_pthread_mutex_t mutex;
	starpu_pthread_cond_t done;
	int left;
	double start, last;   /* the timed round's submission, its last task's end (us) */
	int ret;
};

static void task_done(void *arg)
{
	struct stargemm__task_probe *p = arg;

	starpu_pthread_mutex_lock(&p->mutex);
	p->last = starpu_timing_now();
	if (--p->left == 0)
		starpu_pthread_cond_signal(&p->done);
	starpu_pthread_mutex_unlock(&p->mutex);
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

/* Submit @p n products on the first GPU, into C tiles 0..n-1. */
static void submit(struct stargemm__task_probe *p, int n)
{
	char type = 'd', op = 'N';
	double _Complex one = 1.0, zero = 0.0;

	starpu_pthread_mutex_lock(&p->mutex);
	p->left = n;
	p->start = starpu_timing_now();
	starpu_pthread_mutex_unlock(&p->mutex);
	for (int t = 0; t < n; t++) {
		p->info[t] = (struct stargemm_task_info){ .device = 0,
							  .prefetch = STARGEMM_PREFETCH_READY,
							  .block = -1 };
		if (p->ret || starpu_task_insert(&p->cl, STARPU_VALUE, &type, sizeof(type),
						 STARPU_VALUE, &op, sizeof(op),
						 STARPU_VALUE, &op, sizeof(op),
						 STARPU_VALUE, &one, sizeof(one),
						 STARPU_VALUE, &zero, sizeof(zero),
						 STARPU_R, p->h[0], STARPU_R, p->h[1],
						 STARPU_W, p->h[2 + t],
						 STARPU_TASK_SCHED_DATA, &p->info[t],
						 STARPU_CALLBACK_WITH_ARG_NFREE, task_done, p, 0)) {
			p->ret = -EIO;
			task_done(p);
		}
	}
}

/* Wait for the tasks submitted last. */
static void await(struct stargemm__task_probe *p)
{
	starpu_pthread_mutex_lock(&p->mutex);
	while (p->left > 0)
		starpu_pthread_cond_wait(&p->done, &p->mutex);
	starpu_pthread_mutex_unlock(&p->mutex);
}

int stargemm__task_probe_start(struct stargemm__task_probe **probe)
{
	struct stargemm__task_probe *p;

	*probe = NULL;
	if (measured > 0.0 || starpu_cuda_worker_get_count() == 0)
		return 0;
	p = calloc(1, sizeof(*p));
	if (p)
		p->mem = calloc((size_t)(PROBE_TASKS + 2) * SIDE * SIDE, sizeof(*p->mem));
	if (!p || !p->mem) {
		free(p);
		return stargemm__error(-ENOMEM, "stargemm: out of memory for the task cost's probe");
	}
	probe_codelet(&p->cl);
	starpu_pthread_mutex_init(&p->mutex, NULL);
	starpu_pthread_cond_init(&p->done, NULL);
	for (int t = 0; t < PROBE_TASKS + 2; t++)
		starpu_matrix_data_register(&p->h[t], STARPU_MAIN_RAM,
					    (uintptr_t)(p->mem + (size_t)t * SIDE * SIDE), SIDE,
					    SIDE, SIDE, sizeof(double));
	submit(p, WARM_TASKS);
	await(p);
	submit(p, PROBE_TASKS);
	*probe = p;
	return 0;
}

int stargemm__task_probe_finish(struct stargemm__task_probe *p, double *seconds)
{
	int ret;

	*seconds = measured;
	if (!p)
		return 0;
	await(p);
	for (int t = 0; t < PROBE_TASKS + 2; t++)
		starpu_data_unregister_no_coherency(p->h[t]);
	starpu_pthread_cond_destroy(&p->done);
	starpu_pthread_mutex_destroy(&p->mutex);
	ret = p->ret;
	if (!ret)
		measured = *seconds = 1e-6 * (p->last - p->start) / PROBE_TASKS;
	free(p->mem);
	free(p);
	return ret ? stargemm__error(ret, "stargemm: the task cost's probe could not insert "
				     "its tasks") : 0;
}
