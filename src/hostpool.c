/*
 * hostpool.c — pinned host memory carved out of slabs pinned once and kept: the host
 * tiles of stargemm's matrices, and the host buffers StarPU allocates itself.
 *
 * Why: with CUDA workers host memory is pinned, so that copies to and from the GPUs
 * run at the link's rate. Pinning is slow: StarPU's simulator charges 0.65 ms per MiB
 * (its estimate of cudaHostAlloc, StarPU 1.3.10 src/datawizard/malloc.c), and a real
 * cudaHostAlloc costs the same order. An application that makes its C at every step
 * (a sign iteration's symbolic product, stargemm_matrix_create_product()) paid that at
 * every step: on the simulated H100, 36,000^3 at density 0.5, 6.4 s of pinning against
 * a 0.49 s product (doc/performance.md, "C made at every step"). StarPU pins a buffer
 * for every tile a rank receives over MPI and keeps a freed one only for a tile of the
 * same shape, which irregular tiles seldom have: on a simulated 4 x 4 Summit-like
 * cluster, pinning received tiles took three quarters of a block-sparse product's
 * time (doc/out-of-core.md, "Block-sparse at scale").
 *
 * How: two pools of slabs, each block of a slab handed out by an arena (src/arena.c:
 * best fit, freed blocks merged with their free neighbours):
 *   - tiles: a matrix's own host tiles (src/matrix.c). A matrix about to allocate its
 *     tiles first reserves their total: one slab of what the free room lacks, so that
 *     the first matrix pins its own size. In SimGrid mode these slabs are folded, as
 *     src/matrix.c's tiles were (a few physical pages mapped again and again).
 *   - buffers: every pinned host allocation StarPU makes while stargemm runs (received
 *     tiles, a RAM budget's storage, packs, starpu_malloc()), through
 *     starpu_malloc_set_hooks(). Their contents are real in SimGrid mode too (SMPI
 *     copies received tiles into them). Each live block's size is kept in a tree
 *     by address: starpu_free() gives none.
 * A block that fits in no slab gets a new slab, pinned while other threads go on
 * (MIN_SLAB below). Slabs are not freed when they empty: the next matrix, the next
 * received tile takes their blocks without pinning. Empty slabs are freed in
 * stargemm_finalize(), after StarPU has stopped and given its buffers back; a slab
 * still holding a block is left to the process.
 *
 * The hooks replace StarPU's allocator as a whole, so this file pins by itself
 * (cudaHostAlloc; in SimGrid mode StarPU's simulated cost, then a plain or a folded
 * allocation), makes StarPU's unpinned allocations as StarPU would (aligned malloc,
 * SMPI's folded memory) and gives back memory StarPU allocated before the hooks as
 * StarPU would have. With several NUMA memory nodes (STARPU_USE_NUMA) StarPU binds
 * host buffers to their node, which the hooks would not do: there they are not
 * installed and StarPU pins its own buffers.
 */
#define _GNU_SOURCE  /* tdestroy() */
#include <errno.h>
#include <search.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <starpu.h>
#if defined(STARPU_SIMGRID)
#include <smpi/smpi.h>
#elif defined(STARPU_USE_CUDA)
#include <cuda_runtime.h>
#endif

#include "arena.h"
#include "error.h"
#include "hostpool.h"
#include "settings.h"

/* Blocks start on this many bytes (cache lines, and the device pool's alignment). */
#define HOSTPOOL_ALIGN 256
/* A slab made for a block that fits nowhere: a share of what its pool has pinned, at
 * most 1 GiB, in whole blocks of the one asked for (tiles of one shape leave no tail
 * too short for another), or that block.
 *   - tiles: a quarter, at least 64 MiB (42 ms of simulated pinning); a matrix has
 *     reserved its total before (stargemm__host_reserve()), so such slabs are few.
 *   - buffers: an eighth, no least size: a received tile waits for the pinning of
 *     about its own size. On a simulated 2 x 2 grid (12,288^3, tiles of 1024) the
 *     first product takes 0.1265 s so, as with StarPU pinning each buffer, and took
 *     0.161 s with 64 MiB slabs, 0.131 s with slabs not in whole blocks; the warm
 *     block-sparse product of a 4 x 4 grid (40,000^3, tiles of 512-2048) takes
 *     0.157 s, 0.148 s with slabs not in whole blocks, 0.169 s with slabs of the
 *     block's size alone (freed blocks then hold fewer of the next tiles). */
#define MIN_SLAB ((size_t)64 << 20)
#define MAX_SLAB ((size_t)1 << 30)
/* StarPU's unpinned host allocations are aligned on cache lines. */
#define PLAIN_ALIGN 64

