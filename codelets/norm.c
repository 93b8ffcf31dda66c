/*
 * codelets/norm.c — the Frobenius norm of one tile (CPU), for norm-based filtering of
 * block-sparse products (Schütt et al., DBCSR): a product C(i,j) += A(i,k) B(k,j) is
 * skipped when ||A(i,k)|| ||B(k,j)|| < eps, and C tiles whose norm falls below eps are
 * dropped. Column norms from BLAS dnrm2 (scaled, no overflow for large entries)
 * combined with hypot.
 *
 * Argument (STARPU_VALUE): double *out, where the norm is written (in the memory of
 * the process that runs the task, the tile's owner).
 */
#include <cblas.h>
#include <math.h>

#include "../src/internal.h"

static void norm_cpu(void *buffers[], void *cl_arg)
{
	const double *t = (const double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	int ld = (int)STARPU_MATRIX_GET_LD(buffers[0]);
	int rows = (int)STARPU_MATRIX_GET_NX(buffers[0]);
	int cols = (int)STARPU_MATRIX_GET_NY(buffers[0]);
	double norm = 0.0, *out;

	starpu_codelet_unpack_args(cl_arg, &out);
	for (int c = 0; c < cols; c++)
		norm = hypot(norm, cblas_dnrm2(rows, t + (size_t)c * (size_t)ld, 1));
	*out = norm;
}

/* A regression on the tile's elements (codelets/model.c), so that simulated runs
 * (SimGrid) know how long a norm lasts for tiles of any shape. */
static struct starpu_perfmodel norm_model = {
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
	.model = &norm_model,
};
