/*
 * execute.c — the one executor: walks a work list (src/worklist.h) and turns it into
 * StarPU-MPI task insertion, whatever the product (in core or out of core, dense or
 * block-sparse operands).
 *
 * Throttling. Chunk n is inserted only once this rank's tasks of chunk
 * n - (lookahead + 1) are done: StarPU-MPI posts the receives (and StarPU the
 * prefetches) of a task as soon as it is submitted, so inserting everything at once
 * would request every input at the start — the flood of Herault et al. 2019 §2. At
 * that point the finished chunk's inputs that the list does not keep are let go:
 * flushed from the MPI cache and marked "won't use", so received and device copies do
 * not outlive the chunk's window. Not earlier: a "won't use" on a tile that tasks only
 * read takes effect at once, and would offer the next chunks' prefetched tiles for
 * eviction before their use. Every rank releases the same tiles at the same point of
 * the insertion sequence, so senders and receivers agree on what is cached.
 *
 * Prefetches: as listed, before or after the chunk's tasks are inserted. On lists
 * whose loads are fetches (one GPU, tiles of several shapes) the op(A) and op(B) loads
 * go through a meter (src/loads.h) that asks StarPU for a few at a time, in the list's
 * order. A tile that this rank receives over MPI, listed as received (only with
 * STARGEMM_PREFETCH_RECEIVED, src/inspect.c), is prefetched once its receive has
 * landed: StarPU 1.3 refuses a prefetch of a tile not yet written (it asserts) and has
 * no hook on the receives that StarPU-MPI posts for a task. So after the chunk's tasks are inserted — their insertion posted the
 * receives — the executor acquires each received tile in read mode (on no memory
 * node: nothing is copied for it), in StarPU's sequential order: the acquisition
 * comes after the receive, and its callback (land()) prefetches the tile to its
 * device with the listed priority and lets go of it. The tile thus reaches its GPU
 * within the lookahead, as this rank's own do, rather than when its GEMM becomes
 * ready (after the C tile's previous update).
 * Holds: a block's listed tiles are acquired on their devices (hold_block()) as soon
 * as no other block's are held, or at the latest when its last chunk is inserted, and
 * let go once that chunk is done. After a block's last chunk is
 * inserted, its C tiles are marked "won't use": written back, they leave the devices.
 *
 * Generated tiles (src/generate.c): the insertion of a task that reads one makes it
 * first on this rank (src/insert.c), and release_inputs() lets it go where it would
 * flush a stored tile, so that it is made once per run of chunks that read it. It is
 * neither held nor prefetched: StarPU 1.3's starpu_data_invalidate_submit() marks the
 * handle unwritten as soon as it is submitted, so a prefetch made from a landing
 * acquisition (as for received tiles) asserts when the release has been submitted
 * meanwhile, and a hold acquired before the chunk that makes it would read it before
 * it is written. On a GPU it arrives when its first GEMM becomes ready.
 *
 * Devices: device g is the g-th CUDA worker's memory node, or the host RAM without
 * GPUs (src/contract.h). With GPUs, the throttled executor's GEMMs are inserted for
 * CUDA workers only, whatever the policy: a C tile's chain of updates stays on its
 * device (dmdas otherwise ran some GEMMs on a CPU worker and wrote back more C tiles:
 * doc/out-of-core.md, "With GPUs, GEMMs run on the GPUs only").
 *
 * Progress: when rank 0 prints the progress line (src/progress.c), each of its tasks
 * carries a callback that counts it; otherwise the in-core tasks carry none.
 *
 * Failures. Everything the walk allocates is allocated before the product's agreement
 * (stargemm__executor_new()), so what can still fail is a task's insertion (StarPU, the
 * policy, or STARGEMM_FAULT) and a kernel. A rank whose insertion fails records it
 * (stargemm__task_failed()) and inserts its remaining tasks as no-ops with the same
 * tiles (codelets/noop.c), so that StarPU-MPI still sends and receives what the other
 * ranks' tasks expect. Out of core, the ranks agree every few chunks whether any of
 * them has recorded a failure (insertion or kernel; abandoned()); if so, every rank
 * stops inserting at that same chunk — the prefix inserted is the same sequence on
 * every rank, so no message is left unmatched. The call ends after its inserted tasks
 * with the failure reported on every rank by stargemm_wait(). A no-op that cannot be
 * inserted either would leave the other ranks waiting: the job is then aborted with
 * the message.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "loads.h"
#include "worklist.h"

/* StarPU's thread primitives: in SimGrid mode they are simulated ones. */
struct sync {
	starpu_pthread_mutex_t mutex;
	starpu_pthread_cond_t done;
	int64_t *pending;   /* this rank's tasks of each chunk not yet finished */
	int64_t landing;    /* received tiles acquired, not yet prefetched (land()) */
	int progress;       /* the tasks count for the progress line */
};

