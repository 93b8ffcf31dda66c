/*
 * matops.c — what an iteration needs besides the product (DBCSR's operations): copy,
 * scale, the sum alpha A + beta B over the union of two patterns, a shift of the
 * diagonal, the trace and the Frobenius norm, for dense and block-sparse matrices of
 * any element type, packed or not.
 *
 * Each operation is tasks on tiles (codelets/combine.c, codelets/diagonal.c) or, for a
 * packed matrix, on packs (codelets/pack.c), inserted by every rank in one order; the
 * tasks run on the owners of the tiles they write, StarPU-MPI moving the others. The
 * operations are collective and synchronous: they return once the tasks have run, and
 * a failure on one rank is every rank's (stargemm__agree()).
 *
 * A sum makes a new matrix on A's tiling and distribution, whose pattern is the union
 * of the operands': a tile one of them lacks reads as zeros. The shift of the diagonal
 * does not grow the pattern: every tile that holds diagonal elements must be there.
 */
#include <complex.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A task insertion's failure, naming the call and the tile or pack. */
static int insert_failed(int ret, const char *fn, const char *what, int64_t i, int64_t j)
{
	return stargemm__error(-EIO, "%s: task submission failed for %s (%" PRId64 ", %" PRId64
			       ") (%d)", fn, what, i, j, ret);
}

/* A scalar argument, widened from @p A's type; -EINVAL when NULL. */
static int read_scalar(const struct stargemm_matrix *A, const void *x, const char *name,
		       const char *fn, double _Complex *out)
{
	if (!x)
		return stargemm__error(-EINVAL, "%s: %s is NULL (a scalar of the matrix's type, "
				       "%s, by address)", fn, name, A->type->name);
	*out = A->type->load(x);
	return 0;
}

/* Whether @p B can be combined with @p A: the same element type, tilings and packing. */
static int check_alike(const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		       const char *fn)
{
	if (A->type != B->type)
		return stargemm__error(-EINVAL, "%s: A and B must have one element type, got %s "
				       "and %s", fn, A->type->name, B->type->name);
	if (A->m != B->m || A->n != B->n)
		return stargemm__error(-EINVAL, "%s: A (%" PRId64 " x %" PRId64 ") and B (%" PRId64
				       " x %" PRId64 ") must have one size", fn, A->m, A->n,
				       B->m, B->n);
	if (A->mt != B->mt || A->nt != B->nt ||
	    memcmp(A->row_off, B->row_off, (size_t)(A->mt + 1) * sizeof(int64_t)) ||
	    memcmp(A->col_off, B->col_off, (size_t)(A->nt + 1) * sizeof(int64_t)))
		return stargemm__error(-EINVAL, "%s: A and B must have the same tilings (the same "
				       "row and column tile sizes)", fn);
	if (!A->pack != !B->pack)
		return stargemm__error(-EINVAL, "%s: A and B must be packed alike: %c has its "
				       "small tiles packed (block-sparse, tiles under "
				       "STARGEMM_PACK_BELOW elements) and %c has a handle per "
				       "tile (a dense matrix, or one made with other settings); "
				       "make both block-sparse (stargemm_matrix_create_sparse(), "
				       "every tile listed for a dense one)", fn, A->pack ? 'A' : 'B',
				       A->pack ? 'B' : 'A');
	if (A->pack && !stargemm__pack_same_groups(A->pack, B->pack))
		return stargemm__error(-EINVAL, "%s: A and B must be packed alike: their packs "
				       "group the tiles otherwise (STARGEMM_PACK_BELOW or "
				       "STARGEMM_PACK_EXTENT changed between them, or their "
				       "distributions differ)", fn);
	return 0;
}

/* A new matrix on @p A's tiling, distribution, type and packing, whose pattern is the
 * union of A's and @p B's (B may be NULL); dense when both are. */
static int create_union(struct stargemm_matrix **out, const struct stargemm_matrix *A,
			const struct stargemm_matrix *B, const char *fn)
{
	int64_t *pairs = malloc((size_t)(2 * A->mt * A->nt) * sizeof(*pairs)), n = 0;
	int dense = !A->present && (!B || !B->present), ret;

	if (!pairs)
		return stargemm__error(-ENOMEM, "%s: out of memory for a %" PRId64 " x %" PRId64
				       " tile pattern", fn, A->mt, A->nt);
	for (int64_t j = 0; j < A->nt; j++)
		for (int64_t i = 0; i < A->mt; i++)
			if (stargemm__present(A, i, j) || (B && stargemm__present(B, i, j))) {
				pairs[2 * n] = i;
				pairs[2 * n + 1] = j;
				n++;
			}
	ret = stargemm__matrix_create_like(out, A, dense ? -1 : n, pairs, A->pack != NULL, fn);
	free(pairs);
	if (!ret && !(*out)->pack != !A->pack)
		ret = stargemm__error(-EINVAL, "%s: the result is not packed as A is (the pack "
				      "settings changed since A was made)", fn);
	else if (!ret && A->pack && !stargemm__pack_same_groups(A->pack, (*out)->pack))
		ret = stargemm__error(-EINVAL, "%s: the result's packs differ from A's (the pack "
				      "settings changed since A was made)", fn);
	if (ret && *out) {
		stargemm_matrix_destroy(*out);
		*out = NULL;
	}
	return ret;
}

