/*
 * perfmodels/footprint.c — print the StarPU task footprints of stargemm's codelets for
 * given tile shapes, as StarPU computes them, for perfmodels/generate.sh.
 * Usage: footprint M,N,K...   for each shape (C M x N, A M x K, B K x N, no transpose)
 * prints "gemm M N K HASH" and, for C's shape, "fill M N HASH".
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

static void print(const char *name, struct starpu_codelet *cl, starpu_data_handle_t *h,
		  int n)
{
	struct starpu_task *task = starpu_task_create();
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, STARPU_NMAX_SCHED_CTXS);

	task->cl = cl;
	for (int i = 0; i < n; i++)
		task->handles[i] = h[i];
	printf("%s %08x\n", name, starpu_task_footprint(&model, task, arch, 0));
	task->destroy = 0;
	starpu_task_destroy(task);
}

int main(int argc, char **argv)
{
	if (starpu_init(NULL) != 0)
		return 1;
	for (int a = 1; a < argc; a++) {
		int m, n, k;
		char label[96];
		starpu_data_handle_t h[3];

		if (sscanf(argv[a], "%d,%d,%d", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
			fprintf(stderr, "footprint: '%s' is not M,N,K\n", argv[a]);
			starpu_shutdown();
			return 1;
		}
		starpu_matrix_data_register(&h[0], -1, 0, m, m, k, sizeof(double));
		starpu_matrix_data_register(&h[1], -1, 0, k, k, n, sizeof(double));
		starpu_matrix_data_register(&h[2], -1, 0, m, m, n, sizeof(double));
		snprintf(label, sizeof(label), "gemm %d %d %d", m, n, k);
		print(label, &gemm, h, 3);
		snprintf(label, sizeof(label), "fill %d %d", m, n);
		print(label, &fill, h + 2, 1);
		for (int i = 0; i < 3; i++)
			starpu_data_unregister(h[i]);
	}
	starpu_shutdown();
	return 0;
}