/* A received tile to prefetch once it has landed (land_received()). */
struct landing {
	struct sync *sync;
	starpu_data_handle_t handle;
	unsigned node;
	int priority;
};

struct chunk_ref {
	struct sync *sync;
	int64_t n;
};

/* The held tiles of one block (hold_block()). */
struct hold_set {
	struct sync *sync;
	int64_t count;      /* acquisitions requested */
	int64_t acquired;   /* acquisitions completed (under sync->mutex) */
	int64_t first, end; /* the block's refs acquired: [first, end), generated ones
			       excepted */
};

struct stargemm__executor {
	struct stargemm__gemm *gemm;
	const struct stargemm__worklist *wl;
	struct starpu_data_descr *descr; /* a batch's buffers (room for the largest) */
	struct sync sync;
	struct chunk_ref *refs;
	struct hold_set *holds;        /* lookahead + 1 slots: block B uses slot B % (ell + 1) */
	int64_t held_block;            /* the last block whose tiles were held, or -1 */
	int live_holds;                /* blocks whose tiles are held now */
	int64_t held[STARGEMM_MAX_DEVICES]; /* bytes kept from StarPU on each GPU */
	int progress;                  /* this rank's tasks count for the progress line */
	struct stargemm__sum *failures; /* the failure agreement in flight (run()) */
	int64_t agree_every;           /* chunks between two failure agreements */
	struct stargemm__loads *loads; /* the chunks' loads, metered (src/loads.h), or NULL */
};

/* The StarPU handle a tile reference names. */
static starpu_data_handle_t ref_handle(const struct stargemm__executor *ex,
				       const struct stargemm__tile_ref *t)
{
	return stargemm__ref_handle(ex->gemm, t->operand, t->r, t->c);
}

/* The generated matrix (src/generate.c) whose tile a reference names, or NULL. */
static const struct stargemm_matrix *generated(const struct stargemm__executor *ex,
					       const struct stargemm__tile_ref *t, int *trans)
{
	const struct stargemm__gemm *g = ex->gemm;

	*trans = stargemm__is_trans(t->operand == STARGEMM_OP_A ? g->ta : g->tb);
	if (t->operand == STARGEMM_OP_A && g->A->gen)
		return g->A;
	return t->operand == STARGEMM_OP_B && g->B->gen ? g->B : NULL;
}

/* Whether a reference names a generated tile. */
static int is_generated(const struct stargemm__executor *ex, const struct stargemm__tile_ref *t)
{
	int trans;

	return generated(ex, t, &trans) != NULL;
}

static void task_done(void *arg)
{
	struct chunk_ref *ref = arg;

	stargemm__sample_memory();
	if (ref->sync->progress)
		stargemm__progress_task_done(NULL);
	starpu_pthread_mutex_lock(&ref->sync->mutex);
	if (--ref->sync->pending[ref->n] == 0)
		starpu_pthread_cond_broadcast(&ref->sync->done);
	starpu_pthread_mutex_unlock(&ref->sync->mutex);
}

static void wait_chunk(struct stargemm__executor *ex, int64_t n)
{
	starpu_pthread_mutex_lock(&ex->sync.mutex);
	while (ex->sync.pending[n] > 0)
		starpu_pthread_cond_wait(&ex->sync.done, &ex->sync.mutex);
	starpu_pthread_mutex_unlock(&ex->sync.mutex);
}

/* Priority of a chunk's tasks: earlier blocks first in StarPU-MPI's send queue. */
static int task_priority(int64_t block)
{
	return block >= 0 ? (int)-(block + 1) : 0;
}

/* Whether batch @p b runs on this rank (its products write this rank's C tiles). */
static int local_batch(const struct stargemm__worklist *wl, int64_t b)
{
	return wl->products[wl->batches[b].first].info.device >= 0;
}

/* The callback of a task: the chunk counter (throttled), the progress line (in core,
 * when counted), or none. */
