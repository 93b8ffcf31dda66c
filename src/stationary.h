/*
 * stationary.h — which operand of C = op(A) op(B) stays where it lives (paper 002):
 * the MPI volume and the busiest rank's work of each choice, and the choice itself.
 * Pure (planning floor): no StarPU, no MPI.
 */
#ifndef STARGEMM_STATIONARY_H
#define STARGEMM_STATIONARY_H

#include <stdint.h>

#include "worklist.h"

/* C-stationary: each product runs on its C tile's owner, op(A) and op(B) tiles move
 * there (the work list). A-stationary: on op(A)(i, k)'s owner, op(B)(k, j) moves there,
 * and each rank's partial C(i, j) goes to C's owner to be added. B-stationary: the
 * same with op(B)(k, j)'s owner and op(A)(i, k). */
enum stargemm__stationary { STARGEMM__STAT_C, STARGEMM__STAT_A, STARGEMM__STAT_B,
			    STARGEMM__NSTAT };

/* What one choice costs, as the ranks would run it. */
struct stargemm__traffic {
	double flops_max;   /* flops of the busiest rank (the products it computes) */
	double bytes_max;   /* bytes of op(A) and op(B) tiles the busiest rank sends plus
			       receives over MPI (while the products run) */
	double partial_bytes_max; /* bytes of partial C tiles the busiest rank sends plus
				     receives (once its products are done) */
	double device_bytes_max;  /* bytes between host and GPUs of the busiest rank: the
				     op(A), op(B) tiles it reads not yet on its GPUs, its
				     partial C tiles back (0 without a tile state) */
	double pin_seconds_max;   /* seconds the busiest rank pins host memory for what it
				     receives (a rank with GPUs; 0 without a tile state) */
	double tasks_max;   /* tile-product tasks of the busiest rank (the caller's: 0
			       from the walk) */
	double bytes;       /* bytes moved over MPI, all ranks (each tile once per
			       receiving rank: StarPU-MPI's cache) */
	int64_t tiles;      /* tiles moved over MPI, partial C tiles included */
	int64_t partials;   /* partial C tiles (0 for C-stationary) */
	double flops;       /* flops of all the computed products */
	int64_t products;   /* computed products (the norm filter's are not) */
};

/* What rank @p me knows of the tiles already where a choice needs them: asked only of
 * the moves to or from @p me and of the tiles @p me reads. Tile (i, j) of op(A)
 * (operand 0) or op(B) (1). */
struct stargemm__tile_state {
	int me;
	/* moved from rank @p from to rank @p to before and still valid there (StarPU-MPI's
	 * cache): not sent again */
	int (*cached)(void *arg, int operand, int64_t i, int64_t j, int from, int to);
	/* valid on one of @p me's GPUs already; NULL: @p me has no GPU (no device bytes) */
	int (*on_device)(void *arg, int operand, int64_t i, int64_t j);
	void *arg;
	/* bit o (0: op(A), 1: op(B)): every tile of that operand is in place (neither
	 * sent nor loaded), as in the products after the first of a run that reads the
	 * operand unchanged (stargemm_bsgemm_options.reuse_a, reuse_b) */
	unsigned in_place;
	/* out, per choice: @p me's row of struct stargemm__traffic's per-rank counts, and
	 * the bytes it receives (op(A), op(B) and partial tiles); pin_seconds is the
	 * caller's (0 from the walk) */
	double bytes[STARGEMM__NSTAT], partial_bytes[STARGEMM__NSTAT],
		device_bytes[STARGEMM__NSTAT], received[STARGEMM__NSTAT],
		pin_seconds[STARGEMM__NSTAT];
};

/* The three choices' costs for request @p r over @p nranks ranks, elements of @p elem
 * bytes, into @p t (indexed by enum stargemm__stationary). Products absent or left out
 * by the norm filter count nothing. With @p state (may be NULL: every move counted,
 * no device bytes), its rank's moves of tiles still cached are not counted, its device
 * bytes are, and its row is written into @p state: only that row is right, the ranks
 * share their rows (stargemm__stationary_ranks()). Returns 0 or -ENOMEM. */
int stargemm__stationary_traffic(const struct stargemm__request *r, int nranks,
				 int64_t elem, struct stargemm__tile_state *state,
				 struct stargemm__traffic t[STARGEMM__NSTAT]);

/* Doubles of one rank's row (struct stargemm__tile_state's out fields, choice after
 * choice: bytes, partial bytes, device bytes, pin seconds). */
#define STARGEMM__STAT_ROW (4 * STARGEMM__NSTAT)
/* One rank's row from its state, into @p row. */
void stargemm__stationary_row(const struct stargemm__tile_state *st, double *row);
/* The busiest rank's bytes of each kind in @p t, and the bytes moved over MPI by all,
 * from the @p nranks ranks' rows @p rows (rank q's at q * STARGEMM__STAT_ROW). */
void stargemm__stationary_ranks(struct stargemm__traffic t[STARGEMM__NSTAT], const double *rows,
				int nranks);

/* Per rank: flops and bytes over MPI per second, bytes between the host and its GPUs
 * per second (0: no GPU, no device term), seconds a tile-product task costs beyond its
 * flops (0: not counted). */
struct stargemm__rates {
	double flops, net, device, task;
};

/* The model's time of a choice: the busiest rank's flops (and its tasks' costs), or
 * its tiles' bytes over
 * MPI (and the pinning of what it receives), or its bytes between host and GPUs, at
 * @p rates, whichever is longest (the tiles arrive while the products run), then its
 * partial tiles' bytes over MPI (they are sent and summed once the products are
 * done). */
double stargemm__stationary_time(const struct stargemm__traffic *t,
				 const struct stargemm__rates *rates);

/* A run of products whose operands stay in place alike: those after the first of a
 * sequence where A is read unchanged by @p reuse_a products and B by @p reuse_b. */
struct stargemm__phase {
	unsigned in_place;   /* struct stargemm__tile_state.in_place */
	int64_t count;       /* products */
};
#define STARGEMM__MAX_PHASES 3

/* The phases of a sequence of products that starts with this one, A read unchanged
 * by the first @p reuse_a (0 or 1: this one only), B by the first @p reuse_b: this
 * product (in_place 0: what is in place now), then both operands in place while both
 * are unchanged, then the longer-lived one alone. Into @p ph; returns their number
 * (1 to STARGEMM__MAX_PHASES; their counts add up to the longer reuse). */
int stargemm__stationary_phases(int64_t reuse_a, int64_t reuse_b,
				struct stargemm__phase ph[STARGEMM__MAX_PHASES]);

/* The model's mean time per product of choice @p s over @p nphases phases @p ph,
 * phase p's costs in @p t[p]. */
double stargemm__stationary_mean_time(const struct stargemm__traffic (*t)[STARGEMM__NSTAT],
				      const struct stargemm__phase *ph, int nphases,
				      enum stargemm__stationary s,
				      const struct stargemm__rates *rates);

/* The choice of least time @p time[choice] among those @p allowed (bit 1 << choice); C
 * unless another takes less than 0.58 of its time (MARGIN in stationary.c). */
enum stargemm__stationary stargemm__stationary_pick(const double time[STARGEMM__NSTAT],
						    unsigned allowed);

/* 'C', 'A' or 'B'. */
char stargemm__stationary_letter(enum stargemm__stationary s);

#endif
