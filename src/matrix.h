/*
 * matrix.h — the tiled, distributed matrix descriptor (src/matrix.c, src/inplace.c,
 * src/matrix_io.c): the tiling as offset arrays, so that regular tilings with a ragged
 * last tile and fully irregular tilings (block-sparse work) are the same object; tile
 * handles may be NULL for tiles that do not exist (sparse shapes). Descriptor floor
 * (doc/design.md, "Layers").
 */
#ifndef STARGEMM_MATRIX_H
#define STARGEMM_MATRIX_H

#include <stdint.h>
#include <starpu.h>

#include "../codelets/element.h"
#include "distribution.h"
#include "pack.h"
#include "stargemm.h"

struct stargemm_matrix {
	int64_t m, n;             /* size in elements */
	int64_t mt, nt;           /* size in tiles */
	int64_t *row_off;         /* mt + 1 offsets: tile row i spans [row_off[i], row_off[i+1]) */
	int64_t *col_off;         /* nt + 1 offsets, same for tile columns */
	/* The P x Q process grid, and which rank each of its processes is (a copy of the
	 * distribution's map; src/distribution.h). */
	struct stargemm__grid grid;
	/* Tile (i, j) on grid process (rows.proc[i], cols.proc[j]): stargemm_matrix_owner(). */
	struct stargemm__axis rows, cols;
	int64_t session;          /* the run it was created in (stargemm__session()) */
	MPI_Comm tag_comm;        /* the communicator of its tags */
	int64_t tag_count;        /* its tags: tag_base .. tag_base + tag_count - 1 */
	int64_t tag_base;         /* StarPU-MPI tag of tile (i, j) = tag_base + i + j * mt */
	starpu_data_handle_t *tiles; /* mt * nt handles, tile (i, j) at i + j * mt; NULL
					when absent */
	uint8_t *present;         /* mt * nt flags (block-sparse), or NULL: every tile */
	int64_t npresent;         /* tiles present */
	/* The element type; elem_size = type->size: tile storage, StarPU registration,
	 * copies to and from user arrays and the planner's tile bytes take it from here. */
	const struct stargemm__element *type;
	size_t elem_size;
	void **storage;           /* mt * nt pointers; non-NULL for tiles this rank allocated */
	int64_t stored_bytes;     /* this rank's tiles, counted by stargemm__storage_reserve() */
	/* Packed (src/pack.c): tiles and storage are NULL; each pack of the layout has a
	 * handle in packs (gmt * gnt, pack (I, J) at I + J * gmt; NULL: empty), whose
	 * buffer StarPU allocates; tags are per pack. */
	struct stargemm__packing *pack;
	starpu_data_handle_t *packs;
	/* This process's tiles registered in place in a user's local array: base NULL if
	 * not. The local array holds the process's tiles in their global order along
	 * each axis, after row0 rows and col0 columns that precede the matrix (ScaLAPACK's
	 * layout, of which the matrix may be a submatrix; src/matrix.c, local_offsets()). */
	struct stargemm__local {
		void *base;       /* local element (0, 0) of the user's array */
		int64_t ld;       /* leading dimension, in elements */
		int64_t row0, col0; /* local offset of this process's first tile */
	} local;
	/* A collective call has given every tile a value (a fill, a scatter, a product
	 * into it; packs are zeroed when created). Until then the tiles read as zeros:
	 * stargemm__zero_if_unwritten() before the first read. Same on every rank. */
	int written;
	/* Made on demand (stargemm_matrix_create_generated(), src/generate.h): the
	 * generator and the tiles this rank has made; no storage, tiles registered as
	 * per-node data. NULL: a stored matrix. */
	struct stargemm__generator *gen;
};

/* One axis of a submatrix of a ScaLAPACK 2D block-cyclic array: the n elements from
 * global index first (0-based) of an axis in blocks of b, block 0 on process src (of
 * P or Q). The submatrix's tiles are the blocks it spans, the first and last ones cut
 * to it. */
struct stargemm__block_axis {
	int64_t n, b, first;
	int src;
	/* Elements of block 0 before the array's first one, not stored: an array whose
	 * first block is smaller than the others (ScaLAPACK's IMB < MB) counts from a
	 * block of the usual size, of which it lacks the first lead elements. */
	int64_t lead;
	/* On an axis of one process (P or Q = 1) its blocks lie one after the other in the
	 * local array, so a tile may span several: after the first tile (the submatrix's
	 * part of its first block), tiles of merge blocks. 0 or 1: a tile per block. */
	int64_t merge;
	/* Further ends of tiles: ncuts element offsets from the submatrix's start,
	 * increasing, inside (0, n) (the block ends of the operand that a product joins
	 * this axis with, when its blocks lie elsewhere); a tile they cross is split, its
	 * pieces on its process. NULL: none. */
	const int64_t *cuts;
	int64_t ncuts;
};
/* The side of the tiles that in-place host arrays are cut into (src/host.c), for a
 * product of type @p t with a C of m x n and this @p alpha on this process's workers:
 * the environment's STARGEMM_HOST_TILE, else stargemm__tile_for(); -EINVAL with a
 * message for a bad setting (src/tile.c). */
int stargemm__host_tile(const struct stargemm__element *t, int64_t m, int64_t n,
			double _Complex alpha, int64_t *nb);
/* The tile side stargemm recommends for a product of type @p t with a C of m x n and
 * this @p alpha whose C tiles are dealt over @p workers CPU workers (src/tile.c). */
int64_t stargemm__tile_for(const struct stargemm__element *t, int64_t m, int64_t n,
			   double _Complex alpha, int64_t workers);