typedef void (*callback_fn)(void *);

static callback_fn task_callback(const struct stargemm__executor *ex, int local)
{
	if (!local)
		return NULL;
	if (ex->wl->throttled)
		return task_done;
	return ex->progress ? stargemm__progress_task_done : NULL;
}

/* Insert chunk @p n's product @p p, or its batch @p b (b >= 0; p its first product);
 * a local task of a throttled list is counted in the chunk and announced to the
 * policy, unless the rest is skipped. */
static int insert_task(struct stargemm__executor *ex, int64_t n, int64_t p, int64_t b)
{
	struct stargemm__product *x = &ex->wl->products[p];
	int local = x->info.device >= 0, prio = task_priority(ex->wl->chunks[n].block);
	int counted = local && ex->wl->throttled && !ex->gemm->skip;
	callback_fn cb = ex->gemm->skip ? NULL : task_callback(ex, local);
	void *arg = counted ? &ex->refs[n] : NULL;
	int ret;

	if (counted) {
		starpu_pthread_mutex_lock(&ex->sync.mutex);
		ex->sync.pending[n]++;
		starpu_pthread_mutex_unlock(&ex->sync.mutex);
		if ((ret = stargemm__sched_expect(x->info.device, x->info.block)))
			goto uncount;
	}
	ret = b >= 0 ? stargemm__batch_insert(ex->gemm, ex->wl, b, ex->descr, prio, cb, arg)
		     : stargemm__gemm_insert(ex->gemm, x->i, x->j, x->k, x->first, prio,
					     &x->info, cb, arg);
	if (!ret || !counted)
		return ret;
	stargemm__sched_forget(x->info.device, x->info.block);
uncount:
	starpu_pthread_mutex_lock(&ex->sync.mutex);
	ex->sync.pending[n]--;
	starpu_pthread_mutex_unlock(&ex->sync.mutex);
	return ret;
}

/* The chunk's batches (small tiles), or its products. */
static void insert_chunk(struct stargemm__executor *ex, int64_t n)
{
	const struct stargemm__worklist *wl = ex->wl;
	const struct stargemm__chunk *ch = &wl->chunks[n];

	if (wl->nbatches > 0) {
		for (int64_t b = ch->batch_first; b < ch->batch_first + ch->batch_count; b++)
			while (insert_task(ex, n, wl->batches[b].first, b) &&
			       stargemm__insertion_failed(ex->gemm))
				;
		return;
	}
	for (int64_t p = ch->first; p < ch->first + ch->count; p++)
		while (insert_task(ex, n, p, -1) && stargemm__insertion_failed(ex->gemm))
			;
}

/* Chunk @p n's loads of this rank's own tiles: prefetches with the listed priorities;
 * or, on lists whose loads are fetches (stargemm__worklist_fetches_ahead()), fetches,
 * those of op(A) and op(B) through the meter (src/loads.h). */
static void prefetch_refs(struct stargemm__executor *ex, int64_t n, int64_t first,
			  int64_t count)
{
	int fetch = stargemm__worklist_fetches_ahead(ex->wl);

	for (int64_t e = first; e < first + count; e++) {
		const struct stargemm__tile_ref *t = &ex->wl->refs[e];
		unsigned node = stargemm__device_node(t->device);

		/* received: landed once written (land_received()); generated: see the
		 * file's comment */
		if (t->received || is_generated(ex, t))
			continue;
		if (fetch && ex->loads && t->operand != STARGEMM_OP_C)
			stargemm__loads_push(ex->loads, ref_handle(ex, t), node, n);
		else if (fetch)
			starpu_data_fetch_on_node(ref_handle(ex, t), node, 1);
		else
			starpu_data_prefetch_on_node_prio(ref_handle(ex, t), node, 1,
							  t->priority);
	}
}

/* One landing less (land(), or an acquisition StarPU refused). */
static void landed(struct sync *sync)
{
	starpu_pthread_mutex_lock(&sync->mutex);
	if (--sync->landing == 0)
		starpu_pthread_cond_broadcast(&sync->done);
	starpu_pthread_mutex_unlock(&sync->mutex);
}

/* A received tile has landed (acquired in read mode, on no node: nothing is copied
 * for the acquisition): prefetch it to its device (a prefetch only takes free memory
 * or buffers marked "won't use"), then let go of it. Runs in a StarPU thread; blocks
 * on nothing. */
