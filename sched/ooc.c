/*
 * sched/ooc.c — "stargemm-ooc", the scheduling policy of the out-of-core algorithm.
 *
 * Select it with struct stargemm_config.sched_policy = "stargemm-ooc" (the default).
 *
 * What it enforces (Herault et al. 2019, §2):
 *  - Static device assignment: a GEMM runs on the device its task info names
 *    (src/contract.h); the inspector (src/inspect.c) gives every update of a C tile
 *    the same device, so each C tile's whole chain runs on one device and the tile
 *    stays there until its block is done. Without GPUs the "device" is the host RAM,
 *    shared by the CPU workers.
 *  - One FIFO queue per device, served in the order tasks became ready: the executor
 *    (src/execute.c) inserts tasks chunk by chunk, so a device finishes a chunk's work
 *    before it starts the next one's, and never starts a new C block before its tasks
 *    of the previous block are done. One exception, on a rank with one GPU: when the
 *    oldest GEMM waits for copies under way, a later one whose inputs are all on the
 *    device goes first (take_next()). On a rank with several GPUs, a GEMM whose input
 *    is being copied to its device while a peer already holds it is taken only once
 *    the copy has landed: taken earlier, it would have the tile copied a second time,
 *    from the peer (would_copy_twice()).
 *  - A GEMM entering its device's queue prefetches its inputs there, C tile included
 *    (an application prefetch of C would wait for the task holding it), in the order
 *    the device will run them, leaving out the tiles already requested there (StarPU
 *    would copy them again from another source, prefetch_inputs()) — and except an A
 *    tile on its way to another device: such a GEMM prefetches only when it is among
 *    the next DEFER_WINDOW tasks of its queue, so that the tile comes from that device
 *    (leave_a_to_peer(), prefetch_deferred()).
 *    GEMMs of the block after the current one prefetch theirs as they arrive, though
 *    held: a prefetch only takes free memory or buffers marked "won't use", so the next
 *    block loads while the current one ends.
 *  - CPU workers take no GEMM when the rank has GPUs; they run the other tasks (tile
 *    fills). Without GPUs, every task goes to the CPU workers' queue.
 *  - C blocks do not overlap on a device: a GEMM of block beta is held back until the
 *    device has finished all its GEMMs of earlier blocks (the executor announces each
 *    task with stargemm__sched_expect() when it inserts it; the block is in its task
 *    info). Tasks of the next block may be inserted ahead — their inputs are
 *    prefetched by the lookahead — but their C tiles are only allocated once the
 *    previous block's C tiles are done and released, so a device never holds two C
 *    blocks. Tasks of block -1 (the in-core product) are not held.
 * Everything the policy knows of a task comes from its struct stargemm_task_info
 * (task->sched_data; the contract is src/contract.h): device, block, prefetch class.
 * The policy knows nothing of matrices, tilings or plans.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <starpu_scheduler.h>
#include <errno.h>
#include <starpu.h>

#include "../src/contract.h"
#include "../src/error.h"
#include "ooc.h"

/* Blocks a device may have announced and unfinished at once (the lookahead window
 * spans at most ell + 1 chunks, hence at most ell + 1 blocks). */
#define BLOCK_RING 64

struct fifo {
	struct starpu_task_list tasks;
	struct starpu_task_list held;     /* GEMMs of blocks after the oldest one */
	int64_t pending[BLOCK_RING];       /* announced, unfinished GEMMs per block */
	int64_t oldest;                    /* oldest block with pending GEMMs, -1 = none */
	int64_t newest;                    /* newest block announced */
	int64_t prefetched;                /* GEMMs whose inputs were prefetched (their order) */
	int workers[STARPU_NMAXWORKERS];
	int nworkers;
	unsigned node;                     /* the device's memory node */
};

