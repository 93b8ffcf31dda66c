/*
 * hostpool.c — the pinned host pool: host tiles carved out of pinned slabs, kept for
 * the next matrices.
 *
 * Why: with CUDA workers a matrix's own host tiles are pinned (starpu_malloc(), a
 * cudaHostAlloc each), so that copies to and from the GPUs run at the link's rate.
 * Pinning is slow: StarPU's simulator charges 0.65 ms per MiB (its estimate of
 * cudaHostAlloc, StarPU 1.3.10 src/datawizard/malloc.c), and a real cudaHostAlloc
 * costs the same order. An application that makes its C at every step (a sign
 * iteration's symbolic product, stargemm_matrix_create_product()) paid that at every
 * step: on the simulated H100, 36,000^3 at density 0.5, 6.4 s of pinning against a
 * 0.49 s product (doc/performance.md, "C made at every step").
 *
 * How: tiles are blocks of slabs (src/arena.c: best fit, freed blocks merged with
 * their free neighbours) pinned once each. A matrix about to allocate its tiles first
 * reserves their total: one slab of what the free room lacks, so that the first
 * matrix pins its own size. A tile that still fits in no slab (the free room
 * fragmented) gets a slab of a quarter of what is pinned, between 64 MiB and 1 GiB,
 * so that such slabs stay few. Slabs are not freed when they empty: the
 * next matrix takes their blocks without pinning. They are freed in
 * stargemm_finalize(), before StarPU stops (after starpu_shutdown() StarPU can no
 * longer tell pinned memory from plain). In SimGrid mode slabs are folded, as
 * src/matrix.c's tiles were (a few physical pages mapped again and again).
 *
 * Only tiles stargemm allocates (src/matrix.c) come from here; buffers StarPU
 * allocates itself (tiles received over MPI, a RAM budget's storage, packs) are
 * StarPU's, kept for reuse by keep_host_buffers() (src/runtime.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <starpu.h>

#include "arena.h"
#include "error.h"
#include "hostpool.h"
#include "settings.h"

/* Blocks start on this many bytes (cache lines, and the device pool's alignment). */
#define HOSTPOOL_ALIGN 256
/* A slab made for a tile that fits nowhere: a quarter of what is pinned, at least
 * 64 MiB (42 ms of simulated pinning) and at most 1 GiB, or the tile's size. */
#define MIN_SLAB ((size_t)64 << 20)
#define MAX_SLAB ((size_t)1 << 30)

struct slab {
	char *base;
	size_t bytes;
	struct stargemm__arena arena;
};

static struct {
	int on;                  /* set and cleared only by init and shutdown */
	starpu_pthread_mutex_t lock;  /* a simulated one in SimGrid mode (pinning sleeps) */
	struct slab *slabs;      /* sorted by base */
	int64_t nslabs, cap;
	uint64_t pinned;         /* bytes in slabs */
} hp;

#ifdef STARPU_SIMGRID
#define SLAB_FLAGS (STARPU_MALLOC_PINNED | STARPU_MALLOC_SIMULATION_FOLDED)
#else
#define SLAB_FLAGS STARPU_MALLOC_PINNED
#endif

/* ---- slabs ---------------------------------------------------------------------- */

/* The slab holding @p p, or NULL (binary search over the bases). */
static struct slab *slab_of(const char *p)
{
	int64_t lo = 0, hi = hp.nslabs - 1;

	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;
		struct slab *s = &hp.slabs[mid];

		if (p < s->base)
			hi = mid - 1;
		else if (p >= s->base + s->bytes)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

/* The size of the next slab, for a tile of @p need bytes. */
static size_t next_slab_bytes(size_t need)
{
	size_t bytes = (size_t)(hp.pinned / 4);

	bytes = bytes < MIN_SLAB ? MIN_SLAB : bytes > MAX_SLAB ? MAX_SLAB : bytes;
	return bytes < need ? need : bytes;
}

/* A new slab of @p bytes (rounded up to the alignment), in the sorted array; NULL
 * when out of memory. */
static struct slab *add_slab(size_t bytes)
{
	struct slab s = { 0 };
	int64_t at;

