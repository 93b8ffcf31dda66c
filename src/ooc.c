/*
 * ooc.c — the out-of-core executor: Algorithm 3 of Herault et al. 2019 as sequential
 * StarPU-MPI task insertion.
 *
 * Blocks of C (b x c local tiles per rank, i.e. bP x cQ global tiles) are computed one
 * after the other, y (columns) outer and x (rows) inner; inside a block, k runs in
 * chunks of depth d. Chunk n is inserted only once this rank has finished its tasks of
 * chunk n - (ell + 1): submission itself is throttled, because StarPU-MPI posts the
 * receives (and StarPU the prefetches) of a task as soon as it is submitted — inserting
 * everything at once would request every A and B tile at the start, which is exactly
 * the flood the paper describes. A chunk's own A and B tiles are prefetched, in the
 * order its tasks use them, when it is inserted; once its tasks have run (before chunk
 * n + ell + 1 is inserted) they are flushed from the MPI cache and marked "won't use",
 * so received copies and device copies do not outlive the chunk's window. After a
 * block, its C tiles are marked "won't use", which writes them back and frees the
 * device. Each C tile's chain runs on one device: see sched/ooc.c.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

#include "internal.h"

/* StarPU's thread primitives: in SimGrid mode they are simulated ones. */
struct chunk_sync {
	starpu_pthread_mutex_t mutex;
	starpu_pthread_cond_t done;
	int64_t *pending;   /* local tasks of each chunk not yet finished */
};

struct chunk_ref {
	struct chunk_sync *sync;
	int64_t n;
};

/* The ragged K tiles of one C block, held on the devices that use them (pin_block()). */
struct pin_set {
	struct chunk_sync *sync;
	starpu_data_handle_t *handle;
	unsigned *node;
	int64_t count;      /* acquisitions requested */
	int64_t acquired;   /* acquisitions completed (under sync->mutex) */
};

struct executor {
	struct stargemm__gemm gemm;
	struct stargemm_plan plan;
	struct chunk_sync sync;
	struct chunk_ref *refs;
	int64_t nchunks;
	int64_t *rel_rows, *rel_cols;  /* scratch: the block of a chunk being released */
	int64_t pinned_k;              /* ragged K tile held on the devices (pinned_k()), or -1 */
	int64_t tile_bytes;            /* the largest tile's, as planned */
	int64_t held[STARGEMM_MAX_DEVICES]; /* bytes held back on each GPU (hold_unplanned()) */
	struct pin_set *pins;          /* lookahead + 1 slots: block B uses slot B % (ell + 1) */
	int64_t pinned_block;          /* the last block whose ragged K tiles were held, or -1 */
	int live_pins;                 /* blocks whose ragged K tiles are held now */
	int64_t *slot;                 /* block being inserted: device slot of tile (ii, jj) */
	uint64_t *col_devices;         /* ... the devices computing tiles of column jj */
	uint64_t *row_devices;         /* ... and of row ii (bit g: device g) */
	int ndevices;
	int me;
};

void stargemm_ooc_options_init(struct stargemm_ooc_options *opt)
{
	*opt = (struct stargemm_ooc_options){ 0 };
}

/* Memory of one device: the first CUDA worker's node, or main RAM without GPUs. */
static int64_t device_memory(int *devices)
{
	int ncuda = (int)starpu_cuda_worker_get_count();
	unsigned node = STARPU_MAIN_RAM;

	*devices = ncuda > 0 ? ncuda : 1;
	if (ncuda > 0) {
		int worker = starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0);

		node = starpu_worker_get_memory_node((unsigned)worker);
	}
	return (int64_t)starpu_memory_get_total(node);
}

static int make_plan(struct stargemm__gemm *g, const struct stargemm_ooc_options *opt,
		     struct stargemm_plan *plan, int64_t *tile_bytes)
{
	struct stargemm_ooc_options none;
	struct stargemm_plan_request r = { 0 };
	const struct stargemm_matrix *C = g->C;
	int64_t ext, mem;
	int ret;

	if ((ret = stargemm__gemm_check(g)))
		return ret;
	if (!opt) {
		stargemm_ooc_options_init(&none);
		opt = &none;
	}
	/* The largest tile of the three matrices (B's extents are C's and A's). */
	ext = 0;
	for (int t = 0; t < 4; t++) {
		const struct stargemm_matrix *X = t < 2 ? C : g->A;
		int64_t e = t % 2 ? stargemm__largest_tile(X->col_off, X->nt)
				  : stargemm__largest_tile(X->row_off, X->mt);

		ext = e > ext ? e : ext;
	}
	mem = device_memory(&r.devices);
	r.mt = C->mt;
	r.nt = C->nt;
	r.kt = g->kt;
	r.tile_bytes = ext * ext * (int64_t)sizeof(double);
	if (tile_bytes)
		*tile_bytes = r.tile_bytes;
	r.P = C->P;
	r.Q = C->Q;
	if (opt->usable_fraction < 0.0 || opt->usable_fraction > 1.0)
		return stargemm__error(-EINVAL, "stargemm_pdgemm_ooc: usable_fraction must be in "
				       "(0, 1] (0 = 0.9), got %g", opt->usable_fraction);
	r.device_bytes = opt->device_bytes > 0
				 ? opt->device_bytes
				 : (int64_t)((opt->usable_fraction > 0 ? opt->usable_fraction : 0.9) *
					     (double)mem);
	r.b = opt->b;
	r.c = opt->c;
	r.d = opt->d;
	r.lookahead = opt->lookahead;
	r.c_fraction = opt->c_fraction;
	if (r.device_bytes <= 0)
		return stargemm__error(-ENODEV, "stargemm_pdgemm_ooc: StarPU reports no memory "
				       "size for the devices; give device_bytes");
	return stargemm_plan_compute(&r, plan);
}

