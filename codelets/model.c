/*
 * codelets/model.c — the size and the footprint of stargemm's performance models.
 *
 * The codelets' models are non-linear regressions (STARPU_NL_REGRESSION_BASED). StarPU
 * 1.3 predicts a task's duration as a * size^b + c from its model file's regression when
 * that regression is valid (a, b, c not NaN, at least STARPU_CALIBRATE_MINIMUM samples,
 * minx < 0.9 maxx) and the task's size lies in [0.9 minx, 1.1 maxx]; otherwise from the
 * history entry of the task's footprint, as a history-based model does. The size is the
 * task's work, so that one regression predicts tiles of every shape:
 *   * a tile product: m n k (C is m x n, the inner dimension k);
 *   * a tile-wise codelet (fill, scale, norm, copy): the elements of its last tile.
 * In simulation (perfmodels/) the model files hold only such a regression, and the
 * irregular tiles of block-sparse products need no entry per shape. On a real machine
 * StarPU fits the regression to its measurements when it saves a model; until the
 * measured sizes span more than 10% it uses the history entries, as before.
 *
 * Element types (codelets/element.c): the size of a tile product is its multiply-adds
 * weighed by their cost relative to a double one (single 0.5, single complex 2, double
 * complex 4), so that the one regression of the GEMM model serves the four types; the
 * history entries of the types other than double are kept apart by mixing the type
 * into the footprint (stargemm__model_typed_footprint; double's is unchanged).
 *
 * The footprint stays StarPU's default one (a hash of the tiles' shapes): with a
 * size_base and no footprint function StarPU would hash the size instead, so tiles of
 * different shapes and equal work would share one history entry, and entries already
 * measured would no longer be found.
 */
#include "../src/internal.h"

/* starpu_task_data_footprint() with every tile hashed as a matrix handle: the tiles of
 * the device pool (src/pool.c) have an interface id of their own, which StarPU mixes
 * into a handle's footprint; hashed as matrices, they keep the history entries measured
 * with plain matrix handles (and runs with the pool off share them). */
uint32_t stargemm__model_footprint(struct starpu_task *task)
{
	uint32_t fp = 0;

	for (unsigned b = 0; b < STARPU_TASK_GET_NBUFFERS(task); b++)
		fp = starpu_hash_crc32c_be(stargemm__matrix_footprint(
						   STARPU_TASK_GET_HANDLE(task, b)), fp);
	return fp;
}

/* The element type of a task whose first STARPU_VALUE argument is its letter. */
static const struct stargemm__element *task_type(struct starpu_task *task)
{
	char letter = 'd';

	if (task->cl_arg)
		starpu_codelet_unpack_args(task->cl_arg, &letter, 0);
	return stargemm__element(letter);
}

uint32_t stargemm__model_typed_footprint(struct starpu_task *task)
{
	const struct stargemm__element *type = task_type(task);
	uint32_t fp = stargemm__model_footprint(task);

	return type->letter == 'd' ? fp : starpu_hash_crc32c_be((uint32_t)type->letter, fp);
}

static size_t elements(starpu_data_handle_t h)
{
	return (size_t)starpu_matrix_get_nx(h) * (size_t)starpu_matrix_get_ny(h);
}

/* Buffers A, B, C; C is m x n and A holds m k elements whether transposed or not. */
size_t stargemm__model_gemm_work(struct starpu_task *task, unsigned nimpl)
{
	starpu_data_handle_t a = STARPU_TASK_GET_HANDLE(task, 0);
	starpu_data_handle_t c = STARPU_TASK_GET_HANDLE(task, 2);
	size_t m = starpu_matrix_get_nx(c), n = starpu_matrix_get_ny(c);

	(void)nimpl;
	return m > 0 ? (size_t)((double)(m * n * (elements(a) / m)) * task_type(task)->model_weight)
		     : 0;
}

size_t stargemm__model_tile_elements(struct starpu_task *task, unsigned nimpl)
{
	(void)nimpl;
	return elements(STARPU_TASK_GET_HANDLE(task, STARPU_TASK_GET_NBUFFERS(task) - 1));
}
