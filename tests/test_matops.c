/*
 * tests/test_matops.c — the matrix operations (src/matops.c) against references computed
 * on rank 0 from gathered arrays: copy, scale, add (the union of two patterns, B on
 * another distribution, A + A), the shift of the diagonal, the trace and the Frobenius
 * norm, on dense matrices with ragged tiles, block-sparse ones with irregular tiles
 * whose row and column tilings differ, and small tiles packed, in s, d, c and z; the
 * symbolic product taking an operand as its old C (the sign step X (3I - X X) / 2);
 * and bad input, refused with a message naming the constraint.
 *
 * Usage: test_matops P Q   (under mpiexec with P*Q processes)
 * One line per case, PASS/FAIL; rank 0's verdict is the exit status.
 */
#include <complex.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int P = 1, Q = 1;

/* A tiling: sizes drawn in [lo, hi] until n elements (the last tile ragged). */
struct tiling {
	int64_t count, n, sizes[512];
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void make_tiling(struct tiling *t, int64_t n, int64_t lo, int64_t hi, uint64_t seed)
{
	t->count = 0;
	t->n = n;
	for (int64_t done = 0; done < n; t->count++) {
		int64_t s = lo + (int64_t)(mix(seed + (uint64_t)t->count) % (uint64_t)(hi - lo + 1));

		t->sizes[t->count] = s < n - done ? s : n - done;
		done += t->sizes[t->count];
	}
}

/* Whether tile (i, j) of tilings r x c holds diagonal elements. */
static int on_diagonal(const struct tiling *r, const struct tiling *c, int64_t i, int64_t j)
{
	int64_t r0 = 0, c0 = 0;

	for (int64_t e = 0; e < i; e++)
		r0 += r->sizes[e];
	for (int64_t e = 0; e < j; e++)
		c0 += c->sizes[e];
	return (r0 > c0 ? r0 : c0) < (r0 + r->sizes[i] < c0 + c->sizes[j] ? r0 + r->sizes[i]
									   : c0 + c->sizes[j]);
}

/* A matrix of type @p t on tilings r x c: dense (density >= 1) or tiles present with
 * probability density (and every diagonal tile when @p diag), columns dealt from
 * process column @p shift, filled with random values of @p seed. */
static struct stargemm_matrix *make(stargemm_type t, const struct tiling *r,
				    const struct tiling *c, double density, int diag,
				    int shift, uint64_t seed)
{
	int *cp = malloc((size_t)c->count * sizeof(*cp));
	int64_t *pairs = malloc((size_t)(2 * r->count * c->count) * sizeof(*pairs)), n = 0;
	struct stargemm_distribution dist = { P, Q, NULL, cp, NULL };
	struct stargemm_matrix *X = NULL;

	for (int64_t j = 0; j < c->count; j++) {
		cp[j] = (int)((j + shift) % Q);
		for (int64_t i = 0; i < r->count; i++)
			if ((double)(mix(seed * 7919 + (uint64_t)(i + j * r->count)) % 1000) <
				    1000 * density ||
			    (diag && on_diagonal(r, c, i, j))) {
				pairs[2 * n] = i;
				pairs[2 * n + 1] = j;
				n++;
			}
	}
	if (stargemm_matrix_create_distributed_type(&X, t, r->count, r->sizes, c->count,
						    c->sizes, density >= 1 ? -1 : n, pairs, &dist) ||
	    stargemm_matrix_fill_random(X, seed)) {
		fprintf(stderr, "make: %s\n", stargemm_last_error());
		stargemm_matrix_destroy(X);
		X = NULL;
	}
	free(cp);
	free(pairs);
	return X;
}

/* The unit roundoff of @p t's precision. */
static double roundoff(stargemm_type t)
{
	return t == STARGEMM_S || t == STARGEMM_C ? FLT_EPSILON : DBL_EPSILON;
}

/* Rank 0: whether @p got equals @p want within tol (max |difference| over max |want|,
 * or absolute where want is 0); the worst relative error in *err. */
static int close_enough(stargemm_type t, const void *got, const void *want, int64_t count,
			double tol, double *err)
{
	double diff = 0.0, scale = 0.0;

	for (int64_t e = 0; e < count; e++) {
		double d = cabs(sg_get(t, got, e) - sg_get(t, want, e)), w = cabs(sg_get(t, want, e));

		diff = d > diff || isnan(d) ? d : diff;
		scale = w > scale ? w : scale;
	}
	*err = scale > 0 ? diff / scale : diff;
	return !(*err > tol) && !isnan(*err);
}

static int report(const char *what, stargemm_type t, int good, double err, int ret)
{
	if (stargemm_rank() == 0 || !good)
		printf("%-44s %c %s err %.2e %s\n", what, (char)t, good ? "PASS" : "FAIL", err,
		       ret ? stargemm_last_error() : "");
	return good;
}

static size_t elem(stargemm_type t)
{
	return t == STARGEMM_S ? 4 : t == STARGEMM_Z ? 16 : 8;
}

/* Whether C's pattern is the union of A's and B's (B NULL: A's). */
static int union_pattern(const struct stargemm_matrix *C, const struct stargemm_matrix *A,
			 const struct stargemm_matrix *B)
{
	for (int64_t j = 0; j < stargemm_matrix_nt(A); j++)
		for (int64_t i = 0; i < stargemm_matrix_mt(A); i++)
			if (stargemm_matrix_tile_present(C, i, j) !=
			    (stargemm_matrix_tile_present(A, i, j) ||
			     (B && stargemm_matrix_tile_present(B, i, j))))
				return 0;
	return 1;
}

/* One set of operations on A and B (of one tiling; B on another distribution). */
static int operations(const char *name, stargemm_type t, struct stargemm_matrix *A,
		      struct stargemm_matrix *B)
{
	int64_t m = stargemm_matrix_m(A), n = stargemm_matrix_n(A), mn = m * n;
	double _Complex al = t == STARGEMM_C || t == STARGEMM_Z ? 1.5 - 0.5 * I : 1.5;
	double _Complex be = t == STARGEMM_C || t == STARGEMM_Z ? -0.25 + 2.0 * I : -0.25;
	double _Complex alpha[1], beta[1], tr[1];   /* room for any type, aligned */
	struct stargemm_matrix *C = NULL, *D = NULL;
	void *a = sg_gather_typed(A), *b = sg_gather_typed(B), *c = NULL, *d = NULL, *s = NULL;
	double tol = 64 * roundoff(t), err = 0.0, norm = 0.0;
	char what[128];
	int ret, ok = 1, good = 1;

