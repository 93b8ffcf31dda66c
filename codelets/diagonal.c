/*
 * codelets/diagonal.c — the diagonal of one tile (CPU): A = A + alpha I on the elements
 * of the matrix's diagonal that the tile holds, and their sum (the tile's share of the
 * trace), for the matrix operations (src/matops.c): a shift of a sign or purification
 * iteration, its trace. A tile (i, j) holds the diagonal elements (r, r + shift) for
 * shift = row_off[i] - col_off[j], those of its rows whose column r + shift falls in
 * [0, cols): with irregular tilings it may hold a partial diagonal off its own.
 *
 * Arguments (STARPU_VALUE): char type, int64_t shift, then double _Complex alpha
 * (add_diagonal, A in RW) or double *out, two doubles receiving the sum's real and
 * imaginary parts (trace, A in R).
 */
#include <complex.h>

#include "../src/internal.h"

/* The rows r of a rows x cols tile whose diagonal column r + shift is in the tile. */
static void diagonal_rows(int64_t rows, int64_t cols, int64_t shift, int64_t *r0,
			  int64_t *r1)
{
	*r0 = shift < 0 ? -shift : 0;
	*r1 = cols - shift < rows ? cols - shift : rows;
}

void stargemm__tile_add_diagonal(const struct stargemm__element *t, void *tile, int64_t ld,
				 int64_t rows, int64_t cols, int64_t shift, double _Complex alpha)
{
	int64_t r0, r1;

	diagonal_rows(rows, cols, shift, &r0, &r1);
	for (int64_t r = r0; r < r1; r++) {
		int64_t idx = r + (r + shift) * ld;
		double _Complex v = t->load((const char *)tile + (size_t)idx * t->size) + alpha;

		t->store(tile, idx, creal(v), cimag(v));
	}
}

double _Complex stargemm__tile_trace(const struct stargemm__element *t, const void *tile,
				     int64_t ld, int64_t rows, int64_t cols, int64_t shift)
{
	double _Complex sum = 0.0;
	int64_t r0, r1;

	diagonal_rows(rows, cols, shift, &r0, &r1);
	for (int64_t r = r0; r < r1; r++)
		sum += t->load((const char *)tile + (size_t)(r + (r + shift) * ld) * t->size);
	return sum;
}

static void add_diagonal_cpu(void *buffers[], void *cl_arg)
{
	double _Complex alpha;
	int64_t shift;
	char type;

	starpu_codelet_unpack_args(cl_arg, &type, &shift, &alpha);
	stargemm__tile_add_diagonal(stargemm__element(type),
				    (void *)STARPU_MATRIX_GET_PTR(buffers[0]),
				    (int64_t)STARPU_MATRIX_GET_LD(buffers[0]),
				    (int64_t)STARPU_MATRIX_GET_NX(buffers[0]),
				    (int64_t)STARPU_MATRIX_GET_NY(buffers[0]), shift, alpha);
}

static void trace_cpu(void *buffers[], void *cl_arg)
{
	double _Complex sum;
	int64_t shift;
	double *out;
	char type;

	starpu_codelet_unpack_args(cl_arg, &type, &shift, &out);
	sum = stargemm__tile_trace(stargemm__element(type),
				   (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
				   (int64_t)STARPU_MATRIX_GET_LD(buffers[0]),
				   (int64_t)STARPU_MATRIX_GET_NX(buffers[0]),
				   (int64_t)STARPU_MATRIX_GET_NY(buffers[0]), shift);
	out[0] = creal(sum);
	out[1] = cimag(sum);
}

/* A regression on the tile's elements (codelets/model.c), for simulated runs. */
struct starpu_perfmodel stargemm_diagonal_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_diagonal",
	.size_base = stargemm__model_tile_elements,
	.footprint = stargemm__model_footprint,
};

struct starpu_codelet stargemm_add_diagonal_cl = {
	.name = "add_diagonal",
	.cpu_funcs = { add_diagonal_cpu },
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.model = &stargemm_diagonal_model,
};

struct starpu_codelet stargemm_trace_cl = {
	.name = "trace",
	.cpu_funcs = { trace_cpu },
	.nbuffers = 1,
	.modes = { STARPU_R },
	.model = &stargemm_diagonal_model,
};
