/*
 * inplace.c — matrices tiled in place over the users' local arrays (no copy): the
 * ScaLAPACK layout's tilings (blocks of a submatrix, several consecutive blocks merged
 * into one tile on an axis of one process, cuts where another operand's blocks end:
 * struct stargemm__block_axis) and the public constructors of such matrices. Used by
 * the host call (src/host.c) and the drop-in (src/scalapack.c); bringing the tiles back
 * to the arrays after products on GPUs is src/matrix.c's.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"

/* The tiles of a submatrix axis on one process whose blocks are merged (src/internal.h,
 * merge > 1): the submatrix's part of its first block, then merge blocks per tile. Two
 * submatrices cut alike (same block size, same first part) are merged alike. */
static int merged_tiling(const struct stargemm__block_axis *ax, int64_t **sizes, int **proc,
			 int64_t *count)
{
	int64_t head = ax->b - ax->first % ax->b, wide = ax->merge * ax->b;

	head = head < ax->n ? head : ax->n;
	*count = ax->n > 0 ? 1 + (ax->n - head + wide - 1) / wide : 0;
	*sizes = malloc((size_t)(*count > 0 ? *count : 1) * sizeof(**sizes));
	*proc = calloc((size_t)(*count > 0 ? *count : 1), sizeof(**proc));
	if (!*sizes || !*proc)
		return -ENOMEM;
	for (int64_t t = 0; t < *count; t++) {
		int64_t left = ax->n - head - (t - 1) * wide;   /* after tile t - 1 */

		(*sizes)[t] = t == 0 ? head : left < wide ? left : wide;
	}
	return 0;
}

/* The tiling of a submatrix axis before its further cuts: its blocks (or merged blocks),
 * as block_axis_tiling(). */
static int blocks_tiling(const struct stargemm__block_axis *ax, int nproc, int me,
			 int64_t **sizes, int **proc, int64_t *count, int64_t *start)
{
	int64_t b0 = ax->first / ax->b, skip = ax->first % ax->b;

	*start = 0;
	for (int64_t t = 0; t <= b0; t++)   /* whole blocks before, then the cut part */
		if ((ax->src + t) % nproc == me)
			*start += t < b0 ? ax->b : skip;
	if (ax->src % nproc == me)          /* block 0's missing head is not stored */
		*start -= ax->lead;
	if (nproc == 1 && ax->merge > 1)
		return merged_tiling(ax, sizes, proc, count);
	*count = ax->n > 0 ? (skip + ax->n + ax->b - 1) / ax->b : 0;
	*sizes = malloc((size_t)(*count > 0 ? *count : 1) * sizeof(**sizes));
	*proc = malloc((size_t)(*count > 0 ? *count : 1) * sizeof(**proc));
	if (!*sizes || !*proc)
		return -ENOMEM;
	for (int64_t t = 0; t < *count; t++) {
		int64_t lo = t * ax->b > skip ? t * ax->b : skip;
		int64_t hi = (t + 1) * ax->b < skip + ax->n ? (t + 1) * ax->b : skip + ax->n;

		(*sizes)[t] = hi - lo;
		(*proc)[t] = (int)((ax->src + b0 + t) % nproc);
	}
	return 0;
}

/* Split the *count tiles of *sizes and *proc (replaced) where the axis's cuts cross
 * them; the pieces stay on their tile's process. */
static int split_tiles(const struct stargemm__block_axis *ax, int64_t **sizes, int **proc,
		       int64_t *count)
{
	int64_t *ns = malloc((size_t)(*count + ax->ncuts + 1) * sizeof(*ns)), n = 0, lo = 0;
	int *np = malloc((size_t)(*count + ax->ncuts + 1) * sizeof(*np));

	if (!ns || !np) {
		free(ns);
		free(np);
		return -ENOMEM;
	}
	for (int64_t t = 0, c = 0; t < *count; lo += (*sizes)[t], t++) {
		int64_t at = lo;   /* the start of the tile's next piece */

		for (; c < ax->ncuts && ax->cuts[c] <= lo; c++)
			;
		for (; c < ax->ncuts && ax->cuts[c] < lo + (*sizes)[t]; c++) {
			ns[n] = ax->cuts[c] - at;
			np[n++] = (*proc)[t];
			at = ax->cuts[c];
		}
		ns[n] = lo + (*sizes)[t] - at;
		np[n++] = (*proc)[t];
	}
	free(*sizes);
	free(*proc);
	*sizes = ns;
	*proc = np;
	*count = n;
	return 0;
}

