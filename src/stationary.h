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
	double bytes;       /* bytes moved over MPI, all ranks (each tile once per
			       receiving rank: StarPU-MPI's cache) */
	int64_t tiles;      /* tiles moved over MPI, partial C tiles included */
	int64_t partials;   /* partial C tiles (0 for C-stationary) */
	double flops;       /* flops of all the computed products */
	int64_t products;   /* computed products (the norm filter's are not) */
};

/* The three choices' costs for request @p r over @p nranks ranks, elements of @p elem
 * bytes, into @p t (indexed by enum stargemm__stationary). Products absent or left out
 * by the norm filter count nothing. Returns 0 or -ENOMEM. */
int stargemm__stationary_traffic(const struct stargemm__request *r, int nranks,
				 int64_t elem, struct stargemm__traffic t[STARGEMM__NSTAT]);

/* The model's time of a choice: the busiest rank's flops at @p flop_rate (flop/s per
 * rank) or its tiles' bytes at @p byte_rate (bytes/s per rank), whichever is longer
 * (the tiles arrive while the products run), then its partial tiles' bytes at
 * @p byte_rate (they are sent and summed once the products are done). */
double stargemm__stationary_time(const struct stargemm__traffic *t, double flop_rate,
				 double byte_rate);

/* The choice of least model time among those @p allowed (bit 1 << choice); C unless
 * another takes less than 0.58 of its time (MARGIN in stationary.c). */
enum stargemm__stationary stargemm__stationary_pick(const struct stargemm__traffic *t,
						    unsigned allowed, double flop_rate,
						    double byte_rate);

/* 'C', 'A' or 'B'. */
char stargemm__stationary_letter(enum stargemm__stationary s);

#endif
