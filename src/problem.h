/*
 * problem.h — a GEMM problem C = alpha op(A) op(B) + beta C (struct stargemm__gemm), its
 * checks (src/problem.c), the insertion of its tasks (src/insert.c), the executor
 * (src/execute.c) and a product from problem to run (src/product.c, src/ooc.c).
 * Executor floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_PROBLEM_H
#define STARGEMM_PROBLEM_H

#include <starpu.h>

#include "matrix.h"
#include "stationary.h"

/* A GEMM problem C = alpha op(A) op(B) + beta C (problem.c). */
struct stargemm__gemm {
	char ta, tb;
	double _Complex alpha, beta;   /* widened from the matrices' type */
	const struct stargemm_matrix *A, *B;
	struct stargemm_matrix *C;
	/* The public call, for messages ("stargemm_pdgemm" if NULL), and the element type
	 * it takes alpha and beta in: 'd' for the double calls, 0 for any type (then the
	 * scalars are read by stargemm__gemm_scalars() once the matrices are checked); a
	 * double call refusing other types names its call of any type, @p typed
	 * ("stargemm_gemm()" if NULL). */
	const char *fn;
	char want;
	const char *typed;
	const struct stargemm__element *type;  /* the matrices', set by stargemm__gemm_check() */
	int64_t kt;   /* tiles of the inner dimension, set by stargemm__gemm_check() */
	/* Workers that may run the GEMMs (STARPU_CPU | STARPU_CUDA, set by
	 * stargemm__gemm_check(); the out-of-core executor narrows it to STARPU_CUDA). */
	uint32_t where;
	/* Norm filtering (src/bsgemm.c): every rank's tile norms of A and B (layout of the
	 * tiles array), NULL = none, and the threshold. */
	const double *norm_a, *norm_b;
	double eps;
	/* C is only read (the old C of a symbolic product, src/pattern.c): it may then be
	 * A or B. */
	int c_read_only;
	/* In core, the operand kept in place (src/stationary.c): 'A', 'B', 'C', or 0:
	 * STARGEMM_STATIONARY, else the model's choice (src/product.c). */
	int stationary;
	/* The products, this one first, that read A (B) unchanged: the model's sequence
	 * (stargemm_bsgemm_options.reuse_a, reuse_b; 0 or 1: this one only). */
	int64_t reuse_a, reuse_b;
	/* Set by the executor once one of the product's insertions failed on this rank: the
	 * inserts then insert the tasks as no-ops (codelets/noop.c, src/execute.c). */
	int skip;
};

/* Batches of small tile products (src/inspect.c, codelets/batch.c): the thresholds
 * STARGEMM_BATCH_BELOW and STARGEMM_BATCH_FLOPS (src/settings.c); 0 turns batching
 * off. */
int stargemm__batch_settings(double *below, double *flops);

/* Whether an operand of the problem is packed (src/pack.c): it is then multiplied in
 * core, by batches on CPU workers, also when out of core was asked for. */
static inline int stargemm__gemm_packed(const struct stargemm__gemm *g)
{
	return g->A->pack || g->B->pack || g->C->pack;
}

/* Validate a problem (sizes, tilings, grids, aliasing, element types); sets p->kt and
 * p->type. */
int stargemm__gemm_check(struct stargemm__gemm *p);
/* The agreement of a product's ranks before any of its messages: every rank passes
 * its checks' result @p ret and hashes its transposes, scalars and matrices, and
 * @p options (a hash of the call's options, 0 if none); returns the lowest failing
 * rank's error on every rank, or -EINVAL on every rank when the ranks' arguments
 * differ (stargemm__agree_args()). Collective. */
int stargemm__gemm_agree(const struct stargemm__gemm *p, int ret, uint64_t options);
/* Read the scalars at @p alpha and @p beta in the type of the checked problem @p p
 * (-EINVAL when one is NULL). */
int stargemm__gemm_scalars(struct stargemm__gemm *p, const void *alpha, const void *beta);
/* The op letter the kernels get for op(X) = @p t of problem @p p: 'N', 'T', or 'C' for
 * a complex conjugate transpose. */
