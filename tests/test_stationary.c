/*
 * tests/test_stationary.c — unit tests of the stationary model (src/stationary.c): no
 * MPI, no StarPU. TAP output.
 *
 * Dense problems on P x Q grids (2D block-cyclic, tiles of one size) have closed
 * forms: C-stationary moves each op(A) tile to the Q - 1 other ranks of its grid row
 * and each op(B) tile to the P - 1 other ranks of its grid column; A-stationary moves
 * op(B)(k, j) to the P ranks of grid column k mod Q but its owner, and gives each C
 * tile Q partials, Q - 1 of them sent; B-stationary the transpose. A tall-skinny
 * product (one C tile column) computes on one rank of a 1 x 4 grid C-stationary, on
 * every rank A-stationary, and the choice follows the rates (another than C when the
 * model gives it less than 0.58 of C's time). Absent tiles and the norm filter count
 * nothing. With a tile state, a rank's cached moves are not counted, its reads of
 * tiles not on its GPUs are, and the ranks' shared rows give the busiest rank's. Over
 * a sequence of products (reuse_a, reuse_b), the phases and the mean time per product
 * decide: a cold C that loses over one product wins over ten.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "stationary.h"
#include "tap.h"



struct dense {
	int64_t mt, nt, kt, t;
	int64_t *row_off, *col_off, *k_off;
	int P, Q;
};

static int64_t *regular(int64_t count, int64_t t)
{
	int64_t *off = malloc((size_t)(count + 1) * sizeof(*off));

	for (int64_t i = 0; i <= count; i++)
		off[i] = i * t;
	return off;
}

static void request(struct dense *d, struct stargemm__request *r)
{
	d->row_off = regular(d->mt, d->t);
	d->col_off = regular(d->nt, d->t);
	d->k_off = regular(d->kt, d->t);
	*r = (struct stargemm__request){ 0 };
	r->mt = d->mt;
	r->nt = d->nt;
	r->kt = d->kt;
	r->row_off = d->row_off;
	r->col_off = d->col_off;
	r->k_off = d->k_off;
	r->a = (struct stargemm__operand){ .grid = { .P = d->P, .Q = d->Q }, .ld = d->mt };
	r->b = (struct stargemm__operand){ .grid = { .P = d->P, .Q = d->Q }, .ld = d->kt };
	r->c = (struct stargemm__operand){ .grid = { .P = d->P, .Q = d->Q }, .ld = d->mt };
}

static void done(struct dense *d)
{
	free(d->row_off);
	free(d->col_off);
	free(d->k_off);
}

/* The closed forms on a P x Q grid whose tile counts are multiples of P and Q. */
static void dense_case(int P, int Q, int64_t mt, int64_t nt, int64_t kt)
{
	struct dense d = { .mt = mt, .nt = nt, .kt = kt, .t = 4, .P = P, .Q = Q };
	struct stargemm__request r;
	struct stargemm__traffic t[STARGEMM__NSTAT];
	double tile = 8.0 * 16.0, total = 2.0 * 64.0 * (double)(mt * nt * kt);
	int64_t b_a = 0;
	char name[128];

	request(&d, &r);
	tap_ok(stargemm__stationary_traffic(&r, P * Q, 8, NULL, t) == 0, "traffic computed");
	/* A-stationary: op(B)(k, j) to grid column k mod Q's P ranks but its owner. */
	for (int64_t k = 0; k < kt; k++)
		for (int64_t j = 0; j < nt; j++)
			b_a += P - (j % Q == k % Q);
	snprintf(name, sizeof(name), "%dx%d %lldx%lldx%lld: C moves A (Q-1) and B (P-1) "
		 "times", P, Q, (long long)mt, (long long)nt, (long long)kt);
	tap_ok(t[STARGEMM__STAT_C].tiles == mt * kt * (Q - 1) + kt * nt * (P - 1) &&
	   t[STARGEMM__STAT_C].bytes == tile * (double)t[STARGEMM__STAT_C].tiles &&
	   t[STARGEMM__STAT_C].partials == 0, name);
	tap_ok(t[STARGEMM__STAT_A].partials == mt * nt * Q &&
	   t[STARGEMM__STAT_A].tiles == b_a + mt * nt * (Q - 1),
	   "A-stationary: B to A's grid column, Q partials per C tile, Q-1 sent");
	tap_ok(t[STARGEMM__STAT_B].partials == mt * nt * P, "B-stationary: P partials per C tile");
	for (int s = 0; s < STARGEMM__NSTAT; s++)
		tap_ok(fabs(t[s].flops - total) < 1e-9 * total && t[s].products == mt * nt * kt &&
		   fabs(t[s].flops_max - total / (P * Q)) < 1e-9 * total,
		   "every choice: all the flops, evenly spread");
	done(&d);
}

