/*
 * codelets/generate.c — make one tile of a generated matrix with the user's generator
 * (stargemm_matrix_create_generated(); src/generate.c inserts it). CPU only: the
 * generator is a host function, and the tile goes to a GPU as any tile does.
 *
 * A generator that returns a nonzero status fails the product: the failure is
 * recorded with the tile and the status (stargemm__task_failed(), reported by the
 * next stargemm_wait() on every rank), and the tile is zeroed, so that what the
 * product's remaining tasks read is defined.
 *
 * Arguments (STARPU_VALUE, in order): stargemm_generate_fn fn, void *arg, int64_t row0,
 * int64_t col0 (global position of the tile's first element), int64_t i, int64_t j
 * (the tile's indices, for the message).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../src/internal.h"

static void generate_cpu(void *buffers[], void *cl_arg)
{
	stargemm_generate_fn fn;
	void *arg, *tile = (void *)STARPU_MATRIX_GET_PTR(buffers[0]);
	int64_t row0, col0, i, j, ld = (int64_t)STARPU_MATRIX_GET_LD(buffers[0]);
	int64_t rows = (int64_t)STARPU_MATRIX_GET_NX(buffers[0]);
	int64_t cols = (int64_t)STARPU_MATRIX_GET_NY(buffers[0]);
	size_t elem = STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
	char msg[160];
	int status;

	starpu_codelet_unpack_args(cl_arg, &fn, &arg, &row0, &col0, &i, &j);
	status = fn(tile, ld, rows, cols, row0, col0, arg);
	if (status == 0)
		return;
	for (int64_t c = 0; c < cols; c++)
		memset((char *)tile + (size_t)(c * ld) * elem, 0, (size_t)rows * elem);
	snprintf(msg, sizeof(msg), "stargemm: the generator failed on tile (%" PRId64 ", %"
		 PRId64 ") (status %d, rank %d)", i, j, status, stargemm_rank());
	stargemm__task_failed(msg);
}

/* A tile made costs about what a fill of it does: the fill's model (codelets/fill.c),
 * so that simulated runs (SimGrid) know how long it lasts. */
struct starpu_codelet stargemm_generate_cl = {
	.name = "generate",
	.cpu_funcs = { generate_cpu },
	.nbuffers = 1,
	.modes = { STARPU_W },
	.model = &stargemm_fill_model,
};