/* The tiling of a submatrix axis (src/internal.h): its tile sizes and their processes
 * (*count of each, to free), and how many of process @p me's local elements precede the
 * submatrix. -ENOMEM (no message) when out of memory. */
static int block_axis_tiling(const struct stargemm__block_axis *ax, int nproc, int me,
			     int64_t **sizes, int **proc, int64_t *count, int64_t *start)
{
	int ret = blocks_tiling(ax, nproc, me, sizes, proc, count, start);

	return ret || !ax->ncuts ? ret : split_tiles(ax, sizes, proc, count);
}

/* The elements of an axis this process holds in its local array, up to the end of
 * the submatrix: what precedes it, and its own tiles. */
static int64_t local_extent(int64_t start, const int64_t *sizes, const int *proc,
			    int64_t count, int me)
{
	for (int64_t t = 0; t < count; t++)
		start += proc[t] == me ? sizes[t] : 0;
	return start;
}

int stargemm__matrix_create_in_place(struct stargemm_matrix **out, int type,
				     const struct stargemm__block_axis *rows,
				     const struct stargemm__block_axis *cols, int P, int Q,
				     const int *grid, void *base, int64_t ld, const char *fn)
{
	struct stargemm__grid g = { 0 };
	int64_t *rsize = NULL, *csize = NULL, mt = 0, nt = 0, r0 = 0, c0 = 0, lr = 0, lc = 0;
	int *rproc = NULL, *cproc = NULL, me = stargemm_rank(), p = 0, q = 0, ret = 0;

	*out = NULL;
	/* The tile counts bounded before any tiling is allocated: blocks, plus one for a
	 * first partial block, plus the cuts. */
	if (rows->n > 0 && cols->n > 0 && rows->b > 0 && cols->b > 0 &&
	    (ret = stargemm__check_matrix_size(rows->n, cols->n,
					       rows->n / rows->b + 2 + rows->ncuts,
					       cols->n / cols->b + 2 + cols->ncuts,
					       stargemm__element(type)->size, fn)))
		return ret;
	if (P < 1 || Q < 1 || (int64_t)P * Q != stargemm_nranks())
		ret = stargemm__error(-EINVAL, "%s: the %d x %d grid must have the %d processes "
				      "of the communicator", fn, P, Q, stargemm_nranks());
	else if (!(ret = stargemm__grid_init(&g, P, Q, grid, fn)))   /* this rank's (p, q) */
		stargemm__grid_coords(&g, me, &p, &q);
	if (!ret && (block_axis_tiling(rows, P, p, &rsize, &rproc, &mt, &r0) ||
		     block_axis_tiling(cols, Q, q, &csize, &cproc, &nt, &c0)))
		ret = stargemm__error(-ENOMEM, "%s: out of memory", fn);
	if (!ret) {
		lr = local_extent(r0, rsize, rproc, mt, p);
		lc = local_extent(c0, csize, cproc, nt, q);
	}
	if (!ret && lr > r0 && lc > c0 && !base)
		ret = stargemm__error(-EINVAL, "%s: the local array is NULL on rank %d, which "
				      "holds %" PRId64 " x %" PRId64 " elements", fn, me, lr - r0,
				      lc - c0);
	if (!ret && ld < (lr > 1 ? lr : 1))
		ret = stargemm__error(-EINVAL, "%s: the local leading dimension %" PRId64 " on "
				      "rank %d is below its %" PRId64 " local rows", fn, ld, me, lr);
	/* Agreed: a bad local array is one rank's alone. */
	if (!(ret = stargemm__agree(ret))) {
		struct stargemm_distribution dist = { P, Q, rproc, cproc, grid };
		struct stargemm__local local = { base, ld, r0, c0 };

		ret = stargemm__matrix_create_tiled_in_place(out, type, mt, rsize, nt, csize,
							     &dist, &local, fn);
	}
	stargemm__grid_free(&g);
	free(rsize);
	free(csize);
	free(rproc);
	free(cproc);
	return ret;
}