/* One C tile column: C-stationary computes on grid column 0 only. */
/* The model's choice among @p allowed over one product. */
static enum stargemm__stationary pick(const struct stargemm__traffic *t, unsigned allowed,
				      const struct stargemm__rates *rates)
{
	double time[STARGEMM__NSTAT];

	for (int s = 0; s < STARGEMM__NSTAT; s++)
		time[s] = stargemm__stationary_time(&t[s], rates);
	return stargemm__stationary_pick(time, allowed);
}

static void tall_skinny(void)
{
	struct dense d = { .mt = 12, .nt = 1, .kt = 12, .t = 4, .P = 1, .Q = 4 };
	struct stargemm__request r;
	struct stargemm__traffic t[STARGEMM__NSTAT];
	struct stargemm__rates free_net = { 1e9, INFINITY, 0 }, free_flops = { INFINITY, 1e9, 0 };
	struct stargemm__rates unit = { 1.0, 2.0, 0 };
	unsigned all = 7;

	request(&d, &r);
	stargemm__stationary_traffic(&r, 4, 8, NULL, t);
	tap_ok(fabs(t[STARGEMM__STAT_C].flops_max - t[0].flops) < 1e-6 &&
	   fabs(t[STARGEMM__STAT_A].flops_max - t[0].flops / 4) < 1e-6 &&
	   fabs(t[STARGEMM__STAT_B].flops_max - t[0].flops) < 1e-6,
	   "tall-skinny on 1x4: C and B compute on 1 rank, A on 4");
	tap_ok(pick(t, all, &free_net) == STARGEMM__STAT_A,
	   "free network: A-stationary");
	tap_ok(pick(t, all & ~2u, &free_net) == STARGEMM__STAT_C,
	   "A not allowed: C (B is no faster)");
	tap_ok(pick(t, all & ~4u, &free_flops) ==
	   (t[STARGEMM__STAT_A].bytes_max + t[STARGEMM__STAT_A].partial_bytes_max <
			    0.58 * t[STARGEMM__STAT_C].bytes_max
		    ? STARGEMM__STAT_A : STARGEMM__STAT_C),
	   "free flops: the fewest bytes of the busiest rank, partials included");
	tap_ok(t[STARGEMM__STAT_C].partial_bytes_max == 0.0 &&
	   t[STARGEMM__STAT_A].partial_bytes_max > 0.0, "partials counted apart, C has none");
	tap_ok(fabs(stargemm__stationary_time(&t[STARGEMM__STAT_A], &unit) -
		(fmax(t[STARGEMM__STAT_A].flops_max, t[STARGEMM__STAT_A].bytes_max / 2.0) +
		 t[STARGEMM__STAT_A].partial_bytes_max / 2.0)) < 1e-6,
	   "time: flops or tiles, whichever longer, then partials");
	tap_ok(stargemm__stationary_letter(STARGEMM__STAT_B) == 'B' &&
	   stargemm__stationary_letter(STARGEMM__STAT_C) == 'C', "letters");
	done(&d);
}

