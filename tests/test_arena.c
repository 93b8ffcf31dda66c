/*
 * tests/test_arena.c — unit tests of the sub-allocator behind the device buffer pool
 * (src/arena.c; src/pool.c places GPU tiles with it): no MPI, no StarPU run. TAP output.
 *
 * Properties checked:
 *  - blocks fill the arena exactly, then one more is refused; sizes are rounded up to
 *    the alignment and offsets aligned;
 *  - fragmentation: free bytes in separate ranges do not make a larger block;
 *  - a freed block merges with the free ranges on either side, in any order of frees,
 *    back to one range of the whole arena;
 *  - best fit: a block goes to the smallest range that holds it;
 *  - refusals leave the arena unchanged: a block larger than any range, a range freed
 *    twice, a misaligned or out-of-range free;
 *  - random allocations and frees of tile-like sizes against a model of the bytes:
 *    live blocks never overlap each other or a free range, free ranges stay sorted,
 *    disjoint and apart, and used + free = capacity throughout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "tap.h"



static void describe(const struct stargemm__arena *a, char *buf, size_t len)
{
	int n = snprintf(buf, len, "used=%zu blocks=%lld free:", a->used, (long long)a->nblocks);

	for (int64_t i = 0; i < a->nfree && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " [%zu,+%zu)", a->free[i].off,
			      a->free[i].len);
}

/* The free ranges sorted, disjoint, apart, inside the arena, and adding up with the
 * used bytes to the capacity. */
static int consistent(const struct stargemm__arena *a)
{
	size_t total = 0;

	for (int64_t i = 0; i < a->nfree; i++) {
		const struct stargemm__arena_range *r = &a->free[i];

		if (r->len == 0 || r->off + r->len > a->capacity || r->off % a->align ||
		    r->len % a->align)
			return 0;
		if (i > 0 && a->free[i - 1].off + a->free[i - 1].len >= r->off)
			return 0;
		total += r->len;
	}
	return total + a->used == a->capacity && a->nfree <= a->nblocks + 1;
}

static void exact_fill(void)
{
	struct stargemm__arena a;
	size_t off[4], extra;
	int ret = stargemm__arena_init(&a, 4096 + 100, 256), fits = 1;
	char buf[256];

	tap_ok_detail(ret == 0 && a.capacity == 4096 && stargemm__arena_largest(&a) == 4096,
	   "capacity rounded down to the alignment", "");
	for (int i = 0; i < 4; i++)
		fits &= stargemm__arena_alloc(&a, 1000, &off[i]) == 0 && off[i] % 256 == 0;
	describe(&a, buf, sizeof(buf));
	tap_ok_detail(fits && a.used == 4096 && a.nfree == 0 && consistent(&a),
	   "four blocks of 1000 bytes (1024 each) fill 4096 bytes exactly", buf);
	ret = stargemm__arena_alloc(&a, 1, &extra);
	tap_ok_detail(ret == -ENOMEM && a.used == 4096 && consistent(&a), "a full arena refuses a byte",
	   buf);
	tap_ok_detail(off[0] == 0 && off[1] == 1024 && off[2] == 2048 && off[3] == 3072,
	   "blocks placed one after the other from offset 0", "");
	stargemm__arena_destroy(&a);
}

static void rounding(void)
{
	struct stargemm__arena a;
	size_t o1, o2, o3;

	stargemm__arena_init(&a, 1 << 20, 256);
	tap_ok_detail(stargemm__arena_alloc(&a, 1, &o1) == 0 && stargemm__arena_alloc(&a, 0, &o2) == 0 &&
	   stargemm__arena_alloc(&a, 257, &o3) == 0 && o1 == 0 && o2 == 256 && o3 == 512 &&
	   a.used == 1024,
	   "sizes 1, 0 and 257 take 256, 256 and 512 bytes", "");
	tap_ok_detail(stargemm__arena_init(&a, 1024, 3) == -EINVAL &&
	   stargemm__arena_init(&a, 1024, 0) == -EINVAL,
	   "an alignment that is not a power of two is refused", "");
	stargemm__arena_destroy(&a);
	stargemm__arena_init(&a, 100, 256);
	tap_ok_detail(a.capacity == 0 && stargemm__arena_alloc(&a, 1, &o1) == -ENOMEM,
	   "an arena smaller than the alignment holds nothing", "");
	stargemm__arena_destroy(&a);
}

