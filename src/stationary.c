/*
 * stationary.c — the cost of keeping op(A), op(B) or C in place (Selvitopi et al.,
 * paper 002: which operand stays put decides the speed of a sparse matrix times a
 * tall-skinny block of vectors), and the choice between them.
 *
 * The work list is C-stationary: a product runs on its C tile's owner. With C = A X,
 * X of n << N columns in one or two tile columns, C's tiles live on one or two process
 * columns of the grid, so only those ranks compute while A's tiles travel to them.
 * Keeping A in place instead spreads the products as A is spread, moves X's tiles to
 * A's owners, and pays one partial C tile per (rank, C tile) sent to C's owner.
 *
 * The model walks the products once, k outer (a tile of op(A) is sent at most once to
 * a rank, and one of op(B) at most once per k, as StarPU-MPI caches a received tile
 * for the rest of the product), and counts per rank the flops it computes and the
 * bytes it sends and receives, the partial tiles' apart. The time of a choice is the
 * longer of the busiest rank's flops at the rank's rate and its tiles' bytes at the
 * network's (tiles arrive while products run), then the busiest rank's partial tiles
 * at the network's rate (they go once its products are done): a model that orders the
 * choices, not a prediction of the run.
 *
 * On ranks with GPUs the rank's rate is its GPUs', and a third term joins the longer
 * of: the bytes between host and GPUs of the busiest rank (the tiles it reads, once
 * per rank, and its partial tiles back to the host, where they are summed); the
 * seconds a rank pins host memory for what it receives add to its network time. And
 * what is already in place costs nothing: with a tile state (struct
 * stargemm__tile_state), a rank counts neither the moves StarPU-MPI's cache spares (a
 * tile received by an earlier product and unchanged since) nor the loads of tiles
 * valid on its GPUs; as only a rank knows its own, the ranks share their counts
 * (src/choice.c).
 *
 * The choice is greedy unless told what follows: over a run of products that read A
 * (or B) unchanged, a choice that moves it pays once and then finds it in place (16
 * simulated ranks with GPUs: C moves A's tiles in 0.39 s the first time and then
 * runs in 0.009 s, where A takes 0.17 s and then 0.027 s). Given the runs' lengths
 * (stargemm_bsgemm_options.reuse_a, reuse_b), the model takes each choice's mean
 * time per product over the run: this product as things are, the next ones with the
 * unchanged operands in place (stargemm__stationary_phases()).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stationary.h"

/* Another choice than C is taken when the model gives it less than 0.58 of C's time:
 * the partial tiles' sums (after the products, one StarPU-MPI message and one task per
 * tile) are not in it. On dev A beat C where the (cold) model gave it 0.37, 0.44 and
 * 0.56 of C's time, and lost at 0.59 (four ranks on two cores), 0.87, 1.0 and 1.51
 * (doc/performance.md, "Which operand stays in place"). */
#define MARGIN 0.58

struct walk {
	const struct stargemm__request *r;
	int n;                    /* ranks */
	int64_t elem;
	struct stargemm__traffic *t;
	double *flops;            /* per choice and rank: [s * n + rank] */
	double *bytes;            /* the same, sent + received: op(A), op(B) tiles */
	double *pbytes;           /* the same: partial C tiles */
	int64_t *a_seen;          /* per rank: the op(A) tile last sent there + 1 (C, B) */
	int64_t *a_seen_b;
	int64_t *b_seen;          /* per (j, rank): the k + 1 whose op(B)(k, j) went there */
	int64_t *b_seen_a;
	uint8_t *part;            /* per choice A, B: bit (i + j mt) n + rank: a partial */
	struct stargemm__tile_state *st;   /* NULL: no tile state */
	double dbytes[STARGEMM__NSTAT];    /* the state's rank: bytes between host and GPUs */
	int64_t a_dev[STARGEMM__NSTAT];    /* ... the op(A) tile it read last + 1 */
	int64_t *b_dev;                    /* ... per (choice, j): the k + 1 of op(B)(k, j) */
};

static int64_t extent(const int64_t *off, int64_t i)
{
	return off[i + 1] - off[i];
}

/* A tile of @p bytes goes from rank @p from to rank @p to under choice @p s, counted
 * per rank into @p per_rank, unless the state's rank is one of them and the tile is
 * still cached there: tile (i, j) of @p operand (0: op(A), 1: op(B); -1: a partial,
 * never cached). */