struct ooc_data {
	starpu_pthread_mutex_t mutex;
	int ndevices;            /* GPUs, or 1 (RAM) without GPU */
	struct fifo *device;     /* ndevices queues */
	struct fifo cpu;         /* non-GEMM tasks (and GEMMs without GPU: == device[0]) */
	struct fifo *of_worker[STARPU_NMAXWORKERS];
};

/* How close to the head of its queue a GEMM that left its A tile to a peer gets its
 * inputs prefetched (prefetch_deferred()). */
#define DEFER_WINDOW 16

/* The executor's info of a task (src/contract.h), or NULL for other tasks. */
static struct stargemm_task_info *info_of(const struct starpu_task *task)
{
	return task->sched_data;
}

/* The one instance (StarPU runs one policy per context; stargemm uses one context). */
static struct ooc_data *active;

/* Block of an executor task, or -1 for untracked tasks. */
static int64_t task_block(const struct starpu_task *task)
{
	return info_of(task) ? info_of(task)->block : -1;
}

static void init_fifo(struct fifo *q)
{
	starpu_task_list_init(&q->tasks);
	starpu_task_list_init(&q->held);
	q->oldest = -1;
	q->node = STARPU_MAIN_RAM;
}

static void add_worker(struct fifo *q, struct ooc_data *d, int worker)
{
	q->workers[q->nworkers++] = worker;
	q->node = starpu_worker_get_memory_node((unsigned)worker);
	d->of_worker[worker] = q;
}

static void init_policy(unsigned ctx)
{
	struct ooc_data *d = calloc(1, sizeof(*d));
	int cuda[STARPU_NMAXWORKERS], cpu[STARPU_NMAXWORKERS];
	int ncuda = starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, cuda, STARPU_NMAXWORKERS);
	int ncpu = starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, cpu, STARPU_NMAXWORKERS);

	STARPU_ASSERT_MSG(d, "stargemm-ooc: out of memory");
	STARPU_PTHREAD_MUTEX_INIT(&d->mutex, NULL);
	init_fifo(&d->cpu);
	for (int w = 0; w < ncpu; w++)
		add_worker(&d->cpu, d, cpu[w]);
	if (ncuda > 0) {
		d->ndevices = ncuda;
		d->device = calloc((size_t)ncuda, sizeof(*d->device));
		STARPU_ASSERT_MSG(d->device, "stargemm-ooc: out of memory");
		for (int g = 0; g < ncuda; g++) {
			init_fifo(&d->device[g]);
			add_worker(&d->device[g], d, cuda[g]);
		}
	} else {
		d->ndevices = 1;
		d->device = &d->cpu;
	}
	starpu_sched_ctx_set_policy_data(ctx, d);
	active = d;
}

static void deinit_policy(unsigned ctx)
{
	struct ooc_data *d = starpu_sched_ctx_get_policy_data(ctx);

	active = NULL;
	if (d->device != &d->cpu)
		free(d->device);
	STARPU_PTHREAD_MUTEX_DESTROY(&d->mutex);
	free(d);
}

/* A device's queue for executor tasks (device in range: the executor counts the same
 * CUDA workers, src/execute.c), the CPU workers' for the others. */
static struct fifo *queue_for(struct ooc_data *d, const struct starpu_task *task)
{
	const struct stargemm_task_info *info = info_of(task);

	if (info) {
		STARPU_ASSERT_MSG(info->device >= 0 && info->device < d->ndevices,
				  "stargemm-ooc: task for device %d of %d", (int)info->device,
				  d->ndevices);
		return &d->device[info->device];
	}
	return d->cpu.nworkers > 0 ? &d->cpu : &d->device[0];
}

static void wake(const struct fifo *q)
{
	for (int w = 0; w < q->nworkers; w++)
		starpu_wake_worker_relax_light(q->workers[w]);
}

/* A task may run now unless it belongs to a block after the device's oldest one. */
static int may_run(const struct fifo *q, int64_t block)
{
	return block < 0 || q->oldest < 0 || block <= q->oldest;
}

