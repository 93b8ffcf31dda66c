/*
 * codelets/batch.c — many small tile products in one task, on CPU and CUDA: with tiles
 * of a few tens of rows, one task per product C(i,j) += op(A)(i,k) op(B)(k,j) costs
 * more in the runtime than the product itself, so the inspector groups them
 * (src/inspect.c, batches; DBCSR's "stacks"). The task's buffers are the batch's
 * tiles, each once. A C tile's updates keep their k order and the first one applies
 * beta: on the CPU the products run one after the other in list order; on a GPU they
 * run as cublas?gemmBatched calls in the order codelets/batch_calls.c gives (the
 * updates of one C tile in successive calls, one call per tile shape), on the worker's
 * stream, asynchronously (STARPU_CUDA_ASYNC); every status is checked, and a failure is
 * reported to stargemm_wait() as -EIO.
 *
 * Arguments (STARPU_VALUE, in order): char type (the element type's letter), transa,
 * transb; double _Complex alpha, beta; int64_t count; const struct stargemm__product
 * *products; const int32_t *slots (the buffers of each product's op(A), op(B), C: 3 per
 * product); const struct stargemm__batch_geometry *geometry (sizes from the tilings,
 * offsets of packed tiles in their buffers). All belong to the work list, which lives
 * until the tasks are done. On the CPU each product goes through codelets/smallgemm.c
 * (a small-matrix kernel, else the type's BLAS); with op(A) = A^T or A^H the batch
 * copies each of its A tiles out once for the kernels (opa_copies, below).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"
#include "calibrate.h"
#include "../src/worklist.h"

#if defined(STARPU_USE_CUDA) && !defined(STARPU_SIMGRID)
#include <cuda_runtime.h>
#include <starpu_cublas_v2.h>
#endif

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

/* The arguments of a batch task (see above). */
struct batch_args {
	const struct stargemm__element *type;
	char ta, tb;
	double _Complex alpha, beta;
	int64_t count;
	const struct stargemm__product *products;
	const int32_t *slots;
	const struct stargemm__batch_geometry *g;
};

static void unpack(void *cl_arg, struct batch_args *x)
{
	char letter;

	starpu_codelet_unpack_args(cl_arg, &letter, &x->ta, &x->tb, &x->alpha, &x->beta,
				   &x->count, &x->products, &x->slots, &x->g);
	x->type = stargemm__element(letter);
}

/* The sizes of product e from the tilings: C is m x n, the inner dimension k. */
static void sizes_of(const struct batch_args *x, int64_t e, int *m, int *n, int *k)
{
	const struct stargemm__product *p = &x->products[e];
	const struct stargemm__batch_geometry *g = x->g;

	*m = (int)(g->row_off[p->i + 1] - g->row_off[p->i]);
	*n = (int)(g->col_off[p->j + 1] - g->col_off[p->j]);
	*k = (int)(g->k_off[p->k + 1] - g->k_off[p->k]);
}

/* Product e of the batch: its sizes, its tiles in the buffers. Filled in place: a
 * returned structure cost a store-forwarding stall per product (tiles of 5: a fifth of
 * a repetition). */
static void item_of(const struct batch_args *x, void *buffers[], int64_t e,
		    struct stargemm__batch_item *it)
{
	const struct stargemm__product *p = &x->products[e];
	const struct stargemm__batch_geometry *g = x->g;
	void *abuf = buffers[x->slots[3 * e]], *bbuf = buffers[x->slots[3 * e + 1]];
	void *cbuf = buffers[x->slots[3 * e + 2]];
	size_t es = x->type->size;

	sizes_of(x, e, &it->m, &it->n, &it->k);
	it->a = x->ta == 'N' ? tile_at(g, 0, abuf, es, p->i, p->k)
			     : tile_at(g, 0, abuf, es, p->k, p->i);
	it->b = x->tb == 'N' ? tile_at(g, 1, bbuf, es, p->k, p->j)
			     : tile_at(g, 1, bbuf, es, p->j, p->k);
	it->c = tile_at(g, 2, cbuf, es, p->i, p->j);
	it->lda = tile_ld(g, 0, abuf, x->ta == 'N' ? it->m : it->k);
	it->ldb = tile_ld(g, 1, bbuf, x->tb == 'N' ? it->k : it->n);
	it->ldc = tile_ld(g, 2, cbuf, it->m);
	it->first = p->first;
}