/* Absent op(A) tiles and filtered products count nothing. */
static void sparse_and_filtered(void)
{
	struct dense d = { .mt = 4, .nt = 4, .kt = 4, .t = 2, .P = 1, .Q = 2 };
	struct stargemm__request r;
	struct stargemm__traffic t[STARGEMM__NSTAT];
	uint8_t present[16];
	double na[16], nb[16];

	request(&d, &r);
	for (int e = 0; e < 16; e++) {
		present[e] = e % 3 != 0;   /* 10 of A's 16 tiles */
		na[e] = 1.0;
		nb[e] = e < 4 ? 1e-9 : 1.0;   /* op(B)'s column 0 below the threshold */
	}
	r.a.present = present;
	stargemm__stationary_traffic(&r, 2, 8, NULL, t);
	tap_ok(t[STARGEMM__STAT_C].products == 10 * 4, "absent A tiles: 4 products each fewer");
	r.a.norm = na;
	r.b.norm = nb;
	r.eps = 1e-3;
	stargemm__stationary_traffic(&r, 2, 8, NULL, t);
	tap_ok(t[STARGEMM__STAT_A].products == 10 * 3, "filtered: op(B)'s column 0 counts nothing");
	done(&d);
}

/* The tile state (one rank's knowledge): what its moves spare when the tiles are still
 * cached, its device bytes, and the ranks' rows shared back into the maxima. */
static int all_cached(void *arg, int operand, int64_t i, int64_t j, int from, int to)
{
	return 1;
}

static int none_cached(void *arg, int operand, int64_t i, int64_t j, int from, int to)
{
	return 0;
}

static int op_a_on_device(void *arg, int operand, int64_t i, int64_t j)
{
	return operand == 0;
}

static int nothing_on_device(void *arg, int operand, int64_t i, int64_t j)
{
	return 0;
}

