/*
 * pdgemm.c — C = alpha op(A) op(B) + beta C as sequential StarPU-MPI task insertion.
 *
 * Every rank inserts the same sequence of tasks; StarPU-MPI runs each task on the owner
 * of its C tile and posts the sends and receives of the A and B tiles it needs ("owner
 * computes"). Each C tile receives a chain of Kt updates; the first one applies beta
 * (beta = 0: C is written without being read, so it is neither transferred nor can its
 * NaNs leak into the result), the following ones accumulate with beta = 1.
 *
 * The in-core product is the dense work list without a plan (src/product.c,
 * src/inspect.c): tasks inserted k-outer (one rank-t outer product after the other),
 * so the inputs needed first are requested first and every C tile has work from the
 * start. This file holds what every product shares: the checks of a problem, its
 * operands' tiles, and the insertion of one tile update.
 */
#include <inttypes.h>

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "worklist.h"

int stargemm__is_trans(char t)
{
	return t == 'T' || t == 't' || t == 'C' || t == 'c';
}

static int valid_trans(char t)
{
	return t == 'N' || t == 'n' || stargemm__is_trans(t);
}

/* Row (dim 0) or column (dim 1) tiling of op(X) as an offsets array and count. */
static const int64_t *op_offsets(const struct stargemm_matrix *X, int trans, int dim,
				 int64_t *count)
{
	int rows = (dim == 0) != trans;

	*count = rows ? X->mt : X->nt;
	return rows ? X->row_off : X->col_off;
}