/* op(A) = A^T or A^H on the CPU: a tile of A that several products of the batch read
 * is copied out once (codelets/transpose.c) for the kernels, which take op(A) = A; it
 * updates every C tile of its row in the batch, and copied per product it was copied
 * that many times, which slowed A^T down against A (doc/design.md, Decisions, "op(A) =
 * A^T copied out instead of BLAS"). A tile read once is copied by its product into the
 * small cache's buffer (codelets/smallgemm.c), which stays in the L1 cache: copied to a
 * place of its own, its product was slower; so is a tile below KEEP_MIN elements. A
 * table with open addressing, grown with the batch's distinct tiles, maps a tile's
 * address to its copy's place in one buffer; a tile is copied when a product first
 * reads it. The buffer is host memory outside StarPU's budget, freed with the task:
 * the batch's A tiles read more than once (its size with tiles of 23: ibid.). */
struct opa_copies {
	size_t mask;         /* the table's size - 1 (a power of two) */
	size_t used;         /* entries in use, at most half the table */
	int shift;           /* 64 - log2(size): the hash's top bits index the table */
	const void **src;    /* each entry's tile in the task's buffers; NULL: empty */
	size_t *off;         /* its copy's place in buf, in bytes; NOT_KEPT: read once */
	int32_t *readers;    /* products that read it; 0 once it is copied */
	char *buf;
};

#define NOT_KEPT SIZE_MAX

/* Tiles of A below this many elements are copied by each product: the table's
 * bookkeeping (a pass over the batch, a hash per product) costs more than their copies:
 * tiles of 5 x 5 ran slower with the table, 8 x 8 and 16 x 16 faster (doc/design.md,
 * Decisions, "op(A) = A^T copied out instead of BLAS"). */
#define KEEP_MIN 64

/* Whether product @p it (op(A) = A^T or A^H: the table exists only then) reads its A
 * tile through the batch's copy: a kernel takes it (not BLAS, which reads A^T as it
 * is) and the tile has at least KEEP_MIN elements (empty tiles, which may share an
 * address with the next, are not copied). */
static int copies_a(const struct batch_args *x, const struct stargemm__batch_item *it)
{
	return (int64_t)it->m * it->k >= KEEP_MIN &&
	       stargemm__small_choice(x->type, x->ta, it->m, it->n, it->k, x->alpha,
				      x->g->one_kernel) != STARGEMM__SMALL_BLAS;
}

/* Whether a kernel other than BLAS takes the batch's products of some size: the choice
 * is per side class (codelets/calibrate.c), and BLAS may win the smallest class only. */
static int kernels_take_some(const struct batch_args *x)
{
	for (int i = 0; i < STARGEMM__CAL_SIDES; i++)
		if (stargemm__small_choice(x->type, x->ta, 4 << i, 4 << i, 4 << i, x->alpha,
					   x->g->one_kernel) != STARGEMM__SMALL_BLAS)
			return 1;
	return 0;
}

/* The entry of tile @p a: its own, or the empty one where it goes. */
static size_t entry_of(const struct opa_copies *t, const void *a)
{
	size_t h = (size_t)(((uint64_t)(uintptr_t)a * UINT64_C(0x9E3779B97F4A7C15)) >> t->shift);

	while (t->src[h] && t->src[h] != a)
		h = (h + 1) & t->mask;
	return h;
}