static void tile_state(void)
{
	struct dense d = { .mt = 12, .nt = 1, .kt = 12, .t = 4, .P = 1, .Q = 4 };
	struct stargemm__request r;
	struct stargemm__traffic cold[STARGEMM__NSTAT], t[STARGEMM__NSTAT];
	struct stargemm__tile_state st = { .me = 0, .cached = none_cached };
	struct stargemm__rates rates = { 1e9, 1e9, 1e9 };
	double rows[4 * STARGEMM__STAT_ROW] = { 0 }, tile = 8.0 * 16.0;

	request(&d, &r);
	stargemm__stationary_traffic(&r, 4, 8, NULL, cold);
	stargemm__stationary_traffic(&r, 4, 8, &st, t);
	tap_ok(t[STARGEMM__STAT_C].bytes == cold[STARGEMM__STAT_C].bytes &&
	   t[STARGEMM__STAT_A].device_bytes_max == 0.0,
	   "nothing cached, no GPU: the counts without a state, no device bytes");
	/* rank 0 owns C's tile column: C-stationary receives op(A)'s 9 tiles of the other
	 * grid columns per tile row (12 x 9), A-stationary its partials from 3 ranks */
	tap_ok(st.bytes[STARGEMM__STAT_C] == 12.0 * 9 * tile &&
	   st.partial_bytes[STARGEMM__STAT_A] == 12.0 * 3 * tile,
	   "rank 0's row: C receives A's remote tiles, A its partials");
	tap_ok(st.received[STARGEMM__STAT_C] == 12.0 * 9 * tile &&
	   st.received[STARGEMM__STAT_A] == 12.0 * 3 * tile &&
	   st.received[STARGEMM__STAT_B] == st.received[STARGEMM__STAT_C],
	   "rank 0 receives: C and B op(A)'s tiles (it owns B and C), A the partials");
	st.cached = all_cached;
	stargemm__stationary_traffic(&r, 4, 8, &st, t);
	tap_ok(st.bytes[STARGEMM__STAT_C] == 0.0 && st.partial_bytes[STARGEMM__STAT_A] > 0.0,
	   "every tile cached: rank 0 receives no op(A) tile, partials still move");
	st.on_device = nothing_on_device;
	stargemm__stationary_traffic(&r, 4, 8, &st, t);
	tap_ok(st.device_bytes[STARGEMM__STAT_C] == (12.0 * 12 + 12) * tile,
	   "with GPUs, C-stationary loads every op(A) and op(B) tile rank 0 reads once");
	tap_ok(st.device_bytes[STARGEMM__STAT_A] == (12.0 * 3 + 3) * tile,
	   "A-stationary: its own 36 op(A) tiles, 3 op(B) tiles, no partial back (it owns C)");
	st.on_device = op_a_on_device;
	stargemm__stationary_traffic(&r, 4, 8, &st, t);
	tap_ok(st.device_bytes[STARGEMM__STAT_C] == 12.0 * tile,
	   "op(A) already on the GPUs: only op(B)'s 12 tiles load");
	/* the rows shared: rank 2 the busiest for A-stationary's device bytes */
	for (int q = 0; q < 4; q++)
		for (int s = 0; s < STARGEMM__NSTAT; s++) {
			rows[q * STARGEMM__STAT_ROW + 4 * s] = 10.0 * (q + 1);
			rows[q * STARGEMM__STAT_ROW + 4 * s + 1] = 2.0;
			rows[q * STARGEMM__STAT_ROW + 4 * s + 2] = q == 2 ? 500.0 : 1.0;
			rows[q * STARGEMM__STAT_ROW + 4 * s + 3] = q == 1 ? 0.25 : 0.0;
		}
	stargemm__stationary_ranks(t, rows, 4);
	tap_ok(t[STARGEMM__STAT_A].bytes_max == 40.0 && t[STARGEMM__STAT_A].partial_bytes_max == 2.0 &&
	   t[STARGEMM__STAT_A].device_bytes_max == 500.0 &&
	   t[STARGEMM__STAT_A].pin_seconds_max == 0.25 &&
	   t[STARGEMM__STAT_A].bytes == 0.5 * (100.0 + 8.0),
	   "shared rows: the busiest rank's of each kind, half of all sent + received");
	st.received[STARGEMM__STAT_B] = 7.0;   /* the walk's */
	st.pin_seconds[STARGEMM__STAT_B] = 0.5;
	stargemm__stationary_row(&st, rows);
	tap_ok(rows[4 * STARGEMM__STAT_B] == st.bytes[STARGEMM__STAT_B] &&
	   rows[4 * STARGEMM__STAT_B + 2] == st.device_bytes[STARGEMM__STAT_B] &&
	   rows[4 * STARGEMM__STAT_B + 3] == 0.5, "a rank's row from its state");
	tap_ok(t[STARGEMM__STAT_A].pin_seconds_max == 0.25 &&
	   fabs(stargemm__stationary_time(&t[STARGEMM__STAT_A], &rates) -
		(fmax(t[STARGEMM__STAT_A].flops_max / 1e9, 40.0 / 1e9 + 0.25) + 2.0 / 1e9)) <
		   1e-12,
	   "time: pinning what is received adds to the network's bytes");
	t[STARGEMM__STAT_C].flops_max = 1.0;
	t[STARGEMM__STAT_C].bytes_max = t[STARGEMM__STAT_C].partial_bytes_max = 0.0;
	t[STARGEMM__STAT_C].pin_seconds_max = 0.0;
	t[STARGEMM__STAT_C].device_bytes_max = 3e9;
	tap_ok(fabs(stargemm__stationary_time(&t[STARGEMM__STAT_C], &rates) - 3.0) < 1e-12,
	   "time: the device bytes when they take longest");
	rates.device = 0.0;
	tap_ok(fabs(stargemm__stationary_time(&t[STARGEMM__STAT_C], &rates) - 1e-9) < 1e-18,
	   "a device rate of 0: no device term");
	t[STARGEMM__STAT_C].tasks_max = 100.0;
	rates.task = 1e-5;
	tap_ok(fabs(stargemm__stationary_time(&t[STARGEMM__STAT_C], &rates) - (1e-9 + 1e-3)) < 1e-15,
	   "time: each task's cost adds to the flops' time");
	done(&d);
}

