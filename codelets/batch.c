/*
 * codelets/batch.c — many small tile products in one task (CPU): with tiles of a few
 * tens of rows, one task per product C(i,j) += op(A)(i,k) op(B)(k,j) costs more in
 * the runtime than the product itself, so the inspector groups them (src/inspect.c,
 * batches; DBCSR's "stacks"). The task's buffers are the batch's tiles, each once;
 * the products run in list order, so a C tile's updates keep their k order and the
 * first one applies beta.
 *
 * Arguments (STARPU_VALUE, in order): char transa, transb; double alpha, beta;
 * int64_t count; const struct stargemm__product *products; const int32_t *slots (the
 * buffers of each product's op(A), op(B), C: 3 per product). Both arrays belong to the
 * work list, which lives until the tasks are done. Each product goes through
 * codelets/smallgemm.c (libxsmm where it has the kernel, else BLAS).
 */
#include "../src/internal.h"
#include "../src/worklist.h"

static void batch_cpu(void *buffers[], void *cl_arg)
{
	const struct stargemm__product *products;
	const int32_t *slots;
	struct stargemm__small_cache cache = { { 0 }, NULL };
	double alpha, beta;
	int64_t count;
	char ta, tb;

	starpu_codelet_unpack_args(cl_arg, &ta, &tb, &alpha, &beta, &count, &products, &slots);
	for (int64_t e = 0; e < count; e++) {
		void *a = buffers[slots[3 * e]], *b = buffers[slots[3 * e + 1]];
		void *c = buffers[slots[3 * e + 2]];
		int k = (int)(ta == 'N' ? STARPU_MATRIX_GET_NY(a) : STARPU_MATRIX_GET_NX(a));

		stargemm__small_dgemm(&cache, ta, tb, (int)STARPU_MATRIX_GET_NX(c),
				      (int)STARPU_MATRIX_GET_NY(c), k, alpha,
				      (const double *)STARPU_MATRIX_GET_PTR(a),
				      (int)STARPU_MATRIX_GET_LD(a),
				      (const double *)STARPU_MATRIX_GET_PTR(b),
				      (int)STARPU_MATRIX_GET_LD(b), products[e].first ? beta : 1.0,
				      (double *)STARPU_MATRIX_GET_PTR(c), (int)STARPU_MATRIX_GET_LD(c));
	}
}

/* History-based (footprint: the sizes of the buffers), so that simulated runs know
 * how long a batch lasts. */
static struct starpu_perfmodel batch_model = {
	.type = STARPU_HISTORY_BASED,
	.symbol = "stargemm_dgemm_batch",
};

struct starpu_codelet stargemm_batch_cl = {
	.name = "dgemm_batch",
	.cpu_funcs = { batch_cpu },
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.model = &batch_model,
};
