/*
 * tests/test_bsprec.c — block-sparse products in the four element types (s, d, c, z):
 * stargemm_matrix_create_distributed_type() and stargemm_bsgemm_type().
 *
 * Usage: test_bsprec P Q   (under mpiexec with P*Q processes)
 * Each case builds A and B (and the C0 they add to) with seeded random patterns on
 * irregular ragged tilings, the same on every rank, fills their present tiles with
 * seeded random values, and multiplies into C = stargemm_matrix_create_product()
 * (the symbolic pattern of op(A) op(B), united with C0's: nothing is dropped), in core
 * (small tiles: packs and batches) and out of core (a handle per tile, a forced plan
 * of 2 x 2-tile blocks and one-tile chunks). The gathered result (absent tiles read
 * as zeros) is held against cblas_zgemm on the values widened to double complex,
 * through the scaled residual of tests/check.h in the type's precision; op 'C' is the
 * conjugate transpose for complex types. Also per type: the tile norms of
 * stargemm_matrix_norms() against norms computed here, a filter above every product
 * (all skipped, every C tile dropped), and the refusals: mixed types, the double call
 * on a complex product, an unknown type, NULL scalars. One line per case, PASS/FAIL.
 */
#include <complex.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const stargemm_type types[] = { STARGEMM_S, STARGEMM_D, STARGEMM_C, STARGEMM_Z };

/* An irregular tiling of @p n elements in tiles of 2 to 13 (seeded); *count tiles. */
static int64_t *tiling(int64_t n, unsigned seed, int64_t *count)
{
	int64_t *sizes = malloc((size_t)n * sizeof(*sizes)), done = 0;

	*count = 0;
	while (sizes && done < n) {
		int64_t s = 2 + (int64_t)(rand_r(&seed) % 12);

		s = s < n - done ? s : n - done;
		sizes[(*count)++] = s;
		done += s;
	}
	return sizes;
}

/* A seeded random pattern of mt x nt tiles at @p density: pairs (i, j), *count. */
static int64_t *pattern(int64_t mt, int64_t nt, double density, unsigned seed,
			int64_t *count)
{
	int64_t *pairs = malloc((size_t)(2 * mt * nt + 2) * sizeof(*pairs));

	*count = 0;
	for (int64_t j = 0; pairs && j < nt; j++)
		for (int64_t i = 0; i < mt; i++)
			if ((double)rand_r(&seed) / RAND_MAX < density) {
				pairs[2 * *count] = i;
				pairs[2 * *count + 1] = j;
				(*count)++;
			}
	return pairs;
}

/* A block-sparse matrix of type @p t on the given tilings, filled at random. */
static int make(struct stargemm_matrix **X, stargemm_type t, int64_t mt, const int64_t *rows,
		int64_t nt, const int64_t *cols, double density, unsigned seed, int P, int Q)
{
	struct stargemm_distribution cyclic = { P, Q, NULL, NULL, NULL };
	int64_t npresent, *present = pattern(mt, nt, density, seed, &npresent);
	int ret;

	if (!present)
		return -ENOMEM;
	ret = stargemm_matrix_create_distributed_type(X, t, mt, rows, nt, cols, npresent,
						      present, &cyclic);
	free(present);
	return ret ? ret : stargemm_matrix_fill_random(*X, seed + 100);
}

struct bs_case {
	char ta, tb;
	int64_t m, n, k;
	double complex alpha, beta;
	int ooc;
};

/* Operand tilings: op(A) is m x k, op(B) k x n. */
struct tilings {
	int64_t mt, nt, kt, *m, *n, *k;
};

