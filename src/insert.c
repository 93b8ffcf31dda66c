/*
 * insert.c — the insertion of one task: a tile update, a batch of tile products, a
 * scaling of C, as sequential StarPU-MPI task insertion.
 *
 * Every rank inserts the same sequence of tasks; StarPU-MPI runs each task on the owner
 * of its C tile and posts the sends and receives of the A and B tiles it needs ("owner
 * computes"). Each C tile receives a chain of Kt updates; the first one applies beta
 * (beta = 0: C is written without being read, so it is neither transferred nor can its
 * NaNs leak into the result), the following ones accumulate with beta = 1. The order
 * of the insertions is the work list's (src/worklist.h), which src/execute.c follows.
 */
#include <inttypes.h>

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "worklist.h"

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

/* Unit (r, c) of operand @p operand (A or B) of @p p made here if it is generated
 * (src/generate.c), for a task of @p info's device (none: the host). */
static int make_unit(const struct stargemm__gemm *p, int operand, int64_t r, int64_t c,
		     const struct stargemm_task_info *info)
{
	int device = info ? info->device : -1;

	return operand == STARGEMM_OP_A
		       ? stargemm__generate_unit(p->A, stargemm__is_trans(p->ta), r, c, p->skip,
						 device)
		       : stargemm__generate_unit(p->B, stargemm__is_trans(p->tb), r, c, p->skip,
						 device);
}

/* Whether a task writing @p c runs on this rank and may read generated tiles. */
static int makes_here(const struct stargemm__gemm *p, starpu_data_handle_t c)
{
	return (p->A->gen || p->B->gen) && starpu_mpi_data_get_rank(c) == stargemm_rank();
}

int stargemm__gemm_insert_into(const struct stargemm__gemm *p, int64_t i, int64_t j, int64_t k,
			       starpu_data_handle_t c, double _Complex beta, int priority,
			       struct stargemm_task_info *info, void (*callback)(void *),
			       void *callback_arg)
{
	char type = p->type->letter;
	struct starpu_codelet *cl = beta == 0.0 ? &stargemm_gemm_overwrite_cl : &stargemm_gemm_cl;
	starpu_data_handle_t a = stargemm__gemm_a_tile(p, i, k);
	starpu_data_handle_t b = stargemm__gemm_b_tile(p, k, j);
	char ta = stargemm__kernel_op(p, p->ta), tb = stargemm__kernel_op(p, p->tb);
	enum starpu_data_access_mode cmode = beta == 0.0 ? STARPU_W : STARPU_RW;
	struct starpu_data_descr d[3] = { { a, STARPU_R }, { b, STARPU_R }, { c, cmode } };
	int injected = injected_failure(p), ret;
	char what[96];

	if (makes_here(p, c) && ((ret = make_unit(p, STARGEMM_OP_A, i, k, info)) ||
				 (ret = make_unit(p, STARGEMM_OP_B, k, j, info))))
		return ret;
	ret = injected;
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

int stargemm__gemm_insert(const struct stargemm__gemm *p, int64_t i, int64_t j, int64_t k,
			  int first, int priority, struct stargemm_task_info *info,
			  void (*callback)(void *), void *callback_arg)
{
	return stargemm__gemm_insert_into(p, i, j, k, stargemm__tile(p->C, i, j),
					  first ? p->beta : 1.0, priority, info, callback,
					  callback_arg);
}

/* The generated tiles that batch @p b reads, made here if it runs here (its C
 * units' owner). */
static int make_batch_inputs(const struct stargemm__gemm *p, const struct stargemm__worklist *wl,
			     const struct stargemm__batch *b, const struct starpu_data_descr *descr)
{
	const struct stargemm__tile_ref *refs = &wl->refs[b->ref_first];
	int64_t c = 0;
	int ret = 0;

	while (c < b->nrefs && refs[c].operand != STARGEMM_OP_C)
		c++;
	if (c == b->nrefs || !makes_here(p, descr[c].handle))
		return 0;
	for (int64_t e = 0; e < b->nrefs && !ret; e++)
		if (refs[e].operand != STARGEMM_OP_C)
			ret = make_unit(p, refs[e].operand, refs[e].r, refs[e].c,
					&wl->products[b->first].info);
	return ret;
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
	int injected = injected_failure(p), ret;
	char what[64];

	for (int64_t e = 0; e < b->nrefs; e++) {
		const struct stargemm__tile_ref *t = &wl->refs[b->ref_first + e];

		descr[e].handle = stargemm__ref_handle(p, t->operand, t->r, t->c);
		descr[e].mode = t->operand == STARGEMM_OP_C ? STARPU_RW : STARPU_R;
	}
	if ((ret = make_batch_inputs(p, wl, b, descr)))
		return ret;
	ret = injected;
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

int stargemm__accumulate_insert(const struct stargemm__gemm *p, starpu_data_handle_t x,
				starpu_data_handle_t y)
{
	struct starpu_data_descr d[2] = { { x, STARPU_R }, { y, STARPU_RW } };
	char type = p->type->letter;
	int injected = injected_failure(p), ret = injected;

	if (p->skip)
		ret = insert_skipped(d, 2);
	else if (!ret)
		ret = starpu_mpi_task_insert(stargemm__comm(), &stargemm_accumulate_cl,
					     STARPU_VALUE, &type, sizeof(type),
					     STARPU_DATA_MODE_ARRAY, d, 2, 0);
	return ret ? insert_error(ret, injected, "a sum of partial tiles") : 0;
}

int stargemm__insertion_failed(struct stargemm__gemm *p)
{
	if (!p->skip) {
		stargemm__task_failed(stargemm_last_error());
		p->skip = 1;
		return 1;
	}
	fprintf(stderr, "stargemm: rank %d: %s; the product's remaining tasks cannot be "
		"skipped either, and the other ranks would wait for their messages: aborting "
		"the job\n", stargemm_rank(), stargemm_last_error());
	MPI_Abort(stargemm__comm(), 70);
	return 0;
}