/* Tile (i, j) of D = alpha A + beta B (B may be NULL; D has the union of patterns). */
static int combine_tile(struct stargemm_matrix *D, const struct stargemm_matrix *A,
			double _Complex alpha, const struct stargemm_matrix *B,
			double _Complex beta, int64_t i, int64_t j)
{
	starpu_data_handle_t d = stargemm__tile(D, i, j);
	starpu_data_handle_t a = stargemm__present(A, i, j) ? stargemm__tile(A, i, j) : NULL;
	starpu_data_handle_t b = B && stargemm__present(B, i, j) ? stargemm__tile(B, i, j) : NULL;
	char type = D->type->letter;

	if (a && b)
		return starpu_mpi_task_insert(stargemm__comm(), &stargemm_combine2_cl,
					      STARPU_VALUE, &type, sizeof(type), STARPU_VALUE,
					      &alpha, sizeof(alpha), STARPU_VALUE, &beta,
					      sizeof(beta), STARPU_R, a, STARPU_R, b, STARPU_W, d, 0);
	return starpu_mpi_task_insert(stargemm__comm(), &stargemm_combine1_cl, STARPU_VALUE,
				      &type, sizeof(type), STARPU_VALUE, a ? &alpha : &beta,
				      sizeof(alpha), STARPU_R, a ? a : b, STARPU_W, d, 0);
}

/* Pack (gi, gj) of D = alpha A + beta B, all packed alike. */
static int combine_pack(struct stargemm_matrix *D, const struct stargemm_matrix *A,
			double _Complex alpha, const struct stargemm_matrix *B,
			double _Complex beta, int64_t gi, int64_t gj)
{
	int64_t idx = gi + gj * D->pack->gmt;
	starpu_data_handle_t d = D->packs[idx], a = A->packs[idx], b = B ? B->packs[idx] : NULL;
	const struct stargemm_matrix *none = NULL;

	if (!d)
		return 0;
	if (a && b)
		return starpu_mpi_task_insert(stargemm__comm(), &stargemm_pack_combine2_cl,
					      STARPU_VALUE, &D, sizeof(D), STARPU_VALUE, &A,
					      sizeof(A), STARPU_VALUE, &B, sizeof(B), STARPU_VALUE,
					      &alpha, sizeof(alpha), STARPU_VALUE, &beta,
					      sizeof(beta), STARPU_VALUE, &gi, sizeof(gi),
					      STARPU_VALUE, &gj, sizeof(gj), STARPU_R, a, STARPU_R, b,
					      STARPU_W, d, 0);
	return starpu_mpi_task_insert(stargemm__comm(), &stargemm_pack_combine1_cl, STARPU_VALUE,
				      &D, sizeof(D), STARPU_VALUE, a ? &A : &B, sizeof(A),
				      STARPU_VALUE, &none, sizeof(none), STARPU_VALUE,
				      a ? &alpha : &beta, sizeof(alpha), STARPU_VALUE, &beta,
				      sizeof(beta), STARPU_VALUE, &gi, sizeof(gi), STARPU_VALUE, &gj,
				      sizeof(gj), STARPU_R, a ? a : b, STARPU_W, d, 0);
}

static int submit_combine(struct stargemm_matrix *D, const struct stargemm_matrix *A,
			  double _Complex alpha, const struct stargemm_matrix *B,
			  double _Complex beta, const char *fn)
{
	int ret;

	if (D->pack) {
		for (int64_t gj = 0; gj < D->pack->gnt; gj++)
			for (int64_t gi = 0; gi < D->pack->gmt; gi++)
				if ((ret = combine_pack(D, A, alpha, B, beta, gi, gj)))
					return insert_failed(ret, fn, "pack", gi, gj);
		return 0;
	}
	for (int64_t j = 0; j < D->nt; j++)
		for (int64_t i = 0; i < D->mt; i++)
			if (stargemm__present(D, i, j) &&
			    (ret = combine_tile(D, A, alpha, B, beta, i, j)))
				return insert_failed(ret, fn, "tile", i, j);
	return 0;
}

