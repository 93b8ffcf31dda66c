/*
 * tests/test_bsfilter.c — tile norms, norm filtering and the symbolic product pattern
 * of block-sparse products, against references computed here from gathered arrays.
 *
 * Usage: test_bsfilter P Q   (under mpiexec with P*Q processes)
 * Problems come from the benchmark's generator (bench/bsgen.c: tile sizes uniform in
 * [lo, hi], seeded random patterns and values). Cases:
 *  - stargemm_matrix_norms() equals the Frobenius norms of the gathered tiles;
 *  - stargemm_matrix_create_product() has exactly the pattern of A·B (∪ C's), holds
 *    C's values and zeros elsewhere, and a product into it drops nothing;
 *  - stargemm_bsgemm() with a threshold eps skips exactly the products whose norm bound
 *    is below eps (counted), computes the others (residual against the kept products'
 *    sum), and removes exactly the C tiles whose norm ends below eps; in core and out
 *    of core;
 *  - bad input (negative, NaN or infinite eps, tilings that do not match, a stationary
 *    choice that is none or out of core, a negative reuse hint) is refused with a message naming the
 *    constraint.
 * One line per case, PASS/FAIL; rank 0's verdict is the exit status.
 */
#include <cblas.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/bsgen.h"
#include "check.h"

static const uint64_t seed = 7;

struct problem {
	struct bsgen_problem g;
	struct stargemm_matrix *A, *B, *C;
	double *a, *b, *c0;       /* full arrays, on every rank */
};

static void fill(double *t, int64_t ld, int64_t rows, int64_t cols, int64_t r0, int64_t c0,
		 void *arg)
{
	bsgen_fill_tile(t, ld, rows, cols, r0, c0, seed, *(const int *)arg);
}

static int create(const struct bsgen_matrix *x, int which, int P, int Q,
		  struct stargemm_matrix **X)
{
	static const int ids[] = { 0, 1, 2 };
	int ret = stargemm_matrix_create_sparse(X, x->mt, x->rows, x->nt, x->cols, x->npresent,
						x->pairs, P, Q);

	return ret ? ret : stargemm_matrix_fill(*X, fill, (void *)&ids[which]);
}

/* The full array of a generated matrix: its values on present tiles, zeros elsewhere
 * (what a gather gives), computed on every rank from the generator. */
static double *densify(const struct bsgen_matrix *x, int which)
{
	int64_t m = 0, n = 0, *roff = calloc((size_t)x->mt + 1, sizeof(*roff));
	int64_t *coff = calloc((size_t)x->nt + 1, sizeof(*coff));
	double *full = NULL;

	for (int64_t i = 0; roff && i < x->mt; i++)
		roff[i + 1] = m += x->rows[i];
	for (int64_t j = 0; coff && j < x->nt; j++)
		coff[j + 1] = n += x->cols[j];
	if (roff && coff)
		full = calloc((size_t)(m * n > 0 ? m * n : 1), sizeof(*full));
	for (int64_t e = 0; full && e < x->npresent; e++) {
		int64_t i = x->pairs[2 * e], j = x->pairs[2 * e + 1];

		bsgen_fill_tile(full + roff[i] + coff[j] * m, m, x->rows[i], x->cols[j], roff[i],
				coff[j], seed, which);
	}
	free(roff);
	free(coff);
	return full;
}

/* A (m x k), B (k x n), C (m x n; density_c < 0: not created), and their full arrays
 * on every rank. */
static int setup(struct problem *p, const struct bsgen_params *gp, int P, int Q)
{
	int ret;

	memset(p, 0, sizeof(*p));
	if (bsgen_make(gp, &p->g))
		return -EINVAL;
	ret = create(&p->g.a, 0, P, Q, &p->A);
	ret = ret ? ret : create(&p->g.b, 1, P, Q, &p->B);
	if (!ret && gp->density_c >= 0)
		ret = create(&p->g.c, 2, P, Q, &p->C);
	p->a = densify(&p->g.a, 0);
	p->b = densify(&p->g.b, 1);
	p->c0 = p->C ? densify(&p->g.c, 2) : NULL;
	if (!ret && (!p->a || !p->b || (p->C && !p->c0)))
		ret = -ENOMEM;
	return ret;
}