/* Whether a GEMM should leave its A tile to be fetched later: its C tile is on its
 * device @p node already, and its A tile is neither there nor requested, but on its
 * way to another device of the rank (the executor prefetches each A tile to one of the
 * devices that need it). StarPU picks the source of a copy when the request is made:
 * made now, it would come from host memory; made when the task nears the head of its
 * queue (prefetch_deferred()), the other device holds the tile and StarPU copies it
 * from there if that link is the faster one. The C tile must
 * be there already: a C tile is prefetched only by its GEMMs, and a block's first C
 * tiles must not wait for their tasks to start. */
static int leave_a_to_peer(const struct ooc_data *d, struct starpu_task *task, unsigned node)
{
	int allocated, valid, requested, coming = 0;
	starpu_data_handle_t a = STARPU_TASK_GET_HANDLE(task, 0);

	if (d->ndevices < 2 || node == STARPU_MAIN_RAM)
		return 0;
	starpu_data_query_status(STARPU_TASK_GET_HANDLE(task, 2), (int)node, &allocated, &valid,
				 &requested);
	if (!valid)
		return 0;
	starpu_data_query_status(a, (int)node, &allocated, &valid, &requested);
	if (valid || requested)
		return 0;
	for (int g = 0; g < d->ndevices && !coming; g++) {
		if (d->device[g].node == node)
			continue;
		starpu_data_query_status(a, (int)d->device[g].node, &allocated, &valid, &requested);
		coming = requested && !valid;
	}
	return coming;
}

/* Prefetch a GEMM's inputs (A, B, C: src/insert.c) to its device @p node with priority
 * @p prio, except the A and B tiles already there or already requested there. StarPU
 * 1.3 merges a second request for a tile only with one from the same source node, and
 * picks the source when the request is made: asked again once a peer GPU holds the
 * tile, a tile on its way from host memory was copied a second time, from the peer.
 * A C tile that must be read and is not on the device is fetched with a task prefetch
 * of all the inputs (an application's prefetch of it would wait for the task, which
 * holds it); this prefetch too is merged for a tile requested from the same source. */
static void prefetch_inputs(struct starpu_task *task, unsigned node, int prio)
{
	int allocated, valid, requested;

	starpu_data_query_status(STARPU_TASK_GET_HANDLE(task, 2), (int)node, &allocated, &valid,
				 &requested);
	if ((STARPU_TASK_GET_MODE(task, 2) & STARPU_R) && !valid && !requested) {
		starpu_prefetch_task_input_on_node_prio(task, node, prio);
		return;
	}
	for (unsigned i = 0; i < 2; i++) {
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);

		starpu_data_query_status(h, (int)node, &allocated, &valid, &requested);
		if (!valid && !requested)
			starpu_data_prefetch_on_node_prio(h, node, 1, prio);
	}
}

/* The priority of the prefetches of the seq-th task to arrive in queue q (see
 * prefetch_ready()). */
static int run_priority(const struct fifo *q, const struct starpu_task *task, int64_t seq)
{
	if (!may_run(q, task_block(task)))
		return 0;
	return seq < INT_MAX / 2 ? (int)(INT_MAX / 2 - seq) : 1;
}

/* A GEMM that is ready has its inputs fetched to its device (prefetch_inputs()): its C
 * tile (unless the task only writes it) — which nothing else may prefetch, since the
 * task holds it — and A and B tiles that the executor could not prefetch earlier
 * (those received over MPI are readable only now). Priorities decrease in the order
 * the GEMMs arrive, which is the order the device runs them, and stay above the
 * lookahead's prefetches (priority <= 0): what runs next is copied first. Except the
 * GEMMs of prefetch class HELD, whose A and B tiles the executor holds on the device
 * itself (src/execute.c, hold_block()); and a GEMM that leaves its A tile to a peer
 * (leave_a_to_peer()); and a batch (class ALL), which prefetches all its buffers in one
 * task prefetch. A GEMM held back (next block, prefetch_held()) gets priority 0,
 * below every GEMM that may run: it arrives when its block's first chunk is inserted,
 * before the current block's last GEMMs (each becomes ready only when the GEMM before
 * it on its C tile ends), and with an earlier rank it took the copy engine from them —
 * the GPUs waited at the end of each block. Not lower than the lookahead's: below them,
 * the simulated 4 GiB H100 test case is slower (doc/out-of-core.md, "The next block is
 * loaded while the current one ends"). (StarPU does not raise the priority of a
 * pending copy requested again, as when the GEMM is released.) Called before the task
 * is visible to the workers. */