struct slab {
	char *base;
	size_t bytes;
	struct stargemm__arena arena;
};

struct pool {
	int folded;              /* SimGrid mode: folded slabs (contents never read) */
	size_t min_slab;         /* a slab made for a block that fits nowhere: at least */
	int share;               /* this, and this share of what the pool has pinned */
	struct slab *slabs;      /* sorted by base */
	int64_t nslabs, cap;
	uint64_t pinned;         /* bytes in slabs */
};

/* A live buffer of StarPU's, in the tree of live buffers. */
struct buffer {
	char *p;
	size_t bytes;            /* asked for */
};

static struct {
	int on;                  /* set and cleared only by init and shutdown */
	int hooked;              /* StarPU's host allocations come here */
	int charge;              /* SimGrid mode: pinning takes simulated time */
	_Atomic uint64_t live;   /* bytes in StarPU's live buffers (as asked) */
	void *live_buffers;      /* tsearch() tree of struct buffer, by address */
	starpu_pthread_mutex_t lock;  /* a simulated one in SimGrid mode (pinning sleeps) */
	struct pool tiles, buffers;
	double pinned_bytes, pin_us;   /* all slabs pinned, and the time it took (µs) */
} hp;

/* ---- pinning -------------------------------------------------------------------- */

/* @p bytes of pinned host memory (folded in SimGrid mode when @p folded), or NULL. */
static void *pin(size_t bytes, int folded)
{
	void *p = NULL;

#if defined(STARPU_SIMGRID)
	if (hp.charge)
		starpu_sleep((float)((double)bytes * 0.000650 / 1048576.0));
	if (folded)
		return SMPI_SHARED_MALLOC(bytes);
	return posix_memalign(&p, HOSTPOOL_ALIGN, bytes) == 0 ? p : NULL;
#elif defined(STARPU_USE_CUDA)
	(void)folded;
	return cudaHostAlloc(&p, bytes, cudaHostAllocPortable) == cudaSuccess ? p : NULL;
#else
	(void)bytes;
	(void)folded;
	return p;  /* the pool is on only with CUDA workers */
#endif
}

static void unpin(void *p, int folded)
{
#if defined(STARPU_SIMGRID)
	if (folded)
		SMPI_SHARED_FREE(p);
	else
		free(p);
#elif defined(STARPU_USE_CUDA)
	(void)folded;
	cudaFreeHost(p);
#else
	(void)p;
	(void)folded;
#endif
}

/* ---- slabs ---------------------------------------------------------------------- */

/* The slab of @p pool holding @p p, or NULL (binary search over the bases). */
static struct slab *slab_of(struct pool *pool, const char *p)
{
	int64_t lo = 0, hi = pool->nslabs - 1;

	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;
		struct slab *s = &pool->slabs[mid];

