/*
 * pattern.c — the symbolic product: a C matrix whose pattern is every tile that
 * op(A) op(B) reaches, united with an existing C's pattern (DBCSR's multiplication
 * without "retain sparsity"). The new matrix takes the old C's values on the tiles
 * they share and zeros elsewhere, so that stargemm_pdgemm(..., beta, new C) computes
 * alpha op(A) op(B) + beta C with nothing dropped.
 *
 * The pattern is computed from the column lists of op(A) (for each k, the rows i with
 * op(A)(i, k) present; stargemm__operand_columns()) in O(mt kt + kt nt + products)
 * time, the same on every rank.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "worklist.h"

/* Flags (i + j * mt) of the C tiles op(A) op(B) reaches, or C has. */
static uint8_t *symbolic(const struct stargemm__gemm *g, int64_t mt, int64_t nt)
{
	struct stargemm__operand a = { g->A->grid, stargemm__is_trans(g->ta), g->A->present,
				       g->A->mt, NULL, &g->A->rows, &g->A->cols, NULL, NULL, 0 };
	struct stargemm__operand b = { g->B->grid, stargemm__is_trans(g->tb), g->B->present,
				       g->B->mt, NULL, &g->B->rows, &g->B->cols, NULL, NULL, 0 };
	int64_t *start = NULL, *rows = NULL;
	uint8_t *mark = calloc((size_t)(mt * nt > 0 ? mt * nt : 1), 1);

	if (!mark || stargemm__operand_columns(&a, mt, g->kt, &start, &rows)) {
		free(mark);
		return NULL;
	}
	for (int64_t j = 0; j < nt; j++)
		for (int64_t k = 0; k < g->kt; k++) {
			if (!stargemm__operand_present(&b, k, j))
				continue;
			for (int64_t e = start[k]; e < start[k + 1]; e++)
				mark[rows[e] + j * mt] = 1;
		}
	for (int64_t j = 0; g->C && j < nt; j++)
		for (int64_t i = 0; i < mt; i++)
			mark[i + j * mt] |= (uint8_t)stargemm__present(g->C, i, j);
	free(start);
	free(rows);
	return mark;
}

/* The present list of a flag array. */
static int64_t *pairs_of(const uint8_t *mark, int64_t mt, int64_t nt, int64_t *count)
{
	int64_t n = 0, *p;

	for (int64_t e = 0; e < mt * nt; e++)
		n += mark[e];
	p = malloc((size_t)(n > 0 ? 2 * n : 1) * sizeof(*p));
	for (int64_t e = 0, f = 0; p && e < mt * nt; e++)
		if (mark[e]) {
			p[2 * f] = e % mt;
			p[2 * f + 1] = e / mt;
			f++;
		}
	*count = n;
	return p;
}

/* Zero a new tile this rank allocated, without a task (small tiles: a task per tile
 * would cost more than the product). 0: not this rank's storage (StarPU manages it,
 * or another rank owns the tile). */
static int zero_in_place(struct stargemm_matrix *D, int64_t i, int64_t j)
{
	void *t = D->storage[stargemm__tile_index(D, i, j)];

	if (stargemm_matrix_owner(D, i, j) != stargemm_rank())
		return 1;   /* the owner zeroes it */
	if (!t)
		return 0;
	memset(t, 0, stargemm__tile_bytes(D, i, j));
	return 1;
}

/* Pack (I, J) of a packed D from C (packed alike, src/pack.c): a task that copies C's
 * tiles and zeroes the new ones, or zeroes the pack where C has none. */
static int initialise_pack(struct stargemm_matrix *D, const struct stargemm_matrix *C,
			   int64_t I, int64_t J)
{
	int64_t idx = I + J * D->pack->gmt;
	starpu_data_handle_t src = C->packs[idx];

	if (!D->packs[idx])
		return 0;
	if (!src)   /* a pack C lacks: zeros */
		return starpu_mpi_task_insert(stargemm__comm(), &stargemm_zero_cl, STARPU_W,
					      D->packs[idx], 0);
	return starpu_mpi_task_insert(stargemm__comm(), &stargemm_pack_copy_cl,
				      STARPU_VALUE, &D, sizeof(D), STARPU_VALUE, &C, sizeof(C),
				      STARPU_VALUE, &I, sizeof(I), STARPU_VALUE, &J, sizeof(J),
				      STARPU_R, src, STARPU_W, D->packs[idx], 0);
}

static int initialise_packs(struct stargemm_matrix *D, const struct stargemm_matrix *C)
{
	if (!stargemm__pack_same_groups(C->pack, D->pack))
		return stargemm__error(-EINVAL, "stargemm_matrix_create_product: C's packs differ "
				       "from the product's (STARGEMM_PACK_BELOW or "
				       "STARGEMM_PACK_EXTENT changed since C was created)");
	for (int64_t J = 0; J < D->pack->gnt; J++)
		for (int64_t I = 0; I < D->pack->gmt; I++) {
			int ret = initialise_pack(D, C, I, J);

			if (ret)
				return stargemm__wait_after(stargemm__error(
					-EIO, "stargemm_matrix_create_product: task "
					"submission failed (%d)", ret));
		}
	return stargemm_wait();
}