static int same_tiling(const int64_t *a, int64_t na, const int64_t *b, int64_t nb)
{
	if (na != nb)
		return 0;
	for (int64_t i = 0; i <= na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* The public call's name, for messages. */
static const char *call_name(const struct stargemm__gemm *p)
{
	return p->fn ? p->fn : "stargemm_pdgemm";
}

/* Check that op(X) and Y agree on one dimension, naming the constraint if not. */
static int check_dim(const char *fn, const int64_t *xo, int64_t nx, const char *xname,
		     const int64_t *yo, int64_t ny, const char *yname, const char *what)
{
	if (xo[nx] != yo[ny])
		return stargemm__error(-EINVAL, "%s: %s (%" PRId64 ") must equal %s (%" PRId64
				       ")", fn, xname, xo[nx], yname, yo[ny]);
	if (!same_tiling(xo, nx, yo, ny))
		return stargemm__error(-EINVAL, "%s: the %s tiling of %s (%" PRId64 " tiles) "
				       "differs from that of %s (%" PRId64 " tiles); they must be "
				       "identical", fn, what, xname, nx, yname, ny);
	return 0;
}

/* The three matrices share one element type, the one the call takes its scalars in. */
static int check_types(struct stargemm__gemm *p)
{
	const struct stargemm__element *a = p->A->type, *b = p->B->type, *c = p->C->type;

	if (a != c || b != c)
		return stargemm__error(-EINVAL, "%s: A, B and C must have one element type, got "
				       "%s, %s and %s", call_name(p), a->name, b->name, c->name);
	if (p->want && c->letter != p->want)
		return stargemm__error(-EINVAL, "%s: multiplies %s matrices, and these are %s "
				       "('%c'): use %s", call_name(p),
				       stargemm__element(p->want)->name, c->name, c->letter,
				       p->typed ? p->typed : "stargemm_gemm()");
	p->type = c;
	return 0;
}

/* A, B and C on one process grid: the same P x Q, and each process (p, q) the same
 * rank in the three (a distribution's grid map, src/distribution.c). */
static int check_grids(const struct stargemm__gemm *p, const char *fn)
{
	const struct stargemm__grid *a = &p->A->grid, *b = &p->B->grid, *c = &p->C->grid;
	int at;

	if (a->P != c->P || a->Q != c->Q || b->P != c->P || b->Q != c->Q)
		return stargemm__error(-EINVAL, "%s: A, B and C must live on the same process "
				       "grid, got %dx%d, %dx%d and %dx%d", fn, a->P, a->Q, b->P,
				       b->Q, c->P, c->Q);
	for (int x = 0; x < 2; x++) {
		const struct stargemm__grid *g = x ? b : a;

		if ((at = stargemm__grid_differs(g, c)) >= 0)
			return stargemm__error(-EINVAL, "%s: A, B and C must live on the same "
					       "process grid, each process (p, q) the same rank: "
					       "process (%d, %d) of the %dx%d grid is rank %d in %c "
					       "and rank %d in C", fn, at / c->Q, at % c->Q, c->P,
					       c->Q, stargemm__grid_rank(g, at / c->Q, at % c->Q),
					       x ? 'B' : 'A',
					       stargemm__grid_rank(c, at / c->Q, at % c->Q));
	}
	return 0;
}

int stargemm__gemm_check(struct stargemm__gemm *p)
{
	const char *fn = call_name(p);
	const int64_t *am, *ak, *bk, *bn;
	int64_t amt, akt, bkt, bnt;
	int ret;

	if (!valid_trans(p->ta) || !valid_trans(p->tb))
		return stargemm__error(-EINVAL, "%s: transa and transb must be 'N', 'T' or 'C', "
				       "got '%c' and '%c'", fn, p->ta ? p->ta : '0',
				       p->tb ? p->tb : '0');
	if ((ret = stargemm__check_matrix(p->A, "A")) || (ret = stargemm__check_matrix(p->B, "B"))
	    || (ret = stargemm__check_matrix(p->C, "C")))
		return ret;
	if (p->C == p->A || p->C == p->B)
		return stargemm__error(-EINVAL, "%s: C must not be the same matrix as A or B (it "
				       "is written while they are read)", fn);
	if ((ret = check_types(p)))
		return ret;
	if ((ret = check_grids(p, fn)))
		return ret;
	am = op_offsets(p->A, stargemm__is_trans(p->ta), 0, &amt);
	ak = op_offsets(p->A, stargemm__is_trans(p->ta), 1, &akt);
	bk = op_offsets(p->B, stargemm__is_trans(p->tb), 0, &bkt);
	bn = op_offsets(p->B, stargemm__is_trans(p->tb), 1, &bnt);
	if ((ret = check_dim(fn, am, amt, "rows of op(A)", p->C->row_off, p->C->mt,
			     "rows of C", "row")) ||
	    (ret = check_dim(fn, bn, bnt, "columns of op(B)", p->C->col_off, p->C->nt,
			     "columns of C", "column")) ||
	    (ret = check_dim(fn, ak, akt, "columns of op(A)", bk, bkt, "rows of op(B)", "K")))
		return ret;
	p->kt = akt;
	p->where = STARPU_CPU | STARPU_CUDA;
	return 0;
}

int stargemm__gemm_scalars(struct stargemm__gemm *p, const void *alpha, const void *beta)
{
	if (!alpha || !beta)
		return stargemm__error(-EINVAL, "%s: %s is NULL (it points to a scalar of the "
				       "matrices' type)", call_name(p), !alpha ? "alpha" : "beta");
	p->alpha = p->type->load(alpha);
	p->beta = p->type->load(beta);
	return 0;
}

char stargemm__kernel_op(const struct stargemm__gemm *p, char t)
{
	if (!stargemm__is_trans(t))
		return 'N';
	return p->type->is_complex && (t == 'C' || t == 'c') ? 'C' : 'T';
}

starpu_data_handle_t stargemm__gemm_a_tile(const struct stargemm__gemm *p, int64_t i, int64_t k)
{
	return stargemm__is_trans(p->ta) ? stargemm__tile(p->A, k, i) : stargemm__tile(p->A, i, k);
}

starpu_data_handle_t stargemm__gemm_b_tile(const struct stargemm__gemm *p, int64_t k, int64_t j)
{
	return stargemm__is_trans(p->tb) ? stargemm__tile(p->B, j, k) : stargemm__tile(p->B, k, j);
}

/* The handle of unit (r, c) of op(X): its tile, or for a packed X its pack. */
static starpu_data_handle_t unit_handle(const struct stargemm_matrix *X, int trans, int64_t r,
					int64_t c)
{
	int64_t i = trans ? c : r, j = trans ? r : c;

	return X->pack ? X->packs[i + j * X->pack->gmt] : stargemm__tile(X, i, j);
}

starpu_data_handle_t stargemm__ref_handle(const struct stargemm__gemm *p, int operand,
					  int64_t r, int64_t c)
{
	switch (operand) {
	case STARGEMM_OP_A: return unit_handle(p->A, stargemm__is_trans(p->ta), r, c);
	case STARGEMM_OP_B: return unit_handle(p->B, stargemm__is_trans(p->tb), r, c);
	default: return unit_handle(p->C, 0, r, c);
	}
}

/* The failure the tests inject (src/fault.c) in place of StarPU's: -EIO. */
static int injected_failure(const struct stargemm__gemm *p)
{
	return !p->skip && stargemm__fault(STARGEMM_FAULT_INSERT) ? -EIO : 0;
}

/* The message of a failed insertion of the task that @p what names. */
static int insert_error(int ret, int injected, const char *what)
{
	return stargemm__error(-EIO, "stargemm: task submission failed for %s (%s)", what,
			       injected ? "injected by STARGEMM_FAULT" : strerror(-ret));
}

/* A task of the product, skipped (p->skip): its @p n data in their modes, no work. */
static int insert_skipped(struct starpu_data_descr *d, int n)
{
	return starpu_mpi_task_insert(stargemm__comm(), &stargemm_noop_cl,
				      STARPU_DATA_MODE_ARRAY, d, n, 0);
}

int stargemm__gemm_insert(const struct stargemm__gemm *p, int64_t i, int64_t j, int64_t k,
			  int first, int priority, struct stargemm_task_info *info,
			  void (*callback)(void *), void *callback_arg)
{
	double _Complex beta = first ? p->beta : 1.0;
	char type = p->type->letter;
	struct starpu_codelet *cl = first && p->beta == 0.0 ? &stargemm_gemm_overwrite_cl
							    : &stargemm_gemm_cl;
	starpu_data_handle_t a = stargemm__gemm_a_tile(p, i, k);
	starpu_data_handle_t b = stargemm__gemm_b_tile(p, k, j);
	char ta = stargemm__kernel_op(p, p->ta), tb = stargemm__kernel_op(p, p->tb);
	enum starpu_data_access_mode cmode = first && p->beta == 0.0 ? STARPU_W : STARPU_RW;
	struct starpu_data_descr d[3] = { { a, STARPU_R }, { b, STARPU_R },
					  { stargemm__tile(p->C, i, j), cmode } };
	int injected = injected_failure(p), ret = injected;
	char what[96];

	if (p->skip)
		ret = insert_skipped(d, 3);
	else if (!ret)
		ret = starpu_mpi_task_insert(stargemm__comm(), cl,
					     STARPU_VALUE, &type, sizeof(type),
					     STARPU_VALUE, &ta, sizeof(ta),
					     STARPU_VALUE, &tb, sizeof(tb),
					     STARPU_VALUE, &p->alpha, sizeof(p->alpha),
					     STARPU_VALUE, &beta, sizeof(beta),
					     STARPU_DATA_MODE_ARRAY, d, 3,
					     STARPU_PRIORITY, priority,
					     STARPU_TASK_SCHED_DATA, info,
					     STARPU_EXECUTE_WHERE, (unsigned long long)p->where,
					     STARPU_CALLBACK_WITH_ARG_NFREE, callback, callback_arg, 0);
	if (!ret)
		return 0;
	snprintf(what, sizeof(what), "the update of C(%" PRId64 ",%" PRId64 ") by k=%" PRId64,
		 i, j, k);
	return insert_error(ret, injected, what);
}

int stargemm__batch_insert(const struct stargemm__gemm *p, const struct stargemm__worklist *wl,
			   int64_t batch, struct starpu_data_descr *descr, int priority,
			   void (*callback)(void *), void *callback_arg)
{
	const struct stargemm__batch *b = &wl->batches[batch];
	const struct stargemm__product *products = wl->products + b->first;
	const int32_t *slots = wl->slots + 3 * b->first;
	const struct stargemm__batch_geometry *geometry = &wl->geometry;
	char ta = stargemm__kernel_op(p, p->ta), tb = stargemm__kernel_op(p, p->tb);
	char type = p->type->letter;
	int injected = injected_failure(p), ret = injected;
	char what[64];

	for (int64_t e = 0; e < b->nrefs; e++) {
		const struct stargemm__tile_ref *t = &wl->refs[b->ref_first + e];

		descr[e].handle = stargemm__ref_handle(p, t->operand, t->r, t->c);
		descr[e].mode = t->operand == STARGEMM_OP_C ? STARPU_RW : STARPU_R;
	}
	/* A C tile whose chain starts in this batch with beta = 0 is only written (its
	 * first update overwrites it whole): StarPU neither transfers nor reads the old C,
	 * as for a single product (stargemm_gemm_overwrite_cl). A C pack likewise in the
	 * batch that opens it (struct stargemm__batch), but out of core on GPUs. */
	for (int64_t e = 0; e < b->count && p->beta == 0.0; e++)
		if (geometry->offset[STARGEMM_OP_C]
			    ? b->opens_c && stargemm__worklist_opens_write(wl)
			    : products[e].first)
			descr[slots[3 * e + 2]].mode = STARPU_W;
	if (p->skip)
		ret = insert_skipped(descr, (int)b->nrefs);
	else if (!ret)
		ret = starpu_mpi_task_insert(stargemm__comm(), &stargemm_batch_cl,
					     STARPU_VALUE, &type, sizeof(type),
					     STARPU_VALUE, &ta, sizeof(ta),
					     STARPU_VALUE, &tb, sizeof(tb),
					     STARPU_VALUE, &p->alpha, sizeof(p->alpha),
					     STARPU_VALUE, &p->beta, sizeof(p->beta),
					     STARPU_VALUE, &b->count, sizeof(b->count),
					     STARPU_VALUE, &products, sizeof(products),
					     STARPU_VALUE, &slots, sizeof(slots),
					     STARPU_VALUE, &geometry, sizeof(geometry),
					     STARPU_DATA_MODE_ARRAY, descr, (int)b->nrefs,
					     STARPU_PRIORITY, priority,
					     STARPU_TASK_SCHED_DATA, &wl->products[b->first].info,
					     STARPU_EXECUTE_WHERE, (unsigned long long)p->where,
					     STARPU_CALLBACK_WITH_ARG_NFREE, callback, callback_arg, 0);
	if (!ret)
		return 0;
	snprintf(what, sizeof(what), "a batch of %" PRId64 " tile products", b->count);
	return insert_error(ret, injected, what);
}

int stargemm__scale_insert(const struct stargemm__gemm *p, int64_t i, int64_t j)
{
	struct starpu_data_descr d = { stargemm__ref_handle(p, STARGEMM_OP_C, i, j),
				       p->beta == 0.0 ? STARPU_W : STARPU_RW };
	char type = p->type->letter;
	int injected, ret;
	char what[64];

	if (p->beta == 1.0)
		return 0;
	ret = injected = injected_failure(p);
	if (p->skip)
		ret = insert_skipped(&d, 1);
	else if (!ret)
		ret = p->beta == 0.0
			      ? starpu_mpi_task_insert(stargemm__comm(), &stargemm_zero_cl,
						       STARPU_DATA_MODE_ARRAY, &d, 1, 0)
			      : starpu_mpi_task_insert(stargemm__comm(), &stargemm_scale_cl,
						       STARPU_VALUE, &type, sizeof(type),
						       STARPU_VALUE, &p->beta, sizeof(p->beta),
						       STARPU_DATA_MODE_ARRAY, &d, 1, 0);
	if (!ret)
		return 0;
	snprintf(what, sizeof(what), "the scaling of C(%" PRId64 ",%" PRId64 ")", i, j);
	return insert_error(ret, injected, what);
}

int stargemm_pdgemm_submit(stargemm_trans transa, stargemm_trans transb, double alpha,
			   const struct stargemm_matrix *A,
			   const struct stargemm_matrix *B, double beta,
			   struct stargemm_matrix *C)
{
	struct stargemm__gemm p = { .ta = transa, .tb = transb, .alpha = alpha, .beta = beta,
				    .A = A, .B = B, .C = C, .want = 'd' };
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__gemm_check(&p)))
		return ret;
	return stargemm__run_product(&p, NULL, NULL, NULL);
}

int stargemm_pdgemm(stargemm_trans transa, stargemm_trans transb, double alpha,
		    const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		    double beta, struct stargemm_matrix *C)
{
	int ret = stargemm_pdgemm_submit(transa, transb, alpha, A, B, beta, C);

	if (ret)
		return ret;
	return stargemm_wait();
}

int stargemm_gemm_submit(stargemm_trans transa, stargemm_trans transb, const void *alpha,
			 const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			 const void *beta, struct stargemm_matrix *C)
{
	struct stargemm__gemm p = { .ta = transa, .tb = transb, .A = A, .B = B, .C = C,
				    .fn = "stargemm_gemm" };
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__gemm_check(&p)) || (ret = stargemm__gemm_scalars(&p, alpha, beta)))
		return ret;
	return stargemm__run_product(&p, NULL, NULL, NULL);
}

int stargemm_gemm(stargemm_trans transa, stargemm_trans transb, const void *alpha,
		  const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		  const void *beta, struct stargemm_matrix *C)
{
	int ret = stargemm_gemm_submit(transa, transb, alpha, A, B, beta, C);

	if (ret)
		return ret;
	return stargemm_wait();
}