static void land(void *arg)
{
	struct landing *l = arg;
	struct sync *sync = l->sync;

	starpu_data_prefetch_on_node_prio(l->handle, l->node, 1, l->priority);
	starpu_data_release_on_node(l->handle, STARPU_ACQUIRE_NO_NODE);
	free(l);
	landed(sync);
}

/* Chunk @p n's received tiles (listed with STARGEMM_PREFETCH_RECEIVED), once its tasks
 * (and so their receives) are inserted: each acquired in read mode after its receive
 * (StarPU's sequential order), then prefetched to its device by land(). A tile still
 * cached from an earlier receive is acquired at once. Out of memory for the request,
 * a tile is left to its GEMM, which fetches it when it becomes ready. */
static void land_received(struct stargemm__executor *ex, int64_t n)
{
	const struct stargemm__chunk *ch = &ex->wl->chunks[n];

	for (int64_t e = ch->prefetch_first; e < ch->prefetch_first + ch->prefetch_count; e++) {
		const struct stargemm__tile_ref *t = &ex->wl->refs[e];
		struct landing *l;

		if (!t->received || !(l = malloc(sizeof(*l))))
			continue;
		*l = (struct landing){ &ex->sync, ref_handle(ex, t),
				       stargemm__device_node(t->device), t->priority };
		starpu_pthread_mutex_lock(&ex->sync.mutex);
		ex->sync.landing++;
		starpu_pthread_mutex_unlock(&ex->sync.mutex);
		if (starpu_data_acquire_on_node_cb_sequential_consistency(
			    l->handle, STARPU_ACQUIRE_NO_NODE, STARPU_R, land, l, 1)) {
			free(l);
			landed(&ex->sync);
		}
	}
}

/* Wait for every received tile's prefetch to be made (land()). */
static void wait_landed(struct stargemm__executor *ex)
{
	starpu_pthread_mutex_lock(&ex->sync.mutex);
	while (ex->sync.landing > 0)
		starpu_pthread_cond_wait(&ex->sync.done, &ex->sync.mutex);
	starpu_pthread_mutex_unlock(&ex->sync.mutex);
}

/* Let go of chunk @p m's inputs (all of them when @p all, else those not kept). */
static void release_inputs(struct stargemm__executor *ex, int64_t m, int all)
{
	const struct stargemm__chunk *ch = &ex->wl->chunks[m];
	MPI_Comm comm = stargemm__comm();

	for (int64_t e = ch->release_first; e < ch->release_first + ch->release_count; e++) {
		const struct stargemm__tile_ref *t = &ex->wl->refs[e];
		const struct stargemm_matrix *X;
		int trans;

		if (!all && t->keep)
			continue;
		if ((X = generated(ex, t, &trans))) {
			stargemm__generated_let_go_unit(X, trans, t->r, t->c);
			continue;
		}
		starpu_mpi_cache_flush(comm, ref_handle(ex, t));
		starpu_data_wont_use(ref_handle(ex, t));
	}
}

/* Whether chunk @p n is its block's last. */
static int last_of_block(const struct stargemm__executor *ex, int64_t n)
{
	const struct stargemm__chunk *ch = &ex->wl->chunks[n];
	const struct stargemm__block *bk = &ex->wl->blocks[ch->block];

	return n == bk->first_chunk + bk->nchunks - 1;
}

/* The finished block's tile, no longer written by any task: copy it to host memory as
 * a prefetch (see release_block()). */
static void write_back(void *handle)
{
	starpu_data_release_on_node(handle, STARPU_ACQUIRE_NO_NODE);
	starpu_data_prefetch_on_node_prio(handle, STARPU_MAIN_RAM, 1, 0);
}

/* The same as a fetch request, which StarPU serves beside the tasks' own (see
 * release_block()). */
static void write_back_now(void *handle)
{
	starpu_data_release_on_node(handle, STARPU_ACQUIRE_NO_NODE);
	starpu_data_fetch_on_node(handle, STARPU_MAIN_RAM, 1);
}

/* A C tile that no task of the list writes again: marked "won't use", and copied back
 * as the list says (wl->write_back) once its last writer is done. */
static void release_c(struct stargemm__executor *ex, starpu_data_handle_t h)
{
	starpu_data_wont_use(h);
	if (ex->wl->write_back != STARGEMM__BACK_IDLE)
		starpu_data_acquire_on_node_cb_sequential_consistency(
			h, STARPU_ACQUIRE_NO_NODE, STARPU_R,
			ex->wl->write_back == STARGEMM__BACK_FETCH ? write_back_now : write_back,
			h, 1);
}