	bytes = (bytes + HOSTPOOL_ALIGN - 1) / HOSTPOOL_ALIGN * HOSTPOOL_ALIGN;
	if (hp.nslabs == hp.cap) {
		int64_t cap = hp.cap ? 2 * hp.cap : 16;
		struct slab *grown = realloc(hp.slabs, (size_t)cap * sizeof(*grown));

		if (!grown)
			return NULL;
		hp.slabs = grown;
		hp.cap = cap;
	}
	if (starpu_malloc_flags((void **)&s.base, bytes, SLAB_FLAGS) != 0 || !s.base)
		return NULL;
	if (stargemm__arena_init(&s.arena, bytes, HOSTPOOL_ALIGN) != 0) {
		starpu_free_flags(s.base, bytes, SLAB_FLAGS);
		return NULL;
	}
	s.bytes = bytes;
	for (at = hp.nslabs; at > 0 && hp.slabs[at - 1].base > s.base; at--)
		hp.slabs[at] = hp.slabs[at - 1];
	hp.slabs[at] = s;
	hp.nslabs++;
	hp.pinned += bytes;
	return &hp.slabs[at];
}

static void free_slab(struct slab *s)
{
	stargemm__arena_destroy(&s->arena);
	starpu_free_flags(s->base, s->bytes, SLAB_FLAGS);
	hp.pinned -= s->bytes;
}

void stargemm__host_reserve(size_t bytes, int64_t ntiles)
{
	size_t room = 0, need;

	if (!hp.on || bytes == 0)
		return;
	need = bytes + (size_t)ntiles * HOSTPOOL_ALIGN;
	starpu_pthread_mutex_lock(&hp.lock);
	for (int64_t i = 0; i < hp.nslabs; i++)
		room += hp.slabs[i].arena.capacity - hp.slabs[i].arena.used;
	if (room < need)
		add_slab(need - room);
	starpu_pthread_mutex_unlock(&hp.lock);
}

/* ---- tiles ---------------------------------------------------------------------- */

/* A block of @p bytes from the slab with the least room that holds it (fewer slabs
 * touched), or from a new slab. */
static int take(void **p, size_t bytes)
{
	struct slab *best = NULL;
	size_t best_room = 0, off;

	for (int64_t i = 0; i < hp.nslabs; i++) {
		size_t room = stargemm__arena_largest(&hp.slabs[i].arena);

		if (room >= bytes && (!best || room < best_room)) {
			best = &hp.slabs[i];
			best_room = room;
		}
	}
	if (!best && !(best = add_slab(next_slab_bytes(bytes))))
		return -ENOMEM;
	if (stargemm__arena_alloc(&best->arena, bytes, &off) != 0)
		return -ENOMEM;
	*p = best->base + off;
	return 0;
}

int stargemm__host_alloc(void **p, size_t bytes)
{
	int ret;

	*p = NULL;
	if (!hp.on) {
#ifdef STARPU_SIMGRID
		return starpu_malloc_flags(p, bytes, SLAB_FLAGS) ? -ENOMEM : 0;
#else
		return starpu_malloc(p, bytes) ? -ENOMEM : 0;
#endif
	}
	starpu_pthread_mutex_lock(&hp.lock);
	ret = take(p, bytes);
	starpu_pthread_mutex_unlock(&hp.lock);
	return ret;
}

void stargemm__host_free(void *p, size_t bytes)
{
	struct slab *s = NULL;
	int ret = -EINVAL;

	if (!p)
		return;
	if (hp.on) {
		starpu_pthread_mutex_lock(&hp.lock);
		if ((s = slab_of(p)) != NULL)
			ret = stargemm__arena_free(&s->arena, (size_t)((char *)p - s->base),
						   bytes);
		starpu_pthread_mutex_unlock(&hp.lock);
		STARPU_ASSERT_MSG(s && ret == 0, "stargemm: host tile %p of %zu bytes is not a "
				  "live block of the pinned host pool", p, bytes);
		return;
	}
#ifdef STARPU_SIMGRID
	starpu_free_flags(p, bytes, SLAB_FLAGS);
#else
	starpu_free(p);
#endif
}

/* ---- set-up --------------------------------------------------------------------- */

int stargemm__hostpool_init(void)
{
	double setting;
	int ret = stargemm__setting(STARGEMM__HOST_POOL, &setting);

	hp.on = 0;
	if (ret || setting == 0 || starpu_cuda_worker_get_count() == 0)
		return ret;
	starpu_pthread_mutex_init(&hp.lock, NULL);
	hp.on = 1;
	return 0;
}

void stargemm__hostpool_shutdown(void)
{
	if (!hp.on)
		return;
	for (int64_t i = 0; i < hp.nslabs; i++) {
		if (hp.slabs[i].arena.nblocks == 0)
			free_slab(&hp.slabs[i]);
		else
			stargemm__arena_destroy(&hp.slabs[i].arena);  /* left to the process */
	}
	free(hp.slabs);
	hp.slabs = NULL;
	hp.nslabs = hp.cap = 0;
	hp.pinned = 0;
	hp.on = 0;
	starpu_pthread_mutex_destroy(&hp.lock);
}
