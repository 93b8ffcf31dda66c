/*
 * codelets/fill.c — fill one tile with a user function (CPU only).
 *
 * Arguments (STARPU_VALUE, in order): stargemm_fill_elements_fn fn, void *arg, int64_t row0,
 * int64_t col0 (global position of the tile's first element).
 */
#include "../src/internal.h"

static void fill_cpu(void *buffers[], void *cl_arg)
{
	stargemm_fill_elements_fn fn;
	void *arg;
	int64_t row0, col0;

	starpu_codelet_unpack_args(cl_arg, &fn, &arg, &row0, &col0);
	fn((void *)STARPU_MATRIX_GET_PTR(buffers[0]), (int64_t)STARPU_MATRIX_GET_LD(buffers[0]),
	   (int64_t)STARPU_MATRIX_GET_NX(buffers[0]), (int64_t)STARPU_MATRIX_GET_NY(buffers[0]),
	   row0, col0, arg);
}

/* A regression on the tile's elements (codelets/model.c), so that simulated runs
 * (SimGrid) know how long a fill lasts for tiles of any shape. */
struct starpu_perfmodel stargemm_fill_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_fill",
	.size_base = stargemm__model_tile_elements,
	.footprint = stargemm__model_footprint,
};

struct starpu_codelet stargemm_fill_cl = {
	.name = "fill",
	.cpu_funcs = { fill_cpu },
	.nbuffers = 1,
	.modes = { STARPU_W },
	.model = &stargemm_fill_model,
};