static void prefetch_ready(const struct ooc_data *d, struct fifo *q, struct starpu_task *task)
{
	struct stargemm_task_info *info = info_of(task);
	int64_t seq = q->prefetched++;

	if (!info || info->prefetch == STARGEMM_PREFETCH_HELD)
		return;
	if (info->prefetch == STARGEMM_PREFETCH_ALL) {
		/* on the host RAM only out of core (a block), from the disk node */
		if (q->node != STARPU_MAIN_RAM || info->block >= 0)
			starpu_prefetch_task_input_on_node_prio(task, q->node,
								run_priority(q, task, seq));
		return;
	}
	if (leave_a_to_peer(d, task, q->node)) {
		info->deferred = 1;
		return;
	}
	prefetch_inputs(task, q->node, run_priority(q, task, seq));
}

/* Whether a GEMM held back prefetches its inputs all the same: those of the block right
 * after the oldest one do, as soon as they are ready. A prefetch only takes free memory
 * or the buffers of tiles marked "won't use" (released chunks, finished C tiles), never
 * a tile the current block still needs; the next block's first C tiles and inputs are
 * thus copied while the current block ends, instead of after it, when the GPU idled at
 * each block switch (doc/out-of-core.md, "The next block is loaded while the current
 * one ends"). */
static int prefetch_held(const struct fifo *q, int64_t block)
{
	return block >= 0 && block == q->oldest + 1;
}

static void count_ready(const struct ooc_data *d, const struct fifo *q,
			struct starpu_task *task);

static int push_task(struct starpu_task *task)
{
	struct ooc_data *d = starpu_sched_ctx_get_policy_data(task->sched_ctx);
	struct fifo *q;
	int runnable;

	STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
	q = queue_for(d, task);
	runnable = may_run(q, task_block(task));
	count_ready(d, q, task);
	if (runnable || prefetch_held(q, task_block(task)))
		prefetch_ready(d, q, task);
	starpu_task_list_push_back(runnable ? &q->tasks : &q->held, task);
	starpu_push_task_end(task);
	STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
	if (runnable)
		wake(q);
	return 0;
}

/* Move the held tasks that may now run to the queue (called with the mutex held). */
static int release_held(const struct ooc_data *d, struct fifo *q)
{
	struct starpu_task_list keep;
	int released = 0;

	starpu_task_list_init(&keep);
	while (!starpu_task_list_empty(&q->held)) {
		struct starpu_task *t = starpu_task_list_pop_front(&q->held);

		if (may_run(q, task_block(t))) {
			prefetch_ready(d, q, t);
			starpu_task_list_push_back(&q->tasks, t);
			released = 1;
		} else {
			starpu_task_list_push_back(&keep, t);
		}
	}
	q->held = keep;
	return released;
}

/* Advance the oldest block past finished ones. */
static void advance_oldest(struct fifo *q, int64_t newest)
{
	while (q->oldest >= 0 && q->pending[q->oldest % BLOCK_RING] == 0)
		q->oldest = q->oldest < newest ? q->oldest + 1 : -1;
}

/* One announced task of @p block is finished (or will never come): when it was the
 * block's last, the next block's held tasks may run. */