static void move(struct walk *w, double *per_rank, int s, int from, int to, double bytes,
		 int operand, int64_t i, int64_t j)
{
	struct stargemm__tile_state *st = w->st;

	if (st && operand >= 0 && ((st->in_place >> operand & 1) ||
				   ((from == st->me || to == st->me) &&
				    st->cached(st->arg, operand, i, j, from, to))))
		return;
	if (st && to == st->me)
		st->received[s] += bytes;
	w->t[s].bytes += bytes;
	w->t[s].tiles++;
	per_rank[s * w->n + from] += bytes;
	per_rank[s * w->n + to] += bytes;
}

static void mark_partial(struct walk *w, int which, int64_t i, int64_t j, int rank)
{
	int64_t bit = (i + j * w->r->mt) * w->n + rank;

	w->part[which * ((w->r->mt * w->r->nt * w->n + 7) / 8) + bit / 8] |=
		(uint8_t)(1u << (bit % 8));
}

static int partial(const struct walk *w, int which, int64_t i, int64_t j, int rank)
{
	int64_t bit = (i + j * w->r->mt) * w->n + rank;

	return w->part[which * ((w->r->mt * w->r->nt * w->n + 7) / 8) + bit / 8] >>
	       (bit % 8) & 1;
}

/* Under choice @p s, rank @p x reads op(A)(i, k) and op(B)(k, j): if x is the state's
 * rank with GPUs, the tiles not read yet by it and not on its GPUs are loaded. */
static void device_reads(struct walk *w, int s, int x, int64_t i, int64_t j, int64_t k,
			 double a_bytes, double b_bytes)
{
	const struct stargemm__tile_state *st = w->st;
	int64_t aid = i + k * w->r->mt + 1, *b_last = &w->b_dev[s * w->r->nt + j];

	if (!st || !st->on_device || x != st->me)
		return;
	if (w->a_dev[s] != aid) {
		w->a_dev[s] = aid;
		if (!(st->in_place & 1) && !st->on_device(st->arg, 0, i, k))
			w->dbytes[s] += a_bytes;
	}
	if (*b_last != k + 1) {
		*b_last = k + 1;
		if (!(st->in_place & 2) && !st->on_device(st->arg, 1, k, j))
			w->dbytes[s] += b_bytes;
	}
}

/* Product C(i, j) += op(A)(i, k) op(B)(k, j) under each choice. */
static void product(struct walk *w, int64_t i, int64_t j, int64_t k)
{
	const struct stargemm__request *r = w->r;
	int ra = stargemm__operand_owner(&r->a, i, k), rb = stargemm__operand_owner(&r->b, k, j);
	int rc = stargemm__operand_owner(&r->c, i, j), n = w->n;
	double f = stargemm__product_flops(r, i, j, k), e = (double)w->elem;
	double a_bytes = e * (double)(extent(r->row_off, i) * extent(r->k_off, k));
	double b_bytes = e * (double)(extent(r->k_off, k) * extent(r->col_off, j));
	int64_t aid = i + k * r->mt + 1;

	for (int s = 0; s < STARGEMM__NSTAT; s++) {
		w->t[s].flops += f;
		w->t[s].products++;
	}
	w->flops[STARGEMM__STAT_C * n + rc] += f;
	if (ra != rc && !r->a.generated && w->a_seen[rc] != aid) {
		w->a_seen[rc] = aid;
		move(w, w->bytes, STARGEMM__STAT_C, ra, rc, a_bytes, 0, i, k);
	}
	if (rb != rc && !r->b.generated && w->b_seen[j * n + rc] != k + 1) {
		w->b_seen[j * n + rc] = k + 1;
		move(w, w->bytes, STARGEMM__STAT_C, rb, rc, b_bytes, 1, k, j);
	}
	device_reads(w, STARGEMM__STAT_C, rc, i, j, k, a_bytes, b_bytes);
	w->flops[STARGEMM__STAT_A * n + ra] += f;
	if (rb != ra && !r->b.generated && w->b_seen_a[j * n + ra] != k + 1) {
		w->b_seen_a[j * n + ra] = k + 1;
		move(w, w->bytes, STARGEMM__STAT_A, rb, ra, b_bytes, 1, k, j);
	}
	device_reads(w, STARGEMM__STAT_A, ra, i, j, k, a_bytes, b_bytes);
	mark_partial(w, 0, i, j, ra);
	w->flops[STARGEMM__STAT_B * n + rb] += f;
	if (ra != rb && !r->a.generated && w->a_seen_b[rb] != aid) {
		w->a_seen_b[rb] = aid;
		move(w, w->bytes, STARGEMM__STAT_B, ra, rb, a_bytes, 0, i, k);
	}
	device_reads(w, STARGEMM__STAT_B, rb, i, j, k, a_bytes, b_bytes);
	mark_partial(w, 1, i, j, rb);
}

