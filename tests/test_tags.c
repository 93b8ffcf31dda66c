/*
 * tests/test_tags.c — the reuse of StarPU-MPI tags (src/process.c): a released range is
 * taken again by the next reservation that fits in it (first fit), neighbouring
 * released ranges join, the last one returns to the fresh tags, and a range that is
 * not a reserved one is ignored. Output: TAP. Needs no MPI or StarPU start: the tags
 * are the process's own counters.
 */
#include <stdio.h>

#include "../src/process.h"
#include "tap.h"



int main(void)
{
	int64_t a = stargemm__reserve_tags(10), b = stargemm__reserve_tags(5);
	int64_t c = stargemm__reserve_tags(20), d, e, f;

	tap_ok(b == a + 10 && c == b + 5, "fresh ranges follow each other");
	stargemm__release_tags(b, 5);
	d = stargemm__reserve_tags(3);
	tap_ok(d == b, "a released range is taken again by a reservation it holds (first fit)");
	e = stargemm__reserve_tags(4);
	tap_ok(e == c + 20, "a reservation larger than what is left of it takes fresh tags");
	stargemm__release_tags(a, 10);
	stargemm__release_tags(d, 3);   /* joins a's range and the 2 tags left of b's */
	f = stargemm__reserve_tags(15);
	tap_ok(f == a, "neighbouring released ranges join into one");
	stargemm__release_tags(e, 4);   /* the last range: back to the fresh tags */
	tap_ok(stargemm__reserve_tags(1) == e, "the last released range returns to the fresh tags");
	stargemm__release_tags(e + 100, 5);   /* never reserved */
	tap_ok(stargemm__reserve_tags(1) == e + 1, "a range beyond the reserved tags is ignored");
	return tap_done();
}
