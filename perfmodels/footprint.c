/*
 * perfmodels/footprint.c — print the StarPU task footprints of stargemm's codelets for
 * square tiles, as StarPU computes them, for perfmodels/generate.sh.
 * Usage: footprint T...   prints "gemm T HASH SIZE" and "fill T HASH SIZE" lines.
 * Build: cc footprint.c $(pkg-config --cflags --libs starpu-1.3); run with STARPU_NCPU=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <starpu.h>

static void nothing(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static struct starpu_perfmodel model = { .type = STARPU_HISTORY_BASED, .symbol = "fp" };
static struct starpu_codelet gemm = { .cpu_funcs = { nothing }, .nbuffers = 3,
				      .modes = { STARPU_R, STARPU_R, STARPU_RW }, .model = &model };
static struct starpu_codelet fill = { .cpu_funcs = { nothing }, .nbuffers = 1,
				      .modes = { STARPU_W }, .model = &model };

static void print(const char *name, struct starpu_codelet *cl, int t,
		  starpu_data_handle_t *h, int n)
{
	struct starpu_task *task = starpu_task_create();
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, STARPU_NMAX_SCHED_CTXS);

	task->cl = cl;
	for (int i = 0; i < n; i++)
		task->handles[i] = h[i];
	printf("%s %d %08x %zu\n", name, t, starpu_task_footprint(&model, task, arch, 0),
	       (size_t)n * t * t * sizeof(double));
	task->destroy = 0;
	starpu_task_destroy(task);
}

int main(int argc, char **argv)
{
	if (starpu_init(NULL) != 0)
		return 1;
	for (int a = 1; a < argc; a++) {
		int t = atoi(argv[a]);
		starpu_data_handle_t h[3];

		for (int i = 0; i < 3; i++)
			starpu_matrix_data_register(&h[i], -1, 0, t, t, t, sizeof(double));
		print("gemm", &gemm, t, h, 3);
		print("fill", &fill, t, h, 1);
		for (int i = 0; i < 3; i++)
			starpu_data_unregister(h[i]);
	}
	starpu_shutdown();
	return 0;
}