int stargemm_pdgemm_plan(stargemm_trans transa, stargemm_trans transb,
			 const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			 const struct stargemm_matrix *C,
			 const struct stargemm_ooc_options *opt, struct stargemm_plan *plan)
{
	struct stargemm__gemm g = { transa, transb, 1.0, 0.0, A, B,
				    (struct stargemm_matrix *)C, 0, 0 };

	stargemm__clear_error();
	if (!plan)
		return stargemm__error(-EINVAL, "stargemm_pdgemm_plan: plan is NULL");
	return make_plan(&g, opt, plan, NULL);
}

static void task_done(void *arg)
{
	struct chunk_ref *ref = arg;

	stargemm__sample_memory();
	starpu_pthread_mutex_lock(&ref->sync->mutex);
	if (--ref->sync->pending[ref->n] == 0)
		starpu_pthread_cond_broadcast(&ref->sync->done);
	starpu_pthread_mutex_unlock(&ref->sync->mutex);
}

static void wait_chunk(struct executor *ex, int64_t n)
{
	if (n < 0)
		return;
	starpu_pthread_mutex_lock(&ex->sync.mutex);
	while (ex->sync.pending[n] > 0)
		starpu_pthread_cond_wait(&ex->sync.done, &ex->sync.mutex);
	starpu_pthread_mutex_unlock(&ex->sync.mutex);
}

/* Global tile indices covered by block @p blk of @p size local indices along a grid
 * dimension of @p nproc ranks: local index l of every rank p is global l * nproc + p.
 * Every rank lists every rank's share, so that all insert the same tasks. */
static int64_t block_indices(int64_t blk, int64_t size, int nproc, int64_t total,
			     int64_t *out)
{
	int64_t count = 0;

	for (int64_t l = blk * size; l < (blk + 1) * size; l++)
		for (int p = 0; p < nproc; p++)
			if (l * nproc + p < total)
				out[count++] = l * nproc + p;
	return count;
}

/* One past the last k of chunk z. */
static int64_t chunk_end(const struct executor *ex, int64_t z)
{
	int64_t end = (z + 1) * ex->plan.d;

	return end < ex->gemm.kt ? end : ex->gemm.kt;
}

static int insert_chunk(struct executor *ex, const int64_t *rows, int64_t nrows,
			const int64_t *cols, int64_t ncols, int64_t block, int64_t z, int64_t n)
{
	struct stargemm_matrix *C = ex->gemm.C;
	int64_t d = ex->plan.d, k_end = chunk_end(ex, z);
	int ret;

	for (int64_t k = z * d; k < k_end; k++)
		for (int64_t jj = 0; jj < ncols; jj++)
			for (int64_t ii = 0; ii < nrows; ii++) {
				int local = stargemm_matrix_owner(C, rows[ii], cols[jj]) == ex->me;

				if (local) {
					starpu_pthread_mutex_lock(&ex->sync.mutex);
					ex->sync.pending[n]++;
					starpu_pthread_mutex_unlock(&ex->sync.mutex);
					ret = stargemm__sched_expect(ex->slot[ii * ncols + jj],
								     block);
					if (ret)
						return ret;
				}
				/* Priority -(block + 1): the policy's block tag; earlier blocks
				 * also go first in StarPU-MPI's send queue. */
				ret = stargemm__gemm_insert(&ex->gemm, rows[ii], cols[jj], k,
							    (int)-(block + 1),
							    local ? task_done : NULL,
							    local ? &ex->refs[n] : NULL);
				if (ret)
					return ret;
			}
	return 0;
}

/* Block row x, block column y and chunk z of chunk number @p n (Algorithm 3's order:
 * y outer, x, then z). */
static void chunk_coords(const struct executor *ex, int64_t n, int64_t *x, int64_t *y,
			 int64_t *z)
{
	*z = n % ex->plan.Z;
	*x = n / ex->plan.Z % ex->plan.X;
	*y = n / ex->plan.Z / ex->plan.X;
}

/* Whether chunk @p m's A tiles (@p a) or B tiles (!a) are read again by a chunk in
 * (m, last]: same k range and same block row (A) or block column (B). Happens only
 * when a block has fewer chunks than the lookahead window. */
static int inputs_reused(const struct executor *ex, int64_t m, int64_t last, int a)
{
	int64_t x, y, z;

	chunk_coords(ex, m, &x, &y, &z);
	for (int64_t n = m + 1; n <= last && n < ex->nchunks; n++) {
		int64_t x2, y2, z2;

		chunk_coords(ex, n, &x2, &y2, &z2);
		if (z2 == z && (a ? x2 == x : y2 == y))
			return 1;
	}
	return 0;
}

