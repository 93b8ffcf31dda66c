/*
 * codelets/scale.c — C = beta C on one tile (CPU only), for the C tiles of a
 * block-sparse product that no tile product updates: beta must still be applied to
 * them exactly once. And C = 0, in W mode, so that NaNs do not survive and StarPU
 * need not fetch the old value: for beta = 0 and for matrices never written.
 *
 * Arguments of scale (STARPU_VALUE): char type (the element type's letter), double
 * _Complex beta. Zero takes none: the element size comes from the tile's interface.
 */
#include <string.h>

#include "../src/internal.h"

static void scale_cpu(void *buffers[], void *cl_arg)
{
	double _Complex beta;
	char type;

	starpu_codelet_unpack_args(cl_arg, &type, &beta);
	stargemm__element(type)->scale((void *)STARPU_MATRIX_GET_PTR(buffers[0]),
				       (int64_t)STARPU_MATRIX_GET_LD(buffers[0]),
				       (int64_t)STARPU_MATRIX_GET_NX(buffers[0]),
				       (int64_t)STARPU_MATRIX_GET_NY(buffers[0]), beta);
}

static void zero_cpu(void *buffers[], void *cl_arg)
{
	char *t = (char *)STARPU_MATRIX_GET_PTR(buffers[0]);
	size_t es = STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
	size_t ld = STARPU_MATRIX_GET_LD(buffers[0]), rows = STARPU_MATRIX_GET_NX(buffers[0]);
	size_t cols = STARPU_MATRIX_GET_NY(buffers[0]);

	(void)cl_arg;
	for (size_t c = 0; c < cols; c++)
		memset(t + c * ld * es, 0, rows * es);
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
	.cpu_funcs = { zero_cpu },
	.nbuffers = 1,
	.modes = { STARPU_W },
	.model = &scale_model,
};