static int run_case(stargemm_type t, const struct bs_case *bc, int P, int Q)
{
	struct stargemm_matrix *A = NULL, *B = NULL, *C0 = NULL, *C = NULL;
	struct stargemm_bsgemm_options opt;
	struct tilings tl = { 0 };
	double alpha[2], beta[2], r = INFINITY;
	void *a = NULL, *b = NULL, *c0 = NULL, *c = NULL;
	int ret = -ENOMEM, good;

	sg_allow_packs(!bc->ooc);
	tl.m = tiling(bc->m, 1, &tl.mt);
	tl.n = tiling(bc->n, 2, &tl.nt);
	tl.k = tiling(bc->k, 3, &tl.kt);
	sg_put(t, alpha, 0, bc->alpha);
	sg_put(t, beta, 0, bc->beta);
	if (tl.m && tl.n && tl.k) {
		ret = bc->ta == 'N' ? make(&A, t, tl.mt, tl.m, tl.kt, tl.k, 0.4, 11, P, Q)
				    : make(&A, t, tl.kt, tl.k, tl.mt, tl.m, 0.4, 11, P, Q);
		ret = ret ? ret : bc->tb == 'N' ? make(&B, t, tl.kt, tl.k, tl.nt, tl.n, 0.4, 12, P, Q)
					       : make(&B, t, tl.nt, tl.n, tl.kt, tl.k, 0.4, 12, P, Q);
		ret = ret ? ret : make(&C0, t, tl.mt, tl.m, tl.nt, tl.n, 0.3, 13, P, Q);
		ret = ret ? ret : stargemm_matrix_create_product(&C, bc->ta, bc->tb, A, B, C0);
	}
	if (!ret) {
		a = sg_gather_typed(A);
		b = sg_gather_typed(B);
		c0 = sg_gather_typed(C0);
	}
	stargemm_bsgemm_options_init(&opt);
	opt.out_of_core = bc->ooc;
	opt.ooc.b = opt.ooc.c = 2;
	opt.ooc.d = 1;
	ret = ret ? ret : stargemm_bsgemm_type(bc->ta, bc->tb, alpha, A, B, beta, C, &opt, NULL);
	if (!ret)
		c = sg_gather_typed(C);
	if (!ret && stargemm_rank() == 0)
		r = a && b && c0 && c ? sg_typed_residual(t, bc->ta, bc->tb, bc->m, bc->n, bc->k,
							  alpha, a, b, beta, c0, c)
				      : INFINITY;
	good = ret == 0 && (stargemm_rank() != 0 || r < SG_RESIDUAL_BOUND);
	if (stargemm_rank() == 0 || !good)
		printf("rank %d: %c %dx%d %c%c %lld x %lld x %lld (%lld x %lld x %lld tiles) %s "
		       "residual %.2e %s%s\n", stargemm_rank(), (char)t, P, Q, bc->ta, bc->tb,
		       (long long)bc->m, (long long)bc->n, (long long)bc->k, (long long)tl.mt,
		       (long long)tl.nt, (long long)tl.kt, bc->ooc ? "out of core" : "in core",
		       r, good ? "PASS" : "FAIL ", ret ? stargemm_last_error() : "");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C0);
	stargemm_matrix_destroy(C);
	free(a);
	free(b);
	free(c0);
	free(c);
	free(tl.m);
	free(tl.n);
	free(tl.k);
	sg_allow_packs(1);
	return good;
}

/* The Frobenius norm of tile (i, j) of the gathered @p x (m rows), widened. */
static double host_norm(stargemm_type t, const void *x, int64_t m, const int64_t *roff,
			const int64_t *coff, int64_t i, int64_t j)
{
	double s = 0.0;

	for (int64_t c = coff[j]; c < coff[j + 1]; c++)
		for (int64_t r = roff[i]; r < roff[i + 1]; r++) {
			double complex v = sg_get(t, x, r + c * m);

			s += creal(v) * creal(v) + cimag(v) * cimag(v);
		}
	return sqrt(s);
}

