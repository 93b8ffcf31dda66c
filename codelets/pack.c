/*
 * codelets/pack.c — the per-tile operations of a packed matrix (src/pack.c), one task
 * per pack: filling its tiles with a user function, their Frobenius norms, and copying
 * them from a pack of another matrix with the same tiling (a symbolic product that
 * extends C's pattern). (Zeroing a pack is codelets/scale.c's, on its E x 1 buffer.) A
 * packed matrix has small tiles: a task per tile would cost more than the work, which
 * is why they are packed.
 *
 * Each task gets the matrix descriptor(s) of the rank that runs it and the pack's
 * coordinates (STARPU_VALUE) and walks the pack's present tiles.
 */
#include <string.h>

#include "../src/internal.h"

/* The present tiles of pack (I, J) of @p A in its buffer @p base, in the pack's order
 * (src/pack.c). */
void stargemm__pack_walk(const struct stargemm_matrix *A, int64_t I, int64_t J, void *base,
			 stargemm__tile_visit visit, void *arg)
{
	const struct stargemm__packing *pk = A->pack;

	for (int64_t j = pk->col_first[J]; j < pk->col_first[J + 1]; j++)
		for (int64_t i = pk->row_first[I]; i < pk->row_first[I + 1]; i++) {
			int64_t idx = stargemm__tile_index(A, i, j);

			if (stargemm__present(A, i, j))
				visit((char *)base + (size_t)pk->offset[idx] * A->elem_size, i, j,
				      arg);
		}
}

/* ---- fill: arguments fn, arg, A, gi, gj ------------------------------------------- */

struct fill_call {
	const struct stargemm_matrix *A;
	stargemm_fill_elements_fn fn;
	void *arg;
};

static void fill_tile(void *tile, int64_t i, int64_t j, void *arg)
{
	const struct fill_call *f = arg;
	int64_t rows = stargemm__rows_of(f->A, i);

	f->fn(tile, rows, rows, stargemm__cols_of(f->A, j), f->A->row_off[i],
	      f->A->col_off[j], f->arg);
}

static void fill_cpu(void *buffers[], void *cl_arg)
{
	struct fill_call f;
	int64_t gi, gj;

	starpu_codelet_unpack_args(cl_arg, &f.fn, &f.arg, &f.A, &gi, &gj);
	stargemm__pack_walk(f.A, gi, gj, (void *)STARPU_MATRIX_GET_PTR(buffers[0]), fill_tile, &f);
}

struct starpu_codelet stargemm_pack_fill_cl = {
	.name = "pack_fill",
	.model = &stargemm_fill_model,   /* the tile codelet's (codelets/fill.c) */
	.cpu_funcs = { fill_cpu },
	.nbuffers = 1,
	.modes = { STARPU_W },
};

/* ---- norms: arguments A, gi, gj, double *norms (tile (i, j) at i + j * mt) ----------- */

struct norm_call {
	const struct stargemm_matrix *A;
	double *norms;
};

static void norm_tile(void *tile, int64_t i, int64_t j, void *arg)
{
	const struct norm_call *n = arg;
	int64_t rows = stargemm__rows_of(n->A, i);

	n->norms[stargemm__tile_index(n->A, i, j)] =
		n->A->type->norm(tile, rows, rows, stargemm__cols_of(n->A, j));
}

static void norm_cpu(void *buffers[], void *cl_arg)
{
	struct norm_call n;
	int64_t gi, gj;

	starpu_codelet_unpack_args(cl_arg, &n.A, &gi, &gj, &n.norms);
	stargemm__pack_walk(n.A, gi, gj, (void *)STARPU_MATRIX_GET_PTR(buffers[0]), norm_tile,
			    &n);
}

struct starpu_codelet stargemm_pack_norm_cl = {
	.name = "pack_norm",
	.model = &stargemm_norm_model,   /* the tile codelet's (codelets/norm.c) */
	.cpu_funcs = { norm_cpu },
	.nbuffers = 1,
	.modes = { STARPU_R },
};

/* ---- copy: arguments D, S, gi, gj; pack (gi, gj) of D from pack (gi, gj) of S ----
 * S and D have the same tiling and packs; D's pattern contains S's. Every tile of D is
 * written (W): S's values, or zeros where S has no tile. Buffers: S's pack (R), D's
 * (W). */

struct copy_call {
	const struct stargemm_matrix *D, *S;
	const char *src;
};

static void copy_tile(void *tile, int64_t i, int64_t j, void *arg)
{
	const struct copy_call *c = arg;
	size_t bytes = stargemm__tile_bytes(c->D, i, j);

	if (stargemm__present(c->S, i, j))
		memcpy(tile, c->src + (size_t)c->S->pack->offset[stargemm__tile_index(c->S, i, j)] *
				      c->S->elem_size, bytes);
	else
		memset(tile, 0, bytes);
}

static void copy_cpu(void *buffers[], void *cl_arg)
{
	struct copy_call c;
	int64_t gi, gj;

	starpu_codelet_unpack_args(cl_arg, &c.D, &c.S, &gi, &gj);
	c.src = (const char *)STARPU_MATRIX_GET_PTR(buffers[0]);
	stargemm__pack_walk(c.D, gi, gj, (void *)STARPU_MATRIX_GET_PTR(buffers[1]), copy_tile,
			    &c);
}

struct starpu_codelet stargemm_pack_copy_cl = {
	.name = "pack_copy",
	.model = &stargemm_copy_model,   /* the tile codelet's (codelets/copy.c) */
	.cpu_funcs = { copy_cpu },
	.nbuffers = 2,
	.modes = { STARPU_R, STARPU_W },
};