static void block_task_gone(struct ooc_data *d, struct fifo *q, int64_t block)
{
	int released = 0;

	STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
	if (q->pending[block % BLOCK_RING] > 0 && --q->pending[block % BLOCK_RING] == 0) {
		advance_oldest(q, q->newest);
		released = release_held(d, q);
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
	if (released)
		wake(q);
}

static void post_exec(struct starpu_task *task, unsigned ctx)
{
	struct ooc_data *d = starpu_sched_ctx_get_policy_data(ctx);
	int64_t block = task_block(task);

	if (block >= 0)
		block_task_gone(d, queue_for(d, task), block);
}

/* Where a task's inputs stand on memory node @p node: INPUTS_HERE (all valid there),
 * INPUTS_COMING (none missing without a request, some still being copied) or
 * INPUTS_MISSING (some neither there nor requested: taking the task starts the copy). */
enum inputs_state { INPUTS_HERE, INPUTS_COMING, INPUTS_MISSING };

static enum inputs_state inputs_state(struct starpu_task *task, unsigned node)
{
	enum inputs_state st = INPUTS_HERE;
	unsigned n = STARPU_TASK_GET_NBUFFERS(task);

	for (unsigned i = 0; i < n; i++) {
		int allocated, valid, requested;

		if (!(STARPU_TASK_GET_MODE(task, i) & STARPU_R))
			continue;
		starpu_data_query_status(STARPU_TASK_GET_HANDLE(task, i), (int)node, &allocated,
					 &valid, &requested);
		if (!valid && !requested)
			return INPUTS_MISSING;
		if (!valid)
			st = INPUTS_COMING;
	}
	return st;
}

/* Whether a GPU of the rank other than @p node holds a valid copy of @p h. */
static int valid_on_peer(const struct ooc_data *d, starpu_data_handle_t h, unsigned node)
{
	for (int g = 0; g < d->ndevices; g++) {
		int allocated, valid, requested;

		if (d->device[g].node == node)
			continue;
		starpu_data_query_status(h, (int)d->device[g].node, &allocated, &valid, &requested);
		if (valid)
			return 1;
	}
	return 0;
}

/* Whether taking @p task now would copy one of its inputs to @p node a second time: the
 * input is being copied there (requested, its buffer allocated, not yet valid) and
 * another GPU holds it. The task's fetch takes the cheapest valid copy as its source
 * (StarPU 1.3, _starpu_select_src_node()) and joins a pending request only from that
 * same source: a tile on its way from the host, or from another peer, was copied again
 * from the peer (with a lookahead of 2, 5% more loads than Eq. (1), and slower: the
 * copies under way were slow because the links were busy). Such a task waits for its
 * copy, which needs no more memory and lands; StarPU calls pop_task() again then. */
static int would_copy_twice(const struct ooc_data *d, struct starpu_task *task, unsigned node)
{
	unsigned n = STARPU_TASK_GET_NBUFFERS(task);

	if (d->ndevices < 2 || node == STARPU_MAIN_RAM)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		int allocated, valid, requested;

		if (!(STARPU_TASK_GET_MODE(task, i) & STARPU_R))
			continue;
		starpu_data_query_status(h, (int)node, &allocated, &valid, &requested);
		if (!valid && requested && allocated && valid_on_peer(d, h, node))
			return 1;
	}
	return 0;
}

/* The task a device takes next: none while the oldest would copy an input a second
 * time (would_copy_twice()); else the oldest, unless it waits for copies already under
 * way and a later one has all its inputs on the device — then that one, so the device
 * computes instead of waiting. This matters when the copies are the bottleneck: in a
 * run's first chunk every GEMM's C tile is loaded, and a C tile that has arrived allows
 * its next k update at once while the oldest GEMMs still wait for theirs (in
 * simulation it shortens the H100 cases and brings their loads to the model's).
 * Otherwise the oldest task is ready and is taken, as in a FIFO. Only on a rank with
 * one GPU: with several, a device that runs ahead reaches sooner the GEMMs whose A tile
 * is still on its way to a peer (leave_a_to_peer()), and they take it from the host
 * (fewer GPU<-GPU copies on 6 simulated GPUs). Not for the host's queue either,
 * shared by its CPU workers. Called with
 * the mutex held. */
