/*
 * hostpool.h — the pinned host pool (src/hostpool.c): with CUDA workers, the host
 * tiles stargemm allocates (a matrix's own storage, not a user's array) are carved out
 * of pinned slabs kept until stargemm_finalize(), so that a matrix made after another
 * was destroyed (a product's C at each step of an iteration) pins nothing again.
 */
#ifndef STARGEMM_HOSTPOOL_H
#define STARGEMM_HOSTPOOL_H

#include <stddef.h>
#include <stdint.h>

/* After StarPU has started: the pool is on when the runtime has CUDA workers and
 * STARGEMM_HOST_POOL is not 0 (its default: 1). -EINVAL (with the error set) for a bad
 * STARGEMM_HOST_POOL. */
int stargemm__hostpool_init(void);
/* Before StarPU stops (pinned memory is given back through it): the slabs without a
 * live tile are freed; a slab still holding a tile of a matrix not destroyed is left
 * to the process. The pool is off afterwards. */
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

#endif