		if (p < s->base)
			hi = mid - 1;
		else if (p >= s->base + s->bytes)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

/* The size of the next slab of @p pool, for a block of @p need bytes. */
static size_t next_slab_bytes(const struct pool *pool, size_t need)
{
	size_t bytes = (size_t)(pool->pinned / pool->share);
	size_t block = (need + HOSTPOOL_ALIGN - 1) / HOSTPOOL_ALIGN * HOSTPOOL_ALIGN;

	bytes = bytes < pool->min_slab ? pool->min_slab : bytes > MAX_SLAB ? MAX_SLAB : bytes;
	/* whole blocks of this size: tiles of one shape (dense) leave no unusable tail */
	return bytes < block ? block : bytes / block * block;
}

/* Puts the pinned range @p base of @p bytes in @p pool's sorted array as a slab; 0,
 * or -ENOMEM. The caller holds the lock. */
static int insert_slab(struct pool *pool, char *base, size_t bytes)
{
	struct slab s = { .base = base, .bytes = bytes };
	int64_t at;

	if (pool->nslabs == pool->cap) {
		int64_t cap = pool->cap ? 2 * pool->cap : 16;
		struct slab *grown = realloc(pool->slabs, (size_t)cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		pool->slabs = grown;
		pool->cap = cap;
	}
	if (stargemm__arena_init(&s.arena, bytes, HOSTPOOL_ALIGN) != 0)
		return -ENOMEM;
	for (at = pool->nslabs; at > 0 && pool->slabs[at - 1].base > s.base; at--)
		pool->slabs[at] = pool->slabs[at - 1];
	pool->slabs[at] = s;
	pool->nslabs++;
	pool->pinned += bytes;
	return 0;
}

/* A new slab of @p bytes (rounded up to the alignment) in @p pool; 0, or -ENOMEM. The
 * caller holds the lock, which is let go while the slab is pinned: other threads
 * take blocks meanwhile, or pin slabs of their own, as they would pin their buffers
 * side by side without the pool (a 2 x 2 simulated grid's first product took 0.172 s
 * instead of 0.127 s while every allocation waited for one pinning). */
static int add_slab(struct pool *pool, size_t bytes)
{
	char *base;
	double t0;

	bytes = (bytes + HOSTPOOL_ALIGN - 1) / HOSTPOOL_ALIGN * HOSTPOOL_ALIGN;
	starpu_pthread_mutex_unlock(&hp.lock);
	t0 = starpu_timing_now();
	base = pin(bytes, pool->folded);
	starpu_pthread_mutex_lock(&hp.lock);
	if (!base)
		return -ENOMEM;
	hp.pinned_bytes += (double)bytes;
	hp.pin_us += starpu_timing_now() - t0;
	if (insert_slab(pool, base, bytes) != 0) {
		unpin(base, pool->folded);
		return -ENOMEM;
	}
	return 0;
}

/* Frees @p pool's empty slabs and forgets the others (left to the process). */
static void drop_slabs(struct pool *pool)
{
	for (int64_t i = 0; i < pool->nslabs; i++) {
		if (pool->slabs[i].arena.nblocks == 0)
			unpin(pool->slabs[i].base, pool->folded);
		stargemm__arena_destroy(&pool->slabs[i].arena);
	}
	free(pool->slabs);
	pool->slabs = NULL;
	pool->nslabs = pool->cap = 0;
	pool->pinned = 0;
}

/* The slab of @p pool with the least room that holds @p bytes (fewer slabs touched),
 * or NULL. */
static struct slab *best_fit(struct pool *pool, size_t bytes)
{
	struct slab *best = NULL;
	size_t best_room = 0;

	for (int64_t i = 0; i < pool->nslabs; i++) {
		size_t room = stargemm__arena_largest(&pool->slabs[i].arena);

		if (room >= bytes && (!best || room < best_room)) {
			best = &pool->slabs[i];
			best_room = room;
		}
	}
	return best;
}

/* A block of @p bytes of @p pool, from the best fitting slab or from a new one. The
 * caller holds the lock (let go while a slab is pinned). */
static int take(struct pool *pool, void **p, size_t bytes)
{
	struct slab *best;
	size_t off;

	while (!(best = best_fit(pool, bytes)))
		if (add_slab(pool, next_slab_bytes(pool, bytes)) != 0)
			return -ENOMEM;
	if (stargemm__arena_alloc(&best->arena, bytes, &off) != 0)
		return -ENOMEM;
	*p = best->base + off;
	return 0;
}

/* Gives back the block at @p p of @p bytes to @p pool; 0, or -EINVAL when @p p is not
 * a live block of it. The caller holds the lock. */
static int give(struct pool *pool, void *p, size_t bytes)
{
	struct slab *s = slab_of(pool, p);

	if (!s)
		return -EINVAL;
	return stargemm__arena_free(&s->arena, (size_t)((char *)p - s->base), bytes);
}

/* ---- tiles ---------------------------------------------------------------------- */

void stargemm__host_reserve(size_t bytes, int64_t ntiles)
{
	size_t room = 0, need;

	if (!hp.on || bytes == 0)
		return;
	need = bytes + (size_t)ntiles * HOSTPOOL_ALIGN;
	starpu_pthread_mutex_lock(&hp.lock);
	for (int64_t i = 0; i < hp.tiles.nslabs; i++)
		room += hp.tiles.slabs[i].arena.capacity - hp.tiles.slabs[i].arena.used;
	if (room < need)
		add_slab(&hp.tiles, need - room);
	starpu_pthread_mutex_unlock(&hp.lock);
}

#ifdef STARPU_SIMGRID
#define TILE_FLAGS (STARPU_MALLOC_PINNED | STARPU_MALLOC_SIMULATION_FOLDED)
#else
#define TILE_FLAGS STARPU_MALLOC_PINNED
#endif

int stargemm__host_alloc(void **p, size_t bytes)
{
	int ret;

	*p = NULL;
	if (!hp.on)
		return starpu_malloc_flags(p, bytes, TILE_FLAGS) ? -ENOMEM : 0;
	starpu_pthread_mutex_lock(&hp.lock);
	ret = take(&hp.tiles, p, bytes);
	starpu_pthread_mutex_unlock(&hp.lock);
	return ret;
}

void stargemm__host_free(void *p, size_t bytes)
{
	int ret;

	if (!p)
		return;
	if (!hp.on) {
		starpu_free_flags(p, bytes, TILE_FLAGS);
		return;
	}
	starpu_pthread_mutex_lock(&hp.lock);
	ret = give(&hp.tiles, p, bytes);
	starpu_pthread_mutex_unlock(&hp.lock);
	STARPU_ASSERT_MSG(ret == 0, "stargemm: host tile %p of %zu bytes is not a live "
			  "block of the pinned host pool", p, bytes);
}

/* ---- StarPU's host buffers ------------------------------------------------------ */

/* An allocation StarPU would not pin: aligned malloc, or SMPI's folded memory. */
static int plain_alloc(void **p, size_t bytes, int flags)
{
#ifdef STARPU_SIMGRID
	if (flags & STARPU_MALLOC_SIMULATION_FOLDED)
		return (*p = SMPI_SHARED_MALLOC(bytes)) ? 0 : -ENOMEM;
#else
	(void)flags;
#endif
	if (posix_memalign(p, PLAIN_ALIGN, bytes ? bytes : 1) != 0) {
		*p = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Memory that is no buffer of the pool: StarPU's own from before the hooks (pinned by
 * CUDA or not), or plain_alloc()'s. */
static void plain_free(void *p, int flags)
{
#if defined(STARPU_SIMGRID)
	if (flags & STARPU_MALLOC_SIMULATION_FOLDED) {
		SMPI_SHARED_FREE(p);
		return;
	}
#elif defined(STARPU_USE_CUDA)
	struct cudaPointerAttributes at;

	if (cudaPointerGetAttributes(&at, p) == cudaSuccess && at.type == cudaMemoryTypeHost) {
		cudaFreeHost(p);
		return;
	}
	cudaGetLastError();  /* a plain pointer is no error of the application's */
#endif
	(void)flags;
	free(p);
}

/* Orders live buffers by address (tsearch()). */
static int by_address(const void *a, const void *b)
{
	const char *x = ((const struct buffer *)a)->p, *y = ((const struct buffer *)b)->p;

	return x < y ? -1 : x > y;
}

/* StarPU's malloc hook: a pinned request is a block of the buffers pool, recorded
 * with its size; any other is plain. */
static int buffer_alloc(unsigned node, void **p, size_t bytes, int flags)
{
	struct buffer *b;
	int ret;

	(void)node;
	*p = NULL;
	if (!(flags & STARPU_MALLOC_PINNED))
		return plain_alloc(p, bytes, flags);
	if (!(b = malloc(sizeof(*b))))
		return -ENOMEM;
	b->bytes = bytes;
	starpu_pthread_mutex_lock(&hp.lock);
	ret = take(&hp.buffers, (void **)&b->p, bytes);
	if (ret == 0 && !tsearch(b, &hp.live_buffers, by_address)) {
		give(&hp.buffers, b->p, bytes);
		ret = -ENOMEM;
	}
	starpu_pthread_mutex_unlock(&hp.lock);
	if (ret != 0) {
		free(b);
		return ret;
	}
	atomic_fetch_add(&hp.live, bytes);
	*p = b->p;
	return 0;
}

/* StarPU's free hook: a buffer of the pool goes back to it with its recorded size
 * (starpu_free() gives none); any other pointer is plain. */
static int buffer_free(unsigned node, void *p, size_t bytes, int flags)
{
	struct buffer key = { .p = p }, *b = NULL;
	void *found;
	int ret = 0;

	(void)node;
	(void)bytes;
	if (!p)
		return 0;
	starpu_pthread_mutex_lock(&hp.lock);
	if ((found = tfind(&key, &hp.live_buffers, by_address)) != NULL) {
		b = *(struct buffer **)found;
		tdelete(&key, &hp.live_buffers, by_address);
		ret = give(&hp.buffers, b->p, b->bytes);
		atomic_fetch_sub(&hp.live, b->bytes);
	}
	starpu_pthread_mutex_unlock(&hp.lock);
	if (!b) {
		STARPU_ASSERT_MSG(!slab_of(&hp.buffers, p), "stargemm: host buffer %p is not a "
				  "live block of the pinned host pool (freed twice?)", p);
		plain_free(p, flags);
		return 0;
	}
	STARPU_ASSERT_MSG(ret == 0, "stargemm: host buffer %p of %zu bytes is not a live "
			  "block of the pinned host pool", p, b->bytes);
	free(b);
	return 0;
}

/* ---- set-up --------------------------------------------------------------------- */

/* Whether the settings allow the pool (STARGEMM_HOST_POOL not 0, pinning not
 * disabled) into *@p allow; 0, or -EINVAL for a bad setting. */
static int settings_allow(int *allow)
{
	double setting = 1, no_pinning = 0;
	int ret = stargemm__setting(STARGEMM__HOST_POOL, &setting);

	if (!ret)
		ret = stargemm__setting(STARGEMM__STARPU_DISABLE_PINNING, &no_pinning);
	*allow = !ret && setting != 0 && no_pinning <= 0;
	return ret;
}

int stargemm__hostpool_init(void)
{
	double charge = 1;
	int allow, ret = settings_allow(&allow);

	if (!ret)
		ret = stargemm__setting(STARGEMM__STARPU_SIMGRID_CUDA_MALLOC_COST, &charge);
	hp.on = 0;
	hp.pinned_bytes = hp.pin_us = 0.0;
	if (ret || !allow || starpu_cuda_worker_get_count() == 0)
		return ret;
	starpu_pthread_mutex_init(&hp.lock, NULL);
	hp.charge = charge != 0;
#ifdef STARPU_SIMGRID
	hp.tiles.folded = 1;
#endif
	hp.tiles.min_slab = MIN_SLAB;
	hp.tiles.share = 4;
	hp.buffers.min_slab = 0;
	hp.buffers.share = 8;
	hp.on = 1;
	if (starpu_memory_nodes_get_numa_count() <= 1) {
		starpu_malloc_set_hooks(buffer_alloc, buffer_free);
		hp.hooked = 1;
	}
	return 0;
}

void stargemm__hostpool_shutdown(void)
{
	if (!hp.on)
		return;
	if (hp.hooked) {
		starpu_malloc_set_hooks(NULL, NULL);
		hp.hooked = 0;
	}
	drop_slabs(&hp.tiles);
	drop_slabs(&hp.buffers);
	tdestroy(hp.live_buffers, free);   /* those StarPU did not give back */
	hp.live_buffers = NULL;
	hp.on = 0;
	starpu_pthread_mutex_destroy(&hp.lock);
}

int stargemm__hostpool_serves_buffers(void)
{
	double numa = 0;
	int allow;

	return settings_allow(&allow) == 0 && allow &&
	       stargemm__setting(STARGEMM__STARPU_USE_NUMA, &numa) == 0 && numa <= 0;
}

uint64_t stargemm__hostpool_buffers_used(void)
{
	return hp.hooked ? atomic_load(&hp.live) : 0;
}

/* Bytes pinned to measure the rate when nothing was pinned yet (matrices on the
 * caller's arrays, stargemm_matrix_create_local(); or the pool off): 10 ms of
 * simulated pinning. Through the pool, they stay as room for StarPU's buffers. */
#define PROBE_BYTES ((size_t)16 << 20)
/* Without the pool: the rate StarPU pinned the probe at (bytes per second; once per
 * process). */
static double unpooled_rate;

/* Pin PROBE_BYTES as StarPU pins a received tile's buffer (through the pool when its
 * hooks are in), timed, and free them; the rate into unpooled_rate without the pool. */
static void probe(void)
{
	double t0 = starpu_timing_now(), us;
	void *p = NULL;

	if (starpu_malloc_flags(&p, PROBE_BYTES, STARPU_MALLOC_PINNED) != 0)
		return;
	us = starpu_timing_now() - t0;
	starpu_free_flags(p, PROBE_BYTES, STARPU_MALLOC_PINNED);
	if (!hp.hooked && us > 0.0)
		unpooled_rate = (double)PROBE_BYTES / (us * 1e-6);
}

void stargemm__hostpool_pinning(double *rate, double *room)
{
	int measured;

	*rate = *room = 0.0;
	if (!hp.hooked) {   /* StarPU pins each buffer (and may keep one for a like tile) */
		if (unpooled_rate <= 0.0)
			probe();
		*rate = unpooled_rate;
		return;
	}
	starpu_pthread_mutex_lock(&hp.lock);
	measured = hp.pin_us > 0.0;
	starpu_pthread_mutex_unlock(&hp.lock);
	if (!measured)
		probe();
	starpu_pthread_mutex_lock(&hp.lock);
	if (hp.pin_us > 0.0)
		*rate = hp.pinned_bytes / (hp.pin_us * 1e-6);
	if ((double)hp.buffers.pinned > (double)atomic_load(&hp.live))
		*room = (double)hp.buffers.pinned - (double)atomic_load(&hp.live);
	starpu_pthread_mutex_unlock(&hp.lock);
}
