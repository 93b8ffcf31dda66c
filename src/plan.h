/*
 * plan.h — what the planner (src/plan.c) shares with the inspector beyond its public
 * functions (src/stargemm.h: stargemm_plan_compute()). Planning floor: pure.
 */
#ifndef STARGEMM_PLAN_H
#define STARGEMM_PLAN_H

#include <stdint.h>

/* The device (0..G-1) of a split tile of a C block (src/plan.c): the last L mod G
 * local columns of a block of L are not given whole to devices; their (L mod G) x R
 * tiles, taken column by column, are dealt out in G ranges of equal weight. @p before:
 * the weight of the split tiles before this one, @p total: of all of them. The
 * planner's model weighs every tile 1; the inspector weighs a tile by its area (its
 * share of the work). */
int stargemm__split_device(int64_t before, int64_t total, int G);
/* The plan's overrides in their ranges: b, c, d, lookahead >= 0 (0: the planner's
 * choice), c_fraction in [0, 1) (0: 0.75; NaN refused). 0, or -EINVAL with a message
 * "@p fn: ..." naming the field. */
int stargemm__check_plan_overrides(int64_t b, int64_t c, int64_t d, int lookahead,
				   double c_fraction, const char *fn);

#endif