/* *out = alpha A + beta B (B may be NULL) on the union of their patterns. */
static int combine(struct stargemm_matrix **out, const struct stargemm_matrix *A,
		   double _Complex alpha, const struct stargemm_matrix *B,
		   double _Complex beta, const char *fn)
{
	int ret = create_union(out, A, B, fn);

	if ((ret = stargemm__agree(ret)))
		return ret;
	stargemm__zero_if_unwritten(A);
	if (B)
		stargemm__zero_if_unwritten(B);
	(*out)->written = 1;
	ret = submit_combine(*out, A, alpha, B, beta, fn);
	if ((ret = stargemm__agree(stargemm__wait_after(ret)))) {
		stargemm_matrix_destroy(*out);
		*out = NULL;
	}
	return ret;
}

int stargemm_matrix_copy(struct stargemm_matrix **B, const struct stargemm_matrix *A)
{
	static const char fn[] = "stargemm_matrix_copy";
	int ret;

	stargemm__clear_error();
	if (!B)
		return stargemm__error(-EINVAL, "%s: B is NULL", fn);
	*B = NULL;
	if ((ret = stargemm__check_matrix(A, "A")) ||
	    (ret = stargemm__check_stored(A, "A", fn, "copied")))
		return ret;
	return combine(B, A, 1.0, NULL, 0.0, fn);
}

int stargemm_matrix_add(struct stargemm_matrix **C, const void *alpha,
			const struct stargemm_matrix *A, const void *beta,
			const struct stargemm_matrix *B)
{
	static const char fn[] = "stargemm_matrix_add";
	double _Complex a = 0.0, b = 0.0;
	int ret;

	stargemm__clear_error();
	if (!C)
		return stargemm__error(-EINVAL, "%s: C is NULL", fn);
	*C = NULL;
	if ((ret = stargemm__check_matrix(A, "A")) || (ret = stargemm__check_matrix(B, "B")) ||
	    (ret = stargemm__check_stored(A, "A", fn, "added")) ||
	    (ret = stargemm__check_stored(B, "B", fn, "added")) ||
	    (ret = check_alike(A, B, fn)) || (ret = read_scalar(A, alpha, "alpha", fn, &a)) ||
	    (ret = read_scalar(A, beta, "beta", fn, &b)))
		return ret;
	return combine(C, A, a, B, b, fn);
}

int stargemm_matrix_scale(struct stargemm_matrix *A, const void *alpha)
{
	static const char fn[] = "stargemm_matrix_scale";
	double _Complex a;
	char type;
	int ret = 0;

	stargemm__clear_error();
	if ((ret = stargemm__check_matrix(A, "A")) ||
	    (ret = stargemm__check_stored(A, "A", fn, "scaled or shifted")) ||
	    (ret = read_scalar(A, alpha, "alpha", fn, &a)))
		return ret;
	type = A->type->letter;
	stargemm__zero_if_unwritten(A);
	stargemm__written_in_place(A);
	/* A pack's buffer is scaled whole (its unused places too): codelets/scale.c. */
	if (A->pack) {
		for (int64_t gj = 0; gj < A->pack->gnt && !ret; gj++)
			for (int64_t gi = 0; gi < A->pack->gmt && !ret; gi++) {
				starpu_data_handle_t h = A->packs[gi + gj * A->pack->gmt];

				if (h && stargemm__pack_owner(A, gi, gj) == stargemm_rank() &&
				    (ret = starpu_task_insert(&stargemm_scale_cl, STARPU_VALUE, &type,
							      sizeof(type), STARPU_VALUE, &a,
							      sizeof(a), STARPU_RW, h, 0)))
					ret = insert_failed(ret, fn, "pack", gi, gj);
			}
	} else {
		for (int64_t j = 0; j < A->nt && !ret; j++)
			for (int64_t i = 0; i < A->mt && !ret; i++)
				if (stargemm__present(A, i, j) &&
				    stargemm_matrix_owner(A, i, j) == stargemm_rank() &&
				    (ret = starpu_task_insert(&stargemm_scale_cl, STARPU_VALUE, &type,
							      sizeof(type), STARPU_VALUE, &a,
							      sizeof(a), STARPU_RW,
							      stargemm__tile(A, i, j), 0)))
					ret = insert_failed(ret, fn, "tile", i, j);
	}
	return stargemm__agree(stargemm__wait_after(ret));
}

