/*
 * hostpool.h — the pinned host pool (src/hostpool.c): with CUDA workers, the host
 * tiles stargemm allocates (a matrix's own storage, not a user's array) and the pinned
 * host buffers StarPU allocates (received tiles above all) are carved out of pinned
 * slabs kept until stargemm_finalize(), so that a matrix made after another was
 * destroyed (a product's C at each step of an iteration), or a received tile of a
 * shape not seen before, pins nothing again.
 */
#ifndef STARGEMM_HOSTPOOL_H
#define STARGEMM_HOSTPOOL_H

#include <stddef.h>
#include <stdint.h>

/* After StarPU has started: the pool is on when the runtime has CUDA workers,
 * STARGEMM_HOST_POOL is not 0 (its default: 1) and StarPU may pin
 * (STARPU_DISABLE_PINNING unset or 0); then, unless StarPU has several NUMA memory
 * nodes, StarPU's host allocations go through it (starpu_malloc_set_hooks()). -EINVAL
 * (with the error set) for a bad setting. */
int stargemm__hostpool_init(void);
/* After StarPU has stopped (it gives its buffers back through the pool): StarPU's
 * allocator is its own again, the slabs without a live block are freed, a slab still
 * holding one (a matrix not destroyed) is left to the process. The pool is off
 * afterwards. */
void stargemm__hostpool_shutdown(void);
/* A host tile of @p bytes: from the pool when it is on, else starpu_malloc()'s (pinned
 * by StarPU when it has CUDA workers; folded in SimGrid mode). 0, or -ENOMEM. */
int stargemm__host_alloc(void **p, size_t bytes);
/* Before @p ntiles tiles of @p bytes in all are allocated (a matrix's own): when the
 * pool is on and its free room is smaller, one slab of what lacks, so that the first
 * matrix is pinned at its size and not in ever larger slabs. Best effort: a slab
 * that cannot be made is left to the tiles' allocations. */
void stargemm__host_reserve(size_t bytes, int64_t ntiles);
/* Give back a tile of stargemm__host_alloc(), with the size it was asked with. */
void stargemm__host_free(void *p, size_t bytes);
/* Before StarPU starts: whether StarPU's buffers will come from the pool, given CUDA
 * workers (STARGEMM_HOST_POOL not 0, pinning not disabled, no STARPU_USE_NUMA), so
 * that freeing one costs nothing and no host budget is needed to keep them. */
int stargemm__hostpool_serves_buffers(void);
/* Bytes of StarPU's buffers now live in the pool (as StarPU asked for them); 0 when
 * StarPU's allocations do not come here. */
uint64_t stargemm__hostpool_buffers_used(void);
/* What receiving costs a rank with GPUs: *rate, the bytes per second the pool pinned
 * its slabs at so far (pinning 16 MiB for StarPU's buffers first when it pinned none;
 * without the pool, StarPU's rate on such a buffer, measured once; 0 when that
 * failed); *room, the bytes the pool's slabs for StarPU's buffers hold free (a
 * received tile there pins nothing; 0 without the pool). A rank with CUDA workers. */
void stargemm__hostpool_pinning(double *rate, double *room);

#endif
