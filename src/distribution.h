/*
 * distribution.h — one axis of a Cartesian distribution of tiles, and the process grid
 * whose process (p, q) is some rank (src/distribution.c), shared by the matrix
 * descriptor (src/internal.h) and the pure inspector (src/worklist.h). Pure C, no MPI or
 * StarPU.
 */
#ifndef STARGEMM_DISTRIBUTION_H
#define STARGEMM_DISTRIBUTION_H

#include <stdint.h>

/* One axis (tile rows or tile columns) of a Cartesian distribution (distribution.c):
 * tile t is on process proc[t] of the axis (a process row or column), its local[t]-th
 * tile there; the tiles of process p are at[start[p] .. start[p + 1]), increasing. */
struct stargemm__axis {
	int64_t n;
	int nproc;
	int *proc;
	int64_t *local, *start, *at;
	int64_t maxlocal;         /* the most tiles on one process */
};

/* The axis of @p n tiles over @p nproc processes, tile t on proc[t] (NULL: t mod
 * nproc); @p what names proc in the error of an index out of [0, nproc). */
int stargemm__axis_init(struct stargemm__axis *a, int64_t n, int nproc, const int *proc,
			const char *what);
void stargemm__axis_free(struct stargemm__axis *a);

/* A P x Q process grid: process (p, q) is rank rank[p Q + q], and rank r is process
 * coord[r] = p Q + q (the inverse, computed once). Both NULL: row-major, process (p, q)
 * is rank p Q + q (what stargemm__grid_init() keeps for a map in that order, too). A
 * matrix owns its arrays; the inspector's operands borrow them. */
struct stargemm__grid {
	int P, Q;
	int *rank, *coord;
};

/* The P x Q grid of the map @p rank (P Q entries, process (p, q) at p Q + q; NULL:
 * row-major), copied. Errors name @p fn: a rank out of [0, P Q) or listed twice (the map
 * must be a permutation of the ranks). P Q must be the number of ranks (checked before). */
int stargemm__grid_init(struct stargemm__grid *g, int P, int Q, const int *rank,
			const char *fn);
void stargemm__grid_free(struct stargemm__grid *g);

/* The first process p Q + q that is not the same rank on grids @p a and @p b of one
 * shape, or -1 when they are the same grid. */
int stargemm__grid_differs(const struct stargemm__grid *a, const struct stargemm__grid *b);

/* The rank of process (p, q). */
static inline int stargemm__grid_rank(const struct stargemm__grid *g, int p, int q)
{
	return g->rank ? g->rank[p * g->Q + q] : p * g->Q + q;
}

/* The process (*p, *q) of rank @p rank (in [0, P Q)). */
static inline void stargemm__grid_coords(const struct stargemm__grid *g, int rank, int *p,
					 int *q)
{
	int at = g->coord ? g->coord[rank] : rank;

	*p = at / g->Q;
	*q = at % g->Q;
}

#endif /* STARGEMM_DISTRIBUTION_H */