static void teardown(struct problem *p)
{
	stargemm_matrix_destroy(p->A);
	stargemm_matrix_destroy(p->B);
	stargemm_matrix_destroy(p->C);
	free(p->a);
	free(p->b);
	free(p->c0);
	bsgen_free(&p->g);
}

/* Frobenius norm of tile (i, j) of a full array (leading dimension ld). */
static double tile_norm(const struct stargemm_matrix *X, const double *x, int64_t ld,
			int64_t i, int64_t j)
{
	double s = 0.0;

	for (int64_t c = 0; c < stargemm_matrix_tile_cols(X, j); c++)
		for (int64_t r = 0; r < stargemm_matrix_tile_rows(X, i); r++) {
			double v = x[stargemm_matrix_row_offset(X, i) + r +
				     (stargemm_matrix_col_offset(X, j) + c) * ld];

			s += v * v;
		}
	return sqrt(s);
}

static void report(const char *name, int P, int Q, const char *what, int good)
{
	if (stargemm_rank() == 0)
		printf("%-24s %dx%d %s %s\n", name, P, Q, what, good ? "PASS" : "FAIL");
}

static int check_norms(int P, int Q)
{
	struct bsgen_params gp = { 150, 170, 140, 7, 41, 0.5, 0.5, 0.5, seed };
	struct problem p;
	double *norms = NULL, worst = 0.0;
	int good, ret = setup(&p, &gp, P, Q);

	if (!ret) {
		norms = malloc((size_t)(p.g.mt * p.g.kt) * sizeof(*norms));
		ret = norms ? stargemm_matrix_norms(p.A, norms) : -ENOMEM;
	}
	good = !ret;
	for (int64_t j = 0; good && stargemm_rank() == 0 && j < p.g.kt; j++)
		for (int64_t i = 0; i < p.g.mt; i++) {
			double want = stargemm_matrix_tile_present(p.A, i, j)
					      ? tile_norm(p.A, p.a, gp.m, i, j) : 0.0;
			double err = fabs(norms[i + j * p.g.mt] - want) / (want > 0 ? want : 1);

			worst = err > worst ? err : worst;
		}
	good &= worst < 1e-13;
	if (stargemm_rank() == 0 && !good)
		fprintf(stderr, "  worst relative norm error %.3e (ret %d)\n", worst, ret);
	report("tile norms", P, Q, "= Frobenius norms of the gathered tiles", good);
	free(norms);
	teardown(&p);
	return good || stargemm_rank() != 0;
}

/* The reference of alpha A B + beta C0 over the products the filter keeps, tile by tile
 * (all of them when eps = 0); counts the skipped ones. */
static double *reference(const struct problem *p, const struct stargemm_matrix *C,
			 double alpha, double beta, double eps, int64_t *skipped)
{
	int64_t m = stargemm_matrix_m(C), n = stargemm_matrix_n(C), k = stargemm_matrix_n(p->A);
	double *ref = calloc((size_t)(m * n), sizeof(*ref));

	*skipped = 0;
	for (int64_t e = 0; ref && p->c0 && e < m * n; e++)
		ref[e] = beta * p->c0[e];
	for (int64_t j = 0; ref && j < stargemm_matrix_nt(C); j++)
		for (int64_t i = 0; i < stargemm_matrix_mt(C); i++) {
			if (!stargemm_matrix_tile_present(C, i, j))
				continue;
			for (int64_t l = 0; l < stargemm_matrix_nt(p->A); l++) {
				int64_t r0 = stargemm_matrix_row_offset(C, i);
				int64_t c0 = stargemm_matrix_col_offset(C, j);
				int64_t k0 = stargemm_matrix_col_offset(p->A, l);

				if (!stargemm_matrix_tile_present(p->A, i, l) ||
				    !stargemm_matrix_tile_present(p->B, l, j))
					continue;
				if (tile_norm(p->A, p->a, m, i, l) * tile_norm(p->B, p->b, k, l, j) <
				    eps) {
					++*skipped;
					continue;
				}
				cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans,
					    (int)stargemm_matrix_tile_rows(C, i),
					    (int)stargemm_matrix_tile_cols(C, j),
					    (int)stargemm_matrix_tile_cols(p->A, l), alpha,
					    p->a + r0 + k0 * m, (int)m, p->b + k0 + c0 * k, (int)k,
					    1.0, ref + r0 + c0 * m, (int)m);
			}
		}
	return ref;
}