static struct starpu_task *take_next(const struct ooc_data *d, struct fifo *q)
{
	struct starpu_task *head = starpu_task_list_front(&q->tasks);

	if (info_of(head) && would_copy_twice(d, head, q->node))
		return NULL;

	if (d->ndevices == 1 && q->node != STARPU_MAIN_RAM && info_of(head) &&
	    inputs_state(head, q->node) == INPUTS_COMING) {
		for (struct starpu_task *t = starpu_task_list_next(head);
		     t != starpu_task_list_end(&q->tasks); t = starpu_task_list_next(t))
			if (info_of(t) && inputs_state(t, q->node) == INPUTS_HERE) {
				starpu_task_list_erase(&q->tasks, t);
				return t;
			}
	}
	return starpu_task_list_pop_front(&q->tasks);
}

/* A GEMM that left its A tile to a peer (leave_a_to_peer()) has its inputs prefetched
 * once it is among the next DEFER_WINDOW tasks of its queue, above every other prefetch:
 * by then the peer usually holds the tile and StarPU copies it from there; if not, it
 * comes from the host, still ahead of the task. Without this the task fetched its inputs
 * only when it started, one task ahead: at the start of a run, when the host link is
 * saturated by the first C tiles and the peer's own copy waits behind them, each such
 * GEMM waited for its copy (the 6-GPU simulated test case; DEFER_WINDOW was measured
 * against other windows: doc/out-of-core.md, "An A tile on its way to a peer is
 * fetched from it"). Called with the mutex held, after a task left the queue. */
static void prefetch_deferred(struct fifo *q)
{
	int i = 0;

	for (struct starpu_task *t = starpu_task_list_begin(&q->tasks);
	     t != starpu_task_list_end(&q->tasks) && i < DEFER_WINDOW;
	     t = starpu_task_list_next(t), i++)
		if (info_of(t) && info_of(t)->deferred) {
			info_of(t)->deferred = 0;
			prefetch_inputs(t, q->node, INT_MAX / 2 + 1);
		}
}

/* Whether the prefetches reached the tasks in time, for stargemm_transfers_get(): the
 * tasks of a block (out of core) taken by a worker, and of those the ones with an input
 * neither on the device nor on its way there (INPUTS_MISSING: its prefetch was never
 * made, or the tile was evicted since; taking the task starts the copy). Counted only
 * when stargemm_config.count_transfers asks (stargemm__sched_count()), by the worker
 * that took the task, before it runs, and outside the policy's lock: a batch's inputs
 * are hundreds of tiles, and the other workers would wait for the loop over them.
 * taken_tasks is counted first and read last, so that a read never shows more
 * unprefetched tasks than taken ones. */
static atomic_int counting;
static _Atomic uint64_t taken_tasks, unprefetched_tasks, late_tasks;

/* Whether input @p h of a task (read only) is on one of the rank's GPUs or on its way
 * to one. */
static int on_some_device(const struct ooc_data *d, starpu_data_handle_t h)
{
	for (int g = 0; g < d->ndevices; g++) {
		int allocated, valid, requested;

		starpu_data_query_status(h, (int)d->device[g].node, &allocated, &valid, &requested);
		if (valid || requested)
			return 1;
	}
	return 0;
}

/* Whether the loads reached the tasks ahead of time, for stargemm_transfers_get():
 * an out-of-core task on a GPU that becomes ready (reaches the policy) with an input it
 * only reads (op(A), op(B)) on none of the rank's GPUs and on its way to none is late:
 * no load was asked for within the lookahead, and the copy to a GPU starts only now,
 * after the task's C tile's previous update — the GPU waits for it. A tile received
 * over MPI and left to its GEMM is late; one prefetched once it landed (src/execute.c,
 * land_received()) is not. Called with the mutex held: two status queries per input
 * and GPU. */
