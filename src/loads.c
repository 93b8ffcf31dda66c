/*
 * loads.c — the metered loads of src/loads.h: a queue of (tile, device, chunk) in the
 * order the executor pushes them, a few under way at a time.
 *
 * A load is an acquisition of the tile on the device in read mode, released by its own
 * callback as soon as the tile is there (starpu_data_acquire_on_node_cb), which is how
 * the meter learns that a load is done; no other way to ask StarPU 1.3 for a copy
 * tells when it ends. Without sequential consistency: the acquisition is not a task of
 * the tile's dependency graph, and the executor only meters tiles that the product
 * reads (op(A) and op(B)).
 *
 * The queue is a ring: the executor's window of chunks bounds the loads waiting in it
 * (a chunk's are pushed when it is inserted, those of a chunk done are dropped before
 * any later one is asked for). It is pumped by whoever makes room in it: the
 * executor's thread when it pushes, a load's callback when it ends (a StarPU thread,
 * or the pushing thread itself when the tile was on the device already). One pump at a time (pumping); another
 * caller leaves its room to the pump under way, which looks again before it stops.
 * The mutex is not held while StarPU is called.
 *
 * Every load of the window asked for at once ran slower than metered: the running
 * task's own requests waited behind later chunks' loads. Of windows of 16, 32 and 64
 * MiB, 32 did best over the cases of tests/sim_bsgemm.sh (doc/design.md, Decisions,
 * "Loads metered").
 */
#include <errno.h>
#include <stdlib.h>

#include "loads.h"

/* At most this many loads under way: StarPU 1.3's own limit of requests under way on
 * a memory node (MAX_PENDING_REQUESTS_PER_NODE), for tiles of a few kilobytes... */
#define LOADS_IN_FLIGHT 20
/* ... and at most this many bytes, unless none is under way (a larger tile goes alone):
 * enough to keep the link busy between two loads, few enough that a task's own request
 * waits for little. */
#define LOADS_WINDOW_BYTES (32ll << 20)

struct load {
	struct stargemm__loads *meter;
	starpu_data_handle_t handle;
	unsigned node;
	int64_t chunk;
	int64_t bytes;
};

struct stargemm__loads {
	starpu_pthread_mutex_t mutex;
	starpu_pthread_cond_t idle;   /* nothing under way and no pump running */
	struct load *queue;           /* a ring: load number i at i % capacity */
	int64_t head, tail, capacity; /* loads [head, tail) not asked for yet */
	int64_t inflight, bytes;      /* under way */
	int64_t done_through;         /* chunks up to this one are done */
	int64_t asked;                /* acquisitions asked of StarPU */
	int pumping;
};

int stargemm__loads_new(int64_t capacity, struct stargemm__loads **out)
{
	struct stargemm__loads *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (capacity < 1)
		capacity = 1;
	if (!l || !(l->queue = calloc((size_t)capacity, sizeof(*l->queue)))) {
		free(l);
		return -ENOMEM;
	}
	l->capacity = capacity;
	l->done_through = -1;
	starpu_pthread_mutex_init(&l->mutex, NULL);
	starpu_pthread_cond_init(&l->idle, NULL);
	*out = l;
	return 0;
}

/* Whether the meter is idle (called with the mutex held). */
static int idle(const struct stargemm__loads *l)
{
	return l->inflight == 0 && !l->pumping;
}

/* The load at the head may start: nothing is under way, or it stays within both
 * limits (called with the mutex held). */
static int room_for(const struct stargemm__loads *l, const struct load *x)
{
	return l->inflight == 0 ||
	       (l->inflight < LOADS_IN_FLIGHT && l->bytes + x->bytes <= LOADS_WINDOW_BYTES);
}

static void loaded(void *arg);

/* Ask for the loads at the head while there is room, dropping those of chunks already
 * done (called with the mutex held, which it lets go around each request). */
static void pump(struct stargemm__loads *l)
{
	if (l->pumping)
		return;
	l->pumping = 1;
	while (l->head < l->tail) {
		struct load *x = &l->queue[l->head % l->capacity], *away, here;

		if (x->chunk <= l->done_through) {
			l->head++;
			continue;
		}
		if (!room_for(l, x))
			break;
		l->head++;
		/* The ring's slot is reused once the load leaves it: the callback gets a
		 * copy (or, without memory for one, the load is asked for unmetered). */
		here = *x;
		away = malloc(sizeof(*away));
		if (away) {
			*away = *x;
			l->inflight++;
			l->asked++;
			l->bytes += x->bytes;
		}
		starpu_pthread_mutex_unlock(&l->mutex);
		if (away)
			starpu_data_acquire_on_node_cb_sequential_consistency(
				away->handle, (int)away->node, STARPU_R, loaded, away, 0);
		else
			starpu_data_fetch_on_node(here.handle, here.node, 1);
		starpu_pthread_mutex_lock(&l->mutex);
	}
	l->pumping = 0;
	if (idle(l))
		starpu_pthread_cond_broadcast(&l->idle);
}

/* A load's callback: the tile is on the device; let it go, and make room. */
static void loaded(void *arg)
{
	struct load *x = arg;
	struct stargemm__loads *l = x->meter;

	starpu_data_release_on_node(x->handle, (int)x->node);
	starpu_pthread_mutex_lock(&l->mutex);
	l->inflight--;
	l->bytes -= x->bytes;
	free(x);
	pump(l);
	if (idle(l))
		starpu_pthread_cond_broadcast(&l->idle);
	starpu_pthread_mutex_unlock(&l->mutex);
}

void stargemm__loads_push(struct stargemm__loads *l, starpu_data_handle_t handle,
			  unsigned node, int64_t chunk)
{
	int full;

	starpu_pthread_mutex_lock(&l->mutex);
	if (!(full = l->tail - l->head >= l->capacity)) {
		l->queue[l->tail++ % l->capacity] = (struct load){ l, handle, node, chunk,
						(int64_t)starpu_data_get_size(handle) };
		pump(l);
	}
	starpu_pthread_mutex_unlock(&l->mutex);
	if (full)   /* more than the executor said: asked for at once, unmetered */
		starpu_data_fetch_on_node(handle, node, 1);
}

void stargemm__loads_chunk_done(struct stargemm__loads *l, int64_t chunk)
{
	starpu_pthread_mutex_lock(&l->mutex);
	if (chunk > l->done_through)
		l->done_through = chunk;
	starpu_pthread_mutex_unlock(&l->mutex);
}

int64_t stargemm__loads_asked(struct stargemm__loads *l)
{
	int64_t asked;

	starpu_pthread_mutex_lock(&l->mutex);
	asked = l->asked;
	starpu_pthread_mutex_unlock(&l->mutex);
	return asked;
}

void stargemm__loads_free(struct stargemm__loads *l)
{
	if (!l)
		return;
	starpu_pthread_mutex_lock(&l->mutex);
	l->head = l->tail;
	while (!idle(l))
		starpu_pthread_cond_wait(&l->idle, &l->mutex);
	starpu_pthread_mutex_unlock(&l->mutex);
	starpu_pthread_mutex_destroy(&l->mutex);
	starpu_pthread_cond_destroy(&l->idle);
	free(l->queue);
	free(l);
}