/* ||C - ref|| over C's present tiles (absent ones must gather as zeros) and whether
 * the pattern is exactly the tiles of @p ref whose norm is >= eps (ties within 1e-9
 * relative are not judged). */
static double compare(const struct stargemm_matrix *C, const double *got, const double *ref,
		      double eps, int *pattern_ok)
{
	int64_t m = stargemm_matrix_m(C);
	double diff = 0.0, norm = 0.0;

	*pattern_ok = 1;
	for (int64_t j = 0; j < stargemm_matrix_nt(C); j++)
		for (int64_t i = 0; i < stargemm_matrix_mt(C); i++) {
			int present = stargemm_matrix_tile_present(C, i, j);
			double rn = tile_norm(C, ref, m, i, j);

			if (eps > 0 && fabs(rn - eps) > 1e-9 * eps && present != (rn >= eps))
				*pattern_ok = 0;
			for (int64_t c = 0; c < stargemm_matrix_tile_cols(C, j); c++)
				for (int64_t r = 0; r < stargemm_matrix_tile_rows(C, i); r++) {
					int64_t e = stargemm_matrix_row_offset(C, i) + r +
						    (stargemm_matrix_col_offset(C, j) + c) * m;
					double want = present ? ref[e] : 0.0;

					diff += (got[e] - want) * (got[e] - want);
					norm += ref[e] * ref[e];
				}
		}
	return sqrt(diff) / ((sqrt(norm) > 0 ? sqrt(norm) : 1.0) * DBL_EPSILON *
			     (double)stargemm_matrix_n(C));
}

static int symbolic_case(const char *name, int P, int Q, double dc)
{
	struct bsgen_params gp = { 150, 170, 140, 7, 41, 0.3, 0.3, dc, seed };
	struct bsgen_params sym = gp;
	struct bsgen_problem want;
	struct problem p;
	struct stargemm_matrix *D = NULL;
	double *d0 = NULL, *d = NULL, *ref = NULL, res = INFINITY;
	int64_t skipped, same = 0;
	int good, pat = 1, ret = setup(&p, &gp, P, Q);

	/* The expected pattern: the generator's symbolic C (and C's tiles). */
	sym.density_c = -1;
	ret = ret ? ret : bsgen_make(&sym, &want) ? -EINVAL : 0;
	ret = ret ? ret : stargemm_matrix_create_product(&D, 'N', 'N', p.A, p.B, p.C);
	for (int64_t e = 0; !ret && e < want.c.npresent; e++)
		same += stargemm_matrix_tile_present(D, want.c.pairs[2 * e], want.c.pairs[2 * e + 1]);
	if (!ret && p.C)
		for (int64_t j = 0; j < p.g.nt; j++)
			for (int64_t i = 0; i < p.g.mt; i++)
				pat &= !stargemm_matrix_tile_present(p.C, i, j) ||
				       stargemm_matrix_tile_present(D, i, j);
	if (!ret) {
		pat &= same == want.c.npresent &&
		       (p.C || stargemm_matrix_present_count(D) == want.c.npresent);
		d0 = sg_gather_new(D);
		ret = stargemm_bsgemm('N', 'N', 1.5, p.A, p.B, 0.5, D, NULL, NULL);
	}
	if (!ret)
		d = sg_gather_new(D);
	if (stargemm_rank() == 0 && d0 && d) {
		/* D starts as C where C has tiles, zeros elsewhere */
		for (int64_t e = 0; e < gp.m * gp.n; e++)
			pat &= d0[e] == (p.c0 ? p.c0[e] : 0.0);
		ref = reference(&p, D, 1.5, 0.5, 0.0, &skipped);
		res = compare(D, d, ref, 0.0, &good);
	}
	if (ret && stargemm_rank() == 0)
		fprintf(stderr, "  error %d: %s\n", ret, stargemm_last_error());
	good = !ret && pat && res < SG_RESIDUAL_BOUND;
	if (stargemm_rank() == 0)
		printf("%-24s %dx%d pattern %lld tiles (AB %lld), values kept, residual "
		       "%.2e %s\n", name, P, Q, (long long)(D ? stargemm_matrix_present_count(D) : -1),
		       (long long)want.c.npresent, res, good ? "PASS" : "FAIL");
	free(d0);
	free(d);
	free(ref);
	stargemm_matrix_destroy(D);
	bsgen_free(&want);
	teardown(&p);
	return good || stargemm_rank() != 0;
}