/* A finished block's C tiles go back to host memory and leave the devices, as the
 * list says (stargemm__worklist_decide(), src/worklist.c, gives the reasons). A tile
 * that release_finished_c() let go earlier is released again here, which adds no copy:
 * host memory is up to date, or the earlier request is still pending and this one
 * joins it. */
static void release_block(struct stargemm__executor *ex, const struct stargemm__block *bk)
{
	for (int64_t e = bk->c_first; e < bk->c_first + bk->c_count; e++)
		release_c(ex, ref_handle(ex, &ex->wl->refs[e]));
}

/* With wl->early_release, a block's C tiles whose last update is in chunk @p n, not the
 * block's last, go as soon as that update is done rather than at the end of the block. */
static void release_finished_c(struct stargemm__executor *ex, int64_t n)
{
	const struct stargemm__chunk *ch = &ex->wl->chunks[n];

	if (!ex->wl->early_release || ch->block < 0 || last_of_block(ex, n))
		return;
	for (int64_t p = ch->first; p < ch->first + ch->count; p++) {
		const struct stargemm__product *x = &ex->wl->products[p];

		if (x->last && x->info.device >= 0)
			release_c(ex, stargemm__ref_handle(ex->gemm, STARGEMM_OP_C, x->i, x->j));
	}
}

/* ---- holds ---------------------------------------------------------------------- */

static void hold_acquired(void *arg)
{
	struct hold_set *s = arg;

	starpu_pthread_mutex_lock(&s->sync->mutex);
	s->acquired++;
	starpu_pthread_cond_broadcast(&s->sync->done);
	starpu_pthread_mutex_unlock(&s->sync->mutex);
}

/* Hold block @p blk's listed tiles on their devices until its last chunk is done
 * (unhold_done()). A held tile cannot be evicted, so a new one's buffer comes from the
 * released chunks' tiles instead. Why as early as possible (run()): on a full device,
 * StarPU makes room for a buffer of a new shape by freeing others (cudaFree, then
 * cudaMalloc, on the GPU worker's thread, which meanwhile feeds its GPU no task); held
 * early, the first block's are allocated while the device is empty and each next
 * block's take over the buffers of the previous block's, just released
 * (doc/out-of-core.md, "A ragged last K tile is held on its devices"). */
static int hold_block(struct stargemm__executor *ex, int64_t blk)
{
	const struct stargemm__block *bk = &ex->wl->blocks[blk];
	struct hold_set *s = &ex->holds[blk % (ex->wl->lookahead + 1)];

	ex->held_block = blk;
	ex->live_holds++;
	s->first = s->end = bk->hold_first;
	for (int64_t e = bk->hold_first; e < bk->hold_first + bk->hold_count; e++) {
		const struct stargemm__tile_ref *t = &ex->wl->refs[e];
		int ret;

		/* a generated tile is made by its chunk: acquired earlier, it would be
		 * read before it is written (src/generate.c) */
		if (is_generated(ex, t))
			continue;
		ret = starpu_data_acquire_on_node_cb(ref_handle(ex, t),
						     (int)stargemm__device_node(t->device),
						     STARPU_R, hold_acquired, s);
		if (ret)
			return stargemm__error(-EIO, "stargemm: cannot hold a tile on memory node "
					       "%u (starpu_data_acquire_on_node_cb: %d)",
					       stargemm__device_node(t->device), ret);
		s->count++;
		s->end = e + 1;
	}
	return 0;
}

/* Let go of the tiles held in slot @p slot, once their acquisitions are complete (a
 * release must follow its acquisition). */
static void unhold(struct stargemm__executor *ex, int64_t slot)
{
	struct hold_set *s = &ex->holds[slot];

	starpu_pthread_mutex_lock(&ex->sync.mutex);
	while (s->acquired < s->count)
		starpu_pthread_cond_wait(&ex->sync.done, &ex->sync.mutex);
	starpu_pthread_mutex_unlock(&ex->sync.mutex);
	for (int64_t e = s->first; e < s->end; e++) {
		const struct stargemm__tile_ref *t = &ex->wl->refs[e];

		if (!is_generated(ex, t))
			starpu_data_release_on_node(ref_handle(ex, t),
						    (int)stargemm__device_node(t->device));
	}
	s->count = s->acquired = 0;
	s->end = s->first;
}

