/*
 * codelets/batch_calls.c — how a batch of tile products becomes batched GEMM calls
 * (cuBLAS's cublas?gemmBatched, codelets/batch.c). Pure: no StarPU, no CUDA; unit-tested
 * by tests/test_batch_calls.c.
 *
 * A batched call runs its products concurrently and has one shape (m, n, k and the
 * leading dimensions) and one beta. So products that update the same C tile may not
 * share a call, and must run in list order: a C tile's chain keeps its k order, and its
 * first update (the one that applies beta) comes first. The products are therefore put
 * in waves, the w-th update of a C tile in the batch in wave w. The calls run wave after
 * wave, in one stream. Within a wave they are grouped by shape and beta, one call per
 * group. A batch of s x s C tiles over s steps of k (src/inspect.c) has at most s
 * waves, and tiles of one size make one call per wave.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../src/internal.h"

/* The wave of each item: how many earlier items update its C tile. An open-addressing
 * table keyed by the C tile's address. */
static int waves_of(const struct stargemm__batch_item *items, int64_t n, int64_t *wave)
{
	int64_t size = 16;
	const void **key;
	int64_t *count;

	while (size < 2 * n)
		size *= 2;
	key = calloc((size_t)size, sizeof(*key));
	count = calloc((size_t)size, sizeof(*count));
	if (!key || !count) {
		free(key);
		free(count);
		return -ENOMEM;
	}
	for (int64_t e = 0; e < n; e++) {
		uintptr_t h = (uintptr_t)items[e].c;
		int64_t s = (int64_t)((h >> 4) * UINT64_C(0x9E3779B97F4A7C15) >> 20) & (size - 1);

		while (key[s] && key[s] != items[e].c)
			s = (s + 1) & (size - 1);
		key[s] = items[e].c;
		wave[e] = count[s]++;
	}
	free(key);
	free(count);
	return 0;
}

/* An item in the sort: its wave, then its shape and beta, then its place in the list
 * (so that the order is the same on every run). */
struct entry {
	int64_t wave, index;
	const struct stargemm__batch_item *item;
};

static int cmp_int(int64_t x, int64_t y)
{
	return (x > y) - (x < y);
}

static int compare(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	const struct stargemm__batch_item *x = a->item, *y = b->item;
	int c = cmp_int(a->wave, b->wave);

	c = c ? c : cmp_int(x->m, y->m);
	c = c ? c : cmp_int(x->n, y->n);
	c = c ? c : cmp_int(x->k, y->k);
	c = c ? c : cmp_int(x->lda, y->lda);
	c = c ? c : cmp_int(x->ldb, y->ldb);
	c = c ? c : cmp_int(x->ldc, y->ldc);
	c = c ? c : cmp_int(y->first, x->first);
	return c ? c : cmp_int(a->index, b->index);
}

/* Whether items x and y can share a call. */
static int same_call(const struct entry *x, const struct entry *y)
{
	const struct stargemm__batch_item *a = x->item, *b = y->item;

	return x->wave == y->wave && a->m == b->m && a->n == b->n && a->k == b->k &&
	       a->lda == b->lda && a->ldb == b->ldb && a->ldc == b->ldc &&
	       !a->first == !b->first;
}

static struct stargemm__batch_call call_of(const struct stargemm__batch_item *x, int64_t start)
{
	return (struct stargemm__batch_call){ x->m, x->n, x->k, x->lda, x->ldb, x->ldc,
					      x->first != 0, start, 0 };
}

int64_t stargemm__batch_calls(const struct stargemm__batch_item *items, int64_t n,
			      int64_t *order, struct stargemm__batch_call *calls)
{
	struct entry *e = malloc((size_t)(n > 0 ? n : 1) * sizeof(*e));
	int64_t *wave = malloc((size_t)(n > 0 ? n : 1) * sizeof(*wave));
	int64_t ncalls = 0;

	if (!e || !wave || waves_of(items, n, wave)) {
		free(e);
		free(wave);
		return -ENOMEM;
	}
	for (int64_t i = 0; i < n; i++)
		e[i] = (struct entry){ wave[i], i, &items[i] };
	qsort(e, (size_t)n, sizeof(*e), compare);
	for (int64_t i = 0; i < n; i++) {
		if (i == 0 || !same_call(&e[i - 1], &e[i]))
			calls[ncalls++] = call_of(e[i].item, i);
		calls[ncalls - 1].count++;
		order[i] = e[i].index;
	}
	free(e);
	free(wave);
	return ncalls;
}
