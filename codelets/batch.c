/*
 * codelets/batch.c — many small tile products in one task (CPU): with tiles of a few
 * tens of rows, one task per product C(i,j) += op(A)(i,k) op(B)(k,j) costs more in
 * the runtime than the product itself, so the inspector groups them (src/inspect.c,
 * batches; DBCSR's "stacks"). The task's buffers are the batch's tiles, each once;
 * the products run in list order, so a C tile's updates keep their k order and the
 * first one applies beta.
 *
 * Arguments (STARPU_VALUE, in order): char type (the element type's letter), transa,
 * transb; double _Complex alpha, beta; int64_t count; const struct stargemm__product
 * *products; const int32_t *slots (the buffers of each product's op(A), op(B), C: 3 per
 * product); const struct stargemm__batch_geometry *geometry (sizes from the tilings,
 * offsets of packed tiles in their buffers). All belong to the work list, which lives
 * until the tasks are done. Each product goes through codelets/smallgemm.c (libxsmm
 * where it has the kernel: single and double, else the type's BLAS).
 */
#include "../src/internal.h"
#include "../src/worklist.h"

/* The first element of stored tile (i, j) of operand o in buffer @p buf. */
static char *tile_at(const struct stargemm__batch_geometry *g, int o, void *buf, size_t es,
		     int64_t i, int64_t j)
{
	char *base = (char *)STARPU_MATRIX_GET_PTR(buf);

	return g->offset[o] ? base + (size_t)g->offset[o][i + j * g->ld[o]] * es : base;
}

/* The leading dimension of a stored tile of @p rows rows of operand o in @p buf: its
 * rows in a pack, the buffer's own otherwise (a tile registered in place in a user's
 * array has the array's). */
static int tile_ld(const struct stargemm__batch_geometry *g, int o, void *buf, int rows)
{
	return g->offset[o] ? rows : (int)STARPU_MATRIX_GET_LD(buf);
}

/* One tile product of the batch. */
struct product {
	char ta, tb;
	int m, n, k;
	const void *a, *b;
	void *c;
	int lda, ldb, ldc;
	double _Complex beta;
};

static void run(const struct stargemm__element *type, struct stargemm__small_cache *cache,
		double _Complex alpha, const struct product *x)
{
	stargemm__small_gemm(cache, type, x->ta, x->tb, x->m, x->n, x->k, alpha, x->a, x->lda,
			     x->b, x->ldb, x->beta, x->c, x->ldc);
}

static void batch_cpu(void *buffers[], void *cl_arg)
{
	const struct stargemm__product *products;
	const struct stargemm__batch_geometry *g;
	const struct stargemm__element *type;
	const int32_t *slots;
	struct stargemm__small_cache cache = { { 0 }, NULL };
	double _Complex alpha, beta;
	int64_t count;
	char letter, ta, tb;
	size_t es;

	starpu_codelet_unpack_args(cl_arg, &letter, &ta, &tb, &alpha, &beta, &count, &products,
				   &slots, &g);
	type = stargemm__element(letter);
	es = type->size;
	if (stargemm__fault(STARGEMM_FAULT_KERNEL)) {
		stargemm__task_failed("batch of tile products: injected fault (STARGEMM_FAULT)");
		return;
	}
	for (int64_t e = 0; e < count; e++) {
		const struct stargemm__product *p = &products[e];
		void *abuf = buffers[slots[3 * e]], *bbuf = buffers[slots[3 * e + 1]];
		void *cbuf = buffers[slots[3 * e + 2]];
		struct product x = { .ta = ta, .tb = tb };

		x.m = (int)(g->row_off[p->i + 1] - g->row_off[p->i]);
		x.n = (int)(g->col_off[p->j + 1] - g->col_off[p->j]);
		x.k = (int)(g->k_off[p->k + 1] - g->k_off[p->k]);
		x.a = ta == 'N' ? tile_at(g, 0, abuf, es, p->i, p->k)
				: tile_at(g, 0, abuf, es, p->k, p->i);
		x.b = tb == 'N' ? tile_at(g, 1, bbuf, es, p->k, p->j)
				: tile_at(g, 1, bbuf, es, p->j, p->k);
		x.c = tile_at(g, 2, cbuf, es, p->i, p->j);
		x.lda = tile_ld(g, 0, abuf, ta == 'N' ? x.m : x.k);
		x.ldb = tile_ld(g, 1, bbuf, tb == 'N' ? x.k : x.n);
		x.ldc = tile_ld(g, 2, cbuf, x.m);
		x.beta = p->first ? beta : 1.0;
		run(type, &cache, alpha, &x);
	}
}

/* History-based (footprint: the sizes of the buffers), so that simulated runs know
 * how long a batch lasts. */
static struct starpu_perfmodel batch_model = {
	.type = STARPU_HISTORY_BASED,
	.symbol = "stargemm_dgemm_batch",
	.footprint = stargemm__model_typed_footprint,
};

struct starpu_codelet stargemm_batch_cl = {
	.name = "dgemm_batch",
	.cpu_funcs = { batch_cpu },
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.model = &batch_model,
};