/* Whether chunk @p n's block holds its tiles now: as soon as no other block's are
 * held, at the latest when its last chunk is inserted. */
static int holds_now(const struct stargemm__executor *ex, int64_t n)
{
	int64_t blk = ex->wl->chunks[n].block;

	return ex->wl->holds && ex->held_block < blk &&
	       (ex->live_holds == 0 || last_of_block(ex, n));
}

/* Chunk @p m is done: if it was its block's last, let go of the block's held tiles. */
static void unhold_done(struct stargemm__executor *ex, int64_t m)
{
	if (!ex->wl->holds || !last_of_block(ex, m))
		return;
	unhold(ex, ex->wl->chunks[m].block % (ex->wl->lookahead + 1));
	ex->live_holds--;
}

/* ---- device memory the plan does not use ---------------------------------------- */

/* With wl->reserve_unplanned, keep from StarPU's allocator, for the call, the part of
 * each GPU's memory the plan does not use (the reason: stargemm__worklist_decide()).
 * What is left: the plan's tiles plus the slack the planner kept (the memory beyond its
 * budget, at least 10%). */
static void hold_unplanned(struct stargemm__executor *ex)
{
	const struct stargemm__worklist *wl = ex->wl;

	if (!wl->reserve_unplanned || wl->need_bytes <= 0)
		return;
	for (int g = 0; g < wl->ndevices && g < STARGEMM_MAX_DEVICES; g++) {
		unsigned node = stargemm__device_node(g);
		int64_t total = (int64_t)starpu_memory_get_total(node);
		int64_t slack = total - wl->budget_bytes > total / 10 ? total - wl->budget_bytes
								       : total / 10;
		int64_t hold = total - wl->need_bytes - slack;

		ex->held[g] = hold > 0 ? hold : 0;
		if (ex->held[g] > 0)
			starpu_memory_allocate(node, (size_t)ex->held[g], STARPU_MEMORY_OVERFLOW);
	}
}

static void release_unplanned(struct stargemm__executor *ex)
{
	for (int g = 0; g < ex->wl->ndevices && g < STARGEMM_MAX_DEVICES; g++) {
		if (ex->held[g] > 0)
			starpu_memory_deallocate(stargemm__device_node(g), (size_t)ex->held[g]);
		ex->held[g] = 0;
	}
}

/* ---- the walk ------------------------------------------------------------------- */

/* The C tiles no product updates: C = beta C, before any product. */
static void insert_scales(struct stargemm__executor *ex)
{
	const struct stargemm__worklist *wl = ex->wl;

	for (int64_t e = wl->scale_first; e < wl->scale_first + wl->scale_count; e++)
		while (stargemm__scale_insert(ex->gemm, wl->refs[e].r, wl->refs[e].c) &&
		       stargemm__insertion_failed(ex->gemm))
			;
}

/* The failure agreement in flight: whether any rank had recorded a failed task
 * (insertion or kernel) when it was posted. A reduction that fails counts as a
 * failure of this rank. */
static int agreed_failure(struct stargemm__executor *ex)
{
	uint64_t any = 0;
	int ret = stargemm__sum_end(ex->failures, &any);

	ex->failures = NULL;
	if (ret)
		stargemm__task_failed(stargemm_last_error());
	return ret || any > 0;
}

/* Before chunk @p n, out of core: whether every rank stops here. Every agree_every
 * chunks, the previous agreement is read and the next one posted: each rank's failure
 * flag, summed without blocking (MPI_Iallreduce). agree_every is at least ell + 1
 * chunks and spans about STARGEMM_AGREE_FLOPS of each rank's work, so that when a sum
 * is read every rank has long posted it: a blocking sum per chunk tied each rank's
 * insertion to the slowest rank's. The chunks are the same on every rank, so all stop
 * at the same one. Not when the sums go through StarPU-MPI (MPI_THREAD_SERIALIZED,
 * SimGrid): there each read held the insertion for about two chunks, and the product
 * took the longer the more often it read (doc/design.md, Decisions, "The failure
 * agreement is a non-blocking sum"); such a product runs to its end on the ranks that
 * did not fail, and the failure is reported when it ends. */