/* The partial C tiles of choices A and B: one per (C tile, rank with a product of
 * it), sent to C's owner unless it is that rank (and then back from its GPU to the
 * host first). */
static void partials(struct walk *w)
{
	const struct stargemm__request *r = w->r;

	for (int64_t j = 0; j < r->nt; j++)
		for (int64_t i = 0; i < r->mt; i++) {
			int rc = stargemm__operand_owner(&r->c, i, j);
			double bytes = (double)w->elem *
				       (double)(extent(r->row_off, i) * extent(r->col_off, j));

			for (int which = 0; which < 2; which++)
				for (int rank = 0; rank < w->n; rank++) {
					int s = which ? STARGEMM__STAT_B : STARGEMM__STAT_A;

					if (!partial(w, which, i, j, rank))
						continue;
					w->t[s].partials++;
					if (rank == rc)
						continue;
					move(w, w->pbytes, s, rank, rc, bytes, -1, i, j);
					if (w->st && w->st->on_device && rank == w->st->me)
						w->dbytes[s] += bytes;
				}
		}
}

/* Walk the products k outer: op(A)'s present tiles of column k, op(B)'s of row k. */
static int walk_products(struct walk *w)
{
	const struct stargemm__request *r = w->r;
	struct stargemm__operand bt = r->b;
	int64_t *a_start, *a_idx, *b_start, *b_idx;

	if (stargemm__operand_columns(&r->a, r->mt, r->kt, &a_start, &a_idx))
		return -ENOMEM;
	bt.trans = !bt.trans;   /* op(B)^T: its column k is op(B)'s row k */
	if (stargemm__operand_columns(&bt, r->nt, r->kt, &b_start, &b_idx)) {
		free(a_start);
		free(a_idx);
		return -ENOMEM;
	}
	for (int64_t k = 0; k < r->kt; k++)
		for (int64_t a = a_start[k]; a < a_start[k + 1]; a++)
			for (int64_t b = b_start[k]; b < b_start[k + 1]; b++) {
				int64_t i = a_idx[a], j = b_idx[b];

				if (stargemm__operand_present(&r->c, i, j) &&
				    !stargemm__product_filtered(r, i, j, k))
					product(w, i, j, k);
			}
	free(a_start);
	free(a_idx);
	free(b_start);
	free(b_idx);
	return 0;
}

int stargemm__stationary_traffic(const struct stargemm__request *r, int nranks,
				 int64_t elem, struct stargemm__tile_state *state,
				 struct stargemm__traffic t[STARGEMM__NSTAT])
{
	struct walk w = { .r = r, .n = nranks, .elem = elem, .t = t, .st = state };

	for (int s = 0; state && s < STARGEMM__NSTAT; s++)
		state->received[s] = state->pin_seconds[s] = 0.0;
	size_t n = (size_t)nranks, cn = (size_t)r->nt * n;
	size_t bits = ((size_t)(r->mt * r->nt) * n + 7) / 8;
	int ret = -ENOMEM;

	for (int s = 0; s < STARGEMM__NSTAT; s++)
		t[s] = (struct stargemm__traffic){ 0 };
	w.flops = calloc(STARGEMM__NSTAT * n, sizeof(*w.flops));
	w.bytes = calloc(STARGEMM__NSTAT * n, sizeof(*w.bytes));
	w.pbytes = calloc(STARGEMM__NSTAT * n, sizeof(*w.pbytes));
	w.a_seen = calloc(2 * n, sizeof(*w.a_seen));
	w.b_seen = calloc(2 * (cn ? cn : 1), sizeof(*w.b_seen));
	w.part = calloc(2 * (bits ? bits : 1), 1);
	w.b_dev = calloc(STARGEMM__NSTAT * (size_t)(r->nt > 0 ? r->nt : 1), sizeof(*w.b_dev));
	if (w.flops && w.bytes && w.pbytes && w.a_seen && w.b_seen && w.part && w.b_dev) {
		w.a_seen_b = w.a_seen + n;
		w.b_seen_a = w.b_seen + cn;
		ret = walk_products(&w);
	}
	if (!ret) {
		partials(&w);
		for (int s = 0; s < STARGEMM__NSTAT; s++)
			for (size_t q = 0; q < n; q++) {
				if (w.flops[s * n + q] > t[s].flops_max)
					t[s].flops_max = w.flops[s * n + q];
				if (w.bytes[s * n + q] > t[s].bytes_max)
					t[s].bytes_max = w.bytes[s * n + q];
				if (w.pbytes[s * n + q] > t[s].partial_bytes_max)
					t[s].partial_bytes_max = w.pbytes[s * n + q];
			}
	}
	for (int s = 0; !ret && state && s < STARGEMM__NSTAT; s++) {
		state->bytes[s] = w.bytes[s * n + (size_t)state->me];
		state->partial_bytes[s] = w.pbytes[s * n + (size_t)state->me];
		state->device_bytes[s] = t[s].device_bytes_max = w.dbytes[s];
	}
	free(w.flops);
	free(w.bytes);
	free(w.pbytes);
	free(w.a_seen);
	free(w.b_seen);
	free(w.part);
	free(w.b_dev);
	return ret;
}

