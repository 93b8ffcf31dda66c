/*
 * distribution.h — one axis of a Cartesian distribution of tiles (src/distribution.c),
 * shared by the matrix descriptor (src/internal.h) and the pure inspector
 * (src/worklist.h). Pure C, no MPI or StarPU.
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

#endif /* STARGEMM_DISTRIBUTION_H */