static int abandoned(struct stargemm__executor *ex, int64_t n)
{
	uint64_t mine;

	if (!stargemm__mpi_thread_multiple() || n % ex->agree_every != 0)
		return 0;
	if (ex->failures && agreed_failure(ex))
		return 1;
	mine = (uint64_t)stargemm__task_failures();
	if (!(ex->failures = stargemm__sum_begin(&mine, 1)))
		stargemm__task_failed(stargemm_last_error());
	return 0;
}

/* Chunks between two failure agreements (abandoned()): about @p flops of each rank's
 * share of the list's work, at least ell + 1. Computed from the whole list, the same
 * on every rank. */
static int64_t agreement_period(const struct stargemm__worklist *wl, double flops)
{
	double per_chunk = wl->nchunks > 0 ? wl->flops / stargemm_nranks() / wl->nchunks : 0.0;
	double chunks = per_chunk > 0.0 ? ceil(flops / per_chunk) : (double)wl->nchunks;
	int64_t every = chunks < (double)wl->nchunks ? (int64_t)chunks : wl->nchunks;

	return every > wl->lookahead + 1 ? every : wl->lookahead + 1;
}

/* Hold chunk @p n's block if it is time (a failed hold is a failed insertion), then
 * prefetch and insert the chunk, unless the rest is skipped. */
static void walk_chunk(struct stargemm__executor *ex, int64_t n)
{
	const struct stargemm__chunk *ch = &ex->wl->chunks[n];

	if (!ex->gemm->skip && holds_now(ex, n) && hold_block(ex, ch->block))
		stargemm__insertion_failed(ex->gemm);
	if (ch->prefetch_before && !ex->gemm->skip)
		prefetch_refs(ex, n, ch->prefetch_first, ch->prefetch_count);
	insert_chunk(ex, n);
	if (!ch->prefetch_before && !ex->gemm->skip)
		prefetch_refs(ex, n, ch->prefetch_first, ch->prefetch_count);
	if (!ex->gemm->skip)
		land_received(ex, n);
	if (!ex->gemm->skip)
		release_finished_c(ex, n);
	if (ch->block >= 0 && last_of_block(ex, n))
		release_block(ex, &ex->wl->blocks[ch->block]);
}

/* The C tiles without a product first; then chunk n waits for n - (ell + 1), whose
 * inputs are then let go. Out of core, a failure on any rank stops the walk on every
 * rank at the same chunk, once the ranks have agreed on it (abandoned()). */
static void run(struct stargemm__executor *ex)
{
	const struct stargemm__worklist *wl = ex->wl;
	int64_t n;

	insert_scales(ex);
	for (n = 0; n < wl->nchunks; n++) {
		int64_t done = n - (wl->lookahead + 1);

		if (wl->throttled && abandoned(ex, n))
			break;
		if (wl->throttled && done >= 0) {
			wait_chunk(ex, done);
			if (ex->loads)
				stargemm__loads_chunk_done(ex->loads, done);
			unhold_done(ex, done);
			release_inputs(ex, done, 0);
		}
		walk_chunk(ex, n);
	}
	if (!wl->throttled)
		return;
	if (ex->failures)
		agreed_failure(ex);
	/* The last chunks' inputs: nothing follows them. */
	for (int64_t m = n - (wl->lookahead + 1) > 0 ? n - (wl->lookahead + 1) : 0; m < n; m++) {
		wait_chunk(ex, m);
		unhold_done(ex, m);
		release_inputs(ex, m, 1);
	}
	/* Stopped in the middle of a block: its holds too. */
	for (int64_t s = 0; s <= wl->lookahead; s++)
		unhold(ex, s);
}

/* The most loads the meter holds at once: the prefetches of lookahead + 2 consecutive
 * chunks (those of the window, and of the chunk being inserted), at most. */
static int64_t window_loads(const struct stargemm__worklist *wl)
{
	int64_t most = 0, sum = 0, span = wl->lookahead + 2;

	for (int64_t n = 0; n < wl->nchunks; n++) {
		sum += wl->chunks[n].prefetch_count;
		if (n >= span)
			sum -= wl->chunks[n - span].prefetch_count;
		most = sum > most ? sum : most;
	}
	return most;
}

/* The largest batch's tile references. */
static int64_t max_batch_refs(const struct stargemm__worklist *wl)
{
	int64_t most = 1;

	for (int64_t b = 0; b < wl->nbatches; b++)
		if (wl->batches[b].nrefs > most)
			most = wl->batches[b].nrefs;
	return most;
}

