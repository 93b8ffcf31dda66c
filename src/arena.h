/*
 * arena.h — a sub-allocator of one contiguous range of bytes (src/arena.c): the logic
 * of the device buffer pool (src/pool.c), which carves tiles of any size out of one
 * allocation per GPU. Pure C, no StarPU, no locking (the caller locks); it hands out
 * offsets, never touches the memory.
 */
#ifndef STARGEMM_ARENA_H
#define STARGEMM_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* A free range of the arena: [off, off + len). */
struct stargemm__arena_range {
	size_t off, len;
};

/* capacity bytes, handed out in multiples of align. The free ranges are kept sorted by
 * offset, disjoint and never adjacent (a freed block merges with its free neighbours),
 * in an array with room for one range per live block and one more, so that a free
 * never allocates. */
struct stargemm__arena {
	size_t capacity;          /* bytes, a multiple of align */
	size_t align;             /* a power of two */
	size_t used;              /* bytes in live blocks (their rounded sizes) */
	int64_t nblocks;          /* live blocks */
	struct stargemm__arena_range *free;
	int64_t nfree, cap;
};

/* An empty arena of @p capacity bytes (rounded down to @p align, a power of two);
 * -EINVAL for a bad alignment, -ENOMEM when its bookkeeping cannot be allocated. */
int stargemm__arena_init(struct stargemm__arena *a, size_t capacity, size_t align);
void stargemm__arena_destroy(struct stargemm__arena *a);
/* The size a block of @p size bytes takes: rounded up to the alignment (at least one
 * unit). */
size_t stargemm__arena_rounded(const struct stargemm__arena *a, size_t size);
/* A block of @p size bytes: its offset in *@p off (a multiple of the alignment), taken
 * from the smallest free range that holds it (best fit; the lowest of equal ones).
 * -ENOMEM when no free range is large enough (the arena full or too fragmented). */
int stargemm__arena_alloc(struct stargemm__arena *a, size_t size, size_t *off);
/* Give back the block at @p off of @p size bytes (the size it was allocated with).
 * -EINVAL, the arena unchanged, when that range is not inside the arena or overlaps a
 * free range (freed twice, or a wrong size). */
int stargemm__arena_free(struct stargemm__arena *a, size_t off, size_t size);
/* The largest block the arena can hand out now. */
size_t stargemm__arena_largest(const struct stargemm__arena *a);

#endif