static void opa_copies_free(struct opa_copies *t)
{
	free(t->src);
	free(t->off);
	free(t->readers);
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/* An empty table of 2^@p bits entries; 0 or -ENOMEM. */
static int opa_table(struct opa_copies *t, int bits)
{
	size_t size = (size_t)1 << bits;

	t->shift = 64 - bits;
	t->mask = size - 1;
	t->used = 0;
	t->src = calloc(size, sizeof(*t->src));
	t->off = malloc(size * sizeof(*t->off));
	t->readers = calloc(size, sizeof(*t->readers));
	return t->src && t->off && t->readers ? 0 : -ENOMEM;
}

/* Tile @p a (@p bytes of op(A)) read by one more product; the table doubles when half
 * full, so that it grows with the batch's distinct A tiles, not its products (tiles
 * of 5: millions of products per batch, a few thousand tiles). 0 or -ENOMEM. */
static int opa_add(struct opa_copies *t, const void *a, size_t bytes)
{
	size_t h = entry_of(t, a);

	if (!t->src[h] && 2 * (t->used + 1) > t->mask + 1) {
		struct opa_copies old = *t;

		if (opa_table(t, 65 - old.shift) != 0) {
			opa_copies_free(&old);
			return -ENOMEM;
		}
		for (size_t o = 0; o <= old.mask; o++) {
			if (!old.src[o])
				continue;
			h = entry_of(t, old.src[o]);
			t->src[h] = old.src[o];
			t->off[h] = old.off[o];
			t->readers[h] = old.readers[o];
			t->used++;
		}
		opa_copies_free(&old);
		h = entry_of(t, a);
	}
	if (!t->src[h]) {
		t->src[h] = a;
		t->off[h] = bytes;
		t->used++;
	}
	t->readers[h]++;
	return 0;
}

/* The table of the batch's A tiles, with their readers and, for the tiles read more
 * than once, their copies' places; 0, or -ENOMEM (the products then copy A each).
 * Nothing when no kernel takes the type's products (all go to BLAS). */
static int opa_copies_make(const struct batch_args *x, void *buffers[], struct opa_copies *t)
{
	size_t bytes = 0;

	memset(t, 0, sizeof(*t));
	if (x->g->a_tile_max < KEEP_MIN || !kernels_take_some(x))
		return 0;
	if (stargemm__fault(STARGEMM_FAULT_SCRATCH) || opa_table(t, 6) != 0)
		goto nomem;
	for (int64_t e = 0; e < x->count; e++) {
		struct stargemm__batch_item it;

		item_of(x, buffers, e, &it);
		if (copies_a(x, &it) &&
		    opa_add(t, it.a, (size_t)it.m * (size_t)it.k * x->type->size) != 0)
			goto nomem;
	}
	for (size_t h = 0; h <= t->mask; h++) {
		size_t tile_bytes;

		if (!t->src[h])
			continue;
		tile_bytes = t->off[h];
		t->off[h] = t->readers[h] > 1 ? bytes : NOT_KEPT;
		/* each copy on a 64-byte line, as the kernels' loads of A's columns like */
		if (t->readers[h] > 1)
			bytes += (tile_bytes + 63) & ~(size_t)63;
	}
	if (bytes && !(t->buf = aligned_alloc(64, bytes)))
		goto nomem;
	return 0;
nomem:
	opa_copies_free(t);
	return -ENOMEM;
}

/* op(A) of product @p it as the kernels take it: the batch's copy of its tile (made
 * now if this is the tile's first product), or NULL where the product takes A as it
 * is (smallgemm.c then copies it, or gives it to BLAS). */
static const void *opa_copy(const struct batch_args *x, struct opa_copies *t,
			    const struct stargemm__batch_item *it)
{
	size_t h;

	if (!t->buf || !copies_a(x, it) || !t->src[h = entry_of(t, it->a)] ||
	    t->off[h] == NOT_KEPT)
		return NULL;
	if (t->readers[h]) {
		stargemm__op_copy(x->type->size, x->ta == 'C' && x->type->is_complex, it->m,
				  it->k, it->a, it->lda, t->buf + t->off[h]);
		t->readers[h] = 0;
	}
	return t->buf + t->off[h];
}

/* Tiles of at most this many bytes are prefetched by the product before theirs: the
 * product of tiles this small takes less time than fetching its tiles from the outer
 * caches, which the hardware does not prefetch across products: tiles of 5 to 16 ran
 * faster with it (doc/performance.md, "Prefetching the next product's tiles"), 2 KiB
 * for 16 in d. Larger ones take long enough for the hardware prefetcher: prefetched
 * with a limit of 16 KiB, tiles of 23 ran as fast or slower, and with a limit of 4 KiB
 * d tiles of 13 to 27 ran slower on a Xeon (doc/design.md, Decisions, "Prefetch of the
 * next product's tiles up to 2 KiB"). */
#define PREFETCH_MAX 2048

/* Ask for the cache lines of a tile of @p rows x @p cols elements of @p es bytes,
 * leading dimension @p ld, unless it is larger than PREFETCH_MAX bytes. Inlined: GCC
 * finds a function that only prefetches free of side effects and drops its calls. */
static inline __attribute__((always_inline)) void
prefetch_tile(const void *t, int rows, int cols, int ld, size_t es)
{
	size_t span = (size_t)rows * es;

	if (span == 0 || span * (size_t)cols > PREFETCH_MAX)
		return;
	for (int j = 0; j < cols; j++) {
		const char *p = (const char *)t + (size_t)j * (size_t)ld * es;

		for (size_t o = 0; o < span; o += 64)
			__builtin_prefetch(p + o);
		__builtin_prefetch(p + span - 1);
	}
}

/* Prefetch the tiles of product @p it, the one after the product being computed. */
static inline __attribute__((always_inline)) void
prefetch_item(const struct batch_args *x, const struct stargemm__batch_item *it)
{
	size_t es = x->type->size;

	if (x->ta == 'N')
		prefetch_tile(it->a, it->m, it->k, it->lda, es);
	else
		prefetch_tile(it->a, it->k, it->m, it->lda, es);
	if (x->tb == 'N')
		prefetch_tile(it->b, it->k, it->n, it->ldb, es);
	else
		prefetch_tile(it->b, it->n, it->k, it->ldb, es);
	prefetch_tile(it->c, it->m, it->n, it->ldc, es);
}

/* The batch on one CPU core, product after product, each prefetching the next one's
 * tiles (prefetch_item()). */
static void batch_cpu(void *buffers[], void *cl_arg)
{
	struct stargemm__small_cache cache = { 0 };
	struct opa_copies copies = { 0 };
	struct stargemm__batch_item next;
	struct batch_args x;

	unpack(cl_arg, &x);
	cache.one_kernel = x.g->one_kernel;
	if (stargemm__fault(STARGEMM_FAULT_KERNEL)) {
		stargemm__task_failed("batch of tile products: injected fault (STARGEMM_FAULT)");
		return;
	}
	if (x.ta != 'N')
		(void)opa_copies_make(&x, buffers, &copies);
	if (x.count > 0)
		item_of(&x, buffers, 0, &next);
	for (int64_t e = 0; e < x.count; e++) {
		struct stargemm__batch_item it = next;
		const void *opa;

		if (e + 1 < x.count) {
			item_of(&x, buffers, e + 1, &next);
			prefetch_item(&x, &next);
		}
		if ((opa = opa_copy(&x, &copies, &it)))
			stargemm__small_gemm(&cache, x.type, 'N', x.tb, it.m, it.n, it.k, x.alpha,
					     opa, it.m, it.b, it.ldb, it.first ? x.beta : 1.0, it.c,
					     it.ldc);
		else
			stargemm__small_gemm(&cache, x.type, x.ta, x.tb, it.m, it.n, it.k, x.alpha,
					     it.a, it.lda, it.b, it.ldb, it.first ? x.beta : 1.0,
					     it.c, it.ldc);
	}
	opa_copies_free(&copies);
	stargemm__small_cache_free(&cache);
}

#if defined(STARPU_SIMGRID)
/* In SimGrid mode kernels are not run (the model gives the duration); StarPU 1.3
 * still needs a CUDA function to consider CUDA workers. */
static void batch_cuda(void *buffers[], void *cl_arg)
{
}
#define HAVE_BATCH_CUDA 1
#elif defined(STARPU_USE_CUDA)
#define HAVE_BATCH_CUDA 1

/* The host array of tile addresses, freed by the stream once its copy is done. */
static void CUDART_CB free_host(void *host)
{
	free(host);
}

/* Copy the tile addresses @p host (@p bytes) to the device array @p dev on @p stream
 * and hand @p host to the stream, which frees it once the copy is done (a copy from
 * pageable memory may return before it has read it all). Returns a CUDA error. */
static cudaError_t send_addresses(const void **dev, const void **host, size_t bytes,
				  cudaStream_t stream)
{
	cudaError_t ce = cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream);

	if (ce != cudaSuccess) {
		free(host);
	} else if (cudaLaunchHostFunc(stream, free_host, host) != cudaSuccess) {
		cudaStreamSynchronize(stream);
		free(host);
	}
	return ce;
}

