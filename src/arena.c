/*
 * arena.c — a best-fit sub-allocator of one range of bytes (declared in src/arena.h).
 *
 * Why: StarPU 1.3 gives a load a device buffer freed by another tile only when both
 * have the same shape, so with irregular tiles nearly every load on a full GPU frees a
 * buffer (cudaFree, which synchronises the device) and allocates another (cudaMalloc).
 * The device pool (src/pool.c) allocates each GPU's memory once and places the tiles
 * in it with this arena, whatever their shapes.
 *
 * How: a sorted array of free ranges. A block comes from the smallest range that holds
 * it (best fit keeps the large ranges whole for large tiles), cut from its start; a
 * freed block merges with the free ranges around it, so that a range is never next to
 * another. Tiles are few (hundreds to a few thousands per GPU), so the linear scan of
 * an allocation and the memmove of a free cost microseconds, against the milliseconds
 * of the loads they serve.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

int stargemm__arena_init(struct stargemm__arena *a, size_t capacity, size_t align)
{
	memset(a, 0, sizeof(*a));
	if (align == 0 || (align & (align - 1)) != 0)
		return -EINVAL;
	a->align = align;
	a->capacity = capacity & ~(align - 1);
	a->cap = 2;
	a->free = malloc((size_t)a->cap * sizeof(*a->free));
	if (!a->free)
		return -ENOMEM;
	if (a->capacity > 0) {
		a->free[0].off = 0;
		a->free[0].len = a->capacity;
		a->nfree = 1;
	}
	return 0;
}

void stargemm__arena_destroy(struct stargemm__arena *a)
{
	free(a->free);
	memset(a, 0, sizeof(*a));
}

/* 0 when the rounded size does not fit in a size_t. */
size_t stargemm__arena_rounded(const struct stargemm__arena *a, size_t size)
{
	size_t s = size ? size : 1;

	if (s > SIZE_MAX - (a->align - 1))
		return 0;
	return (s + a->align - 1) & ~(a->align - 1);
}

/* Room in the free-range array for the ranges that one more live block can separate
 * (see struct stargemm__arena). */
static int room_for_block(struct stargemm__arena *a)
{
	int64_t need = a->nblocks + 2, more = 2 * a->cap;
	struct stargemm__arena_range *grown;

	if (need <= a->cap)
		return 0;
	if (more < need)
		more = need;
	grown = realloc(a->free, (size_t)more * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	a->free = grown;
	a->cap = more;
	return 0;
}

/* The smallest free range of at least @p len bytes, the lowest of equal ones; -1: none. */
static int64_t best_fit(const struct stargemm__arena *a, size_t len)
{
	int64_t best = -1;

	for (int64_t i = 0; i < a->nfree; i++)
		if (a->free[i].len >= len && (best < 0 || a->free[i].len < a->free[best].len))
			best = i;
	return best;
}

static void remove_range(struct stargemm__arena *a, int64_t i)
{
	memmove(&a->free[i], &a->free[i + 1], (size_t)(a->nfree - i - 1) * sizeof(*a->free));
	a->nfree--;
}

int stargemm__arena_alloc(struct stargemm__arena *a, size_t size, size_t *off)
{
	size_t len = stargemm__arena_rounded(a, size);
	int64_t i = len ? best_fit(a, len) : -1;

	if (i < 0 || room_for_block(a) != 0)
		return -ENOMEM;
	*off = a->free[i].off;
	a->free[i].off += len;
	a->free[i].len -= len;
	if (a->free[i].len == 0)
		remove_range(a, i);
	a->used += len;
	a->nblocks++;
	return 0;
}

/* The index of the first free range that starts after @p off (nfree: none). */
static int64_t first_after(const struct stargemm__arena *a, size_t off)
{
	int64_t lo = 0, hi = a->nfree;

	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (a->free[mid].off > off)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Whether [off, off + len) can be a live block: inside the arena, aligned, clear of
 * the free ranges before and after it (free range @p i is the first after it). */
static int is_live(const struct stargemm__arena *a, size_t off, size_t len, int64_t i)
{
	if (len == 0 || a->nblocks == 0 || (off & (a->align - 1)) != 0 ||
	    off > a->capacity || len > a->capacity - off)
		return 0;
	if (i > 0 && a->free[i - 1].off + a->free[i - 1].len > off)
		return 0;
	return i == a->nfree || off + len <= a->free[i].off;
}

/* Make [off, off + len) free, before free range @p i: merged with the ranges it
 * touches, or a range of its own (the array has room: see room_for_block()). */
static void insert_range(struct stargemm__arena *a, int64_t i, size_t off, size_t len)
{
	struct stargemm__arena_range *prev = i > 0 ? &a->free[i - 1] : NULL;
	int joins_prev = prev && prev->off + prev->len == off;
	int joins_next = i < a->nfree && off + len == a->free[i].off;

	if (joins_prev && joins_next) {
		prev->len += len + a->free[i].len;
		remove_range(a, i);
	} else if (joins_prev) {
		prev->len += len;
	} else if (joins_next) {
		a->free[i].off = off;
		a->free[i].len += len;
	} else {
		memmove(&a->free[i + 1], &a->free[i], (size_t)(a->nfree - i) * sizeof(*a->free));
		a->free[i].off = off;
		a->free[i].len = len;
		a->nfree++;
	}
}

int stargemm__arena_free(struct stargemm__arena *a, size_t off, size_t size)
{
	size_t len = stargemm__arena_rounded(a, size);
	int64_t i = first_after(a, off);

	if (!is_live(a, off, len, i))
		return -EINVAL;
	insert_range(a, i, off, len);
	a->used -= len;
	a->nblocks--;
	return 0;
}

size_t stargemm__arena_largest(const struct stargemm__arena *a)
{
	size_t largest = 0;

	for (int64_t i = 0; i < a->nfree; i++)
		if (a->free[i].len > largest)
			largest = a->free[i].len;
	return largest;
}