void stargemm__stationary_row(const struct stargemm__tile_state *st, double *row)
{
	for (int s = 0; s < STARGEMM__NSTAT; s++) {
		row[4 * s] = st->bytes[s];
		row[4 * s + 1] = st->partial_bytes[s];
		row[4 * s + 2] = st->device_bytes[s];
		row[4 * s + 3] = st->pin_seconds[s];
	}
}

void stargemm__stationary_ranks(struct stargemm__traffic t[STARGEMM__NSTAT], const double *rows,
				int nranks)
{
	for (int s = 0; s < STARGEMM__NSTAT; s++) {
		t[s].bytes = t[s].bytes_max = t[s].partial_bytes_max = 0.0;
		t[s].device_bytes_max = t[s].pin_seconds_max = 0.0;
		for (int q = 0; q < nranks; q++) {
			const double *row = rows + (size_t)q * STARGEMM__STAT_ROW + 4 * s;

			t[s].bytes_max = fmax(t[s].bytes_max, row[0]);
			t[s].partial_bytes_max = fmax(t[s].partial_bytes_max, row[1]);
			t[s].device_bytes_max = fmax(t[s].device_bytes_max, row[2]);
			t[s].pin_seconds_max = fmax(t[s].pin_seconds_max, row[3]);
			t[s].bytes += 0.5 * (row[0] + row[1]);   /* sent and received */
		}
	}
}

double stargemm__stationary_time(const struct stargemm__traffic *t,
				 const struct stargemm__rates *rates)
{
	double during = fmax(t->flops_max / rates->flops + t->tasks_max * rates->task,
			     t->bytes_max / rates->net + t->pin_seconds_max);

	if (rates->device > 0.0)
		during = fmax(during, t->device_bytes_max / rates->device);
	return during + t->partial_bytes_max / rates->net;
}

int stargemm__stationary_phases(int64_t reuse_a, int64_t reuse_b,
				struct stargemm__phase ph[STARGEMM__MAX_PHASES])
{
	int64_t a = reuse_a > 1 ? reuse_a : 1, b = reuse_b > 1 ? reuse_b : 1;
	int64_t lo = a < b ? a : b, hi = a < b ? b : a;
	int n = 0;

	ph[n++] = (struct stargemm__phase){ 0u, 1 };
	if (lo > 1)
		ph[n++] = (struct stargemm__phase){ 3u, lo - 1 };
	if (hi > lo)
		ph[n++] = (struct stargemm__phase){ a > b ? 1u : 2u, hi - lo };
	return n;
}

double stargemm__stationary_mean_time(const struct stargemm__traffic (*t)[STARGEMM__NSTAT],
				      const struct stargemm__phase *ph, int nphases,
				      enum stargemm__stationary s,
				      const struct stargemm__rates *rates)
{
	double sum = 0.0, products = 0.0;

	for (int p = 0; p < nphases; p++) {
		sum += (double)ph[p].count * stargemm__stationary_time(&t[p][s], rates);
		products += (double)ph[p].count;
	}
	return sum / products;
}

enum stargemm__stationary stargemm__stationary_pick(const double time[STARGEMM__NSTAT],
						    unsigned allowed)
{
	enum stargemm__stationary best = STARGEMM__STAT_C;
	double best_time = time[STARGEMM__STAT_C];

	for (int s = STARGEMM__STAT_A; s < STARGEMM__NSTAT; s++)
		if ((allowed >> s & 1) && time[s] < MARGIN * best_time) {
			best = (enum stargemm__stationary)s;
			best_time = time[s];
		}
	return best;
}

char stargemm__stationary_letter(enum stargemm__stationary s)
{
	return s == STARGEMM__STAT_A ? 'A' : s == STARGEMM__STAT_B ? 'B' : 'C';
}
