/*
 * pack.c — several small tiles per StarPU handle.
 *
 * A StarPU handle costs time to register and again each time a task acquires it; with
 * tiles of a few rows (the shells of quantum chemistry: 5 to 30) that is more than the
 * tile's arithmetic, and no batching of products removes it (doc/design.md, Decisions,
 * "Packs below a mean extent of 64"). So a block-sparse matrix whose tiles are small
 * along an axis groups consecutive tile rows (columns) into row (column) groups of at
 * least STARGEMM_PACK_EXTENT rows; the present tiles of one row group x column group — a
 * pack — are stored one after the other in one buffer, registered as one StarPU handle
 * (a matrix of E x 1 elements, E the elements of its present tiles), with one owner.
 * Inside a pack, tiles come column by column of tiles and, in a column, by increasing
 * tile row; each tile is column-major with its row count as leading dimension.
 *
 * An axis is packed when its mean tile extent is below STARGEMM_PACK_BELOW; a matrix
 * whose groups would each hold one tile (one tile column, as a block of 32 vectors,
 * and large tiles the other way; or every neighbour on another process) is not
 * packed at all: its packs would be its tiles, in handles that the in-core choices of
 * which operand stays in place do not take. Packs are
 * dealt 2D block-cyclically (pack row I on process row I mod P); a given distribution
 * is kept, and a change of process along an axis ends a group. The layout depends on
 * the tiling, the pattern and the distribution only, so two matrices with the same
 * ones are packed alike (a symbolic product and the C it extends).
 *
 * Pure: no StarPU, no MPI.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "pack.h"
#include "settings.h"

int stargemm__pack_settings(double *below, double *extent)
{
	int ret = stargemm__setting(STARGEMM__PACK_BELOW, below);

	return ret ? ret : stargemm__setting(STARGEMM__PACK_EXTENT, extent);
}

/* Groups of one axis of @p n tiles (offsets @p off): consecutive tiles, at least
 * @p extent elements each (the last may be shorter), a change of proc[t] (when @p proc)
 * starting a new one; extent <= 0: one tile per group. Fills first (groups + 1) and
 * group (n); returns the number of groups. */
static int64_t group_axis(const int64_t *off, int64_t n, const int *proc, double extent,
			  int64_t *first, int64_t *group)
{
	int64_t count = 0;

	for (int64_t t = 0; t < n; t++) {
		int change = proc && t > 0 && proc[t] != proc[t - 1];

		if (t == 0 || change || off[t] - off[first[count - 1]] >= extent)
			first[count++] = t;
		group[t] = count - 1;
	}
	first[count] = n;
	return count;
}

/* Whether an axis of @p n tiles spanning @p size elements is packed. */
static int packed_axis(int64_t size, int64_t n, double below)
{
	return below > 0 && (double)size < below * (double)n;
}

int stargemm__pack_same_groups(const struct stargemm__packing *a,
			       const struct stargemm__packing *b)
{
	if (a->gmt != b->gmt || a->gnt != b->gnt)
		return 0;
	return !memcmp(a->row_first, b->row_first, (size_t)(a->gmt + 1) * sizeof(int64_t)) &&
	       !memcmp(a->col_first, b->col_first, (size_t)(a->gnt + 1) * sizeof(int64_t));
}

void stargemm__pack_free(struct stargemm__packing *pk)
{
	if (!pk)
		return;
	free(pk->row_first);
	free(pk->col_first);
	free(pk->row_group);
	free(pk->col_group);
	free(pk->offset);
	free(pk->elems);
	free(pk);
}

/* Element offsets of the present tiles in their packs, and each pack's size. */
static void lay_out(struct stargemm__packing *pk, const int64_t *row_off,
		    const int64_t *col_off, int64_t mt, int64_t nt, const uint8_t *present)
{
	for (int64_t J = 0; J < pk->gnt; J++)
		for (int64_t I = 0; I < pk->gmt; I++) {
			int64_t e = 0;

			for (int64_t j = pk->col_first[J]; j < pk->col_first[J + 1]; j++)
				for (int64_t i = pk->row_first[I]; i < pk->row_first[I + 1]; i++) {
					if (present && !present[i + j * mt])
						continue;
					pk->offset[i + j * mt] = e;
					e += (row_off[i + 1] - row_off[i]) *
					     (col_off[j + 1] - col_off[j]);
				}
			pk->elems[I + J * pk->gmt] = e;
		}
	(void)nt;
}

int stargemm__pack_layout(const struct stargemm__pack_request *q,
			  struct stargemm__packing **out)
{
	struct stargemm__packing *pk;
	int64_t mt = q->mt, nt = q->nt;
	double below = q->below, extent = q->extent;
	int rows = packed_axis(q->row_off[mt], mt, below);
	int cols = packed_axis(q->col_off[nt], nt, below);

	*out = NULL;
	if (!rows && !cols)
		return 0;
	pk = calloc(1, sizeof(*pk));
	if (!pk)
		return -ENOMEM;
	pk->row_first = malloc((size_t)(mt + 1) * sizeof(int64_t));
	pk->col_first = malloc((size_t)(nt + 1) * sizeof(int64_t));
	pk->row_group = malloc((size_t)mt * sizeof(int64_t));
	pk->col_group = malloc((size_t)nt * sizeof(int64_t));
	pk->offset = calloc((size_t)(mt * nt), sizeof(int64_t));
	if (!pk->row_first || !pk->col_first || !pk->row_group || !pk->col_group ||
	    !pk->offset) {
		stargemm__pack_free(pk);
		return -ENOMEM;
	}
	pk->gmt = group_axis(q->row_off, mt, q->row_proc, rows ? extent : 0, pk->row_first,
			     pk->row_group);
	pk->gnt = group_axis(q->col_off, nt, q->col_proc, cols ? extent : 0, pk->col_first,
			     pk->col_group);
	if (pk->gmt == mt && pk->gnt == nt) {   /* nothing grouped: tiles as they are */
		stargemm__pack_free(pk);
		return 0;
	}
	pk->elems = malloc((size_t)(pk->gmt * pk->gnt) * sizeof(int64_t));
	if (!pk->elems) {
		stargemm__pack_free(pk);
		return -ENOMEM;
	}
	lay_out(pk, q->row_off, q->col_off, mt, nt, q->present);
	*out = pk;
	return 0;
}

/* The process of each tile of an axis when its groups are dealt cyclically over
 * @p nproc processes. */
void stargemm__pack_cyclic(const int64_t *group, int64_t n, int nproc, int *proc)
{
	for (int64_t t = 0; t < n; t++)
		proc[t] = (int)(group[t] % nproc);
}