/* That submatrix (rows x cols) of elements of @p type on a P x Q grid whose process
 * (p, q) is rank grid[p Q + q] (@p grid NULL: p Q + q; else checked as a distribution's
 * map, src/distribution.c), whose local tiles are registered in place in the
 * column-major local array @p base of leading dimension @p ld (checked against the
 * local rows the submatrix reaches, and agreed): nothing is copied. Errors name @p fn
 * (src/inplace.c). */
int stargemm__matrix_create_in_place(struct stargemm_matrix **out, int type,
				     const struct stargemm__block_axis *rows,
				     const struct stargemm__block_axis *cols, int P, int Q,
				     const int *grid, void *base, int64_t ld, const char *fn);
/* With GPUs, copy the latest value of every local tile of an in-place matrix back to
 * its place in the user's array (a read acquisition on host memory); else nothing. */
void stargemm__sync_in_place(const struct stargemm_matrix *A);
/* Record that a product writes in-place matrix @p A (with GPUs): the next
 * stargemm_wait() brings its tiles back to the user's array (src/wait.h); forget: A is
 * being destroyed (its unregistration brings them back). src/matrix.c. */
void stargemm__written_in_place(const struct stargemm_matrix *A);
void stargemm__forget_in_place(const struct stargemm_matrix *A);
/* A dense matrix of the given tilings distributed by @p dist, whose tiles are
 * registered in place in @p local (src/matrix.c, for src/inplace.c). */
int stargemm__matrix_create_tiled_in_place(struct stargemm_matrix **out, int type, int64_t mt,
					   const int64_t *row_sizes, int64_t nt,
					   const int64_t *col_sizes,
					   const struct stargemm_distribution *dist,
					   const struct stargemm__local *local, const char *fn);

/* Before a collective call reads @p A: if it was never written, insert tasks that zero
 * its tiles (ordered before the reads by StarPU's data dependencies), and mark it
 * written. A failed insertion is reported by the next stargemm_wait(). Collective. */
void stargemm__zero_if_unwritten(const struct stargemm_matrix *A);

/* Index of tile (i, j) in the tiles/storage arrays. */
/* Rows of tile row @p i, columns of tile column @p j (for the kernels, which do not call
 * the descriptor's functions). */
static inline int64_t stargemm__rows_of(const struct stargemm_matrix *A, int64_t i)
{
	return A->row_off[i + 1] - A->row_off[i];
}

static inline int64_t stargemm__cols_of(const struct stargemm_matrix *A, int64_t j)
{
	return A->col_off[j + 1] - A->col_off[j];
}

static inline int64_t stargemm__tile_index(const struct stargemm_matrix *A, int64_t i,
					   int64_t j)
{
	return i + j * A->mt;
}

static inline starpu_data_handle_t stargemm__tile(const struct stargemm_matrix *A,
						  int64_t i, int64_t j)
{
	return A->tiles[stargemm__tile_index(A, i, j)];
}

/* Bytes of tile (i, j). */
static inline size_t stargemm__tile_bytes(const struct stargemm_matrix *A, int64_t i,
					  int64_t j)
{
	return (size_t)((A->row_off[i + 1] - A->row_off[i]) *
			(A->col_off[j + 1] - A->col_off[j])) * A->elem_size;
}

/* Whether tile (i, j) exists (always, unless the matrix is block-sparse). */
static inline int stargemm__present(const struct stargemm_matrix *A, int64_t i, int64_t j)
{
	return !A->present || A->present[stargemm__tile_index(A, i, j)];
}

/* Remove tile (i, j) from @p A's pattern (its handle and storage go; a dense matrix
 * becomes block-sparse). Every rank must drop the same tiles. */
int stargemm__matrix_drop_tile(struct stargemm_matrix *A, int64_t i, int64_t j);

/* A block-sparse matrix (as stargemm_matrix_create_distributed) of element type
 * @p type, packed only when @p packable, or dense when @p npresent < 0; errors name
 * @p fn. */
int stargemm__matrix_create_pattern(struct stargemm_matrix **out, int type, int64_t mt,
				    const int64_t *row_sizes, int64_t nt,
				    const int64_t *col_sizes, int64_t npresent,
				    const int64_t *present,
				    const struct stargemm_distribution *dist, int packable,
				    const char *fn);

/* A matrix on the tilings, distribution, grid and element type of @p S, with the
 * pattern @p npresent, @p present as stargemm__matrix_create_pattern() (dense when
 * npresent < 0), packed only when @p packable; errors name @p fn. */
int stargemm__matrix_create_like(struct stargemm_matrix **out, const struct stargemm_matrix *S,
				 int64_t npresent, const int64_t *present, int packable,
				 const char *fn);

/* Check that @p A is usable (non-NULL, runtime up); returns 0 or an error. */
int stargemm__check_matrix(const struct stargemm_matrix *A, const char *name);

/* The rank that owns pack (gi, gj) of a packed matrix: its first tile's. */
static inline int stargemm__pack_owner(const struct stargemm_matrix *A, int64_t gi,
				       int64_t gj)
{
	return stargemm_matrix_owner(A, A->pack->row_first[gi], A->pack->col_first[gj]);
}

/* Call @p visit(tile, i, j, arg) for each present tile (i, j) of pack (gi, gj) of @p A,
 * whose buffer is @p base (tile: its first element, column-major, leading dimension
 * its row count). codelets/pack.c. */
typedef void (*stargemm__tile_visit)(void *tile, int64_t i, int64_t j, void *arg);
void stargemm__pack_walk(const struct stargemm_matrix *A, int64_t gi, int64_t gj, void *base,
			 stargemm__tile_visit visit, void *arg);

#endif
