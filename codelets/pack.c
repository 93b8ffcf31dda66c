/*
 * codelets/pack.c — the per-tile operations of a packed matrix (src/pack.c), one task
 * per pack: filling its tiles with a user function, their Frobenius norms, copying
 * them from a pack of another matrix with the same tiling (a symbolic product that
 * extends C's pattern), the linear combination of two matrices' packs, and the
 * diagonal's shift and sum (the matrix operations, src/matops.c). (Zeroing or scaling
 * a pack is codelets/scale.c's, on its E x 1 buffer.) A packed matrix has small tiles:
 * a task per tile would cost more than the work, which is why they are packed.
 *
 * Each task gets the matrix descriptor(s) of the rank that runs it and the pack's
 * coordinates (STARPU_VALUE) and walks the pack's present tiles.
 */
#include <complex.h>
#include <string.h>

#include "../src/internal.h"

/* The present tiles of pack (gi, gj) of @p A in its buffer @p base, in the pack's order
 * (src/pack.c). */
void stargemm__pack_walk(const struct stargemm_matrix *A, int64_t gi, int64_t gj, void *base,
			 stargemm__tile_visit visit, void *arg)
{
	const struct stargemm__packing *pk = A->pack;

	for (int64_t j = pk->col_first[gj]; j < pk->col_first[gj + 1]; j++)
		for (int64_t i = pk->row_first[gi]; i < pk->row_first[gi + 1]; i++) {
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

/* ---- combine: arguments D, A, B, alpha, beta, gi, gj; D = alpha A + beta B on pack
 * (gi, gj), A and B packed like D (B may be NULL: D = alpha A), D's pattern the union
 * of theirs. Buffers: A's pack (R), B's pack (R, when B is given), D's (W). A tile of
 * D that neither has is zeroed. */

struct combine_call {
	const struct stargemm_matrix *D, *A, *B;
	const char *a, *b;
	double _Complex alpha, beta;
};

/* Tile (i, j) of packed @p X in its pack's buffer @p base, or NULL when absent. */
static const void *pack_tile(const struct stargemm_matrix *X, const char *base, int64_t i,
			     int64_t j)
{
	if (!X || !base || !stargemm__present(X, i, j))
		return NULL;
	return base + (size_t)X->pack->offset[stargemm__tile_index(X, i, j)] * X->elem_size;
}

static void combine_tile(void *tile, int64_t i, int64_t j, void *arg)
{
	const struct combine_call *c = arg;
	const void *a = pack_tile(c->A, c->a, i, j), *b = pack_tile(c->B, c->b, i, j);
	int64_t rows = stargemm__rows_of(c->D, i), cols = stargemm__cols_of(c->D, j);

	if (a)
		c->D->type->combine(tile, rows, a, rows, c->alpha, b, rows, c->beta, rows, cols);
	else if (b)
		c->D->type->combine(tile, rows, b, rows, c->beta, NULL, 0, 0.0, rows, cols);
	else
		memset(tile, 0, stargemm__tile_bytes(c->D, i, j));
}

static void combine_cpu(void *buffers[], void *cl_arg)
{
	struct combine_call c;
	int64_t gi, gj;
	int d;

	starpu_codelet_unpack_args(cl_arg, &c.D, &c.A, &c.B, &c.alpha, &c.beta, &gi, &gj);
	d = c.B ? 2 : 1;
	c.a = (const char *)STARPU_MATRIX_GET_PTR(buffers[0]);
	c.b = c.B ? (const char *)STARPU_MATRIX_GET_PTR(buffers[1]) : NULL;
	stargemm__pack_walk(c.D, gi, gj, (void *)STARPU_MATRIX_GET_PTR(buffers[d]),
			    combine_tile, &c);
}

struct starpu_codelet stargemm_pack_combine2_cl = {
	.name = "pack_combine",
	.model = &stargemm_combine_model,   /* the tile codelet's (codelets/combine.c) */
	.cpu_funcs = { combine_cpu },
	.nbuffers = 3,
	.modes = { STARPU_R, STARPU_R, STARPU_W },
};

struct starpu_codelet stargemm_pack_combine1_cl = {
	.name = "pack_combine",
	.model = &stargemm_combine_model,
	.cpu_funcs = { combine_cpu },
	.nbuffers = 2,
	.modes = { STARPU_R, STARPU_W },
};

/* ---- diagonal: arguments A, gi, gj, then double _Complex alpha (add, RW) or double
 * *out (trace: the pack's share, real and imaginary parts; R) ------------------------ */

struct diagonal_call {
	const struct stargemm_matrix *A;
	double _Complex alpha, sum;
};

static int64_t diagonal_shift(const struct stargemm_matrix *A, int64_t i, int64_t j)
{
	return A->row_off[i] - A->col_off[j];
}

static void add_diagonal_tile(void *tile, int64_t i, int64_t j, void *arg)
{
	const struct diagonal_call *c = arg;
	int64_t rows = stargemm__rows_of(c->A, i);

	stargemm__tile_add_diagonal(c->A->type, tile, rows, rows, stargemm__cols_of(c->A, j),
				    diagonal_shift(c->A, i, j), c->alpha);
}

static void trace_tile(void *tile, int64_t i, int64_t j, void *arg)
{
	struct diagonal_call *c = arg;
	int64_t rows = stargemm__rows_of(c->A, i);

	c->sum += stargemm__tile_trace(c->A->type, tile, rows, rows, stargemm__cols_of(c->A, j),
				       diagonal_shift(c->A, i, j));
}

static void add_diagonal_cpu(void *buffers[], void *cl_arg)
{
	struct diagonal_call c;
	int64_t gi, gj;

	starpu_codelet_unpack_args(cl_arg, &c.A, &gi, &gj, &c.alpha);
	stargemm__pack_walk(c.A, gi, gj, (void *)STARPU_MATRIX_GET_PTR(buffers[0]),
			    add_diagonal_tile, &c);
}

static void trace_cpu(void *buffers[], void *cl_arg)
{
	struct diagonal_call c = { .sum = 0.0 };
	int64_t gi, gj;
	double *out;

	starpu_codelet_unpack_args(cl_arg, &c.A, &gi, &gj, &out);
	stargemm__pack_walk(c.A, gi, gj, (void *)STARPU_MATRIX_GET_PTR(buffers[0]), trace_tile,
			    &c);
	out[0] = creal(c.sum);
	out[1] = cimag(c.sum);
}

struct starpu_codelet stargemm_pack_add_diagonal_cl = {
	.name = "pack_add_diagonal",
	.model = &stargemm_diagonal_model,   /* the tile codelet's (codelets/diagonal.c) */
	.cpu_funcs = { add_diagonal_cpu },
	.nbuffers = 1,
	.modes = { STARPU_RW },
};

struct starpu_codelet stargemm_pack_trace_cl = {
	.name = "pack_trace",
	.model = &stargemm_diagonal_model,
	.cpu_funcs = { trace_cpu },
	.nbuffers = 1,
	.modes = { STARPU_R },
};
