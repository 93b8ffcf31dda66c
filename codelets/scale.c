/*
 * codelets/scale.c — C = beta C on one tile (CPU only), for the C tiles of a
 * block-sparse product that no tile product updates: beta must still be applied to
 * them exactly once. beta = 0 writes zeros without reading the tile (W mode, so NaNs
 * do not survive and StarPU need not fetch the old value).
 *
 * Argument (STARPU_VALUE): double beta.
 */
#include <string.h>

#include "../src/internal.h"

static void scale_cpu(void *buffers[], void *cl_arg)
{
	double beta, *t = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	int64_t ld = (int64_t)STARPU_MATRIX_GET_LD(buffers[0]);
	int64_t rows = (int64_t)STARPU_MATRIX_GET_NX(buffers[0]);
	int64_t cols = (int64_t)STARPU_MATRIX_GET_NY(buffers[0]);

	starpu_codelet_unpack_args(cl_arg, &beta);
	for (int64_t c = 0; c < cols; c++) {
		if (beta == 0.0) {
			memset(t + c * ld, 0, (size_t)rows * sizeof(double));
			continue;
		}
		for (int64_t r = 0; r < rows; r++)
			t[r + c * ld] *= beta;
	}
}

/* A regression on the tile's elements (codelets/model.c), so that simulated runs
 * (SimGrid) know how long a scaling lasts for tiles of any shape. */
static struct starpu_perfmodel scale_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_scale",
	.size_base = stargemm__model_tile_elements,
	.footprint = stargemm__model_footprint,
};

struct starpu_codelet stargemm_scale_cl = {
	.name = "scale",
	.cpu_funcs = { scale_cpu },
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.model = &scale_model,
};

struct starpu_codelet stargemm_zero_cl = {
	.name = "scale",
	.cpu_funcs = { scale_cpu },
	.nbuffers = 1,
	.modes = { STARPU_W },
	.model = &scale_model,
};
