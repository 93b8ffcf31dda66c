/*
 * codelets/combine.c — D = alpha A + beta B on one tile (CPU), and D = alpha S, for the
 * matrix operations (src/matops.c): a sum of block-sparse matrices takes the union of
 * their patterns, so that a tile of the result comes from both operands' tiles, or from
 * one of them. D is written (W): StarPU need not fetch its old value. And Y = Y + X,
 * which sums the partial tiles of a split inner dimension into C (src/ksplit.c).
 *
 * Arguments (STARPU_VALUE): char type (the element type's letter), double _Complex
 * alpha, double _Complex beta (combine2 only); accumulate: char type. Buffers: A (R),
 * [B (R),] D (W), of one shape; accumulate: X (R), Y (RW).
 */
#include "../src/internal.h"

static void combine2_cpu(void *buffers[], void *cl_arg)
{
	double _Complex alpha, beta;
	char type;

	starpu_codelet_unpack_args(cl_arg, &type, &alpha, &beta);
	stargemm__element(type)->combine((void *)STARPU_MATRIX_GET_PTR(buffers[2]),
					 (int64_t)STARPU_MATRIX_GET_LD(buffers[2]),
					 (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
					 (int64_t)STARPU_MATRIX_GET_LD(buffers[0]), alpha,
					 (const void *)STARPU_MATRIX_GET_PTR(buffers[1]),
					 (int64_t)STARPU_MATRIX_GET_LD(buffers[1]), beta,
					 (int64_t)STARPU_MATRIX_GET_NX(buffers[2]),
					 (int64_t)STARPU_MATRIX_GET_NY(buffers[2]));
}

static void combine1_cpu(void *buffers[], void *cl_arg)
{
	double _Complex alpha;
	char type;

	starpu_codelet_unpack_args(cl_arg, &type, &alpha);
	stargemm__element(type)->combine((void *)STARPU_MATRIX_GET_PTR(buffers[1]),
					 (int64_t)STARPU_MATRIX_GET_LD(buffers[1]),
					 (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
					 (int64_t)STARPU_MATRIX_GET_LD(buffers[0]), alpha, NULL, 0,
					 0.0, (int64_t)STARPU_MATRIX_GET_NX(buffers[1]),
					 (int64_t)STARPU_MATRIX_GET_NY(buffers[1]));
}

static void accumulate_cpu(void *buffers[], void *cl_arg)
{
	void *y = (void *)STARPU_MATRIX_GET_PTR(buffers[1]);
	int64_t ldy = (int64_t)STARPU_MATRIX_GET_LD(buffers[1]);
	char type;

	starpu_codelet_unpack_args(cl_arg, &type);
	stargemm__element(type)->combine(y, ldy, (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
					 (int64_t)STARPU_MATRIX_GET_LD(buffers[0]), 1.0, y, ldy,
					 1.0, (int64_t)STARPU_MATRIX_GET_NX(buffers[1]),
					 (int64_t)STARPU_MATRIX_GET_NY(buffers[1]));
}

/* A regression on the tile's elements (codelets/model.c), so that simulated runs
 * (SimGrid) know how long a combination lasts for tiles of any shape. */
struct starpu_perfmodel stargemm_combine_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_combine",
	.size_base = stargemm__model_tile_elements,
	.footprint = stargemm__model_footprint,
};

struct starpu_codelet stargemm_combine2_cl = {
	.name = "combine",
	.cpu_funcs = { combine2_cpu },
	.nbuffers = 3,
	.modes = { STARPU_R, STARPU_R, STARPU_W },
	.model = &stargemm_combine_model,
};

struct starpu_codelet stargemm_combine1_cl = {
	.name = "combine",
	.cpu_funcs = { combine1_cpu },
	.nbuffers = 2,
	.modes = { STARPU_R, STARPU_W },
	.model = &stargemm_combine_model,
};

struct starpu_codelet stargemm_accumulate_cl = {
	.name = "accumulate",
	.cpu_funcs = { accumulate_cpu },
	.nbuffers = 2,
	.modes = { STARPU_R, STARPU_RW },
	.model = &stargemm_combine_model,
};