	sg_put(t, alpha, 0, al);
	sg_put(t, beta, 0, be);
	/* copy */
	ret = stargemm_matrix_copy(&D, A);
	d = ret ? NULL : sg_gather_typed(D);
	if (stargemm_rank() == 0)
		good = !ret && union_pattern(D, A, NULL) && d && !memcmp(d, a, (size_t)mn * elem(t));
	snprintf(what, sizeof(what), "%s: copy", name);
	ok &= report(what, t, good || stargemm_rank(), 0.0, ret);
	/* scale the copy */
	ret = stargemm_matrix_scale(D, alpha);
	free(d);
	d = ret ? NULL : sg_gather_typed(D);
	if (stargemm_rank() == 0) {
		s = malloc((size_t)mn * elem(t));
		for (int64_t e = 0; e < mn; e++)
			sg_put(t, s, e, al * sg_get(t, a, e));
		good = !ret && d && close_enough(t, d, s, mn, tol, &err);
	}
	snprintf(what, sizeof(what), "%s: scale", name);
	ok &= report(what, t, good || stargemm_rank(), err, ret);
	/* add */
	ret = stargemm_matrix_add(&C, alpha, A, beta, B);
	c = ret ? NULL : sg_gather_typed(C);
	if (stargemm_rank() == 0) {
		for (int64_t e = 0; e < mn; e++)
			sg_put(t, s, e, al * sg_get(t, a, e) + be * sg_get(t, b, e));
		good = !ret && union_pattern(C, A, B) && c && close_enough(t, c, s, mn, tol, &err);
	}
	snprintf(what, sizeof(what), "%s: add (union, B elsewhere)", name);
	ok &= report(what, t, good || stargemm_rank(), err, ret);
	stargemm_matrix_destroy(C);
	free(c);
	/* A + A */
	ret = stargemm_matrix_add(&C, alpha, A, beta, A);
	c = ret ? NULL : sg_gather_typed(C);
	if (stargemm_rank() == 0) {
		for (int64_t e = 0; e < mn; e++)
			sg_put(t, s, e, (al + be) * sg_get(t, a, e));
		good = !ret && union_pattern(C, A, NULL) && c &&
		       close_enough(t, c, s, mn, tol, &err);
	}
	snprintf(what, sizeof(what), "%s: add A to itself", name);
	ok &= report(what, t, good || stargemm_rank(), err, ret);
	/* trace and norm */
	ret = stargemm_matrix_trace(A, tr);
	if (!ret)
		ret = stargemm_matrix_norm(A, &norm);
	if (stargemm_rank() == 0) {
		double _Complex want = 0.0;
		double sq = 0.0;

		for (int64_t r = 0; r < (m < n ? m : n); r++)
			want += sg_get(t, a, r + r * m);
		for (int64_t e = 0; e < mn; e++)
			sq += pow(cabs(sg_get(t, a, e)), 2);
		err = cabs(sg_get(t, tr, 0) - want) / (1.0 + cabs(want));
		err = fmax(err, fabs(norm - sqrt(sq)) / sqrt(sq));
		good = !ret && err < tol * (double)(m + n);
	}
	snprintf(what, sizeof(what), "%s: trace, norm", name);
	ok &= report(what, t, good || stargemm_rank(), err, ret);
	free(a);
	free(b);
	free(c);
	free(d);
	free(s);
	stargemm_matrix_destroy(C);
	stargemm_matrix_destroy(D);
	return ok;
}

/* The shift A + alpha I on a matrix that holds its diagonal tiles. */
static int shift_case(const char *name, stargemm_type t, struct stargemm_matrix *A)
{
	int64_t m = stargemm_matrix_m(A), n = stargemm_matrix_n(A), mn = m * n;
	double _Complex al = t == STARGEMM_C || t == STARGEMM_Z ? 0.75 + 0.5 * I : 0.75;
	double _Complex alpha[1];
	void *a = sg_gather_typed(A), *s = NULL;
	double err = 0.0;
	char what[128];
	int ret, ok = 1;

	sg_put(t, alpha, 0, al);
	ret = stargemm_matrix_add_diagonal(A, alpha);
	s = ret ? NULL : sg_gather_typed(A);
	if (stargemm_rank() == 0) {
		for (int64_t r = 0; a && r < (m < n ? m : n); r++)
			sg_put(t, a, r + r * m, sg_get(t, a, r + r * m) + al);
		ok = !ret && s && close_enough(t, s, a, mn, 4 * roundoff(t), &err);
	}
	snprintf(what, sizeof(what), "%s: add_diagonal", name);
	ok = report(what, t, ok || stargemm_rank(), err, ret);
	free(a);
	free(s);
	return ok;
}

/* Every operation on one tiling, in type @p t. */
static int tiling_case(const char *name, stargemm_type t, const struct tiling *r,
		       const struct tiling *c, double density)
{
	struct stargemm_matrix *A = make(t, r, c, density, 0, 0, 11);
	/* B as sparse as A, or dense with it: a dense matrix is never packed */
	struct stargemm_matrix *B = make(t, r, c, density < 1 ? density * 0.8 : 1.0, 0, 1, 12);
	struct stargemm_matrix *Dg = make(t, r, c, density * 0.5, 1, 0, 13);
	int ok = A && B && Dg;

	if (ok)
		ok = operations(name, t, A, B) & shift_case(name, t, Dg);
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(Dg);
	return ok;
}

/* The sign step Y = X (3I - X X) / 2 = 1.5 X - 0.5 X (X X), with Y made by the
 * symbolic product taking X as its old C. */
static int sign_step(const struct tiling *r)
{
	struct stargemm_matrix *X = make(STARGEMM_D, r, r, 0.3, 1, 0, 21), *X2 = NULL, *Y = NULL;
	int64_t n = r->n;
	double *x = NULL, *x2 = NULL, *y = NULL, err = 0.0;
	int ret, ok = 1;

	ret = X ? 0 : -EINVAL;
	if (!ret)
		ret = stargemm_matrix_create_product(&X2, 'N', 'N', X, X, NULL);
	if (!ret)
		ret = stargemm_bsgemm('N', 'N', 1.0, X, X, 0.0, X2, NULL, NULL);
	if (!ret)
		ret = stargemm_matrix_create_product(&Y, 'N', 'N', X, X2, X);
	if (!ret)
		ret = stargemm_bsgemm('N', 'N', -0.5, X, X2, 1.5, Y, NULL, NULL);
	x = X ? sg_gather_new(X) : NULL;
	y = ret ? NULL : sg_gather_new(Y);
	if (stargemm_rank() == 0) {
		double one = 1.0, zero = 0.0, want = -0.5, keep = 1.5;
		double *ref = malloc((size_t)(n * n) * sizeof(*ref));

		x2 = malloc((size_t)(n * n) * sizeof(*x2));
		ok = !ret && x && y && x2 && ref;
		if (ok) {
			sg_blas_gemm(STARGEMM_D, 'N', 'N', n, n, n, &one, x, n, x, n, &zero, x2, n);
			memcpy(ref, x, (size_t)(n * n) * sizeof(*ref));
			sg_blas_gemm(STARGEMM_D, 'N', 'N', n, n, n, &want, x, n, x2, n, &keep, ref, n);
			ok = close_enough(STARGEMM_D, y, ref, n * n, 1e-12 * (double)n, &err);
		}
		free(ref);
	}
	ok = report("sign step, create_product(Y, X, X2, X)", STARGEMM_D, ok || stargemm_rank(),
		    err, ret);
	free(x);
	free(x2);
	free(y);
	stargemm_matrix_destroy(X);
	stargemm_matrix_destroy(X2);
	stargemm_matrix_destroy(Y);
	return ok;
}

static int bad_input(int *ncases)
{
	struct tiling r, c, small;
	struct stargemm_matrix *A, *B, *F, *Sp, *Dn, *C = NULL;
	double one = 1.0, tr;
	int ok = 1;

	make_tiling(&r, 90, 20, 40, 5);
	make_tiling(&c, 90, 15, 35, 6);
	make_tiling(&small, 60, 4, 9, 7);
	A = make(STARGEMM_D, &r, &r, 0.5, 0, 0, 1);
	B = make(STARGEMM_D, &r, &c, 0.5, 0, 0, 2);
	F = make(STARGEMM_S, &r, &r, 0.5, 0, 0, 3);
	Sp = make(STARGEMM_D, &small, &small, 0.3, 0, 0, 4);  /* packed */
	Dn = make(STARGEMM_D, &small, &small, 1.0, 0, 0, 5);  /* dense: not packed */
	ok &= sg_refused("add: other tilings", stargemm_matrix_add(&C, &one, A, &one, B),
			 "same tilings");
	ok &= sg_refused("add: other types", stargemm_matrix_add(&C, &one, A, &one, F),
			 "one element type");
	ok &= sg_refused("add: packed and not", stargemm_matrix_add(&C, &one, Sp, &one, Dn),
			 "packed alike");
	ok &= sg_refused("add: NULL alpha", stargemm_matrix_add(&C, NULL, A, &one, A),
			 "alpha is NULL");
	ok &= sg_refused("scale: NULL alpha", stargemm_matrix_scale(A, NULL), "alpha is NULL");
	ok &= sg_refused("trace: NULL", stargemm_matrix_trace(A, NULL), "trace is NULL");
	ok &= sg_refused("norm: NULL", stargemm_matrix_norm(A, NULL), "norm is NULL");
	ok &= sg_refused("copy: NULL", stargemm_matrix_copy(NULL, A), "B is NULL");
	ok &= sg_refused("add_diagonal: absent diagonal tile",
			 stargemm_matrix_add_diagonal(Sp, &one), "holds diagonal elements");
	ok &= sg_refused("trace: NULL matrix", stargemm_matrix_trace(NULL, &tr), "matrix A is NULL");
	*ncases += 10;
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(F);
	stargemm_matrix_destroy(Sp);
	stargemm_matrix_destroy(Dn);
	return ok;
}

int main(int argc, char **argv)
{
	static const stargemm_type types[] = { STARGEMM_S, STARGEMM_D, STARGEMM_C, STARGEMM_Z };
	struct tiling rows, cols, small_rows, small_cols, reg_rows, reg_cols;
	int failures = 0, ncases = 0, ret;

	P = argc > 2 ? atoi(argv[1]) : 1;
	Q = argc > 2 ? atoi(argv[2]) : 1;
	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	make_tiling(&rows, 301, 20, 70, 1);       /* irregular, rows and columns differ */
	make_tiling(&cols, 263, 25, 60, 2);
	make_tiling(&small_rows, 131, 5, 15, 3);  /* small: packed */
	make_tiling(&small_cols, 117, 5, 15, 4);
	make_tiling(&reg_rows, 157, 40, 40, 0);   /* regular, ragged last tile */
	make_tiling(&reg_cols, 143, 33, 33, 0);
	for (size_t e = 0; e < sizeof(types) / sizeof(types[0]); e++) {
		failures += !tiling_case("irregular sparse", types[e], &rows, &cols, 0.5), ncases++;
		failures += !tiling_case("small tiles, packed", types[e], &small_rows, &small_cols,
					 0.4), ncases++;
		failures += !tiling_case("dense, ragged", types[e], &reg_rows, &reg_cols, 1.0),
			ncases++;
	}
	failures += !sign_step(&rows), ncases++;
	failures += !bad_input(&ncases);
	if (stargemm_rank() == 0)
		printf("%d of %d cases failed\n", failures, ncases);
	ret = stargemm_rank() == 0 && failures ? 1 : 0;
	stargemm_finalize();
	return ret;
}