static void release_tile(starpu_data_handle_t h, MPI_Comm comm)
{
	starpu_mpi_cache_flush(comm, h);
	starpu_data_wont_use(h);
}

/* Let go of chunk @p m's A and B tiles, once this rank's tasks of the chunk are done
 * and before chunk @p last is inserted: drop received copies from the MPI cache and
 * make device copies the first candidates for eviction. Not earlier: a "won't use" on
 * a tile that tasks only read takes effect at once (readers do not wait for readers),
 * and would offer the next chunks' prefetched tiles for eviction before their use.
 * Tiles that a chunk up to @p last reads again are kept. Every rank releases the same
 * tiles at the same point of the insertion sequence, so senders and receivers agree
 * on what is cached. */
static void release_chunk_inputs(struct executor *ex, int64_t m, int64_t last)
{
	const struct stargemm_matrix *C = ex->gemm.C;
	MPI_Comm comm = stargemm__comm();
	int64_t x, y, z, nrows, ncols, k_end;
	int keep_a = inputs_reused(ex, m, last, 1), keep_b = inputs_reused(ex, m, last, 0);

	chunk_coords(ex, m, &x, &y, &z);
	nrows = block_indices(x, ex->plan.b, C->P, C->mt, ex->rel_rows);
	ncols = block_indices(y, ex->plan.c, C->Q, C->nt, ex->rel_cols);
	k_end = chunk_end(ex, z);
	for (int64_t k = z * ex->plan.d; k < k_end; k++) {
		for (int64_t ii = 0; ii < nrows && !keep_a; ii++)
			release_tile(stargemm__gemm_a_tile(&ex->gemm, ex->rel_rows[ii], k), comm);
		for (int64_t jj = 0; jj < ncols && !keep_b; jj++)
			release_tile(stargemm__gemm_b_tile(&ex->gemm, k, ex->rel_cols[jj]), comm);
	}
}

/* Prefetch tile @p h to memory node @p node if this rank owns it: a tile received over
 * MPI cannot be prefetched from the application in StarPU 1.3 (it is not "initialized"
 * until the receive lands); the policy prefetches it when its task becomes ready. */
static void prefetch_own(starpu_data_handle_t h, unsigned node, int me, int prio)
{
	if (starpu_mpi_data_get_rank(h) == me)
		starpu_data_prefetch_on_node_prio(h, node, 1, prio);
}

/* Elements of C tile (i, j): its share of a block's work. */
static int64_t tile_area(const struct stargemm_matrix *C, int64_t i, int64_t j)
{
	return (C->row_off[i + 1] - C->row_off[i]) * (C->col_off[j + 1] - C->col_off[j]);
}

/* Whether local column @p t of a block of @p L local columns is split (the last L mod G). */
static int is_split(int64_t t, int64_t L, int G)
{
	return t >= L / G * G;
}

/* Total area of the block's split tiles on this rank. */
static int64_t split_area(const struct executor *ex, const int64_t *rows, int64_t nrows,
			  const int64_t *cols, int64_t ncols, int64_t L)
{
	struct stargemm_matrix *C = ex->gemm.C;
	int u = ex->me / C->Q, v = ex->me % C->Q;
	int64_t total = 0, t = 0;

	for (int64_t jj = 0; jj < ncols; jj++) {
		if (cols[jj] % C->Q != v)
			continue;
		for (int64_t ii = 0; ii < nrows && is_split(t, L, ex->ndevices); ii++)
			if (rows[ii] % C->P == u)
				total += tile_area(C, rows[ii], cols[jj]);
		t++;
	}
	return total;
}

/* Assign the block's C tiles to this rank's devices: local column t of the block goes
 * to device (its local column index) mod G, the paper's cyclic rule — except the last
 * L mod G local columns (L in the block), whose tiles are dealt out, column by column,
 * in row ranges of equal area over all G devices (stargemm__split_device(); the
 * planner's model deals them by count, which is the same for equal tiles), so that
 * every device gets the same work. With whole columns, 69 columns on 6 GPUs gave three
 * GPUs 12 and three 11: the others waited for them (simulated N = 70,000: 17.71 s of
 * GEMMs on the first, 16.38 s on the others); dealt by count, the two GPUs that got the
 * narrow last column finished 0.56 s early. The price: the B tiles of a split column
 * are loaded by each of its devices. The policy finds a tile's device from the C
 * handle's user data (a device slot: slot mod G); split tiles get slot = device until
 * the GEMM ends (restore_slots()). */
