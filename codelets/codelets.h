/*
 * codelets.h — the kernels floor's face (codelets/, doc/design.md, "Layers"): the
 * StarPU codelets, their performance models, the small tile kernels and the batches'
 * calls.
 */
#ifndef STARGEMM_CODELETS_H
#define STARGEMM_CODELETS_H

#include <stddef.h>
#include <stdint.h>
#include <starpu.h>

#include "element.h"
#include "smallkernel.h"

/* Whether BLAS or cuBLAS would refuse the tile product the task's three matrix
 * buffers @p buffers (A, B, C) make with ops @p ta, @p tb and sizes m x n x k: a side
 * or leading dimension beyond its int, a leading dimension below the rows, or shapes
 * that do not make the product. If so the task fails (stargemm__task_failed()) with the
 * reason, named as the call @p prefix @p letter "gemm", and 1 is returned: the kernel
 * must not make the call (codelets/blas_guard.c, which also holds stargemm's xerbla_). */
int stargemm__blas_refuses(const char *prefix, char letter, void *buffers[], char ta, char tb,
			   int m, int n, int k);

/* Codelets (codelets/). */
extern struct starpu_codelet stargemm_gemm_cl;            /* C = a op(A) op(B) + b C, C in RW */
extern struct starpu_codelet stargemm_gemm_overwrite_cl;  /* same with beta = 0, C in W */
extern struct starpu_codelet stargemm_fill_cl;            /* tile filled by a user function */
extern struct starpu_codelet stargemm_generate_cl;        /* tile made by a generator, W */
extern struct starpu_codelet stargemm_generate_cuda_cl;   /* the same by a CUDA generator, W */
extern struct starpu_codelet stargemm_scale_cl;           /* C = beta C, C in RW */
extern struct starpu_codelet stargemm_zero_cl;            /* C = 0, C in W */
extern struct starpu_codelet stargemm_norm_cl;            /* *out = ||A||_F, A in R */
extern struct starpu_codelet stargemm_copy_cl;            /* B = A, A in R, B in W */
extern struct starpu_codelet stargemm_batch_cl;           /* many tile products */
extern struct starpu_codelet stargemm_pack_fill_cl;       /* a pack's tiles, user function */
extern struct starpu_codelet stargemm_pack_norm_cl;       /* a pack's tile norms */
extern struct starpu_codelet stargemm_pack_copy_cl;       /* a pack from another's */
extern struct starpu_codelet stargemm_noop_cl;            /* nothing: a skipped task */
extern struct starpu_codelet stargemm_combine2_cl;        /* D = a A + b B: A, B in R, D in W */
extern struct starpu_codelet stargemm_combine1_cl;        /* D = a A: A in R, D in W */
extern struct starpu_codelet stargemm_accumulate_cl;      /* Y += X: X in R, Y in RW */
extern struct starpu_codelet stargemm_add_diagonal_cl;    /* A += a I on its diagonal, RW */
extern struct starpu_codelet stargemm_trace_cl;           /* out[2] = its diagonal's sum */
extern struct starpu_codelet stargemm_pack_combine2_cl;   /* the same on packs */
extern struct starpu_codelet stargemm_pack_combine1_cl;
extern struct starpu_codelet stargemm_pack_add_diagonal_cl;
extern struct starpu_codelet stargemm_pack_trace_cl;
/* The tile-wise codelets' models, shared with their pack versions (a regression on the
 * elements of the buffer: a pack's are its tiles'). */
extern struct starpu_perfmodel stargemm_fill_model, stargemm_norm_model, stargemm_copy_model;
extern struct starpu_perfmodel stargemm_combine_model, stargemm_diagonal_model;

/* The diagonal elements (r, r + shift) that a rows x cols tile of type @p t (leading
 * dimension ld) holds, shift = its first row's index minus its first column's:
 * add @p alpha to them, or their sum (codelets/diagonal.c). */
void stargemm__tile_add_diagonal(const struct stargemm__element *t, void *tile, int64_t ld,
				 int64_t rows, int64_t cols, int64_t shift, double _Complex alpha);
double _Complex stargemm__tile_trace(const struct stargemm__element *t, const void *tile,
				     int64_t ld, int64_t rows, int64_t cols, int64_t shift);


/* What the codelets' regression models are indexed by (codelets/model.c): the default
 * footprint (tile shapes), and the work as size: m n k for a tile product (weighed by
 * the element type's model_weight), the elements of the last tile for a tile-wise
 * codelet. */
uint32_t stargemm__model_footprint(struct starpu_task *task);
/* The same with the element type of the task (its first argument) mixed in, for the
 * typed codelets (gemm, batch); equal to the default for double. */
uint32_t stargemm__model_typed_footprint(struct starpu_task *task);
size_t stargemm__model_gemm_work(struct starpu_task *task, unsigned nimpl);
size_t stargemm__model_tile_elements(struct starpu_task *task, unsigned nimpl);

/* One CPU worker's (@p cuda_device < 0) or CUDA device @p cuda_device's flops per
 * second on an m x n x k product of @p t as StarPU's stored model of the tile product
 * codelet predicts it, 0 without one (codelets/gemm.c). */
double stargemm__gemm_model_rate(const struct stargemm__element *t, int cuda_device, double m,
				 double n, double k);