/* The phases of a sequence, an operand in place in the walk, the mean time. */
static void sequences(void)
{
	struct stargemm__phase ph[STARGEMM__MAX_PHASES];
	struct dense d = { .mt = 12, .nt = 1, .kt = 12, .t = 4, .P = 1, .Q = 4 };
	struct stargemm__request r;
	struct stargemm__traffic t[2][STARGEMM__NSTAT] = { 0 };
	struct stargemm__tile_state st = { .me = 0, .cached = none_cached,
					   .on_device = nothing_on_device };
	struct stargemm__rates unit = { 1.0, 1.0, 0.0 };
	double tile = 8.0 * 16.0, time[STARGEMM__NSTAT];
	int n;

	tap_ok(stargemm__stationary_phases(0, 1, ph) == 1 && ph[0].in_place == 0 &&
	   ph[0].count == 1, "no reuse: this product only, as things are");
	n = stargemm__stationary_phases(5, 5, ph);
	tap_ok(n == 2 && ph[1].in_place == 3 && ph[1].count == 4,
	   "A and B for 5: 4 more products with both in place");
	n = stargemm__stationary_phases(10, 3, ph);
	tap_ok(n == 3 && ph[1].in_place == 3 && ph[1].count == 2 && ph[2].in_place == 1 &&
	   ph[2].count == 7, "A for 10, B for 3: 2 with both, then 7 with A alone");
	n = stargemm__stationary_phases(-2, 4, ph);
	tap_ok(n == 2 && ph[1].in_place == 2 && ph[1].count == 3, "B for 4 alone: 3 with B");
	request(&d, &r);
	st.in_place = 1;
	stargemm__stationary_traffic(&r, 4, 8, &st, t[0]);
	/* rank 0 owns B and C: C-stationary receives only op(A), A-stationary sends op(B) */
	tap_ok(st.bytes[STARGEMM__STAT_C] == 0.0 && st.device_bytes[STARGEMM__STAT_C] == 12.0 * tile &&
	   st.bytes[STARGEMM__STAT_A] == 9.0 * tile,
	   "op(A) in place: C moves and loads no op(A) tile, A still sends op(B)'s");
	st.in_place = 2;
	stargemm__stationary_traffic(&r, 4, 8, &st, t[0]);
	tap_ok(st.bytes[STARGEMM__STAT_A] == 0.0 && st.partial_bytes[STARGEMM__STAT_A] == 36.0 * tile &&
	   st.bytes[STARGEMM__STAT_C] == 12.0 * 9 * tile,
	   "op(B) in place: A sends no op(B) tile, its partials still move; C receives op(A)");
	/* one product: C 10 s, A 4 s (A wins); then C 1 s, A 3 s for 9 more */
	for (int p = 0; p < 2; p++)
		for (int s = 0; s < STARGEMM__NSTAT; s++)
			t[p][s] = (struct stargemm__traffic){ .flops_max = 100.0 };
	t[0][STARGEMM__STAT_C].flops_max = 10.0;
	t[0][STARGEMM__STAT_A].flops_max = 4.0;
	t[1][STARGEMM__STAT_C].flops_max = 1.0;
	t[1][STARGEMM__STAT_A].flops_max = 3.0;
	n = stargemm__stationary_phases(10, 10, ph);
	for (int s = 0; s < STARGEMM__NSTAT; s++)
		time[s] = stargemm__stationary_mean_time((const struct stargemm__traffic (*)[
								 STARGEMM__NSTAT])t, ph, n,
							 (enum stargemm__stationary)s, &unit);
	tap_ok(fabs(time[STARGEMM__STAT_C] - 1.9) < 1e-12 && fabs(time[STARGEMM__STAT_A] - 3.1) < 1e-12,
	   "mean time over 10 products: (10 + 9 x 1) / 10 for C, (4 + 9 x 3) / 10 for A");
	tap_ok(stargemm__stationary_pick(time, 7u) == STARGEMM__STAT_C &&
	   stargemm__stationary_mean_time((const struct stargemm__traffic (*)[STARGEMM__NSTAT])t,
					  ph, 1, STARGEMM__STAT_A, &unit) == 4.0,
	   "over the sequence C, over the first product alone A's 4 s");
	done(&d);
}

int main(void)
{
	dense_case(2, 3, 6, 6, 6);
	dense_case(3, 2, 6, 12, 6);
	dense_case(1, 4, 4, 8, 8);
	dense_case(2, 2, 4, 4, 8);
	tall_skinny();
	sparse_and_filtered();
	tile_state();
	sequences();
	return tap_done();
}