static void assign_devices(struct executor *ex, const int64_t *rows, int64_t nrows,
			   const int64_t *cols, int64_t ncols)
{
	struct stargemm_matrix *C = ex->gemm.C;
	int u = ex->me / C->Q, v = ex->me % C->Q, G = ex->ndevices;
	int64_t L = 0, t = 0, before = 0, total;

	for (int64_t jj = 0; jj < ncols; jj++)
		L += cols[jj] % C->Q == v;
	for (int64_t ii = 0; ii < nrows; ii++)
		ex->row_devices[ii] = 0;
	total = split_area(ex, rows, nrows, cols, ncols, L);
	for (int64_t jj = 0; jj < ncols; jj++) {
		int local = cols[jj] % C->Q == v, split = local && is_split(t, L, G);

		ex->col_devices[jj] = 0;
		for (int64_t ii = 0; ii < nrows; ii++) {
			int64_t *slot = &ex->slot[ii * ncols + jj];
			uint64_t bit;

			*slot = cols[jj] / C->Q;
			if (!local || rows[ii] % C->P != u)
				continue;
			if (split) {
				*slot = stargemm__split_device(before, total, G);
				before += tile_area(C, rows[ii], cols[jj]);
				starpu_data_set_user_data(stargemm__tile(C, rows[ii], cols[jj]),
							  (void *)(uintptr_t)(*slot + 1));
			}
			bit = UINT64_C(1) << (*slot % G);
			ex->col_devices[jj] |= bit;
			ex->row_devices[ii] |= bit;
		}
		t += local;
	}
}

/* Give the tiles assign_devices() dealt out their column's slot back (matrix.c's). */
static void restore_slots(struct executor *ex)
{
	struct stargemm_matrix *C = ex->gemm.C;

	for (int64_t i = 0; i < C->mt; i++)
		for (int64_t j = 0; j < C->nt; j++)
			if (stargemm_matrix_owner(C, i, j) == ex->me)
				starpu_data_set_user_data(stargemm__tile(C, i, j),
							  (void *)(uintptr_t)(j / C->Q + 1));
}

/* The memory nodes of the devices in @p mask, each once; returns their number. */
static int mask_nodes(uint64_t mask, int ndevices, unsigned *nodes)
{
	int nnodes = 0;

	for (int g = 0; g < ndevices && g < 64; g++)
		if (mask & (UINT64_C(1) << g))
			nodes[nnodes++] = stargemm__device_node(g);
	return nnodes;
}

/* The K tile whose A and B tiles the executor holds on the devices (pin_block())
 * instead of prefetching them: the last one, when it is smaller than all the others,
 * which are equal (a regular tiling with a ragged end); otherwise -1. Why: StarPU 1.3,
 * allocating a buffer on a full device, first reuses one of the same shape that no task
 * holds at that instant. The ragged K tiles are the only ones of their shape, read in
 * turn by every task of the step, so they took each other's buffers and were loaded
 * again almost once per task: in simulation, N = 70,000 loaded 8-13% more tiles than
 * the model (24,576 x 24,576 x 24,944 on six 4000 MiB GPUs: 1.090; held: 1.000). */
static int64_t pinned_k(const struct executor *ex)
{
	int64_t kt = ex->gemm.kt, full = stargemm__gemm_k_extent(&ex->gemm, 0);

	if (kt < 2 || stargemm__gemm_k_extent(&ex->gemm, kt - 1) >= full)
		return -1;
	for (int64_t k = 1; k < kt - 1; k++)
		if (stargemm__gemm_k_extent(&ex->gemm, k) != full)
			return -1;
	return kt - 1;
}

static void pin_acquired(void *arg)
{
	struct pin_set *s = arg;

	starpu_pthread_mutex_lock(&s->sync->mutex);
	s->acquired++;
	starpu_pthread_cond_broadcast(&s->sync->done);
	starpu_pthread_mutex_unlock(&s->sync->mutex);
}

static int pin(struct pin_set *s, starpu_data_handle_t h, unsigned node, int me)
{
	int ret;

	if (starpu_mpi_data_get_rank(h) != me)
		return 0;  /* received: StarPU 1.3 refuses to acquire it before it lands */

	s->handle[s->count] = h;
	s->node[s->count] = node;
	ret = starpu_data_acquire_on_node_cb(h, (int)node, STARPU_R, pin_acquired, s);
	if (ret)
		return stargemm__error(ret, "stargemm_pdgemm_ooc: cannot hold a ragged K tile on "
				       "memory node %u (starpu_data_acquire_on_node_cb: %d)", node, ret);
	s->count++;
	return 0;
}

/* Hold block @p blk's ragged K tiles (pinned_k()) on the devices whose tasks read them,
 * until the block's last chunk is released (unpin_done()). A held tile cannot be
 * evicted, so a new one's buffer comes from the "won't use" tiles of released chunks
 * instead of another ragged tile still to be read. Only this rank's own tiles: a tile
 * received over MPI cannot be acquired before it lands (StarPU 1.3).
 * When: as soon as no other block's ragged tiles are held — the first block's at the
 * start of the call, each next block's right after the previous block's are let go —
 * and at the latest when the block's last chunk is inserted (blocks of fewer chunks
 * than the lookahead window). Why so early: on a full device, StarPU makes room for a
 * buffer of a new shape by freeing others (simulated cudaFree 750 us, cudaMalloc 175
 * us, both on the GPU worker's thread, which then feeds the GPU no task). Held when
 * their chunk was inserted, the ragged tiles of every block needed such frees: one
 * simulated V100, N = 35,184, 3855 MiB, 4 blocks, the GPU waited 5-17 ms per block.
 * Held early, the first block's are allocated while the device is still empty, and
 * each next block's take over the buffers of the previous block's, just marked "won't
 * use" (same shapes): 12.1383 -> 12.1316 s there; six V100s, 24576^2 x 24944, 4000
 * MiB, one block (c1): 1.0045 -> 0.9471 s (second repetition unchanged, 0.716 s). */