int stargemm_matrix_create_local(struct stargemm_matrix **out, int64_t m, int64_t n,
				 int64_t mb, int64_t nb, int P, int Q, double *local,
				 int64_t lld)
{
	return stargemm_matrix_create_local_type(out, STARGEMM_D, m, n, mb, nb, P, Q, local,
						 lld);
}

int stargemm_matrix_create_local_type(struct stargemm_matrix **out, stargemm_type type,
				      int64_t m, int64_t n, int64_t mb, int64_t nb, int P, int Q,
				      void *local, int64_t lld)
{
	static const char fn[] = "stargemm_matrix_create_local";

	stargemm__clear_error();
	if (!out)
		return stargemm__error(-EINVAL, "%s: the output pointer is NULL", fn);
	*out = NULL;
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "%s: call stargemm_init() first", fn);
	if (m <= 0 || n <= 0 || mb <= 0 || nb <= 0)
		return stargemm__error(-EINVAL, "%s: sizes must be > 0, got M=%" PRId64 " N=%"
				       PRId64 " mb=%" PRId64 " nb=%" PRId64, fn, m, n, mb, nb);
	if (!stargemm__element(type))
		return stargemm__error(-EINVAL, "%s: unknown element type %d (expected "
				       "STARGEMM_S, _D, _C or _Z)", fn, (int)type);
	return stargemm__matrix_create_in_place(out, (int)type, &(struct stargemm__block_axis){
							m, mb, 0, 0, 0, 0, NULL, 0 },
						&(struct stargemm__block_axis){ n, nb, 0, 0, 0, 0, NULL, 0 },
						P, Q, NULL, local, lld, fn);
}

int stargemm_matrix_create_submatrix(struct stargemm_matrix **out, stargemm_type type,
				     int64_t m, int64_t n, int64_t ia, int64_t ja, int64_t mb,
				     int64_t nb, int rsrc, int csrc, int P, int Q, void *local,
				     int64_t lld)
{
	static const char fn[] = "stargemm_matrix_create_submatrix";
	struct stargemm__block_axis rows = { m, mb, ia, rsrc, 0, 0, NULL, 0 };
	struct stargemm__block_axis cols = { n, nb, ja, csrc, 0, 0, NULL, 0 };

	stargemm__clear_error();
	if (!out)
		return stargemm__error(-EINVAL, "%s: the output pointer is NULL", fn);
	*out = NULL;
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "%s: call stargemm_init() first", fn);
	if (m <= 0 || n <= 0 || mb <= 0 || nb <= 0 || ia < 0 || ja < 0)
		return stargemm__error(-EINVAL, "%s: sizes must be > 0 and offsets >= 0, got M=%"
				       PRId64 " N=%" PRId64 " mb=%" PRId64 " nb=%" PRId64 " ia=%"
				       PRId64 " ja=%" PRId64, fn, m, n, mb, nb, ia, ja);
	if (rsrc < 0 || rsrc >= P || csrc < 0 || csrc >= Q)
		return stargemm__error(-EINVAL, "%s: the first block's process (%d, %d) is "
				       "outside the %d x %d grid", fn, rsrc, csrc, P, Q);
	if (!stargemm__element(type))
		return stargemm__error(-EINVAL, "%s: unknown element type %d (expected "
				       "STARGEMM_S, _D, _C or _Z)", fn, (int)type);
	return stargemm__matrix_create_in_place(out, (int)type, &rows, &cols, P, Q, NULL, local,
						lld, fn);
}
