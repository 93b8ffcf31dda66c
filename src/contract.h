/*
 * contract.h — what the executor (src/execute.c) tells the scheduling policy
 * (sched/ooc.c), and nothing else: the one place where their agreement is written.
 *
 * Every GEMM task the executor inserts carries a struct stargemm_task_info, passed to
 * StarPU as the task's sched_data (STARPU_TASK_SCHED_DATA). The info lives in the work
 * list (src/worklist.h) until the tasks are done. A task without one (sched_data NULL:
 * tile fills, user tasks) is not the executor's: the policy runs it on a CPU worker.
 *
 * Devices. The executor numbers its devices 0..G-1: device g is the g-th CUDA worker
 * of the process (starpu_worker_get_by_type(STARPU_CUDA_WORKER, g)), whose memory node
 * is stargemm__device_node(g); with no CUDA worker there is one device, the host RAM
 * (node STARPU_MAIN_RAM) shared by the CPU workers. The policy keeps one queue per
 * device in that order; it decides nothing about placement.
 *
 * Blocks. The executor announces each task it is about to insert with
 * stargemm__sched_expect(device, block), in insertion order; blocks are numbered from
 * 0 in the order their first task is inserted, per call. The policy holds a device's
 * tasks of block b until that device has finished all its tasks of blocks < b (so a
 * device never holds two C blocks), and lets the held tasks of the block right after
 * the current one prefetch their inputs below every runnable task's. Block -1: not
 * held, not counted (the in-core product).
 *
 * Prefetch classes. What the policy fetches when a task becomes ready:
 *  - STARGEMM_PREFETCH_READY: all its inputs (C included), to its device, in the order
 *    the device will run the tasks — except an A tile on its way to another device of
 *    the rank, which it fetches later, close to the head of the queue, so that it
 *    comes from that peer (paper 003 §4.1, device-to-device).
 *  - STARGEMM_PREFETCH_HELD: nothing: the executor holds the task's A and B tiles on
 *    the device itself (src/execute.c, hold_block()).
 *  - STARGEMM_PREFETCH_ALL: all its buffers, to its device (a GPU; the host RAM only
 *    out of core, from a disk node), in the order the device will run the tasks. For
 *    a batch of tile products (codelets/batch.c), whose buffers are many tiles in no
 *    fixed roles. The two classes above assume a task's buffers 0, 1, 2 are its A, B
 *    and C tiles.
 *
 * The task's StarPU priority is not part of the contract: the executor sets it so that
 * StarPU-MPI sends the tiles of earlier blocks first; the policy does not read it.
 */
#ifndef STARGEMM_CONTRACT_H
#define STARGEMM_CONTRACT_H

#include <stdint.h>

enum stargemm_prefetch_class {
	STARGEMM_PREFETCH_READY = 0,
	STARGEMM_PREFETCH_HELD = 1,
	STARGEMM_PREFETCH_ALL = 2,
};

/* Per task, read by the policy. */
struct stargemm_task_info {
	int32_t device;        /* 0..G-1 (see above); -1: another rank runs the task */
	int32_t prefetch;      /* enum stargemm_prefetch_class */
	int64_t block;         /* C block, in insertion order; -1: not held */
	int64_t chunk;         /* chunk of the work list (for traces and checks) */
	/* Written by the policy only: the task waits for a peer's copy of its A tile
	 * before prefetching (sched/ooc.c). Zero when inserted. */
	int32_t deferred;
};

/* Memory node of executor device @p g (0..G-1): the g-th CUDA worker's, or
 * STARPU_MAIN_RAM without CUDA workers (src/workers.c). */
unsigned stargemm__device_node(int g);

/* Devices of this process as the executor counts them: its CUDA workers, or 1. */
int stargemm__device_count(void);

/* Announce a task of @p block for device @p device before inserting it; a no-op unless
 * stargemm-ooc is the active policy. Returns -EINVAL (with a message) if more blocks
 * than the policy can track are in flight on one device (sched/ooc.c). */
int stargemm__sched_expect(int device, int64_t block);
/* Take back an announcement whose task could not be inserted (src/execute.c). */
void stargemm__sched_forget(int device, int64_t block);

/* For stargemm_transfers_get() (src/stats.c): with counting on (stargemm_init(), when
 * stargemm_config.count_transfers is set), the policy counts the tasks of a block that
 * workers take, of those the ones taken with an input neither on their device nor on
 * its way there (not prefetched), and the GPU tasks of a block that became ready with
 * an input they only read on none of the rank's GPUs nor on its way to one (late:
 * loaded only once the task could run). stargemm__sched_counts() reads the three, and
 * zeroes them with @p reset (stargemm_transfers_reset(), and at stargemm_finalize() for
 * a later stargemm_init()). Zero under another policy. */
void stargemm__sched_count(int on);
void stargemm__sched_counts(uint64_t *taken, uint64_t *unprefetched, uint64_t *late,
			    int reset);

#endif /* STARGEMM_CONTRACT_H */