static void fragmentation(void)
{
	struct stargemm__arena a;
	size_t off[4], big, small;
	char buf[256];

	stargemm__arena_init(&a, 4096, 256);
	for (int i = 0; i < 4; i++)
		stargemm__arena_alloc(&a, 1024, &off[i]);
	stargemm__arena_free(&a, off[0], 1024);
	stargemm__arena_free(&a, off[2], 1024);
	describe(&a, buf, sizeof(buf));
	tap_ok_detail(a.capacity - a.used == 2048 && stargemm__arena_largest(&a) == 1024 &&
	   stargemm__arena_alloc(&a, 2048, &big) == -ENOMEM && consistent(&a),
	   "2048 bytes free in two ranges of 1024: a block of 2048 is refused", buf);
	tap_ok_detail(stargemm__arena_alloc(&a, 1024, &small) == 0 && small == off[0] &&
	   stargemm__arena_alloc(&a, 1024, &small) == 0 && small == off[2] && a.nfree == 0,
	   "blocks of 1024 fill the two holes", buf);
	stargemm__arena_destroy(&a);
}

/* Free blocks 0..n-1 of one unit each in the order @p order: the arena is one range. */
static int coalesces(const int *order, int n)
{
	struct stargemm__arena a;
	size_t off[8];
	int good = 1;

	stargemm__arena_init(&a, (size_t)n * 256, 256);
	for (int i = 0; i < n; i++)
		good &= stargemm__arena_alloc(&a, 256, &off[i]) == 0;
	for (int i = 0; i < n; i++)
		good &= stargemm__arena_free(&a, off[order[i]], 256) == 0 && consistent(&a);
	good &= a.nfree == 1 && a.free[0].off == 0 && a.free[0].len == a.capacity &&
		a.used == 0 && a.nblocks == 0;
	stargemm__arena_destroy(&a);
	return good;
}

static void coalescing(void)
{
	static const int forward[5] = { 0, 1, 2, 3, 4 }, backward[5] = { 4, 3, 2, 1, 0 },
			 outside_in[5] = { 0, 4, 1, 3, 2 }, middle_out[5] = { 2, 1, 3, 0, 4 },
			 alternate[5] = { 1, 3, 0, 2, 4 };

	tap_ok_detail(coalesces(forward, 5), "frees in address order merge into one range", "");
	tap_ok_detail(coalesces(backward, 5), "frees in reverse order merge into one range", "");
	tap_ok_detail(coalesces(outside_in, 5), "frees from both ends inwards merge into one range", "");
	tap_ok_detail(coalesces(middle_out, 5), "frees from the middle outwards merge into one range", "");
	tap_ok_detail(coalesces(alternate, 5), "a block freed between two free ranges joins them", "");
}

static void best_fit(void)
{
	struct stargemm__arena a;
	size_t off[6], got;
	char buf[256];

	/* Holes of 3 units (blocks 0-2) and 1 unit (block 4), blocks 3 and 5 live. */
	stargemm__arena_init(&a, 6 * 256, 256);
	stargemm__arena_alloc(&a, 3 * 256, &off[0]);
	stargemm__arena_alloc(&a, 256, &off[3]);
	stargemm__arena_alloc(&a, 256, &off[4]);
	stargemm__arena_alloc(&a, 256, &off[5]);
	stargemm__arena_free(&a, off[0], 3 * 256);
	stargemm__arena_free(&a, off[4], 256);
	describe(&a, buf, sizeof(buf));
	tap_ok_detail(stargemm__arena_alloc(&a, 200, &got) == 0 && got == off[4],
	   "a small block goes to the smallest hole that holds it", buf);
	tap_ok_detail(stargemm__arena_alloc(&a, 3 * 256, &got) == 0 && got == off[0] && a.nfree == 0,
	   "the large hole stays whole for a large block", buf);
	stargemm__arena_destroy(&a);
}

static void refusals(void)
{
	struct stargemm__arena a, before;
	size_t off[3], got;
	int same;
	char buf[256];

	stargemm__arena_init(&a, 3 * 1024, 256);
	for (int i = 0; i < 3; i++)
		stargemm__arena_alloc(&a, 1024, &off[i]);
	stargemm__arena_free(&a, off[1], 1024);
	before = a;
	describe(&a, buf, sizeof(buf));
	tap_ok_detail(stargemm__arena_free(&a, off[1], 1024) == -EINVAL, "a block freed twice is refused",
	   buf);
	tap_ok_detail(stargemm__arena_free(&a, off[0], 2048) == -EINVAL,
	   "a free that runs into a free range is refused", buf);
	tap_ok_detail(stargemm__arena_free(&a, off[0] + 8, 256) == -EINVAL &&
	   stargemm__arena_free(&a, 3 * 1024, 256) == -EINVAL &&
	   stargemm__arena_free(&a, off[2], 4096) == -EINVAL,
	   "misaligned and out-of-range frees are refused", buf);
	tap_ok_detail(stargemm__arena_alloc(&a, 2048, &got) == -ENOMEM, "a block larger than any hole "
	   "is refused", buf);
	same = a.used == before.used && a.nblocks == before.nblocks && a.nfree == 1 &&
	       a.free[0].off == off[1] && a.free[0].len == 1024;
	tap_ok_detail(same && consistent(&a), "refusals leave the arena unchanged", buf);
	stargemm__arena_destroy(&a);
}

