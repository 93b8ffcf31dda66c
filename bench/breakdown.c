/*
 * bench/breakdown.c — where a product's time goes on this rank's CPU workers
 * (stargemm_pdgemm --breakdown), from StarPU's own profiling counters: the share of the
 * workers' time spent in tasks, asleep (no task to run) and in the runtime (between
 * tasks: scheduling, data management, callbacks); the kernels' rate inside the tasks
 * against one BLAS call of the tile's side on one thread, measured here before the
 * product; and the runtime's cost per task. So that what separates stargemm from one
 * BLAS call is split into what the kernels lose at that tile (rate inside tasks below
 * the call's) and what the runtime loses (time outside tasks).
 */
#include <stdio.h>
#include <string.h>

#include <starpu.h>

#include "bench.h"

static struct bench_breakdown sum;

void bench_breakdown_begin(void)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	for (unsigned w = 0; w < starpu_worker_get_count(); w++)
		starpu_profiling_worker_get_info((int)w, NULL);   /* resets its counters */
}

void bench_breakdown_end(double gflop)
{
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		struct starpu_profiling_worker_info info;

		if (starpu_worker_get_type((int)w) != STARPU_CPU_WORKER ||
		    starpu_profiling_worker_get_info((int)w, &info) != 0)
			continue;
		sum.total_s += 1e-6 * starpu_timing_timespec_to_us(&info.total_time);
		sum.exec_s += 1e-6 * starpu_timing_timespec_to_us(&info.executing_time);
		sum.sleep_s += 1e-6 * starpu_timing_timespec_to_us(&info.sleeping_time);
		sum.tasks += info.executed_tasks;
	}
	sum.gflop += gflop;
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
}

void bench_breakdown_take(struct bench_breakdown *b)
{
	*b = sum;
	memset(&sum, 0, sizeof(sum));
}

void bench_breakdown_print(const struct bench_breakdown *b, int rank, int workers,
			   int64_t nb, double call_rate)
{
	double other = b->total_s - b->exec_s - b->sleep_s, inside = 0.0;

	if (b->total_s <= 0.0) {
		printf("# breakdown rank %d: no CPU worker time counted\n", rank);
		return;
	}
	inside = b->exec_s > 0.0 ? b->gflop / b->exec_s : 0.0;
	printf("# breakdown rank %d (%d CPU workers, tile %lld, %lld tasks): in tasks %.1f%%, "
	       "asleep %.1f%%, runtime %.1f%% of the workers' time; kernels %.2f GFLOP/s a "
	       "worker inside tasks, %.3f of one BLAS call of side %lld (%.2f); runtime "
	       "%.1f us per task\n",
	       rank, workers, (long long)nb, (long long)b->tasks, 100.0 * b->exec_s / b->total_s,
	       100.0 * b->sleep_s / b->total_s, 100.0 * other / b->total_s, inside,
	       call_rate > 0.0 ? inside / call_rate : 0.0, (long long)nb, call_rate,
	       b->tasks > 0 ? 1e6 * other / (double)b->tasks : 0.0);
}