static int pin_block(struct executor *ex, const int64_t *rows, int64_t nrows,
		     const int64_t *cols, int64_t ncols, int64_t blk)
{
	struct pin_set *s = &ex->pins[blk % (ex->plan.lookahead + 1)];
	int ret = 0;
	unsigned nodes[STARPU_MAXNODES];

	ex->pinned_block = blk;
	ex->live_pins++;
	for (int64_t ii = 0; ii < nrows && !ret; ii++) {
		int nrow = mask_nodes(ex->row_devices[ii], ex->ndevices, nodes);

		for (int g = 0; g < nrow && !ret; g++)
			ret = pin(s, stargemm__gemm_a_tile(&ex->gemm, rows[ii], ex->pinned_k),
				  nodes[g], ex->me);
	}
	for (int64_t jj = 0; jj < ncols && !ret; jj++) {
		int ncol = mask_nodes(ex->col_devices[jj], ex->ndevices, nodes);

		for (int g = 0; g < ncol && !ret; g++)
			ret = pin(s, stargemm__gemm_b_tile(&ex->gemm, ex->pinned_k, cols[jj]),
				  nodes[g], ex->me);
	}
	return ret;
}

/* Whether block @p blk, whose chunk @p z is about to be inserted, holds its ragged K
 * tiles now (pin_block()). */
static int pins_now(const struct executor *ex, int64_t blk, int64_t z)
{
	return ex->pinned_k >= 0 && ex->pinned_block < blk &&
	       (ex->live_pins == 0 || z == ex->plan.Z - 1);
}

/* Let go of the tiles pin_block() holds in slot @p slot, once their acquisitions are
 * complete (a release must follow its acquisition). */
static void unpin(struct executor *ex, int64_t slot)
{
	struct pin_set *s = &ex->pins[slot];

	starpu_pthread_mutex_lock(&ex->sync.mutex);
	while (s->acquired < s->count)
		starpu_pthread_cond_wait(&ex->sync.done, &ex->sync.mutex);
	starpu_pthread_mutex_unlock(&ex->sync.mutex);
	for (int64_t p = 0; p < s->count; p++)
		starpu_data_release_on_node(s->handle[p], (int)s->node[p]);
	s->count = s->acquired = 0;
}

/* Chunk @p m is done: if it was its block's last one, which reads the ragged K tile,
 * let go of the block's ragged tiles. */
static void unpin_done(struct executor *ex, int64_t m)
{
	int64_t x, y, z;

	if (ex->pinned_k < 0)
		return;
	chunk_coords(ex, m, &x, &y, &z);
	if (z != ex->plan.Z - 1)
		return;
	unpin(ex, (y * ex->plan.X + x) % (ex->plan.lookahead + 1));
	ex->live_pins--;
}

/* Priority of the prefetch of step @p kk of chunk @p n: decreasing along the sequence,
 * so that StarPU's request queue serves them in the order the tasks use them; below
 * the ready tasks' own prefetches (sched/ooc.c, priority 1). */
static int prefetch_priority(const struct executor *ex, int64_t n, int64_t kk)
{
	int64_t seq = n * ex->plan.d + kk;

	return seq < INT_MAX / 2 ? -(int)seq : -(INT_MAX / 2);
}

/* Prefetch a released chunk's A and B tiles in the order its tasks use them (k outer),
 * so that the copy engine never serves a tile needed later before one needed now. */
static void prefetch_chunk_inputs(struct executor *ex, const int64_t *rows, int64_t nrows,
				  const int64_t *cols, int64_t ncols, int64_t z, int64_t n)
{
	int64_t d = ex->plan.d, k_end = chunk_end(ex, z);
	unsigned nodes[STARPU_MAXNODES];

	for (int64_t k = z * d; k < k_end; k++) {
		if (k == ex->pinned_k)
			continue;
		for (int64_t jj = 0; jj < ncols; jj++) {
			int nb = mask_nodes(ex->col_devices[jj], ex->ndevices, nodes);

			for (int g = 0; g < nb; g++)
				prefetch_own(stargemm__gemm_b_tile(&ex->gemm, k, cols[jj]), nodes[g],
					     ex->me, prefetch_priority(ex, n, k - z * d));
		}
		/* An A tile is needed by every device with tiles in its row: prefetch it to
		 * one of them (rotating), and let the others fetch it shortly before their
		 * task runs (sched/ooc.c, prefetch_deferred()) — by then a device holds it,
		 * and StarPU copies it GPU -> GPU when that link is the faster one (the
		 * paper's device-to-device fetch, §4.1). */
		for (int64_t ii = 0; ii < nrows; ii++) {
			int na = mask_nodes(ex->row_devices[ii], ex->ndevices, nodes);

			if (na > 0)
				prefetch_own(stargemm__gemm_a_tile(&ex->gemm, rows[ii], k),
					     nodes[(rows[ii] / ex->gemm.C->P + k) % na], ex->me,
					     prefetch_priority(ex, n, k - z * d));
		}
	}
}