static void count_ready(const struct ooc_data *d, const struct fifo *q,
			struct starpu_task *task)
{
	unsigned n = STARPU_TASK_GET_NBUFFERS(task);

	if (!atomic_load_explicit(&counting, memory_order_relaxed) || task_block(task) < 0 ||
	    q->node == STARPU_MAIN_RAM)
		return;
	for (unsigned i = 0; i < n; i++)
		if (STARPU_TASK_GET_MODE(task, i) == STARPU_R &&
		    !on_some_device(d, STARPU_TASK_GET_HANDLE(task, i))) {
			atomic_fetch_add(&late_tasks, 1);
			return;
		}
}

static void count_taken(const struct fifo *q, struct starpu_task *task)
{
	if (!atomic_load_explicit(&counting, memory_order_relaxed) || task_block(task) < 0)
		return;
	atomic_fetch_add(&taken_tasks, 1);
	if (inputs_state(task, q->node) == INPUTS_MISSING)
		atomic_fetch_add(&unprefetched_tasks, 1);
}

static struct starpu_task *pop_task(unsigned ctx)
{
	struct ooc_data *d = starpu_sched_ctx_get_policy_data(ctx);
	struct fifo *q = d->of_worker[starpu_worker_get_id_check()];
	struct starpu_task *task = NULL;

	if (!q || starpu_task_list_empty(&q->tasks))
		return NULL;
	STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
	if (!starpu_task_list_empty(&q->tasks))
		task = take_next(d, q);
	if (task) {
		if (info_of(task))
			info_of(task)->deferred = 0;
		prefetch_deferred(q);
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
	if (task)
		count_taken(q, task);
	return task;
}

struct starpu_sched_policy stargemm_ooc_policy = {
	.init_sched = init_policy,
	.deinit_sched = deinit_policy,
	.push_task = push_task,
	.pop_task = pop_task,
	.post_exec_hook = post_exec,
	.policy_name = "stargemm-ooc",
	.policy_description = "stargemm out-of-core: one FIFO per device, each task on "
			      "the device the executor names",
	.worker_type = STARPU_WORKER_LIST,
};

void stargemm__sched_count(int on)
{
	atomic_store(&counting, on != 0);
}

void stargemm__sched_counts(uint64_t *taken, uint64_t *unprefetched, uint64_t *late,
			   int reset)
{
	*late = reset ? atomic_exchange(&late_tasks, 0) : atomic_load(&late_tasks);
	*unprefetched = reset ? atomic_exchange(&unprefetched_tasks, 0)
			      : atomic_load(&unprefetched_tasks);
	*taken = reset ? atomic_exchange(&taken_tasks, 0) : atomic_load(&taken_tasks);
}

int stargemm__sched_expect(int device, int64_t block)
{
	struct ooc_data *d = active;
	struct fifo *q;

	if (!d)
		return 0;  /* another policy runs: nothing to hold */
	if (device < 0 || device >= d->ndevices)
		return stargemm__error(-EINVAL, "stargemm-ooc: a task for device %d, but the "
				       "process has %d", device, d->ndevices);
	STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
	q = &d->device[device];
	if (q->oldest >= 0 && block - q->oldest >= BLOCK_RING) {
		STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
		return stargemm__error(-EINVAL, "stargemm-ooc: more than %d C blocks in flight "
				       "on one device; lower the lookahead", BLOCK_RING);
	}
	q->pending[block % BLOCK_RING]++;
	if (q->oldest < 0)
		q->oldest = block;
	if (block > q->newest)
		q->newest = block;
	STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
	return 0;
}

void stargemm__sched_forget(int device, int64_t block)
{
	if (active && device >= 0 && device < active->ndevices && block >= 0)
		block_task_gone(active, &active->device[device], block);
}