/* The tiles that hold diagonal elements, in order: (i, j) pairs in @p d (room for
 * mt + nt pairs), their number returned. Row tile i spans [row_off[i], row_off[i+1]),
 * column tile j likewise; they hold diagonal elements when the spans overlap. */
static int64_t diagonal_tiles(const struct stargemm_matrix *A, int64_t *d)
{
	int64_t n = 0, i = 0, j = 0, end = A->m < A->n ? A->m : A->n;

	while (i < A->mt && j < A->nt) {
		int64_t lo = A->row_off[i] > A->col_off[j] ? A->row_off[i] : A->col_off[j];
		int64_t hi = A->row_off[i + 1] < A->col_off[j + 1] ? A->row_off[i + 1]
								   : A->col_off[j + 1];

		if (lo >= end)
			break;
		if (lo < hi) {
			d[2 * n] = i;
			d[2 * n + 1] = j;
			n++;
		}
		if (A->row_off[i + 1] <= A->col_off[j + 1])
			i++;
		else
			j++;
	}
	return n;
}

/* The diagonal tiles of @p A in a new array (*d, *n); on a packed matrix, the packs
 * that hold them (pack coordinates, each once). With @p present, a diagonal tile absent
 * from A's pattern is an error naming it (the shift does not add tiles). */
static int diagonal_units(const struct stargemm_matrix *A, int present, const char *fn,
			  int64_t **d, int64_t *n)
{
	int64_t k = 0;

	*d = malloc((size_t)(2 * (A->mt + A->nt) + 2) * sizeof(**d));
	if (!*d)
		return stargemm__error(-ENOMEM, "%s: out of memory", fn);
	*n = diagonal_tiles(A, *d);
	for (int64_t e = 0; present && e < *n; e++)
		if (!stargemm__present(A, (*d)[2 * e], (*d)[2 * e + 1]))
			return stargemm__error(-EINVAL, "%s: tile (%" PRId64 ", %" PRId64 ") holds "
					       "diagonal elements and is absent from A's pattern "
					       "(the shift does not add tiles: make A with its "
					       "diagonal tiles, or add a matrix that has them)", fn,
					       (*d)[2 * e], (*d)[2 * e + 1]);
	if (!A->pack)
		return 0;
	for (int64_t e = 0; e < *n; e++) {
		int64_t gi = A->pack->row_group[(*d)[2 * e]], gj = A->pack->col_group[(*d)[2 * e + 1]];

		/* the walk is monotone in both axes: a pack's tiles come one after another */
		if (k > 0 && (*d)[2 * (k - 1)] == gi && (*d)[2 * (k - 1) + 1] == gj)
			continue;
		(*d)[2 * k] = gi;
		(*d)[2 * k + 1] = gj;
		k++;
	}
	*n = k;
	return 0;
}

/* The handle of diagonal unit @p e (a tile, or a pack) and its owner. */
static starpu_data_handle_t unit_handle(const struct stargemm_matrix *A, const int64_t *d,
					int64_t e, int *owner)
{
	int64_t i = d[2 * e], j = d[2 * e + 1];

	if (A->pack) {
		*owner = stargemm__pack_owner(A, i, j);
		return A->packs[i + j * A->pack->gmt];
	}
	*owner = stargemm_matrix_owner(A, i, j);
	return stargemm__present(A, i, j) ? stargemm__tile(A, i, j) : NULL;
}

int stargemm_matrix_add_diagonal(struct stargemm_matrix *A, const void *alpha)
{
	static const char fn[] = "stargemm_matrix_add_diagonal";
	int64_t *d = NULL, n = 0;
	double _Complex a;
	char type;
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__check_matrix(A, "A")) ||
	    (ret = stargemm__check_stored(A, "A", fn, "scaled or shifted")) ||
	    (ret = read_scalar(A, alpha, "alpha", fn, &a)))
		return ret;
	if ((ret = stargemm__agree(diagonal_units(A, 1, fn, &d, &n))))
		goto out;
	type = A->type->letter;
	stargemm__zero_if_unwritten(A);
	stargemm__written_in_place(A);
	for (int64_t e = 0; e < n && !ret; e++) {
		int64_t i = d[2 * e], j = d[2 * e + 1], shift;
		int owner;
		starpu_data_handle_t h = unit_handle(A, d, e, &owner);

		if (!h || owner != stargemm_rank())
			continue;
		if (A->pack) {
			ret = starpu_task_insert(&stargemm_pack_add_diagonal_cl, STARPU_VALUE, &A,
						 sizeof(A), STARPU_VALUE, &i, sizeof(i), STARPU_VALUE,
						 &j, sizeof(j), STARPU_VALUE, &a, sizeof(a), STARPU_RW,
						 h, 0);
		} else {
			shift = A->row_off[i] - A->col_off[j];
			ret = starpu_task_insert(&stargemm_add_diagonal_cl, STARPU_VALUE, &type,
						 sizeof(type), STARPU_VALUE, &shift, sizeof(shift),
						 STARPU_VALUE, &a, sizeof(a), STARPU_RW, h, 0);
		}
		if (ret)
			ret = insert_failed(ret, fn, A->pack ? "pack" : "tile", i, j);
	}
	ret = stargemm__agree(stargemm__wait_after(ret));