/* Whether the GEMMs of C tile (i, j) in the first chunk read only tiles of this rank. */
static int reads_own_tiles(const struct executor *ex, int64_t i, int64_t j, int64_t k_end)
{
	for (int64_t k = 0; k < k_end; k++)
		if (starpu_mpi_data_get_rank(stargemm__gemm_a_tile(&ex->gemm, i, k)) != ex->me ||
		    starpu_mpi_data_get_rank(stargemm__gemm_b_tile(&ex->gemm, k, j)) != ex->me)
			return 0;
	return 1;
}

/* Whether the run's first chunk is prefetched by prefetch_first_chunk(): on a rank with
 * one GPU. With several, a row's A tiles are shared by the devices, and the policy's
 * peer rule orders them better (2 and 3 simulated GPUs, one chunk: 7% slower with
 * this order). */
static int orders_first_chunk(const struct executor *ex)
{
	return ex->ndevices == 1 && stargemm__device_node(0) != STARPU_MAIN_RAM;
}

/* Next priority of prefetch_first_chunk()'s sequence: decreasing, above every other
 * prefetch (the policy's own stay at or below INT_MAX / 2). */
static int first_priority(int *prio)
{
	return *prio > INT_MAX / 2 + 1 ? (*prio)-- : *prio;
}

/* The run's first chunk starts with nothing on the GPU, and copies, not GEMMs, are then
 * the bottleneck: every C tile of the block comes in with the chunk's A and B. Its tiles
 * are prefetched here, before its tasks exist (a C tile cannot be prefetched once a
 * task holds it), in the order the GPU can use them: C tile by C tile, column by
 * column, each with the chunk's A tiles of its row and B tiles of its column the first
 * time they are needed, so that a C tile that has arrived lets its d updates run (the
 * policy takes a GEMM whose inputs are all there before one still waiting,
 * sched/ooc.c). Left to the lookahead's order (k = 0's tiles and every C tile, then
 * k = 1's), the GPU waited for the later k steps' A tiles after the C tiles: simulated
 * H100, N = 65,536, 16 GiB: 10.011 s -> 9.958 s. Priorities decrease along the
 * sequence, above every other prefetch. A C tile is prefetched only if its GEMMs read no tile received over MPI: a prefetch
 * holds its tile until it lands, and the GEMM — whose readiness is what prefetches its
 * received inputs — would wait for it (2 simulated nodes: 11% slower). @p seen:
 * scratch, nrows + ncols bytes. */
static void prefetch_first_chunk(struct executor *ex, const int64_t *rows, int64_t nrows,
				 const int64_t *cols, int64_t ncols, char *seen)
{
	struct stargemm_matrix *C = ex->gemm.C;
	int64_t k_end = chunk_end(ex, 0);
	unsigned node = stargemm__device_node(0);
	int prio = INT_MAX - 1;

	for (int64_t jj = 0; jj < ncols; jj++)
		for (int64_t ii = 0; ii < nrows; ii++) {
			if (stargemm_matrix_owner(C, rows[ii], cols[jj]) != ex->me)
				continue;
			/* beta = 0: the first update only writes C */
			if (ex->gemm.beta != 0.0 && reads_own_tiles(ex, rows[ii], cols[jj], k_end))
				prefetch_own(stargemm__tile(C, rows[ii], cols[jj]), node, ex->me,
					     first_priority(&prio));
			for (int64_t k = 0; k < k_end; k++) {
				if (k == ex->pinned_k)
					continue;
				if (!seen[nrows + jj])
					prefetch_own(stargemm__gemm_b_tile(&ex->gemm, k, cols[jj]), node,
						     ex->me, first_priority(&prio));
				if (!seen[ii])
					prefetch_own(stargemm__gemm_a_tile(&ex->gemm, rows[ii], k), node,
						     ex->me, first_priority(&prio));
			}
			seen[ii] = seen[nrows + jj] = 1;
		}
}

static int first_chunk_prefetch(struct executor *ex, const int64_t *rows, int64_t nrows,
				const int64_t *cols, int64_t ncols)
{
	char *seen = calloc((size_t)(nrows + ncols), 1);

	if (!seen)
		return stargemm__error(-ENOMEM, "stargemm_pdgemm_ooc: out of memory");
	prefetch_first_chunk(ex, rows, nrows, cols, ncols, seen);
	free(seen);
	return 0;
}

/* A finished block's C tiles go back to host memory and leave the devices. */
static void release_block(struct executor *ex, const int64_t *rows, int64_t nrows,
			  const int64_t *cols, int64_t ncols)
{
	for (int64_t jj = 0; jj < ncols; jj++)
		for (int64_t ii = 0; ii < nrows; ii++)
			if (stargemm_matrix_owner(ex->gemm.C, rows[ii], cols[jj]) == ex->me)
				starpu_data_wont_use(stargemm__tile(ex->gemm.C, rows[ii], cols[jj]));
}

