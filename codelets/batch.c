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
 * buffers of each product's op(A), op(B), C: 3 per product); const struct
 * stargemm__batch_geometry *geometry (sizes from the tilings, offsets of packed tiles
 * in their buffers). All belong to the work list, which lives until the tasks are
 * done. Each product goes through codelets/smallgemm.c (libxsmm where it has the
 * kernel, else BLAS).
 */
#include "../src/internal.h"
#include "../src/worklist.h"

/* The first element of stored tile (i, j) of operand o in buffer @p buf. */
static double *tile_at(const struct stargemm__batch_geometry *g, int o, void *buf,
		       int64_t i, int64_t j)
{
	double *base = (double *)STARPU_MATRIX_GET_PTR(buf);

	return g->offset[o] ? base + g->offset[o][i + j * g->ld[o]] : base;
}

/* The leading dimension of a stored tile of @p rows rows of operand o in @p buf: its
 * rows in a pack, the buffer's own otherwise (a tile registered in place in a user's
 * array has the array's). */
static int tile_ld(const struct stargemm__batch_geometry *g, int o, void *buf, int rows)
{
	return g->offset[o] ? rows : (int)STARPU_MATRIX_GET_LD(buf);
}

static void batch_cpu(void *buffers[], void *cl_arg)
{
	const struct stargemm__product *products;
	const struct stargemm__batch_geometry *g;
	const int32_t *slots;
	struct stargemm__small_cache cache = { { 0 }, NULL };
	double alpha, beta;
	int64_t count;
	char ta, tb;

	starpu_codelet_unpack_args(cl_arg, &ta, &tb, &alpha, &beta, &count, &products, &slots,
				   &g);
	if (stargemm__fault(STARGEMM_FAULT_KERNEL)) {
		stargemm__task_failed("batch of tile products: injected fault (STARGEMM_FAULT)");
		return;
	}
	for (int64_t e = 0; e < count; e++) {
		const struct stargemm__product *x = &products[e];
		int m = (int)(g->row_off[x->i + 1] - g->row_off[x->i]);
		int n = (int)(g->col_off[x->j + 1] - g->col_off[x->j]);
		int k = (int)(g->k_off[x->k + 1] - g->k_off[x->k]);
		void *abuf = buffers[slots[3 * e]], *bbuf = buffers[slots[3 * e + 1]];
		void *cbuf = buffers[slots[3 * e + 2]];
		const double *a = ta == 'N' ? tile_at(g, 0, abuf, x->i, x->k)
					    : tile_at(g, 0, abuf, x->k, x->i);
		const double *b = tb == 'N' ? tile_at(g, 1, bbuf, x->k, x->j)
					    : tile_at(g, 1, bbuf, x->j, x->k);
		double *c = tile_at(g, 2, cbuf, x->i, x->j);

		stargemm__small_dgemm(&cache, ta, tb, m, n, k, alpha, a,
				      tile_ld(g, 0, abuf, ta == 'N' ? m : k), b,
				      tile_ld(g, 1, bbuf, tb == 'N' ? k : n),
				      x->first ? beta : 1.0, c, tile_ld(g, 2, cbuf, m));
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
