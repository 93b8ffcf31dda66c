/*
 * pack.h — the layout of a packed matrix (src/pack.c: small tiles several per StarPU
 * handle), shared by the matrix descriptor (src/internal.h) and the pure inspector
 * (src/worklist.h). Pure C, no MPI or StarPU.
 */
#ifndef STARGEMM_PACK_H
#define STARGEMM_PACK_H

#include <stdint.h>

/* The layout of a packed matrix: gmt x gnt packs, pack (I, J) holding the present
 * tiles of tile rows [row_first[I], row_first[I + 1]) and tile columns
 * [col_first[J], col_first[J + 1]); tile (i, j) starts offset[i + j * mt] elements
 * into its pack's buffer; a pack of 0 elements has no handle. */
struct stargemm__packing {
	int64_t gmt, gnt;
	int64_t *row_first, *col_first;   /* gmt + 1, gnt + 1 */
	int64_t *row_group, *col_group;   /* mt, nt: the group of a tile row, column */
	int64_t *offset;                  /* mt * nt */
	int64_t *elems;                   /* gmt * gnt */
};

/* What the layout depends on: the tiling, the pattern (NULL: dense), the processes of
 * tile rows and columns (NULL: not given; groups are then dealt cyclically) and the
 * settings. */
struct stargemm__pack_request {
	int64_t mt, nt;
	const int64_t *row_off, *col_off;
	const uint8_t *present;
	const int *row_proc, *col_proc;
	double below, extent;
};

/* The layout (*out NULL: no axis is packed, or no group holds two tiles). Returns 0
 * or -ENOMEM (no message). */
int stargemm__pack_layout(const struct stargemm__pack_request *q,
			  struct stargemm__packing **out);
void stargemm__pack_free(struct stargemm__packing *pk);
/* Whether two layouts group tile rows and columns alike (matrices of one tiling packed
 * with the same settings do; their offsets differ with their patterns). */
int stargemm__pack_same_groups(const struct stargemm__packing *a,
			       const struct stargemm__packing *b);
/* proc[t] of each tile of an axis whose groups (group[t]) are dealt cyclically. */
void stargemm__pack_cyclic(const int64_t *group, int64_t n, int nproc, int *proc);

/* Packs: small tiles stored several per StarPU handle (src/pack.c). An axis (tile rows
 * or columns) of a block-sparse matrix is packed when its mean tile extent is below
 * STARGEMM_PACK_BELOW elements, into groups of consecutive tiles of at least
 * STARGEMM_PACK_EXTENT elements (src/settings.c; STARGEMM_PACK_BELOW=0: never pack). */
int stargemm__pack_settings(double *below, double *extent);

#endif /* STARGEMM_PACK_H */