/* Algorithm 3: blocks y outer, x inner, chunks z; chunk n waits for n - (ell + 1),
 * whose inputs are then let go. */
static int run_blocks(struct executor *ex, int64_t *rows, int64_t *cols)
{
	const struct stargemm_plan *pl = &ex->plan;
	struct stargemm_matrix *C = ex->gemm.C;
	int64_t n = 0;
	int ret;

	for (int64_t y = 0; y < pl->Y; y++) {
		int64_t ncols = block_indices(y, pl->c, C->Q, C->nt, cols);

		for (int64_t x = 0; x < pl->X; x++) {
			int64_t nrows = block_indices(x, pl->b, C->P, C->mt, rows);
			int64_t blk = y * pl->X + x;

			assign_devices(ex, rows, nrows, cols, ncols);

			for (int64_t z = 0; z < pl->Z; z++, n++) {
				int64_t done = n - (pl->lookahead + 1);

				if (done >= 0) {
					wait_chunk(ex, done);
					unpin_done(ex, done);
					release_chunk_inputs(ex, done, n);
				}
				if (pins_now(ex, blk, z) &&
				    (ret = pin_block(ex, rows, nrows, cols, ncols, blk)))
					return ret;
				if (n == 0 && orders_first_chunk(ex) &&
				    (ret = first_chunk_prefetch(ex, rows, nrows, cols, ncols)))
					return ret;
				if ((ret = insert_chunk(ex, rows, nrows, cols, ncols, y * pl->X + x, z,
							n)))
					return ret;
				if (n > 0 || !orders_first_chunk(ex))
					prefetch_chunk_inputs(ex, rows, nrows, cols, ncols, z, n);
			}
			release_block(ex, rows, nrows, cols, ncols);
		}
	}
	/* The last chunks' inputs: nothing follows them. */
	for (int64_t m = n - (pl->lookahead + 1) > 0 ? n - (pl->lookahead + 1) : 0; m < n; m++) {
		wait_chunk(ex, m);
		unpin_done(ex, m);
		release_chunk_inputs(ex, m, m);
	}
	return 0;
}

/* Room for the tiles pin_block() may hold per block: a block's rows on each device of
 * the rank, and its columns. */
static int alloc_pins(struct executor *ex)
{
	int64_t devices = ex->ndevices;
	int64_t cap = (ex->plan.b * ex->gemm.C->P + ex->plan.c * ex->gemm.C->Q) * devices;

	for (int64_t s = 0; s <= ex->plan.lookahead; s++) {
		ex->pins[s].sync = &ex->sync;
		ex->pins[s].handle = malloc((size_t)cap * sizeof(*ex->pins[s].handle));
		ex->pins[s].node = malloc((size_t)cap * sizeof(*ex->pins[s].node));
		if (!ex->pins[s].handle || !ex->pins[s].node)
			return -ENOMEM;
	}
	return 0;
}

static void free_pins(struct executor *ex)
{
	for (int64_t s = 0; ex->pins && s <= ex->plan.lookahead; s++) {
		free(ex->pins[s].handle);
		free(ex->pins[s].node);
	}
	free(ex->pins);
}

static int setup(struct executor *ex, int64_t **rows, int64_t **cols)
{
	int ncuda;

	ex->nchunks = ex->plan.X * ex->plan.Y * ex->plan.Z;
	ex->me = stargemm_rank();
	ex->pinned_block = -1;
	ncuda = (int)starpu_cuda_worker_get_count();
	ex->ndevices = ncuda > 0 ? ncuda : 1;
	if (ex->ndevices > 64)
		return stargemm__error(-EINVAL, "stargemm_pdgemm_ooc: at most 64 GPUs per rank, "
				       "StarPU has %d", ex->ndevices);
	/* With GPUs, the GEMMs run on them only, whatever the policy: a C tile's chain of
	 * updates stays on its device, and a GEMM on a CPU worker would take the tile off it
	 * (stargemm-ooc never gives one to a CPU worker; dmdas did, on one simulated GPU:
	 * 0.3% of the GEMMs, with 25% more C tiles written back). */
	if (ncuda > 0)
		ex->gemm.where = STARPU_CUDA;
	ex->sync.pending = calloc((size_t)ex->nchunks, sizeof(*ex->sync.pending));
	ex->refs = calloc((size_t)ex->nchunks, sizeof(*ex->refs));
	*rows = malloc((size_t)(ex->plan.b * ex->gemm.C->P) * sizeof(**rows));
	*cols = malloc((size_t)(ex->plan.c * ex->gemm.C->Q) * sizeof(**cols));
	ex->rel_rows = malloc((size_t)(ex->plan.b * ex->gemm.C->P) * sizeof(*ex->rel_rows));
	ex->rel_cols = malloc((size_t)(ex->plan.c * ex->gemm.C->Q) * sizeof(*ex->rel_cols));
	ex->pins = calloc((size_t)ex->plan.lookahead + 1, sizeof(*ex->pins));
	ex->slot = malloc((size_t)(ex->plan.b * ex->gemm.C->P * ex->plan.c * ex->gemm.C->Q) *
			  sizeof(*ex->slot));
	ex->col_devices = malloc((size_t)(ex->plan.c * ex->gemm.C->Q) * sizeof(*ex->col_devices));
	ex->row_devices = malloc((size_t)(ex->plan.b * ex->gemm.C->P) * sizeof(*ex->row_devices));
	if (!ex->sync.pending || !ex->refs || !*rows || !*cols || !ex->rel_rows || !ex->rel_cols ||
	    !ex->pins || !ex->slot || !ex->col_devices ||
	    !ex->row_devices || alloc_pins(ex))
		return stargemm__error(-ENOMEM, "stargemm_pdgemm_ooc: out of memory for %" PRId64
				       " chunks", ex->nchunks);
	starpu_pthread_mutex_init(&ex->sync.mutex, NULL);
	starpu_pthread_cond_init(&ex->sync.done, NULL);
	for (int64_t n = 0; n < ex->nchunks; n++)
		ex->refs[n] = (struct chunk_ref){ &ex->sync, n };
	return 0;
}

