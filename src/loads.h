/*
 * loads.h — the loads of a work list's chunks on a GPU, asked of StarPU a few at a time
 * and in the list's order (src/loads.c), for the executor (src/execute.c).
 *
 * StarPU 1.3 keeps up to 20 requests of a memory node under way and serves the rest
 * by priority; a task's own requests (its C tile's buffer, a tile it needs now) wait
 * behind them. Given every load of the lookahead window at once, the tasks of the
 * chunk about to run waited for the loads of the chunks after it. Metered, the loads
 * still keep the link busy (a few in flight, at most LOADS_WINDOW_BYTES), in chunk
 * order, and a task's requests get through at once (doc/performance.md, "Metered
 * loads").
 */
#ifndef STARGEMM_LOADS_H
#define STARGEMM_LOADS_H

#include <stdint.h>
#include <starpu.h>

struct stargemm__loads;

/* A meter with room for @p capacity loads waiting their turn (more are asked for at
 * once, unmetered). 0 or -ENOMEM. */
int stargemm__loads_new(int64_t capacity, struct stargemm__loads **out);

/* Load @p handle onto memory node @p node for chunk @p chunk, after the loads pushed
 * before it. A load of a chunk already done (stargemm__loads_chunk_done()) when its
 * turn comes is dropped: its tasks fetched the tile themselves. */
void stargemm__loads_push(struct stargemm__loads *l, starpu_data_handle_t handle,
			  unsigned node, int64_t chunk);

/* Chunks up to @p chunk are done: their loads not asked for yet are dropped. */
void stargemm__loads_chunk_done(struct stargemm__loads *l, int64_t chunk);

/* The loads asked of StarPU so far (not those dropped, nor those beyond the capacity). */
int64_t stargemm__loads_asked(struct stargemm__loads *l);

/* Drop the loads not asked for yet and wait for those under way (once every task is
 * done, before the handles may go), then free the meter. NULL: nothing. */
void stargemm__loads_free(struct stargemm__loads *l);

#endif
