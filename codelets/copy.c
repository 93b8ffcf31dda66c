/*
 * codelets/copy.c — copy one tile into another of the same shape (CPU), for the C
 * matrix of a symbolic product pattern (src/pattern.c): the new matrix takes the
 * values of the old C on the tiles they share. Any element type: the element size
 * comes from the tile's StarPU interface.
 */
#include <string.h>

#include "../src/internal.h"

static void copy_cpu(void *buffers[], void *cl_arg)
{
	const char *src = (const char *)STARPU_MATRIX_GET_PTR(buffers[0]);
	char *dst = (char *)STARPU_MATRIX_GET_PTR(buffers[1]);
	size_t es = STARPU_MATRIX_GET_ELEMSIZE(buffers[1]);
	size_t lds = STARPU_MATRIX_GET_LD(buffers[0]), ldd = STARPU_MATRIX_GET_LD(buffers[1]);
	size_t rows = STARPU_MATRIX_GET_NX(buffers[1]), cols = STARPU_MATRIX_GET_NY(buffers[1]);

	(void)cl_arg;
	for (size_t c = 0; c < cols; c++)
		memcpy(dst + c * ldd * es, src + c * lds * es, rows * es);
}

/* A regression on the tile's elements (codelets/model.c), so that simulated runs
 * (SimGrid) know how long a copy lasts for tiles of any shape. */
struct starpu_perfmodel stargemm_copy_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_copy",
	.size_base = stargemm__model_tile_elements,
	.footprint = stargemm__model_footprint,
};

struct starpu_codelet stargemm_copy_cl = {
	.name = "copy",
	.cpu_funcs = { copy_cpu },
	.nbuffers = 2,
	.modes = { STARPU_R, STARPU_W },
	.model = &stargemm_copy_model,
};