/* The kernels of small tile products on the CPU (codelets/smallgemm.c). */
enum stargemm__small_kernel {
	STARGEMM__SMALL_ONE, STARGEMM__SMALL_XSMM, STARGEMM__SMALL_BLAS, STARGEMM__SMALL_NKERNELS
};
/* One small tile product of type @p t on the CPU (codelets/smallgemm.c), by the kernel
 * stargemm__small_choice() names (below): the one kernel for every shape, libxsmm's JIT
 * kernel, or the type's BLAS; op(A) = A^T or A^H is copied out to the cache's buffer
 * first for the first two. The cache holds the last shape's libxsmm kernel for each
 * beta and that buffer; start it zeroed, one per thread, and free it with
 * stargemm__small_cache_free(). */
struct stargemm__small_cache {
	int key[2][8];          /* the last shape with beta 0, with beta 1 */
	void (*fn[2])(void);
	int one_kernel;   /* the batch's geometry's: the one kernel for every shape first */
	/* The kernel (enum stargemm__small_kernel) for products of sides up to 256 in each
	 * side class of the calibration (codelets/calibrate.h), for the type letter,
	 * alpha == 1 and one_kernel in how_key; how_key[0] = 0: not made yet. */
	int how_key[3];
	signed char how[7];
	void *opa;        /* op(A) copied out for op(A) = A^T or A^H (codelets/transpose.c) */
	size_t opa_bytes;
};
/* What a cache allocated (its op(A) buffer), freed; the cache can be used again. */
void stargemm__small_cache_free(struct stargemm__small_cache *cache);
void stargemm__small_gemm(struct stargemm__small_cache *cache,
			  const struct stargemm__element *t, char ta, char tb, int m, int n,
			  int k, double _Complex alpha, const void *a, int lda, const void *b,
			  int ldb, double _Complex beta, void *c, int ldc);
/* The same by the kernel @p how, whatever stargemm__small_choice() says: one that does
 * not take the product falls back to the one kernel, else BLAS (the calibration). */
void stargemm__small_gemm_by(struct stargemm__small_cache *cache,
			     enum stargemm__small_kernel how, const struct stargemm__element *t,
			     char ta, char tb, int m, int n, int k, double _Complex alpha,
			     const void *a, int lda, const void *b, int ldb,
			     double _Complex beta, void *c, int ldc);
/* libxsmm's set-up, then the kernels' calibration (codelets/calibrate.c); before
 * StarPU's threads start (stargemm_init). */
void stargemm__small_init(void);
/* The kernel stargemm__small_gemm() takes for a product (@p one_kernel: the cache's),
 * of those that take it, the fastest measured on this machine for products of its size
 * (codelets/calibrate.c), or without measurements the built-in order: the one kernel
 * for every shape, libxsmm's (which falls back to the one kernel, or to BLAS where that
 * does not apply, when libxsmm has no kernel for the shape), or BLAS. The kernels take
 * op(A) = A: for A^T or A^H, op(A) is copied out first. */
enum stargemm__small_kernel stargemm__small_choice(const struct stargemm__element *t, char ta,
						   int m, int n, int k, double _Complex alpha,
						   int one_kernel);
/* Of the kernels in @p can (a bit 1 << kernel each), the one of highest @p rate
 * (indexed by kernel); the first of them on a tie; BLAS when @p can is empty. */
enum stargemm__small_kernel stargemm__small_pick(const double *rate, unsigned can);

/* The kernels for small tile products of every shape, stargemm__dgemm_any() and the
 * others, each instruction set's, and stargemm__small_isa(): codelets/smallkernel.h
 * (included above; without StarPU, for the kernel files and bench/kernels.c). */

/* op(A) of an A of @p size-byte elements stored k x m (leading dimension @p lda) copied
 * to @p at as an m x k array (leading dimension m): A^T, or A^H with @p conj (complex
 * sizes 8 and 16 only). codelets/transpose.c. */
void stargemm__op_copy(size_t size, int conj, int m, int k, const void *a, int lda, void *at);

/* One tile product of a batch, where its tiles lie (codelets/batch.c): C (m x n) =
 * alpha op(A) op(B) + (first ? beta : 1) C, inner dimension k. Products with the same
 * @p c update the same C tile. */
struct stargemm__batch_item {
	int m, n, k;
	int lda, ldb, ldc;
	int first;
	const void *a, *b;
	void *c;
};
/* A batched call: the products items[order[start .. start + count)], all of this shape
 * and beta (first: beta, else 1), none updating the same C tile. */
struct stargemm__batch_call {
	int m, n, k, lda, ldb, ldc, first;
	int64_t start, count;
};
/* The batched calls that run the @p n items of a batch in a correct order
 * (codelets/batch_calls.c): fills order[] (n entries: the items, call after call) and
 * calls[] (at most n), in the order they must run. The updates of one C tile go to
 * successive calls, in list order. Returns the number of calls, or -ENOMEM. */
int64_t stargemm__batch_calls(const struct stargemm__batch_item *items, int64_t n,
			      int64_t *order, struct stargemm__batch_call *calls);

/* Once the CUDA workers run (stargemm_init()): what the batches' CUDA codelet needs
 * of each device (codelets/batch.c: its memory pool keeps the tile addresses' arrays).
 * Nothing without CUDA workers or in SimGrid mode. */
void stargemm__batch_cuda_setup(void);

#endif