char stargemm__kernel_op(const struct stargemm__gemm *p, char t);

/* The k-th tile of row i of op(A), and of column j of op(B). */
starpu_data_handle_t stargemm__gemm_a_tile(const struct stargemm__gemm *p, int64_t i, int64_t k);
starpu_data_handle_t stargemm__gemm_b_tile(const struct stargemm__gemm *p, int64_t k, int64_t j);

/* The handle a work list's reference names: tile (r, c) of op(A) (@p operand
 * STARGEMM_OP_A), op(B) or C, or for a packed operand its pack (r, c) in op(X)'s
 * coordinates (src/worklist.h). */
starpu_data_handle_t stargemm__ref_handle(const struct stargemm__gemm *p, int operand,
					  int64_t r, int64_t c);

/* Whether a transposition character means op(X) = X^T. */
int stargemm__is_trans(char t);

/* Insert the update of C(i, j) by the k-th tiles of op(A) and op(B) (beta applied when
 * @p first: the first update of the tile's chain), with a StarPU priority, the policy's task info (src/contract.h; may be NULL)
 * and an optional callback run on the rank that executes it. */
int stargemm__gemm_insert(const struct stargemm__gemm *p, int64_t i, int64_t j, int64_t k,
			  int first, int priority, struct stargemm_task_info *info,
			  void (*callback)(void *), void *callback_arg);
/* The same into the tile handle @p c (of C(i, j)'s shape) with this @p beta (0: c is
 * only written): the partial tiles of a split inner dimension (src/ksplit.c). */
int stargemm__gemm_insert_into(const struct stargemm__gemm *p, int64_t i, int64_t j, int64_t k,
			       starpu_data_handle_t c, double _Complex beta, int priority,
			       struct stargemm_task_info *info, void (*callback)(void *),
			       void *callback_arg);
/* Insert one batch of tile products of a work list (the products' op(A), op(B) and C
 * tiles are the batch's refs, the buffers of the task, described in @p descr: room for
 * the largest batch's refs), with a StarPU priority (the task info is its first
 * product's) and an optional callback run on the rank that executes it. */
struct stargemm__worklist;
int stargemm__batch_insert(const struct stargemm__gemm *p, const struct stargemm__worklist *wl,
			   int64_t batch, struct starpu_data_descr *descr, int priority,
			   void (*callback)(void *), void *callback_arg);
/* Insert C(i, j) = beta C(i, j), for a C tile that no product updates (for a packed C:
 * its pack (i, j), every tile).
 * The three inserts return -EIO with a message when the task cannot be inserted (or
 * STARGEMM_FAULT injects that); with p->skip they insert the task as a no-op. */
int stargemm__scale_insert(const struct stargemm__gemm *p, int64_t i, int64_t j);

/* Insert Y = Y + X (two tiles of one shape; it runs on Y's owner): the sum of partial
 * tiles (src/ksplit.c). Errors as the other inserts. */
int stargemm__accumulate_insert(const struct stargemm__gemm *p, starpu_data_handle_t x,
				starpu_data_handle_t y);
/* An insertion of problem @p p failed on this rank (its message set). The first time:
 * the failure is recorded for stargemm_wait() (every rank reports it) and the rest of
 * the product is skipped (p->skip: inserted as no-ops with the same data, which the
 * other ranks' messages need); returns 1: insert the task again, as a no-op. A no-op
 * that cannot be inserted either aborts the job. */
int stargemm__insertion_failed(struct stargemm__gemm *p);

/* The inner dimension split over ranks and workers (src/ksplit.c): the number of
 * partial tiles per rank and C tile when the in-core product @p g should be split (its
 * C has fewer present tiles than the workers of all ranks, or STARGEMM_KSPLIT=2; not
 * for packed operands), 0 when not, or an error (a bad setting). Collective. */
