/*
 * tests/test_batch_calls.c — unit tests of how a batch of tile products becomes
 * batched GEMM calls (codelets/batch_calls.c, run by the CUDA batch codelet): no MPI,
 * no StarPU, no GPU. TAP output.
 *
 * Properties checked, on hand-made and random batches:
 *  - the calls partition the order, which lists every product exactly once;
 *  - every product of a call has the call's shape (m, n, k, leading dimensions) and
 *    beta (first update or not);
 *  - no call holds two updates of one C tile (a batched call runs its products
 *    concurrently);
 *  - the updates of a C tile run in successive calls in their list order (the k order
 *    of its chain), so its first update (the one that applies beta) runs first;
 *  - a batch of tiles of one size needs one call per update of the most updated C
 *    tile; an empty batch, no call.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "tap.h"



struct result {
	int64_t ncalls;
	int64_t *order;
	struct stargemm__batch_call *calls;
};

static int run(const struct stargemm__batch_item *items, int64_t n, struct result *r)
{
	r->order = malloc((size_t)(n > 0 ? n : 1) * sizeof(*r->order));
	r->calls = malloc((size_t)(n > 0 ? n : 1) * sizeof(*r->calls));
	if (!r->order || !r->calls)
		return -ENOMEM;
	r->ncalls = stargemm__batch_calls(items, n, r->order, r->calls);
	return r->ncalls < 0 ? (int)r->ncalls : 0;
}

static void release(struct result *r)
{
	free(r->order);
	free(r->calls);
}

static int same_shape(const struct stargemm__batch_item *x, const struct stargemm__batch_call *c)
{
	return x->m == c->m && x->n == c->n && x->k == c->k && x->lda == c->lda &&
	       x->ldb == c->ldb && x->ldc == c->ldc && !x->first == !c->first;
}

/* Every property of the header; the first violated one in @p why. */
static int valid(const struct stargemm__batch_item *items, int64_t n, const struct result *r,
		 char *why, size_t len)
{
	int64_t *seen = calloc((size_t)(n > 0 ? n : 1), sizeof(*seen));
	int64_t *call_of = malloc((size_t)(n > 0 ? n : 1) * sizeof(*call_of));
	int64_t next = 0;
	int good = seen && call_of;

	if (!good)
		snprintf(why, len, "out of memory");
	for (int64_t c = 0; c < r->ncalls && good; c++) {
		const struct stargemm__batch_call *k = &r->calls[c];

		if (k->start != next || k->count < 1) {
			snprintf(why, len, "call %lld starts at %lld (expected %lld), %lld items",
				 (long long)c, (long long)k->start, (long long)next,
				 (long long)k->count);
			good = 0;
		}
		for (int64_t i = k->start; good && i < k->start + k->count; i++) {
			int64_t e = r->order[i];

			if (e < 0 || e >= n || seen[e]++) {
				snprintf(why, len, "item %lld listed twice or out of range", (long long)e);
				good = 0;
			} else if (!same_shape(&items[e], k)) {
				snprintf(why, len, "item %lld not of its call's shape", (long long)e);
				good = 0;
			}
			call_of[e] = c;
		}
		next = k->start + k->count;
	}
	if (good && next != n) {
		snprintf(why, len, "the calls cover %lld of %lld items", (long long)next,
			 (long long)n);
		good = 0;
	}
	/* updates of one C tile: strictly increasing calls in list order */
	for (int64_t e = 0; e < n && good; e++)
		for (int64_t f = e + 1; f < n && good; f++)
			if (items[e].c == items[f].c && call_of[f] <= call_of[e]) {
				snprintf(why, len, "items %lld and %lld update one C tile in calls "
					 "%lld, %lld", (long long)e, (long long)f,
					 (long long)call_of[e], (long long)call_of[f]);
				good = 0;
			}
	free(seen);
	free(call_of);
	return good;
}