int stargemm__executor_new(struct stargemm__gemm *gemm, const struct stargemm__worklist *wl,
			   struct stargemm__executor **out)
{
	struct stargemm__executor *ex;
	double agree_flops;
	int ret, metered;

	*out = NULL;
	if ((ret = stargemm__setting(STARGEMM__AGREE_FLOPS, &agree_flops)))
		return ret;
	if (!(ex = calloc(1, sizeof(*ex))))
		return stargemm__error(-ENOMEM, "stargemm: out of memory for the executor");
	*ex = (struct stargemm__executor){ .gemm = gemm, .wl = wl, .held_block = -1,
					   .agree_every = agreement_period(wl, agree_flops) };
	ex->descr = malloc((size_t)max_batch_refs(wl) * sizeof(*ex->descr));
	/* + 1: never an allocation of 0 bytes, which may return NULL. */
	ex->sync.pending = calloc((size_t)wl->nchunks + 1, sizeof(*ex->sync.pending));
	ex->refs = calloc((size_t)wl->nchunks + 1, sizeof(*ex->refs));
	ex->holds = calloc((size_t)wl->lookahead + 1, sizeof(*ex->holds));
	metered = wl->throttled && stargemm__worklist_fetches_ahead(wl);
	if (!ex->descr || !ex->sync.pending || !ex->refs || !ex->holds ||
	    (metered && stargemm__loads_new(window_loads(wl), &ex->loads))) {
		stargemm__executor_free(ex);
		return stargemm__error(-ENOMEM, "stargemm: out of memory for %" PRId64 " chunks",
				       wl->nchunks);
	}
	for (int64_t n = 0; n < wl->nchunks; n++)
		ex->refs[n] = (struct chunk_ref){ &ex->sync, n };
	for (int64_t s = 0; s <= wl->lookahead; s++)
		ex->holds[s].sync = &ex->sync;
	*out = ex;
	return 0;
}

void stargemm__executor_free(struct stargemm__executor *ex)
{
	if (!ex)
		return;
	stargemm__loads_free(ex->loads);
	free(ex->descr);
	free(ex->sync.pending);
	free(ex->refs);
	free(ex->holds);
	free(ex);
}

/* This rank's tasks in the list: its batches, or its products. */
static int64_t local_tasks(const struct stargemm__worklist *wl)
{
	int64_t count = 0;

	if (wl->nbatches > 0) {
		for (int64_t b = 0; b < wl->nbatches; b++)
			count += local_batch(wl, b);
		return count;
	}
	for (int64_t p = 0; p < wl->nproducts; p++)
		count += wl->products[p].info.device >= 0;
	return count;
}

/* Count this rank's tasks for the progress line, if it prints one. */
static int progress_begin(const struct stargemm__worklist *wl)
{
	return stargemm__progress_wanted() && stargemm__progress_begin(local_tasks(wl), wl->flops);
}

/* The generated tiles this rank made and has not let go (in core: all it made), once
 * their readers are done: at the next wait (src/generate.h). */
static void let_go_generated(struct stargemm__executor *ex)
{
	stargemm__generated_let_go_at_wait(ex->gemm->A);
	stargemm__generated_let_go_at_wait(ex->gemm->B);
}

int stargemm__execute(struct stargemm__executor *ex)
{
	const struct stargemm__worklist *wl = ex->wl;
	int ret;

	ex->progress = progress_begin(wl);
	ex->sync.progress = ex->progress;
	if (wl->throttled && wl->gpus)
		ex->gemm->where = STARPU_CUDA;
	if (!wl->throttled) {
		run(ex);
		let_go_generated(ex);
		return 0;
	}
	starpu_pthread_mutex_init(&ex->sync.mutex, NULL);
	starpu_pthread_cond_init(&ex->sync.done, NULL);
	hold_unplanned(ex);
	run(ex);
	let_go_generated(ex);
	/* Whatever was submitted must finish before the counters go away. */
	ret = stargemm_wait();
	wait_landed(ex);
	/* Every task is done: loads not asked for yet are not needed; the rest end. */
	stargemm__loads_free(ex->loads);
	ex->loads = NULL;
	release_unplanned(ex);
	starpu_pthread_mutex_destroy(&ex->sync.mutex);
	starpu_pthread_cond_destroy(&ex->sync.done);
	return ret;
}