/* The median of the norm bounds of the existing products: half of them go. */
static double median_bound(const struct problem *p, int64_t m, int64_t k)
{
	int64_t n = 0, cap = p->g.mt * p->g.nt * p->g.kt;
	double *v = malloc((size_t)(cap > 0 ? cap : 1) * sizeof(*v)), med;

	for (int64_t j = 0; v && j < p->g.nt; j++)
		for (int64_t i = 0; i < p->g.mt; i++)
			for (int64_t l = 0; l < p->g.kt; l++)
				if (stargemm_matrix_tile_present(p->C, i, j) &&
				    stargemm_matrix_tile_present(p->A, i, l) &&
				    stargemm_matrix_tile_present(p->B, l, j))
					v[n++] = tile_norm(p->A, p->a, m, i, l) *
						 tile_norm(p->B, p->b, k, l, j);
	for (int64_t x = 1; x < n; x++)      /* insertion sort: a few thousand values */
		for (int64_t y = x; y > 0 && v[y - 1] > v[y]; y--) {
			double t = v[y];

			v[y] = v[y - 1];
			v[y - 1] = t;
		}
	med = n ? v[n / 2] : 0.0;
	free(v);
	return med;
}

static int filter_case(const char *name, int P, int Q, int ooc, double da)
{
	struct bsgen_params gp = { 150, 170, 140, 7, 41, da, 0.6, 0.8, seed };
	struct stargemm_bsgemm_options opt;
	struct stargemm_bsgemm_info info;
	struct problem p;
	double *c = NULL, *ref = NULL, res = INFINITY, eps = 0.0;
	int64_t skipped = -1;
	int good = 0, pat = 0, ret;

	sg_allow_packs(!ooc);
	ret = setup(&p, &gp, P, Q);
	stargemm_bsgemm_options_init(&opt);
	if (!ret)   /* the same on every rank: from the generator's values */
		eps = median_bound(&p, gp.m, gp.k);
	eps = eps > 0.0 ? eps : 1.0;
	/* the reference over C's pattern before the filter drops tiles */
	if (!ret && stargemm_rank() == 0)
		ref = reference(&p, p.C, 1.5, 0.5, eps, &skipped);
	opt.filter_eps = eps;
	opt.out_of_core = ooc;
	if (ooc) {
		opt.ooc.b = 1;
		opt.ooc.c = 2;
		opt.ooc.d = 1;
		opt.ooc.lookahead = 1;
		opt.ooc.device_bytes = 48 * 41 * 56 * (int64_t)sizeof(double);
	}
	ret = ret ? ret : stargemm_bsgemm('N', 'N', 1.5, p.A, p.B, 0.5, p.C, &opt, &info);
	if (!ret)
		c = sg_gather_new(p.C);
	if (stargemm_rank() == 0 && c && ref) {
		res = compare(p.C, c, ref, eps, &pat);
		good = pat && res < SG_RESIDUAL_BOUND && info.skipped == skipped &&
		       (da == 0.0 || (skipped > 0 && info.products > 0));
	}
	if (ret && stargemm_rank() == 0)
		fprintf(stderr, "  error %d: %s\n", ret, stargemm_last_error());
	if (stargemm_rank() == 0)
		printf("%-24s %dx%d %s eps=%.3g products %lld skipped %lld (expected %lld) "
		       "C tiles removed %lld, pattern %s residual %.2e %s\n", name, P, Q,
		       ooc ? "ooc    " : "in core", eps, (long long)info.products,
		       (long long)info.skipped, (long long)skipped, (long long)info.c_removed,
		       pat ? "ok" : "WRONG", res, good ? "PASS" : "FAIL");
	free(c);
	free(ref);
	teardown(&p);
	return good || stargemm_rank() != 0;
}