static struct stargemm__batch_item item(int m, int n, int k, int first, void *c)
{
	return (struct stargemm__batch_item){ m, n, k, m, k, m, first, NULL, NULL, c };
}

static void check(const char *name, const struct stargemm__batch_item *items, int64_t n,
		  int64_t want_calls)
{
	struct result r = { 0 };
	char why[160] = "", label[160];
	int ran = run(items, n, &r) == 0;

	snprintf(label, sizeof(label), "%s: valid order", name);
	tap_ok_detail(ran && valid(items, n, &r, why, sizeof(why)), label, ran ? why : "returned an error");
	if (want_calls >= 0) {
		snprintf(label, sizeof(label), "%s: %lld calls", name, (long long)want_calls);
		snprintf(why, sizeof(why), "got %lld", (long long)r.ncalls);
		tap_ok_detail(ran && r.ncalls == want_calls, label, why);
	}
	release(&r);
}

/* s x s C tiles of one size, each updated by s steps of k (first at k = 0), in the
 * inspector's order (k outer): s calls, each with one update of every tile. */
static void uniform(int s)
{
	struct stargemm__batch_item *items = malloc((size_t)(s * s * s) * sizeof(*items));
	static char tiles[64 * 64];
	char name[64];
	int64_t n = 0;

	for (int k = 0; k < s; k++)
		for (int t = 0; t < s * s; t++)
			items[n++] = item(23, 23, 23, k == 0, &tiles[t]);
	snprintf(name, sizeof(name), "%d x %d tiles of 23, %d steps of k", s, s, s);
	check(name, items, n, s);
	free(items);
}

/* Random batches: tiles of 3 sizes, C tiles drawn at random among @p ntiles, first
 * updates where a tile appears for the first time (half the time: the batch may
 * continue a chain begun in an earlier one). */
static void random_batch(unsigned seed, int64_t n, int ntiles)
{
	struct stargemm__batch_item *items = malloc((size_t)n * sizeof(*items));
	char *tiles = calloc((size_t)ntiles, 1), *started = calloc((size_t)ntiles, 1);
	const int sizes[3] = { 20, 37, 60 };
	char name[64];

	srand(seed);
	for (int64_t e = 0; e < n; e++) {
		int t = rand() % ntiles;
		int first = !started[t] && (t % 2 == 0);

		started[t] = 1;
		items[e] = item(sizes[t % 3], sizes[(t / 3) % 3], sizes[rand() % 3], first,
				&tiles[t]);
	}
	snprintf(name, sizeof(name), "random batch %u: %lld products on %d C tiles", seed,
		 (long long)n, ntiles);
	check(name, items, n, -1);
	free(items);
	free(tiles);
	free(started);
}

int main(void)
{
	static char c[4];
	struct stargemm__batch_item chain[4], mixed[4];

	check("empty batch", NULL, 0, 0);
	chain[0] = item(8, 8, 8, 1, &c[0]);
	for (int e = 1; e < 4; e++)
		chain[e] = item(8, 8, 4 + e, 0, &c[0]);
	check("one C tile, 4 updates of other k", chain, 4, 4);
	/* two tiles of one shape in one call; a third of another shape alone */
	mixed[0] = item(8, 8, 8, 1, &c[0]);
	mixed[1] = item(8, 8, 8, 1, &c[1]);
	mixed[2] = item(5, 8, 8, 1, &c[2]);
	mixed[3] = item(8, 8, 8, 0, &c[0]);
	check("3 tiles, 2 shapes, one tile updated twice", mixed, 4, 3);
	for (int s = 1; s <= 6; s++)
		uniform(s);
	for (unsigned seed = 1; seed <= 20; seed++)
		random_batch(seed, 1 + (int64_t)(seed * 37 % 400), 1 + (int)(seed * 13 % 60));
	random_batch(99, 5000, 7);   /* long chains on few tiles */
	return tap_done();
}