/* Tile norms against a count here, then a filter above every product. */
static int norms_and_filter(stargemm_type t, int P, int Q)
{
	struct stargemm_matrix *A = NULL, *C = NULL;
	struct stargemm_bsgemm_options opt;
	struct stargemm_bsgemm_info info;
	int64_t mt, *rows = tiling(40, 5, &mt), roff[64] = { 0 };
	double one[2], *norms = NULL, worst = 0.0;
	void *a = NULL;
	int ret = rows && mt < 64 ? 0 : -ENOMEM, good;

	for (int64_t i = 0; !ret && i < mt; i++)
		roff[i + 1] = roff[i] + rows[i];
	ret = ret ? ret : make(&A, t, mt, rows, mt, rows, 0.5, 21, P, Q);
	norms = malloc((size_t)(mt * mt) * sizeof(*norms));
	ret = ret ? ret : norms ? stargemm_matrix_norms(A, norms) : -ENOMEM;
	if (!ret)
		a = sg_gather_typed(A);
	for (int64_t j = 0; !ret && a && j < mt; j++)
		for (int64_t i = 0; i < mt; i++) {
			double h = host_norm(t, a, 40, roff, roff, i, j);
			double e = fabs(norms[i + j * mt] - h) / (h > 0 ? h : 1.0);

			worst = e > worst ? e : worst;
		}
	ret = ret ? ret : stargemm_matrix_create_product(&C, 'N', 'C', A, A, NULL);
	stargemm_bsgemm_options_init(&opt);
	opt.filter_eps = 1e30;
	sg_put(t, one, 0, 1.0);
	ret = ret ? ret : stargemm_bsgemm_type('N', 'C', one, A, A, one, C, &opt, &info);
	good = ret == 0 && worst < 1e-5 && info.products == 0 && info.skipped > 0 &&
	       stargemm_matrix_present_count(C) == 0 && info.c_removed > 0;
	if (stargemm_rank() == 0 || !good)
		printf("rank %d: %c %dx%d tile norms (worst relative difference %.1e), filter "
		       "above every product: %lld skipped, %lld C tiles dropped, %lld left %s%s\n",
		       stargemm_rank(), (char)t, P, Q, worst, ret ? -1LL : (long long)info.skipped,
		       ret ? -1LL : (long long)info.c_removed,
		       (long long)stargemm_matrix_present_count(C), good ? "PASS" : "FAIL ",
		       ret ? stargemm_last_error() : "");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(C);
	free(rows);
	free(norms);
	free(a);
	return good;
}

static int bad_input(int P, int Q)
{
	struct stargemm_distribution cyclic = { P, Q, NULL, NULL, NULL };
	struct stargemm_matrix *Z = NULL, *Z2 = NULL, *D = NULL, *X = NULL;
	const int64_t sizes[] = { 3, 4 }, present[] = { 0, 0, 1, 1 };
	double s[2] = { 1.0, 0.0 };
	int good = 1, ret;

	ret = stargemm_matrix_create_distributed_type(&Z, STARGEMM_Z, 2, sizes, 2, sizes, 2,
						      present, &cyclic);
	ret = ret ? ret : stargemm_matrix_create_distributed_type(&Z2, STARGEMM_Z, 2, sizes, 2,
								  sizes, 2, present, &cyclic);
	ret = ret ? ret : stargemm_matrix_create_distributed_type(&D, STARGEMM_D, 2, sizes, 2,
								  sizes, 2, present, &cyclic);
	if (ret) {
		printf("rank %d: bad-input matrices: %s FAIL\n", stargemm_rank(),
		       stargemm_last_error());
		return 0;
	}
	good &= sg_refused("mixed types", stargemm_bsgemm_type('N', 'N', s, Z, D, s, Z2, NULL,
							    NULL), "one element type");
	good &= sg_refused("the double call on complex matrices",
			stargemm_bsgemm('N', 'N', 1.0, Z, Z, 0.0, Z2, NULL, NULL),
			"use stargemm_bsgemm_type()");
	good &= sg_refused("unknown type",
			stargemm_matrix_create_distributed_type(&X, (stargemm_type)'q', 2, sizes, 2,
								sizes, 2, present, &cyclic),
			"unknown element type");
	good &= sg_refused("NULL alpha", stargemm_bsgemm_type('N', 'N', NULL, Z, Z, s, Z2, NULL,
							   NULL), "alpha is NULL");
	stargemm_matrix_destroy(Z);
	stargemm_matrix_destroy(Z2);
	stargemm_matrix_destroy(D);
	return good;
}

int main(int argc, char **argv)
{
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1, ret, good = 1;
	const double complex al = 1.25 - 0.75 * I, be = 0.5 + 0.25 * I;
	const struct bs_case cases[] = {
		{ 'N', 'N', 71, 58, 63, al, be, 0 },
		{ 'C', 'T', 49, 66, 57, -al, be, 0 },
		{ 'T', 'C', 60, 45, 52, al, 0.0, 0 },
		{ 'N', 'C', 71, 58, 63, al, be, 1 },
		{ 'C', 'N', 49, 66, 57, al, -be, 1 },
		/* alpha = 1, op(A) = A: libxsmm's kernels in single and double */
		{ 'N', 'T', 64, 50, 70, 1.0, be, 0 },
		{ 'N', 'N', 55, 61, 47, 1.0, 0.0, 0 },
	};

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			good &= run_case(types[t], &cases[c], P, Q);
		good &= norms_and_filter(types[t], P, Q);
	}
	good &= bad_input(P, Q);
	fflush(stdout);
	stargemm_finalize();
	return good ? 0 : 1;
}