/* New tiles: zeros; tiles of the old C: its values. Without C, the zeros are left to
 * the first read (D stays unwritten), and a product with beta = 0 only writes them. */
static int initialise(struct stargemm_matrix *D, const struct stargemm_matrix *C)
{
	/* Without C: zeros written when first read (stargemm__zero_if_unwritten()), which a
	 * product with beta = 0 never does. Written here, they cost the calling thread a
	 * pass over every tile in core, and under a RAM budget a task per tile whose zeros
	 * went to the disk node before the product overwrote them. */
	if (!C) {
		D->written = 0;
		return 0;
	}
	if (D->pack)
		return initialise_packs(D, C);
	for (int64_t j = 0; j < D->nt; j++)
		for (int64_t i = 0; i < D->mt; i++) {
			int ret;

			if (!stargemm__present(D, i, j))
				continue;
			if (!stargemm__present(C, i, j) && zero_in_place(D, i, j))
				continue;
			if (stargemm__present(C, i, j))
				ret = starpu_mpi_task_insert(stargemm__comm(), &stargemm_copy_cl,
							     STARPU_R, stargemm__tile(C, i, j),
							     STARPU_W, stargemm__tile(D, i, j), 0);
			else
				ret = starpu_mpi_task_insert(stargemm__comm(), &stargemm_zero_cl,
							     STARPU_W, stargemm__tile(D, i, j), 0);
			if (ret)
				return stargemm__wait_after(stargemm__error(
					-EIO, "stargemm_matrix_create_product: task "
					"submission failed (%d)", ret));
		}
	return stargemm_wait();
}

/* Create @p out on S's tilings and distribution with the symbolic pattern of g. */
static int create_symbolic(struct stargemm_matrix **out, const struct stargemm__gemm *g,
			   const struct stargemm_matrix *S)
{
	uint8_t *mark = symbolic(g, S->mt, S->nt);
	int64_t npairs = 0, *pairs = mark ? pairs_of(mark, S->mt, S->nt, &npairs) : NULL;
	int ret;

	if (!mark || !pairs)
		ret = stargemm__error(-ENOMEM, "stargemm_matrix_create_product: out of memory "
				      "for a %" PRId64 " x %" PRId64 " tile pattern", S->mt, S->nt);
	else
		/* packed like C (src/pack.c), or not at all if C has a handle per tile */
		ret = stargemm__matrix_create_like(out, S, npairs, pairs, !g->C || g->C->pack,
						   "stargemm_matrix_create_product");
	free(mark);
	free(pairs);
	return ret;
}

int stargemm_matrix_create_product(struct stargemm_matrix **out, stargemm_trans transa,
				   stargemm_trans transb, const struct stargemm_matrix *A,
				   const struct stargemm_matrix *B,
				   const struct stargemm_matrix *C)
{
	/* Without C, a shape-only descriptor: op(A)'s rows, op(B)'s columns, A's grid. */
	struct stargemm_matrix shape = { 0 };
	struct stargemm__gemm g = { .ta = transa, .tb = transb, .alpha = 1.0, .beta = 1.0,
				    .A = A, .B = B, .C = NULL, .c_read_only = 1,
				    .fn = "stargemm_matrix_create_product" };
	int ret, paused;

	stargemm__clear_error();
	ret = out ? 0 : stargemm__error(-EINVAL, "stargemm_matrix_create_product: out is NULL");
	if (out)
		*out = NULL;
	if (!ret && !(ret = stargemm__check_matrix(A, "A")))
		ret = stargemm__check_matrix(B, "B");
	if (ret)   /* the other ranks learn of it in their agreement below */
		return stargemm__gemm_agree(&g, ret, 0);
	if (!C) {
		int ta = stargemm__is_trans(transa), tb = stargemm__is_trans(transb);

		shape.mt = ta ? A->nt : A->mt;
		shape.row_off = ta ? A->col_off : A->row_off;
		shape.nt = tb ? B->mt : B->nt;
		shape.col_off = tb ? B->row_off : B->col_off;
		shape.grid = A->grid;   /* borrowed: shape is never destroyed */
		shape.type = A->type;
		/* op(A)'s row and op(B)'s column distributions where they are one (not
		 * transposed); cyclic otherwise (a zeroed axis: no map). */
		if (!ta)
			shape.rows = A->rows;
		if (!tb)
			shape.cols = B->cols;
	}
	g.C = C ? (struct stargemm_matrix *)C : &shape;
	if ((ret = stargemm__gemm_agree(&g, stargemm__gemm_check(&g), 0)))
		return ret;
	g.C = (struct stargemm_matrix *)C;   /* the union with C's pattern, if any */
	paused = stargemm__quiet_begin();
	ret = create_symbolic(out, &g, C ? C : &shape);
	stargemm__quiet_end(paused);
	if (ret)
		return ret;
	if (C)
		stargemm__zero_if_unwritten(C);
	(*out)->written = 1;   /* initialise() writes every tile, or unsets it */
	if ((ret = initialise(*out, C))) {
		stargemm_matrix_destroy(*out);
		*out = NULL;
	}
	return ret;
}
