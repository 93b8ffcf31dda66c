/*
 * workers.c — this rank's StarPU workers: their counts, the executor's devices (the
 * CUDA workers, or the host RAM without them; src/contract.h), and pausing them while
 * the calling thread works alone; and whether StarPU records an FxT trace.
 */
#include <stdlib.h>

#include <starpu.h>

#include "contract.h"
#include "process.h"
#include "settings.h"
#include "stargemm.h"
#include "workers.h"

int stargemm_ncpu_workers(void)
{
	return stargemm__initialized() ? (int)starpu_cpu_worker_get_count() : 0;
}

int stargemm_ncuda_workers(void)
{
	return stargemm__initialized() ? (int)starpu_cuda_worker_get_count() : 0;
}

int stargemm__device_count(void)
{
	int ncuda = (int)starpu_cuda_worker_get_count();

	return ncuda > 0 ? ncuda : 1;
}

unsigned stargemm__device_node(int g)
{
	int worker;

	if (starpu_cuda_worker_get_count() == 0)
		return STARPU_MAIN_RAM;
	worker = starpu_worker_get_by_type(STARPU_CUDA_WORKER, g);
	return starpu_worker_get_memory_node((unsigned)worker);
}

int stargemm__quiet_begin(void)
{
	if (starpu_task_nsubmitted() > 0)
		return 0;
	starpu_pause();
	return 1;
}

void stargemm__quiet_end(int paused)
{
	if (paused)
		starpu_resume();
}

int stargemm__fxt_tracing(void)
{
#ifdef STARPU_USE_FXT
	const char *v = stargemm__setting_text(STARGEMM__STARPU_FXT_TRACE);

	return v && atoi(v) != 0;
#else
	return 0;
#endif
}