/* When C stays resident (one C block per rank: cases (a) and (c1)), hold back from
 * StarPU's allocator, for the call, the part of each GPU's memory that the plan does
 * not use. StarPU allocates a new buffer for every tile it copies until the device is
 * full, and only then reuses the buffers of released tiles: without this, it allocates
 * the whole device whatever the plan. What is left to it: the plan's tiles plus the
 * slack the planner kept for the runtime (the memory beyond its budget, at least 10%).
 * Allocations cost: StarPU's simulated cudaMalloc takes 175 us under one lock for all
 * GPUs (a real cudaMalloc synchronizes too). Six simulated V100s, 24576^2 x 24944, 4000
 * MiB each, plan 376 of 500 tiles: first repetition 1.0463 -> 1.0045 s (dmdas with the
 * same executor 1.0294 -> 1.0253 s), second unchanged. Not when C blocks change: the
 * next block's C tiles are prefetched into the free memory while the current block
 * ends (sched/ooc.c), and the 4 GiB H100 case of tests/sim_ooc.sh lost 0.35%. */
static void hold_unplanned(struct executor *ex)
{
	int64_t budget = ex->plan.capacity * ex->tile_bytes;

	if (ex->plan.X * ex->plan.Y > 1 || stargemm__device_node(0) == STARPU_MAIN_RAM)
		return;
	for (int g = 0; g < ex->ndevices && g < STARGEMM_MAX_DEVICES; g++) {
		unsigned node = stargemm__device_node(g);
		int64_t total = (int64_t)starpu_memory_get_total(node);
		int64_t slack = total - budget > total / 10 ? total - budget : total / 10;
		int64_t hold = total - ex->plan.tiles_needed * ex->tile_bytes - slack;

		ex->held[g] = hold > 0 ? hold : 0;
		if (ex->held[g] > 0)
			starpu_memory_allocate(node, (size_t)ex->held[g], STARPU_MEMORY_OVERFLOW);
	}
}

static void release_unplanned(struct executor *ex)
{
	for (int g = 0; g < ex->ndevices && g < STARGEMM_MAX_DEVICES; g++) {
		if (ex->held[g] > 0)
			starpu_memory_deallocate(stargemm__device_node(g), (size_t)ex->held[g]);
		ex->held[g] = 0;
	}
}

int stargemm_pdgemm_ooc(stargemm_trans transa, stargemm_trans transb, double alpha,
			const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			double beta, struct stargemm_matrix *C,
			const struct stargemm_ooc_options *opt, struct stargemm_plan *plan)
{
	struct executor ex = { .gemm = { transa, transb, alpha, beta, A, B, C, 0, 0 } };
	int64_t *rows = NULL, *cols = NULL;
	int ret;

	stargemm__clear_error();
	if ((ret = make_plan(&ex.gemm, opt, &ex.plan, &ex.tile_bytes)))
		return ret;
	if (plan)
		*plan = ex.plan;
	if ((ret = setup(&ex, &rows, &cols)) == 0) {
		ex.pinned_k = pinned_k(&ex);
		stargemm__sched_skip_prefetch_k(ex.pinned_k >= 0
						    ? stargemm__gemm_k_extent(&ex.gemm, ex.pinned_k)
						    : 0);
		hold_unplanned(&ex);
		ret = run_blocks(&ex, rows, cols);
		/* Whatever was submitted must finish before the counters go away; on error,
		 * without clearing the message that says what failed. */
		if (ret) {
			starpu_mpi_wait_for_all(stargemm__comm());
			for (int64_t m = 0; m <= ex.plan.lookahead; m++)
				unpin(&ex, m);
		} else {
			ret = stargemm_wait();
		}
		release_unplanned(&ex);
		restore_slots(&ex);
		stargemm__sched_skip_prefetch_k(0);
		starpu_pthread_mutex_destroy(&ex.sync.mutex);
		starpu_pthread_cond_destroy(&ex.sync.done);
	}
	free(ex.sync.pending);
	free(ex.refs);
	free(ex.rel_rows);
	free(ex.rel_cols);
	free_pins(&ex);
	free(ex.slot);
	free(ex.col_devices);
	free(ex.row_devices);
	free(rows);
	free(cols);
	return ret;
}
