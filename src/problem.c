/*
 * problem.c — a GEMM problem C = alpha op(A) op(B) + beta C as the public calls give
 * it (struct stargemm__gemm): the checks of its operations, dimensions, tilings, types
 * and grids, each refusal naming the violated constraint; its scalars; and the
 * operation each kernel applies.
 */
#include <inttypes.h>

#include <stdlib.h>
#include <string.h>

#include "internal.h"

int stargemm__is_trans(char t)
{
	return t == 'T' || t == 't' || t == 'C' || t == 'c';
}

static int valid_trans(char t)
{
	return t == 'N' || t == 'n' || stargemm__is_trans(t);
}

/* Row (dim 0) or column (dim 1) tiling of op(X) as an offsets array and count. */
static const int64_t *op_offsets(const struct stargemm_matrix *X, int trans, int dim,
				 int64_t *count)
{
	int rows = (dim == 0) != trans;

	*count = rows ? X->mt : X->nt;
	return rows ? X->row_off : X->col_off;
}

static int same_tiling(const int64_t *a, int64_t na, const int64_t *b, int64_t nb)
{
	if (na != nb)
		return 0;
	for (int64_t i = 0; i <= na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* The public call's name, for messages. */
static const char *call_name(const struct stargemm__gemm *p)
{
	return p->fn ? p->fn : "stargemm_pdgemm";
}

/* Check that op(X) and Y agree on one dimension, naming the constraint if not. */
static int check_dim(const char *fn, const int64_t *xo, int64_t nx, const char *xname,
		     const int64_t *yo, int64_t ny, const char *yname, const char *what)
{
	if (xo[nx] != yo[ny])
		return stargemm__error(-EINVAL, "%s: %s (%" PRId64 ") must equal %s (%" PRId64
				       ")", fn, xname, xo[nx], yname, yo[ny]);
	if (!same_tiling(xo, nx, yo, ny))
		return stargemm__error(-EINVAL, "%s: the %s tiling of %s (%" PRId64 " tiles) "
				       "differs from that of %s (%" PRId64 " tiles); they must be "
				       "identical", fn, what, xname, nx, yname, ny);
	return 0;
}

/* The three matrices share one element type, the one the call takes its scalars in. */
static int check_types(struct stargemm__gemm *p)
{
	const struct stargemm__element *a = p->A->type, *b = p->B->type, *c = p->C->type;

	if (a != c || b != c)
		return stargemm__error(-EINVAL, "%s: A, B and C must have one element type, got "
				       "%s, %s and %s", call_name(p), a->name, b->name, c->name);
	if (p->want && c->letter != p->want)
		return stargemm__error(-EINVAL, "%s: multiplies %s matrices, and these are %s "
				       "('%c'): use %s", call_name(p),
				       stargemm__element(p->want)->name, c->name, c->letter,
				       p->typed ? p->typed : "stargemm_gemm()");
	p->type = c;
	return 0;
}

/* A, B and C on one process grid: the same P x Q, and each process (p, q) the same
 * rank in the three (a distribution's grid map, src/distribution.c). */
static int check_grids(const struct stargemm__gemm *p, const char *fn)
{
	const struct stargemm__grid *a = &p->A->grid, *b = &p->B->grid, *c = &p->C->grid;
	int at;

	if (a->P != c->P || a->Q != c->Q || b->P != c->P || b->Q != c->Q)
		return stargemm__error(-EINVAL, "%s: A, B and C must live on the same process "
				       "grid, got %dx%d, %dx%d and %dx%d", fn, a->P, a->Q, b->P,
				       b->Q, c->P, c->Q);
	for (int x = 0; x < 2; x++) {
		const struct stargemm__grid *g = x ? b : a;

		if ((at = stargemm__grid_differs(g, c)) >= 0)
			return stargemm__error(-EINVAL, "%s: A, B and C must live on the same "
					       "process grid, each process (p, q) the same rank: "
					       "process (%d, %d) of the %dx%d grid is rank %d in %c "
					       "and rank %d in C", fn, at / c->Q, at % c->Q, c->P,
					       c->Q, stargemm__grid_rank(g, at / c->Q, at % c->Q),
					       x ? 'B' : 'A',
					       stargemm__grid_rank(c, at / c->Q, at % c->Q));
	}
	return 0;
}

int stargemm__gemm_check(struct stargemm__gemm *p)
{
	const char *fn = call_name(p);
	const int64_t *am, *ak, *bk, *bn;
	int64_t amt, akt, bkt, bnt;
	int ret;

	if (!valid_trans(p->ta) || !valid_trans(p->tb))
		return stargemm__error(-EINVAL, "%s: transa and transb must be 'N', 'T' or 'C', "
				       "got '%c' and '%c'", fn, p->ta ? p->ta : '0',
				       p->tb ? p->tb : '0');
	if ((ret = stargemm__check_matrix(p->A, "A")) || (ret = stargemm__check_matrix(p->B, "B"))
	    || (ret = stargemm__check_matrix(p->C, "C")) ||
	    (ret = stargemm__check_stored(p->C, "C", fn, "the C of a product (written, or read "
					  "as the old C)")))
		return ret;
	if (!p->c_read_only && (p->C == p->A || p->C == p->B))
		return stargemm__error(-EINVAL, "%s: C must not be the same matrix as A or B (it "
				       "is written while they are read)", fn);
	if ((ret = check_types(p)))
		return ret;
	if ((ret = check_grids(p, fn)))
		return ret;
	am = op_offsets(p->A, stargemm__is_trans(p->ta), 0, &amt);
	ak = op_offsets(p->A, stargemm__is_trans(p->ta), 1, &akt);
	bk = op_offsets(p->B, stargemm__is_trans(p->tb), 0, &bkt);
	bn = op_offsets(p->B, stargemm__is_trans(p->tb), 1, &bnt);
	if ((ret = check_dim(fn, am, amt, "rows of op(A)", p->C->row_off, p->C->mt,
			     "rows of C", "row")) ||
	    (ret = check_dim(fn, bn, bnt, "columns of op(B)", p->C->col_off, p->C->nt,
			     "columns of C", "column")) ||
	    (ret = check_dim(fn, ak, akt, "columns of op(A)", bk, bkt, "rows of op(B)", "K")))
		return ret;
	p->kt = akt;
	p->where = STARPU_CPU | STARPU_CUDA;
	return 0;
}

static uint64_t matrix_fingerprint(uint64_t h, const struct stargemm_matrix *X)
{
	int64_t tag = X ? X->tag_base : -1;

	return stargemm__fingerprint(h, &tag, sizeof(tag));
}

int stargemm__gemm_agree(const struct stargemm__gemm *p, int ret, uint64_t options)
{
	uint64_t h = stargemm__fingerprint(0, &p->ta, 1);

	h = stargemm__fingerprint(h, &p->tb, 1);
	h = stargemm__fingerprint(h, &p->alpha, sizeof(p->alpha));
	h = stargemm__fingerprint(h, &p->beta, sizeof(p->beta));
	h = matrix_fingerprint(matrix_fingerprint(matrix_fingerprint(h, p->A), p->B), p->C);
	h = stargemm__fingerprint(h, &options, sizeof(options));
	return stargemm__agree_args(ret, h, call_name(p),
				    "transposes, scalars, matrices or options");
}

int stargemm__gemm_scalars(struct stargemm__gemm *p, const void *alpha, const void *beta)
{
	if (!alpha || !beta)
		return stargemm__error(-EINVAL, "%s: %s is NULL (it points to a scalar of the "
				       "matrices' type)", call_name(p), !alpha ? "alpha" : "beta");
	p->alpha = p->type->load(alpha);
	p->beta = p->type->load(beta);
	return 0;
}

char stargemm__kernel_op(const struct stargemm__gemm *p, char t)
{
	if (!stargemm__is_trans(t))
		return 'N';
	return p->type->is_complex && (t == 'C' || t == 'c') ? 'C' : 'T';
}
