/*
 * codelets/norm.c — the Frobenius norm of one tile (CPU), for norm-based filtering of
 * block-sparse products (Schütt et al., DBCSR): a product C(i,j) += A(i,k) B(k,j) is
 * skipped when ||A(i,k)|| ||B(k,j)|| < eps, and C tiles whose norm falls below eps are
 * dropped.
 *
 * Arguments (STARPU_VALUE): char type (the element type's letter), double *out, where
 * the norm is written (in the memory of the process that runs the task, the tile's
 * owner). The norm itself is the element type's (codelets/element.c).
 */
#include "../src/internal.h"

static void norm_cpu(void *buffers[], void *cl_arg)
{
	double *out;
	char type;

	starpu_codelet_unpack_args(cl_arg, &type, &out);
	*out = stargemm__element(type)->norm((const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
					     (int64_t)STARPU_MATRIX_GET_LD(buffers[0]),
					     (int64_t)STARPU_MATRIX_GET_NX(buffers[0]),
					     (int64_t)STARPU_MATRIX_GET_NY(buffers[0]));
}

/* A regression on the tile's elements (codelets/model.c), so that simulated runs
 * (SimGrid) know how long a norm lasts for tiles of any shape. */
struct starpu_perfmodel stargemm_norm_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_norm",
	.size_base = stargemm__model_tile_elements,
	.footprint = stargemm__model_footprint,
};

struct starpu_codelet stargemm_norm_cl = {
	.name = "norm",
	.cpu_funcs = { norm_cpu },
	.nbuffers = 1,
	.modes = { STARPU_R },
	.model = &stargemm_norm_model,
};