/* ---- random operations against a model of the bytes ----------------------------- */

#define UNITS 4096  /* the model's arena, in units of the alignment */
#define SLOTS 255   /* live blocks at most (an owner byte each) */

struct model {
	struct stargemm__arena a;
	unsigned char owner[UNITS];   /* 0: free, else 1 + the live block's slot */
	size_t off[SLOTS], size[SLOTS]; /* live blocks by slot; size 0: slot unused */
	int nlive;
};

static unsigned long long rng = 88172645463325252ULL;
static int fragmented;  /* refusals with enough free bytes, in separate ranges */

static unsigned next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 11);
}

/* Whether the arena's free ranges are exactly the model's free units. */
static int matches(const struct model *m)
{
	unsigned char is_free[UNITS];

	memset(is_free, 0, sizeof(is_free));
	for (int64_t i = 0; i < m->a.nfree; i++)
		for (size_t u = m->a.free[i].off / 256; u < (m->a.free[i].off + m->a.free[i].len) / 256;
		     u++)
			is_free[u] = 1;
	for (int u = 0; u < UNITS; u++)
		if (is_free[u] != (m->owner[u] == 0))
			return 0;
	return consistent(&m->a) && m->a.nblocks == m->nlive;
}

/* Place a block of a tile-like size (1..64 units, not a multiple of the alignment)
 * in the first free slot; the arena must refuse it exactly when the model has no run
 * of free units long enough. */
static int random_alloc(struct model *m, int slot, int *refused)
{
	size_t size = (size_t)(next_random() % 64) * 256 + 1 + next_random() % 255, off, len;
	size_t run = 0, longest = 0;
	int ret = stargemm__arena_alloc(&m->a, size, &off);

	for (int u = 0; u < UNITS; u++) {
		run = m->owner[u] ? 0 : run + 1;
		longest = run > longest ? run : longest;
	}
	len = (size + 255) / 256;
	if (ret != 0) {
		(*refused)++;
		fragmented += m->a.capacity - m->a.used >= len * 256;
		return ret == -ENOMEM && longest < len;
	}
	for (size_t u = off / 256; u < off / 256 + len; u++)
		if (u >= UNITS || m->owner[u])
			return 0;
	memset(&m->owner[off / 256], slot + 1, len);
	m->off[slot] = off;
	m->size[slot] = size;
	m->nlive++;
	return 1;
}

static int random_free(struct model *m, int slot)
{
	size_t len = (m->size[slot] + 255) / 256;

	if (stargemm__arena_free(&m->a, m->off[slot], m->size[slot]) != 0)
		return 0;
	memset(&m->owner[m->off[slot] / 256], 0, len);
	m->size[slot] = 0;
	m->nlive--;
	return 1;
}

static void random_operations(void)
{
	static struct model m;
	int good = 1, refused = 0, steps = 0;
	char buf[128];

	memset(&m, 0, sizeof(m));
	stargemm__arena_init(&m.a, UNITS * 256, 256);
	for (steps = 0; steps < 20000 && good; steps++) {
		int slot = (int)(next_random() % SLOTS);

		good = m.size[slot] ? random_free(&m, slot) : random_alloc(&m, slot, &refused);
		good = good && matches(&m);
	}
	snprintf(buf, sizeof(buf), "%d steps, %d allocations refused (%d of them for fragmentation), "
		 "%lld blocks live at the end", steps, refused, fragmented, (long long)m.a.nblocks);
	tap_ok_detail(good, "20000 random allocations and frees agree with a model of the bytes", buf);
	for (int s = 0; s < SLOTS && good; s++)
		if (m.size[s])
			good = random_free(&m, s);
	tap_ok_detail(good && m.a.nfree == 1 && m.a.free[0].len == m.a.capacity && m.a.used == 0,
	   "freeing every live block leaves one range of the whole arena", "");
	stargemm__arena_destroy(&m.a);
}

int main(void)
{
	exact_fill();
	rounding();
	fragmentation();
	coalescing();
	best_fit();
	refusals();
	random_operations();
	return tap_done();
}