out:
	free(d);
	return ret;
}

/* Insert the trace task of diagonal unit @p e of @p A into sums[2e], [2e + 1]. */
static int trace_unit(const struct stargemm_matrix *A, const int64_t *d, int64_t e,
		      double *sums)
{
	int64_t i = d[2 * e], j = d[2 * e + 1], shift;
	double *out = sums + 2 * e;
	char type = A->type->letter;
	int owner;
	starpu_data_handle_t h = unit_handle(A, d, e, &owner);

	if (!h || owner != stargemm_rank())
		return 0;
	if (A->pack)
		return starpu_task_insert(&stargemm_pack_trace_cl, STARPU_VALUE, &A, sizeof(A),
					  STARPU_VALUE, &i, sizeof(i), STARPU_VALUE, &j, sizeof(j),
					  STARPU_VALUE, &out, sizeof(out), STARPU_R, h, 0);
	shift = A->row_off[i] - A->col_off[j];
	return starpu_task_insert(&stargemm_trace_cl, STARPU_VALUE, &type, sizeof(type),
				  STARPU_VALUE, &shift, sizeof(shift), STARPU_VALUE, &out,
				  sizeof(out), STARPU_R, h, 0);
}

int stargemm_matrix_trace(const struct stargemm_matrix *A, void *trace)
{
	static const char fn[] = "stargemm_matrix_trace";
	int64_t *d = NULL, n = 0;
	double *sums = NULL, re = 0.0, im = 0.0;
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__check_matrix(A, "A")) ||
	    (ret = stargemm__check_stored(A, "A", fn, "traced")))
		return ret;
	if (!trace)
		return stargemm__error(-EINVAL, "%s: trace is NULL", fn);
	ret = diagonal_units(A, 0, fn, &d, &n);
	if (!ret && !(sums = calloc((size_t)(2 * n + 2), sizeof(*sums))))
		ret = stargemm__error(-ENOMEM, "%s: out of memory", fn);
	if ((ret = stargemm__agree(ret)))
		goto out;
	stargemm__zero_if_unwritten(A);
	for (int64_t e = 0; e < n && !ret; e++)
		if ((ret = trace_unit(A, d, e, sums)))
			ret = insert_failed(ret, fn, A->pack ? "pack" : "tile", d[2 * e],
					    d[2 * e + 1]);
	/* Wait even after a failed submission: submitted tasks write into sums. */
	if ((ret = stargemm__agree(stargemm__wait_after(ret))) ||
	    (ret = stargemm__share_owned_f64(sums, 2 * n)))
		goto out;
	for (int64_t e = 0; e < n; e++) {   /* in one order on every rank: one result */
		re += sums[2 * e];
		im += sums[2 * e + 1];
	}
	A->type->store(trace, 0, re, im);
out:
	free(d);
	free(sums);
	return ret;
}

int stargemm_matrix_norm(const struct stargemm_matrix *A, double *norm)
{
	static const char fn[] = "stargemm_matrix_norm";
	double *norms = NULL, big = 0.0, sum = 0.0;
	int64_t count;
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__check_matrix(A, "A")))
		return ret;
	if (!norm)
		return stargemm__error(-EINVAL, "%s: norm is NULL", fn);
	count = A->mt * A->nt;
	norms = malloc((size_t)(count > 0 ? count : 1) * sizeof(*norms));
	if ((ret = stargemm__agree(norms ? 0 : stargemm__error(-ENOMEM, "%s: out of memory for "
							       "%" PRId64 " tile norms", fn,
							       count))) ||
	    (ret = stargemm_matrix_norms(A, norms)))
		goto out;
	/* Scaled by the largest, so that the squares neither overflow nor underflow. */
	for (int64_t e = 0; e < count; e++)
		big = norms[e] > big ? norms[e] : big;
	for (int64_t e = 0; big > 0.0 && e < count; e++)
		sum += (norms[e] / big) * (norms[e] / big);
	*norm = big * sqrt(sum);
out:
	free(norms);
	return ret;
}