/* One refusal: -EINVAL and a message containing @p want. */
static int refused(const char *name, int ret, const char *want, int P, int Q)
{
	int good = ret == -EINVAL && strstr(stargemm_last_error(), want);

	if (stargemm_rank() == 0)
		printf("%-24s %dx%d refused: \"%s\" %s\n", name, P, Q, stargemm_last_error(),
		       good ? "PASS" : "FAIL");
	return good || stargemm_rank() != 0;
}

static int bad_input(int P, int Q, int *ncases)
{
	struct bsgen_params gp = { 60, 50, 40, 7, 13, 0.5, 0.5, 0.5, seed }, other = gp;
	struct stargemm_bsgemm_options opt;
	struct stargemm_matrix *D = (struct stargemm_matrix *)&D;
	struct problem p, q;
	int good = 1, ret = setup(&p, &gp, P, Q);

	other.seed = seed + 1;   /* other tilings */
	ret = ret ? ret : setup(&q, &other, P, Q);
	if (ret)
		return 0;
	stargemm_bsgemm_options_init(&opt);
	opt.filter_eps = -1e-3;
	good &= refused("negative eps", stargemm_bsgemm('N', 'N', 1, p.A, p.B, 1, p.C, &opt,
							NULL), "filter_eps must be finite and >= 0",
			P, Q);
	opt.filter_eps = NAN;
	good &= refused("NaN eps", stargemm_bsgemm('N', 'N', 1, p.A, p.B, 1, p.C, &opt, NULL),
			"filter_eps must be finite", P, Q);
	opt.filter_eps = INFINITY;
	good &= refused("infinite eps", stargemm_bsgemm('N', 'N', 1, p.A, p.B, 1, p.C, &opt,
							NULL), "filter_eps must be finite", P, Q);
	opt.filter_eps = 0.0;
	opt.stationary = 'X';
	good &= refused("stationary 'X'", stargemm_bsgemm('N', 'N', 1, p.A, p.B, 1, p.C, &opt,
							  NULL), "stationary must be 0", P, Q);
	opt.stationary = 'B';
	opt.out_of_core = 1;
	good &= refused("stationary B out of core", stargemm_bsgemm('N', 'N', 1, p.A, p.B, 1,
								     p.C, &opt, NULL),
			"stationary 'B' is in core", P, Q);
	opt.stationary = 0;
	opt.out_of_core = 0;
	opt.reuse_b = -1;
	good &= refused("reuse_b -1", stargemm_bsgemm('N', 'N', 1, p.A, p.B, 1, p.C, &opt, NULL),
			"reuse_a and reuse_b must be >= 0", P, Q);
	opt.reuse_b = 0;
	good &= refused("filter: negative eps", stargemm_matrix_filter(p.C, -1.0, NULL),
			"eps must be finite and >= 0", P, Q);
	good &= refused("symbolic: K tilings", stargemm_matrix_create_product(&D, 'N', 'N', p.A,
									      q.B, NULL),
			"tiling", P, Q);
	good &= refused("symbolic: C's shape", stargemm_matrix_create_product(&D, 'N', 'N', p.A,
									      p.B, q.C),
			"tiling", P, Q);
	good &= D == NULL;
	*ncases += 9;
	teardown(&p);
	teardown(&q);
	return good;
}

int main(int argc, char **argv)
{
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1;
	int failures = 0, ncases = 0, ret;

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	failures += !check_norms(P, Q), ncases++;
	failures += !symbolic_case("symbolic AB", P, Q, -1), ncases++;
	failures += !symbolic_case("symbolic AB u C", P, Q, 0.2), ncases++;
	for (int ooc = 0; ooc < 2; ooc++) {
		failures += !filter_case("filter half", P, Q, ooc, 0.6), ncases++;
		failures += !filter_case("filter, A empty", P, Q, ooc, 0.0), ncases++;
	}
	failures += !bad_input(P, Q, &ncases);
	if (stargemm_rank() == 0)
		printf("%d of %d cases failed\n", failures, ncases);
	ret = stargemm_rank() == 0 && failures ? 1 : 0;
	stargemm_finalize();
	return ret;
}