int stargemm__ksplit_width(const struct stargemm__gemm *g);
/* Insert the product of request @p r (src/product.c: which products exist and which
 * the filter leaves out) with op(A) (@p by_b = 0) or op(B) (1) kept in place: each
 * product on the owner of that operand's tile, into one of @p width partial tiles per
 * rank and C tile; the partials summed into C = beta C on C's owner. The products and
 * flops into @p info (may be NULL). The partials are freed at the next wait. A failed
 * insertion skips the rest (stargemm__insertion_failed()): the next wait reports it.
 * Collective. */
struct stargemm__request;
int stargemm__ksplit_run(struct stargemm__gemm *g, const struct stargemm__request *r,
			 int by_b, int width, struct stargemm_bsgemm_info *info);

/* The executor (src/execute.c). new: what the walk of the work list @p wl of problem
 * @p gemm needs, allocated before the product's agreement (-ENOMEM, or -EINVAL for a
 * bad STARGEMM_AGREE_FLOPS); execute: walk it, returning when the tasks are inserted
 * (in core: 0) or done (out of core: stargemm_wait()'s status). A task that cannot be
 * inserted is reported by the next stargemm_wait() on every rank. The executor may be
 * freed once execute returns. */
struct stargemm__worklist;
struct stargemm__executor;
int stargemm__executor_new(struct stargemm__gemm *gemm, const struct stargemm__worklist *wl,
			   struct stargemm__executor **out);
int stargemm__execute(struct stargemm__executor *ex);
void stargemm__executor_free(struct stargemm__executor *ex);
/* Seconds a tile-product task costs this rank's first GPU beyond its flops
 * (src/taskcost.c), measured once per process by a probe of small tasks: start it (the
 * workers running; *probe NULL when it was measured before, or on a rank without
 * GPUs), do something else, then finish it: *seconds, 0 on a rank without GPUs.
 * Start returns 0 or -ENOMEM; finish (which lets the probe go) 0 or -EIO. */
struct stargemm__task_probe;
int stargemm__task_probe_start(struct stargemm__task_probe **probe);
int stargemm__task_probe_finish(struct stargemm__task_probe *probe, double *seconds);

/* The operand an in-core product keeps in place into *s (src/choice.c), and the
 * partials per rank and C tile of choices A and B into *width: the forced choice;
 * else with a small C the inner dimension split (A, a partial per worker); else, on
 * several ranks and tiles not small, the stationary model's choice (src/stationary.c)
 * with every rank's rates and the tiles already in place; C when a rank does not know
 * its rate. The model's bytes and times of the choices into @p info (may be NULL).
 * @p paused: the workers are paused (stargemm__quiet_begin()). Collective. */
int stargemm__choose_stationary(const struct stargemm__gemm *g, const struct stargemm__request *r,
				int paused, enum stargemm__stationary *s, int *width,
				struct stargemm_bsgemm_info *info);
/* A product (dense or block-sparse operands) through the inspector and the executor
 * (src/product.c); @p pr NULL: in core, else out of core with the plan of that request
 * fitted to the list (src/fit.c), which @p plan (may be NULL) receives. @p info (may
 * be NULL) receives the list's products, skips, flops and the inspection time. */
int stargemm__run_product(struct stargemm__gemm *g, const struct stargemm_plan_request *pr,
			  struct stargemm_plan *plan, struct stargemm_bsgemm_info *info);
/* The plan stargemm__run_product() would run request @p pr with (collective when it
 * inspects, see src/fit.c). */
int stargemm__product_plan(struct stargemm__gemm *g, const struct stargemm_plan_request *pr,
			   struct stargemm_plan *plan);
/* The out-of-core plan request of a problem on this rank's devices (src/ooc.c):
 * tilings, grid, the largest tile, the device budget and @p opt's overrides (NULL: the
 * defaults). Checks the problem (unless @p before, the result of the caller's own
 * checks, is an error) and every option, then agrees with the other ranks
 * (stargemm__gemm_agree()). Collective. */
int stargemm__ooc_request(struct stargemm__gemm *g, const struct stargemm_ooc_options *opt,
			  int before, struct stargemm_plan_request *pr);

#endif