/* The tile addresses' device arrays (run_calls()) come from cudaMallocAsync, out of
 * the device's default memory pool. Its release threshold is 0 by default: at each
 * synchronisation (StarPU 1.3 synchronises the device after a synchronous copy and
 * waits on events for others, drivers/cuda/driver_cuda.c) the pool may give its memory
 * back to the driver, and the next batch then maps memory again. So the pool keeps up
 * to this many bytes, room for the addresses of 2.8 million products, outside StarPU's
 * device budget (by default 90% of the device, src/pool.c), in the part left to cuBLAS
 * and the driver. Its effect is not measured: no GPU has run this code yet. */
#define ADDRESS_POOL_KEEP (64ull << 20)

/* On a CUDA worker (starpu_execute_on_each_worker()): its device's default memory pool
 * keeps ADDRESS_POOL_KEEP bytes. A failure only leaves the default threshold. */
static void keep_address_pool(void *arg)
{
	uint64_t keep = ADDRESS_POOL_KEEP;
	cudaMemPool_t pool;

	(void)arg;
	if (cudaDeviceGetDefaultMemPool(&pool, starpu_worker_get_devid(starpu_worker_get_id()))
	    == cudaSuccess)
		(void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
}

/* The calls on the worker's stream: one copy of the tile addresses to the device (the
 * call's A, B and C arrays side by side, in the calls' order), then the calls in order.
 * @p host (3 x->count addresses) is the stream's from here on (send_addresses()); the
 * device array is freed in stream order. Returns a message, or NULL. */
static const char *run_calls(const struct batch_args *x, const struct stargemm__batch_item *items,
			     const int64_t *order, const struct stargemm__batch_call *calls,
			     int64_t ncalls, const void **host, char *msg, size_t len)
{
	cudaStream_t stream = starpu_cuda_get_local_stream();
	size_t bytes = (size_t)(3 * x->count) * sizeof(void *);
	const void **dev;
	cudaError_t ce;

	for (int64_t i = 0; i < x->count; i++) {
		host[i] = items[order[i]].a;
		host[x->count + i] = items[order[i]].b;
		host[2 * x->count + i] = items[order[i]].c;
	}
	if ((ce = cudaMallocAsync((void **)&dev, bytes, stream)) != cudaSuccess) {
		free(host);
		snprintf(msg, len, "batch of tile products: no device memory for the tile "
			 "addresses (%zu bytes): %s", bytes, cudaGetErrorString(ce));
		return msg;
	}
	if ((ce = send_addresses(dev, host, bytes, stream)) != cudaSuccess) {
		snprintf(msg, len, "batch of tile products: the tile addresses (%zu bytes) did "
			 "not reach the GPU: %s", bytes, cudaGetErrorString(ce));
		cudaFreeAsync(dev, stream);
		return msg;
	}
	for (int64_t c = 0; c < ncalls; c++) {
		const struct stargemm__batch_call *k = &calls[c];
		int st = k->count > INT_MAX ? -1 : x->type->cuda_gemm_batched(
			starpu_cublas_get_local_handle(), x->ta, x->tb, k->m, k->n, k->k, x->alpha,
			dev + k->start, k->lda, dev + x->count + k->start, k->ldb,
			k->first ? x->beta : 1.0, (void *const *)(dev + 2 * x->count + k->start),
			k->ldc, (int)k->count);

		if (st != 0) {
			snprintf(msg, len, "cublas%cgemmBatched(%c%c, %d x %d x %d, %" PRId64
				 " products) returned status %d%s", x->type->letter - 'a' + 'A',
				 x->ta, x->tb, k->m, k->n, k->k, k->count, st,
				 st == -1 ? " (more products than a call takes)" : "");
			break;
		}
	}
	if ((ce = cudaFreeAsync(dev, stream)) != cudaSuccess && !msg[0])
		snprintf(msg, len, "batch of tile products: freeing the tile addresses on the "
			 "device: %s", cudaGetErrorString(ce));
	return msg[0] ? msg : NULL;
}

/* The batch as cublas?gemmBatched calls (codelets/batch_calls.c: the updates of one C
 * tile in successive calls, one call per shape), on the worker's stream. A failure the
 * GPU meets while it runs them (a kernel's, after the calls returned) is not seen
 * here: StarPU 1.3 stops the process on it (drivers/cuda/driver_cuda.c). */
static void batch_cuda(void *buffers[], void *cl_arg)
{
	struct stargemm__batch_item *items;
	struct stargemm__batch_call *calls;
	int64_t *order, ncalls = -ENOMEM;
	struct batch_args x;
	const void **host;
	char msg[192] = "";
	const char *err = "batch of tile products: out of host memory for its calls";

	unpack(cl_arg, &x);
	if (stargemm__fault(STARGEMM_FAULT_KERNEL)) {
		stargemm__task_failed("batch of tile products: injected fault (STARGEMM_FAULT)");
		return;
	}
	if (x.count == 0)
		return;
	items = malloc((size_t)x.count * sizeof(*items));
	calls = malloc((size_t)x.count * sizeof(*calls));
	order = malloc((size_t)x.count * sizeof(*order));
	host = malloc((size_t)(3 * x.count) * sizeof(*host));
	if (items && calls && order && host) {
		for (int64_t e = 0; e < x.count; e++)
			item_of(&x, buffers, e, &items[e]);
		ncalls = stargemm__batch_calls(items, x.count, order, calls);
	}
	if (ncalls >= 0) {
		err = run_calls(&x, items, order, calls, ncalls, host, msg, sizeof(msg));
		host = NULL;   /* run_calls()'s */
	}
	if (err)
		stargemm__task_failed(err);
	free(items);
	free(calls);
	free(order);
	free(host);
}
#endif

void stargemm__batch_cuda_setup(void)
{
#if defined(STARPU_USE_CUDA) && !defined(STARPU_SIMGRID)
	starpu_execute_on_each_worker(keep_address_pool, NULL, STARPU_CUDA);
#endif
}

/* The work of a batch as the model's size: its products' m n k, weighed by the element
 * type (codelets/model.c), so that one regression predicts batches of any content. */
static size_t batch_work(struct starpu_task *task, unsigned nimpl)
{
	struct batch_args x;
	double work = 0.0;

	(void)nimpl;
	unpack(task->cl_arg, &x);
	for (int64_t e = 0; e < x.count; e++) {
		int m, n, k;

		sizes_of(&x, e, &m, &n, &k);
		work += (double)m * (double)n * (double)k;
	}
	return (size_t)(work * x.type->model_weight);
}

/* Duration a * work^b + c (simulated runs: perfmodels/), or the history of the
 * buffers' shapes. */
static struct starpu_perfmodel batch_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_dgemm_batch",
	.size_base = batch_work,
	.footprint = stargemm__model_typed_footprint,
};

struct starpu_codelet stargemm_batch_cl = {
	.name = "dgemm_batch",
	.cpu_funcs = { batch_cpu },
#ifdef HAVE_BATCH_CUDA
	.cuda_funcs = { batch_cuda },
	.cuda_flags = { STARPU_CUDA_ASYNC },
#endif
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.model = &batch_model,
};
